"""Listing and export pages of the SQLite store: filtered, sorted pages for people and tools,
and memories in store order for export."""

from __future__ import annotations

from typing import Any

from tinycontext.domain.listing import ListQuery
from tinycontext.domain.memory import Memory, format_timestamp, format_timestamp_ceil
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import Page, Scored

from .connection import ConnectionPool
from .filtering import filter_sql, lifecycle_sql
from .rows import COLUMNS, WIDTH, memory_from_row
from .search import fts_all_prefixes

# Orders that SQL takes from the recall counts.
BY_RECALLS = ("stale", "recalled")

LIST_BM25 = "bm25(memory_fts, 1.0, 0.0, 0.0)"  # list search ranks by the words as written


def browse(pool: ConnectionPool, query: ListQuery) -> Page:
    """A page of memories filtered and sorted for listing (the Store port's browse)."""
    params: list[Any] = []
    if query.superseded:
        joins, where = "", " WHERE m.superseded_by IS NOT NULL"
    else:
        life, params = lifecycle_sql(query.filters, "m")
        joins, where = "", " WHERE 1 = 1" + life
    labels, label_params = filter_sql(query.filters, "m")
    where += labels
    params += label_params
    if query.search:
        joins = " JOIN memory_fts ON memory_fts.rowid = m.seq"
        where += " AND memory_fts MATCH ?"
        # List search reads the words as written (prefixes), never stems or context.
        params.append(f"{{terms}} : ({fts_all_prefixes(query.search)})")
    # A unary + keeps the planner off a column's indexes. With search, the keyword index
    # must drive: walking a session (or kind, or date) index and asking FTS5 about each row
    # costs a full match per row (seconds when both are large). In the stale orders, their
    # own index must drive (a walk that stops after a page), not the kind index and a sort.
    plain = "+m." if query.search else "m."
    if query.session_id is not None:
        where += f" AND {plain}session_id = ?"
        params.append(query.session_id)
    if query.kind is not None:
        kind = "+m." if query.search or query.sort in BY_RECALLS else "m."
        where += f" AND {kind}kind = ?"
        params.append(query.kind)
    if query.since is not None:
        where += f" AND {plain}created_at >= ?"
        params.append(format_timestamp_ceil(query.since))
    if query.until is not None:
        where += f" AND {plain}created_at <= ?"
        params.append(format_timestamp(query.until))
    if query.recalled is not None:
        where += " AND m.recall_count > 0" if query.recalled else " AND m.recall_count = 0"
    order = {
        "recent": "m.created_at DESC, m.seq DESC",
        "stale": "m.recall_count ASC, m.last_recalled_at ASC, m.created_at ASC, m.seq ASC",
        "recalled": "m.recall_count DESC, m.last_recalled_at DESC, m.created_at DESC, "
                    "m.seq DESC",
        "oldest": "m.created_at ASC, m.seq ASC",
        "relevance": f"{LIST_BM25}, m.created_at DESC, m.seq DESC",
    }[query.sort]
    score = f"-{LIST_BM25}" if query.search else "NULL"
    total = pool.read(f"SELECT count(*) FROM memories m{joins}{where}", params)[0][0] \
        if query.count else -1
    rows = pool.read(
        f"SELECT {COLUMNS}, {score} FROM memories m{joins}{where} ORDER BY {order} "
        "LIMIT ? OFFSET ?",
        [*params, query.limit, query.offset],
    )
    return Page(
        [Scored(memory_from_row(r), 0.0 if r[WIDTH] is None else float(r[WIDTH]))
         for r in rows],
        int(total),
    )


def session_counts(pool: ConnectionPool, limit: int) -> list[tuple[str, int]]:
    """Live memories per session, largest first: one pass over a covering partial index."""
    rows = pool.read(
        "SELECT session_id, count(*) AS n FROM memories WHERE superseded_by IS NULL "
        "AND session_id IS NOT NULL GROUP BY session_id ORDER BY n DESC, session_id LIMIT ?",
        [limit],
    )
    return [(str(name), int(n)) for name, n in rows]


def export_page(
    pool: ConnectionPool, after: int, limit: int, session_id: str | None
) -> list[tuple[int, Memory, Vector | None]]:
    where, params = "m.seq > ?", [after]  # type: tuple[str, list[Any]]
    if session_id is not None:
        where += " AND m.session_id = ?"
        params.append(session_id)
    rows = pool.read(
        f"SELECT {COLUMNS}, m.seq, m.embedding FROM memories m WHERE {where} "
        "ORDER BY m.seq LIMIT ?",
        [*params, limit],
    )
    return [
        (int(r[WIDTH]), memory_from_row(r), None if r[WIDTH + 1] is None else bytes(r[WIDTH + 1]))
        for r in rows
    ]
