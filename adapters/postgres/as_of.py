"""Dense search "as of" a moment in PostgreSQL: the versions live then are the current ones
made by then and the replaced ones made by then and replaced after it. Each part has its own
HNSW index (live and replaced versions of one dimension), searched with the time window as a
filter; pgvector filters after its search, so a part can come back short, and its rows are
then certain only down to the last one it returned. The merged answer is kept when every
short part reached down to the merged answer's last score; a part that did not is searched
exactly (through the created-time or supersede-time index) and merged again. Versions
replaced since the last upkeep are not in the replaced versions' index yet: they are a third
part, always searched exactly (they are few)."""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from tinycontext.domain.labels import MemoryFilter
from tinycontext.ports.store import Scope, Scored

from .connection import PgPool
from .filtering import filter_sql
from .rows import (
    MEMORIES,
    WIDTH,
    exact_nearest_sql,
    memory_from_row,
    probe_nearest,
    scope_sql,
    vector_text,
)

# Each part's index probe explores enough candidates to reach the merged answer's depth
# (a part's probe returns its passing share of them): `limit` x its index's rows / the rows
# live at the moment, both estimated from a sample of the tenant's creation and supersede
# times, times this margin. A probe that falls short is tried again at pgvector's maximum,
# then the part is searched exactly; so is one whose estimate is far beyond that maximum.
MARGIN = 1.6
FEW_MORE = 4
EF_SEARCH_MIN = 40
EF_SEARCH_MAX = 1000
EF_PER_RESULT = 2.5  # the first probe without a sample, as in an unfiltered search
SAMPLE_ROWS = 4000  # rows of the tenant the time sample aims at
MIN_SAMPLE = 500  # fewer (a small tenant of a large table): no estimate

_LIVE = "m.superseded_by IS NULL"
_REPLACED = ("m.superseded_by IS NOT NULL AND m.history_pending IS NULL "
             "AND m.superseded_at > %s")
_PENDING = "m.superseded_by IS NOT NULL AND m.history_pending AND m.superseded_at > %s"


@dataclass(frozen=True)
class TimeSample:
    """Creation times of sampled live versions (sorted) and (creation, supersede) times of
    sampled replaced ones."""

    live: list[str]
    replaced: list[tuple[str, str]]
    others: float  # rows of the whole table per row of the tenant (1: a table of its own)

    def probes(self, as_of: str, limit: int, own_index: bool) -> tuple[int, int]:
        """First probe's ef_search of the live and the replaced part (0: search exactly).
        The replaced versions' index is table-wide; the live one is too unless the tenant
        has its own (`own_index`)."""
        live = bisect_right(self.live, as_of)
        replaced = sum(1 for made, gone in self.replaced if made <= as_of < gone)

        def ef(indexed: float, passing: int) -> int:
            if passing == 0:
                return 0  # (almost) none of the part is live then: exact is cheap
            # A part with few rows in the answer needs a few more: the depth of a handful
            # of rows varies more.
            wanted = math.ceil(MARGIN * limit * indexed / (live + replaced)
                               + FEW_MORE * indexed / passing)
            return 0 if wanted > 2 * EF_SEARCH_MAX else min(EF_SEARCH_MAX,
                                                            max(EF_SEARCH_MIN, wanted))

        return (ef(len(self.live) * (1.0 if own_index else self.others), live),
                ef(len(self.replaced) * self.others, replaced))


def time_sample(pool: PgPool, table_rows: int, model_key: str, dims: int) -> TimeSample | None:
    """A sample of the tenant's version times from a share of the table's pages (None when
    too few of them are the tenant's)."""
    share = min(100.0, max(0.01, 100.0 * SAMPLE_ROWS / max(1, table_rows)))
    rows = pool.read(
        f"SELECT m.created_at, m.superseded_at, m.superseded_by IS NULL FROM {MEMORIES} m "
        "TABLESAMPLE SYSTEM (%s::real) WHERE m.tenant = %s AND m.dims = %s "
        "AND m.embedding_model = %s",
        [share, pool.tenant, dims, model_key],
    )
    if len(rows) < MIN_SAMPLE:
        return None
    return TimeSample(sorted(str(r[0]) for r in rows if r[2]),
                      [(str(r[0]), str(r[1])) for r in rows if not r[2] and r[1] is not None],
                      max(1.0, table_rows * share / 100.0 / len(rows)))


