"""Per-thread SQLite connections with WAL, a busy timeout, sqlite-vec and write retries."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from tinycontext.domain.text import stemmed_terms

from .sqlite_driver import load_vector_extension, prepare_private_file, sqlite_module, tighten
from .sqlite_schema import migrate

T = TypeVar("T")
BUSY_TIMEOUT_MS = 15000
MAX_CONNECTIONS = 4
LOCK_RETRIES = 8


def _stems(text: str | None) -> str | None:
    return None if text is None else stemmed_terms(text)


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text


class ConnectionPool:
    """A few SQLite connections per store, lent to one thread at a time.

    Connections are opened lazily (the database file is only created by the first real
    operation) and at most MAX_CONNECTIONS exist per store, so a server with many worker
    threads and many open stores (hosted mode) holds a bounded number of files. A thread
    that already holds a connection reuses it for nested calls, so leases cannot deadlock.
    """

    def __init__(self, path: Path, max_connections: int = MAX_CONNECTIONS) -> None:
        self.path = path
        self._local = threading.local()
        self._idle: list[Any] = []
        self._all: list[Any] = []
        self._slots = threading.BoundedSemaphore(max_connections)
        self._lock = threading.Lock()
        self._migrated = False
        self.vec_version = ""

    def _open(self) -> Any:
        sqlite = sqlite_module()
        prepare_private_file(self.path)
        conn = sqlite.connect(
            str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA cache_size = -16000")
        self.vec_version = load_vector_extension(conn)
        # Schema version 6 fills the stemmed keyword column from Python's stemmer.
        conn.create_function("tinycontext_stems", 1, _stems, deterministic=True)
        with self._lock:
            if not self._migrated:
                self._retry(lambda: migrate(conn))
                self._migrated = True
            self._all.append(conn)
        # Per-connection view of the keyword index's document frequencies (not stored).
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_vocab "
            "USING fts5vocab(main, memory_fts, 'row')"
        )
        tighten(self.path)
        return conn

    @contextmanager
    def lease(self) -> Iterator[Any]:
        """A connection for this thread until the block ends (the same one when nested)."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        self._slots.acquire()
        try:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                conn = self._open()
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None
                with self._lock:
                    if conn in self._all:  # not closed meanwhile
                        self._idle.append(conn)
        finally:
            self._slots.release()

    def _retry(self, action: Callable[[], T]) -> T:
        sqlite = sqlite_module()
        for attempt in range(LOCK_RETRIES):
            try:
                return action()
            except sqlite.OperationalError as exc:
                if not _is_lock_error(exc) or attempt == LOCK_RETRIES - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    @contextmanager
    def write(self) -> Iterator[Any]:
        """An IMMEDIATE transaction (takes the write lock up front, so no upgrade deadlock)."""
        with self.lease() as conn:
            self._retry(lambda: conn.execute("BEGIN IMMEDIATE"))
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def read(self, sql: str, params: Any = ()) -> list[Any]:
        with self.lease() as conn:
            return self._retry(lambda: conn.execute(sql, params).fetchall())

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(Exception):  # closing from another thread
                    conn.close()
            self._all.clear()
            self._idle.clear()
