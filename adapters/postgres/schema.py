"""Numbered schema migrations for the PostgreSQL store, applied under an advisory lock.

Several replicas may start at once against an empty database: each takes the same
session-level advisory lock, so exactly one applies the migrations and the others find the
schema current when they get the lock. Every migration runs in its own transaction together
with the row that records its number, so a crash leaves either the old or the new version.

The dense index is per vector dimension (an HNSW index over `embedding::vector(d)` restricted
to rows with `dims = d`): the store accepts any embedder, and a model change to another
dimension gets its own index on its first vector instead of failing an insert.
"""

from __future__ import annotations

from typing import Any

from .upgrade import backfill_context_and_recall, backfill_supersede_times

SCHEMA = "tinycontext"
TENANT_SETTING = "tinycontext.tenant"
MIGRATION_LOCK = 0x7463_6D69_6772_6174  # "tcmigrat"
INDEX_LOCK = MIGRATION_LOCK + 1
HNSW_MAX_DIMS = 2000  # pgvector's limit for an HNSW index on `vector`
# Graph quality: pgvector's default m with 8x its default ef_construction. On the
# benchmark's 200,000 memories (templated texts: dense clusters of near-duplicates) the
# default build missed whole neighbourhoods (recall@10 0.90) and ef_construction 256 still
# some (0.97 at ef_search 1,000, whether built insert by insert or in one go); 512 found
# 1.00 at ef_search 500 built either way (benchmark_pg), but 0.97 on a later
# insert-by-insert build (levels are random: builds differ). Inserts cost about twice as
# much. Existing indexes keep their options until rebuilt.
HNSW_OPTIONS = "m = 16, ef_construction = 512"
# The replaced versions' graph is built with pgvector's default ef_construction: the upkeep
# inserts every replaced version into it, and a build at 512 made that much slower. It serves
# only the replaced part of an "as of" answer; m stays 16 (at 8 that answer lost recall).
REPLACED_HNSW_OPTIONS = "m = 16, ef_construction = 64"
REPLACED_INDEX_WORK_MEM = "512MB"

