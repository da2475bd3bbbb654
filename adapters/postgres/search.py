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

from tinycontext.domain.context import KEYWORD_CONTEXT_WEIGHT
from tinycontext.domain.text import stem_groups
from tinycontext.ports.store import Scope, Scored

from .connection import PgPool
from .dense import PgDenseRetrieval
from .filtering import where_sql
from .rows import COLUMNS, MEMORIES, TERMS, WIDTH, memory_from_row, scope_sql
from .text import any_query, group_query, query_groups, recall_weights, tenant_tag

RANK_NORMALISATION = 1 | 32
# Words in a memory of typical length (15-40 words), for keyword_ideal.
TYPICAL_WORDS = 24
# Keyword side: the postings budget per query of the SQLite store (sqlite_search.py). Unlike
# SQLite, which still scores a lone common word in up to 4x the budget, a query whose every
# word is above the budget gets no keyword candidates: scoring costs PostgreSQL more than
# FTS5 (it reads each candidate's tsvector), and the
# order among thousands of memories sharing one common word is mostly their length.
MIN_POSTINGS = 3000
POSTINGS_PER_RESULT = 10
MAX_GROUPS = 64
DOCUMENTS_CAP = 100_000
DOCUMENTS_TTL_SECONDS = 300.0
PLAN_BY_INDEX = {"enable_seqscan": "off", "enable_hashjoin": "off", "enable_mergejoin": "off"}


def bm25_idf(df: int, total: int) -> float:
    return math.log((total - df + 0.5) / (df + 0.5) + 1.0)


class PgRetrieval(PgDenseRetrieval):
    """Keyword and vector candidate search of one tenant (the vector side in dense.py)."""

    def __init__(self, pool: PgPool, keyword_context_weight: float = KEYWORD_CONTEXT_WEIGHT,
                 ) -> None:
        super().__init__(pool)
        self._weights = recall_weights(keyword_context_weight)
        self._tag = tenant_tag(pool.tenant)
        self._recent_frequencies: tuple[float, Any, list[int]] | None = None
        self._one_word: float | None = None

    # -- shared ----------------------------------------------------------------------------
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
                f"SELECT ts_rank_cd('{self._weights}', %s::tsvector, 'w0'::tsquery, "
                f"{RANK_NORMALISATION})", (words,),
            )[0][0])
        return self._one_word * sum(bm25_idf(d, total) for d in df)

    def keyword_rarity(self, words: Sequence[str]) -> dict[str, float]:
        """Each stemmed word's IDF over the tenant (its recall column), as keyword_ideal's."""
        asked = query_groups([[w] for w in words])[:MAX_GROUPS]
        if not asked:
            return {}
        df = self.frequencies([group_query(g, self._tag) for g in asked], MIN_POSTINGS + 1,
                              "recall")
        total = max(self.documents(), *df, 1)
        return {g[0]: bm25_idf(d, total) for g, d in zip(asked, df, strict=True) if d > 0}

    def documents(self) -> int:
        """The tenant's memories for IDF, counted up to a cap and cached: IDF only needs
        the order of magnitude, and an exact count would cost a scan of a large tenant."""
        return self._cached("documents", lambda: self._pool.read(
            f"SELECT count(*) FROM (SELECT 1 FROM {MEMORIES} WHERE tenant = %s LIMIT %s) x",
            (self._pool.tenant, DOCUMENTS_CAP),
        )[0][0], DOCUMENTS_TTL_SECONDS)

    def score_sql(
        self, groups: Sequence[Sequence[str]], frequencies: Sequence[int], prefixes: bool,
        recall: bool = False,
    ) -> tuple[str, list[Any]]:
        """Sum over groups of IDF x saturated ts_rank_cd, for rows of memory_terms `t`: the
        words as written (list search) or, for `recall`, the weighted stems and context."""
        rank = f"ts_rank_cd('{self._weights}', t.recall, " if recall else "ts_rank_cd(t.terms, "
        total = max(self.documents(), *frequencies, 1)
        parts, params = [], []  # type: list[str], list[Any]
        for group, df in zip(groups, frequencies, strict=True):
            query = group_query(group, self._tag, prefixes)
            # ts_rank_cd is 0 for a group the memory lacks (a phrase must be adjacent too).
            if recall:
                # ...so recall skips it for those: most candidates hold one group of several,
                # and a match test (a binary search in the tsvector) costs far less than
                # ts_rank_cd (which measures the whole tsvector and builds a cover). Same
                # scores to the bit: the skipped term was 0 (test_pg_keyword_shape.py).
                parts.append(f"CASE WHEN t.recall @@ %s::tsquery THEN %s * {rank}%s::tsquery, "
                             f"{RANK_NORMALISATION}) ELSE 0 END")
                params += [query, bm25_idf(df, total), query]
                continue
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
        score, score_params = self.score_sql(kept, df, prefixes=False, recall=True)
        where, params = scope_sql(scope)
        hits = (
            f"WITH hits AS MATERIALIZED (SELECT t.seq, {score} AS score FROM {TERMS} t "
            "WHERE t.tenant = %s AND t.recall @@ %s::tsquery)"
        )
        hit_params = [*score_params, self._pool.tenant, any_query(kept, self._tag)]
        life, life_params = where_sql(scope.filters, self._pool.tenant)
        select = (
            f"SELECT {COLUMNS}, h.score FROM {{source}} h JOIN {MEMORIES} m ON m.seq = h.seq "
            f"WHERE m.tenant = %s{life}{where} "
            "ORDER BY h.score DESC, m.created_at DESC, m.id LIMIT %s"
        )
        tail = [self._pool.tenant, *life_params, *params, limit]
        wanted = 2 * limit + 20
        # Only worth it when there are more candidates than the fast path would look up
        # (and all but a few are in scope: not under a filter).
        fast = (scope.session_id is None and not scope.exact and sum(df) > wanted
                and not scope.filters)

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
        return [Scored(memory_from_row(r), float(r[WIDTH])) for r in rows]
