"""The in-memory store's keyword scoring: BM25 over token lists, and the IDF that its ranking,
its keyword scale and its word rarity share (phrases counted per document, as FTS5 does)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from tinycontext.testing.matching import phrase_count

K1, B = 1.2, 0.75  # FTS5's bm25() constants


def idf(documents: int, rows: int) -> float:
    """The IDF of a phrase found in `documents` of `rows` rows (`rows` at least 1)."""
    return math.log((rows - documents + 0.5) / (documents + 0.5) + 1.0)


def bm25(
    groups: Sequence[Sequence[str]], tokenised: Mapping[str, list[str]], prefixes: bool = False
) -> dict[str, float]:
    """Each id's BM25 for the phrase `groups` over its tokens (folded words, as the groups);
    ids that match no group are left out. `prefixes`: each group's last word as a prefix."""
    n = len(tokenised) or 1
    avg = sum(len(t) for t in tokenised.values()) / n or 1.0
    scores: dict[str, float] = {}
    for group in groups:
        weight = idf(sum(1 for t in tokenised.values() if phrase_count(t, group, prefixes)), n)
        for key, tokens in tokenised.items():
            tf = phrase_count(tokens, group, prefixes)
            if tf:
                norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(tokens) / avg))
                scores[key] = scores.get(key, 0.0) + weight * norm
    return scores
