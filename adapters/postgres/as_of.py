"""Dense search "as of" a moment in PostgreSQL: the versions live then are the current ones
made by then and the replaced ones made by then and replaced after it. Each part has its own
HNSW index (live and replaced versions of one dimension), searched with the time window as a
filter; pgvector filters after its search, so a part can come back short, and its rows are
then certain only down to the last one it returned. The merged answer is kept when every
short part reached down to the merged answer's last score; a part that did not is searched
exactly (through the created-time or supersede-time index) and merged again."""

from __future__ import annotations

from typing import Any

from tinycontext.domain.labels import MemoryFilter
from tinycontext.ports.store import Scope, Scored

from .connection import PgPool
from .filtering import filter_sql
from .rows import COLUMNS, MEMORIES, WIDTH, memory_from_row, scope_sql, vector_text

# Candidates each part's index probe explores (pgvector's maximum): a part passing the
# window is a share of its index, and the probe returns about that share of them.
AS_OF_EF_SEARCH = 1000

_LIVE = "m.superseded_by IS NULL"
_REPLACED = "m.superseded_by IS NOT NULL AND m.superseded_at > %s"


class _Part:
    def __init__(self, condition: str, params: list[Any]) -> None:
        self.condition, self.params = condition, params
        self.rows: list[Scored] = []
        self.exact = False


def as_of_nearest(pool: PgPool, vector: bytes, model_key: str, scope: Scope,
                  filters: MemoryFilter, limit: int, indexed: bool) -> list[Scored]:
    """The best `limit` versions live at `filters.as_of` that pass the rest of the filter."""
    as_of = str(filters.as_of)
    dims = len(vector) // 4
    where, params = scope_sql(scope)
    more, more_params = filter_sql(filters, pool.tenant)
    tail = (f" AND m.created_at <= %s AND m.dims = {dims}{more}{where} "
            "AND m.embedding_model = %s")
    tail_params = [as_of, *more_params, *params, model_key]
    parts = [_Part(_LIVE + tail, tail_params), _Part(_REPLACED + tail, [as_of, *tail_params])]
    text = vector_text(vector)
    for part in parts:
        if indexed:
            part.rows = _search(pool, dims, text, part, limit, approximate=True)
        else:
            part.rows, part.exact = _search(pool, dims, text, part, limit, False), True
    while True:
        merged = _merge([s for p in parts for s in p.rows], limit)
        cutoff = merged[-1].score if len(merged) == limit else float("-inf")
        # A probe that returned `limit` rows holds its part's best `limit`; a short one is
        # certain down to its last row only, which must reach the merged answer's last.
        unsure = [p for p in parts if not p.exact and len(p.rows) < limit
                  and (not p.rows or p.rows[-1].score > cutoff)]
        if not unsure:
            return merged
        for part in unsure:
            part.rows, part.exact = _search(pool, dims, text, part, limit, False), True


def _search(pool: PgPool, dims: int, text: str, part: _Part, limit: int,
            approximate: bool) -> list[Scored]:
    conditions = f"m.tenant = %s AND {part.condition}"
    params = [pool.tenant, *part.params]
    if approximate:
        rows = pool.run(lambda cur: _probe(cur, dims, conditions, [text, *params, text, limit]),
                        # The window is the index's filter: keep the planner from sorting
                        # the part's rows instead.
                        {"hnsw.ef_search": str(AS_OF_EF_SEARCH), "enable_sort": "off"})
    else:
        rows = pool.read(
            f"SELECT {COLUMNS}, 1 - (m.embedding <=> %s::vector) AS similarity "
            f"FROM {MEMORIES} m WHERE {conditions} "
            "ORDER BY similarity DESC, m.created_at DESC, m.id LIMIT %s",
            [text, *params, limit],
        )
    return [Scored(memory_from_row(r), float(r[WIDTH])) for r in rows]


def _probe(cur: Any, dims: int, conditions: str, params: list[Any]) -> list[Any]:
    cur.execute(
        f"SELECT * FROM (SELECT {COLUMNS}, "
        f"1 - (m.embedding::vector({dims}) <=> %s::vector({dims})) AS similarity "
        f"FROM {MEMORIES} m WHERE {conditions} "
        f"ORDER BY m.embedding::vector({dims}) <=> %s::vector({dims}) LIMIT %s) c "
        "ORDER BY c.similarity DESC, c.created_at DESC, c.id",
        params,
    )
    return list(cur.fetchall())


def _merge(found: list[Scored], limit: int) -> list[Scored]:
    """Best score first, then the newest, then by id (the exact search's order)."""
    found.sort(key=lambda s: s.memory.id)
    found.sort(key=lambda s: s.memory.created_at, reverse=True)
    found.sort(key=lambda s: s.score, reverse=True)
    return found[:limit]
