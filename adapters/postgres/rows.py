"""Row helpers shared by the PostgreSQL store's modules: table names, the memory columns and
their decoding, a scope's filters, pgvector's text form of a vector and the two dense
searches (an HNSW probe and the exact one) over rows that pass given conditions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tinycontext.domain.labels import read_metadata, read_tags
from tinycontext.domain.memory import Memory
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import Scope

from .schema import SCHEMA

COLUMNS = (
    "m.id, m.content, m.kind, m.session_id, m.created_at, m.content_tokens, m.recall_count, "
    "m.last_recalled_at, m.superseded_by, m.superseded_at, m.supersedes, m.embedding_model, "
    "m.tags, m.metadata"
)
WIDTH = 14
"""Columns of COLUMNS: what a query selects after them starts at this index."""
MEMORIES = f"{SCHEMA}.memories"
TERMS = f"{SCHEMA}.memory_terms"
SESSIONS = f"{SCHEMA}.sessions"


def memory_from_row(row: Sequence[Any]) -> Memory:
    tags, metadata = read_tags(row[12]), read_metadata(row[13])
    # The first 12 columns fill the positional fields (mypy cannot count a slice).
    return Memory(*row[:12], tags=tags, metadata=metadata)  # type: ignore[misc]


def vector_text(vector: Vector) -> str:
    """pgvector's text form of a float32 little-endian vector (9 digits: exact for float32)."""
    from array import array

    values = array("f")
    values.frombytes(vector)
    return "[" + ",".join(f"{v:.9g}" for v in values) + "]"


def scope_sql(scope: Scope, alias: str = "m") -> tuple[str, list[Any]]:
    sql, params = f" AND {alias}.kind = %s", [scope.kind]
    if scope.session_id is not None:
        sql += f" AND {alias}.session_id = %s"
        params.append(scope.session_id)
    elif scope.exact:
        sql += f" AND {alias}.session_id IS NULL"
    return sql, params



def exact_nearest_sql(conditions: str) -> str:
    """The best rows passing `conditions` by exact cosine (parameters: the query vector's
    text, the conditions', the limit), best first, then the newest, then by id."""
    return (f"SELECT {COLUMNS}, 1 - (m.embedding <=> %s::vector) AS similarity "
            f"FROM {MEMORIES} m WHERE {conditions} "
            "ORDER BY similarity DESC, m.created_at DESC, m.id LIMIT %s")


def probe_nearest(cur: Any, dims: int, conditions: str, params: list[Any]) -> list[Any]:
    """The nearest rows through the HNSW index of `dims` (it filters by `conditions` after
    its search, so fewer may come back), in the exact search's order. Parameters: the
    vector's text, the conditions', the vector's text again, the limit."""
    cur.execute(
        f"SELECT * FROM (SELECT {COLUMNS}, "
        f"1 - (m.embedding::vector({dims}) <=> %s::vector({dims})) AS similarity "
        f"FROM {MEMORIES} m WHERE {conditions} "
        f"ORDER BY m.embedding::vector({dims}) <=> %s::vector({dims}) LIMIT %s) c "
        "ORDER BY c.similarity DESC, c.created_at DESC, c.id",
        params,
    )
    return list(cur.fetchall())
