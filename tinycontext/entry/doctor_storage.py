"""doctor's storage checks: writability, encryption, integrity, SQLite and sqlite-vec of the
configured store, opened as the process's container opens it (its store resource, shut down
after). A database that does not exist yet is not created (the first save or recall creates
it): the SQLite checks then run on a throw-away file opened by the container's store opener."""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tinycontext.config.engine import TinyContextConfig

if TYPE_CHECKING:
    from tinycontext.entry.container import Container

# Above this size the store gets PRAGMA quick_check (every page and record, in linear time)
# instead of integrity_check (which also matches every index against its table, so it grows
# faster with the store): the Docker healthcheck runs doctor every minute.
FULL_CHECK_MAX_BYTES = 1 << 30


# What cipher.file_state found, for a person reading doctor's line.
STATE_WORDS = {"missing": "not created yet", "empty": "an empty file", "plain": "not encrypted",
               "encrypted": "encrypted", "damaged": "damaged"}


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


# What to do when the store's folder does not suit this user.
ELSEWHERE = ("give this user write access to it, or set memory_db_path "
             "(TINYCONTEXT_MEMORY_DB_PATH) to a file in a folder it can write")


def _exists(path: Path) -> bool | None:
    """Whether `path` exists; None when this user cannot tell (a folder on the way to it is
    not searchable), which pathlib would raise."""
    try:
        return path.exists()
    except OSError:
        return None


def _writable_dir(folder: Path) -> tuple[bool, str]:
    probe = folder
    while not _exists(probe) and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return False, f"{probe} is not a folder: set memory_db_path (TINYCONTEXT_MEMORY_DB_PATH)"
    if not os.access(probe, os.W_OK | os.X_OK):
        return False, f"{probe} is not writable by this user: {ELSEWHERE}"
    if probe != folder:
        return True, f"{folder} will be created (inside writable {probe})"
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tinycontext-doctor-"):
            pass
    except OSError as exc:
        return False, f"cannot create files in {folder} ({exc.strerror})"
    return True, f"{folder} is writable"


def check_storage(config: TinyContextConfig, container: Container) -> list[Check]:
    """Writability, encryption, integrity, SQLite and sqlite-vec of the store `config` names
    (or of PostgreSQL's), read-only: a store that does not exist yet is tried on a scratch
    file. `container` is the process's, built over `config`."""
    if config.store_url:
        from tinycontext.adapters.postgres.doctor import check_postgres

        # Read-only like the SQLite checks: connection, pgvector and schema version.
        return [Check(name, ok, detail) for name, ok, detail in check_postgres(config.store_url)]
    db = Path(config.memory_db_path)
    ok, detail = _writable_dir(db.parent)
    seen = _exists(db)
    exists = bool(seen)
    if seen is None:  # checked below on a scratch store, as for a store not created yet
        ok, detail = False, f"cannot look into {db.parent} (permission denied): {ELSEWHERE}"
    if exists and not os.access(db, os.R_OK | os.W_OK):
        ok, detail = False, f"{db} exists but is not readable and writable by this user"
    elif exists and ok:
        ok, detail = _check_companions(db, detail)
    if exists and not ok and os.access(db, os.R_OK):
        detail += " (it can still be read: recall, list, get and export work; writes do not)"
    checks = [Check("storage", ok, detail + ("" if not exists else "; database present"))]
    encryption, key = _check_encryption(config, db)  # the container derives the same key
    checks.append(encryption)
    ok = ok and encryption.ok
    if exists and ok:
        checks.append(_check_integrity(db, key))
        ok = checks[-1].ok  # a damaged store is not opened: that could write to it
    if not encryption.ok:
        return checks
    try:
        if exists and ok:
            facts = _configured_store_facts(container)
        else:
            with tempfile.TemporaryDirectory(prefix="tinycontext-doctor-") as scratch:
                facts = _scratch_store_facts(config, Path(scratch) / "doctor.db")
    except Exception as exc:  # noqa: BLE001 - reported, not raised: doctor must finish
        checks.append(Check("sqlite", False, f"{type(exc).__name__}: {exc}"))
        return checks
    count = f", {facts['live_memories']} live memories" if "live_memories" in facts else ""
    checks.append(Check(
        "sqlite", bool(facts.get("fts5")),
        f"{facts['driver']} (SQLite {facts['sqlite_version']}), FTS5 "
        f"{'available' if facts.get('fts5') else 'MISSING'}, "
        f"schema {facts['schema_version']}{count}",
    ))
    vec = facts.get("sqlite_vec_version") or ""
    checks.append(Check("sqlite-vec", bool(vec), f"version {vec}" if vec else "not loaded"))
    return checks


def _configured_store_facts(container: Container) -> dict[str, Any]:
    """The configured store's diagnostics and live memories: the container's store resource,
    opened as a server opens it and closed by shutting the container's resources down."""
    from tinycontext.domain.listing import build_list_query

    try:
        store = container.store()
        facts = store.diagnostics()
        query = build_list_query(None, None, None, None, 1, 0, "recent", None)
        facts["live_memories"] = store.browse(query).total_count
    finally:
        container.shutdown_resources()
    return facts


def _scratch_store_facts(config: TinyContextConfig, scratch: Path) -> dict[str, Any]:
    """SQLite's facts (driver, FTS5, sqlite-vec, schema) on a throw-away store at `scratch`,
    opened as the container opens the configured one (same key, same driver)."""
    from tinycontext.entry.stores import open_store

    store = open_store(config.model_copy(update={"memory_db_path": str(scratch)}))
    try:
        return store.diagnostics()
    finally:
        store.close()


