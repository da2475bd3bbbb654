"""Export a store as JSON Lines and import it back (streaming both ways, constant memory).

One memory per line with every stored field, the key of the model that embedded it and the
embedding itself (base64 of little-endian float32, or null). Import keeps ids, timestamps
and lifecycle fields, reuses embeddings made by the current model and re-embeds the rest,
and skips ids already present (so running it twice changes nothing). It reads the file twice:
first to check every line, supersede links included (a link to a missing id or a loop of
links would hide memories from list and recall for good), then to store it in batches. A
file with any bad line is refused with that line's number before anything is stored.
Secrets in imported content are replaced by placeholders as on save (`redact_secrets`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import IO, Any

from tinycontext.domain.chains import Links, link_problems
from tinycontext.domain.errors import InvalidRequestError, TinyContextError
from tinycontext.domain.memory import (
    PROFILE,
    Memory,
    check_kind,
    check_session_id,
    clean_content,
    parse_memory_key,
)
from tinycontext.domain.secrets import redact
from tinycontext.ports.store import NewMemory, Store
from tinycontext.saving import measure

PAGE = 500
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


class ImportFormatError(InvalidRequestError):
    """A line of an import file is not a valid memory record; the message names the line."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(
            f"line {line}: {problem}. Nothing was imported; fix the line and run the import "
            "again."
        )
        self.line = line


# -- export ----------------------------------------------------------------------------------
def iter_stored(
    store: Store, session_id: str | None = None
) -> Iterator[tuple[Memory, bytes | None]]:
    """Every memory (superseded ones too) with its vector, oldest first, a page at a time."""
    after = 0
    while True:
        page = store.export_page(after, PAGE, session_id)
        if not page:
            return
        for _, memory, vector in page:
            yield memory, vector
        after = page[-1][0]


def record(memory: Memory, vector: bytes | None, with_embedding: bool = True) -> dict[str, Any]:
    """The JSON object of one exported memory."""
    return {
        "id": memory.id, "ref": memory.ref, "kind": memory.kind, "session_id": memory.session_id,
        "content": memory.content, "created_at": memory.created_at,
        "content_tokens": memory.content_tokens, "recall_count": memory.recall_count,
        "last_recalled_at": memory.last_recalled_at, "superseded_by": memory.superseded_by,
        "superseded_at": memory.superseded_at, "supersedes": memory.supersedes,
        "embedding_model": memory.embedding_model if vector is not None else None,
        "embedding": base64.b64encode(vector).decode() if with_embedding and vector else None,
    }


