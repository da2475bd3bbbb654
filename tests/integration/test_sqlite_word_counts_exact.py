"""The document frequencies the SQLite store keeps across its writes are always fts5vocab's:
after a random mix of saves, updates, deletes (also of memories others took as context),
imports and another process's writes, every count equals a fresh count, and keyword search,
its ideal score and the words' rarity answer what a store that kept nothing answers."""

from __future__ import annotations

import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from tests.contract.store_support import mem, mid, new
from tinycontext.adapters.sqlite import word_counts
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.adapters.sqlite.word_counts import WordCounts
from tinycontext.domain.text import fold
from tinycontext.ports.store import NewMemory, Scope

REPO = Path(__file__).resolve().parents[2]
# Words of several lengths and commonness, some whose folding differs between Python and
# FTS5's unicode61 (ß, ﬁ) or that lose their diacritics there.
WORDS = ["tea", "walk", "harbour", "kettle", "evening", "berlin", "rain", "garden", "straße",
         "café", "naïve", "ﬁsh", "Öl", "river", "quiet", "lights", "12", "x7"]


def fresh_counts(store: SqliteStore, words: list[str]) -> dict[str, int]:
    """fts5vocab's counts, read now through the store's connections, past what it keeps."""
    marks = ",".join("?" * len(words))
    found = dict(store._search._pool.read(
        f"SELECT term, doc FROM temp.memory_vocab WHERE term IN ({marks})", words))
    return {w: found.get(w, 0) for w in words}


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))


