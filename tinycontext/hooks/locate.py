"""Where a store's memory service listens, computed from the environment (standard library).

The service is keyed by everything that decides which store and settings it serves: the
TINYCONTEXT_* variables (paths made absolute) and the config file's path and bytes. Two
environments naming different stores never share a service; the same environment always
finds the same one. Sockets live in an owner-only folder (0700, checked on every use).

This runs once per prompt in a fresh process, so it uses plain strings and os.path (pathlib,
dataclasses and tempfile cost more to import than the rest of the hook's own work).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys
from collections.abc import Mapping
from typing import NamedTuple

PREFIX = "TINYCONTEXT_"
# Variables whose relative value would mean a different file from another working folder.
PATH_VARIABLES = ("MEMORY_DB_PATH", "MODELS_DIR", "CONFIG_FILE", "ENCRYPTION_KEY_FILE")
CONFIG_FILE_NAME = "context_config.json"


class UnsafeFolder(Exception):
    """The socket folder is not owned by this user or is open to others."""


def _home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or os.path.expanduser("~")


def user_config_dir(environ: Mapping[str, str]) -> str:
    """The per-user config folder, as platformdirs names it (tested against platformdirs)."""
    home = _home(environ)
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", "tinycontext")
    if sys.platform == "win32":
        base = environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(base, "tinycontext")
    xdg = environ.get("XDG_CONFIG_HOME", "").strip()
    return os.path.join(xdg or os.path.join(home, ".config"), "tinycontext")


def service_environment(environ: Mapping[str, str], cwd: str | None = None) -> dict[str, str]:
    """The environment with the TINYCONTEXT_* paths made absolute (the service runs in /)."""
    env = dict(environ)
    here = cwd or os.getcwd()
    for name in PATH_VARIABLES:
        value = env.get(PREFIX + name)
        if value:
            path = os.path.expanduser(value)
            env[PREFIX + name] = path if os.path.isabs(path) else os.path.join(here, path)
    return env


def config_file(environ: Mapping[str, str]) -> str:
    named = environ.get(PREFIX + "CONFIG_FILE")
    return os.path.expanduser(named) if named else os.path.join(user_config_dir(environ),
                                                                CONFIG_FILE_NAME)


def service_key(environ: Mapping[str, str]) -> str:
    """16 hex characters naming the store and settings this environment selects."""
    digest = hashlib.sha256()
    for name in sorted(n for n in environ if n.startswith(PREFIX)):
        digest.update(f"{name}={environ[name]}\0".encode())
    path = config_file(environ)
    digest.update(f"config={path}\0".encode())
    try:
        with open(path, "rb") as handle:
            digest.update(handle.read())
    except OSError:
        digest.update(b"\0absent")
    return digest.hexdigest()[:16]


def _temp_root(environ: Mapping[str, str]) -> str:
    for name in ("TMPDIR", "TEMP", "TMP"):
        if environ.get(name) and os.path.isdir(environ[name]):
            return environ[name]
    return "/tmp" if os.path.isdir("/tmp") else os.getcwd()


def runtime_dir(environ: Mapping[str, str]) -> str:
    """The owner-only folder of sockets and logs (created 0700; refused if unsafe)."""
    xdg = environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isdir(xdg):
        folder = os.path.join(xdg, "tinycontext")
    else:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        folder = os.path.join(_temp_root(environ), f"tinycontext-{uid}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    info = os.lstat(folder)
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o077
                                  or not stat.S_ISDIR(info.st_mode)):
        raise UnsafeFolder(f"{folder} is not an owner-only folder of this user; remove it")
    return folder


class Place(NamedTuple):
    """The files of one service: socket, lock (held while it runs), log, and which memories
    each agent session was already given."""

    key: str
    socket: str
    lock: str
    log: str
    seen: str


def locate(environ: Mapping[str, str]) -> Place:
    key = service_key(environ)
    folder = runtime_dir(environ)
    return Place(key, *(os.path.join(folder, key + suffix)
                        for suffix in (".sock", ".lock", ".log", ".seen.json")))


def hook_log(environ: Mapping[str, str]) -> str:
    """The hooks' own one-line-per-error log (never prompts or memory content)."""
    return os.path.join(runtime_dir(environ), "hooks.log")
