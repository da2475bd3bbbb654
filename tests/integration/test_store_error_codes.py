"""The translation tables of both stores, for failures too rare to stage on a real file or
server (I/O errors, a server disk that fills, damaged indexes): each maps to its code, and
what is not a storage failure (a constraint, a bug) is left alone."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from psycopg import errors as pg

from tinycontext.adapters.postgres import errors as pg_errors
from tinycontext.adapters.sqlite import errors as sqlite_errors

PATH = Path("/data/memories.db")


class DriverError(Exception):
    """A driver exception as sqlite3/sqlean raise them: an extended result code attached."""

    def __init__(self, message: str, code: int | None) -> None:
        super().__init__(message)
        if code is not None:
            self.sqlite_errorcode = code


@pytest.mark.parametrize(("exc", "code"), [
    (DriverError("database disk image is malformed", 11), "store_corrupt"),
    (DriverError("file is not a database", 26), "store_corrupt"),
    (DriverError("attempt to write a readonly database", 8 | (1 << 8)), "store_read_only"),
    (DriverError("database or disk is full", 13), "store_full"),
    (DriverError("database is locked", 5), "store_unavailable"),
    (DriverError("database table is locked", 6), "store_unavailable"),
    (DriverError("unable to open database file", 14), "store_unavailable"),
    (DriverError("disk I/O error", 10 | (3 << 8)), "store_unavailable"),  # SQLITE_IOERR_WRITE
    # Builds without result codes on exceptions: SQLite's fixed messages.
    (DriverError("database disk image is malformed", None), "store_corrupt"),
    (DriverError("database or disk is full", None), "store_full"),
    (OSError(errno.ENOSPC, "No space left on device"), "store_full"),
    (OSError(errno.EROFS, "Read-only file system"), "store_unavailable"),  # no file to read
    (PermissionError(errno.EACCES, "Permission denied"), "store_unavailable"),
    (OSError(errno.EIO, "Input/output error"), "store_unavailable"),
])
def test_sqlite_failures_map_to_codes(exc: BaseException, code: str) -> None:
    error = sqlite_errors.store_error(exc, PATH, 15)
    assert error is not None and error.code == code
    assert str(PATH) in error.message


@pytest.mark.parametrize("exc", [
    DriverError("UNIQUE constraint failed: memories.id", 19 | (8 << 8)),
    DriverError("no such column: nope", 1),
    DriverError("something new", None),
])
def test_sqlite_non_storage_errors_stay(exc: BaseException) -> None:
    assert sqlite_errors.store_error(exc, PATH, 15) is None


@pytest.mark.parametrize(("exc", "code"), [
    (pg.ReadOnlySqlTransaction("cannot execute INSERT in a read-only transaction"),
     "store_read_only"),
    (pg.DiskFull("could not extend file"), "store_full"),
    (pg.DataCorrupted("invalid page in block 7"), "store_corrupt"),
    (pg.IndexCorrupted("index is corrupted"), "store_corrupt"),
    (pg.CannotConnectNow("the database system is starting up"), "store_unavailable"),
    (pg.AdminShutdown("terminating connection"), "store_unavailable"),
    (pg.TooManyConnections("too many clients"), "store_unavailable"),
    (pg.InvalidPassword("password authentication failed"), "store_unavailable"),
])
def test_postgres_failures_map_to_codes(exc: BaseException, code: str) -> None:
    error = pg_errors.store_error(exc, "postgresql://app:***@db/memories")
    assert error is not None and error.code == code
    assert "postgresql://app:***@db/memories" in error.message


@pytest.mark.parametrize("exc", [
    pg.UniqueViolation("duplicate key value violates unique constraint: Key (id)=(secret)"),
    pg.SyntaxError("syntax error at or near"),
    ValueError("not a driver error"),
])
def test_postgres_non_storage_errors_stay(exc: BaseException) -> None:
    assert pg_errors.store_error(exc, "postgresql://db/memories") is None


def test_a_read_only_file_system_is_store_read_only_only_when_the_store_exists(
    tmp_path: Path,
) -> None:
    store = tmp_path / "memories.db"
    store.write_bytes(b"")
    exc = OSError(errno.EROFS, "Read-only file system")
    there = sqlite_errors.store_error(exc, store, 15)
    assert there is not None and there.code == "store_read_only"
    assert "recall and list still work" in there.message
    missing = sqlite_errors.store_error(exc, tmp_path / "none.db", 15)
    assert missing is not None and missing.code == "store_unavailable"
    assert "cannot be created" in missing.message and "recall" not in missing.message
