"""Pydantic response models of the REST API (SPEC section 7), derived from the application's
typed results (tinycontext/app/results.py): each model has exactly its result's fields, with
their types (tuples as lists, nested results as their models), and leaves out by default
what the result leaves out when absent (Result.OPTIONAL). What REST adds is its own: the
OpenAPI names, each field's description and the fields' order in a response (the tables
below, which must name every field of the result and no other). Error bodies too
(ErrorResponse). The routes return each result's `to_dict()`.
"""

from __future__ import annotations

import types
import typing
from dataclasses import fields
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from tinycontext.app import results
from tinycontext.app.inputs import KIND

ID = "The memory's full id (uuid4)."
REF = "First 12 hex characters of the id, dashes removed: accepted wherever an id is."
TIME = "UTC timestamp `YYYY-MM-DDTHH:MM:SSZ`."
TAGS = "The memory's tags; left out when it has none."
METADATA = "The memory's metadata; left out when it has none."
TOKENS = "Token count of the content."
LIVE_AT = "When recall last returned it, or null."


class _Response(BaseModel):
    model_config = ConfigDict(extra="ignore")


# A field's type and default where REST states more than the result: the relevance labels,
# and MemoryDetail's fields that REST keeps optional for older clients.
Override = tuple[Any, Any]
_MODELS: dict[type[results.Result], type[_Response]] = {}


def _rest_type(hint: Any) -> Any:
    """The result field's type as REST states it: tuples as lists, results as their models."""
    origin = typing.get_origin(hint)
    if origin is tuple:
        return list[_rest_type(typing.get_args(hint)[0])]  # type: ignore[misc]
    if origin in (Union, types.UnionType):
        parts = tuple(_rest_type(a) for a in typing.get_args(hint))
        return Union[parts]  # noqa: UP007 (built at run time from parts)
    if isinstance(hint, type) and issubclass(hint, results.Result):
        return _MODELS[hint]
    return hint


def _derive(name: str, result: type[results.Result], docs: dict[str, str],
            **overrides: Override) -> type[_Response]:
    hints = typing.get_type_hints(result)
    names = {f.name for f in fields(result)}
    if set(docs) != names:
        raise TypeError(f"{name}: documented {sorted(docs)}, the result has {sorted(names)}")
    spec: dict[str, Any] = {}
    for field, description in docs.items():
        if field in overrides:
            kind, default = overrides[field]
        elif field in result.OPTIONAL:
            kind, default = _rest_type(hints[field]) | None, None
        else:
            kind, default = _rest_type(hints[field]), ...
        info = (Field(default_factory=default, description=description) if callable(default)
                else Field(default, description=description))
        spec[field] = (kind, info)
    model: type[_Response] = create_model(name, __base__=_Response, __module__=__name__,
                                          **spec)
    _MODELS[result] = model
    return model


RefPair = _derive("RefPair", results.RefPair, {"id": ID, "ref": REF})
SimilarTo = _derive("SimilarTo", results.SimilarTo, {
    "ref": "Ref of the stored memory this one closely resembles.",
    "similarity": "Cosine similarity, 0..1."})
SavedItem = _derive("SavedItem", results.SavedItem, {
    "index": "Position of the item in the request's memories list.",
    "id": ID, "ref": REF,
    "session_id": "Session it was saved in (null for profile).",
    "kind": KIND, "content_tokens": TOKENS, "created_at": TIME,
    "similar_to": "Present when a stored memory is very similar: consider a merge.",
    "notice": "Present for long content or when secrets were replaced.",
    "tags": TAGS, "metadata": METADATA})
SkippedItem = _derive("SkippedItem", results.SkippedItem, {
    "index": "Position of the item in the request.",
    "duplicate_of": "Ref of the memory it duplicates.",
    "similarity": "Cosine similarity to that memory."})
SaveResponse = _derive("SaveResponse", results.SaveResult, {
    "saved": "Items written.",
    "skipped_duplicates": "Items not written because they add nothing; only when any.",
    "notice": "Background re-embedding progress."})
