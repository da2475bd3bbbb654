"""The frame of MCP's prompt text around each memory, as the recall budget counts it.

render.py writes each recalled memory as a `<memory ...>` tag with XML-escaped content and a
tags attribute; PROMPT_FRAMING describes that text to the recall budget (a Framing of
tinycontext.app.rendering), so the budget counts what MCP really returns. The MCP server
passes it to every recall; the composition makes it the service's default, which the
Python API, the hooks and the web UI's Ask page have always counted.
"""

from __future__ import annotations

from xml.sax.saxutils import escape as _escape

from tinycontext.app.rendering import Framing

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


def tags_attribute(tags: tuple[str, ...]) -> str:
    """How the prompt text shows a memory's tags: one compact attribute of its tag."""
    return f' tags="{escape(",".join(tags))}"' if tags else ""


# The prompt text: XML frame, escaped content, tags beside each memory.
PROMPT_FRAMING = Framing(MEMORY_FRAME, escape, NEEDS_ESCAPE, tags=tags_attribute)
