"""Recall's keyword score on PostgreSQL skips ts_rank_cd for the query groups a memory lacks
(a match test first): the scores and the ranked ids must be those of the plain sum it replaced,
to the bit, for single words, phrases, words found only in the context (weight B) and words
present in no memory."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from tests.contract.store_support import mem, new
from tests.pg_fixture import temporary_database
from tinycontext.adapters.postgres.search import RANK_NORMALISATION, bm25_idf
from tinycontext.adapters.postgres.store import PostgresStore
from tinycontext.adapters.postgres.text import (
    any_query,
    group_query,
    query_groups,
    recall_weights,
)
from tinycontext.domain.text import recall_terms, stem_groups
from tinycontext.ports.store import NewMemory, Scope

EPI = Scope("episodic")
WORDS = ("river boat engine north station ticket coffee morning train delay rain umbrella "
         "new york city bridge concert music guitar lesson teacher garden tomato").split()
QUESTIONS = [
    "river", "morning coffee", "train delay in the rain", "new york bridge",
    "guitar lesson with the teacher", "tomato garden north", "concert", "zebra",
    "umbrella station ticket engine boat", "york new", "city music morning river delay",
]


@pytest.fixture
def store(request: pytest.FixtureRequest) -> Iterator[PostgresStore]:
    with temporary_database(request) as url:
        pg = PostgresStore(url, tenant="shape")
        rng = np.random.default_rng(3)
        items, previous = [], None
        for n in range(1, 401):
            text = " ".join(rng.choice(WORDS, size=int(rng.integers(3, 30))))
            memory = mem(n, text, created=f"2026-07-{1 + n % 28:02d}T00:00:00Z")
            item = new(memory)
            if previous is not None and n % 3 == 0:  # context words at the lower weight
                item = NewMemory(item.memory, item.vector, previous.id, previous.content)
            items.append(item)
            previous = memory
        pg.add(items)
        yield pg
        pg.close()


def plain_sum(store: PostgresStore, groups: list[tuple[str, ...]], df: list[int],
              limit: int) -> tuple[list[tuple[str, float]], list[tuple[int, float]]]:
    """The score as it was computed before: every group's IDF x ts_rank_cd, summed."""
    search = store._search  # noqa: SLF001 - the reference needs the same IDF inputs
    total = max(search.documents(), *df, 1)
    tag = search._tag  # noqa: SLF001
    terms, params = [], []  # type: list[str], list[object]
    for group, d in zip(groups, df, strict=True):
        terms.append(f"%s * ts_rank_cd('{recall_weights()}', t.recall, %s::tsquery, "
                     f"{RANK_NORMALISATION})")
        params += [bm25_idf(d, total), group_query(group, tag)]
    score = "(" + " + ".join(terms) + ")"
    every = store._pool.read(  # noqa: SLF001
        f"SELECT t.seq, {score} FROM tinycontext.memory_terms t "
        "WHERE t.tenant = %s AND t.recall @@ %s::tsquery ORDER BY t.seq",
        [*params, "shape", any_query(groups, tag)])
    ranked = store._pool.read(  # noqa: SLF001
        f"SELECT m.id, {score} AS s FROM tinycontext.memory_terms t JOIN tinycontext.memories m "
        "ON m.seq = t.seq WHERE t.tenant = %s AND t.recall @@ %s::tsquery "
        "AND m.superseded_by IS NULL AND m.kind = 'episodic' "
        "ORDER BY s DESC, m.created_at DESC, m.id LIMIT %s",
        [*params, "shape", any_query(groups, tag), limit])
    return [(str(i), float(s)) for i, s in ranked], [(int(q), float(s)) for q, s in every]


@pytest.mark.parametrize("question", QUESTIONS)
def test_recall_keyword_scores_and_order_equal_the_plain_sum(
    store: PostgresStore, question: str
) -> None:
    search = store._search  # noqa: SLF001
    asked = query_groups(stem_groups([list(g) for g in recall_terms(question)]))
    for limit in (5, 60):
        kept, df = search._prune_common(asked, limit)  # noqa: SLF001
        hits = store.keyword_search(recall_terms(question), EPI, limit)
        if not kept:
            assert hits == [] and question == "zebra"
            continue
        expected, every = plain_sum(store, kept, df, limit)
        assert [(h.memory.id, h.score) for h in hits] == expected  # same ids, same floats
        score, params = search.score_sql(kept, df, prefixes=False, recall=True)
        now = store._pool.read(  # noqa: SLF001
            f"SELECT t.seq, {score} FROM tinycontext.memory_terms t "
            "WHERE t.tenant = %s AND t.recall @@ %s::tsquery ORDER BY t.seq",
            [*params, "shape", any_query(kept, search._tag)])  # noqa: SLF001
        assert [(int(q), float(s)) for q, s in now] == every and len(every) > 0
