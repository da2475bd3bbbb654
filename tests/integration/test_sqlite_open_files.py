"""A process with several connections on one store keeps its shared lock on the file.

Closing any descriptor of a file drops every POSIX lock the process holds on it, so a store
that read the file's first bytes with a plain open() before each new connection left the
connections already open unlocked: another process closing its last connection then took
itself to be the only user and deleted the -wal and -shm under them. Here this process opens
a second connection (in another thread, or through a second store object on the same file),
another process writes and closes, and then this process writes: every write must reach the
file that a fresh connection reads, and the -wal must still be there while we have it open.
With TINYCONTEXT_TEST_SQLCIPHER=1 (.ci/run's encrypted pass) the store is encrypted.

The lost lock does not always show as a deleted -wal (it did not with SQLCipher's build), so
the last tests check the cause itself: the header is read once, before the first connection,
even when two connections open at the same moment or a key check needs a second try.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.contract.store_support import mem, new
from tests.encryption_support import sqlcipher_process
from tinycontext.adapters.sqlite import cipher, connection, open_files
from tinycontext.adapters.sqlite.driver import sqlite_module
from tinycontext.adapters.sqlite.store import SqliteStore

REPO = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))

OTHER_PROCESS = """
import sys
from tests.contract.store_support import mem, new
from tinycontext.adapters.sqlite.driver import use_sqlcipher
from tinycontext.adapters.sqlite.store import SqliteStore
key = bytes.fromhex(sys.argv[2]) if sys.argv[2] else None
if key is not None:
    use_sqlcipher()
store = SqliteStore(sys.argv[1], key=key)
store.add([new(mem(100, "written by the other process"), vector=False)])
store.close()
"""


def _key() -> bytes | None:
    return KEY if sqlcipher_process() else None


def _other_process_writes(path: Path) -> None:
    key = _key()
    subprocess.run([sys.executable, "-c", OTHER_PROCESS, str(path), key.hex() if key else ""],
                   cwd=REPO, check=True, timeout=120)


def _fresh_count(path: Path) -> int:
    """What a new connection of this process's SQLite reads (never a second SQLite build:
    two builds in one process do not see each other's locks)."""
    sqlite, key = sqlite_module(), _key()

    def connect() -> Any:
        return sqlite.connect(str(path))

    conn = connect() if key is None else cipher.open_keyed(connect, key, path, sqlite.Error)
    try:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        conn.close()


def _second_connection(store: SqliteStore) -> None:
    """Keep a connection leased in this thread while another thread opens a second one."""
    pool = store._pool
    with pool.lease():
        worker = threading.Thread(target=lambda: pool.read("SELECT 1"))
        worker.start()
        worker.join()
    assert len(pool._all) == 2


def _second_store(store: SqliteStore) -> Callable[[], None]:
    other = SqliteStore(store._pool.path, key=_key())
    assert other._pool.read("SELECT count(*) FROM memories")[0][0] == 4
    return other.close


def _first_store(path: Path, earlier_hmac: bool, monkeypatch: pytest.MonkeyPatch) -> SqliteStore:
    """The store, holding four memories; with `earlier_hmac`, written with the page HMAC
    encrypted stores had before (each new connection tries the current one first)."""
    if earlier_hmac:
        if _key() is None:
            pytest.skip("the page HMAC is SQLCipher's: run with TINYCONTEXT_TEST_SQLCIPHER=1")
        with monkeypatch.context() as patch:
            patch.setattr(cipher, "HMAC", cipher.HMAC_EARLIER)
            earlier = SqliteStore(path, key=_key())
            earlier.add([new(mem(1, "written first"), vector=False)])
            earlier.close()
    store = SqliteStore(path, key=_key())
    store.add([new(mem(i, "written first"), vector=False) for i in range(1 + earlier_hmac, 5)])
    return store


@pytest.mark.parametrize("earlier_hmac", [False, True], ids=["", "earlier-hmac"])
@pytest.mark.parametrize("second", ["pooled connection", "store object"])
def test_another_process_closing_leaves_our_log_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: str, earlier_hmac: bool) -> None:
    path = tmp_path / "m.db"
    store = _first_store(path, earlier_hmac, monkeypatch)
    close_other: Any = None
    if second == "pooled connection":
        _second_connection(store)
    else:
        close_other = _second_store(store)
    try:
        _other_process_writes(path)
        assert Path(f"{path}-wal").exists()  # not deleted by the other process's close
        store.add([new(mem(7, "written after the other process"), vector=False)])
        assert _fresh_count(path) == 6  # no disk I/O error; every write is in the store
    finally:
        if close_other is not None:
            close_other()
        store.close()
    assert _fresh_count(path) == 6


def _spy_on_header_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every read of a store file's header with a plain open() and close() (file_state)."""
    reads: list[Path] = []
    real = cipher.file_state

    def spy(path: Path) -> cipher.FileState:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(cipher, "file_state", spy)
    monkeypatch.setattr(open_files, "file_state", spy)
    return reads


def test_connections_opening_together_read_the_header_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.db"
    _first_store(path, False, monkeypatch).close()
    reads = _spy_on_header_reads(monkeypatch)
    together = threading.Barrier(2, timeout=30)
    real_load = connection.load_vector_extension

    def load_when_both_are_open(conn: Any) -> str:
        together.wait()  # both connections are open here, neither is ready yet
        return real_load(conn)

    monkeypatch.setattr(connection, "load_vector_extension", load_when_both_are_open)
    store = SqliteStore(path, key=_key())
    failures: list[BaseException] = []

    def read() -> None:
        try:
            store._pool.read("SELECT 1")
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=read) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert failures == [] and len(store._pool._all) == 2
        assert reads == [path]  # the second connection did not open and close the file
    finally:
        store.close()


def test_a_store_with_the_earlier_page_hmac_is_read_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each new connection on such a store first fails with the current page HMAC; telling
    a wrong key from that must not read the file while other connections are open."""
    path = tmp_path / "m.db"
    store = _first_store(path, True, monkeypatch)
    reads = _spy_on_header_reads(monkeypatch)
    try:
        _second_connection(store)
        assert reads == []
    finally:
        store.close()


def test_a_finaliser_closing_a_store_inside_another_claim_does_not_hang(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A store dropped unclosed is closed by its finaliser whenever the garbage collector runs,
    # which can be in the middle of another connection's claim on a file, in the same thread:
    # here the first file's release comes while the second file's header is being read.
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    held = open_files.hold(first, create=True)
    read_header = open_files.file_state

    def collected_meanwhile(path: Path) -> cipher.FileState:
        open_files.release(held)
        return read_header(path)

    monkeypatch.setattr(open_files, "file_state", collected_meanwhile)
    claims: list[open_files.Hold] = []
    worker = threading.Thread(target=lambda: claims.append(open_files.hold(second, create=True)),
                              daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "the release waited for a lock its own thread held"
    monkeypatch.setattr(open_files, "file_state", read_header)
    one, two = ((s.st_dev, s.st_ino) for s in (first.stat(), second.stat()))
    assert one not in open_files._files  # released once the claim was done
    assert open_files._files[two].count == 1
    open_files.release(claims[0])
    assert two not in open_files._files
