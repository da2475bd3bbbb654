"""`tinycontext doctor` opens the store only through the process's container, and only when it
exists: a configured path that does not exist stays absent (no file, no folder, no -wal/-shm),
an existing store is opened as a server opens it, counted, and closed again."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env, run_cli, tinycontext_command
from tests.store_damage import build_store


def _checks(done: object) -> dict[str, dict[str, object]]:
    report = json.loads(done.stdout)  # type: ignore[attr-defined]
    return {c["name"]: c for c in report["checks"]}


def test_doctor_on_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    where = tmp_path / "not" / "yet"
    db = where / "memories.db"
    done = run_cli(tmp_path, "doctor", "--json", TINYCONTEXT_MEMORY_DB_PATH=str(db))
    checks = _checks(done)
    assert checks["storage"]["ok"] and "will be created" in str(checks["storage"]["detail"])
    # SQLite, FTS5 and sqlite-vec were still tried: on a throw-away store, not the configured one
    assert checks["sqlite"]["ok"] and checks["sqlite-vec"]["ok"]
    assert "live memories" not in str(checks["sqlite"]["detail"])
    assert not (tmp_path / "not").exists()
    leftovers = [p.name for p in tmp_path.iterdir()]
    assert not any(name.endswith((".db", "-wal", "-shm")) for name in leftovers), leftovers


def test_doctor_in_an_existing_folder_adds_no_file(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    done = run_cli(tmp_path, "doctor", "--json")
    assert _checks(done)["storage"]["ok"]
    assert list(folder.iterdir()) == []


def test_doctor_counts_an_existing_store_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "store" / "memories.db"
    db.parent.mkdir()
    ids = build_store(db, 3)
    before = db.read_bytes()
    done = run_cli(tmp_path, "doctor", "--json")
    checks = _checks(done)
    assert checks["integrity"]["ok"], checks["integrity"]
    assert f", {len(ids)} live memories" in str(checks["sqlite"]["detail"])
    assert db.read_bytes() == before
    # closed by the container: no -wal or -shm left behind by the check
    assert sorted(p.name for p in db.parent.iterdir()) == ["memories.db"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_doctor_reports_a_folder_it_cannot_look_into_with_the_next_step(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    db = locked / "memories.db"
    command = [*tinycontext_command(), "doctor", "--json"]
    if os.geteuid() == 0:  # in a user namespace of its own, root's override does not apply
        if shutil.which("unshare") is None or subprocess.run(
                ["unshare", "--user", "true"], capture_output=True).returncode != 0:
            pytest.skip("root without user namespaces: folder modes do not bind root")
        command = ["unshare", "--user", *command]
    os.chmod(locked, 0)  # not even searchable: whether the store exists cannot be told
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              env=cli_env(tmp_path, TINYCONTEXT_MEMORY_DB_PATH=str(db)))
    finally:
        os.chmod(locked, 0o700)
    assert done.returncode == 1, done.stderr  # not ready, but the report is complete
    checks = _checks(done)
    storage = str(checks["storage"]["detail"])
    assert not checks["storage"]["ok"] and str(locked) in storage
    assert "TINYCONTEXT_MEMORY_DB_PATH" in storage  # what to do next
    assert checks["sqlite"]["ok"] and checks["sqlite-vec"]["ok"]  # tried on a scratch store
    assert list(locked.iterdir()) == []


def test_a_bad_key_setting_is_reported_first_with_the_store_in_words(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "doctor", "--json", TINYCONTEXT_ENCRYPTION_KEY="too-short")
    detail = str(_checks(done)["encryption"]["detail"])
    assert detail.startswith("TINYCONTEXT_ENCRYPTION_KEY is shorter than 32 bytes"), detail
    assert "(the store: not created yet)" in detail and "too-short" not in detail
