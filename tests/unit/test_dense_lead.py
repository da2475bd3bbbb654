"""The dense-lead bonus of score fusion (domain/recall.py): the candidate the model ranks
first keeps DENSE_LEAD_WEIGHT x its cosine margin over the runner-up."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tinycontext.domain.recall import (
    DENSE_LEAD_WEIGHT,
    SCORE,
    Candidate,
    FusionWeights,
    dense_lead,
    rank,
    score_fusion,
)

TS = "2026-07-31T10:15:00Z"
W = FusionWeights(method=SCORE, keyword=0.4)


def cand(mid: str, bm25: float | None, dense: float | None) -> Candidate:
    return Candidate(mid, TS, bm25_rank=None if bm25 is None else 1, bm25=bm25,
                     dense_rank=None if dense is None else 1, dense=dense)


def test_the_lead_is_the_best_cosine_minus_the_second():
    pool = [cand("a", 3.0, 0.5), cand("b", None, 0.7), cand("c", 1.0, 0.6), cand("d", 2.0, None)]
    position, margin = dense_lead(pool)  # type: ignore[misc]
    assert position == 1
    assert margin == pytest.approx(0.1, abs=1e-12)


def test_no_lead_for_a_tie_a_single_cosine_or_nothing_above_zero():
    assert dense_lead([cand("a", None, 0.5), cand("b", None, 0.5)]) is None
    assert dense_lead([cand("a", None, 0.5), cand("b", 4.0, None)]) is None
    assert dense_lead([cand("a", None, -0.1), cand("b", None, -0.3)]) is None
    assert dense_lead([]) is None
    # A negative runner-up counts as zero: the lead is the winner's own closeness.
    assert dense_lead([cand("a", None, 0.2), cand("b", None, -0.3)]) == (0, pytest.approx(0.2))


def test_fused_values_with_the_lead_exactly():
    # raw = 0.4 * bm25 / 8 + 0.6 * dense; the dense winner b adds 2 x (0.7 - 0.6).
    pool = [cand("a", 8.0, 0.6), cand("b", 4.0, 0.7), cand("c", None, 0.2)]
    raw = [0.4 + 0.6 * 0.6, 0.2 + 0.6 * 0.7 + DENSE_LEAD_WEIGHT * 0.1, 0.6 * 0.2]
    assert DENSE_LEAD_WEIGHT == 2.0
    assert score_fusion(pool, W) == pytest.approx([v / max(raw) for v in raw], rel=1e-12)


def test_a_paraphrase_the_model_is_sure_of_beats_shared_common_words() -> None:
    # "fact" shares no word with the question but the model puts it well ahead; "filler"
    # shares one word and is a little less close. Without the lead the keyword share wins.
    pool = [cand("filler", 3.0, 0.40), cand("fact", None, 0.50), cand("other", 1.0, 0.38)]
    assert [r.memory_id for r in rank(pool, W, keyword_ideal=10.0)][0] == "fact"
    off = replace(W, dense_lead=0.0)  # recall_dense_lead_weight = 0
    assert [r.memory_id for r in rank(pool, off, keyword_ideal=10.0)][0] == "filler"


def test_the_lead_does_not_reorder_a_crowd_of_equals():
    # Two equally close memories: the keyword match decides, as before.
    pool = [cand("kw", 5.0, 0.45), cand("dn", None, 0.45)]
    assert [r.memory_id for r in rank(pool, W)] == ["kw", "dn"]


def test_rank_fusion_ignores_the_lead():
    rrf = FusionWeights()
    pool = [Candidate("a", TS, bm25_rank=1, bm25=8.0, dense=0.6),
            Candidate("b", TS, dense_rank=1, dense=0.9)]
    a, b = (r.rrf for r in sorted(rank(pool, rrf), key=lambda r: r.memory_id))
    assert a == b  # one first place each, whatever the cosine margin
