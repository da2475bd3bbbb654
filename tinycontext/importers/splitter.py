"""Cut a long text into pieces under a token limit, at the most natural boundary.

Paragraphs (blank lines) first, then sentences, then words; a fenced code block is one unit
and stays whole when it fits (a block too long alone is cut at line ends). Neighbouring
units are packed together up to the limit, so a long message becomes a few large pieces,
not many small ones. Counting is the store's own tokenizer; texts whose UTF-8 size is under
the limit are not counted at all (a token is at least one byte).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

Count = Callable[[str], int]
_FENCE = re.compile(r"^(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def split_text(text: str, limit: int, count: Count) -> list[str]:
    """`text` as one piece when it fits in `limit` tokens, else pieces that each fit.

    Pieces are packed by adding their units' counts (plus one token per join), so each
    unit is counted once: a 10 MB message costs one pass, not one count per join."""
    text = text.strip()
    if not text:
        return []
    if _fits(text, limit, count):
        return [text]
    return _join(_units(text, limit, count), limit, count)


def _join(units: Iterator[tuple[str, str]], limit: int, count: Count) -> list[str]:
    """Units (text, the glue that joins it to the one before) packed into pieces."""
    pieces: list[str] = []
    current: list[str] = []  # alternating glue and text, without the first glue
    used = 0
    for glue, unit in units:
        size = _size(unit, count)
        if current and used + 1 + size > limit:
            pieces.append("".join(current))
            current, used = [], 0
        used += size + (1 if current else 0)
        current += [glue, unit] if current else [unit]
    if current:
        pieces.append("".join(current))
    return pieces


def _size(text: str, count: Count) -> int:
    return count(text) if len(text) > 4 else 1


def _fits(text: str, limit: int, count: Count) -> bool:
    return len(text.encode("utf-8")) <= limit or count(text) <= limit


def _blocks(text: str) -> Iterator[str]:
    """Paragraphs and whole fenced code blocks, in order."""
    lines = text.splitlines()
    buffer: list[str] = []
    fence: str | None = None
    for line in lines:
        marker = _FENCE.match(line.lstrip())
        if fence is None and marker:
            if buffer:
                yield "\n".join(buffer)
                buffer = []
            fence = marker.group(1)
            buffer.append(line)
            continue
        if fence is not None:
            buffer.append(line)
            if line.strip().startswith(fence) and len(buffer) > 1:
                yield "\n".join(buffer)
                buffer, fence = [], None
            continue
        if not line.strip():
            if buffer:
                yield "\n".join(buffer)
                buffer = []
            continue
        buffer.append(line)
    if buffer:
        yield "\n".join(buffer)


def _units(text: str, limit: int, count: Count) -> Iterator[tuple[str, str]]:
    """(glue, unit): blocks that fit as they are; larger ones cut into sentences, lines or
    words, each with the separator that stood before it."""
    for block in _blocks(text):
        glue = "\n\n"
        if _fits(block, limit, count):
            yield glue, block
        elif _FENCE.match(block.lstrip()):
            for part in _pack(block.splitlines(), "\n", limit, count):
                yield glue, part
                glue = "\n"
        else:
            for sentence in (s for s in _SENTENCE_END.split(block) if s.strip()):
                parts = [sentence] if _fits(sentence, limit, count) \
                    else _pack(sentence.split(" "), " ", limit, count)
                for part in parts:
                    yield glue, part
                    glue = " "


def _pack(parts: list[str], glue: str, limit: int, count: Count) -> Iterator[str]:
    """Consecutive parts joined while they fit; a part too long alone is cut by characters."""
    fitting: list[str] = []
    for part in parts:
        if _fits(part, limit, count):
            fitting.append(part)
            continue
        yield from _join(((glue, f) for f in fitting), limit, count)
        fitting = []
        yield from _cut(part, limit, count)
    yield from _join(((glue, f) for f in fitting), limit, count)


def _cut(text: str, limit: int, count: Count) -> Iterator[str]:
    """A run without any break (a base64 blob, a huge word): fixed slices that fit."""
    step = max(1, limit)
    start = 0
    while start < len(text):
        size = step * 4
        while size > 1 and not _fits(text[start:start + size], limit, count):
            size //= 2
        yield text[start:start + size]
        start += size
