"""The composition root owns the long-lived parts: it closes the stores it opened (after the
service's background work stops), and one container's loaded model and vocabulary serve every
service of the process (the Python API builds one container, not one per config)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.memory import MemoryInput
from tinycontext.entry import api
from tinycontext.entry.container import (
    ContainerServices,
    build_service,
    create_container,
    process_parts,
)
from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer


class CountedStore(InMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.closes = 0

    def close(self) -> None:
        self.closes += 1
        super().close()


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """What was stopped and closed, in order, for this test's services and SQLite stores
    (another test's may close meanwhile, on a background thread)."""
    seen: list[str] = []
    stop, close = MemoryService.stop, SqliteStore.close

    def ours(path: str | Path) -> bool:
        return Path(path).parent == tmp_path

    def stopped(self: MemoryService) -> None:
        if ours(self.config.memory_db_path):
            seen.append("service stopped")
        stop(self)

    def closed(self: SqliteStore) -> None:
        if ours(self.path):
            seen.append(f"store closed {self.path.name}")
        close(self)

    monkeypatch.setattr(MemoryService, "stop", stopped)
    monkeypatch.setattr(SqliteStore, "close", closed)
    return seen


def _config(tmp_path: Path, name: str = "memories.db") -> TinyContextConfig:
    return TinyContextConfig(memory_db_path=str(tmp_path / name))


def test_closing_the_container_closes_its_store_after_the_service_stops(
    tmp_path: Path, events: list[str]
) -> None:
    container = create_container(_config(tmp_path))
    container.embedder.override(HashEmbedder())
    container.tokenizer.override(WordTokenizer())
    service = container.service()
    service.save([MemoryInput(content="The deploy runs on Fridays.")])
    assert events == []
    container.shutdown_resources()
    assert events == ["service stopped", "store closed memories.db"]


def test_a_service_does_not_close_a_store_it_was_handed() -> None:
    store = CountedStore()
    service = MemoryService(store, HashEmbedder(), WordTokenizer(), FixedClock(),
                            background=False)
    service.close()
    assert store.closes == 0  # the caller opened it: the caller (or its container) closes it
    store.close()


def test_a_built_service_closes_its_container_and_the_store_given_to_it() -> None:
    store = CountedStore()
    service = build_service(TinyContextConfig(), store=store, embedder=HashEmbedder(),
                            tokenizer=WordTokenizer(), clock=FixedClock(), background=False)
    service.close()
    service.close()  # a second close releases nothing twice
    assert store.closes == 1


def test_a_server_process_closes_the_store_it_served(tmp_path: Path, events: list[str]) -> None:
    parts = process_parts(_config(tmp_path), embedder=HashEmbedder(), tokenizer=WordTokenizer())
    services = parts.single()
    assert isinstance(services, ContainerServices)
    assert services.current() is services.current()
    services.close()
    assert events == ["service stopped", "store closed memories.db"]


def test_a_hosted_users_service_closes_its_own_store(tmp_path: Path,
                                                    events: list[str]) -> None:
    parts = process_parts(_config(tmp_path), embedder=HashEmbedder(), tokenizer=WordTokenizer())
    config = _config(tmp_path, "tenant.db")
    first = parts.tenant_service(SqliteStore(tmp_path / "tenant.db"), config)
    second = parts.tenant_service(SqliteStore(tmp_path / "other.db"), config)
    assert first.embedder is second.embedder  # one model for every user
    first.close()
    assert events == ["service stopped", "store closed tenant.db"]
    second.close()


@pytest.fixture
def api_services() -> Iterator[None]:
    api.close_all()
    yield
    api.close_all()


def test_the_python_api_shares_one_model_and_vocabulary_across_configs(
    tmp_path: Path, api_services: None, events: list[str]
) -> None:
    one = api.service_for(_config(tmp_path, "one.db"))
    two = api.service_for(_config(tmp_path, "two.db"))
    assert one is not two and one.store is not two.store
    assert one.embedder is two.embedder
    assert one.tokenizer is two.tokenizer
    api.save_memories([{"content": "Alice prefers tea."}], config=_config(tmp_path, "one.db"))
    api.close_all()
    assert sorted(e for e in events if e.startswith("store")) == [
        "store closed one.db", "store closed two.db"]
    assert api.service_for(_config(tmp_path, "one.db")).embedder is two.embedder