Scores = _derive("Scores", results.Scores, {
    "fused": "Fused score, 0..1: relative to the query's best candidate with score fusion "
             "(the default), or the normalised reciprocal-rank score with recall_fusion=rrf.",
    "dense": "Cosine similarity; null if not a dense candidate.",
    "bm25": "BM25 score; null if no keyword matched."})
RecalledMemory = _derive("RecalledMemory", results.RecalledItem, {
    "rank": "1 = best (semantic) or newest (recent).",
    "relevance": "Semantic mode only.", "scores": "Semantic mode only.",
    "content_tokens": TOKENS, "created_at": TIME, "id": ID, "ref": REF,
    "content": "Full content.", "tags": TAGS, "metadata": METADATA,
}, relevance=(Literal["high", "medium", "low"] | None, None))
ProfileMemory = _derive("ProfileMemory", results.ProfileItem, {
    "id": ID, "ref": REF, "content": "Full content.", "content_tokens": TOKENS,
    "created_at": TIME, "tags": TAGS, "metadata": METADATA})
RecallResponse = _derive("RecallResponse", results.RecallResult, {
    "mode": "recent when no query was given.",
    "current_time": TIME,
    "memories": "Ranked memories that fit the budget.",
    "total_tokens": "Tokens of the returned memories' content: what max_tokens bounds.",
    "truncated": "True when the token budget left matches out.",
    "matched_count": "How many matched before the token budget cut.",
    "profile": "Profile memories, newest first, trimmed to profile_max_tokens.",
    "notice": "Background re-embedding progress, or that recall counts were not updated "
              "(a read-only store)."})
ListedMemory = _derive("ListedMemory", results.ListedItem, {
    "rank": "Position in the whole result (offset + 1 for the first).",
    "id": ID, "ref": REF, "session_id": "Session, or null.", "kind": KIND,
    "content": "Preview of about 200 characters.",
    "preview_truncated": "True when content is a cut preview.",
    "content_tokens": "Token count of the full content.", "created_at": TIME,
    "recall_count": "How often recall returned it.", "last_recalled_at": LIVE_AT,
    "tags": TAGS, "metadata": METADATA})
ListResponse = _derive("ListResponse", results.ListPage, {
    "memories": "This page.", "total_count": "Memories matching the filters.",
    "returned_count": "Entries on this page.", "has_more": "True when a further page exists.",
    "limit": "Page size used (after the cap of 200).", "offset": "Entries skipped.",
    "sort": "Sort used.", "current_time": TIME, "notice": "Background re-embedding progress."})
MemoryDetail = _derive("MemoryDetail", results.MemoryDetail, {
    "id": ID, "ref": REF, "session_id": "Session, or null.", "kind": KIND,
    "content": "Full, untruncated content.", "content_tokens": TOKENS, "created_at": TIME,
    "recall_count": "How often recall returned it.", "last_recalled_at": LIVE_AT,
    "superseded_by": "Ref of the newer version, or null if live.",
    "superseded_at": "When it was replaced, or null.",
    "supersedes": "Ref of the version it replaced.", "current_time": TIME,
    "tags": "The memory's tags.", "metadata": "The memory's metadata.",
}, supersedes=(str | None, None), current_time=(str | None, None), tags=(list[str], list),
   metadata=(dict[str, Any], dict))
UpdateResponse = _derive("UpdateResponse", results.UpdateResult, {
    "id": "Id of the new version.", "ref": "Ref of the new version.",
    "session_id": "Session (kept from the old version).",
    "kind": "Kind (kept from the old version).",
    "content_tokens": "Token count of the new content.", "created_at": TIME,
    "supersedes": "The version it replaced (now hidden).",
    "notice": "Long content, replaced secrets or re-embedding notice.",
    "tags": TAGS, "metadata": METADATA})
DeleteResponse = _derive("DeleteResponse", results.DeleteResult, {
    "id": ID, "ref": REF, "deleted": "Always true.",
    "restored": "The older version that became current again, if any."})


class Health(_Response):
    status: Literal["ok"] = Field(description="ok when the process serves requests.")
    version: str = Field(description="TinyContext version.")


class ErrorDetail(_Response):
    code: str = Field(description="Stable error code from the error table.")
    message: str = Field(description="What went wrong and how to fix it.")


class ErrorResponse(_Response):
    detail: ErrorDetail
