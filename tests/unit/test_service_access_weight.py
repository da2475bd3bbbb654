"""recall_access_weight > 0 under rank fusion: the access list ranks candidates by recall_count."""

from __future__ import annotations

import pytest

from tests.unit.support import TableEmbedder, save

QUERY = "alpha beta!"
SHORT, LONG = "alpha beta", "alpha beta gamma delta"
# SHORT wins BM25 (shorter document), LONG wins dense (cosine 0.9 vs 0.8): ranks (1,2) vs (2,1),
# so without access their rrf ties at 123/124 and the higher cosine (LONG) goes first.
SIMS = {QUERY: 1.0, LONG: 0.9, SHORT: 0.8}
LOW_ID = "00000000-0000-4000-8000-000000000001"
HIGH_ID = "ffffffff-0000-4000-8000-000000000002"


def build(make, access: float, first_id: str, second_id: str):
    ids = iter([first_id, second_id])
    svc = make(embedder=TableEmbedder(SIMS), new_id=lambda: next(ids),
               recall_access_weight=access, recall_fusion="rrf",
               save_context_minutes=0)
    save(svc, SHORT, LONG)  # SHORT first, so LONG adds tokens and is kept (similar_to)
    return svc


def order(svc) -> list[str]:
    return [m["content"] for m in svc.recall(QUERY).to_dict()["memories"]]


def test_tie_without_access_goes_to_the_closer_memory(make):
    svc = build(make, 0.0, LOW_ID, HIGH_ID)
    result = svc.recall(QUERY).to_dict()["memories"]
    assert [m["content"] for m in result] == [LONG, SHORT]
    assert [m["scores"]["fused"] for m in result] == [round(123 / 124, 6)] * 2


def test_more_recalled_memory_gets_the_access_boost(make):
    svc = build(make, 0.2, HIGH_ID, LOW_ID)  # SHORT gets the higher id: no help from the id
    assert svc.detail(HIGH_ID).to_dict()["content"] == SHORT
    svc.store.mark_recalled([HIGH_ID], "2026-07-31T09:00:00Z")
    result = svc.recall(QUERY).to_dict()["memories"]
    # SHORT: bm25 1, dense 2, access 1 -> 61/1.2*(0.5/61+0.5/62+0.2/61) = 0.99328
    assert [m["content"] for m in result] == [SHORT, LONG]
    expected = 61 / 1.2 * (0.5 / 62 + 0.5 / 61 + 0.2 / 61)
    assert result[0]["scores"]["fused"] == pytest.approx(expected, abs=1e-6)


def test_equal_recall_counts_share_the_access_rank(make):
    # No memory was ever recalled, so the access list says nothing: the order must not change.
    svc = build(make, 0.2, LOW_ID, HIGH_ID)  # SHORT gets the lower id
    assert order(svc) == [LONG, SHORT]
