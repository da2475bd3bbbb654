"""A real PostgreSQL 16 + pgvector for the tests, started once per test process.

The PyPI package `pgserver` bundles the server binaries and pgvector; it runs initdb in a
fresh temporary folder and serves on a Unix socket only, no TCP port. As root it runs the
server as a system user `pgserver` (created with useradd on first use) and makes its own
install folder and the temporary folder readable to that user. The server is stopped and its
data deleted when the test process exits.

Set TINYCONTEXT_TEST_PG_URL to a superuser URL of a server of your own (with pgvector
installed) to use it instead; the tests create and drop their own databases and roles there.

The stores under test connect as `tinycontext_app`, an ordinary role that owns its database:
row-level security applies to it (it never applies to superusers), so the contract suite runs
with both walls of tenant isolation up.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import subprocess
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import pytest

APP_ROLE = "tinycontext_app"
_lock = threading.Lock()
_admin_url: str | None = None
_databases: dict[str, str] = {}


def _start_pgserver() -> str:
    try:
        with warnings.catch_warnings():  # it warns at import when XDG_RUNTIME_DIR is unset
            warnings.simplefilter("ignore")
            import pgserver
    except ImportError as exc:  # the `test` extra installs it
        raise RuntimeError(
            "PostgreSQL tests need the `pgserver` package: pip install -e '.[test,postgres]' "
            "(or set TINYCONTEXT_TEST_PG_URL to a superuser URL of a server with pgvector)"
        ) from exc
    folder = tempfile.mkdtemp(prefix="tinycontext-pg-")
    # atexit runs last-registered first: pgserver's own handler (registered inside
    # get_server) stops the server and deletes its data, then this removes the folder.
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    # As root pgserver creates its system user on first use, outside its own lock: test
    # processes starting side by side (pytest -n) take turns so only one runs useradd.
    with open(os.path.join(tempfile.gettempdir(), "tinycontext-pgserver.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for attempt in range(3):
            try:
                server = pgserver.get_server(os.path.join(folder, "data"), cleanup_mode="delete")
                break
            except subprocess.TimeoutExpired:
                # pgserver gives pg_ctl 10 s; a busy machine can need longer. The server
                # keeps starting, and the next attempt attaches to it.
                if attempt == 2:
                    raise
                time.sleep(5)
    url = server.get_uri()
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        # A throwaway cluster: durability buys nothing here and costs a disk flush per commit.
        conn.execute("ALTER SYSTEM SET fsync = off")
        conn.execute("ALTER SYSTEM SET synchronous_commit = off")
        conn.execute("ALTER SYSTEM SET full_page_writes = off")
        conn.execute("SELECT pg_reload_conf()")
    return url


def admin_url() -> str:
    """A superuser URL of the test server (started on first use)."""
    global _admin_url
    with _lock:
        if _admin_url is None:
            _admin_url = os.environ.get("TINYCONTEXT_TEST_PG_URL") or _start_pgserver()
        return _admin_url


def with_database(url: str, database: str, user: str | None = None) -> str:
    """The same server URL naming another database (and optionally another role)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if user is not None:
        host = netloc.rsplit("@", 1)[-1]
        netloc = f"{user}@{host}"
    return urlunsplit((parts.scheme, netloc, "/" + database, parts.query, parts.fragment))


def create_database(name: str) -> str:
    """A new empty database owned by the app role (vector installed); returns the app URL."""
    import psycopg

    admin = admin_url()
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone():
            conn.execute(f"CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS")
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}" OWNER {APP_ROLE}')
    with psycopg.connect(with_database(admin, name), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return with_database(admin, name, APP_ROLE)


def drop_database(name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def shared_database(name: str = "tinycontext_contract") -> str:
    """One database per test process for the contract suite, emptied by `fresh_store`."""
    with _lock:
        url = _databases.get(name)
    if url is None:
        url = create_database(name)
        with _lock:
            _databases[name] = url
    return url


def empty_tables(url: str) -> None:
    """Delete every row of the store's tables (schema, indexes and policies stay)."""
    import psycopg

    admin = with_database(admin_url(), urlsplit(url).path.lstrip("/"))
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_tables WHERE schemaname = 'tinycontext' AND tablename = 'memories'"
        ).fetchone()
        if exists:
            conn.execute(
                "TRUNCATE tinycontext.memory_labels, tinycontext.memory_terms, "
                "tinycontext.sessions, "
                "tinycontext.memories "
                "RESTART IDENTITY"
            )


def fresh_store(tenant: str = "") -> object:
    """A PostgresStore over an emptied shared database."""
    from tinycontext.adapters.postgres.store import PostgresStore

    url = shared_database()
    empty_tables(url)
    return PostgresStore(url, tenant=tenant)


@contextmanager
def temporary_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """A new database for one test, owned by the app role; yields the app role's URL.

    Test modules wrap it in a fixture of their own (`yield from` is not needed):
    `with temporary_database(request) as url: yield url`.
    """
    name = "tc_" + "".join(c if c.isalnum() else "_" for c in request.node.name.lower())[:50]
    url = create_database(name)
    try:
        yield url
    finally:
        drop_database(name)
