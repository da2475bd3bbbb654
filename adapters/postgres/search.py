"""The two retrievers of the PostgreSQL store: tsvector keyword search and pgvector cosine.

Keyword score. PostgreSQL's `ts_rank_cd` knows one document only: a word found in one memory
of 200,000 scores like a word found in all of them, where FTS5's BM25 weighs each word by its
rarity (IDF). Recall depends on that (an error code or a name must beat common words), so the
score here is BM25-shaped: per query group, `ts_rank_cd` with length normalisation and
saturation (`1|32`: rank/(1+log length), then r/(r+1)), weighted by the group's BM25 IDF from
its document frequency in the tenant, and summed over the groups a memory matches.

Both retrievers are bounded like SQLite's: document frequencies are counted up to a cap, the
most common query words are dropped when their postings exceed a budget, and dense search
uses the HNSW index on large scopes (exact cosine on small ones, where an index that filters
after the fact could return too few rows, and as the fallback when it does).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from tinycontext.domain.memory import Memory
from tinycontext.domain.text import stem_groups
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import Scope, Scored

from .connection import PgPool
from .schema import SCHEMA
from .text import RECALL_WEIGHTS, any_query, group_query, query_groups, tenant_tag

COLUMNS = (
    "m.id, m.content, m.kind, m.session_id, m.created_at, m.content_tokens, m.recall_count, "
    "m.last_recalled_at, m.superseded_by, m.superseded_at, m.supersedes, m.embedding_model"
)
MEMORIES = f"{SCHEMA}.memories"
TERMS = f"{SCHEMA}.memory_terms"
RANK_NORMALISATION = 1 | 32
# Words in a memory of typical length (15-40 words), for keyword_ideal.
TYPICAL_WORDS = 24
# Keyword side: the postings budget per query of the SQLite store (sqlite_search.py). Unlike
# SQLite, which still scores a lone common word in up to 4x the budget, a query whose every
# word is above the budget gets no keyword candidates: scoring costs PostgreSQL more than
# FTS5 (it reads each candidate's tsvector: ~15 ms for 6,000 at 200,000 memories), and the
# order among thousands of memories sharing one common word is mostly their length.
MIN_POSTINGS = 3000
POSTINGS_PER_RESULT = 10
MAX_GROUPS = 64
# Dense side: scopes up to SMALL_SCOPE vectors are searched exactly (cheaper than the
# index there); up to EXACT_SCOPE too when they are under half of the table (the index,
# which filters after its search, would likely come back short).
SMALL_SCOPE = 300
EXACT_SCOPE = 2000
EF_SEARCH_MAX = 1000  # pgvector's limit
EF_SEARCH_MIN = 40  # pgvector's default
# Candidates explored per result wanted (500 for the default pool of 200). With the
# ef_construction 512 graph built in one go, 250 found 0.98 of the exact top 10 at 200,000
# memories and 500 all of it (dense p95 16.8 ms; 1,000, pgvector's maximum, 27.5 ms). Graphs
# built insert by insert differ (random levels): at 500, two found 1.00 and one 0.97.
EF_PER_RESULT = 2.5
COUNT_TTL_SECONDS = 30.0
DOCUMENTS_CAP = 100_000
DOCUMENTS_TTL_SECONDS = 300.0
PLAN_BY_INDEX = {"enable_seqscan": "off", "enable_hashjoin": "off", "enable_mergejoin": "off"}


def memory_from_row(row: Sequence[Any]) -> Memory:
    return Memory(*row[:12])


def vector_text(vector: Vector) -> str:
    """pgvector's text form of a float32 little-endian vector (9 digits: exact for float32)."""
    from array import array

    values = array("f")
    values.frombytes(vector)
    return "[" + ",".join(f"{v:.9g}" for v in values) + "]"


