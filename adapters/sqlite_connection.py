"""Per-thread SQLite connections with WAL, a busy timeout, sqlite-vec and write retries."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from .sqlite_driver import load_vector_extension, prepare_private_file, sqlite_module, tighten
from .sqlite_schema import migrate

T = TypeVar("T")
BUSY_TIMEOUT_MS = 15000
LOCK_RETRIES = 8


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text


class ConnectionPool:
    """One connection per thread (SQLite connections must not be shared across threads),
    opened lazily so the database file is only created by the first real operation."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[Any] = []
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

    def connection(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
        return conn

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
        conn = self.connection()
        self._retry(lambda: conn.execute("BEGIN IMMEDIATE"))
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def read(self, sql: str, params: Any = ()) -> list[Any]:
        conn = self.connection()
        return self._retry(lambda: conn.execute(sql, params).fetchall())

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(Exception):  # closing from another thread
                    conn.close()
            self._all.clear()
            self._local = threading.local()
