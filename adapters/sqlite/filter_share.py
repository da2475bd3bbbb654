"""How many memories a filter lets through, judged from the label and time indexes without
reading rows: it sizes a filtered search (how many unfiltered candidates to ask for) and
decides whether one is worth starting from the unfiltered order at all."""

from __future__ import annotations

import time
from typing import Any

from tinycontext.domain.labels import MemoryFilter

from .connection import ConnectionPool
from .ivf import count_ttl


def bounded(pool: ConnectionPool, sql: str, params: list[Any], cap: int) -> int:
    return int(pool.read(f"SELECT count(*) FROM ({sql} LIMIT ?)", [*params, cap])[0][0])


def upper_bound(pool: ConnectionPool, filters: MemoryFilter, cap: int) -> int:
    """At most how many memories the filter lets through, counted on indexes only (capped
    at `cap`; the rarest label or the time range decides)."""
    best = cap
    for label in filters.labels:
        best = min(best, bounded(
            pool, "SELECT 1 FROM memory_labels WHERE label = ?", [label], best))
    until = filters.until
    if filters.as_of is not None:
        until = min(until or filters.as_of, filters.as_of)
    if filters.since is not None or until is not None:
        best = min(best, bounded(
            pool, "SELECT 1 FROM memories WHERE created_at >= ? AND created_at <= ?",
            [filters.since or "", until or "~"], best))
    return best


SHARE_CAP = 5000  # index entries counted at most to size a broad filter's search
_label_counts: dict[tuple[str, str], tuple[float, int]] = {}


def label_count(pool: ConnectionPool, label: str) -> int:
    """Memories holding a label, cached a while (it only sizes the search)."""
    key, now = (str(pool.path), label), time.monotonic()
    hit = _label_counts.get(key)
    if hit is not None and now - hit[0] < count_ttl(hit[1]):
        return hit[1]
    count = int(pool.read("SELECT count(*) FROM memory_labels WHERE label = ?", [label])[0][0])
    if len(_label_counts) > 1024:
        _label_counts.clear()
    _label_counts[key] = (now, count)
    return count


def share(pool: ConnectionPool, filters: MemoryFilter, rows: int) -> float:
    """About the filter's share of `rows` memories: its rarest label's, or its time window's
    (counted on the index up to SHARE_CAP inside or outside the window; else a half). An
    "as of" counts as a window ending then (the versions replaced since are not counted)."""
    total = max(rows, 1)
    part = min([1.0, *(label_count(pool, label) / total for label in filters.labels)])
    until = filters.until
    if filters.as_of is not None:
        until = min(until or filters.as_of, filters.as_of)
    if filters.since is None and until is None:
        return part
    since, until = filters.since or "", until or "~"
    inside_sql = "SELECT 1 FROM memories WHERE created_at >= ? AND created_at <= ?"
    outside_sql = "SELECT 1 FROM memories WHERE created_at < ? OR created_at > ?"
    # A window that starts somewhere is mostly recent and small: count it; one that only
    # ends (an "as of", an until) is mostly large: count what it leaves out first.
    for sql, inside in ((inside_sql, True), (outside_sql, False))[
            :: 1 if filters.since is not None else -1]:
        found = bounded(pool, sql, [since, until], SHARE_CAP)
        if found < SHARE_CAP:
            return min(part, found / total if inside else 1.0 - found / total)
    return min(part, 0.5)
