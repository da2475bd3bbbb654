"""Where a store's memory service listens, computed from the environment (standard library).

The service is keyed by everything that decides which store and settings it serves: the
TINYCONTEXT_* variables (paths made absolute) and the config file's path and bytes. Two
environments naming different stores never share a service; the same environment always
finds the same one. Sockets live in an owner-only folder (0700, checked on every use).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PREFIX = "TINYCONTEXT_"
# Variables whose relative value would mean a different file from another working folder.
PATH_VARIABLES = ("MEMORY_DB_PATH", "MODELS_DIR", "CONFIG_FILE", "ENCRYPTION_KEY_FILE")
CONFIG_FILE_NAME = "context_config.json"


class UnsafeFolder(Exception):
    """The socket folder is not owned by this user or is open to others."""


def user_config_dir(environ: Mapping[str, str]) -> Path:
    """The per-user config folder, as platformdirs names it (tested against platformdirs)."""
    home = Path(environ.get("HOME") or Path.home())
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "tinycontext"
    if sys.platform == "win32":
        base = environ.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / "tinycontext"
    xdg = environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(xdg) if xdg else home / ".config") / "tinycontext"


def service_environment(environ: Mapping[str, str], cwd: str | None = None) -> dict[str, str]:
    """The environment with the TINYCONTEXT_* paths made absolute (the service runs in /)."""
    env = dict(environ)
    here = Path(cwd or os.getcwd())
    for name in PATH_VARIABLES:
        value = env.get(PREFIX + name)
        if value:
            path = Path(value).expanduser()
            env[PREFIX + name] = str(path if path.is_absolute() else here / path)
    return env


def config_file(environ: Mapping[str, str]) -> Path:
    named = environ.get(PREFIX + "CONFIG_FILE")
    return Path(named).expanduser() if named else user_config_dir(environ) / CONFIG_FILE_NAME


def service_key(environ: Mapping[str, str]) -> str:
    """16 hex characters naming the store and settings this environment selects."""
    digest = hashlib.sha256()
    for name in sorted(n for n in environ if n.startswith(PREFIX)):
        digest.update(f"{name}={environ[name]}\0".encode())
    path = config_file(environ)
    digest.update(f"config={path}\0".encode())
    try:
        digest.update(path.read_bytes())
    except OSError:
        digest.update(b"\0absent")
    return digest.hexdigest()[:16]


def runtime_dir(environ: Mapping[str, str]) -> Path:
    """The owner-only folder of sockets and logs (created 0700; refused if unsafe)."""
    xdg = environ.get("XDG_RUNTIME_DIR", "")
    if xdg and Path(xdg).is_dir():
        folder = Path(xdg) / "tinycontext"
    else:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        folder = Path(tempfile.gettempdir()) / f"tinycontext-{uid}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = folder.lstat()
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o077
                                  or not folder.is_dir() or folder.is_symlink()):
        raise UnsafeFolder(f"{folder} is not an owner-only folder of this user; remove it")
    return folder


@dataclass(frozen=True)
class Place:
    """The files of one service: socket, lock (held while it runs) and log."""

    key: str
    socket: Path
    lock: Path
    log: Path
    seen: Path  # which memories each agent session was already given


def locate(environ: Mapping[str, str]) -> Place:
    key = service_key(environ)
    folder = runtime_dir(environ)
    return Place(key, folder / f"{key}.sock", folder / f"{key}.lock", folder / f"{key}.log",
                 folder / f"{key}.seen.json")


def hook_log(environ: Mapping[str, str]) -> Path:
    """The hooks' own one-line-per-error log (never prompts or memory content)."""
    return runtime_dir(environ) / "hooks.log"
