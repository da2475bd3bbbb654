"""Recall ranking: score fusion (default) or weighted reciprocal rank fusion, ordering,
relevance labels, token budget."""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import NamedTuple

HIGH, MEDIUM, LOW = "high", "medium", "low"
HIGH_RRF, MEDIUM_RRF = 0.90, 0.75
# A label must be earned by semantic closeness too: the top hit of a store holding only
# unrelated memories gets a perfect fused score. Cosine floors measured on MiniLM, where
# paraphrases score about 0.5-0.8 and unrelated sentences about 0.0-0.2.
HIGH_MIN_DENSE, MEDIUM_MIN_DENSE = 0.50, 0.30
MAX_POOL = 1000
SCORE, RRF = "score", "rrf"
# Late interaction (score fusion only): the best LATE_DEPTH fused candidates are rescored by
# adding LATE_WEIGHT x their MaxSim relative to the best MaxSim among them. Tuned on LoCoMo
# conversations 1-5, checked on 6-10 (docs/benchmarks.md). A deeper rescoring scored a
# little higher on LoCoMo but cost a noticeable share of recall latency.
LATE_DEPTH = 50
LATE_WEIGHT = 1.5
# A clear semantic winner keeps its lead (score fusion only): the candidate whose cosine is
# highest gets DENSE_LEAD_WEIGHT x (its cosine - the second-best cosine). Late interaction
# orders the shortlist by token matches and the keyword side by shared words, so a question
# worded unlike its fact (a paraphrase sharing no word with it) would otherwise lose a memory
# the model ranked first by a wide margin. Zero when the top two cosines tie, so it never
# reorders a crowd; tuned on LoCoMo 1-5 (neutral there) and planted paraphrases among
# filler, whose recall@1 it lifts (docs/benchmarks.md).
DENSE_LEAD_WEIGHT = 2.0
# A question naming a period ("in March 2023", "two weeks ago") adds DATE_CUE_WEIGHT to the
# candidates saved in it or naming a date in it (domain/dates.py): a tie-breaker among
# memories about the same thing, never a filter. Weight chosen offline on LoCoMo 1-5 (0.05 to
# 0.4 within 0.5 R@5 of each other); real runs R@5 +0.6 on 1-5, +0.9 on the held-back 6-10.
DATE_CUE_WEIGHT = 0.1


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """`dense`, `k`, `access` are RRF's; `keyword` is score fusion's share for BM25,
    `feedback` its share for the pseudo-relevance feedback query's BM25 (domain.feedback),
    `dense_lead` and `date_cue` its weights of the dense lead and of the date cue."""

    dense: float = 0.5
    k: int = 60
    access: float = 0.0
    method: str = RRF
    keyword: float = 0.4
    feedback: float = 0.0
    dense_lead: float = DENSE_LEAD_WEIGHT
    date_cue: float = DATE_CUE_WEIGHT

    @property
    def best_possible(self) -> float:
        return ((1.0 - self.dense) + self.dense + self.access) / (self.k + 1)


class Candidate(NamedTuple):
    """A memory id with whatever each retriever said about it (None: not in that list).

    A named tuple rather than a frozen dataclass: recall makes one per candidate of both
    pools (about 400), and a frozen dataclass costs twice as much to build."""

    memory_id: str
    created_at: str
    bm25_rank: int | None = None
    bm25: float | None = None
    dense_rank: int | None = None
    dense: float | None = None
    access_rank: int | None = None


@dataclass(frozen=True, slots=True)
class Ranked:
    memory_id: str
    rrf: float
    dense: float | None
    bm25: float | None
    relevance: str


def candidate_pool(top_k: int) -> int:
    """How many candidates each retriever hands over: max(100, 20 x top_k), at most 1000."""
    return min(MAX_POOL, max(100, 20 * top_k))


def fused_score(candidate: Candidate, weights: FusionWeights) -> float:
    """Weighted RRF normalised to 0..1 by the best possible score."""
    score = 0.0
    if candidate.bm25_rank is not None:
        score += (1.0 - weights.dense) / (weights.k + candidate.bm25_rank)
    if candidate.dense_rank is not None:
        score += weights.dense / (weights.k + candidate.dense_rank)
    if candidate.access_rank is not None and weights.access > 0:
        score += weights.access / (weights.k + candidate.access_rank)
    return score / weights.best_possible


def score_fusion(
    candidates: Sequence[Candidate], weights: FusionWeights,
    late: Mapping[str, float] | None = None, keyword_ideal: float = 0.0,
    dated: Set[str] = frozenset(), base: Sequence[float] | None = None,
) -> list[float]:
    """Per-query normalised score fusion, relative to the query's best candidate (0..1).

    fused = keyword x bm25 / max(best bm25 of the pool, keyword_ideal) + (1 - keyword) x
    cosine. Unlike rank fusion, a strong keyword match keeps its margin instead of being
    averaged with a weak dense rank (LoCoMo: RRF 48 R@5 against 54 for its own BM25 side).
    `keyword_ideal` is the score a memory holding every query word once would get (the
    store's `keyword_ideal`): when the best match shares only a common word or two with the
    question, its keyword share shrinks with the part of the question it covers, instead of
    counting as a perfect match because nothing matched better. The service hands over
    every candidate's real cosine; one without any (no vector of the current model yet, while
    re-embedding) gets the lowest cosine among the others; one the keyword pool missed gets 0.
    An access rank adds `access x (k + 1) / (k + rank)`. `late` (MaxSim scores of the
    shortlisted candidates) adds LATE_WEIGHT x late / best late to each of them. The
    candidate with the highest cosine adds `weights.dense_lead` x its lead over the second;
    those in `dated` (inside the period the question names) add `weights.date_cue`.
    `base`: fusion_base of the same candidates, weights, keyword_ideal and dated, when the
    caller already has it (recall ranks twice, before and after late interaction); then
    `keyword_ideal` and `dated` are not read again.
    """
    raw = list(base) if base is not None else fusion_base(
        candidates, weights, keyword_ideal, dated)
    best_late = max(late.values(), default=0.0) if late else 0.0
    if late and best_late > 0:
        raw = [
            v + LATE_WEIGHT * max(late.get(c.memory_id, 0.0), 0.0) / best_late
            for v, c in zip(raw, candidates, strict=True)
        ]
    top = max(raw, default=0.0)
    return [max(v, 0.0) / top if top > 0 else 0.0 for v in raw]


