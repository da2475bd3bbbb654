"""Numbered schema migrations for the SQLite store, applied in place on open.

Version 1 was the first layout (text, metadata and the keyword index). Version 2 added the
embedding in the memory row plus a compact sign-bit index for fast candidate search; rows
written before it have no embedding and are backfilled by the background re-embedder.
Version 3 added the IVF cells (sqlite_ivf.py); version 4 made the sign-bit indexes covering;
version 5 added int8 codes and the change log that the in-memory mirror (sqlite_mirror.py)
follows. Version 6 added save-time context (`memories.context_id`) and rebuilt the keyword
index with three columns: `terms` (the words as written, for list search and its prefixes),
`stems` (stemmed words, for recall) and `context` (the stemmed words of the context memory),
and `memory_tokens`, the token sign bits that late interaction rescores with. Version 7
adds partial indexes for browsing large stores (stale order, kind and time, sessions, replaced
versions). Version 8 adds tags and metadata (JSON in the row; `memory_labels` indexes each
tag and metadata pair for filters, domain.labels) and fills in the supersede time of versions
replaced before it was kept reliably, from their successor's creation; an index on it serves
"as of" reads of replaced versions, whose vectors stay in `vector_index` under the negative
model id.
Version 9 adds the keyword generation: a number that triggers raise with every delete of a
memory and every insert that is not an append; with the newest memory's seq it tells every
state of the keyword index (which changes with inserts and deletes of memories only) from
every other, so that the document frequencies recall keeps know which state they are of
(word_counts.py).
Existing memories get as context the memory saved before them in their session, within the
default window; it needs the `tinycontext_stems` SQL function (connection.py).
"""

from __future__ import annotations

from typing import Any

from tinycontext.domain.context import CONTEXT_MIN_SIMILARITY, DEFAULT_WINDOW_MINUTES

