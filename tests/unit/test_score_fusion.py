"""Score fusion (domain/recall.py): per-query normalised BM25 + cosine, relative to the best."""

from __future__ import annotations

import pytest

from tinycontext.domain.recall import (
    HIGH,
    LOW,
    MEDIUM,
    SCORE,
    Candidate,
    FusionWeights,
    rank,
    score_fusion,
)

TS = "2026-07-31T10:15:00Z"


# These pin the fusion formula itself, without the dense-lead bonus; that bonus has its own
# tests (tests/unit/test_dense_lead.py).
W = FusionWeights(method=SCORE, keyword=0.35, dense_lead=0.0)


def cand(mid: str, bm25: float | None, dense: float | None, created_at: str = TS,
         access_rank: int | None = None) -> Candidate:
    return Candidate(mid, created_at, bm25_rank=None if bm25 is None else 1, bm25=bm25,
                     dense_rank=None if dense is None else 1, dense=dense,
                     access_rank=access_rank)


def test_fused_values_exactly():
    # raw = 0.35 * bm25 / 8 + 0.65 * dense; a: 0.35 + 0.39 = 0.74, b: 0.175 + 0.455 = 0.63,
    # c (no keyword match): 0.65 * 0.2 = 0.13; relative to the best (a).
    values = score_fusion([cand("a", 8.0, 0.6), cand("b", 4.0, 0.7), cand("c", None, 0.2)], W)
    assert values == pytest.approx([1.0, 0.63 / 0.74, 0.13 / 0.74], rel=1e-12)


def test_keyword_scores_are_relative_to_the_querys_ideal_when_it_is_higher():
    # The best match (8) covers a third of what a memory holding every query word would
    # score (24): keyword parts are 8/24 and 4/24 instead of 1 and 1/2.
    pool = [cand("a", 8.0, 0.6), cand("b", 4.0, 0.7), cand("c", None, 0.2)]
    raw = [0.35 * 8 / 24 + 0.65 * 0.6, 0.35 * 4 / 24 + 0.65 * 0.7, 0.65 * 0.2]
    values = score_fusion(pool, W, keyword_ideal=24.0)
    assert values == pytest.approx([v / raw[1] for v in raw], rel=1e-12)
    # An ideal under the best score changes nothing.
    assert score_fusion(pool, W, keyword_ideal=5.0) == score_fusion(pool, W)


def test_a_match_on_one_common_word_no_longer_beats_a_paraphrase():
    # "filler" shares one common word with the question, "fact" none but means the same.
    pool = [cand("filler", 1.5, 0.30), cand("fact", None, 0.55)]
    assert [r.memory_id for r in rank(pool, W)] == ["filler", "fact"]
    assert [r.memory_id for r in rank(pool, W, keyword_ideal=15.0)] == ["fact", "filler"]


def test_a_strong_keyword_match_is_not_averaged_away():
    # Rank fusion would tie these (1st + 2nd each); score fusion keeps the keyword margin.
    out = rank([cand("kw", 10.0, 0.40), cand("dn", 1.0, 0.45)], W)
    assert [r.memory_id for r in out] == ["kw", "dn"]


def test_missing_dense_takes_the_pools_lowest_cosine():
    # "k" came only from the keyword pool: its cosine is at most the dense pool's floor 0.3.
    values = score_fusion([cand("k", 5.0, None), cand("d1", None, 0.5), cand("d2", None, 0.3)], W)
    raw = [0.35 + 0.65 * 0.3, 0.65 * 0.5, 0.65 * 0.3]
    assert values == pytest.approx([v / raw[0] for v in raw], rel=1e-12)


def test_keyword_weight_zero_is_dense_order_and_one_is_bm25_order():
    pool = [cand("a", 9.0, 0.1), cand("b", 1.0, 0.9)]
    dense_only = FusionWeights(method=SCORE, keyword=0.0, dense_lead=0.0)
    bm25_only = FusionWeights(method=SCORE, keyword=1.0, dense_lead=0.0)
    assert [r.memory_id for r in rank(pool, dense_only)] == ["b", "a"]
    assert [r.memory_id for r in rank(pool, bm25_only)] == ["a", "b"]


def test_nothing_positive_scores_zero():
    assert score_fusion([cand("a", None, -0.2), cand("b", None, -0.1)], W) == [0.0, 0.0]
    assert score_fusion([], W) == []


def test_access_rank_adds_its_weighted_share():
    weights = FusionWeights(method=SCORE, keyword=0.5, access=0.1, k=60, dense_lead=0.0)
    # a: 0.5*1 + 0.5*0.4 + 0.1*61/61 = 0.8; b: 0.5*0.5 + 0.5*0.6 + 0.1*61/62
    values = score_fusion([cand("a", 2.0, 0.4, access_rank=1), cand("b", 1.0, 0.6, access_rank=2)],
                          weights)
    assert values == pytest.approx([1.0, (0.55 + 0.1 * 61 / 62) / 0.8], rel=1e-12)


def test_ties_break_newer_first_then_id_and_labels_need_closeness():
    older, newer = "2026-07-01T00:00:00Z", "2026-07-02T00:00:00Z"
    out = rank([cand("b", 2.0, 0.6, older), cand("a", 2.0, 0.6, older),
                cand("c", 2.0, 0.6, newer), cand("d", None, 0.1)], W)
    assert [r.memory_id for r in out] == ["c", "a", "b", "d"]
    assert [r.relevance for r in out] == [HIGH, HIGH, HIGH, LOW]
    # Top by score but semantically far: not high.
    [lone] = rank([cand("x", 3.0, 0.35)], W)
    assert lone.rrf == 1.0 and lone.relevance == MEDIUM


def test_cutoff_and_limit_apply_to_the_relative_score():
    pool = [cand("a", 8.0, 0.6), cand("b", 4.0, 0.7), cand("c", None, 0.2)]
    assert [r.memory_id for r in rank(pool, W, cutoff=0.5)] == ["a", "b"]
    assert [r.memory_id for r in rank(pool, W, limit=1)] == ["a"]


def test_late_interaction_adds_its_share_relative_to_the_best_shortlisted():
    # raw a = 0.74, b = 0.63 (as above); late a 0.2, b 0.4 -> bonus 1.5 * (0.5, 1.0).
    pool = [cand("a", 8.0, 0.6), cand("b", 4.0, 0.7), cand("c", None, 0.2)]
    values = score_fusion(pool, W, late={"a": 0.2, "b": 0.4})
    raw = [0.74 + 0.75, 0.63 + 1.5, 0.13]
    assert values == pytest.approx([v / raw[1] for v in raw], rel=1e-12)
    assert [r.memory_id for r in rank(pool, W, late={"a": 0.2, "b": 0.4})] == ["b", "a", "c"]


def test_late_interaction_never_lowers_and_ignores_non_positive_scores():
    pool = [cand("a", 8.0, 0.6), cand("b", 4.0, 0.7)]
    assert score_fusion(pool, W, late={"a": -0.3, "b": 0.0}) == score_fusion(pool, W)
    assert score_fusion(pool, W, late={}) == score_fusion(pool, W)
    # A shortlisted memory without token bits gets no bonus; the others keep theirs.
    values = score_fusion(pool, W, late={"b": 0.1})
    assert values == pytest.approx([0.74 / 2.13, 1.0], rel=1e-12)


def test_rank_fusion_ignores_late_scores():
    weights = FusionWeights()  # rrf
    pool = [cand("a", 8.0, 0.6), cand("b", 4.0, 0.7)]
    assert rank(pool, weights, late={"b": 9.0}) == rank(pool, weights)
