"""Row helpers shared by the SQLite store's modules: the memory columns, their decoding, a
scope's filters and the zero padding of vectors for sign bits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tinycontext.domain.labels import read_metadata, read_tags
from tinycontext.domain.memory import Memory
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import Scope

COLUMNS = (
    "m.id, m.content, m.kind, m.session_id, m.created_at, m.content_tokens, m.recall_count, "
    "m.last_recalled_at, m.superseded_by, m.superseded_at, m.supersedes, m.embedding_model, "
    "m.tags, m.metadata"
)
WIDTH = 14
"""Columns of COLUMNS: what a query selects after them starts at this index."""


def padded(vector: Vector) -> Vector:
    """sqlite-vec's binary quantisation needs a multiple of 8 dimensions; zero-pad the rest
    (identically for stored and query vectors, so Hamming distances stay comparable)."""
    spare = (len(vector) // 4) % 8
    return vector + b"\0" * (4 * (8 - spare)) if spare else vector


def memory_from_row(row: Sequence[Any]) -> Memory:
    tags, metadata = read_tags(row[12]), read_metadata(row[13])
    # The first 12 columns fill the positional fields (mypy cannot count a slice).
    return Memory(*row[:12], tags=tags, metadata=metadata)  # type: ignore[misc]


def scope_sql(scope: Scope, alias: str) -> tuple[str, list[Any]]:
    sql, params = f" AND {alias}.kind = ?", [scope.kind]
    if scope.session_id is not None:
        sql += f" AND {alias}.session_id = ?"
        params.append(scope.session_id)
    elif scope.exact:
        sql += f" AND {alias}.session_id IS NULL"
    return sql, params
