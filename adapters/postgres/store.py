"""PostgreSQL store: memories, a tsvector keyword index and pgvector HNSW cosine search.

For deployments that outgrow one machine: several stateless TinyContext replicas share one
database. Every row carries a tenant key ("" in single-user mode) and every query filters by
it; row-level security keyed on the transaction's `tinycontext.tenant` setting is a second
wall. Nothing connects until the first operation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tinycontext.domain.context import KEYWORD_CONTEXT_WEIGHT
from tinycontext.domain.errors import InvalidRequestError, MemoryAlreadySupersededError
from tinycontext.domain.listing import ListQuery
from tinycontext.domain.memory import Memory, ref_of
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import NewMemory, Page, Scope, Scored, Store

from . import context as pg_context
from . import export, listing, writing
from .connection import PgPool, SharedPgPool
from .rows import COLUMNS, MEMORIES, SESSIONS, memory_from_row, vector_text
from .schema import ensure_dense_index
from .search import PgRetrieval
from .text import tenant_tag

_BAD_TEXT_STATES = {"22021", "22P05"}  # bad byte sequence, untranslatable character
HISTORY_BATCH = 200  # replaced versions moved into their index per upkeep transaction


class PostgresStore(Store):
    """The scale-out store. Thread-safe: each operation borrows a pooled connection."""

    def __init__(self, url: str | SharedPgPool, tenant: str = "", *,
                 max_connections: int = 10,
                 keyword_context_weight: float = KEYWORD_CONTEXT_WEIGHT) -> None:
        """`url` or, for many tenants of one process, a SharedPgPool that `close` leaves open;
        `keyword_context_weight`: the rank weight of a memory's save-time context against
        its own words in recall."""
        self._pool = PgPool(url, tenant, max_connections)
        self.tenant = tenant
        self._search = PgRetrieval(self._pool, keyword_context_weight)
        self._indexed = self._pool.indexed_dims  # shared by every tenant of the database
        self._tag = tenant_tag(tenant)

    def __repr__(self) -> str:
        return f"PostgresStore({self._pool!r})"

    # -- helpers -------------------------------------------------------------------------
    def _dense_index(self, vectors: Sequence[Vector | None]) -> None:
        """Make sure each dimension written has its HNSW index (outside the write)."""
        for dims in {len(v) // 4 for v in vectors if v}:
            if dims not in self._indexed:
                with self._pool.connection() as conn:
                    ensure_dense_index(conn, dims)
                self._indexed.add(dims)

    def _write(self, work: Any, settings: dict[str, str] | None = None) -> Any:
        try:
            return self._pool.run(work, settings)
        except Exception as exc:
            if getattr(exc, "sqlstate", None) in _BAD_TEXT_STATES:
                raise InvalidRequestError(
                    "content holds a character this PostgreSQL database cannot store; "
                    "check that the database encoding is UTF8."
                ) from None
            raise

    # -- Store port ----------------------------------------------------------------------
    def add(self, items: Sequence[NewMemory]) -> None:
        if not items:
            return
        writing.check_text(items)
        self._dense_index([i.vector for i in items])
        self._write(lambda cur: writing.insert(cur, self.tenant, self._tag, items))

    def find(self, key: str, is_ref: bool) -> list[Memory]:
        column = "ref" if is_ref else "id"
        rows = self._pool.read(
            f"SELECT {COLUMNS} FROM {MEMORIES} m WHERE m.tenant = %s AND m.{column} = %s "
            "ORDER BY m.seq",
            (self.tenant, key),
        )
        return [memory_from_row(r) for r in rows]

    def keyword_search(
        self, groups: Sequence[Sequence[str]], scope: Scope, limit: int
    ) -> list[Scored]:
        return self._search.keyword_search(groups, scope, limit)

    def keyword_ideal(self, groups: Sequence[Sequence[str]]) -> float:
        return self._search.keyword_ideal(groups)

    def keyword_rarity(self, words: Sequence[str]) -> dict[str, float]:
        return self._search.keyword_rarity(words)

    def nearest(self, vector: Vector, model_key: str, scope: Scope, limit: int) -> list[Scored]:
        dims = len(vector) // 4
        indexed = dims in self._indexed or self._search.has_table_index(dims)
        if indexed:
            self._indexed.add(dims)
        return self._search.nearest(vector, model_key, scope, limit, indexed)

    def similarities(
        self, vector: Vector, model_key: str, memory_ids: Sequence[str]
    ) -> dict[str, float]:
        return pg_context.similarities(self._pool, vector, model_key, memory_ids)

    def latest(self, scope: Scope) -> Memory | None:
        return pg_context.latest(self._pool, scope)

    def contexts(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        return pg_context.contexts(self._pool, memory_ids)

    def token_bits(self, memory_ids: Sequence[str]) -> dict[str, tuple[bytes, bytes | None]]:
        return pg_context.token_bits(self._pool, memory_ids)

    def browse(self, query: ListQuery) -> Page:
        return listing.browse(self._pool, self._search, self.tenant, self._tag, query)

    def session_counts(self, limit: int) -> list[tuple[str, int]]:
        return listing.session_counts(self._pool, self.tenant, limit)

    def session_exists(self, session_id: str) -> bool:
        return bool(self._pool.read(
            f"SELECT 1 FROM {SESSIONS} WHERE tenant = %s AND session_id = %s",
            (self.tenant, session_id),
        ))

    def mark_recalled(self, memory_ids: Sequence[str], at: str) -> None:
        if not memory_ids:
            return
        # Rows are locked in id order, so two concurrent recalls never deadlock.
        ordered = sorted(memory_ids)

        def mark(cur: Any) -> None:
            cur.executemany(
                f"UPDATE {MEMORIES} SET recall_count = recall_count + 1, last_recalled_at = %s "
                "WHERE tenant = %s AND id = %s",
                [(at, self.tenant, memory_id) for memory_id in ordered],
            )

        # Recall bookkeeping need not wait for a disk flush: a crash may lose the last
        # fraction of a second of counts, never a memory. (Set with the tenant: one
        # statement less than SET LOCAL.)
        self._write(mark, {"synchronous_commit": "off"})

    def supersede(self, old_id: str, new: NewMemory, at: str) -> None:
        writing.check_text([new])
        self._dense_index([new.vector])

        def replace(cur: Any) -> None:
            cur.execute(
                # Pending: the upkeep moves it into the replaced versions' index.
                f"UPDATE {MEMORIES} SET superseded_by = %s, superseded_at = %s, "
                "history_pending = true WHERE tenant = %s AND id = %s AND superseded_by IS NULL",
                (new.memory.id, at, self.tenant, old_id),
            )
            if cur.rowcount != 1:
                raise MemoryAlreadySupersededError(
                    f"Memory {ref_of(old_id)} was replaced meanwhile; update the newer version."
                )
            writing.insert(cur, self.tenant, self._tag, [new])

        self._write(replace)

    def delete(self, memory_id: str, predecessor_id: str | None, successor_id: str | None) -> None:
        self._write(lambda cur: writing.remove(cur, self.tenant, self._tag, memory_id,
                                               predecessor_id, successor_id))
        self._search.forget_counts()

    def pending_embeddings(self, model_key: str, limit: int) -> list[Memory]:
        rows = self._pool.read(
            f"SELECT {COLUMNS} FROM {MEMORIES} m WHERE m.tenant = %s "
            "AND m.embedding_model IS DISTINCT FROM %s ORDER BY m.seq LIMIT %s",
            (self.tenant, model_key, limit),
        )
        return [memory_from_row(r) for r in rows]

    def count_pending_embeddings(self, model_key: str) -> int:
        return int(self._pool.read(
            f"SELECT count(*) FROM {MEMORIES} WHERE tenant = %s "
            "AND embedding_model IS DISTINCT FROM %s",
            (self.tenant, model_key),
        )[0][0])

    def set_embeddings(
        self, vectors: Sequence[tuple[str, Vector]], model_key: str,
        tokens: Mapping[str, bytes] | None = None,
    ) -> None:
        if not vectors:
            return
        self._dense_index([v for _, v in vectors])
        ordered = sorted(vectors)
        bits = tokens or {}

        def update(cur: Any) -> None:
            cur.executemany(
                f"UPDATE {MEMORIES} SET embedding = %s::vector, dims = %s, embedding_model = %s, "
                "token_bits = coalesce(%s, token_bits) WHERE tenant = %s AND id = %s",
                [(vector_text(v), len(v) // 4, model_key, bits.get(memory_id), self.tenant,
                  memory_id) for memory_id, v in ordered],
            )

        self._write(update)

    def maintain_index(self, model_key: str) -> bool:
        # HNSW is maintained by every insert, except the replaced versions' index, which
        # takes the versions replaced since the last step here; then a large tenant's own
        # index.
        if self._write(lambda cur: writing.move_history(cur, self.tenant, HISTORY_BATCH)):
            return True
        return self._search.maintain(model_key)

    def close(self) -> None:
        self._pool.close()

    # -- export and diagnostics ----------------------------------------------------------
    def export_page(
        self, after: int, limit: int, session_id: str | None
    ) -> list[tuple[int, Memory, bytes | None]]:
        """Memories (superseded too) after row `after`, oldest first, with their vectors."""
        return export.export_page(self._pool, self.tenant, after, limit, session_id)

    def diagnostics(self) -> dict[str, Any]:
        """Server, pgvector and schema facts for `doctor` (the URL with its password hidden)."""
        return export.diagnostics(self._pool, self.tenant)
