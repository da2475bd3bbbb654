"""The JSON Lines record of one memory (export and import; SPEC section 9): every stored
field, the key of the model that embedded it and the embedding (base64 of little-endian
float32, or null), and the checks a line must pass to be imported."""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import datetime
from typing import Any

from tinycontext.domain.errors import InvalidRequestError, TinyContextError
from tinycontext.domain.labels import check_metadata, check_tags
from tinycontext.domain.memory import (
    PROFILE,
    Memory,
    check_kind,
    check_session_id,
    clean_content,
    parse_memory_key,
)

_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


class ImportFormatError(InvalidRequestError):
    """A line of an import file is not a valid memory record; the message names the line."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(
            f"line {line}: {problem}. Nothing was imported; fix the line and run the import "
            "again."
        )
        self.line = line


def record(memory: Memory, vector: bytes | None, with_embedding: bool = True) -> dict[str, Any]:
    """The JSON object of one exported memory (tags and metadata only when it has them: an
    untagged store exports what it did before they existed)."""
    out: dict[str, Any] = {
        "id": memory.id, "ref": memory.ref, "kind": memory.kind, "session_id": memory.session_id,
        "content": memory.content, "created_at": memory.created_at,
        "content_tokens": memory.content_tokens, "recall_count": memory.recall_count,
        "last_recalled_at": memory.last_recalled_at, "superseded_by": memory.superseded_by,
        "superseded_at": memory.superseded_at, "supersedes": memory.supersedes,
        "embedding_model": memory.embedding_model if vector is not None else None,
        "embedding": base64.b64encode(vector).decode() if with_embedding and vector else None,
    }
    if memory.tags:
        out["tags"] = list(memory.tags)
    if memory.metadata:
        out["metadata"] = dict(memory.metadata)
    return out


def _stamp(data: dict[str, Any], key: str, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not _STAMP.match(value):
        raise ValueError(f"{key} must be a UTC timestamp like 2026-07-31T10:15:00Z")
    datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")  # rejects impossible dates
    return value


def _uuid(data: dict[str, Any], key: str, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    try:
        parsed = parse_memory_key(value) if isinstance(value, str) else None
    except TinyContextError:
        parsed = None
    if parsed is None or parsed.is_ref:
        raise ValueError(f"{key} must be a full memory id (uuid)")
    return parsed.value


def parse_record(raw: str) -> tuple[Memory, bytes | None]:
    """A memory (embedding_model = the key that made `vector`) from one line, or ValueError."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    try:
        memory_id = _uuid(data, "id", required=True)
        content = clean_content(data.get("content"))
        kind = check_kind(data.get("kind"))
        session = check_session_id(data.get("session_id"))
        tags = check_tags(data.get("tags"))
        metadata = check_metadata(data.get("metadata"))
    except TinyContextError as exc:
        raise ValueError(exc.message) from None
    if kind == PROFILE and session is not None:
        raise ValueError("a profile memory cannot have a session_id")
    count = data.get("recall_count", 0)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError("recall_count must be a whole number >= 0")
    vector: bytes | None = None
    if data.get("embedding") is not None:
        try:
            vector = base64.b64decode(str(data["embedding"]), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("embedding must be base64 text or null") from None
    model = data.get("embedding_model")
    memory = Memory(
        id=memory_id or "", content=content, kind=kind, session_id=session,
        created_at=_stamp(data, "created_at", required=True) or "", content_tokens=0,
        recall_count=count, last_recalled_at=_stamp(data, "last_recalled_at"),
        superseded_by=_uuid(data, "superseded_by"), superseded_at=_stamp(data, "superseded_at"),
        supersedes=_uuid(data, "supersedes"),
        embedding_model=model if isinstance(model, str) and vector is not None else None,
        tags=tags, metadata=metadata,
    )
    return memory, vector