def fusion_base(
    candidates: Sequence[Candidate], weights: FusionWeights, keyword_ideal: float = 0.0,
    dated: Set[str] = frozenset(), feedback: Mapping[str, float] | None = None,
) -> list[float]:
    """score_fusion's values before late interaction and normalisation: the keyword,
    cosine, access and date shares, the dense lead and, with `feedback` (memory id -> its
    feedback query's keyword share, 0..1), `weights.feedback` x that share."""
    best_bm25 = max((c.bm25 for c in candidates if c.bm25 is not None), default=0.0)
    best_bm25 = max(best_bm25, keyword_ideal)
    floor = min((c.dense for c in candidates if c.dense is not None), default=0.0)
    raw: list[float] = []
    for c in candidates:
        lexical = (c.bm25 or 0.0) / best_bm25 if best_bm25 > 0 else 0.0
        dense = c.dense if c.dense is not None else floor
        value = weights.keyword * max(lexical, 0.0) + (1.0 - weights.keyword) * dense
        if c.access_rank is not None and weights.access > 0:
            value += weights.access * (weights.k + 1) / (weights.k + c.access_rank)
        if c.memory_id in dated:
            value += weights.date_cue
        if feedback:
            value += weights.feedback * feedback.get(c.memory_id, 0.0)
        raw.append(value)
    lead = dense_lead(candidates)
    if lead is not None:
        index, margin = lead
        raw[index] += weights.dense_lead * margin
    return raw


def dense_lead(candidates: Sequence[Candidate]) -> tuple[int, float] | None:
    """(position, cosine - second-best cosine) of the candidate with the highest cosine, or
    None when fewer than two candidates have one, the best two tie or the best is not
    above zero."""
    scored = [(c.dense, index) for index, c in enumerate(candidates) if c.dense is not None]
    if len(scored) < 2:
        return None
    (first, index), (second, _) = heapq.nlargest(2, scored, key=lambda pair: pair[0])
    # Only closeness counts: a cosine under zero is no closer than zero.
    margin = max(first, 0.0) - max(second, 0.0)
    return (index, margin) if margin > 0 else None


def relevance_label(rrf: float, dense: float | None) -> str:
    """high/medium/low from the fused score, capped by the cosine similarity."""
    closeness = dense if dense is not None else 0.0
    if rrf >= HIGH_RRF and closeness >= HIGH_MIN_DENSE:
        return HIGH
    if rrf >= MEDIUM_RRF and closeness >= MEDIUM_MIN_DENSE:
        return MEDIUM
    return LOW


def rank(
    candidates: Sequence[Candidate],
    weights: FusionWeights,
    cutoff: float = 0.0,
    limit: int | None = None,
    late: Mapping[str, float] | None = None,
    keyword_ideal: float = 0.0,
    dated: Set[str] = frozenset(),
    base: Sequence[float] | None = None,
) -> list[Ranked]:
    """Fuse, drop under the cutoff, order by (fused, dense, bm25) then newer first, then id;
    the first `limit` of that order when a limit is given. `late`, `keyword_ideal`, `dated`,
    `base`: see score_fusion."""
    if weights.method == SCORE:
        scored = list(zip(
            score_fusion(candidates, weights, late, keyword_ideal, dated, base), candidates,
            strict=True,
        ))
    else:
        scored = [(fused_score(c, weights), c) for c in candidates]
    kept = [(s, c) for s, c in scored if s >= cutoff]
    if limit is not None and len(kept) > limit:
        # Only scores at or above the limit-th best can place: fully order just those
        # (ties at that score included) instead of every candidate of both pools.
        floor = heapq.nlargest(limit, (s for s, _ in kept))[-1]
        kept = [(s, c) for s, c in kept if s >= floor]
    # Sort ascending on the tie-breakers first, then stable descending on the scores.
    kept.sort(key=lambda sc: sc[1].memory_id)
    kept.sort(key=lambda sc: sc[1].created_at, reverse=True)
    kept.sort(
        key=lambda sc: (
            sc[0],
            sc[1].dense if sc[1].dense is not None else -2.0,
            sc[1].bm25 if sc[1].bm25 is not None else -1.0,
        ),
        reverse=True,
    )
    return [
        Ranked(c.memory_id, round(s, 6), c.dense, c.bm25, relevance_label(s, c.dense))
        for s, c in kept[:limit]
    ]


@dataclass(frozen=True, slots=True)
class BudgetCut:
    count: int
    total_tokens: int
    truncated: bool


def budget_walk(costs: Sequence[int], budget: int) -> BudgetCut:
    """Keep items in order until the next would exceed the budget.

    A first item larger than the whole budget is still kept alone (and marked truncated), so a
    single long memory never makes the store look empty.
    """
    total = 0
    for index, cost in enumerate(costs):
        if total + cost > budget:
            if index == 0:
                return BudgetCut(1, cost, True)
            return BudgetCut(index, total, True)
        total += cost
    return BudgetCut(len(costs), total, False)
