"""`tinycontext doctor` in hosted mode checks the per-user stores' folder, not the single-user
store it would never open: exists, private, writable, free space. Nothing is created."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e.servers import run_cli
from tests.integration.hosted_support import hosted_env
from tinycontext.hosted.doctor import check_tenant_folder


def _folder(tmp_path: Path, mode: int = 0o700) -> Path:
    folder = tmp_path / "tenants"
    folder.mkdir()
    folder.chmod(mode)
    return folder


def test_a_private_writable_folder_passes_and_is_left_as_it_was(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / ("a" * 64 + ".db")).write_bytes(b"x" * 4096)
    name, ok, detail = check_tenant_folder(str(folder))
    assert (name, ok) == ("tenant stores", True), detail
    assert "owner-only" in detail and "1 user stores" in detail and " free" in detail
    assert sorted(p.name for p in folder.iterdir()) == ["a" * 64 + ".db"]


def test_missing_folder_fails_with_how_to_create_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "tenants"
    _, ok, detail = check_tenant_folder(str(missing))
    assert not ok and "does not exist" in detail and f"mkdir -m 700 {missing}" in detail
    assert not missing.exists() and not missing.parent.exists()


def test_unset_or_not_a_folder_fails(tmp_path: Path) -> None:
    assert check_tenant_folder("")[1] is False
    afile = tmp_path / "file"
    afile.write_text("")
    _, ok, detail = check_tenant_folder(str(afile))
    assert not ok and "is not a folder" in detail


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_an_open_folder_is_reported_with_its_mode(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 0o755)
    _, ok, detail = check_tenant_folder(str(folder))
    # Ours: the server tightens it at start, so it is said, not failed; nothing is changed.
    assert ok and "mode 755" in detail and "700" in detail
    assert folder.stat().st_mode & 0o777 == 0o755


def test_too_little_free_space_fails(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    _, ok, detail = check_tenant_folder(str(folder), min_free_bytes=1 << 62)
    assert not ok and "saves will fail" in detail


@pytest.mark.slow
def test_doctor_in_hosted_mode_checks_the_folder_not_the_single_user_store(
        tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    single = tmp_path / "single"
    single.write_text("a file where the single-user store's folder would be")
    env = {**hosted_env(folder), "TINYCONTEXT_MEMORY_DB_PATH": str(single / "memories.db")}
    done = run_cli(tmp_path, "doctor", "--json", **env)
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert done.returncode == 0, done.stdout
    assert checks["tenant stores"]["ok"] and str(folder) in checks["tenant stores"]["detail"]
    assert "storage" not in checks  # the unused single-user store is not judged
    assert checks["sqlite"]["ok"] and checks["sqlite-vec"]["ok"]
    assert not any(str(single) in c["detail"] for c in report["checks"])
    assert list(folder.iterdir()) == []

    gone = run_cli(tmp_path, "doctor", **{**env, "TINYCONTEXT_TENANT_STORE_DIR": str(
        tmp_path / "missing")})
    assert gone.returncode == 1 and "[FAIL] tenant stores" in gone.stdout
    assert "mkdir -m 700" in gone.stdout
