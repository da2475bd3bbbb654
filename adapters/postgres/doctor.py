"""Readiness checks of a PostgreSQL store for `tinycontext doctor` (read-only: no migration)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .connection import INSTALL_HINT, redact_url
from .schema import SCHEMA, SCHEMA_VERSION

CONNECT_TIMEOUT_SECONDS = 5


def _secrets(url: str) -> list[str]:
    parts = urlsplit(url)
    found = [parts.password or ""]
    found += [v for k, v in parse_qsl(parts.query) if k.lower() in ("password", "sslpassword")]
    return [s for s in found if s]


def _scrub(text: str, url: str) -> str:
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return text


def check_postgres(url: str, tenant: str = "") -> list[tuple[str, bool, str]]:
    """(name, ok, detail) for the connection, pgvector and the schema; never shows a password.

    Like the SQLite checks, nothing is created: a database without the schema is reported
    as ready when pgvector is available, since the first save or recall migrates it.
    """
    shown = redact_url(url)
    try:
        import psycopg
    except ImportError:
        return [("store", False, f"PostgreSQL at {shown}: psycopg is not installed; "
                 + INSTALL_HINT)]
    def one(conn: Any, sql: str, params: Any = None) -> Any:
        row = conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS) as conn:
            server = one(conn, "SHOW server_version")
            installed = one(conn, "SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            available = one(
                conn, "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            )
            has_schema = one(
                conn,
                "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'schema_version'",
                (SCHEMA,),
            )
            version, live = 0, None
            if has_schema:
                version = int(one(
                    conn, f"SELECT coalesce(max(version), 0) FROM {SCHEMA}.schema_version"
                ))
                conn.execute("SELECT set_config('tinycontext.tenant', %s, false)", (tenant,))
                live = one(
                    conn,
                    f"SELECT count(*) FROM {SCHEMA}.memories "
                    "WHERE tenant = %s AND superseded_by IS NULL",
                    (tenant,),
                )
    except Exception as exc:  # noqa: BLE001 - reported, not raised: doctor must finish
        return [("store", False, f"PostgreSQL at {shown}: cannot connect "
                 f"({type(exc).__name__}: {_scrub(str(exc), url).strip()})")]
    checks = [("store", True, f"PostgreSQL {server} at {shown}")]
    if installed:
        checks.append(("pgvector", True, f"vector {installed} installed"))
    elif available:
        checks.append(("pgvector", True, f"vector {available} available; created on first "
                       "use (needs a role allowed to CREATE EXTENSION, else run it once as "
                       "a superuser)"))
    else:
        checks.append(("pgvector", False, "the vector extension is not available on this "
                       "server; install pgvector (e.g. the pgvector/pgvector image)"))
    if version > SCHEMA_VERSION:
        checks.append(("schema", False, f"version {version} is newer than this TinyContext "
                       f"({SCHEMA_VERSION}); upgrade with pip install -U tinysuite-context"))
    elif version == 0:
        checks.append(("schema", True, f"not created yet: the first save or recall creates "
                       f"schema {SCHEMA!r} (version {SCHEMA_VERSION})"))
    else:
        note = "" if version == SCHEMA_VERSION else f", upgraded to {SCHEMA_VERSION} on first use"
        checks.append(("schema", True, f"version {version}{note}, {live} live memories"))
    return checks