def _check_companions(db: Path, detail: str) -> tuple[bool, str]:
    """A -wal/-shm left read-only (by a read-only open of a 0400 store) keeps every write
    failing once the store is writable again: ours are given back 0600, as the store does."""
    from tinycontext.adapters.sqlite.driver import companions, tighten

    stuck = [c for c in companions(db) if c.exists() and not os.access(c, os.R_OK | os.W_OK)]
    if not stuck:
        return True, detail
    with contextlib.suppress(OSError):  # not ours to change: reported below
        tighten(db)
    left = [c for c in stuck if not os.access(c, os.R_OK | os.W_OK)]
    if left:
        names = " ".join(str(c) for c in left)
        return False, (
            f"{names} not readable and writable by this user, so every write would fail: "
            f"`chmod 600 {names}` as their owner (or delete them while no program has the "
            "store open)"
        )
    names = ", ".join(c.name for c in stuck)
    return True, f"{detail}; made {names} owner-only read-write again (left read-only before)"


def _check_encryption(config: TinyContextConfig, db: Path) -> tuple[Check, bytes | None]:
    """Whether the store is encrypted, told from its first bytes (no key needed), and
    whether the configured key (if any) is usable; never shows the key."""
    from tinycontext.adapters.sqlite.cipher import file_state, key_for_plain, no_key
    from tinycontext.domain.errors import TinyContextError
    from tinycontext.entry.stores import sqlite_key

    state = file_state(db)
    try:
        key = sqlite_key(config)
    except TinyContextError as exc:
        return Check("encryption", False, f"{exc.message} (the store: {STATE_WORDS[state]})"), None
    if state == "encrypted" and key is None:
        return Check("encryption", False, "store is encrypted (SQLCipher); " + no_key(
            db).message), None
    if state == "plain" and key is not None:
        return Check("encryption", False, key_for_plain(db).message), None
    if key is None:
        return Check("encryption", True, "not encrypted (docs/guides/encryption.md: a key file and "
                     "`tinycontext encrypt`)"), None
    where = "store is encrypted (SQLCipher)" if state == "encrypted" else (
        "a new store will be created encrypted (SQLCipher)")
    return Check("encryption", True, f"{where}; key from {_key_source(config)}"), key


def _key_source(config: TinyContextConfig) -> str:
    if config.encryption_key_file:
        return f"key file {config.encryption_key_file}"
    return "TINYCONTEXT_ENCRYPTION_KEY"


def _check_integrity(db: Path, key: bytes | None = None) -> Check:
    """SQLite's own consistency check of the store, on a read-only connection."""
    from tinycontext.adapters.sqlite.cipher import open_keyed
    from tinycontext.adapters.sqlite.convert import KEY_DOES_NOT_OPEN, unopened
    from tinycontext.adapters.sqlite.driver import sqlite_module
    from tinycontext.domain.errors import StoreLockedError

    sqlite = sqlite_module()
    wal = Path(f"{db}-wal")
    size = db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    pragma = "integrity_check" if size <= FULL_CHECK_MAX_BYTES else "quick_check"
    found: list[str] = []
    try:
        def connect() -> Any:
            return sqlite.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)

        conn = connect() if key is None else open_keyed(connect, key, db, sqlite.DatabaseError)
        try:
            for row in conn.execute(f"PRAGMA {pragma}(20)"):
                found.append(str(row[0]))
        finally:
            conn.close()
    except sqlite.Error as exc:  # the check itself can stop at a bad page after some rows
        found.append(str(exc))
    except StoreLockedError as exc:
        # The first page failed with the key: another key, or damage that reaches it.
        problem = KEY_DOES_NOT_OPEN if key is None else unopened(db, key)
        if problem == KEY_DOES_NOT_OPEN:
            return Check("integrity", False, exc.message)
        return Check("integrity", False,
                     f"{db} is encrypted and {problem}. {_restore_encrypted(db)}")
    if found == ["ok"]:
        return Check("integrity", True, f"{pragma} ok ({size / 1e6:.1f} MB)")
    first = found[0].replace("*** in database main ***", "").strip().replace("\n", "; ")
    many = f"{len(found)}+ problems" if len(found) >= 20 else f"{len(found)} problem" + (
        "s" if len(found) > 1 else "")
    if key is not None:
        return Check("integrity", False, (
            f"{pragma} found {db} damaged ({many}; first: {first}). {_restore_encrypted(db)}"))
    return Check("integrity", False, (
        f"{pragma} found {db} damaged ({many}; first: {first}). To recover, stop "
        f"every server using it, run `tinycontext repair -o rescued.jsonl` (writes every "
        f"readable memory), move {db} and its -wal/-shm files aside, then `tinycontext "
        "import rescued.jsonl` (it creates a fresh store). Or restore a backup or an export."
    ))


def _restore_encrypted(db: Path) -> str:
    """What to do with a damaged encrypted store: what `repair` can do for one (export only
    when every page authenticates) does not help, so a backup or an export."""
    return (
        "Memories cannot be salvaged around damage in an encrypted store (`tinycontext "
        "repair` exports one only when every page authenticates and SQLite's check passes), "
        f"so to recover: stop every server using it, move {db} and its -wal/-shm files "
        "aside, then restore it from a backup, or load an export into a fresh store with "
        "`tinycontext import FILE`."
    )
