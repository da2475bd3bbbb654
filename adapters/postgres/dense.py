"""Dense (vector) search of one tenant in PostgreSQL: pgvector's HNSW index on large scopes,
exact cosine on small ones (where an index that filters after its search could return too
few rows) and as the fallback when it does."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import Scope, Scored

from .as_of import TimeSample, as_of_nearest, time_sample
from .connection import PgPool
from .filtering import where_sql
from .rows import (
    MEMORIES,
    WIDTH,
    exact_nearest_sql,
    memory_from_row,
    probe_nearest,
    scope_sql,
    vector_text,
)
from .schema import SCHEMA, dense_index_name
from .tenant_index import build_tenant_index, tenant_index_state

# Dense side: scopes up to SMALL_SCOPE vectors are searched exactly (cheaper than the
# index there); up to EXACT_SCOPE too when they are under half of the table (the index,
# which filters after its search, would likely come back short).
SMALL_SCOPE = 300
EXACT_SCOPE = 2000
EF_SEARCH_MAX = 1000  # pgvector's limit
EF_SEARCH_MIN = 40  # pgvector's default
# Candidates explored per result wanted (500 for the default pool of 200). With the
# ef_construction 512 graph built in one go, 250 found 0.98 of the exact top 10 at 200,000
# memories and 500 all of it (1,000, pgvector's maximum, costs much more time). Graphs
# built insert by insert differ (random levels): at 500, two found 1.00 and one 0.97.
EF_PER_RESULT = 2.5
# A tenant's own index (built in one go by CREATE INDEX, over that tenant's rows only) needs
# less: on the 10 x 100,000 benchmark (3 tenants, 40 questions each) 1.5 (ef_search 300)
# found 0.995-1.00 of the exact top 10 and 0.96 of the exact 200 (2.5: 0.995-1.00 and 0.99)
# in clearly less time; the HNSW walk was most of a large tenant's recall.
TENANT_EF_PER_RESULT = 1.5
COUNT_TTL_SECONDS = 30.0
SAMPLE_TTL_SECONDS = 300.0
MAX_COUNTS = 256  # cached counts per tenant store (scopes include session ids: bounded)
# Many tenants in one table: a tenant's share of the table-wide index is small, and an index
# that filters after its search returns about ef_search x share of its rows (pgvector 0.6 has
# no iterative scans): at 100,000 of 1,000,000 rows, ~100 for a pool of 200, so every recall
# fell back to exact cosine over the tenant's 100,000 vectors. A tenant with TENANT_INDEX_AT
# live vectors, under half of the table, gets an HNSW index of its own (a partial index on
# its key), built in the background upkeep; smaller tenants are searched exactly. At most
# MAX_TENANT_INDEXES per table: each one is a predicate the planner checks per query.
TENANT_INDEX_AT = 10_000
# Scopes are counted up to this: one of EXACT_SCOPE..MID_SCOPE vectors (a mid-sized tenant
# without an index of its own, a large session) whose share of the table is too small for
# the table index to return `limit` rows even at EF_SEARCH_MAX is searched exactly at once.
MID_SCOPE = TENANT_INDEX_AT
MAX_TENANT_INDEXES = 64
# A filtered scope is counted up to this when deciding whether the index would come back
# short: beyond it the exact search would cost more than the probes it saves.
MAX_FILTER_COUNT = 4 * MID_SCOPE
TENANT_INDEX_WORK_MEM = "512MB"  # the graph of 100,000 384-d vectors is built in memory


class PgDenseRetrieval:
    """Vector candidate search of one tenant, with the cached counts that size it."""

    def __init__(self, pool: PgPool) -> None:
        self._pool = pool
        self._counts: dict[Any, tuple[float, int]] = {}
        # Recalls of one store run on several threads at once: the eviction below (oldest
        # first, by iteration) must not race another thread's insert.
        self._counts_lock = threading.Lock()
        self._samples: dict[tuple[str, int], tuple[float, TimeSample | None]] = {}

    # -- shared ----------------------------------------------------------------------------
    def _cached(self, key: Any, count: Any, ttl: float = COUNT_TTL_SECONDS) -> int:
        now = time.monotonic()
        hit = self._counts.get(key)
        if hit is not None and now - hit[0] < ttl:
            return hit[1]
        value = int(count())  # outside the lock: a count is a query
        with self._counts_lock:
            self._counts.pop(key, None)
            while len(self._counts) >= MAX_COUNTS:  # the oldest entry goes first
                del self._counts[next(iter(self._counts))]
            self._counts[key] = (now, value)
        return value

    def forget_counts(self, key: Any = None) -> None:
        """Drop one cached count (all of them when `key` is None)."""
        with self._counts_lock:
            if key is None:
                self._counts.clear()
            else:
                self._counts.pop(key, None)

    # -- a tenant's own index --------------------------------------------------------------
    def has_own_index(self, dims: int) -> bool:
        """Whether this tenant has a valid HNSW index of its own for `dims` (cached)."""
        return bool(self._cached(("own_index", dims), lambda: self._pool.run(
            lambda cur: tenant_index_state(cur, self._pool.tenant, dims) == "valid")))

    def maintain(self, model_key: str) -> bool:
        """One step of upkeep: build this tenant's own index when it has grown to need one.
        True when an index was built (more may follow), False when nothing is to do."""
        found = self._pool.read(
            f"SELECT dims FROM {MEMORIES} WHERE tenant = %s AND embedding_model = %s "
            "AND dims IS NOT NULL LIMIT 1", (self._pool.tenant, model_key))
        if not found or self.has_own_index(int(found[0][0])):
            return False
        dims = int(found[0][0])
        self.forget_counts("table_rows")
        table = self._table_rows()
        live = int(self._pool.read(  # counted far enough to tell both limits apart
            f"SELECT count(*) FROM (SELECT 1 FROM {MEMORIES} WHERE tenant = %s AND dims = %s "
            "AND superseded_by IS NULL LIMIT %s) x",
            (self._pool.tenant, dims, max(TENANT_INDEX_AT, table // 2 + 1)))[0][0])
        if live < TENANT_INDEX_AT or 2 * live >= table:
            return False  # small (exact search is cheap) or most of the table (its index)
        with self._pool.connection() as conn:
            built = build_tenant_index(conn, self._pool.tenant, dims, TENANT_INDEX_WORK_MEM,
                                       MAX_TENANT_INDEXES)
        self.forget_counts(("own_index", dims))
        return built

    def _time_sample(self, model_key: str, dims: int) -> TimeSample | None:
        """The tenant's version times sampled for "as of" (cached like the counts, longer:
        it sizes probes, it does not decide what is found)."""
        now = time.monotonic()
        hit = self._samples.get((model_key, dims))
        if hit is not None and now - hit[0] < SAMPLE_TTL_SECONDS:
            return hit[1]
        sample = time_sample(self._pool, self._table_rows(), model_key, dims)
        self._samples[(model_key, dims)] = (now, sample)  # one entry per model and dimension
        return sample

    def has_table_index(self, dims: int) -> bool:
        """Whether the table-wide HNSW index for `dims` exists; an answer of no is cached
        like the counts (it was a catalog query on every search of a store without one)."""
        return bool(self._cached(("table_index", dims), lambda: bool(self._pool.read(
            "SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname = %s",
            (SCHEMA, dense_index_name(dims)),
        ))))

    def _scope_vectors(self, model_key: str, dims: int, scope: Scope,
                       most: int = MID_SCOPE) -> int:
        """Live vectors of the scope that pass its filter, counted up to `most` + 1
        (enough for every choice `nearest` makes)."""
        where, params = scope_sql(scope)
        life, life_params = where_sql(scope.filters, self._pool.tenant)
        return self._cached((model_key, dims, scope, most), lambda: self._pool.read(
            f"SELECT count(*) FROM (SELECT 1 FROM {MEMORIES} m WHERE m.tenant = %s"
            f"{life}{where} AND m.embedding_model = %s AND m.dims = %s LIMIT %s) x",
            [self._pool.tenant, *life_params, *params, model_key, dims, most + 1],
        )[0][0])

    def _index_rows(self, dims: int) -> int:
        """Rows of the table-wide index for `dims` (every tenant's live vectors), from the
        planner's statistics; 0 when unknown."""
        return self._cached(("index_rows", dims), lambda: max(0, int(self._pool.read(
            "SELECT coalesce(max(c.reltuples), 0) FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s",
            (SCHEMA, dense_index_name(dims)),
        )[0][0])))

    def _table_rows(self) -> int:
        """All rows of the memories table (every tenant), from the planner's statistics."""
        return self._cached("table_rows", lambda: max(0, int(self._pool.read(
            "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", (MEMORIES,)
        )[0][0])))

    def nearest(
        self, vector: Vector, model_key: str, scope: Scope, limit: int, indexed: bool
    ) -> list[Scored]:
        dims = len(vector) // 4
        if limit < 1 or dims < 1:
            return []
        if scope.filters is not None and scope.filters.as_of is not None:
            sample = self._time_sample(model_key, dims) if indexed else None
            # A tenant gets its own index only when it is under half of the table.
            own = sample is not None and sample.others >= 2.0 and self.has_own_index(dims)
            return as_of_nearest(self._pool, vector, model_key, scope, scope.filters, limit,
                                 sample, indexed, own)
        where, params = scope_sql(scope)
        text = vector_text(vector)
        # A filter's conditions join the scope's: the index path below filters after its
        # search and falls back to the exact cosines when that comes back short, so a
        # filtered search still gets its best `limit`.
        life, life_params = where_sql(scope.filters, self._pool.tenant)
        filters = (
            f"m.tenant = %s AND m.dims = {dims}{life}{where} "
            "AND m.embedding_model = %s"
        )
        base = [self._pool.tenant, *life_params, *params, model_key]
        in_scope = self._scope_vectors(model_key, dims, replace(scope, filters=None))
        table = self._table_rows()
        use_index = indexed and in_scope > SMALL_SCOPE and (
            in_scope > EXACT_SCOPE or 2 * in_scope >= table
        )
        if use_index and in_scope <= MID_SCOPE and EF_SEARCH_MAX * in_scope < limit * table:
            # Even the widest search of the table index is expected to come back short
            # (it keeps about ef_search x the scope's share of the table): both probes would
            # be wasted before the exact search, which is cheap at this size.
            use_index = False
        # A tenant's own index serves the same query: the planner picks it (its predicate
        # names the tenant) over the table-wide one, and it holds only the tenant's rows.
        own = in_scope > EXACT_SCOPE and self.has_own_index(dims)
        use_index = use_index or own
        if use_index and scope.filters:
            # A filter that few of the searched index's rows pass would leave both probes
            # short (the index filters after its search, keeping about ef_search x the share
            # that passes): counted as far as that matters, such a scope is searched exactly
            # at once.
            searched = in_scope if own else (self._index_rows(dims) or table)
            short_below = limit * searched // EF_SEARCH_MAX
            passing = self._scope_vectors(model_key, dims, scope,
                                          min(max(MID_SCOPE, short_below), MAX_FILTER_COUNT))
            if passing <= MAX_FILTER_COUNT and passing < short_below:
                use_index = False
        if use_index:
            for ef in self._ef_steps(limit, TENANT_EF_PER_RESULT if own else EF_PER_RESULT):
                rows = self._pool.run(
                    lambda cur: probe_nearest(cur, dims, filters, [text, *base, text, limit]),
                    # Our count already chose the index: keep the planner from sorting the
                    # whole scope instead (its guess of what the filters keep is often off).
                    {"hnsw.ef_search": str(ef), "enable_sort": "off"},
                )
                # The index filters after its search: a scope that is a small share of the
                # index can come back short. Then widen the search, and at last go exact.
                if len(rows) >= limit:
                    return [Scored(memory_from_row(r), float(r[WIDTH])) for r in rows]
        rows = self._pool.read(exact_nearest_sql(filters), [text, *base, limit])
        return [Scored(memory_from_row(r), float(r[WIDTH])) for r in rows]

    @staticmethod
    def _ef_steps(limit: int, per_result: float) -> list[int]:
        """hnsw.ef_search values to try: `per_result` x `limit` first, then the maximum."""
        first = min(EF_SEARCH_MAX, max(EF_SEARCH_MIN, limit, int(per_result * limit)))
        return [first] if first >= EF_SEARCH_MAX else [first, EF_SEARCH_MAX]
