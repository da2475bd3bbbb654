"""SQLite store: memories, FTS5 BM25 keyword index and sqlite-vec cosine ranking in one file."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tinycontext.domain.context import KEYWORD_CONTEXT_WEIGHT
from tinycontext.domain.errors import MemoryAlreadySupersededError, StoreError
from tinycontext.domain.listing import ListQuery
from tinycontext.domain.memory import Memory, ref_of
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import NewMemory, Page, Scope, Scored, Store

from . import context as sqlite_context
from . import listing as sqlite_listing
from . import memory_rows
from .connection import ConnectionPool
from .counts import RecallCounts
from .filtering import drop_labels
from .ivf import IvfIndex
from .rows import COLUMNS, WIDTH, memory_from_row
from .search import Retrieval


class SqliteStore(Store):
    """The default store. Thread-safe: each thread gets its own connection."""

    def __init__(self, path: str | Path, key: bytes | None = None,
                 batch_counts: bool | None = None, probe_share: float | None = None,
                 keyword_context_weight: float = KEYWORD_CONTEXT_WEIGHT) -> None:
        """`key`: a raw 32-byte SQLCipher key (the process must use SQLCipher: driver.py).
        `batch_counts`: write recall counts in batches (counts.py); encrypted stores do.
        `probe_share`: of the vectors in scope a large store's dense search probes by IVF
        cells (mirror_cells.py; None: its PROBE_SHARE). `keyword_context_weight`: the
        BM25 weight of a memory's save-time context against its own words in recall."""
        self.path = Path(path)
        self._pool = ConnectionPool(self.path, key=key)
        self._ivf = IvfIndex()
        self._search = Retrieval(self._pool, self._ivf, probe_share, keyword_context_weight)
        self._search.prefetch()  # a large store's kept vector mirror, read in the background
        # Encrypted stores batch their recall counts (counts.py says why).
        batch = key is not None if batch_counts is None else batch_counts
        self._counts = RecallCounts(self._pool) if batch else None

    # -- Store port ----------------------------------------------------------------------
    def add(self, items: Sequence[NewMemory]) -> None:
        with self._search.words.writing() as (conn, change):
            known: dict[str, int] = {}
            sessions: set[str] = set()
            for item in items:
                memory_rows.insert(conn, self._ivf, change, item, known, sessions)

    def find(self, key: str, is_ref: bool) -> list[Memory]:
        column = "ref" if is_ref else "id"
        rows = self._pool.read(
            f"SELECT {COLUMNS} FROM memories m WHERE m.{column} = ? ORDER BY m.seq", (key,)
        )
        found = [memory_from_row(r) for r in rows]
        return [self._counts.memory(m) for m in found] if self._counts else found

    def _scored(self, hits: list[Scored]) -> list[Scored]:
        return self._counts.scored(hits) if self._counts else hits

    def keyword_search(
        self, groups: Sequence[Sequence[str]], scope: Scope, limit: int
    ) -> list[Scored]:
        return self._scored(self._search.keyword_search(groups, scope, limit))

    def nearest_many(
        self, vectors: Sequence[Vector], model_key: str, scope: Scope, limit: int
    ) -> list[list[Scored]]:
        return [self._scored(h) for h in self._search.nearest_many(vectors, model_key, scope,
                                                                   limit)]

    def keyword_ideal(self, groups: Sequence[Sequence[str]]) -> float:
        return self._search.keyword_ideal(groups)

    def keyword_rarity(self, words: Sequence[str]) -> dict[str, float]:
        return self._search.keyword_rarity(words)

    def indexed_words(self, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        return self._search.indexed_words(memory_ids)

    def nearest(self, vector: Vector, model_key: str, scope: Scope, limit: int) -> list[Scored]:
        return self._scored(self._search.nearest(vector, model_key, scope, limit))

    def similarities(
        self, vector: Vector, model_key: str, memory_ids: Sequence[str]
    ) -> dict[str, float]:
        return sqlite_context.similarities(self._pool, vector, model_key, memory_ids)

    def latest(self, scope: Scope) -> Memory | None:
        found = sqlite_context.latest(self._pool, scope)
        return self._counts.memory(found) if self._counts and found else found

    def contexts(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        return sqlite_context.contexts(self._pool, memory_ids)

    def token_bits(self, memory_ids: Sequence[str]) -> dict[str, tuple[bytes, bytes | None]]:
        return sqlite_context.token_bits(self._pool, memory_ids)

    def maintain_index(self, model_key: str) -> bool:
        model_row = self._pool.read("SELECT id FROM embedding_models WHERE key = ?", (model_key,))
        if not model_row:
            return False
        model_id = model_row[0][0]
        with self._pool.lease() as conn:
            sample = conn.execute(
                "SELECT length(codes) FROM vector_index WHERE model_id = ? LIMIT 1", (model_id,)
            ).fetchone()
            # IVF partitions serve only stores too large for the in-memory mirror to scan
            # whole; below that their k-means and re-tagging would be background CPU for nothing.
            if sample is None or (
                sample[0] is not None and not self._search.needs_cells(conn, model_id, sample[0])
            ):
                return False
        return self._ivf.step(self._pool, model_id)

    def browse(self, query: ListQuery) -> Page:
        if self._counts is None:
            return sqlite_listing.browse(self._pool, query)
        if query.recalled is not None or query.sort in sqlite_listing.BY_RECALLS:
            with contextlib.suppress(StoreError):  # else: the page's own counts, merged below
                self._counts.flush()  # SQL sorts or filters by the counts: write them first
        return self._counts.page(sqlite_listing.browse(self._pool, query))

    def session_exists(self, session_id: str) -> bool:
        return bool(
            self._pool.read("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,))
        )

    def session_counts(self, limit: int) -> list[tuple[str, int]]:
        return sqlite_listing.session_counts(self._pool, limit)

    def mark_recalled(self, memory_ids: Sequence[str], at: str) -> None:
        if not memory_ids:
            return
        if self._counts is not None:
            self._counts.add(memory_ids, at)
            return
        with self._pool.write() as conn:
            conn.executemany(
                "UPDATE memories SET recall_count = recall_count + 1, last_recalled_at = ? "
                "WHERE id = ?",
                [(at, memory_id) for memory_id in memory_ids],
            )

    def supersede(self, old_id: str, new: NewMemory, at: str) -> None:
        with self._search.words.writing() as (conn, change):
            cur = conn.execute(
                "UPDATE memories SET superseded_by = ?, superseded_at = ? "
                "WHERE id = ? AND superseded_by IS NULL",
                (new.memory.id, at, old_id),
            )
            if cur.rowcount != 1:
                raise MemoryAlreadySupersededError(
                    f"Memory {ref_of(old_id)} was replaced meanwhile; update the newer version."
                )
            conn.execute(
                "UPDATE vector_index SET model_id = -model_id, cell_key = 0 "
                "WHERE seq = (SELECT seq FROM memories WHERE id = ?) AND model_id > 0",
                (old_id,),
            )
            memory_rows.insert(conn, self._ivf, change, new)

    def delete(self, memory_id: str, predecessor_id: str | None, successor_id: str | None) -> None:
        with self._search.words.writing() as (conn, change):
            row = conn.execute(
                f"SELECT {COLUMNS}, m.seq FROM memories m WHERE m.id = ?", (memory_id,)
            ).fetchone()
            if row is None:
                return
            seq = row[WIDTH]
            drop_labels(conn, seq, memory_from_row(row))
            change.delete(conn, seq, sqlite_context.DEPENDANTS, (memory_id,))
            sqlite_context.forget(conn, memory_id)
            conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (seq,))
            conn.execute("DELETE FROM memory_tokens WHERE seq = ?", (seq,))
            conn.execute("DELETE FROM vector_index WHERE seq = ?", (seq,))
            conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))
            # A newer version that pointed back at the deleted one now points past it.
            conn.execute(
                "UPDATE memories SET supersedes = ? WHERE supersedes = ?",
                (predecessor_id, memory_id),
            )
            if predecessor_id is None:
                return
            if successor_id is not None:
                conn.execute(
                    "UPDATE memories SET superseded_by = ? WHERE id = ?",
                    (successor_id, predecessor_id),
                )
                conn.execute(
                    "UPDATE memories SET supersedes = ? WHERE id = ?",
                    (predecessor_id, successor_id),
                )
                return
            conn.execute(
                "UPDATE memories SET superseded_by = NULL, superseded_at = NULL WHERE id = ?",
                (predecessor_id,),
            )
            back = conn.execute(
                f"SELECT {COLUMNS}, m.seq, m.embedding FROM memories m WHERE m.id = ?",
                (predecessor_id,),
            ).fetchone()
            if back is not None and back[WIDTH + 1] is not None:
                memory_rows.index_vector(conn, self._ivf, back[WIDTH], memory_from_row(back),
                                         back[WIDTH + 1])

    def pending_embeddings(self, model_key: str, limit: int) -> list[Memory]:
        # The upkeep asks after every few seconds of writes. Index ranges say "none" at once;
        # the seq-order scan below would read the whole table to find nothing.
        if not self._pool.read(
            "SELECT 1 FROM memories WHERE embedding_model IS NULL OR embedding_model < ? "
            "OR embedding_model > ? LIMIT 1", (model_key, model_key),
        ):
            return []
        rows = self._pool.read(
            f"SELECT {COLUMNS} FROM memories m WHERE m.embedding_model IS NULL "
            "OR m.embedding_model <> ? ORDER BY m.seq LIMIT ?",
            (model_key, limit),
        )
        return [memory_from_row(r) for r in rows]

    def count_pending_embeddings(self, model_key: str) -> int:
        return int(
            self._pool.read(
                "SELECT count(*) FROM memories WHERE embedding_model IS NULL "
                "OR embedding_model <> ?",
                (model_key,),
            )[0][0]
        )

    def set_embeddings(
        self, vectors: Sequence[tuple[str, Vector]], model_key: str,
        tokens: Mapping[str, bytes] | None = None,
    ) -> None:
        with self._pool.write() as conn:
            known: dict[str, int] = {}  # one model id lookup for the whole batch
            for memory_id, vector in vectors:
                if tokens and memory_id in tokens:
                    conn.execute(
                        "INSERT OR REPLACE INTO memory_tokens(seq, bits) "
                        "SELECT seq, ? FROM memories WHERE id = ?",
                        (tokens[memory_id], memory_id),
                    )
                conn.execute(
                    "UPDATE memories SET embedding = ?, embedding_model = ? WHERE id = ?",
                    (vector, model_key, memory_id),
                )
                row = conn.execute(
                    f"SELECT {COLUMNS}, m.seq FROM memories m WHERE m.id = ?", (memory_id,)
                ).fetchone()
                if row is not None:
                    memory_rows.index_vector(conn, self._ivf, row[WIDTH], memory_from_row(row),
                                             vector, known)

    def export_page(
        self, after: int, limit: int, session_id: str | None
    ) -> list[tuple[int, Memory, Vector | None]]:
        page = sqlite_listing.export_page(self._pool, after, limit, session_id)
        if self._counts is None or not self._counts.pending():
            return page
        return [(seq, self._counts.memory(m), v) for seq, m, v in page]

    def close(self) -> None:
        if self._counts is not None:
            self._counts.close()  # written before the connections go
        self._pool.close()
        self._search.forget()  # a closed tenant's store must not keep its vectors in memory

    # -- diagnostics ---------------------------------------------------------------------
    def diagnostics(self) -> dict[str, Any]:
        """Driver, SQLite, sqlite-vec and FTS5 facts for `doctor` and tests."""
        from .driver import driver_name

        with self._pool.lease() as conn:
            return {
                "driver": driver_name(),
                "sqlite_version": conn.execute("SELECT sqlite_version()").fetchone()[0],
                "sqlite_vec_version": self._pool.vec_version,
                "fts5": bool(conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'memory_fts'").fetchone()),
                "schema_version": conn.execute("PRAGMA user_version").fetchone()[0],
                "encrypted": self._pool.encrypted,
            }
