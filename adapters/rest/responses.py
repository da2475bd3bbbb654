"""Pydantic response models of the REST API (SPEC section 7): how the application's typed
results (tinycontext/app/results.py) are documented in the OpenAPI schema. The routes return
each result's `to_dict()`; tests/unit/test_result_schema.py keeps these fields equal to the
results' fields. Error bodies too (ErrorResponse).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tinycontext.app.inputs import KIND

ID = "The memory's full id (uuid4)."
REF = "First 12 hex characters of the id, dashes removed: accepted wherever an id is."
TIME = "UTC timestamp `YYYY-MM-DDTHH:MM:SSZ`."
TAGS = "The memory's tags; left out when it has none."
METADATA = "The memory's metadata; left out when it has none."


class _Response(BaseModel):
    model_config = ConfigDict(extra="ignore")


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
    tags: list[str] | None = Field(default=None, description=TAGS)
    metadata: dict[str, Any] | None = Field(default=None, description=METADATA)


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
    fused: float = Field(
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
    tags: list[str] | None = Field(default=None, description=TAGS)
    metadata: dict[str, Any] | None = Field(default=None, description=METADATA)


class ProfileMemory(_Response):
    id: str = Field(description=ID)
    ref: str = Field(description=REF)
    content: str = Field(description="Full content.")
    content_tokens: int = Field(description="Token count of the content.")
    created_at: str = Field(description=TIME)
    tags: list[str] | None = Field(default=None, description=TAGS)
    metadata: dict[str, Any] | None = Field(default=None, description=METADATA)


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
    tags: list[str] | None = Field(default=None, description=TAGS)
    metadata: dict[str, Any] | None = Field(default=None, description=METADATA)


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
    tags: list[str] = Field(default_factory=list, description="The memory's tags.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="The memory's metadata.")


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
    tags: list[str] | None = Field(default=None, description=TAGS)
    metadata: dict[str, Any] | None = Field(default=None, description=METADATA)


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
