"""The index upkeep's check for memories without a vector reads index ranges, not the
whole memories table (at 1,000,000 memories the scan took 1.9 s every few seconds of writes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tinycontext.adapters.sqlite import ivf as sqlite_ivf
from tinycontext.adapters.sqlite import mirror_cells
from tinycontext.adapters.sqlite.store import SqliteStore

from .test_vector_mirror import MODEL, _add, _memory, _vectors


def _plans(store: SqliteStore, call: Any) -> list[str]:
    """Query-plan lines of every statement `call` runs."""
    statements: list[str] = []
    with store._pool.lease() as conn:  # the calls below lease this same connection
        conn.set_trace_callback(statements.append)
        try:
            call()
        finally:
            conn.set_trace_callback(None)
        return [r[3] for sql in statements if sql.lstrip().upper().startswith("SELECT")
                for r in conn.execute("EXPLAIN QUERY PLAN " + sql)]


def test_nothing_pending_is_answered_from_the_index(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "u.db")
    _add(store, _vectors(50), 0)
    plans = _plans(store, lambda: store.pending_embeddings(MODEL, 32))
    assert plans and not any(p.startswith("SCAN") for p in plans)  # only index searches
    assert store.pending_embeddings(MODEL, 32) == []
    store.close()


def test_pending_rows_still_come_in_seq_order(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "u.db")
    _add(store, _vectors(30), 0)
    conn = store._pool._open()
    conn.execute("UPDATE memories SET embedding_model = 'older' WHERE seq IN (4, 20)")
    conn.execute("UPDATE memories SET embedding_model = NULL, embedding = NULL WHERE seq = 9")
    conn.execute("UPDATE memories SET embedding_model = 'zzz-newer' WHERE seq = 2")
    found = [m.id for m in store.pending_embeddings(MODEL, 3)]
    assert found == [_memory(1).id, _memory(3).id, _memory(8).id]  # seqs 2, 4, 9
    assert len(store.pending_embeddings(MODEL, 10)) == 4
    store.close()


def test_idle_upkeep_of_a_clustered_store_reuses_its_count_and_does_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The vector count is cached for count_ttl; held for the whole test so that "no count"
    # below is the idle step's doing, not the timing of a loaded machine.
    monkeypatch.setattr(sqlite_ivf, "COUNT_TTL_SECONDS", 3600.0)
    monkeypatch.setattr(mirror_cells, "CELLS_FROM_BYTES", 0)  # clustered at any size
    monkeypatch.setattr(sqlite_ivf, "TRAIN_AT", 100)
    monkeypatch.setattr(sqlite_ivf, "MIN_CELLS", 8)
    store = SqliteStore(tmp_path / "u.db")
    _add(store, _vectors(300), 0)
    while store.maintain_index(MODEL):
        pass
    statements: list[str] = []
    with store._pool.lease() as conn:
        conn.set_trace_callback(statements.append)
        try:
            assert store.maintain_index(MODEL) is False  # nothing to do
        finally:
            conn.set_trace_callback(None)
    assert statements and not any("count(" in s or s.startswith(("DELETE", "BEGIN"))
                                  for s in statements)
    store.close()
