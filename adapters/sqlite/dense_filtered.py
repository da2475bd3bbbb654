"""Dense search under a filter (tags, metadata, time window, "as of") in the SQLite store.

The filter is applied before the top `limit` is chosen, never to an unfiltered top list:
- with the model's mirrors (the usual case) tags, metadata and times are masks over the
  mirror's slots (mirror_masks, mirror_times), so its scan sees only qualifying vectors and
  its top is the filter's own; "as of" asks the mirror of live versions (those created by
  then) and the one of replaced versions (those live then). The exact step checks every
  condition again in SQL.
- without a mirror (more vectors than are held in memory): few qualifying memories (at most
  EXACT_ROWS, judged from the label and time indexes without reading rows) get exact
  cosines in SQL; many: the unfiltered search asked for enough more candidates that, at the
  filter's share of the store, `limit` of them qualify; its order is the unfiltered order,
  so the qualifying ones among its first N are the filter's own top. When too few qualify it
  asks again for four times as many, and past WIDEST falls back to the exact cosines. The
  replaced versions live at an "as of" moment are found by their supersede time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tinycontext.domain.labels import MemoryFilter, labels_of
from tinycontext.domain.memory import Memory
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import Scope, Scored

from .connection import ConnectionPool
from .dense_sql import sign_bits
from .filter_share import share as filter_share
from .filter_share import upper_bound
from .filtering import filter_sql, where_sql
from .mirror import VectorMirror
from .mirror_times import Reader, TimeFilter
from .rows import COLUMNS, WIDTH, memory_from_row, scope_sql

if TYPE_CHECKING:
    from .dense import DenseRetrieval

EXACT_ROWS = 4000
WIDEST = 20_000
MIN_RANKED = 64  # mirror candidates at least: room for the int8 codes' error at a small limit
SURPLUS = 1.5  # candidates asked for beyond the filter's expected share


def _passes(memory: Memory, filters: MemoryFilter, labels: set[str]) -> bool:
    if memory.superseded_by is not None:
        return False
    if filters.since is not None and memory.created_at < filters.since:
        return False
    if filters.until is not None and memory.created_at > filters.until:
        return False
    return not labels or labels.issubset(labels_of(memory.tags, memory.metadata))


def _label_rows(pool: ConnectionPool, label: str) -> Callable[[], list[int]]:
    return lambda: [int(r[0]) for r in pool.read(
        "SELECT seq FROM memory_labels WHERE label = ?", [label])]


def exact(
    pool: ConnectionPool, vector: Vector, model_key: str, conditions: str,
    params: list[Any], limit: int,
) -> list[Scored]:
    rows = pool.read(
        f"SELECT {COLUMNS}, 1.0 - vec_distance_cosine(m.embedding, ?) AS similarity "
        f"FROM memories m WHERE m.embedding_model = ?{conditions} "
        "ORDER BY similarity DESC, m.created_at DESC, m.id LIMIT ?",
        [vector, model_key, *params, limit],
    )
    return [Scored(memory_from_row(r), float(r[WIDTH])) for r in rows]


def _current(
    dense: DenseRetrieval, vector: Vector, model_key: str, scope: Scope, limit: int,
    in_scope: int,
) -> list[Scored]:
    """Live memories under a filter without `as_of`, searched in SQL (no mirror)."""
    filters = scope.filters
    assert filters is not None
    if upper_bound(dense.pool, filters, EXACT_ROWS + 1) > EXACT_ROWS:
        return _widened(dense, vector, model_key, scope, limit, in_scope)
    where, params = scope_sql(scope, "m")
    conditions, condition_params = where_sql(filters, "m")
    return exact(dense.pool, vector, model_key, conditions + where,
                 [*condition_params, *params], limit)


def _replaced(
    dense: DenseRetrieval, vector: Vector, model_key: str, scope: Scope, limit: int,
) -> list[Scored]:
    """Replaced versions that were live at `as_of`, searched in SQL (no mirror of them)."""
    filters = scope.filters
    assert filters is not None and filters.as_of is not None
    when = [filters.as_of, filters.as_of]
    where, params = scope_sql(scope, "m")
    older, older_params = filter_sql(filters, "m")
    return exact(
        dense.pool, vector, model_key,
        " AND m.superseded_by IS NOT NULL AND m.superseded_at > ? AND m.created_at <= ?"
        + older + where, [*when, *older_params, *params], limit,
    )


def _times_reader(pool: ConnectionPool, replaced: bool) -> Reader:
    """Rows' times for a mirror's slots: of the given seqs, or of every row from the index
    of created_at (live versions) or of supersede times (replaced ones), which hold them."""
    def read(seqs: list[int] | None) -> list[tuple[int, str, str | None]]:
        if seqs is not None:
            return pool.read(
                "SELECT m.seq, m.created_at, m.superseded_at FROM json_each(?) j "
                "CROSS JOIN memories m ON m.seq = j.value", [json.dumps(seqs)])
        if replaced:
            return pool.read(
                "SELECT seq, created_at, superseded_at FROM memories INDEXED BY "
                "memories_replaced_until WHERE superseded_by IS NOT NULL")
        return pool.read("SELECT seq, created_at, NULL FROM memories INDEXED BY memories_created")
    return read  # type: ignore[return-value]


def _masked(
    dense: DenseRetrieval, mirror: VectorMirror, vector: Vector, model_key: str, scope: Scope,
    limit: int, replaced: bool,
) -> list[Scored]:
    """The filter's best `limit` of one mirror (of live versions, or with `replaced` of the
    replaced ones live at `as_of`): labels and times masked in the mirror's own scan."""
    filters = scope.filters
    assert filters is not None
    until = filters.until
    if filters.as_of is not None:
        until = min(until or filters.as_of, filters.as_of)
    when = None
    if filters.since is not None or until is not None or replaced:
        when = TimeFilter(_times_reader(dense.pool, replaced), filters.since, until,
                          filters.as_of if replaced else None)
    seqs = mirror.candidates(
        vector, sign_bits(vector), replace(scope, filters=None), max(limit, MIN_RANKED),
        [(label, _label_rows(dense.pool, label)) for label in filters.labels], when)
    return dense.exact_order(seqs, vector, model_key, scope, limit)