def other_process_writes(path: Path, first: int, contents: list[str], delete: str | None) -> None:
    script = (
        "import sys\n"
        "from tests.contract.store_support import mem, new\n"
        "from tinycontext.adapters.sqlite.store import SqliteStore\n"
        "s = SqliteStore(sys.argv[1])\n"
        f"s.add([new(mem({first} + i, c), vector=False) for i, c in enumerate({contents!r})])\n"
        f"if {delete!r}: s.delete({delete!r}, None, None)\n"
        "s.close()\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], cwd=REPO, check=True, timeout=120)


def answers(store: SqliteStore, query: list[list[str]]) -> tuple[object, ...]:
    hits = store.keyword_search(query, Scope("episodic"), 10)
    return (store.keyword_ideal(query), store.keyword_rarity(WORDS),
            [(h.memory.id, h.score) for h in hits])


def assert_exact(store: SqliteStore, rng: random.Random) -> None:
    folded = sorted({fold(w) for w in WORDS} | {"absent"})
    asked = rng.sample(folded, rng.randint(1, len(folded)))
    assert store._search.words.lookup(asked) == fresh_counts(store, asked)
    query = [[w] for w in rng.sample(WORDS, 3)]
    kept = store._search.words
    hot = answers(store, query)
    store._search.words = WordCounts(store._search._pool)  # as a store that kept nothing
    try:
        assert hot == answers(store, query)
    finally:
        store._search.words = kept


@pytest.mark.parametrize("seed", [1, 2])
def test_kept_counts_equal_fts5vocab_after_a_random_mix_of_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(word_counts, "TOKENISED_ROWS", 12)  # some imports start afresh
    rng = random.Random(seed)
    path = tmp_path / "m.db"
    store = SqliteStore(path)
    live: list[int] = []  # numbers of the current versions
    contents: dict[int, str] = {}
    number = 0

    def fresh(content: str, context_of: int | None = None) -> NewMemory:
        nonlocal number
        number += 1
        contents[number] = content
        item = new(mem(number, content), vector=False)
        if context_of is not None:
            item = NewMemory(item.memory, None, mid(context_of), contents[context_of])
        return item

    try:
        for step in range(40):
            action = rng.choice(["save", "save", "context", "update", "delete", "import",
                                 "other"])
            if action == "save" or not live:
                items = [fresh(text(rng)) for _ in range(rng.randint(1, 3))]
                store.add(items)
                live += [int(i.memory.id[-12:], 16) for i in items]
            elif action == "context":
                item = fresh(text(rng), context_of=rng.choice(live))
                store.add([item])
                live.append(number)
            elif action == "update":
                old = rng.choice(live)
                item = fresh(text(rng))
                store.supersede(mid(old), item, "2026-07-02T00:00:00Z")
                live[live.index(old)] = number
            elif action == "delete":
                gone = rng.choice(live)
                store.delete(mid(gone), None, None)
                live.remove(gone)
            elif action == "import":
                items = [fresh(text(rng)) for _ in range(rng.randint(5, 20))]
                store.add(items)
                live += [int(i.memory.id[-12:], 16) for i in items]
            else:
                batch = [text(rng) for _ in range(rng.randint(1, 3))]
                gone = rng.choice(live) if rng.random() < 0.5 else None
                other_process_writes(path, 10_000 + 10 * step, batch,
                                     mid(gone) if gone is not None else None)
                if gone is not None:
                    live.remove(gone)
            assert_exact(store, rng)
    finally:
        store.close()


def test_own_writes_need_no_recount(tmp_path: Path) -> None:
    """After the store's own save, update and delete the words it had counted are answered
    without reading fts5vocab; after another connection's save they are counted again."""
    path = tmp_path / "m.db"
    store = SqliteStore(path)
    store.add([new(mem(1, "tea in Berlin"), vector=False),
               new(mem(2, "green tea"), vector=False)])
    store.add([NewMemory(mem(3, "rain later"), None, mid(1), "tea in Berlin")])
    words = store._search.words
    seen: list[str] = []
    real = store._search._pool.read

    def read(sql: str, params: object = ()) -> list[object]:
        seen.append(sql)
        return real(sql, params)

    store._search._pool.read = read  # type: ignore[method-assign]
    assert words.lookup(["tea", "berlin", "rain"]) == {"tea": 3, "berlin": 2, "rain": 1}
    store.add([new(mem(4, "tea again"), vector=False)])
    store.supersede(mid(2), new(mem(5, "black tea"), vector=False), "2026-07-02T00:00:00Z")
    store.delete(mid(1), None, None)  # also clears memory 3's context
    assert words.lookup(["tea", "berlin", "rain"]) == {"tea": 3, "berlin": 0, "rain": 1}
    assert sum("memory_vocab" in sql for sql in seen) == 1
    other = SqliteStore(path)
    other.add([new(mem(6, "tea and rain"), vector=False)])
    other.close()
    assert words.lookup(["tea", "rain"]) == {"tea": 4, "rain": 2}
    assert sum("memory_vocab" in sql for sql in seen) == 2
    store.close()


def test_a_rolled_back_write_changes_no_count(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = SqliteStore(path)
    store.add([new(mem(1, "tea"), vector=False)])
    words = store._search.words
    assert words.lookup(["tea"]) == {"tea": 1}
    with pytest.raises(Exception):  # noqa: B017 - a duplicate id: the insert fails
        store.add([new(mem(2, "tea"), vector=False), new(mem(1, "tea"), vector=False)])
    assert words.lookup(["tea"]) == {"tea": 1} == fresh_counts(store, ["tea"])
    store.close()


def test_ascii_rows_split_as_fts5_splits_them(tmp_path: Path) -> None:
    """Rows of ASCII text are split in Python: the same words, counted the same, as FTS5's
    unicode61 (every ASCII character, long words, apostrophes, underscores, dashes)."""
    rng = random.Random(3)
    pieces = [chr(i) for i in range(1, 128)]
    common = string.ascii_letters + string.digits + " "
    store = SqliteStore(tmp_path / "m.db")
    try:
        with store._search._pool.lease() as conn:
            for trial in range(300):
                rows = [tuple("".join(rng.choice(pieces if rng.random() < 0.3 else common)
                                      for _ in range(rng.randint(0, 120))) for _ in range(3))
                        for _ in range(rng.randint(1, 4))]
                if trial % 50 == 0:
                    rows.append(("x" * 300, "Y" * 40_000, "a_b c-d e'f g.h"))
                assert all(len(r) == 3 for r in rows)
                split = word_counts._tokenised(conn, rows)  # type: ignore[arg-type]
                assert split == word_counts._probed(conn, rows)  # type: ignore[arg-type]
    finally:
        store.close()


def test_writes_outside_the_store_path_are_seen(tmp_path: Path) -> None:
    """A delete of the newest memory, and an insert below the newest seq written by other
    code (as a repair tool might), each move the generation: the counts are read afresh."""
    store = SqliteStore(tmp_path / "m.db")
    store.add([new(mem(i, f"tea cup{i}"), vector=False) for i in range(1, 5)])
    words = store._search.words
    assert words.lookup(["tea", "cup2"]) == {"tea": 4, "cup2": 1}
    store.delete(mid(4), None, None)  # the newest
    assert words.lookup(["tea", "cup2"]) == {"tea": 3, "cup2": 1} == fresh_counts(
        store, ["tea", "cup2"])
    store.delete(mid(2), None, None)
    assert words.lookup(["tea", "cup2"]) == {"tea": 2, "cup2": 0}
    with store._search._pool.write() as conn:  # not through the store: nothing carried
        conn.execute(
            "INSERT INTO memories(seq, id, ref, content, kind, created_at, content_tokens) "
            "VALUES (2, 'x', 'x', 'tea cup2', 'episodic', '2026-07-01T00:00:00Z', 2)")
        conn.execute("INSERT INTO memory_fts(rowid, terms, stems, context) "
                     "VALUES (2, 'tea cup2', 'tea cup2', '')")
    assert words.lookup(["tea", "cup2"]) == {"tea": 3, "cup2": 1} == fresh_counts(
        store, ["tea", "cup2"])
    store.close()