def export_jsonl(
    store: Store, out: IO[str], session_id: str | None = None, with_embeddings: bool = True,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Write every memory (or one session's) as JSON Lines; returns how many were written."""
    count = 0
    for memory, vector in iter_stored(store, session_id):
        out.write(json.dumps(record(memory, vector, with_embeddings), ensure_ascii=False) + "\n")
        count += 1
        if progress is not None and count % 10000 == 0:
            progress(count)
    return count


# -- import ----------------------------------------------------------------------------------
@dataclass
class ImportReport:
    imported: int = 0
    already_present: int = 0
    reembedded: int = 0
    lines: int = 0
    redacted: int = 0  # memories in which a secret was replaced by a placeholder


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
    )
    return memory, vector


def import_jsonl(
    service: Any, lines: Iterable[str], batch_size: int = 256,
    progress: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import JSON Lines into the service's store (see module docstring for the guarantees)."""
    store: Store = service.store
    with _replayable(lines) as again:
        _check_file(store, again(), lambda text: _check_size(service, text))
        return _import_checked(service, again(), batch_size, progress)


def _import_checked(
    service: Any, lines: Iterable[str], batch_size: int,
    progress: Callable[[ImportReport], None] | None,
) -> ImportReport:
    store: Store = service.store
    report = ImportReport()
    redacting = service.config.redact_secrets
    pending: list[tuple[Memory, bytes | None]] = []
    pending_ids: set[str] = set()

    def flush() -> None:
        if pending:
            report.reembedded += _store_batch(service, pending)
            report.imported += len(pending)
            pending.clear()
            pending_ids.clear()
            if progress is not None:
                progress(report)

    for number, raw in enumerate(lines, start=1):
        report.lines = number
        if not raw.strip():
            continue
        memory, vector = parse_record(raw)  # checked by _check_file
        if memory.id in pending_ids or store.find(memory.id, is_ref=False):
            report.already_present += 1
            continue
        if redacting:
            # An export of an older store (or another tool's) may hold secrets: they are
            # replaced as on save, and the vector, made from the secret, is made again.
            found = redact(memory.content)
            if found.kinds:
                memory, vector = replace(memory, content=found.text, embedding_model=None), None
                report.redacted += 1
        pending.append((memory, vector))
        pending_ids.add(memory.id)
        if len(pending) >= batch_size:
            flush()
    flush()
    return report


def _check_size(service: Any, content: str) -> None:
    """The content as it will be stored (secrets replaced) is within max_memory_tokens."""
    if service.config.redact_secrets:
        content = redact(content).text
    try:
        measure(service, content)
    except TinyContextError as exc:
        raise ValueError(
            exc.message.rstrip(".") + ", or raise max_memory_tokens for this import"
        ) from None


def _check_file(
    store: Store, lines: Iterable[str], check_size: Callable[[str], None] | None = None
) -> None:
    """Every line parses, fits the size limit, and every supersede link can be stored, else
    ImportFormatError for the first bad line (a link problem is only known once the whole
    file was read)."""
    ids: set[str] = set()
    links: dict[str, Links] = {}
    line_of: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            memory, _ = parse_record(raw)
            if check_size is not None:
                check_size(memory.content)
        except ValueError as exc:
            raise ImportFormatError(number, str(exc)) from None
        if memory.id in ids:
            continue  # a repeated id is skipped on import, so its links do not count
        ids.add(memory.id)
        if memory.superseded_by or memory.supersedes:
            links[memory.id] = Links(memory.superseded_by, memory.supersedes)
            line_of[memory.id] = number
    problems = link_problems(links, lambda i: i in ids or bool(store.find(i, is_ref=False)))
    if problems:
        first = min(problems, key=lambda p: line_of[p.memory_id])
        raise ImportFormatError(line_of[first.memory_id], first.describe())


@contextmanager
def _replayable(lines: Iterable[str]) -> Iterator[Callable[[], Iterable[str]]]:
    """Something that yields the same lines twice: a list as is, a seekable file rewound,
    anything else (a pipe) copied to an owner-only temporary file that never outlives it."""
    if isinstance(lines, list | tuple):
        yield lambda: lines
        return
    seekable = getattr(lines, "seekable", None)
    if seekable is not None and seekable():
        stream: Any = lines
        start = stream.tell()

        def rewound() -> Iterable[str]:
            stream.seek(start)
            return stream

        yield rewound
        return
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        for raw in lines:
            spool.write(raw if raw.endswith("\n") else raw + "\n")

        def spooled() -> Iterable[str]:
            spool.seek(0)
            return spool

        yield spooled


def _store_batch(service: Any, batch: list[tuple[Memory, bytes | None]]) -> int:
    """Insert one batch atomically, re-embedding what the current model did not make.

    Token bits (late interaction) are not part of an export: with late interaction on, every
    memory of the batch is run through the model for them, keeping the vectors that match."""
    key, dims = service.model_key, service.embedder.dimensions
    stale = [
        i for i, (m, v) in enumerate(batch)
        if v is None or m.embedding_model != key or len(v) != 4 * dims
    ]
    vectors = [v for _, v in batch]
    bits: list[bytes | None] = [None] * len(batch)
    stale_set = set(stale)
    todo = list(range(len(batch))) if service.late_interaction else stale
    if todo:
        made = service.embed_documents([batch[i][0].content for i in todo])
        for i, (vector, tokens) in zip(todo, made, strict=True):
            bits[i] = tokens
            if i in stale_set:
                vectors[i] = vector
    items = [
        NewMemory(
            replace(m, content_tokens=service.tokenizer.count(m.content), embedding_model=key),
            vector, tokens=tokens,
        )
        for (m, _), vector, tokens in zip(batch, vectors, bits, strict=True)
    ]
    service.store.add(items)
    return len(stale)
