"""A large tenant's own HNSW index in the shared PostgreSQL table (dense.py decides when).

The shared per-dimension index filters by tenant after its search, so a tenant that is a small
part of a large table gets few of its own rows back from it; an index whose predicate names the
tenant holds only that tenant's live vectors. It is built without blocking writes, one build at
a time per database, and the number of such indexes per table is bounded.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .schema import HNSW_OPTIONS, MIGRATION_LOCK, SCHEMA

TENANT_INDEX_LOCK = MIGRATION_LOCK + 2  # one tenant index build at a time per database


def tenant_index_name(tenant: str, dims: int) -> str:
    """A tenant's own HNSW index: named by a digest, since tenant keys are arbitrary text."""
    return f"memories_hnsw_{int(dims)}_t{hashlib.sha256(tenant.encode()).hexdigest()[:24]}"


def tenant_index_state(conn: Any, tenant: str, dims: int) -> str | None:
    """'valid', 'invalid' (a build that failed or is still running) or None (no index)."""
    row = conn.execute(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s",
        (SCHEMA, tenant_index_name(tenant, dims)),
    ).fetchone()
    return None if row is None else ("valid" if row[0] else "invalid")


def tenant_indexes(conn: Any) -> int:
    """How many tenant indexes the table has (valid or not)."""
    return int(conn.execute(
        "SELECT count(*) FROM pg_indexes WHERE schemaname = %s AND indexname LIKE %s",
        (SCHEMA, "memories\\_hnsw\\_%\\_t%"),
    ).fetchone()[0])


def build_tenant_index(conn: Any, tenant: str, dims: int, work_mem: str, most: int) -> bool:
    """Build one tenant's HNSW index without blocking writes; False when another replica
    holds the build lock or the table has `most` tenant indexes already. `conn` must be
    outside any transaction (it is switched to autocommit: CREATE INDEX CONCURRENTLY
    cannot run in one)."""
    from psycopg import sql

    name = tenant_index_name(tenant, dims)
    autocommit = conn.autocommit
    conn.autocommit = True
    try:
        if not conn.execute("SELECT pg_try_advisory_lock(%s)", (TENANT_INDEX_LOCK,)).fetchone()[0]:
            return False
        try:
            if tenant_indexes(conn) >= most:
                return False
            if tenant_index_state(conn, tenant, dims) == "invalid":  # a failed earlier build
                conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {SCHEMA}.{name}")
            conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(work_mem)))
            # The predicate names the tenant as a literal: a query's `tenant = $1` matches it
            # when planned with the value (the store never prepares generic plans).
            conn.execute(sql.SQL(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {SCHEMA}.memories "
                f"USING hnsw ((embedding::vector({int(dims)})) vector_cosine_ops) "
                f"WITH ({HNSW_OPTIONS}) "
                f"WHERE dims = {int(dims)} AND superseded_by IS NULL AND tenant = {{}}"
            ).format(sql.Literal(tenant)))
        finally:
            conn.execute("RESET maintenance_work_mem")
            conn.execute("SELECT pg_advisory_unlock(%s)", (TENANT_INDEX_LOCK,))
    finally:
        conn.autocommit = autocommit
    return True