_TENANT_MATCHES = f"tenant = current_setting('{TENANT_SETTING}', true)"

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"""CREATE TABLE {SCHEMA}.memories (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant text COLLATE "C" NOT NULL,
            id text COLLATE "C" NOT NULL,
            ref text COLLATE "C" NOT NULL,
            content text NOT NULL,
            kind text COLLATE "C" NOT NULL,
            session_id text COLLATE "C",
            created_at text COLLATE "C" NOT NULL,
            content_tokens integer NOT NULL,
            recall_count integer NOT NULL DEFAULT 0,
            last_recalled_at text COLLATE "C",
            superseded_by text COLLATE "C",
            superseded_at text COLLATE "C",
            supersedes text COLLATE "C",
            embedding vector,
            dims integer,
            embedding_model text COLLATE "C",
            UNIQUE (tenant, id)
        )""",
        # Vectors are read by the HNSW index and for the few hundred candidates of a query;
        # kept out of line, they do not make every scan of the table read 1.5 KB per row.
        # Free space in each page lets recall counting update rows in place (HOT): an
        # update that needed a new page would also insert the row into the HNSW graph again.
        f"ALTER TABLE {SCHEMA}.memories ALTER COLUMN embedding SET STORAGE EXTERNAL",
        f"ALTER TABLE {SCHEMA}.memories SET (toast_tuple_target = 512, fillfactor = 80)",
        f"CREATE INDEX memories_ref ON {SCHEMA}.memories (tenant, ref)",
        f"""CREATE INDEX memories_live_scope ON {SCHEMA}.memories
            (tenant, kind, session_id, created_at) WHERE superseded_by IS NULL""",
        f"""CREATE INDEX memories_live_session ON {SCHEMA}.memories
            (tenant, session_id, created_at) WHERE superseded_by IS NULL""",
        f"""CREATE INDEX memories_live_created ON {SCHEMA}.memories
            (tenant, created_at) WHERE superseded_by IS NULL""",
        f"""CREATE INDEX memories_supersedes ON {SCHEMA}.memories
            (tenant, supersedes) WHERE supersedes IS NOT NULL""",
        f"CREATE INDEX memories_model ON {SCHEMA}.memories (tenant, embedding_model, seq)",
        # The keyword index lives beside the memories: PostgreSQL does not use a GIN index for
        # a query on a table under row-level security (the @@ operator is not leakproof), so
        # this table carries no policy. It holds no content, only tagged lexemes, and every
        # query joins it back to `memories`, where the policy applies.
        f"""CREATE TABLE {SCHEMA}.memory_terms (
            seq bigint PRIMARY KEY REFERENCES {SCHEMA}.memories (seq) ON DELETE CASCADE,
            tenant text COLLATE "C" NOT NULL,
            terms tsvector NOT NULL
        )""",
        f"CREATE INDEX memory_terms_lexemes ON {SCHEMA}.memory_terms USING gin (terms)",
        f"""CREATE TABLE {SCHEMA}.sessions (
            tenant text COLLATE "C" NOT NULL,
            session_id text COLLATE "C" NOT NULL,
            PRIMARY KEY (tenant, session_id)
        )""",
        # Second wall: even a query that forgot its tenant filter only sees rows of the
        # tenant named by the transaction's setting. FORCE applies it to the owner too
        # (superusers and BYPASSRLS roles are never subject to it).
        *(
            statement
            for table in ("memories", "sessions")
            for statement in (
                f"ALTER TABLE {SCHEMA}.{table} ENABLE ROW LEVEL SECURITY",
                f"ALTER TABLE {SCHEMA}.{table} FORCE ROW LEVEL SECURITY",
                f"CREATE POLICY tenant_scope ON {SCHEMA}.{table} "
                f"USING ({_TENANT_MATCHES}) WITH CHECK ({_TENANT_MATCHES})",
            )
        ),
    ),
    (
        # Save-time context and the recall side of the keyword index: stemmed words of the
        # memory (weight A) and of its context memory (weight B), filled by pg_upgrade.
        f"ALTER TABLE {SCHEMA}.memories ADD COLUMN context_id text COLLATE \"C\"",
        f"""CREATE INDEX memories_context ON {SCHEMA}.memories (tenant, context_id)
            WHERE context_id IS NOT NULL""",
        f"ALTER TABLE {SCHEMA}.memory_terms ADD COLUMN recall tsvector",
        # Late interaction: sign bits of the memory's content-token vectors.
        f"ALTER TABLE {SCHEMA}.memories ADD COLUMN token_bits bytea",
        f"ALTER TABLE {SCHEMA}.memories ALTER COLUMN token_bits SET STORAGE EXTERNAL",
        f"CREATE INDEX memory_terms_recall ON {SCHEMA}.memory_terms USING gin (recall)",
    ),
    (
        # Tags and metadata (JSON text, as in SQLite) and one row per tag or metadata pair
        # (domain.labels) for filters, under the same tenant policy as the memories.
        f"ALTER TABLE {SCHEMA}.memories ADD COLUMN tags text",
        f"ALTER TABLE {SCHEMA}.memories ADD COLUMN metadata text",
        f"""CREATE TABLE {SCHEMA}.memory_labels (
            tenant text COLLATE "C" NOT NULL,
            label text COLLATE "C" NOT NULL,
            seq bigint NOT NULL REFERENCES {SCHEMA}.memories (seq) ON DELETE CASCADE,
            PRIMARY KEY (tenant, label, seq)
        )""",
        f"CREATE INDEX memory_labels_seq ON {SCHEMA}.memory_labels (seq)",
        f"ALTER TABLE {SCHEMA}.memory_labels ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {SCHEMA}.memory_labels FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY tenant_scope ON {SCHEMA}.memory_labels "
        f"USING ({_TENANT_MATCHES}) WITH CHECK ({_TENANT_MATCHES})",
        # "As of" reads replaced versions by the time they were replaced (versions replaced
        # before it was kept reliably get it from upgrade.backfill_supersede_times).
        f"""CREATE INDEX memories_replaced_until ON {SCHEMA}.memories
            (tenant, superseded_at, created_at) WHERE superseded_by IS NOT NULL""",
    ),
    (
        # "As of" lists (the profile as it was then, a list as of a moment) find replaced
        # versions by scope as the live ones are found. (This version also built the replaced
        # versions' HNSW index; version 5 builds it with its final predicate instead.)
        f"""CREATE INDEX memories_replaced_scope ON {SCHEMA}.memories
            (tenant, kind, session_id, created_at) WHERE superseded_by IS NOT NULL""",
    ),
    (
        # An update only marks the old version pending: inserting it into the replaced
        # versions' graph made every update slower. The background upkeep moves pending
        # versions into the graph (writing.move_history); until then "as of" searches them
        # exactly, found through this small index. Then an HNSW index over the replaced
        # versions of each dimension that has a live one, with the predicate that leaves
        # pending versions out (add_replaced_indexes, below), so "as of" recall searches
        # them approximately too.
        f"ALTER TABLE {SCHEMA}.memories ADD COLUMN history_pending boolean",
        f"""CREATE INDEX memories_history_pending ON {SCHEMA}.memories
            (tenant, superseded_at) WHERE history_pending""",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)
