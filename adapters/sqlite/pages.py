"""Read a SQLite database file page by page, without SQLite, for salvage from damaged stores.

SQLite stops at the first bad page ("database disk image is malformed") and cannot open a
file whose header is damaged at all. This reader follows the published file format instead:
the header, the committed frames of the write-ahead log laid over the main file, table and
index b-trees, overflow chains and records. What it cannot read it reports (None, MISSING)
rather than raising, so a caller can keep going past any number of bad pages.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .wal import read_wal
from .wal import u32 as _u32

MAGIC = b"SQLite format 3\x00"
TABLE_INTERIOR, TABLE_LEAF, INDEX_INTERIOR, INDEX_LEAF = 5, 13, 2, 10
ENCODINGS = {1: "utf-8", 2: "utf-16-le", 3: "utf-16-be"}
# Page sizes SQLite allows, tried when the header that states it is unreadable.
LIKELY_PAGE_SIZES = (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)


class Missing:
    """A record value that could not be read (cut off, or not decodable)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = Missing()


class UnreadableFileError(Exception):
    """Not even the page layout of the file could be worked out."""


def _u16(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 2], "big")


def varint(data: bytes, pos: int) -> tuple[int, int]:
    """SQLite's big-endian variable-length integer at `pos`: (value, next position)."""
    value = 0
    for i in range(8):
        byte = data[pos + i]  # IndexError past the end: the caller treats it as unreadable
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    return (value << 8) | data[pos + 8], pos + 9


@dataclass(frozen=True, slots=True)
class BTreePage:
    number: int
    kind: int
    data: bytes
    cells: tuple[int, ...]  # offsets of the cells in `data`, in key order
    right: int  # interior pages: the right-most child

    @property
    def interior(self) -> bool:
        return self.kind in (TABLE_INTERIOR, INDEX_INTERIOR)


