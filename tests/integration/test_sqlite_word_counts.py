"""The SQLite keyword side keeps the document frequencies it has read, across its own writes:
the counts it answers are always the store's current ones (after its own writes, another
connection's, deletions), and words asked together or one by one count the same."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.contract.store_support import mem, mid, new
from tinycontext.adapters.sqlite import word_counts
from tinycontext.adapters.sqlite.store import SqliteStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    shelf = SqliteStore(tmp_path / "m.db")
    shelf.add([new(mem(i, f"kettle walk number{i}")) for i in range(1, 7)])
    shelf.add([new(mem(7, "harbour walk"))])
    shelf.add([new(mem(i, f"quiet evening{i}")) for i in range(20, 28)])
    yield shelf
    shelf.close()


def idf(store: SqliteStore, *words: str) -> dict[str, float]:
    return store.keyword_rarity(list(words))


def test_counts_asked_apart_equal_counts_asked_together(store: SqliteStore) -> None:
    together = idf(store, "kettle", "harbour", "walk")
    assert idf(store, "harbour") == {"harbour": together["harbour"]}
    assert idf(store, "walk", "kettle") == {"walk": together["walk"], "kettle": together["kettle"]}
    assert together["harbour"] > together["kettle"] > together["walk"]


def test_own_writes_and_deletions_are_counted(store: SqliteStore) -> None:
    before = idf(store, "harbour")["harbour"]
    store.add([new(mem(8, "harbour lights")), new(mem(9, "harbour fog"))])
    after = idf(store, "harbour")["harbour"]
    assert after < before  # three memories hold it now, not one
    store.delete(mid(8), None, None)
    store.delete(mid(9), None, None)
    assert idf(store, "harbour")["harbour"] == pytest.approx(before, rel=0.2)
    assert idf(store, "harbour", "lights")["harbour"] > after


def test_another_connections_write_is_counted(store: SqliteStore, tmp_path: Path) -> None:
    before = idf(store, "harbour", "kettle")
    other = SqliteStore(tmp_path / "m.db")
    try:
        other.add([new(mem(10, "harbour harbour")), new(mem(11, "harbour again"))])
    finally:
        other.close()
    after = idf(store, "harbour", "kettle")
    assert after["harbour"] < before["harbour"]


def test_the_kept_counts_are_bounded(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(word_counts, "COUNTED_WORDS", 2)
    first = idf(store, "kettle", "walk")
    assert idf(store, "harbour") and idf(store, "kettle", "walk") == first
    assert set(idf(store, "kettle", "walk", "harbour")) == {"kettle", "walk", "harbour"}


def test_counts_kept_by_one_thread_stay_current_for_another(store: SqliteStore) -> None:
    """Recall asks from more than one thread (the pool hands each whichever connection is
    idle): a write made from one thread is counted by every thread afterwards, whichever
    connection it is handed."""
    def from_threads(*words: str) -> list[dict[str, float]]:
        with ThreadPoolExecutor(max_workers=3) as pool:
            return list(pool.map(lambda _: idf(store, *words), range(6)))

    before = from_threads("harbour", "kettle")
    assert all(seen == before[0] for seen in before)
    with ThreadPoolExecutor(max_workers=1) as writer:
        writer.submit(store.add, [new(mem(12, "harbour quay")), new(mem(13, "harbour wall"))]
                      ).result()
    after = from_threads("harbour", "kettle")
    assert all(seen == after[0] for seen in after)
    assert after[0]["harbour"] < before[0]["harbour"]
    assert idf(store, "harbour", "kettle") == after[0]
