"""Facet coverage: later slots go to memories from other moments that hold the parts of the
question the ones already chosen do not.

A question whose answer is spread over two conversations ("What did she buy after the trip
to Paris, and who came along?") names several things, and the strongest candidates often
hold only some of them: the best memory and its near neighbours name the trip, while the
memory that names the purchase sits in another sitting and ranks lower. After fusion, the
slots are filled one at a time: each goes to the best fused score plus `weight` x the share
of the question's rarity held by the question's words (keyword groups) that the candidate
holds and no chosen memory does. Only a candidate from a moment not yet chosen (another
session, or saved more than a window apart) earns that share: within a sitting, the
neighbours of a chosen memory already rank by their own scores. The first slot is always
the best fused candidate, so a single-answer question keeps its answer first; a question
whose best result holds all its words, or a store saved in one sitting, keeps its order.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from .spread import Moment, same_moment


def facet_matches(
    groups: Sequence[Sequence[str]], words: Sequence[Collection[str]]
) -> list[frozenset[int]]:
    """For each candidate (its words), the question's groups it holds: every word of the
    group among its words (a group is one query word, or the parts of a split one)."""
    return [
        frozenset(j for j, group in enumerate(groups) if group and all(w in held for w in group))
        for held in words
    ]


def group_rarity(groups: Sequence[Sequence[str]], rarity: Mapping[str, float]) -> list[float]:
    """Each group's weight: the rarity (IDF) of its rarest word; 0 for words the store lacks,
    which no candidate can hold."""
    return [max((max(rarity.get(w, 0.0), 0.0) for w in group), default=0.0) for group in groups]


def cover_facets(
    scores: Sequence[float],
    matches: Sequence[frozenset[int]],
    weights: Sequence[float],
    moments: Sequence[Moment],
    weight: float,
    window_seconds: float,
    limit: int,
) -> list[int]:
    """The positions (into `scores`, best first) of the first `limit` slots: the first is
    position 0; each later one the highest score plus `weight` x the share of `weights`
    held by the groups in its `matches` that no chosen candidate holds, counted only for a
    candidate sharing no moment with a chosen one. Ties keep the incoming order; with a
    weight of zero, or no group with a weight, it is the first `limit` positions."""
    if not (len(scores) == len(matches) == len(moments)):
        raise ValueError("scores, matches and moments must be the same length")
    total = sum(max(w, 0.0) for w in weights)
    if weight <= 0 or total <= 0 or len(scores) <= 1 or limit <= 1:
        return list(range(min(limit, len(scores))))
    rarity = [max(w, 0.0) for w in weights]
    chosen = [0]
    covered: set[int] = set(matches[0])
    # Whether each candidate shares a moment with a chosen one (then it earns nothing),
    # kept up to date as slots are filled rather than asked of every chosen one each time.
    near = [same_moment(moments[i], moments[0], window_seconds) for i in range(len(scores))]
    remaining = list(range(1, len(scores)))
    while remaining and len(chosen) < limit:
        best, best_value = remaining[0], float("-inf")
        for i in remaining:  # in incoming order: a tie keeps the earlier candidate
            value = scores[i]
            if not near[i]:
                fresh = matches[i] - covered
                if fresh:
                    value += weight * sum(rarity[j] for j in fresh) / total
            if value > best_value:
                best, best_value = i, value
        remaining.remove(best)
        chosen.append(best)
        covered |= matches[best]
        for i in remaining:
            if not near[i] and same_moment(moments[i], moments[best], window_seconds):
                near[i] = True
    return chosen
