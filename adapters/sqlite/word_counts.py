"""Document frequencies of the keyword index, kept for the whole store across its own writes.

Recall weighs and prunes its words by how many memories hold them (fts5vocab), and FTS5
counts a word by reading every posting of it, so a common word costs more the larger the
store. The counts read are kept, exact at one *keyword generation*: the pair (newest memory's
seq, `keyword_generation.n`), where the number is raised by triggers (schema.py) with every
delete of a memory and every insert that is not an append. The keyword index changes with
inserts and deletes of memories only, so any change to it, by whoever writes (this store,
another process, an engine opened before the upgrade that added the triggers), moves the
pair, and the pair never comes back: with no delete in between, appends only raise the
newest seq. An append (a save) writes no page it would not write anyway. A look-up reads the
generation in the same statement as the counts it lacks, so it knows which state all of them
are of, and uses the kept counts only when they are of that state.

A write of this store carries the kept counts along instead of dropping them: inside its
transaction it reads the generation before and after and splits its rows into words as the
index's tokenizer does, so the change is exactly what the index saw. A row of ASCII text is
split here (unicode61 keeps runs of ASCII letters and digits, lower-cased); any other row
goes through FTS5 itself, a small temporary FTS5 table with the index's tokenizer (Python's
folding differs from unicode61's on some letters: ß, ligatures). After the commit the counts
move to the new generation only if they were exact at the old one, and only when the
generation moved by exactly the memories the write inserted and deleted (nothing else in
the transaction touched the index). Anything else (another writer, a write of more rows than
is worth splitting, a delete of the newest memory) leaves them at the old generation and the
next look-up starts afresh. Writes that leave the keyword index alone (recall counts,
re-embedding) keep the counts as they are.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .connection import ConnectionPool
from .schema import TOKENIZER

# Words whose counts the store keeps (a bound on memory).
COUNTED_WORDS = 20_000
# A write of more keyword rows than this (an import batch) is not tokenised: the counts start
# afresh after it, as any write's used to.
TOKENISED_ROWS = 256

# Longer words are left to FTS5, which caps the size of a token.
LONGEST_SPLIT = 256
_ASCII_WORD = re.compile(r"[a-z0-9]+")

Row = tuple[str, str, str]  # the keyword index's columns: terms, stems, context
Generation = tuple[int, int]  # (newest memory's seq, deletes and out-of-order inserts)


class Change:
    """What one write transaction does to the keyword index."""

    def __init__(self, before: Generation | None, tracked: bool) -> None:
        self.before = before
        self.after = before
        self.tracked = tracked  # kept counts exact at `before`: worth carrying along
        self.added: list[Row] = []
        self.removed: list[Row] = []
        self.inserted = 0  # memories appended: each raises the newest seq by one
        self.deleted = 0  # memories deleted: each raises the number by one
        self.delta: dict[str, int] | None = None

    def insert(self, row: Row) -> None:
        self.inserted += 1
        if self.tracked:
            self.added.append(row)

    def delete(self, conn: Any, seq: int, dependants: str, params: Sequence[Any]) -> None:
        """A memory's keyword row about to be deleted, and the rows whose context column
        (the SQL `dependants`, their seqs) is about to be cleared with it."""
        self.deleted += 1
        if not self.tracked:
            return
        rows = conn.execute(
            "SELECT id, c0, c1, c2 FROM memory_fts_content WHERE id = ? "
            f"OR id IN ({dependants})", (seq, *params),
        ).fetchall()
        for rowid, terms, stems, context in rows:
            self.removed.append((terms or "", stems or "", context or ""))
            if rowid != seq:
                self.added.append((terms or "", stems or "", ""))


GENERATION = ("SELECT NULL, n FROM keyword_generation WHERE id = 1 "
              "UNION ALL SELECT '', coalesce(max(seq), 0) FROM memories")


def _generation(rows: list[Any]) -> Generation | None:
    """The generation from GENERATION's rows (None: the store has no keyword generation)."""
    number = newest = None
    for term, n in rows:
        if term is None:
            number = int(n)
        elif term == "":
            newest = int(n)
    return None if number is None or newest is None else (newest, number)


def _ascii_words(row: Row) -> set[str] | None:
    """The row's words as unicode61 splits them, when that can be told without it."""
    text = " ".join(row)
    if not text.isascii():
        return None
    words = set(_ASCII_WORD.findall(text.lower()))
    return None if any(len(w) > LONGEST_SPLIT for w in words) else words


