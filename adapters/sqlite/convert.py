"""Encrypting, decrypting and re-keying a store file in place, so a crash loses nothing.

The store is copied with SQLCipher's `sqlcipher_export` into a new file in the same folder
(`<store>.converting-<pid>`, owner-only), which is checked, made a WAL store, synced and then
renamed over the store in one step: until that rename the old file is the store, after it the
new one, and a crash in between leaves a temporary file that the next conversion removes.
The old file is held under an exclusive lock the whole time. A store some other process has
open (a server, an MCP client, a hook service) cannot leave WAL mode, which is how such a use
is detected and the conversion refused. After the rename the old file's contents are
overwritten with zeros through a descriptor opened before SQLite's: a process that opened the
old file while it was locked then finds no database there instead of writing into a file that
is no longer the store, and an encrypted store leaves no plain copy behind in that file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tinycontext.domain.errors import StoreLockedError, StoreUnavailableError

from . import cipher
from .driver import load_vector_extension, sqlite_module
from .errors import BUSY, LOCKED, result_code

TEMP_MARK = ".converting-"
ZEROS = bytes(1 << 20)


class StoreInUseError(StoreUnavailableError):
    """Another process has the store open: it cannot be converted now."""


@dataclass
class Converted:
    memories: int
    bytes_before: int
    bytes_after: int


def _key_clause(key: bytes | None) -> str:
    return f"\"x'{key.hex()}'\"" if key is not None else "''"


def leftovers(path: Path) -> list[Path]:
    """Temporary files of conversions whose process no longer runs."""
    found = []
    for item in path.parent.glob(f"{path.name}{TEMP_MARK}*"):
        pid = item.name.rsplit("-", 1)[-1].split(".")[0]
        if pid.isdigit() and _running(int(pid)) and int(pid) != os.getpid():
            continue
        found.append(item)
    return found


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _in_use(exc: BaseException) -> bool:
    return result_code(exc) in (BUSY, LOCKED)


def _refuse_in_use(path: Path) -> StoreInUseError:
    return StoreInUseError(
        f"The memory store {path} is open in another process (a server, an MCP client or "
        "the hook service), so it was not converted and nothing changed: stop what uses it "
        "and run this again."
    )


def _open_source(path: Path, key: bytes | None) -> Any:
    sqlite = sqlite_module()

    def connect() -> Any:
        return sqlite.connect(str(path), isolation_level=None, timeout=0,
                              check_same_thread=False)

    conn = connect() if key is None else cipher.open_keyed(connect, key, path,
                                                            sqlite.DatabaseError)
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        load_vector_extension(conn)
        # Leaving WAL mode needs every other connection gone: the in-use check. Exclusive
        # locking then keeps every other process out until this connection closes.
        mode = conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
        if str(mode).lower() != "delete":
            raise _refuse_in_use(path)
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
    except sqlite.OperationalError as exc:
        conn.close()
        if _in_use(exc):
            raise _refuse_in_use(path) from None
        raise
    except BaseException:
        conn.close()
        raise
    return conn


def _verify(target: Path, key: bytes | None, memories: int) -> None:
    """The new file opens with its key, passes SQLite's check and holds every memory; it is
    made a WAL store (as the store opens it) and synced to disk."""
    sqlite = sqlite_module()
    conn = sqlite.connect(str(target), isolation_level=None, check_same_thread=False)
    try:
        if key is not None:
            cipher.apply_key(conn, key)
        check = [str(r[0]) for r in conn.execute("PRAGMA quick_check(5)")]
        count = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        if check != ["ok"] or count != memories:
            raise StoreUnavailableError(
                f"The converted copy {target} did not check out ({'; '.join(check)}; "
                f"{count} of {memories} memories), so the store was left as it was."
            )
        conn.execute("PRAGMA journal_mode = WAL").fetchone()
    finally:
        conn.close()
    with open(target, "rb") as synced:
        os.fsync(synced.fileno())


def convert(path: Path, old_key: bytes | None, new_key: bytes | None,
            progress: Callable[[float], None] | None = None) -> Converted:
    """Rewrite the store at `path` from `old_key` to `new_key` (None: plain). The process must
    use SQLCipher. Raises StoreInUseError when another process has the store open."""
    for stale in leftovers(path):
        stale.unlink(missing_ok=True)
    cipher.check_file(path, old_key)
    target = path.with_name(f"{path.name}{TEMP_MARK}{os.getpid()}")
    # Opened before SQLite's descriptors, closed after them: closing a descriptor of a file
    # drops every POSIX lock this process holds on it, SQLite's included.
    holder = os.open(path, os.O_RDWR)
    conn = None
    try:
        conn = _open_source(path, old_key)
        before = os.fstat(holder).st_size
        memories = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        conn.execute(f"ATTACH DATABASE ? AS converted KEY {_key_clause(new_key)}", (str(target),))
        if new_key is not None:  # written with the current page HMAC (cipher.py)
            conn.execute(f"PRAGMA converted.cipher_hmac_algorithm = {cipher.HMAC}")
        conn.execute("PRAGMA converted.journal_mode = OFF")  # a failed copy is thrown away
        if progress is not None:
            conn.set_progress_handler(
                lambda: progress(min(1.0, target.stat().st_size / max(before, 1))) or 0, 50_000)
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("SELECT sqlcipher_export('converted')")
        conn.execute(f"PRAGMA converted.user_version = {version}")
        conn.execute("COMMIT")
        conn.set_progress_handler(None, 0)
        conn.execute("DETACH DATABASE converted")
        _verify(target, new_key, memories)
        os.replace(target, path)
        _sync_folder(path.parent)
        _wipe(holder)
        if progress is not None:
            progress(1.0)
        return Converted(memories, before, path.stat().st_size)
    except BaseException:
        with contextlib.suppress(OSError):
            target.unlink()
        raise
    finally:
        if conn is not None:
            conn.close()
        os.close(holder)
        for companion in ("-journal",):
            Path(f"{target}{companion}").unlink(missing_ok=True)


def _wipe(fd: int) -> None:
    """Overwrite the replaced file's contents (still ours through `fd`) with zeros."""
    size = os.fstat(fd).st_size
    written = 0
    while written < size:
        written += os.pwrite(fd, ZEROS[:min(len(ZEROS), size - written)], written)
    os.fsync(fd)


