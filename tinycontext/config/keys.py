"""Encryption keys for stores at rest: reading the configured key, deriving per-purpose keys.

The configured key is key material (a key file of 32+ random bytes, `tinycontext keygen`,
or TINYCONTEXT_ENCRYPTION_KEY); it never opens anything itself. Each use gets its own key
derived with HKDF-SHA256 (RFC 5869): the single-user store, each hosted user's store (bound
to that user's HMAC tenant key, so one user's file and key open no other user's), and the
per-file keys of encrypted exports and mirror copies (sealed.py). Nothing here logs or
formats the material; messages name files and variables only.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from tinycontext.config.engine import ConfigError, TinyContextConfig

MIN_KEY_BYTES = 32
STORE_PURPOSE = b"tinycontext/store/v1"
TENANT_PURPOSE = b"tinycontext/tenant-store/v1:"


class EncryptionKeyError(ConfigError):
    """The configured key cannot be used (missing, too short, readable by others)."""


def hkdf(material: bytes, info: bytes, salt: bytes = b"", length: int = 32) -> bytes:
    """HKDF-SHA256 (RFC 5869): extract with `salt`, expand for `info`."""
    prk = hmac.new(salt or bytes(32), material, hashlib.sha256).digest()
    out, block = b"", b""
    for counter in range(1, -(-length // 32) + 1):
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
    return out[:length]


def read_key_file(path: Path) -> bytes:
    """The key material in `path`: owner-only, 32+ bytes (one trailing newline dropped)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise EncryptionKeyError(
            f"The encryption key file {path} does not exist: create one with `tinycontext "
            "keygen -o FILE` (or point TINYCONTEXT_ENCRYPTION_KEY_FILE at the right file)."
        ) from None
    except OSError as exc:
        raise EncryptionKeyError(
            f"The encryption key file {path} cannot be read ({exc.strerror}).") from None
    if not stat.S_ISREG(info.st_mode):
        raise EncryptionKeyError(f"The encryption key file {path} is not a regular file.")
    if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise EncryptionKeyError(
            f"The encryption key file {path} can be read or changed by other users (mode "
            f"{stat.S_IMODE(info.st_mode):o}), so it is refused: run `chmod 600 {path}` "
            "(and consider making a new key with `tinycontext keygen` and `tinycontext rekey` "
            "if others may have read it)."
        )
    try:
        material = path.read_bytes()
    except OSError as exc:
        raise EncryptionKeyError(
            f"The encryption key file {path} cannot be read ({exc.strerror}).") from None
    material = material[:-2] if material.endswith(b"\r\n") else material.removesuffix(b"\n")
    if len(material) < MIN_KEY_BYTES:
        raise EncryptionKeyError(
            f"The encryption key file {path} holds fewer than {MIN_KEY_BYTES} bytes: make a key "
            "with `tinycontext keygen -o FILE`."
        )
    return material


def key_material(config: TinyContextConfig) -> bytes | None:
    """The configured key material, or None when encryption is not configured."""
    if config.encryption_key_file and config.encryption_key:
        raise EncryptionKeyError(
            "Both TINYCONTEXT_ENCRYPTION_KEY_FILE and TINYCONTEXT_ENCRYPTION_KEY are set: set "
            "only one (the key file is preferred)."
        )
    if config.encryption_key_file:
        return read_key_file(Path(config.encryption_key_file))
    if config.encryption_key:
        material = config.encryption_key.encode("utf-8")
        if len(material) < MIN_KEY_BYTES:
            raise EncryptionKeyError(
                f"TINYCONTEXT_ENCRYPTION_KEY is shorter than {MIN_KEY_BYTES} bytes: use the "
                "contents of a `tinycontext keygen` key file (64 hex characters)."
            )
        return material
    return None


def store_key(material: bytes) -> bytes:
    """The raw SQLCipher key of the single-user store."""
    return hkdf(material, STORE_PURPOSE)


def tenant_store_key(material: bytes, tenant_key: str) -> bytes:
    """A hosted user's raw SQLCipher key, bound to their HMAC tenant key (their file name)."""
    return hkdf(material, TENANT_PURPOSE + tenant_key.encode("ascii"))


def write_key_file(path: Path) -> None:
    """A new key file: 32 random bytes as 64 hex characters and a newline, created 0600;
    an existing file is never overwritten."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, (secrets.token_hex(32) + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
