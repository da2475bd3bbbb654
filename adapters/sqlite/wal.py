"""The committed frames of a SQLite write-ahead log (-wal file), read without SQLite.

Transactions committed in WAL mode live in the -wal file until a checkpoint copies them into
the database file, so a salvage that read only the database would miss the newest writes.
"""

from __future__ import annotations

import struct
from pathlib import Path

WAL_MAGICS = (0x377F0682, 0x377F0683)  # checksums over little- or big-endian words


def u32(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 4], "big")


def _wal_checksum(data: bytes, s0: int, s1: int, big_endian: bool) -> tuple[int, int]:
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def read_wal(path: Path) -> tuple[int, dict[int, int], int]:
    """(page size, page -> file offset of its newest committed frame, pages after that commit).

    Frames count only while their salts and running checksum are valid and only up to the
    last commit frame, as SQLite itself replays a log; an unusable log yields no frames."""
    try:
        wal = path.open("rb")
    except OSError:
        return 0, {}, 0
    with wal:
        header = wal.read(32)
        if len(header) < 32 or u32(header, 0) not in WAL_MAGICS:
            return 0, {}, 0
        big = u32(header, 0) & 1 == 1
        size, salts = u32(header, 8), header[16:24]
        if size < 512 or size > 65536 or size & (size - 1):
            return 0, {}, 0
        sums = _wal_checksum(header[:24], 0, 0, big)
        if sums != (u32(header, 24), u32(header, 28)):
            return 0, {}, 0
        committed: dict[int, int] = {}
        pending: dict[int, int] = {}
        pages, offset = 0, 32
        while True:
            frame = wal.read(24 + size)
            if len(frame) < 24 + size or frame[8:16] != salts:
                break
            sums = _wal_checksum(frame[:8] + frame[24:], *sums, big)
            if sums != (u32(frame, 16), u32(frame, 20)):
                break
            pending[u32(frame, 0)] = offset + 24
            if u32(frame, 4):  # a commit frame: the database size after this transaction
                committed.update(pending)
                pending.clear()
                pages = u32(frame, 4)
            offset += 24 + size
        return size, committed, pages