class _Part:
    def __init__(self, condition: str, params: list[Any], first: int) -> None:
        self.condition, self.params = condition, params
        self.rows: list[Scored] = []
        # ef_search of each search still to try; 0 is the exact search (always the last)
        self.steps = [first, EF_SEARCH_MAX, 0] if 0 < first < EF_SEARCH_MAX else (
            [first, 0] if first else [0])

    @property
    def exact(self) -> bool:
        return not self.steps


def as_of_nearest(pool: PgPool, vector: bytes, model_key: str, scope: Scope,
                  filters: MemoryFilter, limit: int, sample: TimeSample | None,
                  indexed: bool, own_index: bool = False) -> list[Scored]:
    """The best `limit` versions live at `filters.as_of` that pass the rest of the filter."""
    as_of = str(filters.as_of)
    dims = len(vector) // 4
    where, params = scope_sql(scope)
    more, more_params = filter_sql(filters, pool.tenant)
    tail = (f" AND m.created_at <= %s AND m.dims = {dims}{more}{where} "
            "AND m.embedding_model = %s")
    tail_params = [as_of, *more_params, *params, model_key]
    if not indexed:
        first = (0, 0)
    elif filters.labels:  # the labels' share of each part is unknown: the widest probe
        first = (EF_SEARCH_MAX, EF_SEARCH_MAX)
    elif sample is None:
        first = (min(EF_SEARCH_MAX, max(limit, int(EF_PER_RESULT * limit))),) * 2
    else:
        first = sample.probes(as_of, limit, own_index)
    parts = [_Part(_LIVE + tail, tail_params, first[0]),
             _Part(_REPLACED + tail, [as_of, *tail_params], first[1]),
             _Part(_PENDING + tail, [as_of, *tail_params], 0)]
    text = vector_text(vector)
    todo = parts
    while True:
        _each(pool, dims, text, todo, limit)
        merged = _merge([s for p in parts for s in p.rows], limit)
        cutoff = merged[-1].score if len(merged) == limit else float("-inf")
        # A probe that returned `limit` rows holds its part's best `limit`; a short one is
        # certain down to its last row only, which must reach the merged answer's last.
        todo = [p for p in parts if not p.exact and len(p.rows) < limit
                and (not p.rows or p.rows[-1].score > cutoff)]
        if not todo:
            return merged


def _each(pool: PgPool, dims: int, text: str, parts: list[_Part], limit: int) -> None:
    """The next search of each part, two at once on a connection each (each query is one
    process of the server); the pending versions' short exact search follows whichever
    probe ends first rather than taking a third connection of the pool for each recall."""
    def step(part: _Part) -> None:
        part.rows = _search(pool, dims, text, part, limit, part.steps.pop(0))

    if len(parts) == 1:
        step(parts[0])
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(2, len(parts))) as threads:
        list(threads.map(step, parts))


def _search(pool: PgPool, dims: int, text: str, part: _Part, limit: int,
            ef: int) -> list[Scored]:
    """The part's best `limit`: through its index at `ef` candidates, or exact at 0."""
    conditions = f"m.tenant = %s AND {part.condition}"
    params = [pool.tenant, *part.params]
    if ef:
        rows = pool.run(lambda cur: probe_nearest(cur, dims, conditions,
                                                  [text, *params, text, limit]),
                        # The window is the index's filter: keep the planner from sorting
                        # the part's rows instead.
                        {"hnsw.ef_search": str(ef), "enable_sort": "off"})
    else:
        rows = pool.read(exact_nearest_sql(conditions), [text, *params, limit])
    return [Scored(memory_from_row(r), float(r[WIDTH])) for r in rows]


def _merge(found: list[Scored], limit: int) -> list[Scored]:
    """Best score first, then the newest, then by id (the exact search's order)."""
    found.sort(key=lambda s: s.memory.id)
    found.sort(key=lambda s: s.memory.created_at, reverse=True)
    found.sort(key=lambda s: s.score, reverse=True)
    return found[:limit]
