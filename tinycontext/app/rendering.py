"""How a transport frames each memory it returns, so a recall budget counts what it returns.

A recall walks its ranked memories until the next one would exceed the caller's token budget
(SPEC section 2). What one memory costs depends on the transport that returns it: MCP wraps
each memory in a `<memory ...>` tag with XML-escaped content (adapters/mcp/render.py), REST
returns the content as a JSON string field. Each transport passes its own Framing; the
Python API keeps the prompt frame it always counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Framing:
    """What a transport adds around each returned memory's content.

    `frame` is counted once per memory; when the content holds any of `escaped`, it is
    counted as `escape(content)` (what the transport really sends) instead of as stored.
    """

    frame: str = ""
    escape: Callable[[str], str] | None = None
    escaped: frozenset[str] = frozenset()
    tags: bool = False
    """Whether a memory's tags are shown beside it (`tags_attribute`), and so counted."""


def tags_attribute(tags: tuple[str, ...]) -> str:
    """How the prompt text shows a memory's tags: one compact attribute of its tag."""
    return f' tags="{escape(",".join(tags))}"' if tags else ""


# The prompt text of MCP (and the Python API's default): XML frame, escaped content.
PROMPT_FRAMING = Framing(MEMORY_FRAME, escape, NEEDS_ESCAPE, tags=True)
# Content returned as is, nothing around it (REST's JSON fields): the content's own tokens.
PLAIN = Framing()
