"""Recall fusion, ordering, relevance labels, candidate pool and token budget (domain/recall.py)."""

from __future__ import annotations

import pytest

from tinycontext.domain.recall import (
    HIGH,
    LOW,
    MEDIUM,
    BudgetCut,
    Candidate,
    FusionWeights,
    budget_walk,
    candidate_pool,
    fused_score,
    rank,
    relevance_label,
)

TS = "2026-07-31T10:15:00Z"
DEFAULT = FusionWeights()  # w=0.5, k=60, a=0


def cand(mid: str = "m", bm25: int | None = None, dense: int | None = None,
         access: int | None = None, created_at: str = TS, dense_score: float | None = None,
         bm25_score: float | None = None) -> Candidate:
    return Candidate(mid, created_at, bm25_rank=bm25, bm25=bm25_score, dense_rank=dense,
                     dense=dense_score, access_rank=access)


# -- fused_score ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("bm25", "dense", "expected"),
    [
        (1, 1, 1.0),  # (0.5/61 + 0.5/61) / (1/61) = 1
        (None, 1, 0.5),  # only dense rank 1: 0.5/61 / (1/61)
        (1, None, 0.5),
        (2, 1, 123 / 124),  # 61*(0.5/62 + 0.5/61) = 0.5*61/62 + 0.5 = 123/124
        (1, 2, 123 / 124),
        (3, 5, 3904 / 4095),  # 61*(0.5/63 + 0.5/65)
        (10, None, 61 / 140),  # 61*0.5/70
        (None, 100, 61 / 320),  # 61*0.5/160
    ],
)
def test_fused_score_default_weights(bm25, dense, expected):
    assert fused_score(cand(bm25=bm25, dense=dense), DEFAULT) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("bm25", "dense", "expected"),
    [
        (1, 1, 1.0),
        (None, 1, 0.7),  # 0.7/61 / (1/61)
        (1, None, 0.3),  # 0.3/61 / (1/61)
        (5, 3, 2806 / 2925),  # 61*(0.3/65 + 0.7/63)
        (2, 1, 617 / 620),  # 61*(0.3/62) + 0.7
    ],
)
def test_fused_score_dense_weight_07(bm25, dense, expected):
    weights = FusionWeights(dense=0.7, k=60)
    assert fused_score(cand(bm25=bm25, dense=dense), weights) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("bm25", "dense", "access", "expected"),
    [
        (1, 1, 1, 1.0),  # best possible is (0.5+0.5+0.2)/61
        (1, 1, None, 5 / 6),  # (1/61) / (1.2/61)
        (None, None, 1, 1 / 6),  # (0.2/61) / (1.2/61)
        (2, 3, 4, 729133 / 749952),  # 61/1.2 * (0.5/62 + 0.5/63 + 0.2/64)
    ],
)
def test_fused_score_with_access_weight(bm25, dense, access, expected):
    weights = FusionWeights(dense=0.5, k=60, access=0.2)
    got = fused_score(cand(bm25=bm25, dense=dense, access=access), weights)
    assert got == pytest.approx(expected, rel=1e-12)


def test_access_rank_ignored_when_access_weight_is_zero():
    assert fused_score(cand(bm25=1, dense=1, access=1), DEFAULT) == pytest.approx(1.0)


def test_best_possible():
    assert DEFAULT.best_possible == pytest.approx(1 / 61)
    assert FusionWeights(0.7, 10, 0.3).best_possible == pytest.approx(1.3 / 11)


def test_candidate_in_no_list_scores_zero():
    assert fused_score(cand(), DEFAULT) == 0.0


# -- rank: cutoff and ordering ---------------------------------------------------------------
def test_rank_drops_under_cutoff_and_keeps_equal():
    cands = [cand("a", bm25=1, dense=1), cand("b", dense=1), cand("c", bm25=10)]
    # scores: a 1.0, b 0.5, c 61/140 = 0.4357
    assert [r.memory_id for r in rank(cands, DEFAULT, cutoff=0.5)] == ["a", "b"]
    assert [r.memory_id for r in rank(cands, DEFAULT, cutoff=0.51)] == ["a"]
    assert [r.memory_id for r in rank(cands, DEFAULT)] == ["a", "b", "c"]


def test_rank_reports_rounded_rrf_and_scores():
    [r] = rank([cand("a", bm25=2, dense=1, dense_score=0.81, bm25_score=3.5)], DEFAULT)
    assert r.rrf == round(123 / 124, 6) == 0.991935
    assert (r.dense, r.bm25, r.relevance) == (0.81, 3.5, HIGH)


def test_rank_orders_by_rrf_then_dense_then_bm25():
    cands = [
        cand("low", bm25=5, dense_score=None, bm25_score=9.0),
        cand("bm25only", bm25=1, bm25_score=5.0),  # 0.5
        cand("denseonly", dense=1, dense_score=0.2),  # 0.5, wins the tie on dense
        cand("both", bm25=1, dense=1, dense_score=0.1, bm25_score=1.0),  # 1.0
    ]
    assert [r.memory_id for r in rank(cands, DEFAULT)] == ["both", "denseonly", "bm25only", "low"]