def nearest(
    dense: DenseRetrieval, vector: Vector, model_key: str, scope: Scope, limit: int,
    in_scope: int,
) -> list[Scored]:
    """The `limit` closest memories that pass `scope.filters` (`in_scope`: about how many
    vectors the unfiltered scope holds)."""
    filters = scope.filters
    assert filters is not None
    dims = len(vector) // 4
    live = dense.mirror_for(model_key, dims)
    if filters.as_of is None:
        if live is not None:
            return _masked(dense, live, vector, model_key, scope, limit, replaced=False)
        return _current(dense, vector, model_key, scope, limit, in_scope)
    # Versions live now and made by then, and replaced versions that were live then.
    until = min(filters.until or filters.as_of, filters.as_of)
    current = replace(scope, filters=replace(filters, as_of=None, until=until))
    found = (_masked(dense, live, vector, model_key, current, limit, replaced=False)
             if live is not None
             else _current(dense, vector, model_key, current, limit, in_scope))
    history = dense.mirror_for(model_key, dims, history=True)
    found += (_masked(dense, history, vector, model_key, scope, limit, replaced=True)
              if history is not None else _replaced(dense, vector, model_key, scope, limit))
    found.sort(key=lambda s: s.memory.id)
    found.sort(key=lambda s: s.memory.created_at, reverse=True)
    found.sort(key=lambda s: s.score, reverse=True)
    return found[:limit]


def _widened(
    dense: DenseRetrieval, vector: Vector, model_key: str, scope: Scope, limit: int,
    in_scope: int,
) -> list[Scored]:
    """Many rows pass: the unfiltered search's candidates, as many more as the filter's
    share asks, with the filter applied in the exact step (only passing rows are scored)."""
    filters = scope.filters
    assert filters is not None
    plain = replace(scope, filters=None)
    share = max(filter_share(dense.pool, filters, in_scope), 1 / max(in_scope, 1))
    wanted = max(limit, math.ceil(SURPLUS * limit / share) if share < 1.0 else 0)
    labels = set(filters.labels)
    while wanted <= WIDEST:
        hits = dense.nearest(vector, model_key, plain, wanted)
        found = [h for h in hits if _passes(h.memory, filters, labels)][:limit]
        if len(found) >= limit or len(hits) < wanted:
            return found
        wanted *= 4
    where, params = scope_sql(scope, "m")
    conditions, condition_params = where_sql(filters, "m")
    return exact(dense.pool, vector, model_key, conditions + where,
                 [*condition_params, *params], limit)
