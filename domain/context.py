"""Save-time context: a memory is also found through the memory saved just before it.

In a conversation the answer often sits in a reply ("Yes, last Tuesday") whose subject was
named one message earlier. Each episodic memory therefore takes as context the newest live
memory of its session saved at most `window` earlier: its words enter the memory's keyword
entry at a lower weight, and its embedding is mixed into the memory's vector at a small
weight. The content returned by recall never changes. Weights tuned on LoCoMo conversations
1-5 and checked on 6-10 (docs/benchmarks.md).
"""

from __future__ import annotations

from datetime import datetime, timedelta

# BM25 weight of the context words against 1.0 for the memory's own words.
KEYWORD_CONTEXT_WEIGHT = 0.3
# stored vector = normalise(own + DENSE_CONTEXT_WEIGHT x context's own vector). At 0.2 an
# identical text still scores >= 0.979 against the mixed vector, above the 0.95 dedup line.
DENSE_CONTEXT_WEIGHT = 0.2
DEFAULT_WINDOW_MINUTES = 60
# Only a memory about the same thing is context: the cosine of the two texts' own vectors must
# reach this. Consecutive turns of a conversation (LoCoMo, text without its prefixes) scored
# 0.22-0.27 at their 10th percentile and 0.44-0.45 at the median; independent facts saved
# one after another (benchmark_accuracy) 0.05 at the median and 0.15 at the 90th.
CONTEXT_MIN_SIMILARITY = 0.2
# Late interaction: a query token may also match a token of the memory's context memory, at
# this share of its similarity.
CONTEXT_TOKEN_WEIGHT = 0.5


def related(similarity: float) -> bool:
    """Whether two memories are close enough in meaning for one to be the other's context."""
    return similarity >= CONTEXT_MIN_SIMILARITY


def within_window(previous: str, now: str, minutes: int) -> bool:
    """Whether a memory created at `previous` (ISO-8601) may be context for one saved `now`."""
    if minutes <= 0:
        return False
    gap = datetime.fromisoformat(now) - datetime.fromisoformat(previous)
    return timedelta(0) <= gap <= timedelta(minutes=minutes)
