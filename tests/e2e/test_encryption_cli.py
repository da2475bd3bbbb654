"""`tinycontext keygen / encrypt / decrypt / rekey / export --encrypt / import` as subprocesses:
crash safety under kill -9, a store in use refused, two processes on one encrypted store,
and no planted memory readable in any file a run (or a killed run) leaves behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env, run_cli
from tests.encryption_support import found_in, needs_extra

pytestmark = [needs_extra, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
PLAIN = b"SQLite format 3\x00"


def _key(tmp_path: Path, name: str = "key") -> Path:
    path = tmp_path / name
    result = run_cli(tmp_path, "keygen", "-o", str(path))
    assert result.returncode == 0, result.stderr
    return path


def _child(tmp_path: Path, *args: str, key: Path | None = None,
           **popen: object) -> subprocess.Popen[str]:
    env = cli_env(tmp_path)
    env["PYTHONPATH"] = str(REPO)
    env.pop("TINYCONTEXT_ENCRYPTION_KEY", None)
    if key is not None:
        env["TINYCONTEXT_ENCRYPTION_KEY"] = key.read_text().strip()
    return subprocess.Popen([sys.executable, "-m", "tests.integration.encryption_child", *args],
                            env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=REPO, **popen)  # type: ignore[call-overload]


def _run_child(tmp_path: Path, *args: str, key: Path | None = None) -> str:
    process = _child(tmp_path, *args, key=key)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    return out.strip().splitlines()[-1] if out.strip() else ""


def _count(tmp_path: Path, db: Path, key: Path | None) -> int:
    return int(_run_child(tmp_path, "count", str(db), key=key))


def _db(tmp_path: Path) -> Path:
    return tmp_path / "store" / "memories.db"


def test_keygen_writes_an_owner_only_key_and_refuses_to_overwrite(tmp_path: Path) -> None:
    path = _key(tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600 and len(path.read_text().strip()) == 64
    before = path.read_text()
    again = run_cli(tmp_path, "keygen", "-o", str(path))
    assert again.returncode == 1 and "already exists" in again.stderr
    assert path.read_text() == before and before.strip() not in again.stderr + again.stdout


def test_encrypt_rekey_decrypt_round_trip_and_coded_refusals(tmp_path: Path) -> None:
    db, key, new = _db(tmp_path), _key(tmp_path), _key(tmp_path, "new")
    db.parent.mkdir()
    _run_child(tmp_path, "fill", str(db), "120")
    with_key = {"TINYCONTEXT_ENCRYPTION_KEY_FILE": str(key)}
    refused = run_cli(tmp_path, "export", **with_key)  # a key for a plain store
    assert refused.returncode == 1 and "tinycontext encrypt" in refused.stderr
    done = run_cli(tmp_path, "encrypt", **with_key)
    assert done.returncode == 0, done.stderr
    assert "120 memories" in done.stderr and db.read_bytes()[:16] != PLAIN
    assert found_in(db.parent, 120) == {}
    again = run_cli(tmp_path, "encrypt", **with_key)
    assert again.returncode == 1 and "already encrypted" in again.stderr
    for env, says in (({}, "no key is configured"),
                      ({"TINYCONTEXT_ENCRYPTION_KEY_FILE": str(new)}, "does not open it")):
        locked = run_cli(tmp_path, "export", **env)
        assert locked.returncode == 1 and says in locked.stderr
        assert "not a database" not in locked.stderr and "Traceback" not in locked.stderr
        for secret in (key.read_text().strip(), new.read_text().strip()):
            assert secret not in locked.stderr + locked.stdout
    exported = run_cli(tmp_path, "export", **with_key)
    assert exported.returncode == 0 and len(exported.stdout.splitlines()) == 120
    doctor = run_cli(tmp_path, "doctor", "--json")
    assert "store is encrypted" in doctor.stdout and key.read_text().strip() not in doctor.stdout
    rekeyed = run_cli(tmp_path, "rekey", "--new-key-file", str(new), **with_key)
    assert rekeyed.returncode == 0, rekeyed.stderr
    assert run_cli(tmp_path, "export", **with_key).returncode == 1
    with_new = {"TINYCONTEXT_ENCRYPTION_KEY_FILE": str(new)}
    decrypted = run_cli(tmp_path, "decrypt", **with_new)
    assert decrypted.returncode == 0, decrypted.stderr
    assert db.read_bytes()[:16] == PLAIN
    assert len(run_cli(tmp_path, "export").stdout.splitlines()) == 120
    assert not list(db.parent.glob("*.converting-*"))


def test_the_summary_counts_one_memory_in_the_singular(tmp_path: Path) -> None:
    db, key = _db(tmp_path), _key(tmp_path)
    db.parent.mkdir()
    _run_child(tmp_path, "fill", str(db), "1")
    done = run_cli(tmp_path, "encrypt", TINYCONTEXT_ENCRYPTION_KEY_FILE=str(key))
    assert done.returncode == 0 and "encrypt: 1 memory;" in done.stderr, done.stderr


def test_loose_key_file_is_refused_without_touching_the_store(tmp_path: Path) -> None:
    db, key = _db(tmp_path), _key(tmp_path)
    db.parent.mkdir()
    _run_child(tmp_path, "fill", str(db), "10")
    before = db.read_bytes()
    os.chmod(key, 0o644)
    result = run_cli(tmp_path, "encrypt", TINYCONTEXT_ENCRYPTION_KEY_FILE=str(key))
    assert result.returncode == 2 and "chmod 600" in result.stderr
    assert db.read_bytes() == before


def test_conversion_of_a_store_in_use_is_refused(tmp_path: Path) -> None:
    db, key, new = _db(tmp_path), _key(tmp_path), _key(tmp_path, "new")
    db.parent.mkdir()
    _run_child(tmp_path, "fill", str(db), "50")
    assert run_cli(tmp_path, "encrypt", TINYCONTEXT_ENCRYPTION_KEY_FILE=str(key)).returncode == 0
    holder = _child(tmp_path, "hold", str(db), "60", key=key)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        before = db.read_bytes()
        result = run_cli(tmp_path, "rekey", "--new-key-file", str(new),
                         TINYCONTEXT_ENCRYPTION_KEY_FILE=str(key))
        assert result.returncode == 1 and "open in another process" in result.stderr
        assert db.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    assert _count(tmp_path, db, key) == 50
    assert not list(db.parent.glob("*.converting-*"))


def _kill_when_copied(process: subprocess.Popen[bytes], folder: Path, share: float | None,
                     before: int) -> bool:
    """SIGKILL once the conversion's new file holds `share` of the old one's size, or (share
    None) once that file has been renamed over the store (while the old one is wiped);
    False when the process ended first."""
    seen = False
    while process.poll() is None:
        copies = list(folder.glob("*.converting-*"))
        try:
            size = max((c.stat().st_size for c in copies), default=-1)
        except FileNotFoundError:
            continue
        seen = seen or size >= 0
        if (size >= share * before) if share is not None else (seen and size < 0):
            process.kill()
            process.wait()
            return True
        time.sleep(0.002)
    return False


KILLED_TOTAL = 2000


@pytest.fixture(scope="module")
def conversion_stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """KILLED_TOTAL memories in a plain store and in the same store encrypted with "key"
    (each in a folder of its own), made once, and a second key "new"."""
    folder = tmp_path_factory.mktemp("conversions")
    stores = {"key": _key(folder), "new": _key(folder, "new"),
              "plain": folder / "plain" / "memories.db",
              "encrypted": folder / "encrypted" / "memories.db"}
    stores["plain"].parent.mkdir()
    _run_child(folder, "fill", str(stores["plain"]), str(KILLED_TOTAL), "0", "150")
    shutil.copytree(stores["plain"].parent, stores["encrypted"].parent)
    done = run_cli(folder, "encrypt", TINYCONTEXT_MEMORY_DB_PATH=str(stores["encrypted"]),
                   TINYCONTEXT_ENCRYPTION_KEY_FILE=str(stores["key"]), timeout=300)
    assert done.returncode == 0, done.stderr
    return stores


def _opened_as(tmp_path: Path, db: Path, old: Path | None, new: Path | None) -> str:
    """"old" or "new": which state the store at `db` opens in (the key that opens it, or
    plain), having checked that it holds every memory."""
    plain = db.read_bytes()[:16] == PLAIN
    states = [("old", old), ("new", new)]
    if not list(db.parent.glob("*.converting-*")):  # most likely converted: tried first
        states.reverse()
    for state, key in states:
        if plain != (key is None):
            continue
        process = _child(tmp_path, "count", str(db), key=key)
        out, err = process.communicate(timeout=300)
        if process.returncode == 0:
            assert int(out.split()[-1]) == KILLED_TOTAL
            return state
        assert "does not open it" in err, err  # the other key's state, tried next
    raise AssertionError(f"{db} opens neither as before nor as after the conversion")


# Where each conversion starts, and its keys before and after (None: plain).
CONVERSIONS = {"encrypt": ("plain", None, "key"), "decrypt": ("encrypted", "key", None),
               "rekey": ("encrypted", "key", "new")}


@pytest.mark.parametrize("kind", list(CONVERSIONS))
def test_kill_9_during_conversion_leaves_the_old_or_the_new_store_whole(
        conversion_stores: dict[str, Path], tmp_path: Path, kind: str) -> None:
    start, old_name, new_name = CONVERSIONS[kind]
    pristine = conversion_stores[start]
    old = conversion_stores[old_name] if old_name else None
    new = conversion_stores[new_name] if new_name else None
    db = _db(tmp_path)
    env = cli_env(tmp_path, TINYCONTEXT_ENCRYPTION_KEY_FILE=str(conversion_stores["key"]))
    command = [sys.executable, "-m", "tinycontext", kind]
    if kind == "rekey":
        command += ["--new-key-file", str(new)]
    killed, states = 0, set()
    for share in (0.0, None, 0.6):  # None: just after the rename
        shutil.rmtree(db.parent, ignore_errors=True)
        shutil.copytree(pristine.parent, db.parent)
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        killed += _kill_when_copied(process, db.parent, share, pristine.stat().st_size)
        state = _opened_as(tmp_path, db, old, new)
        states.add(state)
        if kind != "decrypt":  # decrypting writes a plain copy by request
            plain_store = db.read_bytes()[:16] == PLAIN
            leftovers = {p: hits for p, hits in found_in(db.parent, KILLED_TOTAL).items()
                         if not (p.endswith("memories.db") and plain_store)}
            assert leftovers == {}, leftovers
    assert killed >= 2, "the conversions ended before they could be killed"
    assert states == {"old", "new"}
    # A later conversion clears what a killed one left and completes.
    if state == "old":
        subprocess.run(command, env=env, check=True, capture_output=True, timeout=300)
    assert not list(db.parent.glob("*.converting-*"))
    assert _opened_as(tmp_path, db, old, new) == "new"
    if kind != "decrypt":
        assert found_in(db.parent, KILLED_TOTAL) == {}


def test_two_processes_write_one_encrypted_store(tmp_path: Path) -> None:
    db, key = _db(tmp_path), _key(tmp_path)
    db.parent.mkdir()
    _run_child(tmp_path, "fill", str(db), "10", "5000", key=key)  # created encrypted
    writers = [_child(tmp_path, "fill", str(db), "300", str(start), key=key)
               for start in (0, 1000)]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    assert _count(tmp_path, db, key) == 610
    assert found_in(db.parent, 1300) == {}


def test_a_killed_writer_leaves_nothing_readable(tmp_path: Path) -> None:
    db, key = _db(tmp_path), _key(tmp_path)
    db.parent.mkdir()
    writer = _child(tmp_path, "fill", str(db), "1000", key=key)
    assert writer.stdout is not None
    for line in writer.stdout:
        if int(line) >= 500:
            break
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert Path(f"{db}-wal").exists()  # killed with its log not checkpointed
    assert found_in(db.parent, 1000) == {}
    assert _count(tmp_path, db, key) >= 500


def test_encrypted_export_imports_and_holds_no_plain_text(tmp_path: Path) -> None:
    db, key = _db(tmp_path), _key(tmp_path)
    db.parent.mkdir()
    _run_child(tmp_path, "fill", str(db), "200", key=key)
    env = {"TINYCONTEXT_ENCRYPTION_KEY_FILE": str(key)}
    out = tmp_path / "out" / "export.sealed"
    out.parent.mkdir()
    assert run_cli(tmp_path, "export", "--encrypt", "-o", str(out), **env).returncode == 0
    assert out.read_bytes()[:8] == b"TCSEALED" and out.stat().st_mode & 0o777 == 0o600
    assert found_in(out.parent, 200) == {}
    plain_out = tmp_path / "out" / "export.jsonl"
    assert run_cli(tmp_path, "export", "-o", str(plain_out), **env).returncode == 0
    assert found_in(out.parent, 200)  # the plain export holds them (control)
    other = tmp_path / "other" / "memories.db"
    dry = run_cli(tmp_path, "import", "--from", "tinycontext", str(out), "--dry-run", "--json",
                  TINYCONTEXT_MEMORY_DB_PATH=str(other), **env)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["new"] == 200 and _count(tmp_path, other, key) == 0
    for source in (out, plain_out):
        result = run_cli(tmp_path, "import", str(source), TINYCONTEXT_MEMORY_DB_PATH=str(other),
                         **env)
        assert result.returncode == 0, result.stderr
    assert _count(tmp_path, other, key) == 200
    assert found_in(other.parent, 200) == {}
    refused = run_cli(tmp_path, "import", str(out), TINYCONTEXT_MEMORY_DB_PATH=str(
        tmp_path / "third" / "memories.db"))
    assert refused.returncode == 1 and "encrypted export" in refused.stderr


def test_encrypt_hosted_folder_gives_each_user_the_servers_key_for_them(tmp_path: Path) -> None:
    key = _key(tmp_path)
    folder = tmp_path / "tenants"
    users = [folder / f"{n:064x}.db" for n in (1, 2)]
    for n, path in enumerate(users, start=1):
        _run_child(tmp_path, "fill", str(path), str(10 * n), str(100 * n))  # plain: no key
        assert path.read_bytes().startswith(PLAIN)
    assert len(found_in(folder, 300)) >= 2  # the scan below would see them in plain files
    (folder / "notes.db").write_bytes(b"not a user's store")  # not <tenant key>.db: left alone
    env = {"TINYCONTEXT_ENCRYPTION_KEY": key.read_text().strip()}
    done = run_cli(tmp_path, "encrypt", "--hosted-folder", str(folder), **env)
    assert done.returncode == 0, done.stderr
    assert "2 of 2 users' stores" in done.stderr and key.read_text().strip() not in done.stderr
    for n, path in enumerate(users, start=1):
        assert not path.read_bytes().startswith(PLAIN)
        assert int(_run_child(tmp_path, "tenant-count", str(path), key=key)) == 10 * n
    assert found_in(folder, 300) == {}
    assert (folder / "notes.db").read_bytes() == b"not a user's store"
    again = run_cli(tmp_path, "encrypt", "--hosted-folder", str(folder), **env)
    assert again.returncode == 0 and "0 of 2" in again.stderr and "2 already" in again.stderr
    missing = run_cli(tmp_path, "encrypt", "--hosted-folder", str(tmp_path / "none"), **env)
    assert missing.returncode == 2 and "not a folder" in missing.stderr
