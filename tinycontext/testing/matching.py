"""The small matching helpers of the in-memory store: cosine of packed vectors, newest-first
sort keys and word-phrase counts."""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from tinycontext.ports.embedder import Vector


def cosine(a: Vector, b: Vector) -> float:
    x, y = array("f", a), array("f", b)
    return float(sum(p * q for p, q in zip(x, y, strict=True)))


def desc(text: str) -> str:
    # Sort key that orders ISO timestamps newest first inside an ascending sort.
    return "".join(chr(0x10FFFF - ord(c)) for c in text)



def phrase_count(tokens: list[str], phrase: Sequence[str], prefix: bool = False) -> int:
    n = len(phrase)
    count = 0
    for i in range(len(tokens) - n + 1):
        head, last = tokens[i : i + n - 1], tokens[i + n - 1]
        if list(head) == list(phrase[:-1]) and (
            last.startswith(phrase[-1]) if prefix else last == phrase[-1]
        ):
            count += 1
    return count


def has_phrase(tokens: list[str], phrase: Sequence[str]) -> bool:
    return phrase_count(tokens, phrase) > 0


def matches_all(tokens: list[str], groups: Sequence[Sequence[str]]) -> bool:
    """Every group appears, each one's last word as a prefix (list search)."""
    return all(phrase_count(tokens, g, True) > 0 for g in groups)
