"""The traced service (telemetry on) takes every argument the plain service takes: tags,
metadata, time windows and as-of pass through it to the operations."""

from __future__ import annotations

import inspect

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.telemetry.traced_service import TracedMemoryService
from tinycontext.testing import InMemoryStore


def _traced() -> TracedMemoryService:
    return TracedMemoryService(store=InMemoryStore(), embedder=HashEmbedder(),
                               tokenizer=WordTokenizer(), clock=FixedClock(),
                               config=TinyContextConfig(), background=False)


def test_the_traced_operations_pass_tags_filters_and_as_of_through() -> None:
    service = _traced()
    try:
        saved = service.save([{"content": "deploys run on fridays", "kind": "episodic",
                               "tags": ["ops"]}]).to_dict()
        memory_id = saved["saved"][0]["id"]
        recalled = service.recall("deploys", tags=["ops"], since="2000-01-01").to_dict()
        assert [m["id"] for m in recalled["memories"]] == [memory_id]
        assert service.recall("deploys", tags=["other"]).to_dict()["memories"] == []
        listed = service.list_page(tags=["ops"]).to_dict()
        assert [m["id"] for m in listed["memories"]] == [memory_id]
        updated = service.update(memory_id, None, tags=["ops", "weekly"]).to_dict()
        assert service.detail(updated["id"]).to_dict()["tags"] == ["ops", "weekly"]
    finally:
        service.close()


def test_every_operation_of_the_service_is_traced_with_its_whole_signature() -> None:
    for name in ("save", "recall", "list_page", "detail", "update", "delete"):
        traced = inspect.signature(getattr(TracedMemoryService, name))
        plain = inspect.signature(getattr(MemoryService, name))
        kinds = {p.kind for p in traced.parameters.values()}
        assert traced == plain or inspect.Parameter.VAR_KEYWORD in kinds, name
