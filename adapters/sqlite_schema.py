"""Numbered schema migrations for the SQLite store, applied in place on open.

Version 1 was the first layout (text, metadata and the keyword index). Version 2 added the
embedding in the memory row plus a compact sign-bit index for fast candidate search; rows
written before it have no embedding and are backfilled by the background re-embedder.
Version 3 added the IVF cells (sqlite_ivf.py); version 4 made the sign-bit indexes covering.
"""

from __future__ import annotations

from typing import Any

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS memories (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            ref TEXT NOT NULL,
            content TEXT NOT NULL,
            kind TEXT NOT NULL,
            session_id TEXT,
            created_at TEXT NOT NULL,
            content_tokens INTEGER NOT NULL,
            recall_count INTEGER NOT NULL DEFAULT 0,
            last_recalled_at TEXT,
            superseded_by TEXT,
            superseded_at TEXT,
            supersedes TEXT
        )""",
        "CREATE INDEX IF NOT EXISTS memories_ref ON memories(ref)",
        "CREATE INDEX IF NOT EXISTS memories_scope ON memories(kind, session_id, created_at)",
        "CREATE INDEX IF NOT EXISTS memories_kind_created ON memories(kind, created_at)",
        "CREATE INDEX IF NOT EXISTS memories_session_created ON memories(session_id, created_at)",
        "CREATE INDEX IF NOT EXISTS memories_created ON memories(created_at)",
        "CREATE TABLE IF NOT EXISTS sessions (session_id TEXT PRIMARY KEY) WITHOUT ROWID",
        """CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts
           USING fts5(terms, tokenize = 'unicode61 remove_diacritics 2')""",
    ),
    (
        "ALTER TABLE memories ADD COLUMN embedding BLOB",
        "ALTER TABLE memories ADD COLUMN embedding_model TEXT",
        "CREATE INDEX IF NOT EXISTS memories_embedding_model ON memories(embedding_model)",
        "CREATE TABLE IF NOT EXISTS embedding_models (id INTEGER PRIMARY KEY, key TEXT UNIQUE)",
        # One narrow row per live memory with a current vector: its sign bits (48 bytes for
        # 384 dimensions) scan ~30x faster than the float vectors, and the exact cosine is
        # then computed on the few hundred best rows only.
        """CREATE TABLE IF NOT EXISTS vector_index (
            seq INTEGER PRIMARY KEY,
            model_id INTEGER NOT NULL,
            kind TEXT NOT NULL,
            session_id TEXT,
            bits BLOB NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS vector_index_scope ON vector_index(model_id, kind, session_id)",
    ),
    (
        # IVF partitioning (adapters/sqlite_ivf.py): each vector row's cell in the current
        # clustering of its model, and the clusterings themselves.
        "ALTER TABLE vector_index ADD COLUMN cell_key INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX IF NOT EXISTS vector_index_cells ON vector_index(model_id, cell_key)",
        """CREATE TABLE IF NOT EXISTS vector_versions (
            model_id INTEGER NOT NULL,
            version INTEGER NOT NULL,
            trained_on INTEGER NOT NULL,
            PRIMARY KEY (model_id, version)
        )""",
        """CREATE TABLE IF NOT EXISTS vector_centroids (
            model_id INTEGER NOT NULL,
            version INTEGER NOT NULL,
            cell INTEGER NOT NULL,
            centroid BLOB NOT NULL,
            PRIMARY KEY (model_id, version, cell)
        )""",
    ),
    (
        # Covering indexes: a probe reads the sign bits from the index itself instead of
        # looking each row up by seq (measured at 20,000 memories: scanning the ~3,000 rows
        # of a recall's cells 1.06 -> 0.44 ms; dense search for a pool of 200 3.5 -> 2.7 ms).
        "CREATE INDEX IF NOT EXISTS vector_index_cell_bits "
        "ON vector_index(model_id, cell_key, kind, session_id, bits)",
        "DROP INDEX IF EXISTS vector_index_cells",
        "CREATE INDEX IF NOT EXISTS vector_index_scope_bits "
        "ON vector_index(model_id, kind, session_id, bits)",
        "DROP INDEX IF EXISTS vector_index_scope",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: Any) -> int:
    """Bring the database to SCHEMA_VERSION inside one write transaction; returns the old one."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = conn.execute("PRAGMA user_version").fetchone()[0]
        if current > SCHEMA_VERSION:
            raise RuntimeError(
                f"this database has schema version {current}, newer than this TinyContext "
                f"({SCHEMA_VERSION}); upgrade with `pip install -U tinysuite-context`."
            )
        for version in range(current, SCHEMA_VERSION):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
        if current != SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return int(current)