def scope_sql(scope: Scope, alias: str = "m") -> tuple[str, list[Any]]:
    sql, params = f" AND {alias}.kind = %s", [scope.kind]
    if scope.session_id is not None:
        sql += f" AND {alias}.session_id = %s"
        params.append(scope.session_id)
    elif scope.exact:
        sql += f" AND {alias}.session_id IS NULL"
    return sql, params


def bm25_idf(df: int, total: int) -> float:
    return math.log((total - df + 0.5) / (df + 0.5) + 1.0)


class PgRetrieval:
    """Keyword and vector candidate search of one tenant."""

    def __init__(self, pool: PgPool) -> None:
        self._pool = pool
        self._tag = tenant_tag(pool.tenant)
        self._counts: dict[Any, tuple[float, int]] = {}
        self._recent_frequencies: tuple[float, Any, list[int]] | None = None
        self._one_word: float | None = None

    # -- shared ----------------------------------------------------------------------------
    def _cached(self, key: Any, count: Any, ttl: float = COUNT_TTL_SECONDS) -> int:
        now = time.monotonic()
        hit = self._counts.get(key)
        if hit is not None and now - hit[0] < ttl:
            return hit[1]
        value = int(count())
        self._counts[key] = (now, value)
        return value

    def forget_counts(self) -> None:
        self._counts.clear()

    def frequencies(self, queries: Sequence[str], cap: int, column: str = "terms") -> list[int]:
        """Documents of this tenant matching each tsquery, counted up to `cap`.

        Counted from the GIN index: the lexemes' tenant tag already confines them to the
        tenant, and a subquery that selects no column lets PostgreSQL skip reading the rows
        of all-visible pages for single words (a phrase's positions are checked in its rows).
        Recall asks twice for the same words (keyword_search, then keyword_ideal): the last
        answer is reused for a second.
        """
        key = (tuple(queries), cap, column)
        recent = self._recent_frequencies
        if recent is not None and recent[1] == key and time.monotonic() - recent[0] < 1.0:
            return recent[2]

        def count(cur: Any) -> list[Any]:
            cur.execute(
                f"SELECT g.i, (SELECT count(*) FROM (SELECT FROM {TERMS} t "
                f"WHERE t.{column} @@ g.q::tsquery LIMIT %s) x) "
                "FROM unnest(%s::text[]) WITH ORDINALITY AS g(q, i) ORDER BY g.i",
                (cap, list(queries)),
            )
            return list(cur.fetchall())

        found = [int(r[1]) for r in self._pool.run(count, PLAN_BY_INDEX)]
        self._recent_frequencies = (time.monotonic(), key, found)
        return found

    def keyword_ideal(self, groups: Sequence[Sequence[str]]) -> float:
        """Sum of the groups' IDFs times the score of one word in a memory of typical length
        (the same saturated ts_rank_cd that keyword_search sums)."""
        asked = query_groups(stem_groups([list(g) for g in groups]))[:MAX_GROUPS]
        if not asked:
            return 0.0
        df = self.frequencies([group_query(g, self._tag) for g in asked], MIN_POSTINGS + 1,
                              "recall")
        total = max(self.documents(), *df, 1)
        if self._one_word is None:
            words = " ".join(f"w{i}:{i + 1}A" for i in range(TYPICAL_WORDS))
            self._one_word = float(self._pool.read(
                f"SELECT ts_rank_cd('{RECALL_WEIGHTS}', %s::tsvector, 'w0'::tsquery, "
                f"{RANK_NORMALISATION})", (words,),
            )[0][0])
        return self._one_word * sum(bm25_idf(d, total) for d in df)

    def documents(self) -> int:
        """The tenant's memories for IDF, counted up to a cap and cached: IDF only needs
        the order of magnitude, and an exact count would cost a scan of a large tenant."""
        return self._cached("documents", lambda: self._pool.read(
            f"SELECT count(*) FROM (SELECT 1 FROM {MEMORIES} WHERE tenant = %s LIMIT %s) x",
            (self._pool.tenant, DOCUMENTS_CAP),
        )[0][0], DOCUMENTS_TTL_SECONDS)

    def score_sql(
        self, groups: Sequence[Sequence[str]], frequencies: Sequence[int], prefix_last: bool,
        recall: bool = False,
    ) -> tuple[str, list[Any]]:
        """Sum over groups of IDF x saturated ts_rank_cd, for rows of memory_terms `t`: the
        words as written (list search) or, for `recall`, the weighted stems and context."""
        rank = f"ts_rank_cd('{RECALL_WEIGHTS}', t.recall, " if recall else "ts_rank_cd(t.terms, "
        total = max(self.documents(), *frequencies, 1)
        parts, params = [], []  # type: list[str], list[Any]
        last = len(groups) - 1
        for index, (group, df) in enumerate(zip(groups, frequencies, strict=True)):
            query = group_query(group, self._tag, prefix_last and index == last)
            # ts_rank_cd is 0 for a group the memory lacks (a phrase must be adjacent too).
            parts.append(f"%s * {rank}%s::tsquery, {RANK_NORMALISATION})")
            params += [bm25_idf(df, total), query]
        return "(" + " + ".join(parts) + ")", params

    # -- keyword ---------------------------------------------------------------------------
    def _prune_common(
        self, groups: list[tuple[str, ...]], limit: int
    ) -> tuple[list[tuple[str, ...]], list[int]]:
        """The rarest groups whose postings fit the budget (see sqlite_search._prune_common);
        none when even the rarest is above it. Frequencies are counted up to the budget."""
        budget = max(MIN_POSTINGS, POSTINGS_PER_RESULT * limit)
        df = self.frequencies([group_query(g, self._tag) for g in groups], budget + 1, "recall")
        ranked = sorted(
            ((g, d) for g, d in zip(groups, df, strict=True) if d), key=lambda p: (p[1], p[0])
        )
        kept: list[tuple[tuple[str, ...], int]] = []
        spent = 0
        for group, cost in ranked:
            if spent + cost > budget:
                break
            kept.append((group, cost))
            spent += cost
        return [g for g, _ in kept], [c for _, c in kept]

    def keyword_search(
        self, groups: Sequence[Sequence[str]], scope: Scope, limit: int
    ) -> list[Scored]:
        asked = query_groups(stem_groups([list(g) for g in groups]))[:MAX_GROUPS]
        if not asked or limit < 1:
            return []
        kept, df = self._prune_common(asked, limit)
        if not kept:
            return []
        score, score_params = self.score_sql(kept, df, prefix_last=False, recall=True)
        where, params = scope_sql(scope)
        hits = (
            f"WITH hits AS MATERIALIZED (SELECT t.seq, {score} AS score FROM {TERMS} t "
            "WHERE t.tenant = %s AND t.recall @@ %s::tsquery)"
        )
        hit_params = [*score_params, self._pool.tenant, any_query(kept, self._tag)]
        select = (
            f"SELECT {COLUMNS}, h.score FROM {{source}} h JOIN {MEMORIES} m ON m.seq = h.seq "
            f"WHERE m.tenant = %s AND m.superseded_by IS NULL{where} "
            "ORDER BY h.score DESC, m.created_at DESC, m.id LIMIT %s"
        )
        tail = [self._pool.tenant, *params, limit]
        wanted = 2 * limit + 20
        # Only worth it when there are more candidates than the fast path would look up.
        fast = scope.session_id is None and not scope.exact and sum(df) > wanted

        def search(cur: Any) -> list[Any]:
            if fast:
                # Nearly every match is in scope: look up only the best-scored candidates
                # (all of those tied with the last one too). Anything outside them scores
                # lower than each of them, so `limit` rows found among them are the answer.
                cur.execute(
                    f"{hits}, top AS (SELECT * FROM hits WHERE score >= (SELECT min(score) "
                    "FROM (SELECT score FROM hits ORDER BY score DESC LIMIT %s) x)) "
                    + select.format(source="top"),
                    [*hit_params, wanted, *tail],
                )
                rows = list(cur.fetchall())
                if len(rows) == limit:
                    return rows
            cur.execute(f"{hits} " + select.format(source="hits"), [*hit_params, *tail])
            return list(cur.fetchall())

        # At most a budget of candidates, found through the GIN index and each looked up by
        # its key. The planner prices a tsquery test far too low and would otherwise read the
        # whole keyword table, or the whole memories table for a hash join.
        rows = self._pool.run(search, PLAN_BY_INDEX)
        return [Scored(memory_from_row(r), float(r[12])) for r in rows]

    # -- dense -----------------------------------------------------------------------------
    def _scope_vectors(self, model_key: str, dims: int, scope: Scope) -> int:
        where, params = scope_sql(scope)
        return self._cached((model_key, dims, scope), lambda: self._pool.read(
            f"SELECT count(*) FROM (SELECT 1 FROM {MEMORIES} m WHERE m.tenant = %s "
            f"AND m.superseded_by IS NULL{where} AND m.embedding_model = %s AND m.dims = %s "
            "LIMIT %s) x",
            [self._pool.tenant, *params, model_key, dims, EXACT_SCOPE + 1],
        )[0][0])

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
        where, params = scope_sql(scope)
        text = vector_text(vector)
        filters = (
            f"m.tenant = %s AND m.dims = {dims} AND m.superseded_by IS NULL{where} "
            "AND m.embedding_model = %s"
        )
        base = [self._pool.tenant, *params, model_key]
        in_scope = self._scope_vectors(model_key, dims, scope)
        use_index = indexed and in_scope > SMALL_SCOPE and (
            in_scope > EXACT_SCOPE or 2 * in_scope >= self._table_rows()
        )
        if use_index:
            for ef in self._ef_steps(limit):
                rows = self._pool.run(
                    lambda cur: self._approximate(cur, dims, filters, [text, *base, text, limit]),
                    # Our count already chose the index: keep the planner from sorting the
                    # whole scope instead (its guess of what the filters keep is often off).
                    {"hnsw.ef_search": str(ef), "enable_sort": "off"},
                )
                # The index filters after its search: a scope that is a small share of the
                # index can come back short. Then widen the search, and at last go exact.
                if len(rows) >= limit:
                    return [Scored(memory_from_row(r), float(r[12])) for r in rows]
        rows = self._pool.read(
            f"SELECT {COLUMNS}, 1 - (m.embedding <=> %s::vector) AS similarity "
            f"FROM {MEMORIES} m WHERE {filters} "
            "ORDER BY similarity DESC, m.created_at DESC, m.id LIMIT %s",
            [text, *base, limit],
        )
        return [Scored(memory_from_row(r), float(r[12])) for r in rows]

    @staticmethod
    def _ef_steps(limit: int) -> list[int]:
        """hnsw.ef_search values to try: EF_PER_RESULT x `limit` first, then the maximum."""
        first = min(EF_SEARCH_MAX, max(EF_SEARCH_MIN, int(EF_PER_RESULT * limit)))
        return [first] if first >= EF_SEARCH_MAX else [first, EF_SEARCH_MAX]

    @staticmethod
    def _approximate(cur: Any, dims: int, filters: str, params: list[Any]) -> list[Any]:
        cur.execute(
            f"SELECT * FROM (SELECT {COLUMNS}, "
            f"1 - (m.embedding::vector({dims}) <=> %s::vector({dims})) AS similarity "
            f"FROM {MEMORIES} m WHERE {filters} "
            f"ORDER BY m.embedding::vector({dims}) <=> %s::vector({dims}) LIMIT %s) c "
            "ORDER BY c.similarity DESC, c.created_at DESC, c.id",
            params,
        )
        return list(cur.fetchall())
