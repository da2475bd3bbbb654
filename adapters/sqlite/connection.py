"""Per-thread SQLite connections with WAL, a busy timeout, sqlite-vec and write retries.

Every storage failure leaves `ConnectionPool.lease` as a coded store error (errors.py). A
store the process cannot write (a read-only mount, a backup without write permission) is
opened for reading (read_only.py): recall and list work, writes are store_read_only. After a
read has found a damaged page, writes are refused (store_corrupt) instead of being added to a
broken file.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from tinycontext.domain.errors import (
    StoreCorruptError,
    StoreError,
    StoreReadOnlyError,
    TinyContextError,
)
from tinycontext.domain.text import stemmed_terms

from . import cipher, open_files, read_only
from .driver import load_vector_extension, prepare_private_file, sqlite_module, tighten
from .errors import (
    READONLY,
    cannot_write,
    read_only_message,
    refused_write_message,
    result_code,
    store_error,
)
from .schema import migrate

T = TypeVar("T")
log = logging.getLogger(__name__)
BUSY_TIMEOUT_MS = 15000
MAX_CONNECTIONS = 4
LOCK_RETRIES = 8
PLAIN_CACHE_KIB = 16000
ENCRYPTED_CACHE_KIB = 65536


class CommitRider(Protocol):
    """Writes of its own that join the next write transaction (recall counts: counts.py)."""

    def take(self) -> Any: ...
    def write_batch(self, conn: Any, batch: Any) -> None: ...
    def put_back(self, batch: Any) -> None: ...


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

    def __init__(self, path: Path, max_connections: int = MAX_CONNECTIONS,
                 key: bytes | None = None) -> None:
        self.path = path
        self._key = key  # a raw SQLCipher key: the store is encrypted (never logged or shown)
        self._local = threading.local()
        self._idle: list[Any] = []
        self._all: list[Any] = []
        self._holds: list[open_files.Hold] = []  # one per connection in _all
        self._slots = threading.BoundedSemaphore(max_connections)
        self._lock = threading.Lock()
        self._migrated = False
        self.vec_version = ""
        self.read_only = False  # found out on open: the file or its folder cannot be written
        self.damaged: StoreCorruptError | None = None  # the first corruption a read ran into
        self.rider: CommitRider | None = None

    @property
    def encrypted(self) -> bool:
        return self._key is not None

    def _keyed(self, connect: Callable[[], Any], sqlite: Any, state: cipher.FileState) -> Any:
        """A new connection, keyed and checked when the store is encrypted."""
        if self._key is None:
            return connect()
        return cipher.open_keyed(connect, self._key, self.path, sqlite.DatabaseError, state)

    def _connect(self, sqlite: Any, hold: open_files.Hold) -> Any:
        # The file's kind comes from `hold`, never from reading the file now (open_files.py).
        cipher.check_state(hold.state, self.path, self._key)
        conn = self._connect_file(sqlite, hold.state)
        open_files.learn(hold, self.path, "encrypted" if self.encrypted else "plain")
        return conn

    def _connect_file(self, sqlite: Any, state: cipher.FileState) -> Any:
        if not self.read_only:
            conn = None
            try:
                prepare_private_file(self.path)
                conn = self._keyed(lambda: sqlite.connect(
                    str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                    check_same_thread=False,
                ), sqlite, state)
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
                return conn
            except (OSError, sqlite.Error, TinyContextError) as exc:
                if conn is not None:
                    conn.close()
                if isinstance(exc, TinyContextError) or not (
                        self.path.is_file() and cannot_write(exc)):
                    raise
            self.read_only = True
            log.info("memory store %s cannot be written: opened for reading only", self.path)
        return read_only.connect(self.path, sqlite,
                                 lambda connect: self._keyed(connect, sqlite, state),
                                 BUSY_TIMEOUT_MS)

    def _migrate(self, conn: Any, sqlite: Any) -> None:
        if not self.read_only:
            try:
                self._retry(lambda: migrate(conn))
                return
            except sqlite.OperationalError as exc:
                # A file this user may only read in a writable folder opens "successfully"
                # read-only; the migration's write lock is the first thing to notice.
                if result_code(exc) != READONLY:
                    raise
                self.read_only = True
        read_only.require_current_schema(conn, self.path)

    def _open(self) -> Any:
        sqlite = sqlite_module()
        hold = open_files.hold(self.path, create=not self.read_only)  # before SQLite opens the file
        try:
            conn = self._connect(sqlite, hold)
        except BaseException:
            open_files.release(hold)
            raise
        try:
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA cache_size = {self._cache_size()}")
            self.vec_version = load_vector_extension(conn)
            # Schema version 6 fills the stemmed keyword column from Python's stemmer.
            conn.create_function("tinycontext_stems", 1, _stems, deterministic=True)
            with self._lock:
                if not self._migrated:
                    self._migrate(conn, sqlite)
                    self._migrated = True
            # Per-connection view of the keyword index's document frequencies (not stored;
            # the temp schema is writable even when the store is not).
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_vocab "
                "USING fts5vocab(main, memory_fts, 'row')"
            )
        except BaseException:
            conn.close()
            open_files.release(hold)  # after the close: the file may be read once nothing holds it
            raise
        with self._lock:
            self._all.append(conn)
            self._holds.append(hold)
        if not self.read_only:
            tighten(self.path)
        return conn

    def _cache_size(self) -> int:
        """Page cache per connection, in KiB as a negative number (SQLite's convention).
        A plain store's pages missing here come from the operating system's file cache at
        the cost of a copy; an encrypted store decrypts and authenticates each one again,
        so its cache holds a larger working set (it grows only as pages are read)."""
        return -ENCRYPTED_CACHE_KIB if self.encrypted else -PLAIN_CACHE_KIB

    def _failure(self, exc: Exception) -> StoreError | None:
        """The coded error for a storage failure (None: not one, or already coded)."""
        if isinstance(exc, TinyContextError):
            return None
        if not isinstance(exc, (OSError, sqlite_module().Error)):
            return None
        error = store_error(exc, self.path, BUSY_TIMEOUT_MS / 1000, self.encrypted)
        if isinstance(error, StoreCorruptError) and self.damaged is None:
            self.damaged = error
            log.error("memory store %s is damaged; writes are refused from now on", self.path)
        return error

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
        except Exception as exc:
            # The one translation point: nested leases re-use the outer one's connection
            # and let their failures pass up to here.
            error = self._failure(exc)
            if error is None:
                raise
            raise error from exc
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
        if self.damaged is not None:
            raise StoreCorruptError(refused_write_message(self.path, self.encrypted))
        with self.lease() as conn:
            if self.read_only:
                raise StoreReadOnlyError(read_only_message(self.path))
            self._retry(lambda: conn.execute("BEGIN IMMEDIATE"))
            rider = self.rider
            batch = rider.take() if rider is not None else None
            try:
                yield conn
                if batch:
                    rider.write_batch(conn, batch)  # type: ignore[union-attr]
                conn.execute("COMMIT")
            except BaseException:
                # SQLite has already rolled back after some failures (a full disk): a second
                # ROLLBACK would fail and hide the real error.
                if conn.in_transaction:
                    with contextlib.suppress(Exception):
                        conn.execute("ROLLBACK")
                if batch:
                    rider.put_back(batch)  # type: ignore[union-attr]
                raise

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
            for hold in self._holds:
                open_files.release(hold)
            self._holds.clear()
