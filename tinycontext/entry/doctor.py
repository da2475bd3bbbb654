"""`tinycontext doctor`: the resolved configuration and whether everything is ready.

Checks storage writability, the store's integrity, SQLite with FTS5, sqlite-vec, the embedding
model and the token vocabulary. A database that does not exist yet is not created (it is
created lazily by the first save or recall); the SQLite checks then run on a throw-away file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tinycontext.config.engine import (
    CONFIG_FILE_NAME,
    ENV_PREFIX,
    TinyContextConfig,
    user_config_dir,
)

if TYPE_CHECKING:
    from tinycontext.entry.container import Container

SECRET_ENV = ("TENANT_SECRET", "TRUSTED_PROXY_TOKEN", "MANAGEMENT_TOKEN")
SERVER_ENV = ("HOST", "PORT", "ALLOWED_HOSTS", "TENANCY", "TENANT_STORE_DIR",
              "TRUSTED_PROXY_CIDRS", "USER_HEADER", "MAX_OPEN_STORES", "MANAGEMENT", "LOG_LEVEL")
# Above this size the store gets PRAGMA quick_check (every page and record, in linear time)
# instead of integrity_check (which also matches every index against its table). Measured on
# an 83 MB store of 20,000 memories, warm cache: integrity_check 0.22 s, quick_check 0.13 s.
# Extrapolated, the full check takes a few seconds up to about 1 GiB (~250,000 memories);
# larger stores get the cheaper one, as the Docker healthcheck runs doctor every minute.
FULL_CHECK_MAX_BYTES = 1 << 30


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def _redact(value: Any) -> Any:
    """A URL's password (e.g. in store_url) is shown as ***; everything else unchanged."""
    if not isinstance(value, str) or "://" not in value:
        return value
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(value)
    if parts.password is None:
        return value
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def _config_file(env: dict[str, str]) -> Path:
    named = env.get(ENV_PREFIX + "CONFIG_FILE")
    return Path(named).expanduser() if named else user_config_dir() / CONFIG_FILE_NAME


def _writable_dir(folder: Path) -> tuple[bool, str]:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return False, f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return False, f"{probe} is not writable by this user"
    if probe != folder:
        return True, f"{folder} will be created (inside writable {probe})"
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tinycontext-doctor-"):
            pass
    except OSError as exc:
        return False, f"cannot create files in {folder} ({exc.strerror})"
    return True, f"{folder} is writable"


