"""Everything the web pages read or change, and the ONLY module of the web family that calls
the MemoryService: when the service's result shapes change, this is the one place to adapt.

Writes go through the service's own operations (update_memory, delete_memory), so the pages
follow the same rules and raise the same error codes as MCP and REST.
"""

from __future__ import annotations

import json
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tinycontext.app.management import single_store_facts
from tinycontext.app.service import MemoryService
from tinycontext.domain.filters import build_filter
from tinycontext.domain.listing import ListQuery, build_list_query, preview
from tinycontext.domain.records import record

PAGE_SIZE = 50
CHAIN_LIMIT = 20  # versions shown each way; longer histories say "and older"
CHART_MONTHS = 12
SESSIONS_SHOWN = 50
OVERVIEW_TTL = 30.0  # seconds: overview counts are cached (see overview)
_cache_lock = threading.Lock()


def split_tags(text: str | None) -> list[str] | None:
    """Tags as a person types them in one field: separated by commas or spaces."""
    if text is None:
        return None
    return [t for t in text.replace(",", " ").split() if t]


def memories_page(
    service: MemoryService, *, session: str | None, kind: str | None, since: str | None,
    until: str | None, sort: str | None, search: str | None, superseded: bool, page: int,
    tags: str | None = None, as_of: str | None = None,
) -> dict[str, Any]:
    """One page of the Memories table: the page's own rows only (LIMIT/OFFSET over an index,
    one row more to know whether a next page exists); the total is counted separately and
    cached (a count reads every matching row). `tags` (all of them) and `as_of` (the
    versions current then) filter as list_memories does."""
    offset = (page - 1) * PAGE_SIZE
    query = build_list_query(session, kind, since, until, PAGE_SIZE + 1, offset,
                             "stale" if sort == "recalled" else sort, search)
    filters = build_filter(tags=split_tags(tags), as_of=as_of)
    query = replace(query, superseded=superseded and not filters.as_of, count=False,
                    sort="recalled" if sort == "recalled" else query.sort,
                    filters=filters or None)
    found = service.browse(query).memories  # session_not_found as list_memories says it
    rows = [_entry(hit.memory) for hit in found[:PAGE_SIZE]]
    total = _count(service, replace(query, limit=0, offset=0, count=True, sort="recent"))
    pages = max(1, -(-total // PAGE_SIZE))
    return {"rows": rows, "total": total, "page": page, "pages": pages, "sort": query.sort,
            "has_more": len(found) > PAGE_SIZE}


# Per service object (weakly: a closed store's entries go with it, so a new service that
# happens to reuse its address in memory, e.g. another hosted user's, never sees them).
_totals: weakref.WeakKeyDictionary[MemoryService, dict[ListQuery, tuple[float, int]]] = (
    weakref.WeakKeyDictionary())


def _count(service: MemoryService, query: ListQuery) -> int:
    """How many memories match, cached OVERVIEW_TTL seconds per store and filter (dropped
    after a change made here), so paging and re-sorting never count again."""
    with _cache_lock:
        hit = _totals.get(service, {}).get(query)
    if hit is not None and time.monotonic() - hit[0] < OVERVIEW_TTL:
        return hit[1]
    total = service.browse(query).total_count
    with _cache_lock:
        known = _totals.setdefault(service, {})
        if len(known) > 256:
            known.clear()
        known[query] = (time.monotonic(), total)
    return total


def _entry(m: Any) -> dict[str, Any]:
    text, cut = preview(m.content)
    return {"id": m.id, "ref": m.ref, "session_id": m.session_id, "kind": m.kind,
            "content": text, "preview_truncated": cut, "content_tokens": m.content_tokens,
            "created_at": m.created_at, "recall_count": m.recall_count,
            "last_recalled_at": m.last_recalled_at, "superseded": m.superseded_by is not None,
            "tags": list(m.tags)}


def ask(service: MemoryService, question: str, session: str | None, top_k: int | None,
        max_tokens: int | None) -> dict[str, Any]:
    """What recall_memories would return (not counted as a recall), plus what the token
    budget left out: the same ranking again with room for every ranked memory, so the page
    can draw the budget line where the real answer stopped."""
    answer = service.recall(question, session, max_tokens, top_k, count=False).to_dict()
    budget = max_tokens or service.config.recall_max_tokens
    shown = answer["memories"]
    if answer["truncated"] and answer.get("mode") == "semantic":
        unbudgeted = service.recall(question, session, 2**31 - 1, top_k, count=False).to_dict()
        shown = unbudgeted["memories"]
    chosen = {m["id"] for m in answer["memories"]}
    return {**answer, "budget": budget, "ranked": shown, "chosen": chosen,
            "top_k": top_k or (service.config.recall_top_k if answer.get("mode") == "semantic"
                               else None)}


def detail(service: MemoryService, memory_id: str, as_of: str | None = None) -> dict[str, Any]:
    """One memory in full, its older and newer versions, and what deleting it would do;
    with `as_of`, the version of it that was current then."""
    memory = service.detail(memory_id, as_of).to_dict()
    older: list[dict[str, Any]] = []
    newer: list[dict[str, Any]] = []
    step = memory
    while step.get("supersedes") and len(older) < CHAIN_LIMIT:
        step = service.detail(step["supersedes"]).to_dict()
        older.append(step)
    step = memory
    while step.get("superseded_by") and len(newer) < CHAIN_LIMIT:
        step = service.detail(step["superseded_by"]).to_dict()
        newer.append(step)
    # Deleting the live end of a chain makes the version it replaced live again; deleting
    # an older version only joins its neighbours.
    restores = older[0] if older and not memory.get("superseded_by") else None
    return {"memory": memory, "older": older, "newer": list(reversed(newer)),
            "older_cut": bool(older) and bool(older[-1].get("supersedes")),
            "restores": restores}


def update(service: MemoryService, memory_id: str, content: str,
           tags: str | None = None) -> dict[str, Any]:
    """A new version with `content` and the tags typed in (None: the old tags)."""
    _forget_overview(service)
    return service.update(memory_id, content, split_tags(tags) if tags is not None
                          else None).to_dict()


def delete(service: MemoryService, memory_id: str) -> dict[str, Any]:
    _forget_overview(service)
    return service.delete(memory_id).to_dict()


def check_session(service: MemoryService, session: str | None) -> None:
    """session_not_found (the service's own check) before an export starts streaming."""
    if session is not None:
        service.list_page(session_id=session, limit=1)


def export_lines(service: MemoryService, session: str | None,
                 embeddings: bool) -> Iterator[bytes]:
    """The CLI's JSON Lines export (tinycontext/app/transfer.py), a page at a time."""
    for memory, vector in service.export_records(session):
        line = json.dumps(record(memory, vector, embeddings), ensure_ascii=False) + "\n"
        yield line.encode()


# -- overview ------------------------------------------------------------------------------
_cache: weakref.WeakKeyDictionary[MemoryService, tuple[float, dict[str, Any]]] = (
    weakref.WeakKeyDictionary())
_sessions: weakref.WeakKeyDictionary[MemoryService, tuple[float, list[tuple[str, int]]]] = (
    weakref.WeakKeyDictionary())


def _forget_overview(service: MemoryService) -> None:
    with _cache_lock:
        _cache.pop(service, None)
        _totals.pop(service, None)
        _sessions.pop(service, None)


def overview(service: MemoryService, operator: bool,
             now: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    """The service's overview (counts, never and most recalled memories), a chart of memories
    saved per month, the model and re-embedding progress. The overview and the chart count
    over the store, so they are cached for OVERVIEW_TTL seconds per store (and dropped after
    a change made here)."""
    with _cache_lock:
        hit = _cache.get(service)
    if hit is not None and now() - hit[0] < OVERVIEW_TTL:
        counts = hit[1]
    else:
        counts = _counts(service)
        with _cache_lock:
            _cache[service] = (now(), counts)
    config = service.config
    reindexer = service.reindexer
    result = {
        **counts,
        "model": config.embedding_model, "model_key": service.model_key,
        "reindex": {"running": reindexer.running, "done": reindexer.done,
                    "total": reindexer.total, "notice": reindexer.notice()},
        "store": None,
    }
    if operator and not config.store_url:
        path = Path(config.memory_db_path)
        result["store"] = {"path": str(path), **single_store_facts(path)}
    return result


def _total(service: MemoryService, kind: str, since: str, until: str) -> int:
    query = build_list_query(None, kind, since, until, 1, 0, "recent", None)
    # limit 0: only the count (a row query could walk far for an old month).
    return service.browse(replace(query, limit=0)).total_count


def _counts(service: MemoryService) -> dict[str, Any]:
    """The overview's facts and the chart: counts by month and kind, on SQLite each read
    from a partial index only."""
    facts = service.overview()
    months: list[dict[str, Any]] = []
    if facts.newest is not None:
        stamp = facts.newest
        last = int(stamp[:4]) * 12 + int(stamp[5:7]) - 1
        for index in range(last - CHART_MONTHS + 1, last + 1):
            year, month = divmod(index, 12)
            after_year, after_month = divmod(index + 1, 12)
            since = f"{year:04d}-{month + 1:02d}-01T00:00:00Z"
            end = datetime(after_year, after_month + 1, 1, tzinfo=UTC) - timedelta(seconds=1)
            until = end.strftime("%Y-%m-%dT%H:%M:%SZ")
            count = sum(_total(service, kind, since, until) for kind in ("episodic", "profile"))
            months.append({"month": since[:7], "count": count})
    while len(months) > 1 and months[0]["count"] == 0:  # a young store: from its first month
        months.pop(0)
    peak = max((m["count"] for m in months), default=0)
    for item in months:
        item["percent"] = round(100 * item["count"] / peak) if peak else 0
    return {"by_kind": facts.by_kind.to_dict(), "total": facts.total, "months": months,
            "never_count": facts.never_recalled, "sessions": sessions(service),
            "never_recalled": facts.never_recalled_examples,
            "most_recalled": facts.most_recalled_examples}


def sessions(service: MemoryService) -> list[tuple[str, int]]:
    """The largest sessions with their live memory counts (empty where the store cannot tell:
    the pages then show none); cached like the overview's counts."""
    with _cache_lock:
        hit = _sessions.get(service)
    if hit is not None and time.monotonic() - hit[0] < OVERVIEW_TTL:
        return hit[1]
    found = service.session_counts(SESSIONS_SHOWN)
    with _cache_lock:
        _sessions[service] = (time.monotonic(), found)
    return found
