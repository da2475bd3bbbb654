"""The composition's modules (entry points, bootstrap, container, hosted mode, telemetry,
configuration, the top-level modules) import each other without cycles: hosted <-> its
stores, bootstrap <-> rest and config <-> settings each went one way. TYPE_CHECKING and
function-level imports count."""

from __future__ import annotations

import grimp

from tests.unit.test_app_imports import _cycles


def test_the_top_level_modules_have_no_import_cycles() -> None:
    graph = grimp.build_graph("tinycontext", cache_dir=None)
    packages = ("tinycontext.entry.", "tinycontext.hosted.", "tinycontext.config.",
                "tinycontext.telemetry.")
    top = {m for m in graph.modules if m.count(".") == 1 or m.startswith(packages)}
    assert {"tinycontext.entry.bootstrap", "tinycontext.config.settings", "tinycontext.config",
            "tinycontext.hosted.serving", "tinycontext.hosted.stores", "tinycontext.rest"} <= top
    assert _cycles(graph, top) == []


def test_the_bootstrap_imports_no_entry_point() -> None:
    graph = grimp.build_graph("tinycontext", cache_dir=None)
    imported = graph.find_modules_directly_imported_by("tinycontext.entry.bootstrap")
    assert not imported & {"tinycontext.entry.cli", "tinycontext.rest", "tinycontext.entry.api"}