def _check_storage(config: TinyContextConfig) -> list[Check]:
    if config.store_url:
        from tinycontext.adapters.postgres.doctor import check_postgres

        # Read-only like the SQLite checks: connection, pgvector and schema version.
        return [Check(name, ok, detail) for name, ok, detail in check_postgres(config.store_url)]
    from tinycontext.adapters.sqlite.store import SqliteStore
    from tinycontext.domain.listing import build_list_query

    db = Path(config.memory_db_path)
    ok, detail = _writable_dir(db.parent)
    exists = db.exists()
    if exists and not os.access(db, os.R_OK | os.W_OK):
        ok, detail = False, f"{db} exists but is not readable and writable by this user"
    elif exists and ok:
        ok, detail = _check_companions(db, detail)
    if exists and not ok and os.access(db, os.R_OK):
        detail += " (it can still be read: recall, list, get and export work; writes do not)"
    checks = [Check("storage", ok, detail + ("" if not exists else "; database present"))]
    encryption, key = _check_encryption(config, db)
    checks.append(encryption)
    ok = ok and encryption.ok
    if exists and ok:
        checks.append(_check_integrity(db, key))
        ok = checks[-1].ok  # a damaged store is not opened: that could write to it
    if not encryption.ok:
        return checks
    try:
        with tempfile.TemporaryDirectory(prefix="tinycontext-doctor-") as scratch:
            store = SqliteStore(db if exists and ok else Path(scratch) / "doctor.db", key=key)
            try:
                facts = store.diagnostics()
                if exists and ok:
                    query = build_list_query(None, None, None, None, 1, 0, "recent", None)
                    facts["live_memories"] = store.browse(query).total_count
            finally:
                store.close()
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
    from tinycontext.entry.container import sqlite_key

    state = file_state(db)
    try:
        key = sqlite_key(config)
    except TinyContextError as exc:
        return Check("encryption", False, f"store {state}; {exc.message}"), None
    if state == "encrypted" and key is None:
        return Check("encryption", False, "store is encrypted (SQLCipher); " + no_key(
            db).message), None
    if state == "plain" and key is not None:
        return Check("encryption", False, key_for_plain(db).message), None
    if key is None:
        return Check("encryption", True, "not encrypted (docs/encryption.md: a key file and "
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
        return Check("integrity", False, exc.message)
    if found == ["ok"]:
        return Check("integrity", True, f"{pragma} ok ({size / 1e6:.1f} MB)")
    first = found[0].replace("*** in database main ***", "").strip().replace("\n", "; ")
    many = f"{len(found)}+ problems" if len(found) >= 20 else f"{len(found)} problem" + (
        "s" if len(found) > 1 else "")
    return Check("integrity", False, (
        f"{pragma} found {db} damaged ({many}; first: {first}). To recover, stop "
        f"every server using it, run `tinycontext repair -o rescued.jsonl` (writes every "
        f"readable memory), move {db} and its -wal/-shm files aside, then `tinycontext "
        "import rescued.jsonl` (it creates a fresh store). Or restore a backup or an export."
    ))


def _check_model(config: TinyContextConfig, container: Container) -> Check:
    started = time.perf_counter()
    try:
        embedder = container.embedder()
        vector = embedder.embed(["TinyContext doctor check."])[0]
    except Exception as exc:  # noqa: BLE001 - the message says how to install the model
        return Check("embedding model", False, f"{config.embedding_model}: {exc}")
    if len(vector) != 4 * embedder.dimensions:
        return Check("embedding model", False, "the model returned vectors of the wrong size")
    took = time.perf_counter() - started
    return Check(
        "embedding model", True,
        f"{config.embedding_model} -> {embedder.model_key}, {embedder.dimensions} dimensions, "
        f"loaded and ran in {took:.1f} s",
    )


def _check_tokenizer(config: TinyContextConfig, container: Container) -> Check:
    try:
        count = container.tokenizer().count("TinyContext doctor check.")
    except Exception as exc:  # noqa: BLE001
        return Check("token counts", False, f"{config.token_encoding}: {exc}")
    return Check("token counts", count > 0, f"{config.token_encoding}, offline vocabulary")


def _check_server(env: dict[str, str], store_url: str = "") -> list[Check]:
    """Hosted mode and management settings, validated as `serve` would (nothing changed)."""
    from tinycontext.hosted.settings import HostedConfigError, load_server_settings

    tenancy = env.get(ENV_PREFIX + "TENANCY", "").strip().lower() not in ("", "off")
    management = env.get(ENV_PREFIX + "MANAGEMENT", "").strip().lower() not in ("", "off")
    if not tenancy and not management:
        return []
    name = "hosted mode" if tenancy else "management"
    try:
        settings = load_server_settings(env, transport="http" if tenancy else "stdio",
                                        store_url=store_url)
    except HostedConfigError as exc:
        return [Check(name, False, exc.message.replace("\n", " "))]
    if not settings.tenancy:
        return [Check(name, True, "views on; over HTTP with the Bearer token" if
                      settings.management_token else "views on for stdio only; `serve` and "
                      "`rest` also need TINYCONTEXT_MANAGEMENT_TOKEN (24+ characters)")]
    proxies = ", ".join(str(n) for n in settings.networks)
    if settings.postgres:
        where = "every user in the PostgreSQL database, rows keyed by tenant"
    else:
        assert settings.store_dir is not None
        stores = sum(1 for p in settings.store_dir.glob("*.db") if p.is_file())
        where = f"{stores} user stores in {settings.store_dir}"
    return [Check(name, True, f"{where}; trusted proxy {proxies}; user header "
                  f"{settings.user_header}; at most {settings.max_open_stores} open")]


def _storage_checks(config: TinyContextConfig, env: dict[str, str]) -> list[Check]:
    """The store a server would use: in hosted mode on SQLite the per-user stores' folder
    (the single-user store is never opened there), with SQLite itself tried on a scratch file."""
    hosted = env.get(ENV_PREFIX + "TENANCY", "").strip().lower() not in ("", "off")
    if not hosted or config.store_url:
        return _check_storage(config)
    from tinycontext.hosted.doctor import check_tenant_folder

    with tempfile.TemporaryDirectory(prefix="tinycontext-doctor-") as scratch:
        probe = config.model_copy(update={"memory_db_path": str(Path(scratch) / "memories.db")})
        engine = [c for c in _check_storage(probe) if c.name != "storage"]
    folder = Check(*check_tenant_folder(env.get(ENV_PREFIX + "TENANT_STORE_DIR", "")))
    return [folder, *engine]


def run_doctor(config: TinyContextConfig, out: IO[str], as_json: bool = False,
               environ: Mapping[str, str] | None = None) -> int:
    """Print the report; 0 when every check passed, else 1. `environ`: what the bootstrap
    read (None: the process environment, via tinycontext.config.settings)."""
    from tinycontext.version import __version__

    if environ is None:
        from tinycontext.config.settings import environment

        environ = environment()
    env = dict(environ)
    settings = {key: _redact(value) for key, value in config.model_dump().items()}
    settings["encryption_key"] = "(set)" if config.encryption_key else ""
    config_file = _config_file(env)
    server = {name.lower(): env.get(ENV_PREFIX + name) for name in SERVER_ENV}
    server.update({n.lower(): "(set)" if env.get(ENV_PREFIX + n) else None for n in SECRET_ENV})
    from tinycontext.entry.container import create_container

    # The process's parts as a server would build them (its store is never opened here).
    parts = create_container(config)
    checks = [*_storage_checks(config, env), _check_model(config, parts),
              _check_tokenizer(config, parts),
              *_check_server(env, config.store_url)]
    from tinycontext.hooks.command import doctor_check

    checks.append(Check(*doctor_check(env)))
    ready = all(c.ok for c in checks)
    from tinycontext.clients.files import local_report

    client_lines, clients = local_report(env)  # informational: never changes `ready`
    if as_json:
        payload = {
            "version": __version__, "ready": ready, "config_file": str(config_file),
            "config_file_found": config_file.is_file(), "config": settings,
            "server": server, "checks": [asdict(c) for c in checks], "clients": clients,
        }
        out.write(json.dumps(payload, indent=2) + "\n")
        return 0 if ready else 1
    found = "found" if config_file.is_file() else "not present"
    lines = [f"TinyContext {__version__}", "", f"Configuration (config file {config_file}: {found};"
             " TINYCONTEXT_* variables override it):"]
    lines += [f"  {key:<34} {value}" for key, value in settings.items()]
    lines += ["", "Server settings (environment):"]
    lines += [f"  {key:<34} {value if value is not None else '-'}" for key, value in server.items()]
    lines += ["", "Checks:"]
    lines += [f"  [{'ok' if c.ok else 'FAIL':>4}] {c.name:<16} {c.detail}" for c in checks]
    lines += ["", "Agent clients (tinycontext setup):", *client_lines]
    lines += ["", "Ready." if ready else "Not ready: fix the failed checks above."]
    out.write("\n".join(lines) + "\n")
    return 0 if ready else 1
