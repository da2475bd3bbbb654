"""psycopg 3 connection pool for the PostgreSQL store: lazy open, tenant-scoped transactions.

One `SharedPgPool` holds the connections; a `PgPool` is one tenant's view of it, so hosted
mode serves every user of a replica over one bounded pool. Server failures (down, refusing
the login, read-only, full, damaged) leave `SharedPgPool` as coded store errors (pg_errors).

Each transaction first sets `tinycontext.tenant` (transaction-local), the key the row-level
security policies compare with, so a pooled connection never carries one tenant's scope into
another's work, also behind a transaction-pooling proxy such as PgBouncer.

The URL may hold a password: it is never logged, and `redact_url` is what diagnostics show.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .errors import translated
from .schema import TENANT_SETTING, migrate

T = TypeVar("T")
log = logging.getLogger(__name__)
RETRIES = 4
# What to install when store_url names PostgreSQL but psycopg is missing (said in three places).
INSTALL_HINT = "pip install 'tinysuite-context[postgres]'"
_RETRYABLE_STATES = {"40001", "40P01"}  # serialization failure, deadlock detected
_SECRET_PARAMS = {"password", "sslpassword", "sslkey"}


def redact_url(url: str) -> str:
    """The URL with any password (in the authority or the query string) replaced by ***."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":***"
            netloc = f"{userinfo}@{host}"
        query = urlencode(
            [(k, "***" if k.lower() in _SECRET_PARAMS else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)],
            safe="/",
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return "postgresql://(unparseable URL hidden)"


def _retryable(exc: Exception) -> bool:
    return getattr(exc, "sqlstate", None) in _RETRYABLE_STATES


def _configure(conn: Any) -> None:
    """Session settings for short OLTP queries: a parallel worker or a JIT compilation
    costs more than the few milliseconds these queries take."""
    conn.autocommit = True
    conn.execute("SET max_parallel_workers_per_gather = 0")
    conn.execute("SET jit = off")
    conn.autocommit = False


class SharedPgPool:
    """One psycopg_pool.ConnectionPool for a URL, opened on first use (and again after
    `close`). Hosted mode serves every tenant from one of these per process, through a
    tenant-bound `PgPool` each, so connections are bounded per replica, not per user."""

    def __init__(self, url: str, max_size: int = 10) -> None:
        self._url = url
        self._max_size = max_size
        self._pool: Any = None
        self._lock = threading.Lock()
        self.migrated_from: int | None = None
        # Dense indexes are per database, not per tenant: dimensions known to have one.
        self.indexed_dims: set[int] = set()

    def __repr__(self) -> str:  # never show the password
        return f"SharedPgPool({self.redacted_url!r})"

    @property
    def redacted_url(self) -> str:
        return redact_url(self._url)

    @property
    def max_size(self) -> int:
        return self._max_size

    def open(self) -> Any:
        """The psycopg pool, migrating the schema and opening it on first use."""
        with translated(self.redacted_url), self._lock:
            if self._pool is not None:
                return self._pool
            try:
                import psycopg
                from psycopg_pool import ConnectionPool
            except ImportError as exc:
                raise RuntimeError(
                    "store_url names a PostgreSQL database, which needs the `postgres` extra: "
                    + INSTALL_HINT
                ) from exc

            # A direct connection first: a bad URL or a server that is down fails here with
            # the server's own message instead of a pool timeout.
            with psycopg.connect(self._url, autocommit=True) as conn:
                self.migrated_from = migrate(conn)
            pool = ConnectionPool(
                self._url, min_size=1, max_size=self._max_size, open=False,
                # No server-side prepared statements: our statements differ per query shape
                # anyway, and they would break behind a transaction-pooling PgBouncer.
                kwargs={"autocommit": False, "prepare_threshold": None},
                configure=_configure, name="tinycontext",
                timeout=30.0,
            )
            pool.open(wait=True, timeout=30.0)
            self._pool = pool
            return pool

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection (outside any transaction) for schema work."""
        with translated(self.redacted_url):
            pool = self.open()
            with pool.connection() as conn:
                yield conn

    def run(self, tenant: str, work: Callable[[Any], T],
            settings: dict[str, str] | None = None) -> T:
        """`work(cursor)` in one transaction scoped to `tenant`; retried on deadlock."""
        with translated(self.redacted_url):
            return self._run(tenant, work, settings)

    def _run(self, tenant: str, work: Callable[[Any], T],
             settings: dict[str, str] | None) -> T:
        pool = self.open()
        pairs = [(TENANT_SETTING, tenant), *(settings or {}).items()]
        setup = "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in pairs)
        values = [v for pair in pairs for v in pair]
        for attempt in range(RETRIES):
            try:
                with pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                    cur.execute(setup, values)
                    return work(cur)
            except Exception as exc:
                if not _retryable(exc) or attempt == RETRIES - 1:
                    raise
                time.sleep(0.01 * (2**attempt))
        raise AssertionError("unreachable")

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._pool is not None

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


class PgPool:
    """One tenant's view of a SharedPgPool: every transaction is scoped to `tenant`.

    Built from a URL it owns a pool of its own (single-user mode, tools) and `close` closes
    it; built over a shared pool it is a cheap wrapper whose `close` leaves the pool open
    for the other tenants (its owner closes it at shutdown).
    """

    def __init__(self, url: str | SharedPgPool, tenant: str, max_size: int = 10) -> None:
        self._owns = not isinstance(url, SharedPgPool)
        self.shared = url if isinstance(url, SharedPgPool) else SharedPgPool(url, max_size)
        self.tenant = tenant

    def __repr__(self) -> str:  # never show the password
        return f"PgPool({self.redacted_url!r}, tenant={self.tenant!r})"

    @property
    def redacted_url(self) -> str:
        return self.shared.redacted_url

    @property
    def migrated_from(self) -> int | None:
        return self.shared.migrated_from

    @property
    def indexed_dims(self) -> set[int]:
        return self.shared.indexed_dims

    def connection(self) -> AbstractContextManager[Any]:
        """A pooled connection (outside any transaction) for schema work."""
        return self.shared.connection()

    def run(self, work: Callable[[Any], T], settings: dict[str, str] | None = None) -> T:
        """`work(cursor)` in one transaction scoped to the tenant; retried on deadlock.

        `settings` are further transaction-local settings (planner hints), sent in the same
        statement as the tenant.
        """
        return self.shared.run(self.tenant, work, settings)

    def read(self, sql: str, params: Any = None) -> list[Any]:
        def fetch(cur: Any) -> list[Any]:
            cur.execute(sql, params)
            return list(cur.fetchall())

        return self.run(fetch)

    def close(self) -> None:
        if self._owns:
            self.shared.close()
