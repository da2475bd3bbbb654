"""No adapter reaches around the application to the service's store (issue 14): transports
and the web UI call the service's use cases (list_page, browse, overview, export_records,
session_counts ...), so every read and write follows the same rules and error codes.
Store adapters implement the port; they are not checked here."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CALLERS = ["mcp", "rest", "web", "hosting"]


def _store_reads(source: str) -> list[int]:
    """Lines where something's `.store` attribute is read, other than `self.store`."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "store":
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id == "self"):
                lines.append(node.lineno)
    return lines


def test_no_adapter_reads_the_service_store() -> None:
    found = {}
    for family in CALLERS:
        for path in sorted((ROOT / "adapters" / family).rglob("*.py")):
            lines = _store_reads(path.read_text())
            if lines:
                found[str(path.relative_to(ROOT))] = lines
    assert found == {}


def test_the_check_sees_a_store_read() -> None:
    assert _store_reads("def f(service):\n    return service.store.browse(q)\n") == [2]
    assert _store_reads("class A:\n    def f(self):\n        return self.store\n") == []
