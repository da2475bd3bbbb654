"""Real SQLite stores (fake embedder) and ways to damage chosen pages of their files."""

from __future__ import annotations

import os
from pathlib import Path

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite.driver import sqlite_module
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service


def open_service(path: Path) -> MemoryService:
    return build_service(TinyContextConfig(memory_db_path=str(path)), store=SqliteStore(path),
                         embedder=HashEmbedder(), tokenizer=WordTokenizer(),
                         clock=FixedClock(), background=False)


def fact(i: int, words: int = 40) -> str:
    """A memory text with a marker found nowhere else in the table's pages."""
    return f"Fact #{i:04d}# " + " ".join(f"word{(i * 7 + k) % 211}" for k in range(words))


def build_store(path: Path, count: int, words: int = 40) -> list[str]:
    """A store of `count` memories over several table pages; returns their ids in order."""
    service = open_service(path)
    try:
        saved = service.save([{"content": fact(i, words)} for i in range(count)], "s").to_dict()
    finally:
        service.close()
    return [m["id"] for m in saved["saved"]]


def page_size(path: Path) -> int:
    size = int.from_bytes(path.read_bytes()[16:18], "big")
    return 65536 if size == 1 else size


def table_pages(path: Path, kind: str = "leaf") -> list[int]:
    """Pages of the memories table (SQLite's dbstat), before any damage."""
    conn = sqlite_module().connect(str(path))
    try:
        return [r[0] for r in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = 'memories' AND pagetype = ?", (kind,))]
    finally:
        conn.close()


def root_page(path: Path, name: str) -> int:
    conn = sqlite_module().connect(str(path))
    try:
        return int(conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                                (name,)).fetchone()[0])
    finally:
        conn.close()


def leaf_holding(path: Path, needle: str) -> tuple[int, bytes]:
    """The table leaf page whose rows hold `needle` (a content marker), and its bytes."""
    size, data = page_size(path), path.read_bytes()
    for number in table_pages(path):
        page = data[(number - 1) * size:number * size]
        if needle.encode() in page:
            return number, page
    raise AssertionError(f"{needle!r} is on no leaf page of the memories table")


def smash(path: Path, *pages: int, zero: bool = False) -> None:
    """Overwrite whole pages with random bytes (or zeros)."""
    size = page_size(path)
    with path.open("r+b") as f:
        for number in pages:
            f.seek((number - 1) * size)
            f.write(bytes(size) if zero else os.urandom(size))
