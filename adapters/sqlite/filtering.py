"""Tags, metadata, time windows and "as of" in the SQLite store: the label rows a memory's
tags and metadata are indexed by, and the SQL conditions of a filter (domain.labels)."""

from __future__ import annotations

from typing import Any

from tinycontext.domain.labels import MemoryFilter, labels_of
from tinycontext.domain.memory import Memory


def history_id(model_id: int) -> int:
    """The `vector_index.model_id` of a model's replaced versions (schema v8)."""
    return -model_id


def write_labels(conn: Any, seq: int, memory: Memory) -> None:
    labels = labels_of(memory.tags, memory.metadata)
    if labels:
        conn.executemany(
            "INSERT OR IGNORE INTO memory_labels(label, seq) VALUES (?, ?)",
            [(label, seq) for label in labels],
        )


def drop_labels(conn: Any, seq: int, memory: Memory) -> None:
    """Remove a memory's label rows (found by their key: no index on seq alone)."""
    labels = labels_of(memory.tags, memory.metadata)
    if labels:
        conn.executemany(
            "DELETE FROM memory_labels WHERE label = ? AND seq = ?",
            [(label, seq) for label in labels],
        )


def lifecycle_sql(filters: MemoryFilter | None, alias: str) -> tuple[str, list[Any]]:
    """Which versions qualify: the live ones, or with `as_of` those live at that time
    (created by then, not replaced until after it)."""
    if filters is None or filters.as_of is None:
        return f" AND {alias}.superseded_by IS NULL", []
    return (
        f" AND {alias}.created_at <= ? AND ({alias}.superseded_by IS NULL "
        f"OR {alias}.superseded_at > ?)",
        [filters.as_of, filters.as_of],
    )


def filter_sql(
    filters: MemoryFilter | None, alias: str, plain: str = "", each: bool = False
) -> tuple[str, list[Any]]:
    """The time window and label conditions (not the lifecycle). `plain` "+" keeps the
    planner off the created_at index (when another index must drive); `each`: labels are
    looked up row by row (for a few given rows; the default lets a label's rows drive)."""
    if not filters:
        return "", []
    sql, params = "", []  # type: tuple[str, list[Any]]
    if filters.since is not None:
        sql += f" AND {plain}{alias}.created_at >= ?"
        params.append(filters.since)
    if filters.until is not None:
        sql += f" AND {plain}{alias}.created_at <= ?"
        params.append(filters.until)
    for label in filters.labels:
        if each:
            sql += (" AND EXISTS (SELECT 1 FROM memory_labels l WHERE l.label = ? "
                    f"AND l.seq = {alias}.seq)")
        else:
            sql += f" AND {alias}.seq IN (SELECT seq FROM memory_labels WHERE label = ?)"
        params.append(label)
    return sql, params


def where_sql(
    filters: MemoryFilter | None, alias: str, each: bool = False
) -> tuple[str, list[Any]]:
    """Lifecycle and filter conditions together (each starts with " AND ")."""
    life, life_params = lifecycle_sql(filters, alias)
    more, more_params = filter_sql(filters, alias, each=each)
    return life + more, life_params + more_params
