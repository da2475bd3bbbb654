"""Reading without ranking: a page of the list (filters, sorting, keyword search) and one
memory in full (SPEC section 2, list_memories and get_memory)."""

from __future__ import annotations

from tinycontext.domain import listing
from tinycontext.domain.memory import check_session_id, ref_of

from .core import Core
from .results import ListedItem, ListPage, MemoryDetail


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
) -> ListPage:
    query = listing.build_list_query(
        check_session_id(session_id), kind, since, until, limit, offset, sort, search
    )
    core.check_session(query.session_id)
    page = core.store.browse(query)
    entries = []
    for position, hit in enumerate(page.memories, start=query.offset + 1):
        m = hit.memory
        text, cut = listing.preview(m.content)
        entries.append(ListedItem(
            rank=position, id=m.id, ref=m.ref, session_id=m.session_id, kind=m.kind,
            content=text, preview_truncated=cut, content_tokens=m.content_tokens,
            created_at=m.created_at, recall_count=m.recall_count,
            last_recalled_at=m.last_recalled_at,
        ))
    return ListPage(
        memories=tuple(entries), total_count=page.total_count, returned_count=len(entries),
        has_more=query.offset + len(entries) < page.total_count, limit=query.limit,
        offset=query.offset, sort=query.sort, current_time=core.now(),
    )


def detail(core: Core, memory_id: object) -> MemoryDetail:
    """One memory in full (superseded ones too), with its lifecycle; not counted as a recall."""
    m = core.resolve(memory_id)
    return MemoryDetail(
        id=m.id, ref=m.ref, session_id=m.session_id, kind=m.kind, content=m.content,
        content_tokens=m.content_tokens, created_at=m.created_at,
        recall_count=m.recall_count, last_recalled_at=m.last_recalled_at,
        superseded_by=ref_of(m.superseded_by) if m.superseded_by else None,
        superseded_at=m.superseded_at,
        supersedes=ref_of(m.supersedes) if m.supersedes else None,
        current_time=core.now(),
    )
