"""`tinycontext repair` on a real encrypted (SQLCipher) store, as a user runs it: with the key
it writes every memory (plain or sealed); without the key, with a different key or over a
damaged page it exits 1 saying why and what to do, and writes nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.servers import run_cli
from tests.encryption_support import (
    fill_encrypted,
    found_in,
    needs_extra,
    planted,
    smash_encrypted,
)

pytestmark = [needs_extra, pytest.mark.slow]
MEMORIES = 120
PAGE = 4096  # SQLCipher's page size, as the store writes it


def _key(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    result = run_cli(tmp_path, "keygen", "-o", str(path))
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture(scope="module")
def sealed_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """An encrypted store of MEMORIES planted memories (made once) and its key file."""
    folder = tmp_path_factory.mktemp("encrypted")
    key = _key(folder, "key")
    db = folder / "memories.db"
    fill_encrypted(db, key.read_text().strip(), MEMORIES)
    return db, key


def _copy(sealed_store: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """This test's own copy of the store, where cli_env points the CLI, and a key file."""
    source, key = sealed_store
    db = tmp_path / "store" / "memories.db"
    db.parent.mkdir()
    db.write_bytes(source.read_bytes())
    own = tmp_path / "key"
    own.write_text(key.read_text())
    own.chmod(0o600)
    return db, own


def _written_nothing(done: subprocess.CompletedProcess[str], out: Path) -> str:
    assert done.returncode == 1, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert not out.exists() and not list(out.parent.glob(f".{out.name}.*"))
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith("tinycontext repair: ") and "Nothing was written" in message
    return message


def test_repair_with_the_key_writes_every_memory(sealed_store: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    db, key = _copy(sealed_store, tmp_path)
    before = db.read_bytes()
    out = tmp_path / "rescued.jsonl"
    done = run_cli(tmp_path, "repair", "-o", str(out), TINYCONTEXT_ENCRYPTION_KEY_FILE=str(key))
    assert done.returncode == 0, done.stderr
    assert "every page passes SQLCipher's check" in done.stderr
    assert f"tinycontext repair: {MEMORIES} memories written." in done.stderr
    assert out.stat().st_mode & 0o777 == 0o600
    contents = {json.loads(line)["content"].split()[1] for line in out.read_text().splitlines()}
    assert contents == {planted(i)[0] for i in range(MEMORIES)}
    assert db.read_bytes() == before  # only read


def test_repair_encrypt_writes_a_sealed_owner_only_file(sealed_store: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    db, key = _copy(sealed_store, tmp_path)
    out = tmp_path / "out" / "rescued.sealed"
    out.parent.mkdir()
    env = {"TINYCONTEXT_ENCRYPTION_KEY_FILE": str(key)}
    done = run_cli(tmp_path, "repair", "--encrypt", "-o", str(out), **env)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"TCSEALED" and out.stat().st_mode & 0o777 == 0o600
    assert found_in(out.parent, MEMORIES) == {}
    assert key.read_text().strip() not in done.stderr + done.stdout
    # Every memory is in it: import reads it back.
    dry = run_cli(tmp_path, "import", "--from", "tinycontext", str(out), "--dry-run", "--json",
                  TINYCONTEXT_MEMORY_DB_PATH=str(tmp_path / "fresh" / "memories.db"), **env)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["new"] == MEMORIES


def test_repair_without_a_key_says_to_set_one_and_writes_nothing(
        sealed_store: tuple[Path, Path], tmp_path: Path) -> None:
    _copy(sealed_store, tmp_path)
    out = tmp_path / "rescued.jsonl"
    message = _written_nothing(run_cli(tmp_path, "repair", "-o", str(out)), out)
    assert "is encrypted and no key is configured" in message
    assert "TINYCONTEXT_ENCRYPTION_KEY_FILE" in message


@pytest.mark.parametrize("where", ["a middle page", "the first page"])
def test_repair_over_a_damaged_page_says_restore_and_writes_nothing(
        sealed_store: tuple[Path, Path], tmp_path: Path, where: str) -> None:
    db, key = _copy(sealed_store, tmp_path)
    pages = db.stat().st_size // PAGE
    if where == "the first page":
        # Past the salt: the key still applies to every other page.
        smash_encrypted(db, 1, start=200)
    else:
        smash_encrypted(db, pages // 2)
    out = tmp_path / "rescued.jsonl"
    done = run_cli(tmp_path, "repair", "-o", str(out), TINYCONTEXT_ENCRYPTION_KEY_FILE=str(key))
    message = _written_nothing(done, out)
    first = 1 if where == "the first page" else pages // 2
    assert "fails SQLCipher's authentication" in message
    assert f"HMAC verification failed for page {first})" in message
    assert "restore the store from a backup or an export" in message
    assert "does not open" not in message


def test_repair_with_a_different_key_says_to_set_the_right_one(
        sealed_store: tuple[Path, Path], tmp_path: Path) -> None:
    db, key = _copy(sealed_store, tmp_path)
    other = _key(tmp_path, "other")
    out = tmp_path / "rescued.jsonl"
    done = run_cli(tmp_path, "repair", "-o", str(out), TINYCONTEXT_ENCRYPTION_KEY_FILE=str(other))
    message = _written_nothing(done, out)
    assert "the configured key does not open it" in message
    assert "as far as repair can tell the store is not damaged" in message
    assert "TINYCONTEXT_ENCRYPTION_KEY_FILE" in message and "TINYCONTEXT_ENCRYPTION_KEY)" in message
    # Nothing about damage it did not find.
    for wrong in ("Salvag", "backup", "damaged pages", "restore"):
        assert wrong not in message, message
    for secret in (key.read_text().strip(), other.read_text().strip()):
        assert secret not in done.stderr


def test_export_of_a_damaged_encrypted_store_points_to_a_backup_not_to_salvage(
        sealed_store: tuple[Path, Path], tmp_path: Path) -> None:
    db, key = _copy(sealed_store, tmp_path)
    smash_encrypted(db, db.stat().st_size // PAGE // 2)
    out = tmp_path / "out.jsonl"
    done = run_cli(tmp_path, "export", "-o", str(out), TINYCONTEXT_ENCRYPTION_KEY_FILE=str(key))
    assert done.returncode == 1 and not out.exists(), done.stderr
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith("tinycontext export: ") and "is damaged" in message
    assert "cannot be salvaged around damage in an encrypted store" in message
    assert "restore the file from a backup" in message
    assert "write every readable memory" not in message, message
