"""`tinycontext doctor`: the resolved configuration and whether everything is ready.

Checks the store (doctor_storage: writability, integrity, SQLite with FTS5, sqlite-vec; a
database that does not exist yet is not created), the embedding model and the token
vocabulary, all as the composition root builds them.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tinycontext.config.engine import (
    CONFIG_FILE_NAME,
    ENV_PREFIX,
    TinyContextConfig,
    user_config_dir,
)
from tinycontext.entry.doctor_storage import Check, check_storage

if TYPE_CHECKING:
    from tinycontext.entry.container import Container

SECRET_ENV = ("TENANT_SECRET", "TRUSTED_PROXY_TOKEN", "MANAGEMENT_TOKEN")
SERVER_ENV = ("HOST", "PORT", "ALLOWED_HOSTS", "TENANCY", "TENANT_STORE_DIR",
              "TRUSTED_PROXY_CIDRS", "USER_HEADER", "MAX_OPEN_STORES", "MANAGEMENT", "LOG_LEVEL")
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


def _storage_checks(config: TinyContextConfig, env: dict[str, str],
                    container: Container) -> list[Check]:
    """The store a server would use: in hosted mode on SQLite the per-user stores' folder
    (the single-user store is never opened there), with SQLite itself tried on a scratch file."""
    hosted = env.get(ENV_PREFIX + "TENANCY", "").strip().lower() not in ("", "off")
    if not hosted or config.store_url:
        return check_storage(config, container)
    from tinycontext.hosted.doctor import check_tenant_folder

    with tempfile.TemporaryDirectory(prefix="tinycontext-doctor-") as scratch:
        probe = config.model_copy(update={"memory_db_path": str(Path(scratch) / "memories.db")})
        engine = [c for c in check_storage(probe, container) if c.name != "storage"]
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

    # The process's one container, as a server builds it: the store is its resource (opened
    # only when it exists, closed after), the model and vocabulary its singletons.
    container = create_container(config)
    checks = [*_storage_checks(config, env, container), _check_model(config, container),
              _check_tokenizer(config, container),
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
