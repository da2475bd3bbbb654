"""A store that opens more connections (a second thread, a second store object on the same
file) keeps its locks: another process closing the store afterwards must not checkpoint and
delete the -wal and -shm under it, and every write stays visible to other processes."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from tests.contract.store_support import mem, new
from tinycontext.adapters.sqlite.store import SqliteStore

REPO = Path(__file__).resolve().parents[2]


def in_another_process(path: Path, body: str) -> str:
    script = (
        "import sys\n"
        "from tests.contract.store_support import mem, new\n"
        "from tinycontext.adapters.sqlite.store import SqliteStore\n"
        "s = SqliteStore(sys.argv[1])\n" + body + "s.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], cwd=REPO, check=True,
                          timeout=120, capture_output=True, text=True)
    return done.stdout.strip()


def count_elsewhere(path: Path) -> str:
    return in_another_process(path, "print(s._pool.read('SELECT count(*) FROM memories')[0][0])\n")


def test_a_second_connection_keeps_the_store_locked(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = SqliteStore(path)
    store.add([new(mem(i, f"tea {i}"), vector=False) for i in range(1, 4)])
    with store._pool.lease():  # the next lease, from another thread, opens a second one
        other = threading.Thread(target=lambda: store._pool.read("SELECT 1"))
        other.start()
        other.join()
    assert len(store._pool._all) == 2
    in_another_process(path, "s.add([new(mem(50, 'from elsewhere'), vector=False)])\n")
    assert Path(f"{path}-wal").exists()
    store.add([new(mem(4, "tea again"), vector=False)])
    assert count_elsewhere(path) == "5"
    store.close()


def test_a_second_store_object_on_the_file_keeps_the_first_locked(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = SqliteStore(path)
    store.add([new(mem(1, "tea"), vector=False)])
    second = SqliteStore(path)
    assert second.keyword_rarity(["tea"])
    second.close()
    in_another_process(path, "s.add([new(mem(50, 'from elsewhere'), vector=False)])\n")
    store.add([new(mem(2, "tea again"), vector=False)])
    assert count_elsewhere(path) == "3"
    store.close()
