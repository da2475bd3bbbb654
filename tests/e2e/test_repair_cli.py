"""`tinycontext export` / `repair` / `doctor` on real damaged store files, as a user runs them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env, run_cli, tinycontext_command
from tests.store_damage import build_store, leaf_holding, smash
from tinycontext.entry.exporting import private_output


def _store(tmp_path: Path) -> Path:
    return tmp_path / "store" / "memories.db"  # where cli_env points the CLI


def _with_umask(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI under the usual umask 022 (files 0644 unless created otherwise)."""
    return subprocess.run(
        ["sh", "-c", 'umask 022 && exec "$@"', "sh", *tinycontext_command(), *args],
        capture_output=True, text=True, env=cli_env(tmp_path, **env), timeout=300,
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _damage(path: Path, how: str) -> None:
    if how == "bad page":
        smash(path, leaf_holding(path, "#0050#")[0])
    elif how == "truncated":
        os.truncate(path, path.stat().st_size // 2)
    else:
        with path.open("r+b") as f:
            f.write(b"not a database " * 8)


@pytest.mark.parametrize("how", ["bad page", "truncated", "not a database"])
def test_export_of_a_damaged_store_fails_cleanly_and_leaves_no_file(
    tmp_path: Path, how: str,
) -> None:
    build_store(_store(tmp_path), 120)
    _damage(_store(tmp_path), how)
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text("an earlier export\n")
    for out in (tmp_path / "new.jsonl", earlier):
        done = run_cli(tmp_path, "export", "-o", str(out))
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr and done.stdout == ""
        message = done.stderr.strip().splitlines()[-1]
        assert message.startswith("tinycontext export: ") and "damaged" in message
        assert "tinycontext repair" in message and f"Nothing was written to {out}" in message
    assert not (tmp_path / "new.jsonl").exists()
    assert earlier.read_text() == "an earlier export\n"
    assert not list(tmp_path.glob(".*.partial"))


def test_export_file_is_owner_only_under_umask_022(tmp_path: Path) -> None:
    ids = build_store(_store(tmp_path), 5)
    fresh, existing = tmp_path / "fresh.jsonl", tmp_path / "existing.jsonl"
    existing.write_text("old\n")
    existing.chmod(0o644)
    for out in (fresh, existing):
        done = _with_umask(tmp_path, "export", "-o", str(out))
        assert done.returncode == 0, done.stderr
        assert _mode(out) == 0o600
        assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ids


def test_the_file_being_written_is_owner_only_and_vanishes_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    old = os.umask(0o022)
    try:
        with pytest.raises(RuntimeError), private_output(str(target)) as out:
            out.write("partial line\n")
            (partial,) = tmp_path.glob(".out.jsonl.*.partial")
            assert _mode(partial) == 0o600 and not target.exists()
            raise RuntimeError("the store broke halfway")
    finally:
        os.umask(old)
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_is_a_folder_says_to_name_a_file_in_it(tmp_path: Path) -> None:
    build_store(_store(tmp_path), 3)
    done = run_cli(tmp_path, "export", "-o", str(tmp_path))
    assert done.returncode == 1 and "Errno" not in done.stderr, done.stderr
    assert f"{tmp_path} is a folder" in done.stderr
    assert str(tmp_path / "memories.jsonl") in done.stderr  # a name that would work


@pytest.mark.slow
def test_repair_output_imports_into_a_fresh_store(tmp_path: Path) -> None:
    ids = build_store(_store(tmp_path), 120)
    number, page = leaf_holding(_store(tmp_path), "#0050#")
    lost = {i for n, i in enumerate(ids) if f"#{n:04d}#".encode() in page}
    smash(_store(tmp_path), number)
    rescued = tmp_path / "rescued.jsonl"
    done = _with_umask(tmp_path, "repair", "-o", str(rescued))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and _mode(rescued) == 0o600
    summary = done.stderr.strip().splitlines()[-1]
    assert f"{len(ids) - len(lost)} memories written to {rescued}" in summary
    assert "1 unreadable page of the memories table" in summary
    assert f"at least {len(lost)} memories could not be read" in summary
    fresh = {"TINYCONTEXT_MEMORY_DB_PATH": str(tmp_path / "fresh" / "memories.db")}
    loaded = run_cli(tmp_path, "import", str(rescued), **fresh)
    assert loaded.returncode == 0, loaded.stderr
    assert f"{len(ids) - len(lost)} imported" in loaded.stderr
    exported = run_cli(tmp_path, "export", **fresh)
    assert [json.loads(line)["id"] for line in exported.stdout.splitlines()] == [
        i for i in ids if i not in lost]


def test_repair_without_a_store_or_with_nothing_sqlite_in_it(tmp_path: Path) -> None:
    missing = run_cli(tmp_path, "repair", "-o", str(tmp_path / "r.jsonl"))
    assert missing.returncode == 1 and "no store file" in missing.stderr
    _store(tmp_path).parent.mkdir()
    _store(tmp_path).write_bytes(bytes(range(256)) * 32)
    garbage = run_cli(tmp_path, "repair", "-o", str(tmp_path / "r.jsonl"))
    assert garbage.returncode == 1 and "no readable SQLite pages" in garbage.stderr
    assert "Traceback" not in garbage.stderr and not (tmp_path / "r.jsonl").exists()


@pytest.mark.slow
def test_doctor_checks_integrity_and_says_how_to_recover(tmp_path: Path) -> None:
    build_store(_store(tmp_path), 120)
    healthy = run_cli(tmp_path, "doctor")
    assert healthy.returncode == 0 and "[  ok] integrity        integrity_check ok" in (
        healthy.stdout), healthy.stdout
    _damage(_store(tmp_path), "bad page")
    done = run_cli(tmp_path, "doctor")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("  [FAIL] integrity "))
    assert "damaged" in line
    assert "tinycontext repair -o rescued.jsonl" in line
    assert "tinycontext import rescued.jsonl" in line
