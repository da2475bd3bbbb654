"""Fixtures for the port contract suites: every suite runs against the fake and the adapter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes import InMemoryStore
from tinycontext.ports.store import Store


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path) -> Iterator[Store]:
    if request.param == "memory":
        yield InMemoryStore()
        return
    from tinycontext.adapters.sqlite_store import SqliteStore

    real = SqliteStore(tmp_path / "c.db")
    yield real
    real.close()


@pytest.fixture
def store_kind(store) -> str:
    return "memory" if isinstance(store, InMemoryStore) else "sqlite"


