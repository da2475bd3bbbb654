"""Mem0's memories: what `get_all()` / the export API return (`{"results": [...]}` or a
list), or one memory per line. A memory: `memory` (the text), `id`, `user_id`, `agent_id`,
`run_id`, `metadata`, `categories`, `created_at` / `updated_at` (ISO-8601).

Categories become tags, with `user:ID` and `agent:ID`; scalar metadata entries are kept as
metadata; `run_id` (Mem0's session) becomes the session. A memory without a time is dated
at the file's modification time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .items import ImportItem, Skipped, clean_tags, flat_metadata, parse_when
from .jsonstream import text_records

FORMAT = "mem0"


def read(path: Path, include_assistant: bool) -> Iterator[ImportItem | Skipped]:
    for found in text_records(path, "memories.json", ("results", "memories"),
                              ("memory", "text", "content")):
        if isinstance(found, Skipped):
            yield found
            continue
        label, where, record, text, default_when = found
        ids: dict[str, str] = {
            k: v for k in ("user_id", "agent_id", "run_id")
            if isinstance(v := record.get(k), str) and v
        }
        tags = clean_tags(list(record.get("categories") or [])
                          + [f"{k[:-3]}:{v}" for k, v in ids.items() if k != "run_id"])
        metadata = {**flat_metadata(record.get("metadata")),
                    **{k: v[:120] for k, v in ids.items()}, "imported_from": FORMAT}
        mem_id = record.get("id") if isinstance(record.get("id"), str) else None
        when = parse_when(record.get("created_at")) or default_when
        yield ImportItem(
            source_id=mem_id or f"{where}/{text[:200]}", content=text, created_at=when,
            session_id=ids.get("run_id"), tags=tags, metadata=metadata, role="fact",
        )
