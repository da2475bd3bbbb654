"""Builders for Store contract tests: memories with predictable ids and HashEmbedder vectors."""

from __future__ import annotations

from dataclasses import replace

from tests.fakes import HashEmbedder
from tinycontext.domain.listing import build_list_query
from tinycontext.domain.memory import Memory
from tinycontext.ports.store import NewMemory

EMBEDDER = HashEmbedder()
KEY = EMBEDDER.model_key
T0 = "2026-07-01T00:00:00Z"


def mid(n: int, prefix: str | None = None) -> str:
    """A uuid-shaped id; ids sharing `prefix` (12 hex) share their ref."""
    head = prefix or f"{n:012x}"
    return f"{head[:8]}-{head[8:12]}-4000-8000-{n:012x}"


def mem(n: int, content: str, *, kind: str = "episodic", session: str | None = None,
        created: str = T0, key: str | None = KEY, prefix: str | None = None, **kw) -> Memory:
    return Memory(mid(n, prefix), content, kind, session, created, len(content.split()),
                  embedding_model=key, **kw)


def new(memory: Memory, vector: bool = True, embedder: HashEmbedder = EMBEDDER) -> NewMemory:
    if not vector:
        return NewMemory(replace(memory, embedding_model=None), None)
    return NewMemory(memory, embedder.embed([memory.content])[0])


def vec(text: str, embedder: HashEmbedder = EMBEDDER) -> bytes:
    return embedder.embed([text])[0]


def listing(**kw):
    args = dict(session_id=None, kind=None, since=None, until=None, limit=None, offset=None,
                sort=None, search=None)
    args.update(kw)
    return build_list_query(**args)


def day(d: int, hour: int = 0) -> str:
    return f"2026-07-{d:02d}T{hour:02d}:00:00Z"
