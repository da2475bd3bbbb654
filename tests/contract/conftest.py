"""Fixtures for the port contract suites: every suite runs against the fake and the adapter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes import InMemoryStore
from tinycontext.ports.store import Store


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request, tmp_path) -> Iterator[Store]:
    if request.param == "memory":
        yield InMemoryStore()
        return
    if request.param == "postgres":
        from tests.pg_fixture import fresh_store

        pg = fresh_store()
        yield pg
        pg.close()
        return
    from tinycontext.adapters.sqlite.store import SqliteStore

    real = SqliteStore(tmp_path / "c.db")
    yield real
    real.close()


@pytest.fixture
def store_kind(store) -> str:
    if isinstance(store, InMemoryStore):
        return "memory"
    return "postgres" if type(store).__name__ == "PostgresStore" else "sqlite"


