"""The modules at the package's top level (entry points, bootstrap, wiring, configuration)
import each other without cycles (issue 14): hosted <-> hosted_stores, bootstrap <-> rest and
config <-> settings each went one way. TYPE_CHECKING and function-level imports count."""

from __future__ import annotations

import grimp

from tests.unit.test_app_imports import _cycles


def test_the_top_level_modules_have_no_import_cycles() -> None:
    graph = grimp.build_graph("tinycontext", cache_dir=None)
    top = {m for m in graph.modules if m.count(".") == 1}
    assert {"tinycontext.bootstrap", "tinycontext.settings", "tinycontext.config",
            "tinycontext.hosted", "tinycontext.hosted_stores", "tinycontext.rest"} <= top
    assert _cycles(graph, top) == []


def test_the_bootstrap_imports_no_entry_point() -> None:
    graph = grimp.build_graph("tinycontext", cache_dir=None)
    imported = graph.find_modules_directly_imported_by("tinycontext.bootstrap")
    assert not imported & {"tinycontext.cli", "tinycontext.rest", "tinycontext.api"}
