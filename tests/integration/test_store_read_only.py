"""A store the process cannot write (a backup on a read-only mount, no write permission).

Recall, list and get work (recall skips its counts and says so in a notice); saves, updates
and deletes are store_read_only on every transport. The checks run in a child process
(read_only_child.py) that really cannot write, also when the tests run as root (where file
modes alone do not stop writes): the store's folder bind-mounted read-only in a private mount
namespace, or the file alone made 0400 with the child in a user namespace of its own (where
root's override of file modes does not apply). An ordinary user without namespaces gets
plain file modes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.name != "posix", reason="read-only mounts and modes are POSIX here"),
]
ROOT = Path(__file__).resolve().parents[2]
READ_ONLY_MOUNT = (
    'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'
)


def _works(command: list[str]) -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(command + ["true"], capture_output=True, timeout=30).returncode == 0


def run_read_only(store: Path, how: str) -> dict[str, Any]:
    """The child's observations with the store unwritable for it: `mount` makes the folder a
    read-only mount; `file` makes only the file read-only (mode 0400, folder writable);
    `folder` keeps the file the user's own 0600 in a folder the user cannot write (0500)."""
    folder = store.parent
    child = [sys.executable, "-m", "tests.integration.read_only_child", str(store)]
    restore: list[tuple[Path, int]] = []
    if how == "mount":
        namespace = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                     READ_ONLY_MOUNT, "sh", str(folder)]
        if _works(namespace):
            child = namespace + child
        elif os.geteuid() != 0:
            restore = [(store, 0o400), (folder, 0o500)]
        else:
            pytest.skip("root without user and mount namespaces: no read-only mount to make")
    else:
        restore = [(store, 0o400)] if how == "file" else [(store, 0o600), (folder, 0o500)]
        if os.geteuid() == 0:
            # In a user namespace of its own, root's power over files (CAP_DAC_OVERRIDE) no
            # longer applies to this file system: the file's mode binds the process.
            if not _works(["unshare", "--user"]):
                pytest.skip("root without user namespaces: file modes do not bind root")
            child = ["unshare", "--user", *child]
    modes = [(path, path.stat().st_mode) for path, _ in restore]
    for path, mode in restore:
        os.chmod(path, mode)
    try:
        done = subprocess.run(child, cwd=ROOT, capture_output=True, text=True, timeout=300)
    finally:
        for path, mode in reversed(modes):
            os.chmod(path, mode)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.fixture
def backup(tmp_path: Path) -> Path:
    """A store written and closed (no -wal/-shm left), like a backup copy."""
    folder = tmp_path / "backup"
    store = folder / "memories.db"
    service = build_service(
        TinyContextConfig(memory_db_path=str(store)), store=SqliteStore(store),
        embedder=HashEmbedder(), tokenizer=WordTokenizer(), clock=FixedClock(),
        background=False,
    )
    service.save([
        {"content": "The billing job runs nightly at 02:00."},
        {"content": "Deploys happen on Tuesdays after the billing job."},
    ], session_id="work")
    service.save([{"content": "Call the user Ada.", "kind": "profile"}])
    service.close()
    return store


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("how", ["mount", "file", "folder"])
def test_read_only_store_reads_recalls_and_refuses_writes(backup: Path, how: str) -> None:
    before = hashlib.sha256(backup.read_bytes()).hexdigest()
    seen = run_read_only(backup, how)
    assert hashlib.sha256(backup.read_bytes()).hexdigest() == before  # not a byte changed

    api = seen["python"]
    recall = api["recall"]["ok"]
    assert "The billing job runs nightly at 02:00." in [m["content"] for m in recall["memories"]]
    assert "read-only" in recall["notice"] and "recall counts were not updated" in recall["notice"]
    assert recall["profile"][0]["content"] == "Call the user Ada."
    assert len(api["recent"]["ok"]["memories"]) == 2
    assert api["list"]["ok"]["total_count"] == 2
    assert api["get"]["ok"]["recall_count"] == 0  # counts were skipped, not half-written
    assert api["export"]["ok"] == 3
    for write in ("save", "update", "delete"):
        assert api[write]["code"] == "store_read_only", api[write]
        assert str(backup) in api[write]["message"]
        assert "recall and list still work" in api[write]["message"]
    if how == "folder":  # the message says which part is not writable
        assert f"its folder {backup.parent} is not writable" in api["save"]["message"]

    over_http = seen["rest"]
    assert over_http["recall"]["status"] == 200
    assert "recall counts were not updated" in over_http["recall"]["body"]["notice"]
    assert over_http["list"]["status"] == 200
    assert over_http["save"]["status"] == 503
    assert over_http["save"]["body"]["detail"]["code"] == "store_read_only"

    tools = seen["mcp"]
    assert not tools["recall_memories"]["error"]
    assert "recall counts were not updated" in tools["recall_memories"]["text"]
    assert tools["save_memories"]["error"]
    assert tools["save_memories"]["text"].startswith("store_read_only: ")


NEW_STORE_CHILD = """
import json, sys
from pathlib import Path
from tests.integration.read_only_child import open_service
from tinycontext.domain.errors import TinyContextError
service = open_service(Path(sys.argv[1]))
out = {}
for name, call in (("recall", lambda: service.recall("anything")),
                   ("save", lambda: service.save([{"content": "Kept?"}]))):
    try:
        call()
        out[name] = "ok"
    except TinyContextError as exc:
        out[name] = [exc.code, exc.message]
service.close()
print(json.dumps(out))
"""


def test_a_store_that_does_not_exist_on_a_read_only_mount_is_unavailable(tmp_path: Path) -> None:
    """store_read_only promises that reads work: with no file, nothing can be read."""
    folder = tmp_path / "empty"
    folder.mkdir()
    namespace = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                 READ_ONLY_MOUNT, "sh", str(folder)]
    if not _works(namespace):
        pytest.skip("no user and mount namespaces: no read-only mount to make")
    store = folder / "memories.db"
    done = subprocess.run([*namespace, sys.executable, "-c", NEW_STORE_CHILD, str(store)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    for name in ("recall", "save"):
        code, message = seen[name]
        assert code == "store_unavailable" and "cannot be created" in message, seen
    assert not store.exists()
