"""Reading without ranking: a page of the list (filters, sorting, keyword search) and one
memory in full (SPEC section 2, list_memories and get_memory)."""

from __future__ import annotations

from dataclasses import replace

from tinycontext.domain import listing
from tinycontext.domain.errors import MemoryNotFoundError
from tinycontext.domain.filters import build_filter
from tinycontext.domain.labels import MemoryFilter, live_at
from tinycontext.domain.memory import Memory, check_session_id, ref_of

from .core import Core
from .results import ListedItem, ListPage, MemoryDetail, metadata_of


def listed(m: Memory, rank: int) -> ListedItem:
    """A memory as a list entry: its content as a preview."""
    text, cut = listing.preview(m.content)
    return ListedItem(
        rank=rank, id=m.id, ref=m.ref, session_id=m.session_id, kind=m.kind,
        content=text, preview_truncated=cut, content_tokens=m.content_tokens,
        created_at=m.created_at, recall_count=m.recall_count,
        last_recalled_at=m.last_recalled_at, tags=m.tags, metadata=metadata_of(m.metadata),
    )


def list_page(
    core: Core,
    session_id: str | None,
    kind: str | None,
    since: str | None,
    until: str | None,
    limit: int | None,
    offset: int | None,
    sort: str | None,
    search: str | None,
    filters: MemoryFilter | None = None,
) -> ListPage:
    query = listing.build_list_query(
        check_session_id(session_id), kind, since, until, limit, offset, sort, search
    )
    if filters:
        query = replace(query, filters=filters)
    core.check_session(query.session_id)
    page = core.store.browse(query)
    entries = [listed(hit.memory, position)
               for position, hit in enumerate(page.memories, start=query.offset + 1)]
    return ListPage(
        memories=tuple(entries), total_count=page.total_count, returned_count=len(entries),
        has_more=query.offset + len(entries) < page.total_count, limit=query.limit,
        offset=query.offset, sort=query.sort, current_time=core.now(),
    )


def detail(core: Core, memory_id: object, as_of: object = None) -> MemoryDetail:
    """One memory in full (superseded ones too), with its lifecycle; not counted as a recall.
    With `as_of`, the version of it (older or newer) that was current then."""
    m = core.resolve(memory_id)
    moment = build_filter(as_of=as_of).as_of
    if moment is not None:
        m = version_at(core, m, moment)
    return MemoryDetail(
        id=m.id, ref=m.ref, session_id=m.session_id, kind=m.kind, content=m.content,
        content_tokens=m.content_tokens, created_at=m.created_at,
        recall_count=m.recall_count, last_recalled_at=m.last_recalled_at,
        superseded_by=ref_of(m.superseded_by) if m.superseded_by else None,
        superseded_at=m.superseded_at,
        supersedes=ref_of(m.supersedes) if m.supersedes else None,
        current_time=core.now(), tags=m.tags, metadata=dict(m.metadata),
    )


def version_at(core: Core, memory: Memory, as_of: str) -> Memory:
    """The version in `memory`'s supersede chain that was live at `as_of`."""
    seen = {memory.id}
    current: Memory | None = memory
    step = "supersedes" if memory.created_at > as_of else "superseded_by"
    while current is not None:
        if live_at(current.created_at, current.superseded_at,
                   current.superseded_by is not None, as_of):
            return current
        link = getattr(current, step)
        found = core.store.find(link, is_ref=False) if link and link not in seen else []
        current = found[0] if found else None
        if current is not None:
            seen.add(current.id)
    raise MemoryNotFoundError(
        f"Memory {memory.ref} had no version current at {as_of} (it was saved later, or "
        "its versions of then were deleted); get_memory without as_of shows it now."
    )
