"""SQLite and file-system failures of a store file, as the coded store errors (SPEC section 2).

`ConnectionPool.lease` is the one place that calls `store_error`: every open, read and write of
a SQLite store passes through it, so no raw sqlite3/sqlean error or OSError reaches a caller.
Messages name the file and say what to do; they never hold memory content (SQLite's own
messages are not copied in, only what the result code means).
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from tinycontext.domain.errors import (
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
    StoreUnavailableError,
)

# SQLite primary result codes (sqlite3.h); an extended code keeps the primary one in its low byte.
PERM, BUSY, LOCKED, READONLY, IOERR, CORRUPT = 3, 5, 6, 8, 10, 11
FULL, CANTOPEN, PROTOCOL, AUTH, NOTADB = 13, 14, 15, 23, 26

# Builds whose exceptions carry no result code: SQLite's fixed messages say the same.
_MESSAGES = (
    ("malformed", CORRUPT), ("not a database", NOTADB), ("readonly database", READONLY),
    ("disk is full", FULL), ("is locked", BUSY), ("database is busy", BUSY),
    ("unable to open", CANTOPEN), ("disk i/o error", IOERR),
)

SALVAGE = (
    "Run `tinycontext doctor` to check it, then `tinycontext repair` to write every readable "
    "memory to a JSON Lines file and import that into a fresh store (or restore the file from "
    "a backup or an export)."
)


def result_code(exc: BaseException) -> int | None:
    """The primary SQLite result code of a driver exception, or None if it has none."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    text = str(exc).lower()
    return next((value for needle, value in _MESSAGES if needle in text), None)


def cannot_write(exc: BaseException) -> bool:
    """Whether opening for writing failed only because the file or its folder is read-only."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    return result_code(exc) in (READONLY, CANTOPEN, PERM)


def _read_only_reasons(path: Path) -> list[str]:
    """What stops this process writing the store, as found on disk now (may be nothing: root
    ignores file modes, and a mount's own options are not always visible)."""
    folder = path.parent
    with contextlib.suppress(OSError):
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return ["it is on a read-only file system"]
    reasons = []
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        reasons.append(f"its folder {folder} is not writable by this user")
    if path.exists() and not os.access(path, os.W_OK):
        reasons.append("the file is not writable by this user")
    for companion in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        if companion.exists() and not os.access(companion, os.R_OK | os.W_OK):
            reasons.append(
                f"its companion {companion.name} is not writable by this user (left by an "
                "earlier read-only open: `chmod 600` it, or delete it while no program has "
                "the store open)"
            )
    return reasons


def read_only_message(path: Path) -> str:
    reasons = _read_only_reasons(path)
    why = "; ".join(reasons) if reasons else (
        "a read-only mount, a backup copy, or no write permission for this user"
    )
    return (
        f"The memory store {path} is read-only ({why}), so nothing can be saved, updated or "
        "deleted; recall and list still work. To write, make the file, its -wal/-shm "
        "companions and its folder writable by this user, or point memory_db_path at a "
        "writable copy."
    )


def unreadable_message(path: Path, what: str) -> str:
    """A store this process can neither write nor read (so not store_read_only's promise)."""
    found = "".join(f"; {reason}" for reason in _read_only_reasons(path))
    return (
        f"The memory store {path} cannot be written by this user and cannot be read either "
        f"({what}{found}). Make the file, its -wal/-shm companions and its folder writable "
        "by this user and open it once, or copy the folder somewhere writable and point "
        "memory_db_path at the copy."
    )


# An encrypted store's pages are read through SQLCipher only, so repair cannot read around
# a damaged one (it exports an encrypted store only when every page authenticates).
SALVAGE_ENCRYPTED = (
    "Run `tinycontext doctor` to check it. Memories cannot be salvaged around damage in an "
    "encrypted store (`tinycontext repair` exports one only when every page authenticates): "
    "restore the file from a backup, or load an export into a fresh store with `tinycontext "
    "import FILE`."
)


def damaged_message(path: Path, what: str, encrypted: bool) -> str:
    # `encrypted` comes from the store's key, not from the file: this process has
    # connections on it, and reading the file here would drop their locks (open_files.py).
    advice = SALVAGE_ENCRYPTED if encrypted else SALVAGE
    return f"The memory store {path} is damaged: {what}. {advice}"


def refused_write_message(path: Path, encrypted: bool) -> str:
    return damaged_message(
        path, "a read found a damaged page, so writes are refused until it is repaired",
        encrypted,
    )


def _unopenable(path: Path) -> StoreError:
    return StoreUnavailableError(
        f"The memory store {path} cannot be opened: check that its folder exists and that this "
        "user may read and write the file and its folder (`tinycontext doctor` checks both)."
    )


def _full(path: Path) -> StoreError:
    return StoreFullError(
        f"No space is left for the memory store {path}; nothing was written. Free disk space "
        "(or raise the quota) and retry."
    )


def _from_os(exc: OSError, path: Path) -> StoreError:
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG):
        return _full(path)
    if exc.errno == errno.EROFS:
        if path.is_file():
            return StoreReadOnlyError(read_only_message(path))
        return StoreUnavailableError(  # no store to read: store_read_only would promise reads
            f"The memory store {path} does not exist and cannot be created: its folder is on a "
            "read-only file system. Point memory_db_path at a writable folder, or mount this "
            "one read-write."
        )
    if exc.errno in (errno.EACCES, errno.EPERM, errno.ENOENT, errno.ENOTDIR):
        return _unopenable(path)
    reason = errno.errorcode.get(exc.errno or 0, "an operating-system error")
    return StoreUnavailableError(
        f"The memory store {path} cannot be used ({reason}): check the disk and the file's "
        "permissions, then run `tinycontext doctor`."
    )


def store_error(exc: BaseException, path: Path, busy_seconds: float,
                encrypted: bool = False) -> StoreError | None:
    """The coded error for a storage failure, or None when `exc` is not one (a bug, a
    constraint): those stay as they are and the transports report internal_error.
    `encrypted`: the store was opened with a key."""
    if isinstance(exc, OSError):
        return _from_os(exc, path)
    code = result_code(exc)
    if code == CORRUPT:
        return StoreCorruptError(damaged_message(path, "a page of the file is malformed",
                                                  encrypted))
    if code == NOTADB:
        return StoreCorruptError(damaged_message(
            path, "it is not a SQLite database, or its header was overwritten", encrypted
        ))
    if code == READONLY:
        return StoreReadOnlyError(read_only_message(path))
    if code == FULL:
        return _full(path)
    if code in (BUSY, LOCKED):
        return StoreUnavailableError(
            f"The memory store {path} stayed locked by another process for more than "
            f"{busy_seconds:g} s, so this operation was not done. Retry; if it keeps "
            "happening, look for a program holding the file in a long transaction."
        )
    if code in (CANTOPEN, PERM, AUTH):
        return _unopenable(path)
    if code in (IOERR, PROTOCOL):
        return StoreUnavailableError(
            f"The disk reported an I/O error on the memory store {path}: check the disk and "
            "its free space, then run `tinycontext doctor`."
        )
    return None
