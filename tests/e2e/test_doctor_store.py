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
from tests.encryption_support import fill_encrypted, needs_extra, smash_encrypted
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


@needs_extra
@pytest.mark.slow
@pytest.mark.parametrize("where", ["a middle page", "the first page"])
def test_doctor_on_a_damaged_encrypted_store_advises_what_repair_can_do(
        tmp_path: Path, where: str) -> None:
    key, other = tmp_path / "key", tmp_path / "other"
    for path in (key, other):
        path.write_text(os.urandom(32).hex() + "\n")  # as `tinycontext keygen` writes one
        path.chmod(0o600)
    db = tmp_path / "store" / "memories.db"
    db.parent.mkdir()
    fill_encrypted(db, key.read_text().strip(), 120)
    if where == "the first page":
        smash_encrypted(db, 1, start=200)  # past the salt: other pages still authenticate
    else:
        smash_encrypted(db, db.stat().st_size // 4096 // 2)
    env = {"TINYCONTEXT_ENCRYPTION_KEY_FILE": str(key)}
    done = run_cli(tmp_path, "doctor", "--json", **env)
    assert done.returncode == 1, done.stderr
    integrity = _checks(done)["integrity"]
    detail = str(integrity["detail"])
    assert not integrity["ok"] and str(db) in detail
    assert "restore it from a backup" in detail and "tinycontext import FILE" in detail
    assert "cannot be salvaged around damage in an encrypted store" in detail
    assert "repair -o" not in detail and "does not open" not in detail, detail
    assert key.read_text().strip() not in done.stdout + done.stderr
    # What doctor advises agrees with what repair does: it refuses, pointing to a backup.
    repair = run_cli(tmp_path, "repair", "-o", str(tmp_path / "rescued.jsonl"), **env)
    assert repair.returncode == 1 and "from a backup or an export" in repair.stderr
    if where == "a middle page":
        return
    # Damage to the first page is not taken for another key, and another key still is.
    wrong = run_cli(tmp_path, "doctor", "--json", TINYCONTEXT_ENCRYPTION_KEY_FILE=str(other))
    assert "the configured key does not open it" in str(_checks(wrong)["integrity"]["detail"])
