"""The official MCP memory server's knowledge graph (memory.jsonl): one JSON object a line,
`{"type": "entity", "name", "entityType", "observations": [...]}` or
`{"type": "relation", "from", "to", "relationType"}`.

Each observation becomes "NAME (TYPE): observation", tagged with the entity's name and type;
each relation becomes "FROM <relation> TO" (underscores read as spaces), tagged with both
names. The graph has no times: every memory is dated at the file's modification time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .items import ImportItem, Skipped, SourceError, clean_tags, stamp_from_epoch
from .jsonstream import json_lines, source

FORMAT = "mcp-memory"


def read(path: Path, include_assistant: bool) -> Iterator[ImportItem | Skipped]:
    opener, label = source(path, "memory.jsonl")
    when = stamp_from_epoch(path.stat().st_mtime)
    for where, record in json_lines(opener, label, "an entity or a relation"):
        kind = record.get("type") or ("relation" if "relationType" in record else "entity")
        if kind == "entity":
            yield from _entity(record, where, label, when)
        elif kind == "relation":
            yield _relation(record, where, label, when)
        else:
            yield Skipped(f"unknown record type {str(kind)[:40]!r}", where)


def _text(record: dict[str, Any], key: str, where: str, label: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SourceError(label, f"{where}.{key}", f"expected {key} (non-empty text)")
    return value.strip()


def _entity(
    record: dict[str, Any], where: str, label: str, when: str
) -> Iterator[ImportItem | Skipped]:
    name = _text(record, "name", where, label)
    entity_type = record.get("entityType")
    entity_type = entity_type.strip() if isinstance(entity_type, str) else ""
    observations = record.get("observations", [])
    if not isinstance(observations, list):
        raise SourceError(label, f"{where}.observations", "expected a list of texts")
    if not observations:
        yield Skipped("entity without observations", where)
    head = f"{name} ({entity_type})" if entity_type else name
    for i, observation in enumerate(observations):
        if not isinstance(observation, str):
            raise SourceError(label, f"{where}.observations[{i}]", "expected text")
        if not observation.strip():
            yield Skipped("empty observation", f"{where}.observations[{i}]")
            continue
        digest = hashlib.sha256(observation.encode("utf-8", "replace")).hexdigest()[:24]
        yield ImportItem(
            source_id=f"entity/{name}/{digest}", content=f"{head}: {observation.strip()}",
            created_at=when, tags=clean_tags([name, entity_type]), role="fact",
            metadata={"imported_from": FORMAT, "entity": name[:120],
                      "entity_type": entity_type[:60]},
        )


def _relation(record: dict[str, Any], where: str, label: str, when: str) -> ImportItem:
    start, end = _text(record, "from", where, label), _text(record, "to", where, label)
    relation = _text(record, "relationType", where, label)
    return ImportItem(
        source_id=f"relation/{start}/{relation}/{end}",
        content=f"{start} {relation.replace('_', ' ')} {end}", created_at=when,
        tags=clean_tags([start, end]), role="relation",
        metadata={"imported_from": FORMAT, "relation": relation[:60]},
    )
