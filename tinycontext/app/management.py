"""Management views (SPEC section 8, contract `tinysuite.manage/1`): the JSON documents.

Each view is a plain function over the caller's own MemoryService, so it reads exactly what
the six operations read; edits and deletes stay with the ordinary tools. The MCP wiring and
the access rules live in management_mcp. Shapes are documented in docs/guides/hosted.md.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from tinycontext.app.results import ListedItem
from tinycontext.app.service import MemoryService
from tinycontext.domain.errors import InvalidRequestError
from tinycontext.domain.limits import MAX_INTEGER

CONTRACT = "tinysuite.manage/1"
MEDIA_TYPE = "application/vnd.tinysuite.manage+json"
BASE = "tinycontext://manage"
MANIFEST_URI = f"{BASE}/manifest"
MEMORIES_URI = f"{BASE}/memories"
MEMORIES_TEMPLATE = MEMORIES_URI + "{?page,page_size,search,kind,order,session,tags}"
DETAIL_TEMPLATE = MEMORIES_URI + "/{memory_id}"
OVERVIEW_URI = f"{BASE}/overview"
SERVICE_URI = f"{BASE}/service"
DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 25, 200
SQLITE_COMPANIONS = ("", "-wal", "-shm")

COLUMNS = [
    {"key": "ref", "title": "Ref", "type": "string"},
    {"key": "content", "title": "Content", "type": "text", "truncated_flag": "preview_truncated"},
    {"key": "kind", "title": "Type", "type": "enum", "values": ["episodic", "profile"]},
    {"key": "session_id", "title": "Session", "type": "string", "nullable": True},
    {"key": "created_at", "title": "Created", "type": "datetime"},
    {"key": "recall_count", "title": "Recalled", "type": "integer"},
    {"key": "last_recalled_at", "title": "Last recalled", "type": "datetime", "nullable": True},
    {"key": "content_tokens", "title": "Tokens", "type": "integer"},
    {"key": "tags", "title": "Tags", "type": "list", "nullable": True},
]
ACTIONS = [
    {"id": "edit", "title": "Edit", "tool": "update_memory",
     "arguments": {"memory_id": "{id}", "content": "{input:content}"}},
    {"id": "delete", "title": "Delete", "tool": "delete_memory",
     "arguments": {"memory_id": "{id}"}, "destructive": True},
]


@dataclass(frozen=True)
class Management:
    """Management views switched on, with what the Service view reports."""

    hosted: bool = False
    # Operator facts: store count, disk use, open stores (None: the service's own file).
    storage: Callable[[], dict[str, Any]] | None = field(default=None, repr=False)


# -- parameters --------------------------------------------------------------------------
def _whole(value: str | None, name: str, default: int, low: int, high: int) -> int:
    if value is None or value == "":
        return default
    # ASCII digits only: str.isdigit() also takes superscripts, which int() refuses.
    if not (value.isascii() and value.isdigit()):
        raise InvalidRequestError(f"{name} must be a whole number, got {value[:20]!r}.")
    # More digits than any 64-bit number: out of range without converting (and printing) it.
    number = int(value) if len(value) <= len(str(MAX_INTEGER)) else MAX_INTEGER + 1
    if number < low or number > high:
        shown = str(number) if number <= MAX_INTEGER else f"a {len(value)}-digit number"
        raise InvalidRequestError(f"{name} must be between {low} and {high}, got {shown}.")
    return number


def _text(value: str | None) -> str | None:
    return value if value not in (None, "") else None


def _row(entry: ListedItem) -> dict[str, Any]:
    return {**entry.to_dict(), "detail": f"{MEMORIES_URI}/{entry.id}"}


def _page_uri(query: dict[str, Any], page: int) -> str:
    params = {k: v for k, v in {**query, "page": page}.items() if v is not None}
    return f"{MEMORIES_URI}?{urlencode(params)}"


# -- views -------------------------------------------------------------------------------
def memories_view(
    service: MemoryService,
    page: str | None = None,
    page_size: str | None = None,
    search: str | None = None,
    kind: str | None = None,
    order: str | None = None,
    session: str | None = None,
    tags: str | None = None,
) -> dict[str, Any]:
    """A page of live memories: keyword search best match first, kind, order and tag
    filters (`tags`: comma-separated, every one must be present)."""
    size = _whole(page_size, "page_size", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
    # The last page whose offset still fits in 64 bits.
    number = _whole(page, "page", 1, 1, MAX_INTEGER // size)
    search, kind, order, session = _text(search), _text(kind), _text(order), _text(session)
    tags = _text(tags)
    listed = service.list_page(
        session_id=session, kind=kind, limit=size, offset=(number - 1) * size, sort=order,
        search=search, tags=[t for t in tags.split(",") if t.strip()] if tags else None,
    )
    query = {"page_size": size, "search": search, "kind": kind, "order": listed.sort,
             "session": session, "tags": tags}
    total = listed.total_count
    pages = max(1, math.ceil(total / size))
    result: dict[str, Any] = {
        "contract": CONTRACT, "view": "memories",
        "query": {"page": number, **query},
        "page": {
            "number": number, "size": size, "total_count": total, "page_count": pages,
            "returned_count": listed.returned_count, "has_more": listed.has_more,
            "next": _page_uri(query, number + 1) if listed.has_more else None,
            "previous": _page_uri(query, min(number - 1, pages)) if number > 1 else None,
        },
        "rows": [_row(entry) for entry in listed.memories],
        "current_time": listed.current_time,
    }
    if listed.notice:
        result["notice"] = listed.notice
    return result


def memory_detail_view(service: MemoryService, memory_id: str) -> dict[str, Any]:
    """One memory in full (superseded ones too), with its lifecycle; not counted as a recall."""
    memory = service.detail(memory_id).to_dict()
    return {"contract": CONTRACT, "view": "memory", "memory": memory, "actions": ACTIONS}


def overview_view(service: MemoryService) -> dict[str, Any]:
    """Counts by kind, never-recalled memories and the time span of the caller's store."""
    facts = service.overview()
    examples = [
        {"id": m.id, "ref": m.ref, "content": m.content, "preview_truncated": m.preview_truncated,
         "created_at": m.created_at, "session_id": m.session_id}
        for m in facts.never_recalled_examples
    ]
    return {
        "contract": CONTRACT, "view": "overview",
        "counts": {"total": facts.total, "by_kind": facts.by_kind.to_dict()},
        "never_recalled": {"kind": "episodic", "count": facts.never_recalled,
                           "examples": examples},
        "time_bounds": {"oldest": facts.oldest, "newest": facts.newest},
        "current_time": facts.current_time,
    }


