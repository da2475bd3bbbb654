"""Recall's two keyword reads of the same words (keyword_search, keyword_ideal) count their
document frequencies once; the store's own writes carry the counts along, a commit by another
connection has them counted again."""

from __future__ import annotations

from pathlib import Path

from tests.contract.store_support import mem, mid, new
from tinycontext.adapters.sqlite.search import fts5_idf
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.ports.store import Scope

WORDS = [["tea"], ["berlin"]]


def counting(store: SqliteStore) -> list[str]:
    """Counts the fts5vocab reads the store's keyword side makes."""
    pool = store._search._pool
    real = pool.read
    seen: list[str] = []

    def read(sql: str, params: object = ()) -> list[object]:
        if "memory_vocab" in sql:
            seen.append(sql)
        return real(sql, params)

    pool.read = read  # type: ignore[method-assign]
    return seen


def test_recall_counts_the_words_once_and_carries_them_through_own_writes(
        tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    store.add([new(mem(1, "tea in Berlin")), new(mem(2, "coffee in Paris")),
               new(mem(3, "green tea")), new(mem(4, "a walk"))])
    seen = counting(store)
    hits = store.keyword_search(WORDS, Scope("episodic"), 10)
    ideal = store.keyword_ideal(WORDS)
    assert {h.memory.content for h in hits} == {"tea in Berlin", "green tea"}
    assert len(seen) == 1  # the second read was answered from the first
    assert ideal == fts5_idf(2, 4) + fts5_idf(1, 4)
    store.add([new(mem(5, "Berlin again")), new(mem(6, "Berlin once more"))])
    assert store.keyword_ideal(WORDS) == fts5_idf(2, 6) + fts5_idf(3, 6)
    store.delete(mid(1), None, None)  # "tea in Berlin"
    assert store.keyword_ideal(WORDS) == fts5_idf(1, 5) + fts5_idf(2, 5)
    assert len(seen) == 1  # both writes' words were added to the kept counts
    store.close()


def test_a_commit_by_another_connection_is_seen(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    store.add([new(mem(1, "tea in Berlin")), new(mem(2, "coffee"))])
    seen = counting(store)
    assert store.keyword_ideal(WORDS) == fts5_idf(1, 2) + fts5_idf(1, 2)
    other = SqliteStore(tmp_path / "m.db")  # another process, as far as SQLite can tell
    other.add([new(mem(3, "tea")), new(mem(4, "tea and Berlin"))])
    other.close()
    assert store.keyword_ideal(WORDS) == fts5_idf(3, 4) + fts5_idf(2, 4)
    assert len(seen) == 2
    store.close()
