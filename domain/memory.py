"""Memory value types, ids and refs, timestamps and input validation."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from .errors import EmptyMemoryError, InvalidMemoryKindError, InvalidRequestError
from .labels import Metadata

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
    # Not strftime: glibc's %Y writes the year 14 as "14", which no ISO-8601 reader takes.
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
            f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z")


def format_timestamp_ceil(moment: datetime) -> str:
    """`format_timestamp` rounded up to the whole second: stored times have whole seconds,
    so a `since` bound of 10:00:00.5 must not match a memory saved at 10:00:00."""
    if moment.microsecond:
        moment = moment.replace(microsecond=0) + timedelta(seconds=1)
    return format_timestamp(moment)


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
    tags: tuple[str, ...] = ()
    metadata: Metadata = ()

    @property
    def ref(self) -> str:
        return ref_of(self.id)

    @property
    def live(self) -> bool:
        return self.superseded_by is None


@dataclass(frozen=True, slots=True)
class MemoryInput:
    """What a caller asks to save: content, kind (`episodic` or `profile`), optional tags
    (a list of short labels) and metadata (a flat object of strings, numbers, booleans)."""

    content: str
    kind: str = EPISODIC
    tags: Sequence[str] | None = None
    metadata: Mapping[str, str | int | float | bool] | None = None


# Content rules, the same on every way in (save, update, import; every transport):
# - C0/C1 control characters and DEL are removed, except tab, line feed and carriage return;
#   the ones that break lines (VT, FF, FS, GS, RS, NEL) become a line feed;
# - whitespace, zero-width characters, word joiners and byte-order marks are stripped from
#   both ends (inside the text they stay: they join emoji and shape some scripts);
# - text with nothing visible left is blank (`empty_memory`).
_REMOVED_CONTROLS = re.compile("[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]")
_BREAKING_CONTROLS = re.compile("[\x0b\x0c\x1c-\x1e\x85]")
_ANY_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")
# Characters nobody sees, listed (not taken from Unicode categories) so that the REST schema's
# pattern states the same rule: controls, soft hyphen, fillers, zero-width characters and
# joiners, direction marks, blank braille, variation selectors, invisible format and tag
# characters. Whitespace (`\\s`) counts as invisible too.
_INVISIBLE_BMP = (
    "\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0"
)
_INVISIBLE_ASTRAL = "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
VISIBLE_PATTERN = "[^\\s" + _INVISIBLE_BMP + "]"
"""Finds one visible character: the schema's non-blank rule. It leaves out the invisible
characters beyond U+FFFF, which JavaScript regular expressions without the `u` flag cannot
hold in a character class (the engine still treats them as invisible)."""
_VISIBLE = re.compile("[^\\s" + _INVISIBLE_BMP + _INVISIBLE_ASTRAL + "]")


def has_visible(text: str) -> bool:
    """Whether any character of `text` is one a reader would see."""
    return _VISIBLE.search(text) is not None


def _strip_edges(text: str) -> str:
    # A scan from both ends: a regex anchored at the end backtracks quadratically over long
    # runs of spaces inside the text.
    def edge(ch: str) -> bool:
        return ch.isspace() or ch in _ZERO_WIDTH

    start, end = 0, len(text)
    while start < end and edge(text[start]):
        start += 1
    while end > start and edge(text[end - 1]):
        end -= 1
    return text[start:end]


def clean_content(content: object, *, what: str = "content") -> str:
    """Text with control characters removed and invisible edges stripped, or an error:
    `empty_memory` when nothing visible is left, `invalid_request` for non-text."""
    if not isinstance(content, str):
        raise InvalidRequestError(f"{what} must be a string, got {type(content).__name__}.")
    text = content
    if _ANY_CONTROL.search(text):
        text = _BREAKING_CONTROLS.sub("\n", _REMOVED_CONTROLS.sub("", text))
    text = _strip_edges(text)
    if not has_visible(text):
        raise EmptyMemoryError(
            f"{what} is blank (nothing visible once whitespace, zero-width and control "
            "characters are left out): write the fact to remember as plain text."
        )
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


MAX_SESSION_CHARS = 200


def check_session_id(session_id: object) -> str | None:
    """None, or a stripped non-empty session id of at most 200 characters, none of them a
    control character (checked before stripping, as the REST schema states it)."""
    if session_id is None:
        return None
    if not isinstance(session_id, str):
        raise InvalidRequestError("session_id must be a string.")
    if len(session_id) > MAX_SESSION_CHARS or _ANY_CONTROL.search(session_id):
        raise InvalidRequestError(
            f"session_id must be at most {MAX_SESSION_CHARS} printable characters; use a short "
            "stable name."
        )
    text = session_id.strip()
    if not text:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidRequestError(
            f"session_id is not valid Unicode text (lone surrogate at position {exc.start})."
        ) from exc
    _refuse_secret_session(text)
    return text


def _refuse_secret_session(session_id: str) -> None:
    """A session id is stored verbatim (and repeated in every result), so one that holds a
    credential is refused rather than redacted: a redacted name would merge sessions."""
    from .secrets import redact  # its patterns compile on first use, not at import

    kinds = redact(session_id).kinds
    if kinds:
        raise InvalidRequestError(
            f"session_id looks like a secret (a {kinds[0]}), and session ids are stored and "
            "shown as written; nothing was done. Use a short stable name such as the project's "
            "or the conversation's, never a credential."
        )


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
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+05:00 is before year 1 in UTC
        raise InvalidRequestError(
            f"{field} is out of range once converted to UTC; use a date between 0001-01-02 and "
            "9999-12-30."
        ) from None
