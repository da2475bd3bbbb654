"""Hosted mode on PostgreSQL: every user's memories in one database, keyed by tenant.

A user's rows carry their tenant key (the HMAC of the user id that names SQLite files, never
the id itself); each PostgresStore filters by it and row-level security checks it again.
All tenants of a process share one connection pool: a service per user is only a cheap
tenant-bound view of it, so evicting or closing one never closes the pool, and the
replica's connections stay bounded however many users it serves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tinycontext.adapters.hosting.tenant_stores import TenantServices
from tinycontext.adapters.postgres.connection import SharedPgPool
from tinycontext.adapters.postgres.schema import SCHEMA
from tinycontext.app.service import MemoryService


class PgTenantStores(TenantServices):
    """The per-user services of a hosted server over one shared PostgreSQL pool."""

    backend = "postgresql"

    def __init__(
        self,
        pool: SharedPgPool,
        secret: bytes,
        open_service: Callable[[str], MemoryService],
        max_open: int = 64,
        warm: Callable[[], None] | None = None,
    ) -> None:
        self.pool = pool

        def warm_all() -> None:
            if warm is not None:
                warm()
            # Connect and migrate off the request path: a wrong URL or a database that is
            # down shows in the log at start, not only in the first user's request.
            pool.open()

        super().__init__(secret, open_service, max_open, warm_all)

    def close(self) -> None:
        """Close every user's service, then the shared pool (server shutdown)."""
        try:
            super().close()
        finally:
            self.pool.close()

    def storage_facts(self) -> dict[str, Any]:
        """Disk use of the store's tables (every tenant) and open stores.

        `store_count` is None: row-level security keeps even the server's own role from
        listing the tenants, and the facts must not need a role that could.
        """
        with self.pool.connection() as conn, conn.transaction():
            row = conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind = 'r'",
                (SCHEMA,),
            ).fetchone()
        return {"backend": self.backend, "store_count": None, "disk_bytes": int(row[0]),
                **super().storage_facts()}