# Python steps run after a version's statements, in the same transaction.
DATA_STEPS = {2: lambda conn: backfill_context_and_recall(conn, SCHEMA, TENANT_SETTING),
              3: lambda conn: backfill_supersede_times(conn, SCHEMA, TENANT_SETTING),
              5: lambda conn: add_replaced_indexes(conn)}


def _version(conn: Any) -> int:
    exists = conn.execute(
        "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'schema_version'",
        (SCHEMA,),
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute(f"SELECT max(version) FROM {SCHEMA}.schema_version").fetchone()
    return int(row[0] or 0)


def _check_newer(current: int) -> None:
    if current > SCHEMA_VERSION:
        raise RuntimeError(
            f"the PostgreSQL schema has version {current}, newer than this TinyContext "
            f"({SCHEMA_VERSION}); upgrade with `pip install -U tinysuite-context`."
        )


def _ensure_vector_extension(conn: Any) -> None:
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception as exc:  # noqa: BLE001 - re-raised with the fix
        raise RuntimeError(
            "the pgvector extension is not installed in this database and this role may not "
            "install it; run `CREATE EXTENSION vector;` once as a superuser "
            f"({type(exc).__name__})"
        ) from None


def migrate(conn: Any) -> int:
    """Bring the schema to SCHEMA_VERSION on an autocommit connection; returns the old one."""
    current = _version(conn)
    _check_newer(current)
    if current == SCHEMA_VERSION:
        return current
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        current = _version(conn)  # another replica may have migrated while we waited
        _check_newer(current)
        if current == SCHEMA_VERSION:
            return current
        _ensure_vector_extension(conn)
        if not conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,)
        ).fetchone():
            conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {SCHEMA}.schema_version "
            "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for version in range(current, SCHEMA_VERSION):
            with conn.transaction():
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
                step = DATA_STEPS.get(version + 1)
                if step is not None:
                    step(conn)
                conn.execute(
                    f"INSERT INTO {SCHEMA}.schema_version (version) VALUES (%s)", (version + 1,)
                )
        return current
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))


def dense_index_name(dims: int) -> str:
    return f"memories_hnsw_{int(dims)}"


def replaced_index_name(dims: int) -> str:
    return f"memories_replaced_hnsw_{int(dims)}"


def _replaced_index_sql(dims: int) -> str:
    """The replaced versions' HNSW index for one dimension: "as of" a moment searches it with
    the supersede-time window as a filter. An update leaves the old version pending (outside
    it); the upkeep moves it in."""
    return (
        f"CREATE INDEX IF NOT EXISTS {replaced_index_name(dims)} ON {SCHEMA}.memories "
        f"USING hnsw ((embedding::vector({dims})) vector_cosine_ops) "
        f"WITH ({REPLACED_HNSW_OPTIONS}) WHERE dims = {dims} AND superseded_by IS NOT NULL "
        "AND history_pending IS NULL"
    )


def add_replaced_indexes(conn: Any) -> None:
    """Schema version 5 on an existing store: the replaced versions' index of each dimension
    that has a live index, built inside the migration's transaction (a version 4 store's
    index, which took every replaced version at once, is replaced)."""
    import re

    found = conn.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND indexname LIKE %s",
        (SCHEMA, "memories\\_hnsw\\_%"),
    ).fetchall()
    dims = sorted({int(m.group(1)) for (name,) in found
                   if (m := re.fullmatch(r"memories_hnsw_(\d+)", name))})
    if dims:  # the graph of a large history is built in memory
        conn.execute(f"SET LOCAL maintenance_work_mem = '{REPLACED_INDEX_WORK_MEM}'")
    for d in dims:
        conn.execute(f"DROP INDEX IF EXISTS {SCHEMA}.{replaced_index_name(d)}")
        conn.execute(_replaced_index_sql(d))


def ensure_dense_index(conn: Any, dims: int) -> bool:
    """Create the HNSW cosine indexes (live and replaced versions) for one dimension if
    missing; False when none can exist.

    Called outside any write transaction: the first vector of a dimension builds an index
    over (almost) no rows, and a transaction-level advisory lock keeps replicas from racing.
    """
    dims = int(dims)
    if not 0 < dims <= HNSW_MAX_DIMS:
        return False
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (INDEX_LOCK,))
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {dense_index_name(dims)} ON {SCHEMA}.memories "
            f"USING hnsw ((embedding::vector({dims})) vector_cosine_ops) WITH ({HNSW_OPTIONS}) "
            f"WHERE dims = {dims} AND superseded_by IS NULL"
        )
        conn.execute(_replaced_index_sql(dims))
    return True
