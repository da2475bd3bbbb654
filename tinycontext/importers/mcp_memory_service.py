"""mcp-memory-service's JSON export / backup: `{"export_metadata": {...}, "memories": [...]}`,
each memory with `content`, `content_hash`, `tags`, `memory_type`, `metadata` and
`created_at` (epoch seconds; `created_at_iso` in some versions). A plain list of such
memories, or one per line, is read too.

Tags stay tags (plus the memory type as `type:TYPE`), scalar metadata entries stay
metadata, `content_hash` is the stable id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

from .items import ImportItem, Skipped, SourceError, clean_tags, flat_metadata, parse_when
from .jsonstream import text_records

FORMAT = "mcp-memory-service"


def read(path: Path, include_assistant: bool) -> Iterator[ImportItem | Skipped]:
    for found in text_records(path, "memories.json", ("memories",), ("content",)):
        if isinstance(found, Skipped):
            yield found
            continue
        label, where, record, text, default_when = found
        raw_tags = record.get("tags") or []
        if isinstance(raw_tags, str):
            raw_tags = raw_tags.split(",")
        if not isinstance(raw_tags, list):
            raise SourceError(label, f"{where}.tags", "expected a list of tags")
        kind = record.get("memory_type")
        tags = clean_tags(raw_tags + ([f"type:{kind}"] if isinstance(kind, str) and kind else []))
        when = (parse_when(record.get("created_at")) or parse_when(record.get("created_at_iso"))
                or default_when)
        digest = record.get("content_hash")
        if not isinstance(digest, str) or not digest:
            digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
        yield ImportItem(
            source_id=digest, content=text, created_at=when, tags=tags, role="fact",
            metadata={**flat_metadata(record.get("metadata")), "imported_from": FORMAT},
        )
