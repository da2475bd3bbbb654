"""What the use cases return: one typed schema that every transport reads.

MCP renders these objects as text, REST serialises them through its response models (derived
from these classes in adapters/rest/responses.py), telemetry reads counts from them, and the Python
API's dicts are their `to_dict()` (SPEC section 2 gives the field order and the optional
fields: an optional field that is None is left out, a list of skipped duplicates only when
there are some).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, Literal, TypeVar

R = TypeVar("R", bound="Result")


def metadata_of(pairs: tuple[tuple[str, Any], ...]) -> dict[str, Any] | None:
    """A memory's metadata pairs as a result's object (None, left out, when empty)."""
    return dict(pairs) or None


def join_notices(*parts: str | None) -> str | None:
    """Notices joined by a space (None when there are none)."""
    text = " ".join(p for p in parts if p)
    return text or None


_LEAVES = frozenset({str, int, float, bool, type(None)})
# Per result class: (field name, left out when absent) in field order, built on first use
# (to_dict runs for every list entry a transport returns, and calling dataclasses.fields()
# each time was most of its cost).
_LAYOUTS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _plain(value: object) -> object:
    if type(value) in _LEAVES:
        return value
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True, kw_only=True)
class Result:
    """Base of the result types: `to_dict()` in field order, leaving out what is absent."""

    # Fields left out of to_dict() when None (or, for tuples, when empty).
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        layout = _LAYOUTS.get(type(self))
        if layout is None:
            layout = tuple((f.name, f.name in self.OPTIONAL) for f in fields(self))
            _LAYOUTS[type(self)] = layout
        out: dict[str, Any] = {}
        for name, optional in layout:
            value = getattr(self, name)
            if optional and (value is None or value == ()):
                continue
            out[name] = value if type(value) in _LEAVES else _plain(value)
        return out

    def with_notice(self: R, notice: str | None) -> R:
        """The same result with `notice` appended to its own (results that carry one)."""
        if not notice:
            return self
        current: str | None = getattr(self, "notice", None)
        changes: dict[str, Any] = {"notice": join_notices(current, notice)}
        return replace(self, **changes)


@dataclass(frozen=True, kw_only=True)
class RefPair(Result):
    id: str
    ref: str


@dataclass(frozen=True, kw_only=True)
class SimilarTo(Result):
    ref: str
    similarity: float


@dataclass(frozen=True, kw_only=True)
class SavedItem(Result):
    OPTIONAL = frozenset({"similar_to", "notice", "tags", "metadata"})

    index: int
    id: str
    ref: str
    session_id: str | None
    kind: str
    content_tokens: int
    created_at: str
    similar_to: SimilarTo | None = None
    notice: str | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class SkippedItem(Result):
    index: int
    duplicate_of: str
    similarity: float


@dataclass(frozen=True, kw_only=True)
class SaveResult(Result):
    OPTIONAL = frozenset({"skipped_duplicates", "notice"})

    saved: tuple[SavedItem, ...]
    skipped_duplicates: tuple[SkippedItem, ...] = ()
    notice: str | None = None


@dataclass(frozen=True, kw_only=True)
class Scores(Result):
    fused: float
    dense: float | None
    bm25: float | None


@dataclass(frozen=True, kw_only=True)
class RecalledItem(Result):
    """One recalled memory; `relevance` and `scores` only in semantic mode."""

    OPTIONAL = frozenset({"relevance", "scores", "tags", "metadata"})

    rank: int
    relevance: str | None = None
    scores: Scores | None = None
    content_tokens: int
    created_at: str
    id: str
    ref: str
    content: str
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class ProfileItem(Result):
    OPTIONAL = frozenset({"tags", "metadata"})

    id: str
    ref: str
    content: str
    content_tokens: int
    created_at: str
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class RecallResult(Result):
    OPTIONAL = frozenset({"notice"})

    current_time: str
    mode: Literal["semantic", "recent"]
    memories: tuple[RecalledItem, ...]
    total_tokens: int
    truncated: bool
    matched_count: int
    profile: tuple[ProfileItem, ...] = ()
    notice: str | None = None

    def with_profile(self, profile: tuple[ProfileItem, ...]) -> RecallResult:
        return replace(self, profile=profile)


@dataclass(frozen=True, kw_only=True)
class ListedItem(Result):
    OPTIONAL = frozenset({"tags", "metadata"})

    rank: int
    id: str
    ref: str
    session_id: str | None
    kind: str
    content: str
    preview_truncated: bool
    content_tokens: int
    created_at: str
    recall_count: int
    last_recalled_at: str | None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class ListPage(Result):
    OPTIONAL = frozenset({"notice"})

    memories: tuple[ListedItem, ...]
    total_count: int
    returned_count: int
    has_more: bool
    limit: int
    offset: int
    sort: str
    current_time: str
    notice: str | None = None


@dataclass(frozen=True, kw_only=True)
class MemoryDetail(Result):
    """One memory in full; every field present (None where it does not apply)."""

    id: str
    ref: str
    session_id: str | None
    kind: str
    content: str
    content_tokens: int
    created_at: str
    recall_count: int
    last_recalled_at: str | None
    superseded_by: str | None
    superseded_at: str | None
    supersedes: str | None
    current_time: str
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class UpdateResult(Result):
    OPTIONAL = frozenset({"notice", "tags", "metadata"})

    id: str
    ref: str
    session_id: str | None
    kind: str
    content_tokens: int
    created_at: str
    supersedes: RefPair
    notice: str | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class DeleteResult(Result):
    OPTIONAL = frozenset({"restored"})

    id: str
    ref: str
    deleted: Literal[True] = True
    restored: RefPair | None = None
