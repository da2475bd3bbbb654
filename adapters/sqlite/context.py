"""The SQLite store's reads and upkeep for save-time context and late-interaction tokens."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tinycontext.domain.memory import Memory
from tinycontext.ports.store import Scope

from .connection import ConnectionPool
from .rows import COLUMNS, memory_from_row, scope_sql


def latest(pool: ConnectionPool, scope: Scope) -> Memory | None:
    where, params = scope_sql(scope, "m")
    rows = pool.read(
        f"SELECT {COLUMNS} FROM memories m WHERE m.superseded_by IS NULL{where} "
        "ORDER BY m.created_at DESC, m.seq DESC LIMIT 1",
        params,
    )
    return memory_from_row(rows[0]) if rows else None


def similarities(
    pool: ConnectionPool, vector: bytes, model_key: str, memory_ids: Sequence[str]
) -> dict[str, float]:
    if not memory_ids:
        return {}
    rows = pool.read(
        "SELECT m.id, 1.0 - vec_distance_cosine(m.embedding, ?) FROM json_each(?) j "
        "CROSS JOIN memories m ON m.id = j.value WHERE m.embedding_model = ? "
        "AND length(m.embedding) = length(?)",
        (vector, json.dumps(list(memory_ids)), model_key, vector),
    )
    return {str(r[0]): float(r[1]) for r in rows}


def contexts(pool: ConnectionPool, memory_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    if not memory_ids:
        return {}
    rows = pool.read(
        "SELECT m.id, p.id, p.content FROM json_each(?) j JOIN memories m ON m.id = j.value "
        "JOIN memories p ON p.id = m.context_id",
        (json.dumps(list(memory_ids)),),
    )
    return {str(r[0]): (str(r[1]), str(r[2])) for r in rows}


def token_bits(
    pool: ConnectionPool, memory_ids: Sequence[str]
) -> dict[str, tuple[bytes, bytes | None]]:
    if not memory_ids:
        return {}
    rows = pool.read(
        "SELECT m.id, t.bits, c.bits FROM json_each(?) j "
        "CROSS JOIN memories m ON m.id = j.value JOIN memory_tokens t ON t.seq = m.seq "
        "LEFT JOIN memories p ON p.id = m.context_id "
        "LEFT JOIN memory_tokens c ON c.seq = p.seq",
        (json.dumps(list(memory_ids)),),
    )
    return {str(r[0]): (bytes(r[1]), None if r[2] is None else bytes(r[2])) for r in rows}


# The memories that took a memory (the one parameter) as their context.
DEPENDANTS = "SELECT seq FROM memories WHERE context_id = ?"


def forget(conn: Any, memory_id: str) -> None:
    """Memories that took `memory_id` as context forget it, inside the delete's transaction:
    their keyword context is cleared and their mixed vector dropped (the re-embedder makes it
    again from their own text), so nothing of the deleted text stays behind."""
    dependants = DEPENDANTS
    conn.execute(f"UPDATE memory_fts SET context = '' WHERE rowid IN ({dependants})", (memory_id,))
    conn.execute(f"DELETE FROM vector_index WHERE seq IN ({dependants})", (memory_id,))
    conn.execute(
        "UPDATE memories SET context_id = NULL, embedding = NULL, embedding_model = NULL"
        " WHERE context_id = ?",
        (memory_id,),
    )