def single_store_facts(path: Path) -> dict[str, Any]:
    """Store count and disk use of a single-user SQLite file and its WAL companions."""
    size = 0
    for suffix in SQLITE_COMPANIONS:
        try:
            size += os.stat(f"{path}{suffix}").st_size
        except FileNotFoundError:
            continue
    return {"store_count": 1 if path.exists() else 0, "disk_bytes": size}


def service_view(service: MemoryService, management: Management) -> dict[str, Any]:
    """Operators only: store count, disk use and the embedding setup."""
    from tinycontext.version import __version__

    config = service.config
    if management.storage is not None:
        stores = management.storage()
    elif config.store_url:
        stores = {"store_count": 1, "disk_bytes": None, "backend": "postgresql"}
    else:
        stores = single_store_facts(Path(config.memory_db_path))
    return {
        "contract": CONTRACT, "view": "service", "version": __version__,
        "mode": "hosted" if management.hosted else "single-user",
        "stores": stores,
        "embedding": {
            "model": config.embedding_model, "model_key": service.model_key,
            "dimensions": service.embedder.dimensions,
            "batch_size": config.embedding_batch_size,
            "query_prefix": bool(config.dense_query_prefix),
            "document_prefix": bool(config.dense_document_prefix),
        },
        "tokens": {"encoding": config.token_encoding},
        "recall_defaults": {"top_k": config.recall_top_k, "max_tokens": config.recall_max_tokens},
    }
