"""SQLCipher keys on SQLite connections, and telling an encrypted store file from a plain one.

An encrypted store's file starts with a random salt where a plain one starts with SQLite's
header, so whether a file is encrypted is known without its key (doctor reports it that way).
A key that does not open a file, no key for an encrypted file and a key for a plain file are
each `store_locked`, with what to do; SQLCipher's own "file is not a database" never reaches
a caller, and the key never appears in a message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from tinycontext.domain.errors import StoreLockedError

PLAIN_HEADER = b"SQLite format 3\x00"
KEY_VARIABLES = "TINYCONTEXT_ENCRYPTION_KEY_FILE (or TINYCONTEXT_ENCRYPTION_KEY)"
FileState = Literal["missing", "empty", "plain", "encrypted", "damaged"]


# SQLCipher's first page is a random salt and ciphertext: in its first kilobyte nearly every
# pair of neighbouring bytes differs from every other (about 1,015 of 1,023 for random bytes).
# A plain first page whose header was overwritten keeps the schema's text and runs of zeros
# there, and a repeated pattern repeats its pairs, so those are reported as damaged.
SAMPLE, RANDOM_PAIRS = 1024, 900


def file_state(path: Path) -> FileState:
    """What the file at `path` is, from its first kilobyte (no key needed); "missing" also
    when it cannot be read (SQLite's own open then says why)."""
    try:
        with path.open("rb") as source:
            head = source.read(SAMPLE)
    except OSError:  # absent, or not readable here: opening it reports why
        return "missing"
    if not head:
        return "empty"
    if head.startswith(PLAIN_HEADER):
        return "plain"
    pairs = {head[i:i + 2] for i in range(len(head) - 1)}
    return "encrypted" if len(pairs) >= min(RANDOM_PAIRS, len(head) - 50) else "damaged"


# Each page's HMAC: SHA-256 for stores written from now on, SHA-512 (SQLCipher 4's default)
# for those written before, which still open. Both keep every page authenticated with a
# 256-bit key; SHA-256 runs on the processor's SHA instructions where it has them, and
# checking a page is most of what reading an encrypted page from the file costs.
HMAC = "HMAC_SHA256"
HMAC_EARLIER = "HMAC_SHA512"


def apply_key(conn: Any, key: bytes, hmac: str = HMAC) -> None:
    """Key a new SQLCipher connection with a raw 256-bit key (no passphrase stretching: the
    key is already random). Temporary tables and indexes stay in memory, never in a file."""
    if len(key) != 32:
        raise ValueError("a store key is 32 bytes")
    if hmac not in (HMAC, HMAC_EARLIER):
        raise ValueError(f"unknown page HMAC {hmac}")
    conn.execute("PRAGMA cipher_log_level = NONE")  # SQLCipher's own stderr lines on a bad key
    conn.execute(f"PRAGMA key = \"x'{key.hex()}'\"")
    conn.execute(f"PRAGMA cipher_hmac_algorithm = {hmac}")
    conn.execute("PRAGMA temp_store = MEMORY")


def open_keyed(connect: Callable[[], Any], key: bytes, path: Path,
               not_a_database: type[BaseException], state: FileState | None = None) -> Any:
    """A new connection (from `connect`) to the store at `path`, keyed and its key checked;
    a store written with the earlier page HMAC is opened with that one. A key that opens
    neither is `store_locked` (wrong_key), as before. `state`: the file's kind when the
    caller knows it (verify_key)."""
    for hmac in (HMAC, HMAC_EARLIER):
        conn = connect()
        try:
            apply_key(conn, key, hmac)
            verify_key(conn, path, not_a_database, state)
            return conn
        except StoreLockedError:
            conn.close()
            if hmac == HMAC_EARLIER:
                raise
        except BaseException:
            conn.close()
            raise
    raise AssertionError("unreachable")


def no_key(path: Path) -> StoreLockedError:
    return StoreLockedError(
        f"The memory store {path} is encrypted and no key is configured, so it cannot be "
        f"opened: set {KEY_VARIABLES} to the key it was encrypted with (the `encryption` "
        "extra must be installed). Without that key its memories cannot be read."
    )


def wrong_key(path: Path) -> StoreLockedError:
    return StoreLockedError(
        f"The memory store {path} is encrypted; the configured key does not open it. Point "
        f"{KEY_VARIABLES} at the key it was encrypted with (after `tinycontext rekey`, the new "
        "one). Without that key its memories cannot be read: restore an export to a new store."
    )


def key_for_plain(path: Path) -> StoreLockedError:
    return StoreLockedError(
        f"The memory store {path} is not encrypted, but an encryption key is configured: run "
        "`tinycontext encrypt` to encrypt it with that key, or unset "
        f"{KEY_VARIABLES} to keep using it unencrypted."
    )


def check_file(path: Path, key: bytes | None) -> None:
    """Refuse, before connecting, a store file that the key (or its absence) cannot open."""
    check_state(file_state(path), path, key)


def check_state(state: FileState, path: Path, key: bytes | None) -> None:
    """check_file, for a file whose kind is already known."""
    if state == "encrypted" and key is None:
        raise no_key(path)
    if state == "plain" and key is not None:
        raise key_for_plain(path)


def verify_key(conn: Any, path: Path, not_a_database: type[BaseException],
               state: FileState | None = None) -> None:
    """Read the schema once: SQLCipher checks the key on the first page it decrypts. The
    file's kind is read from it only when the caller does not know it (`state`): a caller
    with other connections on the file must pass it (open_files.py says why)."""
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except not_a_database as exc:
        not_opened = "not a database" in str(exc).lower() or getattr(
            exc, "sqlite_errorcode", 0) == 26
        if not_opened and (file_state(path) if state is None else state) == "encrypted":
            raise wrong_key(path) from None
        raise  # a damaged plain file: store_corrupt, as without a key
