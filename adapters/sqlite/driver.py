"""Choose one SQLite build per process that can load sqlite-vec, and open files safely.

Many Python builds (pyenv's among them) compile the stdlib `sqlite3` without
`enable_load_extension`, so sqlite-vec cannot load there. We then use `sqlean.py`, a SQLite
build from PyPI with extension loading and FTS5. Two different SQLite builds in one process
have been seen to crash it, so the choice is made once, without importing the stdlib module
when the interpreter says it was built without loadable extensions. A process that opens
encrypted stores asks for SQLCipher (`use_sqlcipher`, before its first store): `sqlcipher3`
then is its only SQLite, for plain stores too (without a key SQLCipher reads and writes plain
SQLite files).
"""

from __future__ import annotations

import os
import stat
import sys
import sysconfig
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

_lock = threading.Lock()
_chosen: ModuleType | None = None
_want_cipher = False
CIPHER_MODULE = "sqlcipher3"


class SqliteUnavailableError(RuntimeError):
    """No SQLite build in this process can load sqlite-vec with FTS5."""


class EncryptionUnavailableError(SqliteUnavailableError):
    """Encryption was asked for, but SQLCipher cannot be this process's SQLite."""


def _import_cipher() -> ModuleType:
    from tinycontext.version import install_command

    try:
        import sqlcipher3 as module
    except ImportError:
        raise EncryptionUnavailableError(
            "An encryption key is configured but the `encryption` extra (SQLCipher) is not "
            f"installed: run `{install_command('encryption')}`, or unset "
            "TINYCONTEXT_ENCRYPTION_KEY_FILE and TINYCONTEXT_ENCRYPTION_KEY to use plain stores."
        ) from None
    return module  # type: ignore[no-any-return]


def use_sqlcipher() -> None:
    """Make SQLCipher this process's SQLite; call before the first store opens. Fails when
    the extra is missing or another SQLite build was already chosen (never two builds)."""
    global _want_cipher
    with _lock:
        if _chosen is not None and _chosen.__name__.split(".")[0] != CIPHER_MODULE:
            raise EncryptionUnavailableError(
                f"This process already opened a store with {_chosen.__name__} before encryption "
                "was configured, and one process uses one SQLite build: configure the "
                "encryption key before the first store is opened (or in a new process)."
            )
        if _chosen is None:
            _import_cipher()  # fails now, naming the install command, not at the first save
        _want_cipher = True


def uses_sqlcipher() -> bool:
    return _want_cipher or (_chosen is not None and _chosen.__name__.startswith(CIPHER_MODULE))


def _stdlib_supports_extensions() -> bool:
    module = sys.modules.get("sqlite3")
    if module is not None:
        return hasattr(module.Connection, "enable_load_extension")
    args = str(sysconfig.get_config_var("CONFIG_ARGS") or "")
    if "--enable-loadable-sqlite-extensions" in args:
        return True
    if sysconfig.get_config_var("CONFIG_ARGS") is None:  # e.g. Windows: no configure args
        import sqlite3

        return hasattr(sqlite3.Connection, "enable_load_extension")
    return False


def sqlite_module() -> ModuleType:
    """The DB-API module this process uses for every store (chosen once)."""
    global _chosen
    if _chosen is None:
        with _lock:
            if _chosen is None:
                if _want_cipher:
                    module = _import_cipher()
                elif _stdlib_supports_extensions():
                    import sqlite3 as module
                else:
                    try:
                        import sqlean as module  # type: ignore[no-redef]
                    except ImportError as exc:  # pragma: no cover - a declared dependency
                        raise SqliteUnavailableError(
                            "This Python's sqlite3 cannot load extensions and sqlean.py is "
                            "missing: run `pip install sqlean.py`."
                        ) from exc
                _chosen = module
    return _chosen


def driver_name() -> str:
    return sqlite_module().__name__.split(".")[0]


def vector_extension_path() -> str:
    """The sqlite-vec loadable library, found without importing the `sqlite_vec` module:
    that module imports the stdlib sqlite3, which would put a second SQLite in the process."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise SqliteUnavailableError("sqlite-vec is not installed: run `pip install sqlite-vec`.")
    folder = Path(next(iter(spec.submodule_search_locations)))
    for candidate in sorted(folder.glob("vec0.*")):
        if candidate.suffix in (".so", ".dylib", ".dll"):
            return str(candidate.with_suffix(""))
    raise SqliteUnavailableError(
        f"sqlite-vec's library is missing from {folder}: run `pip install --force-reinstall "
        "sqlite-vec`."
    )


def load_vector_extension(conn: Any) -> str:
    """Load sqlite-vec into a connection and return its version; fails loudly, never degrades."""
    try:
        conn.enable_load_extension(True)
        conn.load_extension(vector_extension_path())
        conn.enable_load_extension(False)
        version = conn.execute("SELECT vec_version()").fetchone()[0]
    except Exception as exc:
        raise SqliteUnavailableError(
            f"sqlite-vec could not be loaded with {driver_name()}: {exc}. Reinstall with "
            "`pip install --force-reinstall sqlite-vec sqlean.py`."
        ) from exc
    return str(version)


PRIVATE_FILE = stat.S_IRUSR | stat.S_IWUSR
PRIVATE_DIR = stat.S_IRWXU


def prepare_private_file(path: Path) -> None:
    """Create the folder (0700) and an empty database file (0600); tighten an existing one."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, mode=PRIVATE_DIR, exist_ok=True)
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, PRIVATE_FILE)
        os.close(fd)
    tighten(path)


def companions(path: Path) -> tuple[Path, Path]:
    """The -wal and -shm files SQLite keeps beside a store in WAL mode."""
    return Path(f"{path}-wal"), Path(f"{path}-shm")


def tighten(path: Path) -> None:
    """Make the database and its -wal/-shm companions owner-only when others can read them.

    A read-only open of a 0400 store leaves companions at 0400 too; once the user makes the
    store writable again, such a companion would keep every write failing, so one of ours
    gets its owner's write bit back (0600) whenever the store itself has it.
    """
    if os.name != "posix":
        return
    try:
        writable = bool(path.stat().st_mode & stat.S_IWUSR)
    except FileNotFoundError:
        return
    for candidate in (path, *companions(path)):
        try:
            info = candidate.stat()
        except FileNotFoundError:
            continue
        stale = (
            candidate != path and writable and not info.st_mode & stat.S_IWUSR
            and info.st_uid == os.geteuid()
        )
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) or stale:
            os.chmod(candidate, PRIVATE_FILE)


def folder_writable(path: Path) -> bool:
    """Whether this process may create files (a -wal, a -shm) in the store's folder."""
    return os.access(path.parent, os.W_OK | os.X_OK)