TOKENIZER = "unicode61 remove_diacritics 2"

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
        # 384 dimensions) scan far faster than the float vectors, and the exact cosine is
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
        # IVF partitioning (adapters/sqlite/ivf.py): each vector row's cell in the current
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
        # looking each row up by seq, which roughly halves the scan of a recall's cells.
        "CREATE INDEX IF NOT EXISTS vector_index_cell_bits "
        "ON vector_index(model_id, cell_key, kind, session_id, bits)",
        "DROP INDEX IF EXISTS vector_index_cells",
        "CREATE INDEX IF NOT EXISTS vector_index_scope_bits "
        "ON vector_index(model_id, kind, session_id, bits)",
        "DROP INDEX IF EXISTS vector_index_scope",
    ),
    (
        # int8 codes (sqlite-vec's 'unit' quantisation, 1 byte per dimension) re-rank the
        # mirror's sign-bit candidates without reading `memories` (sqlite_mirror.py).
        "ALTER TABLE vector_index ADD COLUMN codes BLOB",
        "UPDATE vector_index SET codes = (SELECT vec_quantize_int8(m.embedding, 'unit') "
        "FROM memories m WHERE m.seq = vector_index.seq)",
        # Every change to a vector row, by any process, is logged so a mirror can catch up
        # by reading the entries after the last one it applied. AUTOINCREMENT: ids are never
        # reused, so a gap means entries were pruned and the mirror must reload.
        """CREATE TABLE IF NOT EXISTS vector_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            seq INTEGER NOT NULL
        )""",
        """CREATE TRIGGER IF NOT EXISTS vector_log_insert AFTER INSERT ON vector_index
           BEGIN INSERT INTO vector_log(seq) VALUES (NEW.seq); END""",
        """CREATE TRIGGER IF NOT EXISTS vector_log_delete AFTER DELETE ON vector_index
           BEGIN INSERT INTO vector_log(seq) VALUES (OLD.seq); END""",
        # Not on cell_key: re-tagging IVF cells changes nothing a mirror holds.
        """CREATE TRIGGER IF NOT EXISTS vector_log_update
           AFTER UPDATE OF model_id, kind, session_id, bits, codes ON vector_index
           BEGIN INSERT INTO vector_log(seq) VALUES (NEW.seq); END""",
        # Keep the last ~64k entries; pruning every 4096th insert keeps the cost amortised.
        """CREATE TRIGGER IF NOT EXISTS vector_log_prune AFTER INSERT ON vector_log
           WHEN NEW.id % 4096 = 0
           BEGIN DELETE FROM vector_log WHERE id <= NEW.id - 65536; END""",
    ),
    (
        "ALTER TABLE memories ADD COLUMN context_id TEXT",
        "CREATE INDEX IF NOT EXISTS memories_context ON memories(context_id) "
        "WHERE context_id IS NOT NULL",
        # The memory saved just before, in the same kind and session, within the window, and
        # related in meaning (judged on the stored vectors, when both have one alike).
        "WITH ordered AS (SELECT seq, created_at, embedding, "
        "lag(id) OVER w AS prev_id, lag(created_at) OVER w AS prev_at, "
        "lag(embedding) OVER w AS prev_embedding FROM memories "
        "WHERE kind = 'episodic' WINDOW w AS (PARTITION BY session_id ORDER BY seq)) "
        "UPDATE memories SET context_id = o.prev_id FROM ordered o "
        "WHERE memories.seq = o.seq AND o.prev_id IS NOT NULL "
        f"AND (julianday(o.created_at) - julianday(o.prev_at)) * 1440 <= {DEFAULT_WINDOW_MINUTES} "
        "AND length(o.embedding) = length(o.prev_embedding) "
        "AND 1.0 - vec_distance_cosine(o.embedding, o.prev_embedding) "
        f">= {CONTEXT_MIN_SIMILARITY}",
        f"""CREATE VIRTUAL TABLE memory_fts_v6
           USING fts5(terms, stems, context, tokenize = '{TOKENIZER}')""",
        "INSERT INTO memory_fts_v6(rowid, terms, stems, context) "
        "SELECT m.seq, f.terms, tinycontext_stems(m.content), "
        "coalesce(tinycontext_stems(p.content), '') FROM memories m "
        "JOIN memory_fts f ON f.rowid = m.seq LEFT JOIN memories p ON p.id = m.context_id",
        "DROP TABLE memory_fts",
        "ALTER TABLE memory_fts_v6 RENAME TO memory_fts",
        # Late interaction: sign bits of each memory's content-token vectors (48 bytes a
        # token at 384 dimensions). Memories saved before get them from the re-embedder.
        "CREATE TABLE IF NOT EXISTS memory_tokens (seq INTEGER PRIMARY KEY, bits BLOB NOT NULL)",
    ),
    (
        # For the web UI on large stores. The "stale" order (and its reverse, most recalled
        # first) of live memories, so a page of it reads its own rows instead of sorting the
        # whole store; live memories by kind and time, so counts by kind and month read the
        # index only; replaced versions by time (a few percent of rows), for their own view.
        "CREATE INDEX IF NOT EXISTS memories_live_stale ON memories"
        "(recall_count, last_recalled_at, created_at, superseded_by) WHERE superseded_by IS NULL",
        "CREATE INDEX IF NOT EXISTS memories_live_kind ON memories"
        "(kind, created_at, superseded_by) "
        "WHERE superseded_by IS NULL",
        "CREATE INDEX IF NOT EXISTS memories_replaced ON memories(created_at) "
        "WHERE superseded_by IS NOT NULL",
        "CREATE INDEX IF NOT EXISTS memories_live_session ON memories(session_id, superseded_by) "
        "WHERE superseded_by IS NULL AND session_id IS NOT NULL",
    ),
    (
        "ALTER TABLE memories ADD COLUMN tags TEXT",
        "ALTER TABLE memories ADD COLUMN metadata TEXT",
        # One row per tag (`#tag`) or metadata pair (`@key=value`) of a memory.
        "CREATE TABLE IF NOT EXISTS memory_labels (label TEXT NOT NULL, seq INTEGER NOT NULL, "
        "PRIMARY KEY (label, seq)) WITHOUT ROWID",
        "UPDATE memories SET superseded_at = (SELECT s.created_at FROM memories s "
        "WHERE s.id = memories.superseded_by) "
        "WHERE superseded_by IS NOT NULL AND superseded_at IS NULL",
        "CREATE INDEX IF NOT EXISTS memories_replaced_until ON memories(superseded_at, "
        "created_at) WHERE superseded_by IS NOT NULL",
        # Replaced versions' vectors, under their model's negative id: "as of" searches them
        # with a mirror of their own (live searches ask for positive ids only). Sign bits
        # are taken of the vector zero-padded to a multiple of 8 dimensions (rows.padded).
        "INSERT OR IGNORE INTO vector_index(seq, model_id, kind, session_id, bits, cell_key, "
        "codes) SELECT m.seq, -e.id, m.kind, m.session_id, vec_quantize_binary("
        "CASE WHEN length(m.embedding) % 32 = 0 THEN m.embedding ELSE m.embedding || "
        "zeroblob(32 - length(m.embedding) % 32) END), "
        "0, vec_quantize_int8(m.embedding, 'unit') FROM memories m "
        "JOIN embedding_models e ON e.key = m.embedding_model "
        "WHERE m.superseded_by IS NOT NULL AND m.embedding IS NOT NULL",
    ),
    (
        # One row. Raised by triggers rather than by the engine's writes, so that every
        # writer raises it, also an older engine that had the store open across the upgrade.
        # An append (the usual insert) raises the newest seq instead, and writes no page of
        # this table.
        "CREATE TABLE IF NOT EXISTS keyword_generation "
        "(id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)",
        "INSERT OR IGNORE INTO keyword_generation(id, n) VALUES (1, 0)",
        """CREATE TRIGGER IF NOT EXISTS keyword_generation_insert AFTER INSERT ON memories
           WHEN NEW.seq < (SELECT max(seq) FROM memories)
           BEGIN UPDATE keyword_generation SET n = n + 1 WHERE id = 1; END""",
        """CREATE TRIGGER IF NOT EXISTS keyword_generation_delete AFTER DELETE ON memories
           BEGIN UPDATE keyword_generation SET n = n + 1 WHERE id = 1; END""",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(conn: Any) -> int:
    """The file's schema version; one newer than this code knows is refused."""
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if current > SCHEMA_VERSION:
        raise RuntimeError(
            f"this database has schema version {current}, newer than this TinyContext "
            f"({SCHEMA_VERSION}); upgrade with `pip install -U tinysuite-context`."
        )
    return current


def migrate(conn: Any) -> int:
    """Bring the database to SCHEMA_VERSION inside one write transaction; returns the old one."""
    current = schema_version(conn)
    if current == SCHEMA_VERSION:
        # Nothing to do: no write lock, so opening a store never waits on (or fails behind)
        # another process's long write, and a read-only file opens as well.
        return current
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = schema_version(conn)
        for version in range(current, SCHEMA_VERSION):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
        if current != SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may have rolled back already (a full disk)
            conn.execute("ROLLBACK")
        raise
    return current
