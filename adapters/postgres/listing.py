"""Listing a tenant's memories (Store.browse) on PostgreSQL: filters, sorts, and list
search's keyword scores over the tsvector terms."""

from __future__ import annotations

from typing import Any

from tinycontext.domain.listing import ListQuery
from tinycontext.domain.memory import format_timestamp, format_timestamp_ceil
from tinycontext.ports.store import Page, Scored

from .connection import PgPool
from .filtering import filter_sql, lifecycle_sql
from .rows import COLUMNS, MEMORIES, TERMS, WIDTH, memory_from_row
from .search import PgRetrieval
from .text import all_query, group_query, query_groups

DF_CAP = 12_001  # document frequencies for list search's scores are counted up to this


def browse(pool: PgPool, search: PgRetrieval, tenant: str, tag: str, query: ListQuery) -> Page:
    """One page of a tenant's memories: filters, sort, and list search's keyword scores."""
    if query.superseded:
        where, params = " WHERE m.tenant = %s AND m.superseded_by IS NOT NULL", [tenant]
    else:
        life, life_params = lifecycle_sql(query.filters)
        where, params = " WHERE m.tenant = %s" + life, [tenant, *life_params]
    labels, label_params = filter_sql(query.filters, tenant)
    where += labels
    params += label_params
    source, score, score_params = f"{MEMORIES} m", "NULL::float8", []  # type: str, str, list[Any]
    if query.search:
        groups = query_groups(query.search)
        if not groups:  # nothing left after folding (e.g. only combining marks)
            return Page([], 0)
        frequencies = search.frequencies([group_query(g, tag, True) for g in groups], cap=DF_CAP)
        score, score_params = search.score_sql(groups, frequencies, prefixes=True)
        source = f"{TERMS} t JOIN {MEMORIES} m ON m.seq = t.seq"
        where += " AND t.tenant = %s AND t.terms @@ %s::tsquery"
        params += [tenant, all_query(groups, tag)]
    if query.session_id is not None:
        where += " AND m.session_id = %s"
        params.append(query.session_id)
    if query.kind is not None:
        where += " AND m.kind = %s"
        params.append(query.kind)
    if query.since is not None:
        where += " AND m.created_at >= %s"
        params.append(format_timestamp_ceil(query.since))
    if query.until is not None:
        where += " AND m.created_at <= %s"
        params.append(format_timestamp(query.until))
    if query.recalled is not None:
        where += " AND m.recall_count > 0" if query.recalled else " AND m.recall_count = 0"
    order = {
        "recent": "m.created_at DESC, m.seq DESC",
        "stale": "m.recall_count ASC, m.last_recalled_at ASC NULLS FIRST, m.created_at ASC, "
                 "m.seq ASC",
        "recalled": "m.recall_count DESC, m.last_recalled_at DESC NULLS LAST, "
                    "m.created_at DESC, m.seq DESC",
        "oldest": "m.created_at ASC, m.seq ASC",
        "relevance": "score DESC, m.created_at DESC, m.seq DESC",
    }[query.sort]

    def page(cur: Any) -> Page:
        total = -1
        if query.count:
            cur.execute(f"SELECT count(*) FROM {source}{where}", params)
            total = int(cur.fetchone()[0])
        cur.execute(
            f"SELECT {COLUMNS}, {score} AS score FROM {source}{where} ORDER BY {order} "
            "LIMIT %s OFFSET %s",
            [*score_params, *params, query.limit, query.offset],
        )
        hits = [
            Scored(memory_from_row(r), 0.0 if r[WIDTH] is None else float(r[WIDTH]))
            for r in cur.fetchall()
        ]
        return Page(hits, total)

    return pool.run(page)


def session_counts(pool: PgPool, tenant: str, limit: int) -> list[tuple[str, int]]:
    """A tenant's live memories per session, largest first (ties by name)."""
    rows = pool.read(
        f"SELECT session_id, count(*) AS n FROM {MEMORIES} WHERE tenant = %s "
        "AND superseded_by IS NULL AND session_id IS NOT NULL "
        "GROUP BY session_id ORDER BY n DESC, session_id LIMIT %s",
        (tenant, limit),
    )
    return [(str(name), int(n)) for name, n in rows]