def _sync_folder(folder: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# What check_pages says when not one page authenticates with the key.
KEY_DOES_NOT_OPEN = "the configured key does not open it"


def _read_only(path: Path) -> Callable[[], Any]:
    sqlite = sqlite_module()
    return lambda: sqlite.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                  check_same_thread=False)


def check_pages(path: Path, key: bytes) -> list[str]:
    """What is wrong with an encrypted store file, read-only: a key that does not open it
    (KEY_DOES_NOT_OPEN), pages whose authentication fails, or SQLite's own findings; []
    when it is whole."""
    sqlite = sqlite_module()
    try:
        conn = cipher.open_keyed(_read_only(path), key, path, sqlite.DatabaseError)
    except StoreLockedError:
        return [unopened(path, key)]
    except sqlite.DatabaseError as exc:
        return [f"it cannot be read ({exc})"]
    try:
        found = [str(r[0]) for r in conn.execute("PRAGMA cipher_integrity_check")]
        if found:
            return [_failing(found)]
        check = [str(r[0]) for r in conn.execute("PRAGMA quick_check(5)")]
        return [] if check == ["ok"] else [f"SQLite's check found: {'; '.join(check)}"]
    except sqlite.DatabaseError as exc:
        return [f"it cannot be read ({exc})"]
    finally:
        conn.close()


def unopened(path: Path, key: bytes) -> str:
    """Why `key` fails on the first page of the encrypted store at `path`: a different key
    fails every page (KEY_DOES_NOT_OPEN), while damage that reaches the first page fails
    only the pages it touched. SQLCipher's page check tells them apart: it authenticates
    every page without decoding the first."""
    sqlite = sqlite_module()
    for hmac in (cipher.HMAC, cipher.HMAC_EARLIER):
        conn = _read_only(path)()
        try:
            cipher.apply_key(conn, key, hmac)
            found = [str(r[0]) for r in conn.execute("PRAGMA cipher_integrity_check")]
            size = int(conn.execute("PRAGMA cipher_page_size").fetchone()[0])
        except sqlite.DatabaseError:
            continue
        finally:
            conn.close()
        pages = path.stat().st_size // max(size, 1)
        if found and len(found) < pages:
            return _failing(found, pages)
    return KEY_DOES_NOT_OPEN


def _failing(found: list[str], pages: int = 0) -> str:
    many = f"{len(found)} of {pages} pages" if pages else (
        "1 page" if len(found) == 1 else f"{len(found)} pages")
    verb = "fails" if len(found) == 1 else "fail"
    return f"{many} {verb} SQLCipher's authentication (first: {found[0]})"
