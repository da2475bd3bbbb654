"""tinycontext.testing.retrievers: each of recall's retrievers asked alone, with recall's own
scope and pool (benchmarks use it for their ablations instead of the engine's internals)."""

from __future__ import annotations

import pytest

from tinycontext import TinyContextConfig, TinyContextError, build_service
from tinycontext.app.service import MemoryService
from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer
from tinycontext.testing.retrievers import pool_size, recall_scope, retrievers_alone


def _service() -> MemoryService:
    service = build_service(TinyContextConfig(recall_top_k=5), store=InMemoryStore(),
                            embedder=HashEmbedder(), tokenizer=WordTokenizer(),
                            clock=FixedClock(), background=False)
    service.save([{"content": "Staging deploys run at noon."},
                  {"content": "The cafeteria serves soup on Fridays.", "tags": ["food"]}],
                 session_id="ops")
    service.save([{"content": "Staging deploys of the billing app wait for review."}],
                 session_id="billing")
    return service


def _contents(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [hit.memory.content for hit in hits]


def test_each_retriever_alone_in_its_own_order() -> None:
    service = _service()
    found = retrievers_alone(service, "staging deploys")
    assert set(_contents(found.keyword)) == {
        "Staging deploys run at noon.", "Staging deploys of the billing app wait for review."}
    assert len(found.dense) == 3  # every memory with a vector is a dense candidate
    assert [h.score for h in found.dense] == sorted((h.score for h in found.dense), reverse=True)


def test_the_scope_is_recalls_session_and_filters() -> None:
    service = _service()
    ops = retrievers_alone(service, "staging deploys", recall_scope("ops"))
    assert _contents(ops.keyword) == ["Staging deploys run at noon."]
    food = retrievers_alone(service, "soup", recall_scope(tags=["food"]))
    assert _contents(food.dense) == ["The cafeteria serves soup on Fridays."]
    with pytest.raises(TinyContextError) as caught:
        recall_scope(since="2026-02-01", until="2026-01-01")
    assert caught.value.code == "invalid_request"


def test_the_pool_is_recalls() -> None:
    service = _service()
    assert pool_size(service) == 100  # max(100, 20 x top_k 5), docs/reference/ranking.md
    assert pool_size(service, 10) == 200
    assert pool_size(service, 500) == 1000
