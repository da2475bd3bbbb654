"""Encrypted files (exports with `--encrypt`): AES-256-GCM in chunks behind a versioned header.

Format, version 1 (docs/guides/encryption.md):

    header  32 bytes: b"TCSEALED" | version 0x01 | 3 zero bytes | chunk size (uint32, big
            endian) | 16-byte random salt
    chunks  AES-256-GCM ciphertext and 16-byte tag of each `chunk size` bytes of plaintext
            (the last chunk shorter, possibly empty); nonce = the chunk's number as 11 bytes
            big endian, then 0x01 for the last chunk and 0x00 for the others; the header is
            the additional data of every chunk.

The file key is HKDF-SHA256(configured key material, salt, "tinycontext/sealed/v1"): a
fresh key per file, so nonces never repeat under one key. Numbered nonces and the last-chunk
flag make reordered, dropped or truncated chunks fail to decrypt (the construction of the
STREAM scheme, as age uses it). Needs the `cryptography` package (the `encryption` extra).
"""

from __future__ import annotations

import io
import os
import struct
from typing import IO, Any

from tinycontext.config.keys import hkdf
from tinycontext.version import install_command

MAGIC = b"TCSEALED"
VERSION = 1
CHUNK = 64 * 1024
TAG = 16
HEADER = struct.Struct(">8sB3sI16s")
INFO = b"tinycontext/sealed/v1"


class SealedFileError(ValueError):
    """Not a sealed file this version reads, the wrong key, or damaged/truncated contents."""


def _aead(material: bytes, salt: bytes) -> Any:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise SealedFileError(
            "encrypted files need the `encryption` extra (cryptography): run "
            f"`{install_command('encryption')}`."
        ) from None
    return AESGCM(hkdf(material, INFO, salt=salt))


def _nonce(index: int, last: bool) -> bytes:
    return index.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


def is_sealed(head: bytes) -> bool:
    return head[:len(MAGIC)] == MAGIC


class SealedWriter(io.RawIOBase):
    """Encrypts what is written into `sink` (binary); `close()` writes the last chunk."""

    def __init__(self, sink: IO[bytes], material: bytes) -> None:
        super().__init__()
        salt = os.urandom(16)
        self._header = HEADER.pack(MAGIC, VERSION, bytes(3), CHUNK, salt)
        self._aead, self._sink = _aead(material, salt), sink
        self._pending = bytearray()
        self._index = 0
        sink.write(self._header)

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._pending += data
        while len(self._pending) > CHUNK:  # a full chunk is sealed once more data follows
            self._seal(bytes(self._pending[:CHUNK]), last=False)
            del self._pending[:CHUNK]
        return len(data)

    def _seal(self, plain: bytes, last: bool) -> None:
        self._sink.write(self._aead.encrypt(_nonce(self._index, last), plain, self._header))
        self._index += 1

    def close(self) -> None:
        if not self.closed:
            self._seal(bytes(self._pending), last=True)
            self._sink.flush()
        super().close()


class SealedReader(io.RawIOBase):
    """The plaintext of a sealed file read from `source` (binary, at its start)."""

    def __init__(self, source: IO[bytes], material: bytes) -> None:
        super().__init__()
        header = source.read(HEADER.size)
        if len(header) < HEADER.size or not is_sealed(header):
            raise SealedFileError("not an encrypted TinyContext file (no TCSEALED header)")
        _, version, _, chunk, salt = HEADER.unpack(header)
        if version != VERSION or not 0 < chunk <= 1 << 24:
            raise SealedFileError(f"encrypted file version {version} is not one this "
                                  "TinyContext reads: upgrade it")
        self._header, self._chunk, self._source = header, chunk, source
        self._aead = _aead(material, salt)
        self._index, self._done = 0, False
        self._next = source.read(chunk + TAG)
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def _open_next(self) -> bytes:
        sealed, self._next = self._next, self._source.read(self._chunk + TAG)
        last = not self._next
        try:
            from cryptography.exceptions import InvalidTag
        except ImportError:  # pragma: no cover - _aead already needed it
            raise SealedFileError(f"run `{install_command('encryption')}`") from None
        try:
            plain: bytes = self._aead.decrypt(_nonce(self._index, last), sealed, self._header)
        except InvalidTag:
            raise SealedFileError(
                "the encrypted file does not open with the configured key, or it is damaged "
                f"or cut short (chunk {self._index + 1})") from None
        self._index += 1
        self._done = last
        return plain

    def readinto(self, target: Any) -> int:
        while not self._buffer and not self._done:
            self._buffer = self._open_next()
        n = min(len(target), len(self._buffer))
        target[:n] = self._buffer[:n]
        self._buffer = self._buffer[n:]
        return n


def text_reader(source: IO[bytes], material: bytes) -> IO[str]:
    return io.TextIOWrapper(io.BufferedReader(SealedReader(source, material)), encoding="utf-8")


def text_writer(sink: IO[bytes], material: bytes) -> io.TextIOWrapper:
    """Close the returned writer (which closes the sealing layer, not `sink`) to finish."""
    return io.TextIOWrapper(io.BufferedWriter(SealedWriter(sink, material)), encoding="utf-8",
                            write_through=False)


class Replayable:
    """The lines of a sealed file that can be read again from the start (import reads its
    input twice); `seek(0)` opens the decryption anew, so no plaintext copy is ever made."""

    def __init__(self, source: IO[bytes], material: bytes) -> None:
        self._source, self._material = source, material
        self._lines: IO[str] = self._open()

    def _open(self) -> IO[str]:
        self._source.seek(0)
        return text_reader(self._source, self._material)

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return 0

    def seek(self, offset: int) -> int:
        if offset != 0:
            raise ValueError("a sealed file is read again from its start only")
        self._lines = self._open()
        return 0

    def __iter__(self) -> Any:
        return iter(self._lines)
