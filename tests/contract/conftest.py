"""Fixtures for the port contract suites: every suite runs against the fake and the adapter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes import InMemoryStore
from tinycontext.ports.store import Store


@pytest.fixture(params=["memory", "sqlite", "sqlite-encrypted", "postgres"])
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

    key = None
    if request.param == "sqlite-encrypted":
        from tests.encryption_support import require_sqlcipher_process

        require_sqlcipher_process()
        key = bytes(range(32))
    real = SqliteStore(tmp_path / "c.db", key=key)
    yield real
    real.close()


@pytest.fixture
def store_kind(store) -> str:
    if isinstance(store, InMemoryStore):
        return "memory"
    return "postgres" if type(store).__name__ == "PostgresStore" else "sqlite"


