"""Benchmarks measure the product as its users see it: they import the public API
(`tinycontext`) and the public fakes (`tinycontext.testing`) only. The imports of
internals listed here are the ones left (a benchmark of one store or one kernel); the
list may only shrink: a new one fails, and so does a listed one that is gone."""

from __future__ import annotations

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
PUBLIC = ("tinycontext", "tinycontext.testing")

LEFT = {
    "_cold_open.py": {"tinycontext.entry.container"},
    "_common.py": {"tinycontext.entry.container"},
    "_million_build.py": {
        "tinycontext.adapters.sqlite.store", "tinycontext.domain.memory",
        "tinycontext.ports.store",
    },
    # One store built in bulk with tags and older versions (as _million_build), and its
    # dense retriever's filtered top 10 checked against brute force.
    "_filters_build.py": {
        "tinycontext.adapters.sqlite.store", "tinycontext.domain.memory",
        "tinycontext.ports.store",
    },
    "benchmark_filters.py": {"tinycontext.domain.filters", "tinycontext.domain.recall",
                             "tinycontext.ports.store"},
    "_pg_bulk.py": {
        "tinycontext.adapters.postgres.schema", "tinycontext.adapters.postgres.store",
        "tinycontext.adapters.postgres.text", "tinycontext.domain.memory",
    },
    "_soak_server.py": {"tinycontext.entry.cli"},
    "benchmark_accuracy.py": {
        "tinycontext.domain.recall", "tinycontext.domain.text", "tinycontext.ports.store",
    },
    # The hook's own selection (floor, block budget) replayed over one recall per prompt for a
    # grid of floors; its speed half runs the real `tinycontext hook` subprocess.
    "benchmark_hooks.py": {"tinycontext.hooks.blocks", "tinycontext.hooks.responder"},
    # The importer run on the benchmark's own service (its embedder, the hash smoke model),
    # the stable ids it gives (to credit LoCoMo turns) and a dedup skip's nearest memory.
    "benchmark_import.py": {
        "tinycontext.importers.importing", "tinycontext.importers.items",
        "tinycontext.importers.report", "tinycontext.ports.store",
    },
    "benchmark_locomo.py": {
        "tinycontext.adapters.sqlite", "tinycontext.app", "tinycontext.domain",
        "tinycontext.domain.recall", "tinycontext.domain.text", "tinycontext.ports.store",
    },
    "benchmark_million.py": {
        "tinycontext.adapters.sqlite", "tinycontext.domain.recall", "tinycontext.ports.store",
    },
    "benchmark_pg.py": {
        "tinycontext.adapters.postgres.store", "tinycontext.adapters.sqlite.store",
        "tinycontext.domain.memory", "tinycontext.domain.recall", "tinycontext.domain.text",
        "tinycontext.ports.store",
    },
    "benchmark_pg_tenants.py": {
        "tinycontext.adapters.postgres.connection", "tinycontext.adapters.postgres.store",
        "tinycontext.domain.recall", "tinycontext.ports.store",
    },
    "benchmark_secrets.py": {"tinycontext.domain.secrets"},
    "benchmark_speed.py": {"tinycontext.domain.recall", "tinycontext.ports.store"},
    "benchmark_ui.py": {
        "tinycontext.adapters.sqlite.store", "tinycontext.adapters.web.app",
        "tinycontext.domain.memory", "tinycontext.ports.store",
    },
}


def _internal_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                 else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        for name in names:
            if name.split(".")[0] == "tinycontext" and not (
                    name in PUBLIC or name.startswith("tinycontext.testing.")):
                found.add(name)
    return found


def test_benchmarks_import_only_the_public_api_and_the_fakes() -> None:
    found = {p.name: _internal_imports(p) for p in sorted(BENCHMARKS.glob("*.py"))}
    found = {name: modules for name, modules in found.items() if modules}
    assert found == {name: modules for name, modules in LEFT.items() if modules}
