"""The application core has no import cycles (issue 14): the use-case modules take the
shared Core and never import the service, so the service <-> saving <-> recalling loop is
gone. Checked on the real import graph (grimp, which import-linter uses), TYPE_CHECKING
imports included."""

from __future__ import annotations

import grimp


def _cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), or self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.find_modules_directly_imported_by(node) & modules):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_the_application_core_has_no_import_cycles() -> None:
    graph = grimp.build_graph("tinycontext", cache_dir=None)
    app = {m for m in graph.modules if m == "tinycontext.app" or m.startswith("tinycontext.app.")}
    assert {"tinycontext.app.service", "tinycontext.app.saving",
            "tinycontext.app.recalling", "tinycontext.app.core"} <= app
    assert _cycles(graph, app) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("a", "a.service", "a.saving", "a.results"):
        graph.add_module(name)
    graph.add_import(importer="a.service", imported="a.saving")
    graph.add_import(importer="a.saving", imported="a.service")
    graph.add_import(importer="a.saving", imported="a.results")
    assert _cycles(graph, {"a.service", "a.saving", "a.results"}) == [["a.saving", "a.service"]]
