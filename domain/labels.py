"""Tags and metadata of a memory: their rules, their canonical labels and the filters over them.

A memory carries up to 16 tags (trimmed, lower-cased, at most 64 characters of letters,
digits and `._:/-`) and a flat metadata object (string keys to string, number or boolean
values, at most 1 KB as JSON). Stores index both as labels: `#tag` for a tag, `@key=value`
for a metadata pair with the value in one canonical JSON form, so a filter is "every label
of the filter is among the memory's labels" in every store alike.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from .errors import InvalidRequestError

MAX_TAGS = 16
MAX_TAG_CHARS = 64
MAX_METADATA_BYTES = 1024
MAX_KEY_CHARS = 64
TAG_PATTERN = "^[a-z0-9._:/-]{1,64}$"
_TAG = re.compile(TAG_PATTERN)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")

MetaValue = str | int | float | bool
Metadata = tuple[tuple[str, MetaValue], ...]
"""Metadata as (key, value) pairs in the caller's order (a tuple: memories are values)."""

Redactor = Callable[[str], tuple[str, tuple[str, ...]]]
"""Text -> (text with secrets replaced, the kinds replaced)."""


def _no_redaction(text: str) -> tuple[str, tuple[str, ...]]:
    return text, ()


def _tag(raw: object, what: str, redactor: Redactor, kinds: list[str]) -> str:
    if not isinstance(raw, str):
        raise InvalidRequestError(f"{what} must be a string, got {type(raw).__name__}.")
    text, found = redactor(raw.strip())
    if found:  # `[redacted:github-token]` -> `redacted:github-token`: a valid tag
        kinds.extend(found)
        text = text.replace("[", "").replace("]", "")
    text = text.lower()
    if not _TAG.match(text):
        shown = json.dumps(text[:80])
        if not text:
            problem = "is blank"
        elif len(text) > MAX_TAG_CHARS:
            problem = f"is {len(text)} characters (at most {MAX_TAG_CHARS})"
        else:
            problem = "has characters other than letters, digits and . _ : / - (no spaces)"
        raise InvalidRequestError(
            f"{what} {shown} {problem}; write tags like 'project:billing' or 'decision'."
        )
    return text


def check_tags(
    raw: object, *, what: str = "tags", redactor: Redactor = _no_redaction,
    kinds: list[str] | None = None,
) -> tuple[str, ...]:
    """Normalised tags in the caller's order without repeats, or `invalid_request` naming
    the bad one. None is no tags. Secrets found (by `redactor`) are added to `kinds`."""
    if raw is None:
        return ()
    if isinstance(raw, str) or not isinstance(raw, (list, tuple)):
        raise InvalidRequestError(f"{what} must be a list of strings such as ['billing'].")
    found = kinds if kinds is not None else []
    tags: list[str] = []
    for i, item in enumerate(raw):
        tag = _tag(item, f"{what}[{i}]", redactor, found)
        if tag not in tags:
            tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise InvalidRequestError(
            f"{what} has {len(tags)} tags; a memory takes at most {MAX_TAGS}: keep the ones "
            "you will filter by."
        )
    return tuple(tags)


def _value(key: str, value: object, what: str) -> MetaValue:
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidRequestError(f"{what}[{key!r}] must be a finite number.")
        return value
    raise InvalidRequestError(
        f"{what}[{key!r}] is {type(value).__name__}; metadata values are strings, numbers or "
        "booleans (flat: no lists, objects or null)."
    )


