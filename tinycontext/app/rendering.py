"""How a transport frames each memory it returns, so a recall budget counts what it returns.

A recall walks its ranked memories until the next one would exceed the caller's token budget
(SPEC section 2). What one memory costs depends on the transport that returns it: MCP wraps
each memory in a `<memory ...>` tag with XML-escaped content (its Framing is
adapters/mcp/frame.py), REST returns the content as a JSON string field (PLAIN). Each
transport passes its own Framing; a service's default is the one the composition gives it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Framing:
    """What a transport adds around each returned memory's content.

    `frame` is counted once per memory; when the content holds any of `escaped`, it is
    counted as `escape(content)` (what the transport really sends) instead of as stored.
    """

    frame: str = ""
    escape: Callable[[str], str] | None = None
    escaped: frozenset[str] = frozenset()
    tags: Callable[[tuple[str, ...]], str] | None = None
    """How a memory's tags are shown beside it (None: not shown), and so counted."""


# Content returned as is, nothing around it (REST's JSON fields): the content's own tokens.
PLAIN = Framing()
