"""Turning memory text into HTML safely: every character of stored content is escaped; the
only markup added is <mark> around keyword matches."""

from __future__ import annotations

import re

from markupsafe import Markup, escape

_WORD = re.compile(r"\w+", re.UNICODE)


def match_pattern(search: str | None) -> re.Pattern[str] | None:
    """Words of a list search as one case-insensitive pattern (each word as a prefix),
    mirroring how list_memories matches them."""
    words = _WORD.findall(search or "")
    if not words:
        return None
    parts = [rf"\b{re.escape(w)}\w*" for w in words]
    return re.compile("|".join(parts), re.IGNORECASE | re.UNICODE)


def highlight(text: str, search: str | None) -> Markup:
    """`text` as HTML with matches wrapped in <mark>. Matches are found in the raw text and
    each piece is escaped on its own, so a match can never split or form an entity or tag."""
    pattern = match_pattern(search)
    if pattern is None:
        return Markup(escape(text))
    out, last = [], 0
    for found in pattern.finditer(text):
        if found.start() == found.end():
            continue
        out.append(str(escape(text[last:found.start()])))
        out.append(f"<mark>{escape(found.group())}</mark>")
        last = found.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))
