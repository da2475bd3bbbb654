"""Benchmarks measure the product as its users see it: they import the public API
(`tinycontext`), the public fakes and helpers (`tinycontext.testing`) and the ports a custom
embedder, store, tokenizer or clock implements (`tinycontext.ports`, docs/guides/custom_ports.md:
public for whoever writes a port, and a benchmark that hands a store prepared memories uses
their types), and run the commands users run. The imports of internals listed here are the
ones left, each with its reason; the list may only shrink: a new one fails, and so does a
listed one that is gone."""

from __future__ import annotations

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
PUBLIC = ("tinycontext", "tinycontext.testing", "tinycontext.ports")
PUBLIC_PACKAGES = ("tinycontext.testing.", "tinycontext.ports.")  # and their modules

LEFT = {
    # PostgreSQL filled in bulk with COPY, into the store's own tables under its own index and
    # tenant-tag names, the HNSW index dropped meanwhile. The public way in, the store port's
    # `add` (tinycontext.testing.bulk), inserts every row into that index as it goes: tens of
    # rows a second on this 2-core machine, hours for a 1,000,000-row layout that COPY loads
    # in about ten minutes (benchmarks/history.md, "Many tenants in one PostgreSQL table").
    "_pg_bulk.py": {
        "tinycontext.adapters.postgres.schema", "tinycontext.adapters.postgres.store",
        "tinycontext.adapters.postgres.text", "tinycontext.domain.memory",
    },
    # Many tenants' PostgreSQL stores over one shared pool, one store per tenant, as hosted
    # mode opens them behind its proxy: the public API opens one store per configuration.
    "benchmark_pg_tenants.py": {
        "tinycontext.adapters.postgres.connection", "tinycontext.adapters.postgres.store",
    },
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
