"""A store made writable again after a read-only open: SQLite left its -wal/-shm companions
read-only (0400, the store's mode then), which must not keep the store read-only.

The children run in a user namespace of their own when the tests run as root, where file modes
bind root as they bind an ordinary user (see test_store_read_only.py).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_store_read_only import ROOT, _works, backup  # noqa: F401 - fixture

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX here"),
]

CHILD = """
import json, sys
from pathlib import Path
from tests.integration.read_only_child import open_service
from tinycontext.domain.errors import TinyContextError
path = Path(sys.argv[1])
if sys.argv[2] == "doctor":
    from tinycontext.config.engine import TinyContextConfig
    from tinycontext.entry.container import create_container
    from tinycontext.entry.doctor_storage import check_storage
    config = TinyContextConfig(memory_db_path=str(path))
    checks = check_storage(config, create_container(config))
    print(json.dumps({c.name: [c.ok, c.detail] for c in checks}))
    raise SystemExit
service = open_service(path)
try:
    if sys.argv[2] == "read":
        print(json.dumps({"ok": service.list_page().total_count}))
    else:
        saved = service.save([{"content": "The store is writable again."}])
        print(json.dumps({"ok": len(saved.saved)}))
except TinyContextError as exc:
    print(json.dumps({"code": exc.code, "message": exc.message}))
finally:
    service.close()
"""


def _child(store: Path, what: str) -> dict[str, Any]:
    command = [sys.executable, "-c", CHILD, str(store), what]
    if os.geteuid() == 0:
        if not _works(["unshare", "--user"]):
            pytest.skip("root without user namespaces: file modes do not bind root")
        command = ["unshare", "--user", *command]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _read_only_open_then_chmod(store: Path) -> list[Path]:
    """Open the store while it is 0400 (reads work), then do what the message says."""
    os.chmod(store, 0o400)
    assert _child(store, "read") == {"ok": 3}
    os.chmod(store, 0o600)
    left = [p for p in (Path(f"{store}-wal"), Path(f"{store}-shm")) if p.exists()]
    assert left and all(stat.S_IMODE(p.stat().st_mode) == 0o400 for p in left)
    return left


def test_store_writable_again_saves_despite_read_only_companions(backup: Path) -> None:  # noqa: F811
    left = _read_only_open_then_chmod(backup)
    assert _child(backup, "save") == {"ok": 1}
    for companion in left:
        if companion.exists():
            assert stat.S_IMODE(companion.stat().st_mode) == 0o600


def test_doctor_repairs_or_reports_read_only_companions(backup: Path) -> None:  # noqa: F811
    left = _read_only_open_then_chmod(backup)
    ok, detail = _child(backup, "doctor")["storage"]
    assert ok and "owner-only read-write again" in detail
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in left if p.exists())


def test_companion_of_another_owner_is_reported_by_doctor_and_the_message(
    backup: Path,  # noqa: F811
) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs a file the child does not own: made by chown as root")
    shm = Path(f"{backup}-shm")
    shm.write_bytes(b"")
    os.chmod(shm, 0o400)
    os.chown(shm, 12345, 12345)  # not mapped in the child's namespace: not its own
    ok, detail = _child(backup, "doctor")["storage"]
    assert not ok and f"chmod 600 {shm}" in detail
    refused = _child(backup, "save")  # SQLite cannot even read through that -shm
    assert refused["code"] == "store_unavailable"
    assert "cannot be read either" in refused["message"]
    assert "its companion memories.db-shm is not writable" in refused["message"]


def test_doctor_says_a_store_in_a_read_only_folder_can_still_be_read(backup: Path) -> None:  # noqa: F811
    os.chmod(backup.parent, 0o500)
    try:
        ok, detail = _child(backup, "doctor")["storage"]
    finally:
        os.chmod(backup.parent, 0o700)
    assert not ok and "is not writable by this user" in detail
    assert "it can still be read: recall, list, get and export work" in detail