def _tokenised(conn: Any, rows: list[Row]) -> dict[str, int]:
    """How many of `rows` hold each word, as the keyword index's tokenizer splits them."""
    found: dict[str, int] = {}
    others: list[Row] = []
    for row in rows:
        words = _ascii_words(row)
        if words is None:
            others.append(row)
            continue
        for word in words:
            found[word] = found.get(word, 0) + 1
    for word, n in _probed(conn, others).items():
        found[word] = found.get(word, 0) + n
    return found


def _probed(conn: Any, rows: list[Row]) -> dict[str, int]:
    """How many of `rows` hold each word, from FTS5's own tokenizer."""
    if not rows:
        return {}
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.keyword_probe "
        f"USING fts5(terms, stems, context, content='', tokenize = '{TOKENIZER}')"
    )
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.keyword_probe_vocab "
        "USING fts5vocab(temp, keyword_probe, 'row')"
    )
    conn.executemany(
        "INSERT INTO temp.keyword_probe(terms, stems, context) VALUES (?, ?, ?)", rows
    )
    found = {str(t): int(n) for t, n in conn.execute(
        "SELECT term, doc FROM temp.keyword_probe_vocab")}
    conn.execute("INSERT INTO temp.keyword_probe(keyword_probe) VALUES ('delete-all')")
    return found


class WordCounts:
    """The store's kept document frequencies (memories holding each folded word)."""

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._lock = threading.Lock()
        self._generation: Generation | None = None  # the state the counts are exact at
        self._counts: dict[str, int] = {}

    # -- reading ---------------------------------------------------------------------------
    def _read(self, words: Sequence[str]) -> tuple[dict[str, int], Generation | None]:
        """Counts of `words` and the generation they are of, from one statement (one
        snapshot of the store; FTS5 has no empty term)."""
        sql = GENERATION
        if words:
            marks = ",".join("?" * len(words))
            sql += f" UNION ALL SELECT term, doc FROM temp.memory_vocab WHERE term IN ({marks})"
        rows = self._pool.read(sql, list(words))
        counts = dict.fromkeys(words, 0)
        counts.update({str(t): int(n) for t, n in rows if t})
        return counts, _generation(rows)

    def lookup(self, words: Sequence[str]) -> dict[str, int]:
        """Memories holding each of `words` (folded), as of one state of the store."""
        with self._lock:
            kept_at = self._generation
            known = {w: self._counts[w] for w in words if w in self._counts}
        found, generation = self._read([w for w in words if w not in known])
        if known and (generation is None or generation != kept_at):
            # The store changed in a way the kept counts were not carried through.
            found, generation = self._read(words)
            known = {}
        with self._lock:
            if generation is None:
                pass  # nothing to tie counts to: none are kept
            elif self._generation == generation == kept_at:
                if len(self._counts) + len(found) > COUNTED_WORDS:
                    self._counts = {**known, **found}
                else:
                    self._counts.update(found)
            elif self._generation == kept_at:  # not moved on by another thread meanwhile
                self._generation = generation
                self._counts = dict(found)
        return {**known, **found}

    # -- writing ---------------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[tuple[Any, Change]]:
        """The pool's write transaction, with a record of its keyword changes that carries
        the kept counts along once it commits."""
        with self._pool.write() as conn:
            before = _generation(conn.execute(GENERATION).fetchall())
            with self._lock:
                tracked = before is not None and self._generation == before
            change = Change(before, tracked)
            yield conn, change
            self._measure(conn, change)
        self._carry(change)

    def _measure(self, conn: Any, change: Change) -> None:
        change.after = _generation(conn.execute(GENERATION).fetchall())
        if change.after is None or change.before is None or change.after == change.before:
            return
        newest, number = change.after[0] - change.before[0], change.after[1] - change.before[1]
        if (not change.tracked or (newest, number) != (change.inserted, change.deleted)
                or len(change.added) + len(change.removed) > TOKENISED_ROWS):
            return
        delta = _tokenised(conn, change.added)
        for word, n in _tokenised(conn, change.removed).items():
            delta[word] = delta.get(word, 0) - n
        change.delta = delta

    def _carry(self, change: Change) -> None:
        if change.after == change.before:
            return
        with self._lock:
            if change.delta is None or self._generation != change.before:
                return  # the next look-up finds the generation moved and counts afresh
            for word, n in change.delta.items():
                if word in self._counts:
                    self._counts[word] += n
            self._generation = change.after
