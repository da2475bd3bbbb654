"""Opening a store this process cannot write, for reading only (connection.py falls back here).

SQLite opens such a file with `mode=ro`. Reading a WAL store also needs its -shm file, which a
folder this process cannot write cannot hold; such a store opens as immutable instead, which
is safe only while no -wal content waits to be merged. A store written by an older
TinyContext cannot be upgraded from here, so it is refused rather than misread.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tinycontext.domain.errors import StoreReadOnlyError, StoreUnavailableError

from .driver import companions, folder_writable
from .errors import CANTOPEN, READONLY, result_code, unreadable_message
from .schema import SCHEMA_VERSION, schema_version

# Wraps a connect call: keys the new connection when the store is encrypted (cipher.py).
Keyed = Callable[[Callable[[], Any]], Any]


def connect(path: Path, sqlite: Any, keyed: Keyed, busy_timeout_ms: int) -> Any:
    """A read-only connection to the store at `path`, or store_unavailable saying why not."""
    uri = path.resolve().as_uri()
    try:
        return _open_uri(sqlite, uri + "?mode=ro", keyed, busy_timeout_ms)
    except sqlite.OperationalError as exc:
        if result_code(exc) not in (CANTOPEN, READONLY):
            raise
        if folder_writable(path):
            raise StoreUnavailableError(unreadable_message(
                path, "SQLite could not open it for reading"
            )) from None
    # Reading a WAL store needs a -shm file that this folder cannot hold. With no
    # unmerged -wal content the file alone is the whole store, and as nobody can create
    # a -wal here, nobody can write it while we read: it can be opened as immutable.
    wal = companions(path)[0]
    if wal.exists() and wal.stat().st_size > 0:
        raise StoreUnavailableError(unreadable_message(
            path, "its -wal file holds writes not yet merged into it, which SQLite "
            "cannot read without creating a -shm file in the folder"
        ))
    try:
        return _open_uri(sqlite, uri + "?mode=ro&immutable=1", keyed, busy_timeout_ms)
    except sqlite.OperationalError as exc:
        if result_code(exc) not in (CANTOPEN, READONLY):
            raise
        raise StoreUnavailableError(unreadable_message(
            path, "SQLite could not open it for reading"
        )) from None


def _open_uri(sqlite: Any, uri: str, keyed: Keyed, busy_timeout_ms: int) -> Any:
    conn = keyed(lambda: sqlite.connect(
        uri, uri=True, timeout=busy_timeout_ms / 1000, isolation_level=None,
        check_same_thread=False,
    ))
    try:
        conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the file
    except BaseException:
        conn.close()
        raise
    return conn


def require_current_schema(conn: Any, path: Path) -> None:
    """Refuse a read-only store whose schema is older than this TinyContext reads."""
    version = schema_version(conn)
    if version < SCHEMA_VERSION:
        raise StoreReadOnlyError(
            f"The memory store {path} is read-only and was written by an older "
            f"TinyContext (schema {version}, this one uses {SCHEMA_VERSION}): open it once "
            "with write access to upgrade it, or copy it somewhere writable."
        )
