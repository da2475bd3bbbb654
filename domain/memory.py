"""Memory value types, ids and refs, timestamps and input validation."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from .errors import EmptyMemoryError, InvalidMemoryKindError, InvalidRequestError

EPISODIC = "episodic"
PROFILE = "profile"
KINDS = (EPISODIC, PROFILE)
REF_LENGTH = 12

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_REF = re.compile(r"^[0-9a-f]{12}$")


def ref_of(memory_id: str) -> str:
    """The 12-hex ref of an id: first 12 hex characters without dashes, lower-case."""
    return memory_id.replace("-", "").lower()[:REF_LENGTH]


def format_timestamp(moment: datetime) -> str:
    """UTC `YYYY-MM-DDTHH:MM:SSZ`; naive datetimes are taken as UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory as the engine sees it (the embedding stays in the store)."""

    id: str
    content: str
    kind: str
    session_id: str | None
    created_at: str
    content_tokens: int
    recall_count: int = 0
    last_recalled_at: str | None = None
    superseded_by: str | None = None
    superseded_at: str | None = None
    supersedes: str | None = None
    embedding_model: str | None = None

    @property
    def ref(self) -> str:
        return ref_of(self.id)

    @property
    def live(self) -> bool:
        return self.superseded_by is None


@dataclass(frozen=True, slots=True)
class MemoryInput:
    """What a caller asks to save: content and kind (`episodic` or `profile`)."""

    content: str
    kind: str = EPISODIC


def clean_content(content: object, *, what: str = "content") -> str:
    """Stripped, non-blank, valid UTF-8 text, or an `empty_memory`/`invalid_request` error."""
    if not isinstance(content, str):
        raise InvalidRequestError(f"{what} must be a string, got {type(content).__name__}.")
    text = content.strip()
    if not text:
        raise EmptyMemoryError(f"{what} is blank: write the fact to remember as plain text.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidRequestError(
            f"{what} is not valid Unicode text (lone surrogate at position {exc.start}); "
            "send UTF-8 text."
        ) from exc
    return text


def check_kind(kind: object) -> str:
    """A valid kind, or `invalid_memory_kind`; None means episodic."""
    if kind is None:
        return EPISODIC
    if not isinstance(kind, str) or kind.strip().lower() not in KINDS:
        raise InvalidMemoryKindError(
            f"kind must be 'episodic' or 'profile', got {kind!r}. Use 'profile' for durable "
            "facts about the user and 'episodic' for everything else."
        )
    return kind.strip().lower()


def check_session_id(session_id: object) -> str | None:
    """None, or a stripped non-empty session id of at most 200 characters."""
    if session_id is None:
        return None
    if not isinstance(session_id, str):
        raise InvalidRequestError("session_id must be a string.")
    text = session_id.strip()
    if not text:
        return None
    if len(text) > 200 or any(ord(ch) < 32 for ch in text):
        raise InvalidRequestError(
            "session_id must be at most 200 printable characters; use a short stable name."
        )
    return clean_content(text, what="session_id")


@dataclass(frozen=True, slots=True)
class MemoryKey:
    """A caller's reference to one memory: a full id or a 12-hex ref."""

    value: str
    is_ref: bool


def parse_memory_key(memory_id: object) -> MemoryKey:
    """Normalise an id or ref; blank is `empty_memory`, anything else malformed not found."""
    from .errors import MemoryNotFoundError

    if not isinstance(memory_id, str):
        raise InvalidRequestError("memory_id must be a string (a full id or a 12-character ref).")
    text = memory_id.strip().lower()
    if not text:
        raise EmptyMemoryError("memory_id is blank: pass the id or 12-character ref of a memory.")
    if _UUID.match(text):
        return MemoryKey(text, is_ref=False)
    if _REF.match(text):
        return MemoryKey(text, is_ref=True)
    raise MemoryNotFoundError(
        f"No memory has the id or ref {memory_id.strip()[:60]!r}; refs are 12 hex characters "
        "as shown by recall_memories or list_memories."
    )


def parse_instant(value: object, *, field: str, end_of_day: bool = False) -> datetime | None:
    """ISO-8601 date or datetime as an aware UTC instant; a bare `until` date covers its day."""
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime.combine(value, time.min)
        if end_of_day:
            moment += timedelta(days=1) - timedelta(microseconds=1)
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            if "T" not in text.upper() and ":" not in text and " " not in text:
                moment = datetime.combine(date.fromisoformat(text), time.min)
                if end_of_day:
                    moment += timedelta(days=1) - timedelta(microseconds=1)
            else:
                moment = datetime.fromisoformat(text.replace("z", "Z"))
        except ValueError as exc:
            raise InvalidRequestError(
                f"{field} must be an ISO-8601 date or datetime such as 2026-07-31 or "
                f"2026-07-31T10:15:00Z, got {text[:40]!r}."
            ) from exc
    else:
        raise InvalidRequestError(f"{field} must be an ISO-8601 date or datetime string.")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
