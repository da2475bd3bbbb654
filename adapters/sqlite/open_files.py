"""The store files this process has SQLite connections on, and what their headers said.

POSIX advisory locks belong to a process and a file: closing any descriptor of the file
drops every lock the process holds on it, SQLite's included. Reading a store's header with
Python's own open() and close() (cipher.file_state) while a connection is open dropped that
connection's shared lock; another process closing its last connection then took the store
for unused, checkpointed it and deleted its -wal and -shm under the open connection, whose
later writes went to the deleted log while new connections failed with a disk I/O error.
So the header is read before a file's first connection in the process only, and later
connections check their key against what it said then.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

FileKey = tuple[int, int]  # (device, inode): the same file under any name


@dataclass
class _File:
    connections: int
    state: str  # cipher.file_state's answer before the first connection


_lock = threading.Lock()
_open: dict[FileKey, _File] = {}


def _key(path: Path) -> FileKey | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def known_state(path: Path) -> str | None:
    """What the header said when the process opened its first connection on the file, if
    it still has one open (None: read the header now)."""
    key = _key(path)
    with _lock:
        entry = _open.get(key) if key is not None else None
        return entry.state if entry is not None else None


def opened(path: Path, state: str) -> FileKey | None:
    """Count a new connection on the file; returns what `closed` takes."""
    key = _key(path)
    if key is not None:
        with _lock:
            _open.setdefault(key, _File(0, state)).connections += 1
    return key


def closed(key: FileKey | None) -> None:
    if key is None:
        return
    with _lock:
        entry = _open.get(key)
        if entry is not None:
            entry.connections -= 1
            if entry.connections <= 0:
                del _open[key]
