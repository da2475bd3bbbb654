"""Integration fixtures: real SQLite files; fakes where the model is not the point."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service
from tinycontext.ports.clock import Clock


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "memories.db"


@pytest.fixture
def sqlite_service(db_path: Path) -> Iterator[MemoryService]:
    """Real SQLite store, fake embedder and tokenizer: fast, and the store is what is tested."""
    service = build_service(
        TinyContextConfig(memory_db_path=str(db_path)),
        store=SqliteStore(db_path), embedder=HashEmbedder(), tokenizer=WordTokenizer(),
        clock=FixedClock(), background=False,
    )
    yield service
    service.close()


@pytest.fixture(scope="session")
def real_embedder():  # type: ignore[no-untyped-def]
    """The default ONNX model, loaded once for the whole test session."""
    from tinycontext.entry.container import Models

    config = TinyContextConfig(embedding_model="balanced", models_dir="/nonexistent-models-dir",
                               embedding_batch_size=32)
    return Models().embedder(config)


@pytest.fixture
def real_service(db_path: Path, real_embedder) -> Iterator[MemoryService]:  # type: ignore[no-untyped-def]
    service = build_service(
        TinyContextConfig(memory_db_path=str(db_path)),
        embedder=real_embedder, background=False,
    )
    yield service
    service.close()


@pytest.fixture
def make_real_service(
    tmp_path: Path, real_embedder: Any
) -> Iterator[Callable[..., MemoryService]]:
    """Services on the real model, each on a store of its own, built from config settings
    (and a `clock` to save at chosen times); all are closed when the test ends."""
    made: list[MemoryService] = []

    def build(clock: Clock | None = None, **config: Any) -> MemoryService:
        path = tmp_path / f"store{len(made)}" / "memories.db"
        service = build_service(TinyContextConfig(memory_db_path=str(path), **config),
                                embedder=real_embedder, clock=clock, background=False)
        made.append(service)
        return service

    yield build
    for service in made:
        service.close()
