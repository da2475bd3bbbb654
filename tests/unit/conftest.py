"""Service fixtures: a MemoryService over the fakes, built through the composition root."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.fakes import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer
from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service
from tinycontext.ports.embedder import Embedder


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore()


@pytest.fixture
def make(tmp_path, store, clock) -> Callable[..., MemoryService]:
    """make(embedder=None, new_id=None, **config) -> a service over the shared store and clock."""

    def build(embedder: Embedder | None = None, new_id: Callable[[], str] | None = None,
              **config: Any) -> MemoryService:
        cfg = TinyContextConfig(memory_db_path=str(tmp_path / "x.db"), **config)
        if new_id is not None:
            return MemoryService(store, embedder or HashEmbedder(), WordTokenizer(), clock, cfg,
                                 new_id=new_id, background=False)
        return build_service(cfg, store=store, embedder=embedder or HashEmbedder(),
                             tokenizer=WordTokenizer(), clock=clock, background=False)

    return build


@pytest.fixture
def svc(make) -> MemoryService:
    return make()