def test_rank_equal_rrf_and_dense_broken_by_bm25():
    cands = [
        cand("x", bm25=1, dense=2, dense_score=0.5, bm25_score=1.0),
        cand("y", bm25=2, dense=1, dense_score=0.5, bm25_score=2.0),
    ]
    assert [r.memory_id for r in rank(cands, DEFAULT)] == ["y", "x"]


def test_rank_full_ties_newer_first_then_id():
    cands = [
        cand("b", dense=1, dense_score=0.4, created_at="2026-01-01T00:00:00Z"),
        cand("c", dense=1, dense_score=0.4, created_at="2026-02-01T00:00:00Z"),
        cand("a", dense=1, dense_score=0.4, created_at="2026-01-01T00:00:00Z"),
    ]
    expected = ["c", "a", "b"]
    assert [r.memory_id for r in rank(cands, DEFAULT)] == expected
    # Deterministic whatever the input order.
    for order in ([2, 1, 0], [1, 0, 2], [0, 2, 1]):
        shuffled = [cands[i] for i in order]
        assert [r.memory_id for r in rank(shuffled, DEFAULT)] == expected


# -- relevance labels ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rrf", "dense", "label"),
    [
        (0.90, 0.50, HIGH),
        (1.0, 0.99, HIGH),
        (0.8999, 0.99, MEDIUM),
        (0.90, 0.4999, MEDIUM),  # high score but not close enough for high
        (0.75, 0.30, MEDIUM),
        (0.7499, 0.99, LOW),
        (0.75, 0.2999, LOW),
        (1.0, 0.1, LOW),  # lone unrelated memory: top by definition, still low
        (1.0, None, LOW),  # keyword-only hit has no semantic closeness
        (0.0, 1.0, LOW),
    ],
)
def test_relevance_label(rrf, dense, label):
    assert relevance_label(rrf, dense) == label


def test_lone_unrelated_memory_is_not_high():
    [r] = rank([cand("a", bm25=1, dense=1, dense_score=0.1)], DEFAULT)
    assert r.rrf == 1.0 and r.relevance == LOW


# -- candidate pool --------------------------------------------------------------------------
@pytest.mark.parametrize(("top_k", "pool"), [(1, 100), (5, 100), (6, 120), (10, 200), (50, 1000),
                                             (60, 1000), (1000, 1000)])
def test_candidate_pool(top_k, pool):
    assert candidate_pool(top_k) == pool


# -- budget walk -----------------------------------------------------------------------------
def test_budget_fits_all():
    assert budget_walk([3, 4, 5], 12) == BudgetCut(3, 12, False)
    assert budget_walk([3, 4, 5], 100) == BudgetCut(3, 12, False)


def test_budget_exact_fit_is_not_truncated():
    assert budget_walk([5, 5], 10) == BudgetCut(2, 10, False)


def test_budget_stops_before_first_that_exceeds():
    assert budget_walk([3, 4, 5], 11) == BudgetCut(2, 7, True)


def test_budget_does_not_skip_ahead_to_smaller_item():
    # 3 fits, 10 does not; the later 1 would fit but order is kept.
    assert budget_walk([3, 10, 1], 5) == BudgetCut(1, 3, True)


def test_budget_oversized_first_item_returned_alone():
    assert budget_walk([50, 1], 10) == BudgetCut(1, 50, True)
    assert budget_walk([50], 10) == BudgetCut(1, 50, True)


def test_budget_empty_list():
    assert budget_walk([], 10) == BudgetCut(0, 0, False)


# -- rank with a limit ---------------------------------------------------------------------
def test_rank_with_limit_is_the_head_of_the_full_order_ties_included() -> None:
    import random

    rng = random.Random(5)
    for _ in range(200):
        cands = []
        for i in range(rng.randrange(1, 40)):
            # Few distinct ranks and scores, so fused scores and tie-breakers collide often.
            cands.append(cand(
                f"m{rng.randrange(1000):03d}-{i}",
                bm25=rng.choice([None, 1, 2, 3]), dense=rng.choice([None, 1, 2, 3]),
                created_at=f"2026-07-0{rng.randrange(1, 4)}T10:00:00Z",
                dense_score=rng.choice([None, 0.5, 0.7]),
                bm25_score=rng.choice([None, 1.0, 2.0]),
            ))
        if all(c.bm25_rank is None and c.dense_rank is None for c in cands):
            continue
        full = rank(cands, DEFAULT)
        for limit in (1, 3, 10, 50):
            assert rank(cands, DEFAULT, limit=limit) == full[:limit]


def test_rank_limit_applies_after_the_cutoff() -> None:
    cands = [cand("a", bm25=1, dense=1), cand("b", bm25=1), cand("c", dense=30)]
    assert [r.memory_id for r in rank(cands, DEFAULT, cutoff=0.5, limit=5)] == ["a", "b"]
    assert [r.memory_id for r in rank(cands, DEFAULT, cutoff=0.0, limit=2)] == ["a", "b"]
