"""Pydantic request models of the REST API (SPEC section 7); the response models are in
responses.py.

Types are checked here (a wrong type or a missing field is a 422); values are checked by the
engine, so a blank content, a bad kind or sort, or top_k < 1 get the same error code in every
adapter (the 400/404/409 table). The schema still states those value rules (ranges, lengths,
patterns, taken from the domain's own constants) without enforcing them here, so a client
reading the OpenAPI document knows them and the engine stays the one place that decides.
Only pydantic, the pure domain and the shared input types (tinycontext.app.inputs, which the
MCP server validates too) are imported.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from tinycontext.app.inputs import (
    AS_OF,
    METADATA,
    METADATA_FILTER,
    TAGS,
    TAGS_FILTER,
    AtLeastOne,
    AtLeastZero,
    Content,
    Kind,
    MemoryItem,
    Metadata,
    Tags,
)
from tinycontext.app.inputs import stated as _stated
from tinycontext.app.inputs import whole_number as _integer
from tinycontext.domain.limits import MAX_ITEMS_PER_SAVE, MAX_QUERY_CHARS
from tinycontext.domain.listing import MAX_SEARCH_CHARS, SORTS
from tinycontext.domain.memory import MAX_SESSION_CHARS

__all__ = [
    "GetRequest", "ListQuery", "ListRequest", "MemoryIdRequest", "RecallQuery", "RecallRequest",
    "SaveRequest", "UpdateRequest"
]

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
SINCE = "ISO-8601 date or datetime, inclusive (on created_at)."
UNTIL = "ISO-8601 date or datetime, inclusive (a date covers its day)."
# Metadata in a query string: one parameter holding a JSON object (the engine checks it).
MetadataText = Annotated[str, _stated({"type": "string", "contentMediaType": "application/json"})]
# Blank (no filter), or keywords with at least one letter or digit.
KEYWORD = "[^\\W_]"
Search = Annotated[str, _stated({
    "type": "string", "maxLength": MAX_SEARCH_CHARS, "pattern": "^\\s*$|" + KEYWORD,
})]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


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
    tags: Tags | None = Field(default=None, description=TAGS_FILTER)
    metadata: Metadata | None = Field(default=None, description=METADATA_FILTER)
    since: Instant | None = Field(default=None, description=SINCE)
    until: Instant | None = Field(default=None, description=UNTIL)
    as_of: Instant | None = Field(default=None, description=AS_OF)


class RecallQuery(RecallRequest):
    """RecallRequest as query-string parameters (numbers arrive as text; tags repeat the
    parameter; metadata is a JSON object in one parameter)."""

    max_tokens: QueryAtLeastOne | None = Field(default=None, description=MAX_TOKENS)
    top_k: QueryAtLeastOne | None = Field(default=None, description=TOP_K)
    metadata: MetadataText | None = Field(  # type: ignore[assignment]
        default=None, description=METADATA_FILTER + " A JSON object.")


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
    since: Instant | None = Field(default=None, description=SINCE)
    until: Instant | None = Field(default=None, description=UNTIL)
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
        "digit); all must match, each may be a prefix.",
    )
    tags: Tags | None = Field(default=None, description=TAGS_FILTER)
    metadata: Metadata | None = Field(default=None, description=METADATA_FILTER)
    as_of: Instant | None = Field(default=None, description=AS_OF)


class ListQuery(ListRequest):
    """ListRequest as query-string parameters (numbers arrive as text)."""

    limit: QueryAtLeastOne | None = Field(default=None, description=LIMIT)
    offset: QueryAtLeastZero | None = Field(default=None, description=OFFSET)
    metadata: MetadataText | None = Field(  # type: ignore[assignment]
        default=None, description=METADATA_FILTER + " A JSON object.")


class MemoryIdRequest(_Request):
    memory_id: MemoryKey = Field(description="Full id or 12-hex ref.")


class GetRequest(MemoryIdRequest):
    as_of: Instant | None = Field(
        default=None, description="The version of this memory that was current then.")


class UpdateRequest(_Request):
    # The engine refuses an update that changes nothing: the schema says one must be given.
    model_config = ConfigDict(extra="forbid", json_schema_extra={"anyOf": [
        {"required": [name], "properties": {name: {"not": {"type": "null"}}}}
        for name in ("content", "tags", "metadata")
    ]})
    memory_id: MemoryKey = Field(description="Full id or 12-hex ref of the memory to replace.")
    content: Content | None = Field(
        default=None,
        description="The complete new text (at most max_memory_tokens tokens, as for a save); "
        "omitted keeps the old text (to change only tags or metadata).",
    )
    tags: Tags | None = Field(
        default=None, description=TAGS + " Omitted keeps the old ones; [] removes them.")
    metadata: Metadata | None = Field(
        default=None, description=METADATA + " Omitted keeps the old; {} removes it.")
