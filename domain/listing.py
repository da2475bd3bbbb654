"""Validation and presentation rules of list_memories."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from .errors import InvalidRequestError, InvalidSortError
from .labels import MemoryFilter
from .limits import whole_number
from .memory import check_kind, parse_instant
from .text import keyword_groups

SORTS = ("recent", "stale", "relevance")
MAX_LIMIT = 200
MAX_SEARCH_CHARS = 200
PREVIEW_CHARS = 200


@dataclass(frozen=True, slots=True)
class ListQuery:
    """A validated browse request; `search` is keyword groups, all required, each a prefix."""

    session_id: str | None
    kind: str | None
    since: datetime | None
    until: datetime | None
    limit: int
    offset: int
    sort: str
    search: tuple[tuple[str, ...], ...]
    # None: every memory; False: only never recalled (recall_count 0); True: recalled.
    recalled: bool | None = None
    # True: only memories a newer version replaced (the web UI's history view); else live.
    superseded: bool = False
    # False: the store may skip counting (total_count is then -1); a page of a large store
    # then reads only its own rows (the web UI counts separately, cached).
    count: bool = True
    # Tags, metadata and "as of" (its since/until stay unused: the fields above hold them).
    filters: MemoryFilter | None = None
    # Besides SORTS, stores accept BROWSE_SORTS' "recalled": most recalled first, the exact
    # reverse of "stale" (the web UI's sort), and "oldest": the exact reverse of "recent"
    # (the overview's oldest memory); list_memories offers neither.


BROWSE_SORTS = (*SORTS, "recalled", "oldest")


def build_list_query(
    session_id: str | None,
    kind: object,
    since: object,
    until: object,
    limit: object,
    offset: object,
    sort: object,
    search: object,
) -> ListQuery:
    """Check every list parameter; errors name the parameter and the fix."""
    used_limit = whole_number(limit, "limit", default=20, minimum=1)
    used_offset = whole_number(offset, "offset", default=0, minimum=0)
    groups: tuple[tuple[str, ...], ...] = ()
    if search is not None:
        if not isinstance(search, str):
            raise InvalidRequestError("search must be a string of keywords.")
        if len(search) > MAX_SEARCH_CHARS:
            raise InvalidRequestError(
                f"search is {len(search)} characters; keep it to {MAX_SEARCH_CHARS} "
                "(a few keywords)."
            )
        groups = tuple(tuple(g) for g in keyword_groups(search))
    searching = isinstance(search, str) and bool(search.strip())
    if searching and not groups:
        raise InvalidRequestError("search has no letters or digits to match; pass keywords.")
    if sort is None:
        sort = "relevance" if searching else "recent"
    if not isinstance(sort, str) or sort not in SORTS:
        raise InvalidSortError(f"sort must be one of {', '.join(SORTS)}, got {sort!r}.")
    if sort == "relevance" and not searching:
        raise InvalidSortError("sort 'relevance' needs search keywords; use 'recent' or 'stale'.")
    start = parse_instant(since, field="since")
    end = parse_instant(until, field="until", end_of_day=True)
    if start and end and start > end:
        raise InvalidRequestError("since is after until; swap them or widen the range.")
    return ListQuery(
        session_id=session_id,
        kind=None if kind is None else check_kind(kind),
        since=start,
        until=end,
        limit=min(used_limit, MAX_LIMIT),
        offset=used_offset,
        sort=sort,
        search=groups,
    )


def with_filter(query: ListQuery, filters: MemoryFilter) -> ListQuery:
    """The query narrowed by a recall filter: its time window joins the query's own (the
    later start, the earlier end), its tags, metadata and "as of" ride along."""
    since = parse_instant(filters.since, field="since")
    until = parse_instant(filters.until, field="until")
    if query.since is not None and since is not None:
        since = max(since, query.since)
    if query.until is not None and until is not None:
        until = min(until, query.until)
    return replace(
        query, since=since or query.since, until=until or query.until,
        filters=MemoryFilter(filters.tags, filters.metadata, as_of=filters.as_of) or None,
    )


def preview(content: str) -> tuple[str, bool]:
    """About 200 characters, cut at a word boundary where one is near."""
    if len(content) <= PREVIEW_CHARS:
        return content, False
    cut = content[:PREVIEW_CHARS]
    space = cut.rfind(" ")
    if space >= PREVIEW_CHARS - 40:
        cut = cut[:space]
    return cut.rstrip() + "…", True
