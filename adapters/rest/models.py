"""Pydantic request and response models of the REST API (SPEC section 7).

Types are checked here (a wrong type or a missing field is a 422); values are checked by the
engine, so a blank content, a bad kind or sort, or top_k < 1 get the same error code in every
adapter (the 400/404/409 table). The schema still states those value rules (ranges, lengths,
patterns, taken from the domain's own constants) without enforcing them here, so a client
reading the OpenAPI document knows them and the engine stays the one place that decides.
Only pydantic, the pure domain and the shared input types (tinycontext.inputs, which the
MCP server validates too) are imported.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from tinycontext.domain.limits import MAX_ITEMS_PER_SAVE, MAX_QUERY_CHARS
from tinycontext.domain.listing import MAX_SEARCH_CHARS, SORTS
from tinycontext.domain.memory import MAX_SESSION_CHARS
from tinycontext.inputs import (
    KIND,
    AtLeastOne,
    AtLeastZero,
    Content,
    Kind,
    MemoryItem,
)
from tinycontext.inputs import stated as _stated
from tinycontext.inputs import whole_number as _integer

ID = "The memory's full id (uuid4)."
REF = "First 12 hex characters of the id, dashes removed: accepted wherever an id is."
TIME = "UTC timestamp `YYYY-MM-DDTHH:MM:SSZ`."
SESSION = "Scope inside the store; omitted or null means the whole store."
MAX_TOKENS = "Token budget for the memories (default recall_max_tokens 2000)."
TOP_K = "At most this many memories (default 10; 5 in recent mode)."
LIMIT = "Page size, default 20; larger values are capped to 200."
OFFSET = "Entries to skip, default 0."

QueryAtLeastOne = Annotated[int, _stated(_integer(1))]
QueryAtLeastZero = Annotated[int, _stated(_integer(0))]
# Any printable text of at most 200 characters (control characters are refused).
SessionId = Annotated[str, _stated({
    "type": "string", "maxLength": MAX_SESSION_CHARS,
    "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*$",
})]
# A full id (uuid) or a 12-hex ref, in either case, surrounding whitespace ignored.
MemoryKey = Annotated[str, _stated({
    "type": "string", "minLength": 12,
    "pattern": "^\\s*([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    "[0-9a-fA-F]{12}|[0-9a-fA-F]{12})\\s*$",
})]
Sort = Annotated[str, _stated({"type": "string", "enum": list(SORTS)})]
Query = Annotated[str, _stated({"type": "string", "maxLength": MAX_QUERY_CHARS})]
Instant = Annotated[str, _stated(
    {"type": "string", "anyOf": [{"format": "date"}, {"format": "date-time"}]}
)]
# Blank (no filter), or keywords with at least one letter or digit.
KEYWORD = "[^\\W_]"
Search = Annotated[str, _stated({
    "type": "string", "maxLength": MAX_SEARCH_CHARS, "pattern": "^\\s*$|" + KEYWORD,
})]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Response(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SaveRequest(_Request):
    session_id: SessionId | None = Field(default=None, description=SESSION)
    memories: list[MemoryItem] = Field(
        description=f"Items to save, embedded in one batch; 1 to {MAX_ITEMS_PER_SAVE} per call.",
        json_schema_extra={"minItems": 1, "maxItems": MAX_ITEMS_PER_SAVE},
    )


class RecallRequest(_Request):
    query: Query | None = Field(
        default=None,
        description=f"Question or keywords (up to {MAX_QUERY_CHARS} characters); omitted or "
        "blank = recent mode.",
    )
    session_id: SessionId | None = Field(default=None, description=SESSION)
    max_tokens: AtLeastOne | None = Field(default=None, description=MAX_TOKENS)
    top_k: AtLeastOne | None = Field(default=None, description=TOP_K)


class RecallQuery(RecallRequest):
    """RecallRequest as query-string parameters (numbers arrive as text)."""

    max_tokens: QueryAtLeastOne | None = Field(default=None, description=MAX_TOKENS)
    top_k: QueryAtLeastOne | None = Field(default=None, description=TOP_K)


class ListRequest(_Request):
    # sort "relevance" ranks by the search keywords, so it needs some (the query-string form
    # cannot state a rule between two parameters; the engine checks it in both).
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "if": {"properties": {"sort": {"const": "relevance"}}, "required": ["sort"]},
        "then": {"properties": {"search": {"type": "string", "pattern": KEYWORD}},
                 "required": ["search"]},
    })

    session_id: SessionId | None = Field(default=None, description=SESSION)
    kind: Kind | None = Field(default=None, description='Only "episodic" or only "profile".')
    since: Instant | None = Field(default=None, description="ISO-8601 date or datetime, inclusive.")
    until: Instant | None = Field(
        default=None, description="ISO-8601 date or datetime, inclusive (a date covers its day)."
    )
    limit: AtLeastOne | None = Field(default=None, description=LIMIT)
    offset: AtLeastZero | None = Field(default=None, description=OFFSET)
    sort: Sort | None = Field(
        default=None,
        description='"recent" (default), "stale" (least recalled first) or "relevance" '
        "(only with search; the default when search is given).",
    )
    search: Search | None = Field(
        default=None,
        description=f"Keywords (up to {MAX_SEARCH_CHARS} characters, at least one letter or "
        "digit); all must match, the last may be a prefix.",
    )


class ListQuery(ListRequest):
    """ListRequest as query-string parameters (numbers arrive as text)."""

    limit: QueryAtLeastOne | None = Field(default=None, description=LIMIT)
    offset: QueryAtLeastZero | None = Field(default=None, description=OFFSET)


class MemoryIdRequest(_Request):
    memory_id: MemoryKey = Field(description="Full id or 12-hex ref.")


class UpdateRequest(_Request):
    memory_id: MemoryKey = Field(description="Full id or 12-hex ref of the memory to replace.")
    content: Content = Field(
        description="The complete new text (at most max_memory_tokens tokens, as for a save)."
    )


# -- responses -------------------------------------------------------------------------------
class RefPair(_Response):
    id: str = Field(description=ID)
    ref: str = Field(description=REF)


class SimilarTo(_Response):
    ref: str = Field(description="Ref of the stored memory this one closely resembles.")
    similarity: float = Field(description="Cosine similarity, 0..1.")


class SavedItem(_Response):
    index: int = Field(description="Position of the item in the request's memories list.")
    id: str = Field(description=ID)
    ref: str = Field(description=REF)
    session_id: str | None = Field(description="Session it was saved in (null for profile).")
    kind: str = Field(description=KIND)
    content_tokens: int = Field(description="Token count of the content.")
    created_at: str = Field(description=TIME)
    similar_to: SimilarTo | None = Field(
        default=None, description="Present when a stored memory is very similar: consider a merge."
    )
    notice: str | None = Field(
        default=None, description="Present for long content or when secrets were replaced."
    )


class SkippedItem(_Response):
    index: int = Field(description="Position of the item in the request.")
    duplicate_of: str = Field(description="Ref of the memory it duplicates.")
    similarity: float = Field(description="Cosine similarity to that memory.")


class SaveResponse(_Response):
    saved: list[SavedItem] = Field(description="Items written.")
    skipped_duplicates: list[SkippedItem] | None = Field(
        default=None, description="Items not written because they add nothing; only when any."
    )
    notice: str | None = Field(default=None, description="Background re-embedding progress.")


class Scores(_Response):
    rrf: float = Field(
        description="Fused score, 0..1: relative to the query's best candidate with score "
        "fusion (the default), or the normalised reciprocal-rank score with recall_fusion=rrf."
    )
    dense: float | None = Field(description="Cosine similarity; null if not a dense candidate.")
    bm25: float | None = Field(description="BM25 score; null if no keyword matched.")


class RecalledMemory(_Response):
    rank: int = Field(description="1 = best (semantic) or newest (recent).")
    relevance: Literal["high", "medium", "low"] | None = Field(
        default=None, description="Semantic mode only."
    )
    scores: Scores | None = Field(default=None, description="Semantic mode only.")
    content_tokens: int = Field(description="Token count of the content.")
    created_at: str = Field(description=TIME)
    id: str = Field(description=ID)
    ref: str = Field(description=REF)
    content: str = Field(description="Full content.")


class ProfileMemory(_Response):
    id: str = Field(description=ID)
    ref: str = Field(description=REF)
    content: str = Field(description="Full content.")
    content_tokens: int = Field(description="Token count of the content.")
    created_at: str = Field(description=TIME)


class RecallResponse(_Response):
    mode: Literal["semantic", "recent"] = Field(description="recent when no query was given.")
    current_time: str = Field(description=TIME)
    memories: list[RecalledMemory] = Field(description="Ranked memories that fit the budget.")
    total_tokens: int = Field(
        description="Tokens of the returned memories' content: what max_tokens bounds."
    )
    truncated: bool = Field(description="True when the token budget left matches out.")
    matched_count: int = Field(description="How many matched before the token budget cut.")
    profile: list[ProfileMemory] = Field(
        description="Profile memories, newest first, trimmed to profile_max_tokens."
    )
    notice: str | None = Field(
        default=None,
        description="Background re-embedding progress, or that recall counts were not updated "
        "(a read-only store).",
    )


class ListedMemory(_Response):
    rank: int = Field(description="Position in the whole result (offset + 1 for the first).")
    id: str = Field(description=ID)
    ref: str = Field(description=REF)
    session_id: str | None = Field(description="Session, or null.")
    kind: str = Field(description=KIND)
    content: str = Field(description="Preview of about 200 characters.")
    preview_truncated: bool = Field(description="True when content is a cut preview.")
    content_tokens: int = Field(description="Token count of the full content.")
    created_at: str = Field(description=TIME)
    recall_count: int = Field(description="How often recall returned it.")
    last_recalled_at: str | None = Field(description="When recall last returned it, or null.")


class ListResponse(_Response):
    memories: list[ListedMemory] = Field(description="This page.")
    total_count: int = Field(description="Memories matching the filters.")
    returned_count: int = Field(description="Entries on this page.")
    has_more: bool = Field(description="True when a further page exists.")
    limit: int = Field(description="Page size used (after the cap of 200).")
    offset: int = Field(description="Entries skipped.")
    sort: str = Field(description="Sort used.")
    current_time: str = Field(description=TIME)
    notice: str | None = Field(default=None, description="Background re-embedding progress.")


class MemoryDetail(_Response):
    id: str = Field(description=ID)
    ref: str = Field(description=REF)
    session_id: str | None = Field(description="Session, or null.")
    kind: str = Field(description=KIND)
    content: str = Field(description="Full, untruncated content.")
    content_tokens: int = Field(description="Token count of the content.")
    created_at: str = Field(description=TIME)
    recall_count: int = Field(description="How often recall returned it.")
    last_recalled_at: str | None = Field(description="When recall last returned it, or null.")
    superseded_by: str | None = Field(description="Ref of the newer version, or null if live.")
    superseded_at: str | None = Field(description="When it was replaced, or null.")
    supersedes: str | None = Field(default=None, description="Ref of the version it replaced.")
    current_time: str | None = Field(default=None, description=TIME)


class UpdateResponse(_Response):
    id: str = Field(description="Id of the new version.")
    ref: str = Field(description="Ref of the new version.")
    session_id: str | None = Field(description="Session (kept from the old version).")
    kind: str = Field(description="Kind (kept from the old version).")
    content_tokens: int = Field(description="Token count of the new content.")
    created_at: str = Field(description=TIME)
    supersedes: RefPair = Field(description="The version it replaced (now hidden).")
    notice: str | None = Field(
        default=None, description="Long content, replaced secrets or re-embedding notice."
    )


class DeleteResponse(_Response):
    id: str = Field(description=ID)
    ref: str = Field(description=REF)
    deleted: Literal[True] = Field(description="Always true.")
    restored: RefPair | None = Field(
        default=None, description="The older version that became current again, if any."
    )


class Health(_Response):
    status: Literal["ok"] = Field(description="ok when the process serves requests.")
    version: str = Field(description="TinyContext version.")


class ErrorDetail(_Response):
    code: str = Field(description="Stable error code from the error table.")
    message: str = Field(description="What went wrong and how to fix it.")


class ErrorResponse(_Response):
    detail: ErrorDetail
