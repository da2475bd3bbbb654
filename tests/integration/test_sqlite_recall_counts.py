"""Recall counts written in batches (encrypted stores do; here on plain files, same code):
nothing lost, nothing shown late in this process, no commit per recall, failures reported."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.contract.store_support import day, listing, mem, mid, new
from tinycontext.adapters.sqlite import connection as sqlite_connection
from tinycontext.adapters.sqlite import counts as sqlite_counts
from tinycontext.adapters.sqlite.driver import sqlite_module
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.domain.errors import (
    MemoryAlreadySupersededError,
    StoreReadOnlyError,
    StoreUnavailableError,
)


def raw(path: Path, memory_id: str) -> tuple[int, str | None]:
    """The counts as written in the file (another connection: another process's view)."""
    conn = sqlite_module().connect(str(path))
    try:
        row = conn.execute("SELECT recall_count, last_recalled_at FROM memories WHERE id = ?",
                           (memory_id,)).fetchone()
    finally:
        conn.close()
    return row[0], row[1]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SqliteStore]:
    monkeypatch.setattr(sqlite_counts, "FLUSH_SECONDS", 30.0)  # only what a test triggers
    shelf = SqliteStore(tmp_path / "m.db", batch_counts=True)
    shelf.add([new(mem(1, "tea in Berlin")), new(mem(2, "coffee in Paris"))])
    yield shelf
    shelf.close()


def test_counts_are_shown_at_once_and_written_with_the_next_write(
    store: SqliteStore, tmp_path: Path
) -> None:
    version = sqlite_module().connect(str(tmp_path / "m.db"))
    before = version.execute("PRAGMA data_version").fetchone()[0]
    store.mark_recalled([mid(1)], day(9))
    store.mark_recalled([mid(1), mid(2)], day(10))
    # No commit yet: other connections keep their page caches.
    assert version.execute("PRAGMA data_version").fetchone()[0] == before
    assert raw(tmp_path / "m.db", mid(1)) == (0, None)
    [one] = store.find(mid(1), False)
    assert (one.recall_count, one.last_recalled_at) == (2, day(10))
    page = store.browse(listing())
    assert {s.memory.id: s.memory.recall_count for s in page.memories} == {mid(1): 2, mid(2): 1}
    [export] = [m for _, m, _ in store.export_page(0, 10, None) if m.id == mid(2)]
    assert (export.recall_count, export.last_recalled_at) == (1, day(10))
    store.add([new(mem(3, "a walk"))])  # the save's transaction carries them
    assert raw(tmp_path / "m.db", mid(1)) == (2, day(10))
    assert raw(tmp_path / "m.db", mid(2)) == (1, day(10))
    [one] = store.find(mid(1), False)
    assert one.recall_count == 2  # written once, not added again
    version.close()


def test_counts_are_written_within_the_flush_time(
    store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_counts, "FLUSH_SECONDS", 0.05)
    store.mark_recalled([mid(2)], day(11))
    deadline = time.monotonic() + 5
    while raw(tmp_path / "m.db", mid(2)) != (1, day(11)):
        assert time.monotonic() < deadline, "the counts were never written"
        time.sleep(0.02)


def test_orders_by_recalls_see_the_pending_counts(store: SqliteStore) -> None:
    store.mark_recalled([mid(1)], day(9))
    ranked = store.browse(replace(listing(), sort="recalled"))
    assert [s.memory.id for s in ranked.memories] == [mid(1), mid(2)]
    recalled = store.browse(replace(listing(), recalled=True))
    assert [s.memory.id for s in recalled.memories] == [mid(1)]
    stale = store.browse(listing(sort="stale"))
    assert [s.memory.id for s in stale.memories] == [mid(2), mid(1)]
    assert stale.memories[1].memory.recall_count == 1


def test_a_rolled_back_write_keeps_the_counts(store: SqliteStore, tmp_path: Path) -> None:
    store.supersede(mid(1), new(mem(4, "tea in Hamburg", supersedes=mid(1))), day(12))
    store.mark_recalled([mid(2)], day(12))
    with pytest.raises(MemoryAlreadySupersededError):
        store.supersede(mid(1), new(mem(5, "tea in Bonn", supersedes=mid(1))), day(13))
    assert raw(tmp_path / "m.db", mid(2)) == (0, None)
    assert store.find(mid(2), False)[0].recall_count == 1
    store.close()
    assert raw(tmp_path / "m.db", mid(2)) == (1, day(12))  # close writes what is pending


def test_a_locked_store_reports_on_the_next_recall_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_counts, "FLUSH_SECONDS", 30.0)
    monkeypatch.setattr(sqlite_connection, "BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr(sqlite_connection, "LOCK_RETRIES", 2)
    path = tmp_path / "locked.db"
    store = SqliteStore(path, batch_counts=True)
    store.add([new(mem(1, "tea in Berlin")), new(mem(2, "coffee in Paris"))])
    store.mark_recalled([mid(1)], day(9))
    other = sqlite_module().connect(str(path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        store._counts._flush_later()  # type: ignore[union-attr]  # the timer's write fails
        with pytest.raises(StoreUnavailableError):
            store.mark_recalled([mid(1)], day(10))  # retried at once, and reported
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.find(mid(1), False)[0].recall_count == 2
    store.mark_recalled([mid(2)], day(11))  # the fault is over: counted without a notice
    store.add([new(mem(3, "a walk"))])
    assert raw(path, mid(1)) == (2, day(10))
    assert raw(path, mid(2)) == (1, day(11))
    store.close()


def test_a_read_only_store_refuses_counts_at_once(store: SqliteStore) -> None:
    # What opening a file this process cannot write finds out (tests/integration/
    # test_store_read_only.py makes real read-only stores, also as root).
    store._pool.read_only = True
    with pytest.raises(StoreReadOnlyError):
        store.mark_recalled([mid(1)], day(9))
    assert store.find(mid(1), False)[0].recall_count == 0
    assert not store._counts.pending()  # type: ignore[union-attr]


CHILD = """
import sys
from tinycontext.adapters.sqlite.store import SqliteStore
store = SqliteStore(sys.argv[1], batch_counts=True)
store.mark_recalled([sys.argv[2]], "2026-07-09T00:00:00Z")
"""  # exits without close(): the exit hook writes the counts


def test_a_process_that_exits_without_closing_writes_its_counts(
    store: SqliteStore, tmp_path: Path
) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "m.db"), mid(2)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert raw(tmp_path / "m.db", mid(2)) == (1, day(9))
