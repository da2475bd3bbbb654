"""Feedback in hand (recall_feedback_inhand_weight) through the service, over the fake,
SQLite and PostgreSQL stores alike: a store that keeps each memory's stemmed words hands
them over (Retrieval.indexed_words), one that does not has them stemmed by recall; the
ranking is the same either way."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.errands import FILLER
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig

STUDIO = "Orla rented a pottery studio in Kilkenny beside the Marble City bakery."
BAKERY = "Prices went up for every shop beside the Marble City bakery in Kilkenny."
NEIGHBOURS = [
    "Pottery glazes need a second firing in the kiln.",
    "A studio flat downtown costs more than a house in the suburbs.",
    "The pottery fair is on the first weekend of June.",
    "The recording studio books sessions by the hour.",
    "Pottery wheels are cheaper second hand.",
]
# Enough other memories that the best result's own words are rare (IDF above 2.5).


def top3(store, weight: float) -> list[str]:
    clock = FixedClock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    # The hash embedder's cosines are a word count: the dense lead and late interaction
    # would only add noise to the one lever under test.
    config = TinyContextConfig(recall_feedback_inhand_weight=weight, save_context_minutes=0,
                                recall_dense_lead_weight=0.0, recall_late_interaction=False)
    embedder = HashEmbedder(512, "hash-512")  # fewer hash collisions between words
    service = MemoryService(store, embedder, WordTokenizer(), clock, config=config,
                            background=False)
    try:
        service.save([{"content": t} for t in [*FILLER, *NEIGHBOURS, STUDIO, BAKERY]], "s")
        found = service.recall("Where did Orla rent her pottery studio?", "s", 10**6, 3)
        return [m["content"] for m in found.to_dict()["memories"]]
    finally:
        service.reindexer.stop()


@pytest.mark.parametrize("weight", [0.0, 1.0])
def test_feedback_in_hand_lifts_the_best_results_topic_only_when_on(store, weight):
    """The bakery memory shares no word with the question, only rare words with the best
    result; re-weighed by them it rises into the top 3, which it never reaches off."""
    found = top3(store, weight)
    assert found[0] == STUDIO
    assert (BAKERY in found) is (weight > 0)
