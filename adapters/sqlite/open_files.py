"""The store files this process has SQLite connections on, and what their headers said.

POSIX advisory locks belong to a process and a file: closing any descriptor of the file
drops every lock the process holds on it, SQLite's included. Reading a store's header with
Python's own open() and close() (cipher.file_state) while a connection is open dropped that
connection's shared lock; another process closing its last connection then took the store
for unused, checkpointed it and deleted its -wal and -shm under the open connection, whose
later writes went to the deleted log while new connections failed with a disk I/O error.
So the header is read before a file's first connection in the process only, and later
connections (and the key check of each one) use what it said then. A connection claims
the file before SQLite opens it, under one lock, so two connections opening at once (two
threads, two store objects) cannot read the header while the other is open. Nothing is
kept for a file nobody here has open, which matters with many users' stores in one server.

A store dropped without being closed is closed by its finaliser, which the garbage collector
may run in any thread at any point, also inside one of this module's own updates: that
release is put off until the update ends instead of waiting for a lock its own thread holds.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .cipher import FileState, file_state
from .driver import prepare_private_file

# Re-entered only by a finaliser's release in the thread that holds it (see _updating).
_lock = threading.RLock()
_files: dict[tuple[int, int], _Entry] = {}
_busy = False  # an update of _files is under way (read and written with _lock held)
_deferred: list[tuple[int, int]] = []  # releases that came in during it


@dataclass
class _Entry:
    state: FileState
    count: int = 0


@dataclass
class Hold:
    """One connection's claim on a store file, taken before SQLite opens it."""

    file: tuple[int, int] | None  # (device, inode); None when there was no file to claim
    state: FileState


def _claim(path: Path, state: FileState | None) -> Hold:
    """Count one more connection on the file at `path` (called with _lock held)."""
    try:
        info = os.stat(path)
    except OSError:
        return Hold(None, "missing")
    file = (info.st_dev, info.st_ino)
    entry = _files.get(file)
    if entry is None:
        # No connection of this process is on the file: opening and closing it drops no lock.
        entry = _files[file] = _Entry(file_state(path) if state is None else state)
    entry.count += 1
    return Hold(file, entry.state)


@contextlib.contextmanager
def _updating() -> Iterator[None]:
    """_lock held for an update of _files; the releases finalisers make meanwhile come after."""
    global _busy
    with _lock:
        _busy = True
        try:
            yield
        finally:
            while _deferred:
                _drop(_deferred.pop())
            _busy = False


def _drop(file: tuple[int, int]) -> None:
    entry = _files.get(file)
    if entry is not None:
        entry.count -= 1
        if entry.count <= 0:
            del _files[file]


def hold(path: Path, create: bool) -> Hold:
    """Claim the file at `path` for a connection about to be opened, creating it first when
    `create` (so a new file is claimed before SQLite holds it), and say what kind it is."""
    with _updating():
        if create and not path.exists():
            with contextlib.suppress(OSError):  # the connection's own open says why
                prepare_private_file(path)
        return _claim(path, None)


def learn(held: Hold, path: Path, state: FileState) -> None:
    """What a new connection found a new (or unclaimed) file to be, once it has opened it."""
    with _updating():
        if held.file is None:
            claimed = _claim(path, state)
            held.file, held.state = claimed.file, claimed.state
            return
        entry = _files.get(held.file)
        if entry is not None and entry.state in ("missing", "empty"):
            entry.state = state
        held.state = state


def release(held: Hold) -> None:
    """The connection that took `held` is closed (or was never opened)."""
    with _lock:
        file, held.file = held.file, None
        if file is None:
            return
        if _busy:  # a finaliser closing a store inside an update of this very thread
            _deferred.append(file)
            return
        with _updating():
            _drop(file)
