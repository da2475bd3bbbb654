"""Near-duplicate policy for saves: skip only what adds nothing, flag what looks similar."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .text import informative_tokens


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An existing (or earlier in the batch) memory and its cosine similarity to the new one."""

    ref: str
    content: str
    similarity: float


@dataclass(frozen=True, slots=True)
class DedupVerdict:
    skip_as_duplicate_of: Neighbour | None = None
    similar_to: Neighbour | None = None


def adds_nothing(new_content: str, existing_content: str) -> bool:
    """True when every normalised token of the new text is already in the existing one."""
    return informative_tokens(new_content) <= informative_tokens(existing_content)


def judge(
    new_content: str,
    neighbours: Iterable[Neighbour],
    duplicate_threshold: float,
    review_threshold: float,
) -> DedupVerdict:
    """Skip when a neighbour at >= duplicate_threshold already says everything; otherwise
    report the closest neighbour at >= review_threshold as `similar_to`.

    Small embedding models put "moved on 3 March" and "moved on 9 April" above 0.95, so high
    similarity alone never drops a memory: the new text must add no token.
    """
    ordered = sorted(neighbours, key=lambda n: (-n.similarity, n.ref))
    for neighbour in ordered:
        if neighbour.similarity < duplicate_threshold:
            break
        if adds_nothing(new_content, neighbour.content):
            return DedupVerdict(skip_as_duplicate_of=neighbour)
    for neighbour in ordered:
        if neighbour.similarity >= review_threshold:
            return DedupVerdict(similar_to=neighbour)
        break
    return DedupVerdict()
