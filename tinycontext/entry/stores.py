"""Opening the configured store: SQLite (encrypted when a key is configured) or PostgreSQL.

The container opens a single-user process's store through here; `doctor`, `export`, `repair`
and the encryption commands use the same key handling without a container.
"""

from __future__ import annotations

from tinycontext.config.engine import TinyContextConfig
from tinycontext.ports.store import Store


def sqlite_key(config: TinyContextConfig) -> bytes | None:
    """The single-user store's SQLCipher key when encryption is configured (then SQLCipher
    becomes this process's SQLite), else None; a bad key or a missing extra fails here."""
    from tinycontext.config.keys import store_key

    material = sqlite_key_material(config)
    return None if material is None else store_key(material)


def sqlite_key_material(config: TinyContextConfig) -> bytes | None:
    """The configured key material, with SQLCipher made this process's SQLite; None when
    encryption is not configured. Refused for PostgreSQL, whose encryption at rest is the
    database server's and its disk's (docs/guides/postgres.md)."""
    from tinycontext.config.keys import EncryptionKeyError, key_material

    material = key_material(config)
    if material is None:
        return None
    if config.store_url:
        raise EncryptionKeyError(
            "An encryption key is configured but the store is PostgreSQL (store_url): "
            "encryption at rest there is the database server's and its disk's job (see "
            "docs/guides/postgres.md). Unset TINYCONTEXT_ENCRYPTION_KEY_FILE / _KEY."
        )
    from tinycontext.adapters.sqlite.driver import EncryptionUnavailableError, use_sqlcipher

    try:
        use_sqlcipher()
    except EncryptionUnavailableError as exc:
        raise EncryptionKeyError(str(exc)) from None
    return material


def open_store(config: TinyContextConfig) -> Store:
    """SQLite at `memory_db_path` by default (encrypted when a key is configured); PostgreSQL
    when `store_url` is set (nothing connects yet)."""
    if not config.store_url:
        from tinycontext.adapters.sqlite.store import SqliteStore

        return SqliteStore(config.memory_db_path, key=sqlite_key(config),
                           probe_share=config.dense_probe_share,
                           keyword_context_weight=config.recall_keyword_context_weight)
    sqlite_key_material(config)  # a key with PostgreSQL is refused, never silently unused
    from tinycontext.adapters.postgres.store import PostgresStore

    return PostgresStore(config.store_url,
                         keyword_context_weight=config.recall_keyword_context_weight)