class PageFile:
    """The pages of one database (with its -wal), read-only. Use as a context manager."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: IO[bytes] = path.open("rb")  # noqa: SIM115 - closed by close()
        self._wal_file: IO[bytes] | None = None
        try:
            self._layout()
        except BaseException:
            self.close()
            raise

    def _layout(self) -> None:
        wal_size, self._frames, wal_pages = read_wal(Path(f"{self.path}-wal"))
        if self._frames:
            self._wal_file = Path(f"{self.path}-wal").open("rb")  # noqa: SIM115 - closed by close()
        file_size = self.path.stat().st_size
        self._db.seek(0)
        head = self._db.read(100)
        first = self._frame(1, wal_size) if 1 in self._frames else None
        if first is not None:
            head = first[:100]
        self.header_ok = head.startswith(MAGIC) and len(head) == 100
        size = wal_size or (self._header_page_size(head) if self.header_ok else 0)
        if not size:
            size = self._guess_page_size(file_size)
        self.page_size = size
        self.usable = size - (head[20] if self.header_ok else 0)
        self.encoding = ENCODINGS.get(_u32(head, 56), "utf-8") if self.header_ok else "utf-8"
        counted = _u32(head, 28) if self.header_ok and head[24:28] == head[92:96] else 0
        self.pages = wal_pages or counted or file_size // size
        self.file_pages = file_size // size  # fewer than `pages` when the file was cut short
        self.freelist = (_u32(head, 32), _u32(head, 36)) if self.header_ok else None

    @staticmethod
    def _header_page_size(head: bytes) -> int:
        size = _u16(head, 16)
        size = 65536 if size == 1 else size
        return size if 512 <= size <= 65536 and not size & (size - 1) else 0

    def _guess_page_size(self, file_size: int) -> int:
        """The smallest size at which most of the first pages look like b-tree pages (a
        multiple of the real size fits as well as the size itself; smaller ones do not)."""
        shares: dict[int, float] = {}
        for size in sorted(LIKELY_PAGE_SIZES):
            numbers = range(2, min(file_size // size, 64) + 1)
            good = 0
            for number in numbers:
                self._db.seek((number - 1) * size)
                good += self._parse(number, self._db.read(size), size) is not None
            shares[size] = good / len(numbers) if numbers else 0.0
        best = max(shares.values())
        if best == 0.0:
            raise UnreadableFileError("no SQLite pages found in the file")
        return min(size for size, share in shares.items() if share >= 0.8 * best)

    def _frame(self, number: int, size: int) -> bytes | None:
        assert self._wal_file is not None  # opened whenever there are frames
        self._wal_file.seek(self._frames[number])
        data = self._wal_file.read(size)
        return data if len(data) == size else None

    def page(self, number: int) -> bytes | None:
        """The newest committed content of page `number` (1-based), or None if unreadable."""
        if not 1 <= number <= self.pages:
            return None
        if number in self._frames:
            return self._frame(number, self.page_size)
        self._db.seek((number - 1) * self.page_size)
        data = self._db.read(self.page_size)
        return data if len(data) == self.page_size else None

    @staticmethod
    def _parse(number: int, data: bytes | None, usable: int) -> BTreePage | None:
        if data is None:
            return None
        at = 100 if number == 1 else 0
        kind = data[at]
        if kind not in (TABLE_INTERIOR, TABLE_LEAF, INDEX_INTERIOR, INDEX_LEAF):
            return None
        start = at + (12 if kind in (TABLE_INTERIOR, INDEX_INTERIOR) else 8)
        end = start + 2 * _u16(data, at + 3)
        if end > usable:
            return None
        cells = struct.unpack(f">{(end - start) // 2}H", data[start:end])
        if any(offset < end or offset >= usable for offset in cells):
            return None
        right = _u32(data, at + 8) if start - at == 12 else 0
        return BTreePage(number, kind, data, cells, right)

    def btree_page(self, number: int) -> BTreePage | None:
        """Page `number` as a b-tree page, or None when it is missing or not shaped like one."""
        return self._parse(number, self.page(number), self.usable)

    def children(self, page: BTreePage) -> list[int]:
        """The child page numbers of an interior page, left to right."""
        return [_u32(page.data, offset) for offset in page.cells] + [page.right]

    def _local(self, total: int, table_leaf: bool) -> int:
        """How much of a payload of `total` bytes is stored on the b-tree page itself."""
        u = self.usable
        most = u - 35 if table_leaf else (u - 12) * 64 // 255 - 23
        if total <= most:
            return total
        least = (u - 12) * 32 // 255 - 23
        spill = least + (total - least) % (u - 4)
        return spill if spill <= most else least

    def payload(self, page: BTreePage, pos: int, total: int) -> tuple[bytes, bool]:
        """A cell's payload from `pos` (local part plus overflow chain); complete or not."""
        if total > self.pages * self.page_size:  # a damaged size: do not chase its chain
            return b"", False
        local = self._local(total, page.kind == TABLE_LEAF)
        parts = [page.data[pos:pos + local]]
        if len(parts[0]) < local:
            return parts[0], False
        need, nxt, seen = total - local, _u32(page.data, pos + local), set()
        while need > 0:
            over = self.page(nxt) if nxt not in seen else None
            if over is None:
                return b"".join(parts), False
            seen.add(nxt)
            parts.append(over[4:self.usable][:need])
            need -= len(parts[-1])
            nxt = _u32(over, 0)
        return b"".join(parts), True

    def table_rows(self, page: BTreePage) -> Iterator[tuple[int, list[Any] | None]]:
        """(rowid, values or None when the cell is unreadable) for each cell of a table leaf."""
        for offset in page.cells:
            try:
                total, pos = varint(page.data, offset)
                rowid, pos = varint(page.data, pos)
                body, complete = self.payload(page, pos, total)
            except IndexError:
                yield -1, None
                continue
            yield rowid - (1 << 64) if rowid >= 1 << 63 else rowid, self.record(body, complete)

    def index_keys(self, page: BTreePage) -> Iterator[list[Any] | None]:
        """The key record of every cell of an index page (interior pages hold keys too)."""
        for offset in page.cells:
            try:
                pos = offset + (4 if page.interior else 0)
                total, pos = varint(page.data, pos)
                body, complete = self.payload(page, pos, total)
            except IndexError:
                yield None
                continue
            yield self.record(body, complete)

    def record(self, body: bytes, complete: bool) -> list[Any] | None:
        """Column values of a record; MISSING for those cut off or undecodable."""
        try:
            size, pos = varint(body, 0)
            types = []
            while pos < size:
                kind, pos = varint(body, pos)
                types.append(kind)
        except IndexError:
            return None
        if pos != size or (complete and size > len(body)):
            return None
        values: list[Any] = []
        for kind in types:
            length = _value_length(kind)
            if length < 0:
                return None
            raw = body[pos:pos + length]
            pos += length
            values.append(self._value(kind, raw) if len(raw) == length else MISSING)
        return values

    def _value(self, kind: int, raw: bytes) -> Any:
        if kind in (0, 8, 9):
            return None if kind == 0 else kind - 8
        if kind <= 6:
            return int.from_bytes(raw, "big", signed=True)
        if kind == 7:
            return struct.unpack(">d", raw)[0]
        if kind % 2 == 0:
            return raw
        try:
            return raw.decode(self.encoding)
        except UnicodeDecodeError:
            return MISSING

    def close(self) -> None:
        self._db.close()
        if self._wal_file is not None:
            self._wal_file.close()

    def __enter__(self) -> PageFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _value_length(kind: int) -> int:
    """Bytes a value of this serial type takes in the record body (-1: not a valid type)."""
    if kind < 12:
        return (0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1)[kind]
    return (kind - 12) // 2 if kind % 2 == 0 else (kind - 13) // 2