def check_metadata(
    raw: object, *, what: str = "metadata", redactor: Redactor = _no_redaction,
    kinds: list[str] | None = None, limit: bool = True,
) -> Metadata:
    """Checked metadata pairs, or `invalid_request` saying which key or value is wrong;
    None is none. `limit` False skips the 1 KB bound (a filter is not stored)."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise InvalidRequestError(
            f"{what} must be an object of string keys to strings, numbers or booleans."
        )
    found = kinds if kinds is not None else []
    pairs: list[tuple[str, MetaValue]] = []
    for key, value in raw.items():
        if not isinstance(key, str) or not key.strip():
            raise InvalidRequestError(f"{what} keys must be non-blank strings.")
        if len(key) > MAX_KEY_CHARS or _CONTROL.search(key):
            raise InvalidRequestError(
                f"{what} key {json.dumps(key[:80])} must be at most {MAX_KEY_CHARS} printable "
                "characters."
            )
        checked = _value(key, value, what)
        clean_key, key_kinds = redactor(key)
        found.extend(key_kinds)
        if isinstance(checked, str):
            checked, value_kinds = redactor(checked)
            found.extend(value_kinds)
        pairs.append((clean_key, checked))
    if limit and len(metadata_json(tuple(pairs)).encode("utf-8")) > MAX_METADATA_BYTES:
        raise InvalidRequestError(
            f"{what} is over {MAX_METADATA_BYTES} bytes as JSON; keep a few short fields and "
            "put longer text in the memory's content."
        )
    return tuple(pairs)


def metadata_json(metadata: Metadata) -> str:
    """The stored form: compact JSON in the caller's key order."""
    return json.dumps(dict(metadata), ensure_ascii=False, separators=(",", ":"))


@lru_cache(maxsize=4096)
def read_metadata(text: str | None) -> Metadata:
    """Stored JSON back to pairs (None or an empty object: none). Cached: every candidate
    row of a recall is decoded, and stores repeat the same few tag sets and metadata."""
    if not text:
        return ()
    return tuple(json.loads(text).items())


def tags_json(tags: tuple[str, ...]) -> str | None:
    """The stored form of tags (None when there are none)."""
    return json.dumps(list(tags), separators=(",", ":")) if tags else None


@lru_cache(maxsize=4096)
def read_tags(text: str | None) -> tuple[str, ...]:
    return tuple(json.loads(text)) if text else ()


def _canonical(value: MetaValue) -> str:
    # 2 and 2.0 are the same number to a filter; true is not 1.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def labels_of(tags: tuple[str, ...], metadata: Metadata) -> list[str]:
    """The index entries of a memory's tags and metadata (no repeats)."""
    labels = [f"#{t}" for t in tags]
    labels += [f"@{k}={_canonical(v)}" for k, v in metadata]
    return list(dict.fromkeys(labels))


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """A checked recall/list filter. Times are stored timestamps (`YYYY-MM-DDTHH:MM:SSZ`),
    compared as text: `since` <= created_at <= `until`; `as_of`: the versions live then."""

    tags: tuple[str, ...] = ()
    metadata: Metadata = ()
    since: str | None = None
    until: str | None = None
    as_of: str | None = None

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(labels_of(self.tags, self.metadata))

    def __bool__(self) -> bool:
        return bool(self.tags or self.metadata or self.since or self.until or self.as_of)

    def live_condition(self) -> bool:
        """Whether only current versions qualify (no `as_of`)."""
        return self.as_of is None


def live_at(created_at: str, superseded_at: str | None, superseded: bool, as_of: str) -> bool:
    """Whether a version was the live one at `as_of`: made by then and not yet replaced
    (a version replaced at an unknown time counts as replaced)."""
    if created_at > as_of:
        return False
    if not superseded:
        return True
    return superseded_at is not None and superseded_at > as_of


def matches(
    labels: list[str], created_at: str, superseded_at: str | None, superseded: bool,
    wanted: MemoryFilter,
) -> bool:
    """Whether a memory with these labels and lifecycle passes the filter (for stores that
    filter in Python; SQL stores state the same rule)."""
    if wanted.since is not None and created_at < wanted.since:
        return False
    if wanted.until is not None and created_at > wanted.until:
        return False
    if wanted.as_of is not None:
        if not live_at(created_at, superseded_at, superseded, wanted.as_of):
            return False
    elif superseded:
        return False
    return set(wanted.labels).issubset(labels)
