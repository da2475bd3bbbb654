"""Benchmarks measure the product as its users see it: they import the public API
(`tinycontext`), the public fakes and helpers (`tinycontext.testing`) and the ports a custom
embedder, store, tokenizer or clock implements (`tinycontext.ports`, docs/guides/custom_ports.md)
only. The imports of internals listed here are the ones left, each with its reason (a benchmark
of one store or one kernel); the list may only shrink: a new one fails, and so does a listed
one that is gone."""

from __future__ import annotations

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
PUBLIC = ("tinycontext", "tinycontext.testing", "tinycontext.ports")
PUBLIC_PACKAGES = ("tinycontext.testing.", "tinycontext.ports.")  # and their modules

LEFT = {
    # PostgreSQL filled in bulk with COPY: the store's own schema, index and tenant names.
    "_pg_bulk.py": {
        "tinycontext.adapters.postgres.schema", "tinycontext.adapters.postgres.store",
        "tinycontext.adapters.postgres.text", "tinycontext.domain.memory",
    },
    # The hook's own selection (floor, block budget) replayed over one recall per prompt for a
    # grid of floors; its speed half runs the real `tinycontext hook` subprocess.
    "benchmark_hooks.py": {"tinycontext.hooks.blocks", "tinycontext.hooks.responder"},
    # Stemming switched off for --ablate by replacing the engine's stemmer, in the
    # benchmark's process only: the keyword index is built with it, so a setting would have
    # to rebuild every store's index when changed, for an ablation nobody runs in production
    # (the other ranking and context levers are settings: configuration.md).
    "benchmark_locomo.py": {"tinycontext.domain"},
    # Many tenants' PostgreSQL stores over one shared pool, as hosted mode opens them.
    "benchmark_pg_tenants.py": {
        "tinycontext.adapters.postgres.connection", "tinycontext.adapters.postgres.store",
    },
    # The browser's pages served in process (no socket between the timer and the page), over
    # the Services every inbound adapter takes (OneService: the one service it built).
    "benchmark_ui.py": {"tinycontext.adapters.web.app", "tinycontext.app.service_source"},
}


def _internal_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                 else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        for name in names:
            if name.split(".")[0] == "tinycontext" and not (
                    name in PUBLIC or name.startswith(PUBLIC_PACKAGES)):
                found.add(name)
    return found


def test_benchmarks_import_only_the_public_api_and_the_fakes() -> None:
    found = {p.name: _internal_imports(p) for p in sorted(BENCHMARKS.glob("*.py"))}
    found = {name: modules for name, modules in found.items() if modules}
    assert found == {name: modules for name, modules in LEFT.items() if modules}
