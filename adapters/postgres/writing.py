"""The PostgreSQL store's row writes, each run inside the caller's transaction: inserting
memories (their rows, keyword terms and sessions) and deleting one with its version links
repaired. PostgresStore wraps them in its pool and its error translation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tinycontext.domain.errors import InvalidRequestError
from tinycontext.domain.labels import metadata_json, tags_json
from tinycontext.domain.memory import ref_of
from tinycontext.ports.store import NewMemory

from . import context as pg_context
from .filtering import insert_labels
from .rows import MEMORIES, SESSIONS, TERMS, vector_text
from .text import recall_tsvector_literal, tsvector_literal


def check_text(items: Sequence[NewMemory]) -> None:
    """PostgreSQL text cannot hold NUL: a clear error before anything is written."""
    if any("\x00" in item.memory.content for item in items):
        raise InvalidRequestError(
            "content holds a NUL character, which PostgreSQL cannot store; remove it and "
            "save again."
        )


def insert(cur: Any, tenant: str, tag: str, items: Sequence[NewMemory]) -> None:
    """The memories' rows, their keyword terms (tagged with the tenant) and their sessions."""
    rows, terms = [], []
    for item in items:
        m = item.memory
        vector = item.vector
        rows.append((
            tenant, m.id, ref_of(m.id), m.content, m.kind, m.session_id, m.created_at,
            m.content_tokens, m.recall_count, m.last_recalled_at, m.superseded_by,
            m.superseded_at, m.supersedes,
            None if vector is None else vector_text(vector),
            None if vector is None else len(vector) // 4,
            None if vector is None else m.embedding_model, item.context_id, item.tokens,
            tags_json(m.tags), metadata_json(m.metadata) if m.metadata else None,
        ))
        terms.append((
            tsvector_literal(m.content, tag),
            recall_tsvector_literal(m.content, item.context, tag), m.id,
        ))
    cur.executemany(
        f"INSERT INTO {MEMORIES} (tenant, id, ref, content, kind, session_id, created_at, "
        "content_tokens, recall_count, last_recalled_at, superseded_by, superseded_at, "
        "supersedes, embedding, dims, embedding_model, context_id, token_bits, tags, metadata) "
        "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s::vector,%s,%s,%s,%s,%s,%s)",
        rows,
    )
    insert_labels(cur, tenant, list(items))
    cur.executemany(
        f"INSERT INTO {TERMS} (seq, tenant, terms, recall) SELECT m.seq, m.tenant, "
        f"%s::tsvector, %s::tsvector FROM {MEMORIES} m WHERE m.tenant = %s AND m.id = %s",
        [(words, recall, tenant, memory_id) for words, recall, memory_id in terms],
    )
    sessions = sorted({i.memory.session_id for i in items if i.memory.session_id is not None})
    cur.executemany(
        f"INSERT INTO {SESSIONS} (tenant, session_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
        [(tenant, s) for s in sessions],
    )


def remove(cur: Any, tenant: str, tag: str, memory_id: str, predecessor_id: str | None,
           successor_id: str | None) -> None:
    """Delete one memory; the versions around it are linked to each other again."""
    cur.execute(f"DELETE FROM {MEMORIES} WHERE tenant = %s AND id = %s", (tenant, memory_id))
    if cur.rowcount == 0:
        return
    pg_context.forget(cur, tenant, tag, memory_id)
    # A newer version that pointed back at the deleted one now points past it.
    cur.execute(
        f"UPDATE {MEMORIES} SET supersedes = %s WHERE tenant = %s AND supersedes = %s",
        (predecessor_id, tenant, memory_id),
    )
    if predecessor_id is None:
        return
    if successor_id is not None:
        cur.execute(
            f"UPDATE {MEMORIES} SET superseded_by = %s WHERE tenant = %s AND id = %s",
            (successor_id, tenant, predecessor_id),
        )
        cur.execute(
            f"UPDATE {MEMORIES} SET supersedes = %s WHERE tenant = %s AND id = %s",
            (predecessor_id, tenant, successor_id),
        )
        return
    # Live again: the partial HNSW index takes the row back by itself.
    cur.execute(
        f"UPDATE {MEMORIES} SET superseded_by = NULL, superseded_at = NULL, "
        "history_pending = NULL "
        "WHERE tenant = %s AND id = %s",
        (tenant, predecessor_id),
    )


def move_history(cur: Any, tenant: str, most: int) -> int:
    """Move up to `most` pending replaced versions into the replaced versions' index (the
    partial index takes a row once it is no longer pending); returns how many. Rows another
    replica's upkeep holds are skipped, not waited for; an interrupted step leaves its rows
    pending, where "as of" still finds them."""
    cur.execute(
        f"UPDATE {MEMORIES} SET history_pending = NULL WHERE seq IN (SELECT seq FROM "
        f"{MEMORIES} WHERE tenant = %s AND history_pending ORDER BY superseded_at LIMIT %s "
        "FOR UPDATE SKIP LOCKED)",
        (tenant, most),
    )
    return int(cur.rowcount)
