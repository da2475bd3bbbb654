"""Prompt-ready text frames. The recall budget counts the same frame the MCP text uses."""

from __future__ import annotations

from xml.sax.saxutils import escape as _escape

_ENTITIES = {'"': "&quot;", "'": "&apos;"}
NEEDS_ESCAPE = frozenset("<>&\"'")

# The tag each recalled memory is wrapped in, with the widest attribute values; the budget
# walk adds its token count to every memory so the rendered text really fits. The space
# keeps `">` and the newlines from merging into one token that real content would split.
MEMORY_FRAME = (
    '<memory index="100" ref="0a1b2c3d4e5f" relevance="medium" '
    'created_at="2026-07-30T10:15:00Z">\n \n</memory>\n'
)


def escape(text: str) -> str:
    """XML-escape content and attribute values (&, <, >, both quotes)."""
    return _escape(text, _ENTITIES)
