"""What a reader yields: items to save (with a stable source id) and things it skipped."""

from __future__ import annotations

import json
import math
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from tinycontext.domain.errors import InvalidRequestError
from tinycontext.domain.memory import EPISODIC, format_timestamp

# Ids of imported memories are derived from the format and the item's own ids in its
# source: the same item imported twice gets the same id, which is how re-import skips it.
_NAMESPACE = uuid.UUID("5f0c8a52-3a9e-4c43-9d0b-7a61f2c4e1d3")
_TAG_DROP = re.compile(r"[^a-z0-9._:/-]+")
MAX_TAGS, MAX_TAG_CHARS, MAX_METADATA_BYTES = 16, 64, 1024
OWN_KEYS = ("imported_from", "role", "conversation", "file", "section", "entity",
            "entity_type", "relation")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True, slots=True)
class ImportItem:
    """One text to save. `source_id` is unique within its format and stable across exports."""

    source_id: str
    content: str
    created_at: str  # UTC YYYY-MM-DDTHH:MM:SSZ
    session_id: str | None = None
    kind: str = EPISODIC
    tags: tuple[str, ...] = ()
    metadata: dict[str, str | int | float | bool] = field(default_factory=dict)
    role: str = "user"  # for the dry run's counts: user, assistant, note, rule, fact


@dataclass(frozen=True, slots=True)
class Skipped:
    """Something in the source that is not imported, and why (shown by the dry run)."""

    reason: str
    where: str


class SourceError(InvalidRequestError):
    """A malformed file or record: names the file, the line or JSON path, what was expected."""

    def __init__(self, file: str, where: str, expected: str) -> None:
        place = f" at {where}" if where else ""
        super().__init__(
            f"{file}{place}: {expected}. Nothing was imported from this file; fix it (or "
            "export it again) and rerun the import."
        )
        self.file, self.where, self.expected = file, where, expected


def memory_id(fmt: str, source_id: str) -> str:
    """The id an item gets in the store: the same for the same item in every import."""
    return str(uuid.uuid5(_NAMESPACE, f"{fmt}\x00{source_id}"))


def stamp_from_epoch(value: float) -> str:
    return format_timestamp(datetime.fromtimestamp(value, UTC))


def parse_when(value: object) -> str | None:
    """A UTC stamp from epoch seconds (int/float), ISO-8601 text or a date/datetime (YAML
    front matter); None when unusable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        return format_timestamp(value if value.tzinfo else value.replace(tzinfo=UTC))
    if isinstance(value, date):
        return f"{value.isoformat()}T00:00:00Z"
    if isinstance(value, int | float):
        try:
            return stamp_from_epoch(float(value))
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        text = value.strip().replace("Z", "+00:00").replace(" ", "T", 1)
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return None
        return format_timestamp(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    return None


def clean_tags(raw: object) -> tuple[str, ...]:
    """Tags normalised the way the store keeps them (lower-case [a-z0-9._:/-], <= 64
    characters, at most 16); ones with nothing left are dropped."""
    if isinstance(raw, str):
        raw = re.split(r"[,\s]+", raw)
    if not isinstance(raw, list | tuple):
        return ()
    out: list[str] = []
    for tag in raw:
        if not isinstance(tag, str | int | float) or isinstance(tag, bool):
            continue
        text = _TAG_DROP.sub("-", str(tag).strip().lstrip("#").lower()).strip("-")
        text = text[:MAX_TAG_CHARS]
        if text and text not in out:
            out.append(text)
    return tuple(out[:MAX_TAGS])


def flat_metadata(raw: object, limit: int = 12) -> dict[str, str | int | float | bool]:
    """The scalar entries of a source's metadata (nested values are left out), short values."""
    if not isinstance(raw, dict):
        return {}
    out: dict[str, str | int | float | bool] = {}
    for key, value in raw.items():
        if len(out) >= limit:
            break
        name = _CONTROL.sub("", str(key)).strip()[:40]
        if not name:
            continue
        if isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value)):
            out[name] = value
        elif isinstance(value, str):
            out[name] = _CONTROL.sub(" ", value)[:120]
    return out


def fit_metadata(
    metadata: dict[str, str | int | float | bool], budget: int = MAX_METADATA_BYTES
) -> dict[str, str | int | float | bool]:
    """Metadata within the store's size limit (JSON bytes): entries are dropped from the end
    (the importer's own keys come last, so a source's first keys and ours are kept)."""
    items = list(metadata.items())
    ours = [(k, v) for k, v in items if k in OWN_KEYS]
    theirs = [(k, v) for k, v in items if k not in OWN_KEYS]
    while theirs and len(json.dumps(dict(theirs + ours)).encode()) > budget:
        theirs.pop()
    return dict(theirs + ours)


def printable_name(name: str) -> str:
    """A file name as valid text (undecodable bytes of a non-UTF-8 name become U+FFFD)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
