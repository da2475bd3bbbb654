"""A SQLite store that fails: corrupt, truncated, damaged page, full, locked, unopenable.

Every failure is a coded store error naming the file, through the Python API, REST (real HTTP)
and MCP; nothing is written by a failed call, and a store whose reads found a damaged page
refuses writes. The read-only store is in test_store_read_only.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from tests.e2e.servers import uvicorn_thread
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.adapters.sqlite import connection as sqlite_connection
from tinycontext.adapters.sqlite.driver import sqlite_module
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.errors import (
    StoreCorruptError,
    StoreFullError,
    StoreUnavailableError,
    TinyContextError,
)
from tinycontext.entry.container import build_service
from tinycontext.rest import create_app

FACTS = [f"Fact {i}: the billing job number {i} runs on host {i * 7}." for i in range(300)]


def open_service(path: Path) -> MemoryService:
    return build_service(
        TinyContextConfig(memory_db_path=str(path)), store=SqliteStore(path),
        embedder=HashEmbedder(), tokenizer=WordTokenizer(), clock=FixedClock(),
        background=False,
    )


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    """A closed store file holding FACTS in session `work` (WAL merged into the file)."""
    path = tmp_path / "store" / "memories.db"
    service = open_service(path)
    service.save([{"content": fact} for fact in FACTS], session_id="work")
    service.close()
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    return path


@pytest.fixture
def service_of(filled: Path) -> Iterator[Any]:
    opened: list[MemoryService] = []

    def make(path: Path = filled) -> MemoryService:
        opened.append(open_service(path))
        return opened[-1]

    yield make
    for service in opened:
        service.close()


def expect(error: type[TinyContextError], call: Any, path: Path) -> TinyContextError:
    with pytest.raises(error) as caught:
        call()
    message = caught.value.message
    assert str(path) in message, message
    assert "Fact" not in message and "billing" not in message  # never memory content
    return caught.value


def rest(service: MemoryService, calls: list[tuple[str, str, dict[str, Any]]]
         ) -> list[httpx.Response]:
    app = create_app(OneService(service), warm=False)
    with uvicorn_thread(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        return [client.request(method, url, json=body) for method, url, body in calls]


def mcp(service: MemoryService, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str]]:
    server = create_mcp_server(OneService(service), warm=False)

    async def main() -> list[tuple[bool, str]]:
        async with Client(server) as client:
            results = [await client.call_tool(name, args) for name, args in calls]
            return [(r.is_error, r.content[0].text) for r in results]  # type: ignore[union-attr]

    return anyio.run(main)


def coded(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    assert detail["code"] == code, detail
    return str(detail["message"])


def raw_count(path: Path) -> int:
    conn = sqlite_module().connect(str(path))
    try:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        conn.close()


def test_overwritten_header_is_store_corrupt_everywhere(filled: Path, service_of: Any) -> None:
    with filled.open("r+b") as f:
        f.write(b"\x00not sqlite any more" * 5)
    service = service_of()
    for call in (
        lambda: service.recall("billing job", session_id="work").to_dict(),
        lambda: service.list_page().to_dict(),
        lambda: service.detail("0" * 12).to_dict(),
        lambda: service.save([{"content": "A new fact."}]).to_dict(),
    ):
        error = expect(StoreCorruptError, call, filled)
        assert "tinycontext doctor" in error.message and "tinycontext repair" in error.message
    responses = rest(service_of(), [
        ("POST", "/recall_memories", {"query": "billing"}),
        ("POST", "/save_memories", {"memories": [{"content": "A new fact."}]}),
        ("GET", "/list_memories", {}),
    ])
    for response in responses:
        assert str(filled) in coded(response, 500, "store_corrupt")
    [(is_error, text)] = mcp(service_of(), [("list_memories", {})])
    assert is_error and text.startswith("store_corrupt: ") and str(filled) in text


def test_truncated_file_is_store_corrupt(filled: Path, service_of: Any) -> None:
    size = filled.stat().st_size
    with filled.open("r+b") as f:
        f.truncate(size // 3)
    service = service_of()
    expect(StoreCorruptError, lambda: service.list_page(limit=200, offset=100).to_dict(), filled)
    [response] = rest(service_of(), [("GET", "/list_memories", {})])
    coded(response, 500, "store_corrupt")


def _damage_a_page(path: Path) -> None:
    """Overwrite the first leaf page of the memories table; later pages stay readable."""
    conn = sqlite_module().connect(str(path))
    try:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        [page] = conn.execute(
            "SELECT min(pageno) FROM dbstat WHERE name = 'memories' AND pagetype = 'leaf'"
        ).fetchone()
    finally:
        conn.close()
    with path.open("r+b") as f:
        f.seek(page_size * (page - 1))
        f.write(b"\xff" * page_size)


def test_after_a_damaged_page_is_read_saves_are_refused(filled: Path, service_of: Any) -> None:
    before = service_of()
    newest = before.list_page(limit=1).to_dict()["memories"][0]["id"]  # on an undamaged page
    before.close()
    _damage_a_page(filled)
    service = service_of()
    expect(StoreCorruptError, lambda: service.list_page(sort="stale").to_dict(), filled)
    # The damaged page is not on the insert path: without the refusal this save went in.
    expect(StoreCorruptError,
           lambda: service.save([{"content": "Written into a broken file."}]).to_dict(), filled)
    assert service.detail(newest).to_dict()["id"] == newest  # what still reads, reads
    expect(StoreCorruptError, lambda: service.delete(newest).to_dict(), filled)
    service.close()
    fresh = service_of()  # another process would meet the damage on its first full read
    responses = rest(fresh, [
        ("GET", "/list_memories?sort=stale", {}),
        ("POST", "/save_memories", {"memories": [{"content": "Written into a broken file."}]}),
    ])
    coded(responses[0], 500, "store_corrupt")
    assert "writes are refused" in coded(responses[1], 500, "store_corrupt")
    assert raw_count(filled) == len(FACTS)  # the later pages still read: nothing was added


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """No connection may grow the store file: a full disk, as SQLite reports it."""
    opener = sqlite_connection.ConnectionPool._open

    def capped(pool: sqlite_connection.ConnectionPool) -> Any:
        conn = opener(pool)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    monkeypatch.setattr(sqlite_connection.ConnectionPool, "_open", capped)


BIG = [{"content": f"{i} " + "filler words that take pages " * 300} for i in range(10)]


def test_full_disk_is_store_full_and_writes_nothing(
    filled: Path, service_of: Any, full_disk: None
) -> None:
    service = service_of()
    error = expect(StoreFullError, lambda: service.save(BIG, session_id="work").to_dict(), filled)
    assert "Free disk space" in error.message
    assert service.list_page(session_id="work").to_dict()["total_count"] == len(FACTS)
    assert service.recall("billing job", session_id="work").to_dict()["memories"]  # reads work
    service.close()
    [response, listed] = rest(service_of(), [
        ("POST", "/save_memories", {"memories": BIG, "session_id": "work"}),
        ("GET", "/list_memories", {}),
    ])
    assert str(filled) in coded(response, 507, "store_full")
    assert listed.status_code == 200
    assert raw_count(filled) == len(FACTS)


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_connection, "BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr(sqlite_connection, "LOCK_RETRIES", 2)


def test_writer_locked_out_beyond_the_timeout(
    filled: Path, service_of: Any, short_busy_timeout: None
) -> None:
    other = sqlite_module().connect(str(filled), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        service = service_of()
        error = expect(StoreUnavailableError,
                       lambda: service.save([{"content": "Waits for the lock."}]).to_dict(),
                       filled)
        assert "locked by another process" in error.message
        # Reading is not blocked in WAL mode; only the recall counts wait, and are skipped.
        result = service.recall("billing job", session_id="work").to_dict()
        assert result["memories"] and "store_unavailable" in result["notice"]
        [response] = rest(service_of(), [
            ("POST", "/save_memories", {"memories": [{"content": "Waits for the lock."}]}),
        ])
        coded(response, 503, "store_unavailable")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert raw_count(filled) == len(FACTS)


def test_reader_locked_out_beyond_the_timeout(
    filled: Path, service_of: Any, short_busy_timeout: None
) -> None:
    other = sqlite_module().connect(str(filled), isolation_level=None)
    other.execute("PRAGMA locking_mode = EXCLUSIVE")  # holds the file: no one else reads
    other.execute("BEGIN EXCLUSIVE")
    other.execute("UPDATE memories SET recall_count = recall_count")
    try:
        service = service_of()
        expect(StoreUnavailableError,
               lambda: service.recall("billing job", session_id="work").to_dict(), filled)
        [response] = rest(service_of(), [("POST", "/recall_memories", {"query": "billing"})])
        coded(response, 503, "store_unavailable")
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_folder_that_cannot_exist_is_store_unavailable(tmp_path: Path, service_of: Any) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store's folder should be")
    path = blocker / "memories.db"
    service = service_of(path)
    error = expect(StoreUnavailableError, lambda: service.list_page().to_dict(), path)
    assert "cannot be opened" in error.message
    [response] = rest(service_of(path), [("POST", "/save_memories",
                                          {"memories": [{"content": "Nowhere to go."}]})])
    coded(response, 503, "store_unavailable")


PERMISSION_CHILD = """
import json, sys
from tests.integration.test_store_failures import open_service
from tinycontext.domain.errors import TinyContextError
service = open_service(__import__("pathlib").Path(sys.argv[1]))
try:
    service.list_page()
    print(json.dumps({"code": None}))
except TinyContextError as exc:
    print(json.dumps({"code": exc.code, "message": exc.message}))
"""


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
# 0o500: may list, may not create the store file; 0o000: may not even look inside (whether
# the store or its kept vector copies exist cannot be told).
@pytest.mark.parametrize("mode", [0o500, 0o000])
def test_folder_without_write_permission_is_store_unavailable(tmp_path: Path, mode: int) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    path = locked / "memories.db"
    command = [sys.executable, "-c", PERMISSION_CHILD, str(path)]
    if os.geteuid() == 0:
        # In a user namespace of its own, root's override of file modes does not apply here.
        if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "--user", "true"], capture_output=True
        ).returncode != 0:
            pytest.skip("root without user namespaces: folder modes do not bind root")
        command = ["unshare", "--user", *command]
    os.chmod(locked, mode)
    try:
        done = subprocess.run(command, cwd=Path(__file__).resolve().parents[2],
                              capture_output=True, text=True, timeout=120)
    finally:
        os.chmod(locked, 0o700)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["code"] == "store_unavailable", seen
    assert str(path) in seen["message"] and "cannot be opened" in seen["message"]
    assert not path.exists()
