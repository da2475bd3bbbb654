"""Tags, metadata, time windows and "as of" in the PostgreSQL store: the label rows of a
memory's tags and metadata (domain.labels) and the SQL conditions of a filter."""

from __future__ import annotations

from typing import Any

from tinycontext.domain.labels import MemoryFilter, labels_of
from tinycontext.ports.store import NewMemory

from .schema import SCHEMA

LABELS = f"{SCHEMA}.memory_labels"


def insert_labels(cur: Any, tenant: str, items: list[NewMemory]) -> None:
    rows = [
        (tenant, label, tenant, item.memory.id)
        for item in items for label in labels_of(item.memory.tags, item.memory.metadata)
    ]
    if rows:
        cur.executemany(
            f"INSERT INTO {LABELS} (tenant, label, seq) SELECT %s, %s, m.seq "
            f"FROM {SCHEMA}.memories m WHERE m.tenant = %s AND m.id = %s "
            "ON CONFLICT DO NOTHING",
            rows,
        )


def lifecycle_sql(filters: MemoryFilter | None, alias: str = "m") -> tuple[str, list[Any]]:
    """The live versions, or with `as_of` those live then."""
    if filters is None or filters.as_of is None:
        return f" AND {alias}.superseded_by IS NULL", []
    # The second arm names its rows as replaced: each arm then matches a partial index
    # (the live or the replaced versions' scope index) and the planner can join both.
    return (
        f" AND {alias}.created_at <= %s AND ({alias}.superseded_by IS NULL "
        f"OR ({alias}.superseded_by IS NOT NULL AND {alias}.superseded_at > %s))",
        [filters.as_of, filters.as_of],
    )


def filter_sql(
    filters: MemoryFilter | None, tenant: str, alias: str = "m"
) -> tuple[str, list[Any]]:
    """The time window and label conditions of a filter (not the lifecycle)."""
    if not filters:
        return "", []
    sql, params = "", []  # type: tuple[str, list[Any]]
    if filters.since is not None:
        sql += f" AND {alias}.created_at >= %s"
        params.append(filters.since)
    if filters.until is not None:
        sql += f" AND {alias}.created_at <= %s"
        params.append(filters.until)
    for label in filters.labels:
        sql += (f" AND {alias}.seq IN (SELECT l.seq FROM {LABELS} l WHERE l.tenant = %s "
                "AND l.label = %s)")
        params += [tenant, label]
    return sql, params


def where_sql(
    filters: MemoryFilter | None, tenant: str, alias: str = "m"
) -> tuple[str, list[Any]]:
    life, life_params = lifecycle_sql(filters, alias)
    more, more_params = filter_sql(filters, tenant, alias)
    return life + more, life_params + more_params
