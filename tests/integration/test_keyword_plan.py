"""The whole-store keyword query's plan: FTS5's ranked hits drive, and each is looked up in
`memories` by its rowid. A planner that walks every live memory of the kind and probes the
hits for each (SQLite 3.53, the SQLCipher build's, chose that) costs a read of the whole
kind per recall, which grows with the store.

Runs in both passes: with the process's default SQLite and, in .ci/run's encrypted pass,
with SQLCipher's on an encrypted store."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.contract.store_support import mem, new
from tinycontext.domain.memory import EPISODIC
from tinycontext.domain.text import recall_terms
from tinycontext.ports.store import Scope


def _plans(store: Any, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The query plan of every keyword statement a whole-store search runs."""
    from tinycontext.adapters.sqlite.connection import ConnectionPool

    plans: list[list[str]] = []
    real = ConnectionPool.read

    def read(self: ConnectionPool, sql: str, params: Any = ()) -> list[Any]:
        if "memory_fts" in sql and "JOIN memories" in sql:
            with self.lease() as conn:
                plans.append([r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params)])
        return real(self, sql, params)

    monkeypatch.setattr(ConnectionPool, "read", read)
    found = store.keyword_search(recall_terms("tea Berlin"), Scope(EPISODIC, None), 5)
    assert found and all("tea in Berlin" in h.memory.content for h in found)
    return plans


@pytest.mark.parametrize("encrypted", [False, True])
def test_hits_drive_the_lookup_of_memories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encrypted: bool
) -> None:
    from tinycontext.adapters.sqlite.store import SqliteStore

    key = None
    if encrypted:
        from tests.encryption_support import require_sqlcipher_process

        require_sqlcipher_process()
        key = bytes(range(32))
    store = SqliteStore(tmp_path / "m.db", key=key)
    try:
        words = ("coffee in Paris", "rain in Oslo", "tea in Berlin with Ada", "notes on Rust")
        store.add([new(mem(i, f"{words[i % 4]} {i}" if i else words[2]))
                   for i in range(40)])
        plans = _plans(store, monkeypatch)
    finally:
        store.close()
    assert plans, "the whole-store keyword query did not run"
    for plan in plans:
        walks = [step for step in plan if re.match(r"(SEARCH|SCAN) m\b(?! USING INTEGER)", step)]
        assert not walks, plan
        assert any("SEARCH m USING INTEGER PRIMARY KEY" in step for step in plan), plan
