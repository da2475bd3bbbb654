"""The per-user services of hosted mode: a SQLite file each, or a tenant each in PostgreSQL.

Either way every user's service shares the process's one embedder, tokenizer and clock (one
loaded model however many users), runs its own background re-embedding, and is opened on
the user's first request by the LRU in adapters.hosting.tenant_stores.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from tinycontext.config.engine import TinyContextConfig

if TYPE_CHECKING:
    from tinycontext.adapters.hosting.tenant_stores import TenantServices
    from tinycontext.app.service import MemoryService
    from tinycontext.hosted.parts import ProcessParts
    from tinycontext.hosted.settings import ServerSettings

log = logging.getLogger("tinycontext.hosted")


def _tighten(folder: Path) -> None:
    if os.name == "posix" and folder.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        os.chmod(folder, stat.S_IRWXU)
        log.warning("made the tenant store folder owner-only (mode 700)")


def _needs_postgres_extra() -> None:
    """Refuse at start, not on the first user's request, when the driver is missing."""
    from tinycontext.adapters.postgres.connection import INSTALL_HINT
    from tinycontext.hosted.settings import HostedConfigError

    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise HostedConfigError(
            "hosted mode on PostgreSQL (store_url) needs the `postgres` extra: "
            + INSTALL_HINT.replace("[postgres]", "[server,postgres]")
        ) from None


def open_tenants(
    config: TinyContextConfig, settings: ServerSettings, parts: ProcessParts
) -> TenantServices:
    """TenantStores (SQLite files) or PgTenantStores (one database) for hosted mode: every
    user's service comes from the process's parts, sharing its model, vocabulary and clock."""
    if settings.postgres:
        _needs_postgres_extra()
        from tinycontext.adapters.postgres.connection import SharedPgPool
        from tinycontext.adapters.postgres.store import PostgresStore
        from tinycontext.hosted.pg_tenants import PgTenantStores

        pool = SharedPgPool(config.store_url)  # one per process; nothing connects yet

        def open_tenant(key: str) -> MemoryService:
            store = PostgresStore(pool, tenant=key,
                                  keyword_context_weight=config.recall_keyword_context_weight)
            return parts.tenant_service(store, config)

        return PgTenantStores(pool, settings.tenant_secret, open_tenant,
                              settings.max_open_stores, parts.warm)

    from tinycontext.adapters.hosting.tenant_stores import TenantStores
    from tinycontext.adapters.sqlite.store import SqliteStore
    from tinycontext.config.keys import tenant_store_key

    assert settings.store_dir is not None
    _tighten(settings.store_dir)
    # With a key configured each user's file gets its own key, derived from the server's key
    # and the user's tenant key (the file name): one user's file and key open nothing else.
    material = parts.key_material(config)

    def open_file(path: Path) -> MemoryService:
        tenant_config = config.model_copy(update={"memory_db_path": str(path)})
        key = None if material is None else tenant_store_key(material, path.stem)
        store = SqliteStore(path, key=key, probe_share=config.dense_probe_share,
                            keyword_context_weight=config.recall_keyword_context_weight)
        return parts.tenant_service(store, tenant_config)

    return TenantStores(settings.store_dir, settings.tenant_secret, open_file,
                        settings.max_open_stores, parts.warm)
