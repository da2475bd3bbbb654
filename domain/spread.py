"""Spreading recall's first slots over moments: a coverage step after fusion (off by default).

An answer that needs two memories from different conversations or days loses its second
half when the best candidates are all near neighbours of the strongest one: they share its
session and its moment, and fill every slot. With a weight above zero, the slots are filled
one at a time: each goes to the candidate whose fused score, less `weight` for every memory
already chosen from the same moment (same session, created within `window` of it), is
highest. Candidates that all come from one moment are penalised alike at every step, so
their order is unchanged; so is the order of candidates that all come from different ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple, TypeVar

# How many of the fused candidates compete for the slots (at least top_k of them).
SPREAD_DEPTH = 50


class Moment(NamedTuple):
    """Where and when a memory was said: its session and its created_at in seconds."""

    session: str | None
    at: float


T = TypeVar("T")


def moment_of(session: str | None, created_at: str) -> Moment:
    """The moment of a stored memory (an unreadable timestamp counts as the epoch)."""
    try:
        at = datetime.fromisoformat(created_at).timestamp()
    except ValueError:
        at = 0.0
    return Moment(session, at)


def same_moment(a: Moment, b: Moment, window_seconds: float) -> bool:
    return a.session == b.session and abs(a.at - b.at) <= window_seconds


def spread(
    ranked: Sequence[T],
    scores: Sequence[float],
    moments: Sequence[Moment],
    weight: float,
    window_seconds: float,
    limit: int,
) -> list[T]:
    """The first `limit` of `ranked` (best first, with their `scores` and `moments`), each
    slot going to the best score less `weight` x the chosen memories of its moment.

    Ties keep the incoming order, so the result is as deterministic as `ranked` is. With a
    weight of zero (or nothing to choose between) it is `ranked[:limit]`.
    """
    if not (len(ranked) == len(scores) == len(moments)):
        raise ValueError("ranked, scores and moments must be the same length")
    if weight <= 0 or len(ranked) <= 1:
        return list(ranked[:limit])
    remaining = list(range(len(ranked)))
    crowd = [0] * len(ranked)  # chosen memories in each candidate's moment so far
    chosen: list[int] = []
    while remaining and len(chosen) < limit:
        best = max(remaining, key=lambda i: (scores[i] - weight * crowd[i], -i))
        remaining.remove(best)
        chosen.append(best)
        for i in remaining:
            if same_moment(moments[i], moments[best], window_seconds):
                crowd[i] += 1
    return [ranked[i] for i in chosen]

