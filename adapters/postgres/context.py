"""The PostgreSQL store's reads and upkeep for save-time context and late-interaction tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tinycontext.domain.memory import Memory
from tinycontext.ports.store import Scope

from .connection import PgPool
from .rows import COLUMNS, MEMORIES, TERMS, memory_from_row, scope_sql, vector_text
from .text import recall_tsvector_literal


def latest(pool: PgPool, scope: Scope) -> Memory | None:
    where, params = scope_sql(scope)
    rows = pool.read(
        f"SELECT {COLUMNS} FROM {MEMORIES} m WHERE m.tenant = %s AND m.superseded_by IS NULL"
        f"{where} ORDER BY m.created_at DESC, m.seq DESC LIMIT 1",
        [pool.tenant, *params],
    )
    return memory_from_row(rows[0]) if rows else None


def similarities(
    pool: PgPool, vector: bytes, model_key: str, memory_ids: Sequence[str]
) -> dict[str, float]:
    if not memory_ids:
        return {}
    rows = pool.read(
        f"SELECT m.id, 1 - (m.embedding <=> %s::vector) FROM {MEMORIES} m "
        "WHERE m.tenant = %s AND m.id = ANY(%s) AND m.embedding_model = %s AND m.dims = %s",
        (vector_text(vector), pool.tenant, list(memory_ids), model_key, len(vector) // 4),
    )
    return {str(r[0]): float(r[1]) for r in rows}


def contexts(pool: PgPool, memory_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    if not memory_ids:
        return {}
    rows = pool.read(
        f"SELECT m.id, p.id, p.content FROM {MEMORIES} m JOIN {MEMORIES} p "
        "ON p.tenant = m.tenant AND p.id = m.context_id "
        "WHERE m.tenant = %s AND m.id = ANY(%s)",
        (pool.tenant, list(memory_ids)),
    )
    return {str(r[0]): (str(r[1]), str(r[2])) for r in rows}


def token_bits(pool: PgPool, memory_ids: Sequence[str]) -> dict[str, tuple[bytes, bytes | None]]:
    if not memory_ids:
        return {}
    rows = pool.read(
        f"SELECT m.id, m.token_bits, p.token_bits FROM {MEMORIES} m LEFT JOIN {MEMORIES} p "
        "ON p.tenant = m.tenant AND p.id = m.context_id "
        "WHERE m.tenant = %s AND m.id = ANY(%s) AND m.token_bits IS NOT NULL",
        (pool.tenant, list(memory_ids)),
    )
    return {str(r[0]): (bytes(r[1]), None if r[2] is None else bytes(r[2])) for r in rows}


def forget(cur: Any, tenant: str, tag: str, memory_id: str) -> None:
    """Memories that had the deleted one as context lose its words and their mixed vector
    (the re-embedder makes it again from their own text), inside the delete's transaction."""
    cur.execute(
        f"UPDATE {MEMORIES} SET context_id = NULL, embedding = NULL, dims = NULL, "
        "embedding_model = NULL WHERE tenant = %s AND context_id = %s RETURNING seq, content",
        (tenant, memory_id),
    )
    dependants = cur.fetchall()
    cur.executemany(
        f"UPDATE {TERMS} SET recall = %s::tsvector WHERE seq = %s",
        [(recall_tsvector_literal(content, None, tag), seq) for seq, content in dependants],
    )
