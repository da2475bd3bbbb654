"""Per-user files on disk: HMAC names, no user id anywhere, owner-only modes, bounded opens."""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import threading
from pathlib import Path

from tests.integration.hosted_support import SECRET, TOKEN, hosted_server, proxy_headers
from tinycontext.adapters.hosting.tenant_stores import TenantStores, store_name

USERS = ["alice@example.com", "Bob Example", "user-0042", "jos\u00e9"]


def test_files_are_named_by_hmac_and_never_reveal_the_user(tmp_path: Path) -> None:
    with hosted_server(tmp_path) as server:
        for user in USERS:
            client = server.client(**proxy_headers(user))
            saved = client.post("/save_memories", json={"memories": [
                {"content": f"A private note that belongs to its owner number {len(user)}."}]})
            assert saved.status_code == 200
            assert client.get("/recall_memories", params={"query": "private note"}).json()[
                "memories"]
        folder = server.store_dir
        expected = {hmac.new(SECRET.encode(), u.encode(), hashlib.sha256).hexdigest() + ".db"
                    for u in USERS}
        assert {p.name for p in folder.glob("*.db")} == expected
        assert expected == {store_name(SECRET.encode(), u) for u in USERS}

        names_and_bytes = b"\n".join(
            p.name.encode() + b"\n" + p.read_bytes() for p in folder.rglob("*") if p.is_file())
        for needle in [*USERS, "alice", "Bob", SECRET, TOKEN]:
            for encoded in {needle.encode("utf-8"), needle.encode("utf-16-le")}:
                assert encoded not in names_and_bytes, needle

        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        files = [p for p in folder.iterdir()]
        assert any(p.name.endswith("-wal") for p in files)  # companions exist while open
        for path in files:
            assert path.is_file() and stat.S_IMODE(path.stat().st_mode) == 0o600, path
        assert not (tmp_path / "single").exists()  # the single-user store is never touched


def test_open_stores_stay_bounded_and_evicted_users_keep_their_data(tmp_path: Path) -> None:
    with hosted_server(tmp_path, TINYCONTEXT_MAX_OPEN_STORES="3") as server:
        users = [f"user-{n}" for n in range(12)]
        for user in users:
            client = server.client(**proxy_headers(user))
            assert client.post("/save_memories", json={"memories": [
                {"content": f"The secret word of {user} is word{user[-2:]}."}]}).status_code == 200
            assert server.stores.open_count <= 3
        assert server.stores.opened >= 12 and server.stores.evicted >= 9
        for user in reversed(users):  # reopen every evicted store: nothing was lost or mixed
            client = server.client(**proxy_headers(user))
            listed = client.get("/list_memories").json()
            assert [m["content"] for m in listed["memories"]] == [
                f"The secret word of {user} is word{user[-2:]}."]
        assert len(list(server.store_dir.glob("*.db"))) == 12


def test_eviction_never_closes_a_store_a_request_is_using(tmp_path: Path) -> None:
    """Twelve users hammer a 2-store LRU from 8 threads: no error, no lost write."""
    with hosted_server(tmp_path, TINYCONTEXT_MAX_OPEN_STORES="2") as server:
        errors: list[str] = []
        counts: dict[str, int] = {}
        lock = threading.Lock()

        def worker(number: int) -> None:
            for round_ in range(6):
                user = f"u{(number * 7 + round_) % 12}"
                with server.client(**proxy_headers(user)) as client:
                    saved = client.post("/save_memories", json={"memories": [
                        {"content": f"{user} event {number}-{round_} at minute {round_ * 13}."}]})
                    listed = client.get("/list_memories", params={"limit": 200})
                if saved.status_code != 200 or listed.status_code != 200:
                    errors.append(f"{saved.status_code} {listed.status_code}")
                    continue
                if any(not m["content"].startswith(f"{user} ") for m in
                       listed.json()["memories"]):
                    errors.append("cross-user content")
                with lock:
                    counts[user] = counts.get(user, 0) + len(saved.json()["saved"])

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        for user, saved in counts.items():
            client = server.client(**proxy_headers(user))
            assert client.get("/list_memories").json()["total_count"] == saved
        assert server.stores.open_count <= 2 + 8


def test_leases_release_and_close_on_the_closer_thread(tmp_path: Path) -> None:
    closed: list[Path] = []

    class Service:
        def __init__(self, path: Path) -> None:
            self.path = path

        def close(self) -> None:
            closed.append(self.path)

    stores = TenantStores(tmp_path, b"k" * 32, Service, max_open=1)  # type: ignore[arg-type]
    key_a, a = stores.acquire("a")
    key_b, b = stores.acquire("b")  # evicts a, but a is still leased: not closed yet
    assert closed == [] and stores.open_count == 2
    stores.release(key_a, a)
    stores.release(key_b, b)
    deadline = threading.Event()
    for _ in range(100):
        if closed:
            break
        deadline.wait(0.02)
    assert closed == [a.path]  # type: ignore[attr-defined]
    stores.close()
    assert closed == [a.path, b.path]  # type: ignore[attr-defined]
    assert not os.listdir(tmp_path)  # the registry itself never creates files
