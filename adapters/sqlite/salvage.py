"""Every readable memory of a damaged SQLite store, as export JSON Lines (`export --salvage`).

The memories table is walked from its root page as SQLite would, but past any page that
cannot be read (sqlite_pages.py). Table pages cut off by a broken interior page are then
found by scanning the file; their rows are kept only when an index of the table still lists
them with the same values, because free pages keep the rows of deleted memories and a deleted
memory must not come back. Supersede links to memories that could not be read are bridged
(the older readable version is linked to the newer one, as a delete does) or dropped, so
the newest readable version is live and the output imports into a fresh store.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from tinycontext.domain.chains import Links, mend_links
from tinycontext.domain.memory import Memory
from tinycontext.domain.records import parse_record, record

from .pages import (
    INDEX_INTERIOR,
    INDEX_LEAF,
    MISSING,
    TABLE_INTERIOR,
    TABLE_LEAF,
    PageFile,
)

# The memories table as every schema version lays it out (later versions only append).
COLUMNS = ("seq", "id", "ref", "content", "kind", "session_id", "created_at", "content_tokens",
           "recall_count", "last_recalled_at", "superseded_by", "superseded_at", "supersedes",
           "embedding", "embedding_model", "context_id")
# Root pages of the table and of its id index in every store made by sqlite_schema.py (the
# first two objects it creates); used only when the schema page itself is unreadable.
DEFAULT_ROOTS = (2, 3)
REQUIRED_TEXT = ("id", "content", "kind", "created_at")
OPTIONAL_TEXT = ("session_id", "last_recalled_at", "superseded_by", "superseded_at",
                 "supersedes")
MEMORY_FIELDS = ("id", "content", "kind", "session_id", "created_at", "content_tokens",
                 "recall_count", "last_recalled_at", "superseded_by", "superseded_at",
                 "supersedes")
MIN_MEMORY_COLUMNS = 13  # the first schema's columns; other tables of the store have fewer
PROGRESS_SECONDS = 1.0
ALL_KINDS = (TABLE_INTERIOR, TABLE_LEAF, INDEX_INTERIOR, INDEX_LEAF)

__all__ = ["SalvageReport", "salvage_jsonl"]


@dataclass
class SalvageReport:
    memories: int = 0  # written
    pages: int = 0  # pages in the database
    bad_pages: int = 0  # pages of the memories table that could not be read
    bad_rows: int = 0  # rows found but not readable as a memory
    unconfirmed: int = 0  # rows outside the table's tree that no index lists as live
    lost: int = 0  # memories an index lists that could not be read (at least this many)
    links_fixed: int = 0  # supersede links bridged over or dropped for unreadable memories
    without_embedding: int = 0  # content read but not the vector: import re-embeds


class _Progress:
    def __init__(self, report: Callable[[str], None] | None) -> None:
        self._report, self._last = report, time.monotonic()

    def __call__(self, template: str, *values: int) -> None:
        if self._report is not None and time.monotonic() - self._last >= PROGRESS_SECONDS:
            self._last = time.monotonic()
            self._report(template.format(*values))


def _walk(pages: PageFile, root: int, owned: set[int],
          kinds: tuple[int, ...] = (TABLE_INTERIOR, TABLE_LEAF)) -> tuple[list[int], int]:
    """Leaf pages of the b-tree at `root` in key order, and how many of its pages were bad."""
    leaves: list[int] = []
    bad, stack = 0, [root]
    while stack:
        number = stack.pop()
        page = pages.btree_page(number) if number not in owned else None
        if page is None or page.kind not in kinds:
            bad += 1  # unreadable, not a page of this tree, or a loop back to a page seen
            continue
        owned.add(number)
        if page.interior:
            stack.extend(reversed(pages.children(page)))
        else:
            leaves.append(number)
    return leaves, bad


def _rows(pages: PageFile, root: int) -> Iterator[list[Any]]:
    for number in _walk(pages, root, set())[0]:
        page = pages.btree_page(number)
        if page is not None and page.kind == TABLE_LEAF:
            yield from (v for _, v in pages.table_rows(page) if v is not None)


def _columns(sql: Any) -> tuple[str, ...]:
    """Column names of a CREATE TABLE statement (ALTER TABLE ADD COLUMN rewrites it)."""
    if not isinstance(sql, str) or "(" not in sql:
        return COLUMNS
    body, depth, parts, start = sql[sql.index("(") + 1:sql.rindex(")")], 0, [], 0
    for i, char in enumerate(body + ","):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(body[start:i].split())
            start = i + 1
    names = tuple(p[0].strip('"`[]') for p in parts if p)
    return names if "id" in names and "content" in names else COLUMNS


def _free_pages(pages: PageFile) -> set[int] | None:
    """Every page on the free list, or None when the list cannot be read completely."""
    if pages.freelist is None:
        return None
    trunk, expected = pages.freelist
    free: set[int] = set()
    while trunk:
        data = pages.page(trunk) if trunk not in free else None
        count = int.from_bytes(data[4:8], "big") if data else -1
        if data is None or not 0 <= count <= pages.usable // 4 - 2:
            return None
        free.add(trunk)
        free.update(int.from_bytes(data[8 + 4 * i:12 + 4 * i], "big") for i in range(count))
        trunk = int.from_bytes(data[:4], "big")
    return free if len(free) == expected else None


def _index_columns(entry: list[Any]) -> tuple[str, ...] | None:
    """The memories columns an index of the schema keys on (its rows end with the seq)."""
    if entry[1] == "sqlite_autoindex_memories_1":
        return ("id",)  # the UNIQUE constraint on id
    sql = entry[4] if isinstance(entry[4], str) else ""
    if "(" not in sql:
        return None
    names = sql[sql.index("(") + 1:sql.index(")")].split(",")
    return tuple(n.split()[0].strip('"`[]') for n in names if n.split()) or None


class _Reader:
    """The memories of one store file: where they are, which to trust, how to read them."""

    def __init__(self, pages: PageFile, session_id: str | None, report: SalvageReport,
                 progress: _Progress) -> None:
        self.pages, self.session, self.report, self.progress = pages, session_id, report, progress
        schema = {r[1]: r for r in _rows(pages, 1) if len(r) >= 5 and isinstance(r[1], str)}
        table = schema.get("memories")
        self.columns = _columns(table[4] if table else None)
        root = table[3] if table and isinstance(table[3], int) else DEFAULT_ROOTS[0]
        owned: set[int] = set()
        self.leaves, report.bad_pages = _walk(pages, root, owned)
        self.trusted = set(self.leaves)
        # Per index of the table: its columns and the keys it holds (hashed, to stay small).
        self.indexes: list[tuple[tuple[str, ...], set[int]]] = []
        self.listed: set[int] = set()  # every seq some index lists: the live memories
        if not report.bad_pages:
            return
        # Look for the table pages that the broken ones hid: pages of no other tree and not
        # free. Keep only rows that an index of the table lists with the same values.
        for other in schema.values():
            if isinstance(other[3], int) and other[3] not in (0, root):
                _walk(pages, other[3], owned, ALL_KINDS)
        found = [(cols, e[3]) for e in schema.values() if e[0] == "index" and e[2] == "memories"
                 and isinstance(e[3], int) and (cols := _index_columns(e))]
        for columns, index_root in found or [(("id",), DEFAULT_ROOTS[1])]:
            self.indexes.append((columns, self._index_keys(index_root, len(columns) + 1)))
        free = _free_pages(pages) or set()
        self.leaves += [n for n in range(1, pages.pages + 1)
                        if n not in owned and n not in free and self._is_table_leaf(n)]
        self.leaves.sort(key=self._first_seq)  # oldest first, as export writes them

    def _first_seq(self, number: int) -> int:
        page = self.pages.btree_page(number)
        first = next(self.pages.table_rows(page), None) if page is not None else None
        return first[0] if first is not None and first[1] is not None else 1 << 63

    def _is_table_leaf(self, number: int) -> bool:
        page = self.pages.btree_page(number)
        return page is not None and page.kind == TABLE_LEAF

    def _index_keys(self, root: int, width: int) -> set[int]:
        """Hashes of the keys (values..., seq) of an index (interior cells hold keys too)."""
        keys: set[int] = set()
        stack, seen = [root], set()
        while stack:
            number = stack.pop()
            page = self.pages.btree_page(number) if number not in seen else None
            if page is None or page.kind not in (INDEX_INTERIOR, INDEX_LEAF):
                continue
            seen.add(number)
            for key in self.pages.index_keys(page):
                if key and len(key) == width and type(key[-1]) is int:
                    keys.add(hash(tuple(key)))
                    self.listed.add(key[-1])
            if page.interior:
                stack.extend(self.pages.children(page))
        return keys

    def _confirmed(self, memory: Memory, seq: int) -> bool:
        """Whether an index lists this row as it is: free pages keep deleted rows, and the
        seq of the newest memory is reused after it is deleted, so the seq alone is not proof."""
        values = {f: getattr(memory, f) for f in MEMORY_FIELDS}
        return any(
            hash((*(values.get(c, memory.ref if c == "ref" else None) for c in columns), seq))
            in keys for columns, keys in self.indexes
        )

    def memories(self, first: bool = True) -> Iterator[tuple[int, Memory, bytes | None]]:
        """(seq, memory, vector) of every trustworthy row, each seq once. The first pass
        checks each row as import would and counts the rest; a second one reads the same."""
        seen: set[int] = set()
        tally = self.report if first else SalvageReport()
        for done, number in enumerate(self.leaves, start=1):
            self.progress("read {} of {} table pages...", done, len(self.leaves))
            page = self.pages.btree_page(number)
            if page is None:
                continue
            trusted = number in self.trusted
            for seq, values in self.pages.table_rows(page):
                if seq in seen:
                    continue
                if not trusted and (values is None or len(values) < MIN_MEMORY_COLUMNS):
                    continue  # a row of some other table, or not a row at all
                row = self._memory(values, tally, check=first)
                if row is None:
                    tally.bad_rows += 1
                    continue
                memory, vector = row
                if not trusted and not self._confirmed(memory, seq):
                    tally.unconfirmed += 1
                    continue
                seen.add(seq)
                if self.session is None or memory.session_id == self.session:
                    yield seq, memory, vector

    def _memory(self, values: list[Any] | None, tally: SalvageReport,
                check: bool) -> tuple[Memory, bytes | None] | None:
        if values is None:
            return None
        row = dict(zip(self.columns, values, strict=False))
        if any(not isinstance(row.get(k), str) for k in REQUIRED_TEXT) or any(
            row.get(k) is not None and not isinstance(row.get(k), str) for k in OPTIONAL_TEXT
        ) or any(type(row.get(k)) is not int for k in ("content_tokens", "recall_count")):
            return None
        vector, model = row.get("embedding"), row.get("embedding_model")
        if vector is MISSING or model is MISSING or not isinstance(vector, bytes | None):
            vector, model = None, None
            tally.without_embedding += 1
        fields: dict[str, Any] = {k: row.get(k) for k in MEMORY_FIELDS}
        memory = Memory(**fields, embedding_model=model if vector is not None else None)
        try:  # exactly what import accepts, or the row is not worth writing
            if check:
                parse_record(json.dumps(record(memory, vector)))
        except (ValueError, TypeError):
            return None
        return memory, vector


def salvage_jsonl(
    path: Path, out: IO[str], session_id: str | None = None, with_embeddings: bool = True,
    progress: Callable[[str], None] | None = None,
) -> SalvageReport:
    """Write every readable memory of the store at `path` (or one session's) as export JSON
    Lines, oldest first; UnreadableFileError when the file holds no SQLite pages at all."""
    report = SalvageReport()
    if path.stat().st_size == 0 and not Path(f"{path}-wal").exists():
        return report  # created but never written: nothing to save
    with PageFile(path) as pages:
        report.pages = pages.pages
        tick = _Progress(progress)
        reader = _Reader(pages, session_id, report, tick)
        ids: dict[str, int] = {}
        links: dict[str, Links] = {}
        for seq, memory, _ in reader.memories():
            if memory.id in ids:
                continue  # the same id twice (only in a damaged file): the first one wins
            ids[memory.id] = seq
            if memory.superseded_by or memory.supersedes:
                links[memory.id] = Links(memory.superseded_by, memory.supersedes)
        if reader.listed and session_id is None:
            report.lost = len(reader.listed - set(ids.values()))
        report.links_fixed = mend_links(links, ids)
        for seq, memory, vector in reader.memories(first=False):
            if ids.get(memory.id) != seq:
                continue
            own = links.get(memory.id)
            if own is not None and own != Links(memory.superseded_by, memory.supersedes):
                memory = replace(
                    memory, superseded_by=own.superseded_by, supersedes=own.supersedes,
                    superseded_at=memory.superseded_at if own.superseded_by else None)
            out.write(json.dumps(record(memory, vector, with_embeddings), ensure_ascii=False)
                      + "\n")
            report.memories += 1
            tick("wrote {} of {} memories...", report.memories, len(ids))
    return report
