"""Building a recall or list filter from a caller's arguments (tags, metadata, time window,
"as of"), with the errors that name what is wrong."""

from __future__ import annotations

from .errors import InvalidRequestError
from .labels import MemoryFilter, check_metadata, check_tags, labels_of, matches
from .memory import Memory, format_timestamp, format_timestamp_ceil, parse_instant


def build_filter(
    tags: object = None, metadata: object = None, since: object = None, until: object = None,
    as_of: object = None,
) -> MemoryFilter:
    """A checked filter: `since`/`until` as list takes them (an `until` date covers its
    day), `as_of` a date or datetime (a bare date means the end of that day)."""
    wanted_tags = check_tags(tags, what="tags filter")
    wanted_meta = check_metadata(metadata, what="metadata filter", limit=False)
    start = parse_instant(since, field="since")
    end = parse_instant(until, field="until", end_of_day=True)
    if start and end and start > end:
        raise InvalidRequestError("since is after until; swap them or widen the range.")
    moment = parse_instant(as_of, field="as_of", end_of_day=True)
    return MemoryFilter(
        tags=wanted_tags, metadata=wanted_meta,
        since=None if start is None else format_timestamp_ceil(start),
        until=None if end is None else format_timestamp(end),
        as_of=None if moment is None else format_timestamp(moment),
    )


def passes(memory: Memory, filters: MemoryFilter | None) -> bool:
    """Whether a memory qualifies under `filters`: live (or live at `as_of`), in the time
    window, holding every tag and metadata pair (None: whether it is live)."""
    if filters is None:
        return memory.superseded_by is None
    return matches(
        labels_of(memory.tags, memory.metadata), memory.created_at, memory.superseded_at,
        memory.superseded_by is not None, filters,
    )
