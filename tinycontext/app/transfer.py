"""Export a store as JSON Lines and import it back (streaming both ways, constant memory).

One memory per line (tinycontext.domain.records). Import keeps ids, timestamps and lifecycle fields,
reuses embeddings made by the current model and re-embeds the rest, and skips ids already
present (so running it twice changes nothing). It reads the file twice: first to check every
line, supersede links included (a link to a missing id or a loop of links would hide
memories from list and recall for good), then to store it in batches. A file with any bad
line is refused with that line's number before anything is stored. Secrets in imported
content are replaced by placeholders as on save (`redact_secrets`); token counts and the
text the model embeds are the save path's (Core.measure, Core.embed_documents). Near-
duplicates are not merged: an import restores a store as it was exported, and the memories
in it were already deduplicated when they were saved.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import IO, Any, Protocol, cast

from tinycontext.domain.chains import Links, link_mismatches, link_problems
from tinycontext.domain.errors import TinyContextError
from tinycontext.domain.memory import Memory, format_timestamp
from tinycontext.domain.records import ImportFormatError, parse_record, record
from tinycontext.ports.store import NewMemory, Store

from .core import Core
from .redacting import checked_labels, redact_content

__all__ = ["PAGE", "ImportReport", "export_jsonl", "import_jsonl", "iter_stored"]

PAGE = 500
CLOCK_SKEW = timedelta(minutes=5)  # how far ahead another machine's clock may have been


class HasCore(Protocol):
    """A MemoryService (or anything holding the use cases' Core)."""

    @property
    def core(self) -> Core: ...


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


def import_jsonl(
    service: HasCore | Core, lines: Iterable[str], batch_size: int = 256,
    progress: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import JSON Lines into the service's store (see module docstring for the guarantees)."""
    core = service if isinstance(service, Core) else service.core
    with _replayable(lines) as again:
        now = core.clock.now()
        _check_file(core.store, again(), lambda text: _check_size(core, text), now)
        return _import_checked(core, again(), batch_size, progress)


def _import_checked(
    core: Core, lines: Iterable[str], batch_size: int,
    progress: Callable[[ImportReport], None] | None,
) -> ImportReport:
    store = core.store
    report = ImportReport()
    pending: list[tuple[Memory, bytes | None]] = []
    pending_ids: set[str] = set()

    def flush() -> None:
        if pending:
            report.reembedded += _store_batch(core, pending)
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
        # An export of an older store (or another tool's) may hold secrets: they are
        # replaced as on save, and the vector, made from the secret, is made again.
        found = redact_content(core.config, memory.content)
        if found.kinds:
            memory, vector = replace(memory, content=found.text, embedding_model=None), None
        tags, metadata, secrets = checked_labels(
            core.config, memory.tags, dict(memory.metadata))
        if secrets:
            memory = replace(memory, tags=tags, metadata=metadata)
        if found.kinds or secrets:
            report.redacted += 1
        pending.append((memory, vector))
        pending_ids.add(memory.id)
        if len(pending) >= batch_size:
            flush()
    flush()
    return report


def _check_size(core: Core, content: str) -> None:
    """The content as it will be stored (secrets replaced) is within max_memory_tokens."""
    content = redact_content(core.config, content).text
    try:
        core.measure(content)
    except TinyContextError as exc:
        raise ValueError(
            exc.message.rstrip(".") + ", or raise max_memory_tokens for this import"
        ) from None


def _future(memory: Memory, now: datetime | None) -> str | None:
    """Why a timestamp of the memory is refused: it is later than now, give or take another
    machine's clock (a memory from the future would top every newest-first list for good and
    confuse since/until and the order of versions)."""
    if now is None:
        return None
    latest = format_timestamp(now + CLOCK_SKEW)
    for field in ("created_at", "last_recalled_at", "superseded_at"):
        value = getattr(memory, field)
        if value is not None and value > latest:
            return (
                f"{field} {value} is in the future (this machine's clock says "
                f"{format_timestamp(now)}; up to {CLOCK_SKEW.seconds // 60} minutes ahead is "
                "accepted): correct the timestamp, or this machine's clock"
            )
    return None


def _check_file(
    store: Store, lines: Iterable[str], check_size: Callable[[str], None] | None = None,
    now: datetime | None = None,
) -> None:
    """Every line parses, fits the size limit, has no timestamp in the future, and every
    supersede link can be stored, else ImportFormatError for the first bad line (a link
    problem is only known once the whole file was read)."""
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
        if (problem := _future(memory, now)) is not None:
            raise ImportFormatError(number, problem)
        if memory.id in ids:
            continue  # a repeated id is skipped on import, so its links do not count
        ids.add(memory.id)
        if memory.superseded_by or memory.supersedes:
            links[memory.id] = Links(memory.superseded_by, memory.supersedes)
            line_of[memory.id] = number
    problems = link_problems(links, lambda i: i in ids or bool(store.find(i, is_ref=False)))
    if not problems:
        problems = link_mismatches(*_new_links(store, links, ids))
    if problems:
        first = min(problems, key=lambda p: line_of[p.memory_id])
        raise ImportFormatError(line_of[first.memory_id], first.describe())


def _new_links(
    store: Store, links: dict[str, Links], ids: set[str]
) -> tuple[dict[str, Links], Callable[[str], Links | None], Callable[[str], bool]]:
    """The links of the file's memories that are not stored yet (stored ones are skipped), and
    a view of any memory's links: as stored when it is, else as the file says."""
    def stored(memory_id: str) -> Memory | None:
        found = store.find(memory_id, is_ref=False)
        return found[0] if found else None

    def view(memory_id: str) -> Links | None:
        memory = stored(memory_id)
        if memory is not None:
            return Links(memory.superseded_by, memory.supersedes)
        return links.get(memory_id, Links()) if memory_id in ids else None

    fresh = {i: own for i, own in links.items() if stored(i) is None}
    return fresh, view, lambda memory_id: stored(memory_id) is not None


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
            return cast(Iterable[str], stream)

        yield rewound
        return
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        for raw in lines:
            spool.write(raw if raw.endswith("\n") else raw + "\n")

        def spooled() -> Iterable[str]:
            spool.seek(0)
            return spool

        yield spooled


def _store_batch(core: Core, batch: list[tuple[Memory, bytes | None]]) -> int:
    """Insert one batch atomically, re-embedding what the current model did not make.

    Token bits (late interaction) are not part of an export: with late interaction on, every
    memory of the batch is run through the model for them, keeping the vectors that match."""
    key, dims = core.model_key, core.embedder.dimensions
    stale = [
        i for i, (m, v) in enumerate(batch)
        if v is None or m.embedding_model != key or len(v) != 4 * dims
    ]
    vectors = [v for _, v in batch]
    bits: list[bytes | None] = [None] * len(batch)
    stale_set = set(stale)
    todo = list(range(len(batch))) if core.late_interaction else stale
    if todo:
        made = core.embed_documents([batch[i][0].content for i in todo])
        for i, (vector, tokens) in zip(todo, made, strict=True):
            bits[i] = tokens
            if i in stale_set:
                vectors[i] = vector
    items = [
        NewMemory(
            replace(m, content_tokens=core.measure(m.content), embedding_model=key),
            vector, tokens=tokens,
        )
        for (m, _), vector, tokens in zip(batch, vectors, bits, strict=True)
    ]
    # A new version of a memory stored live before this import continues its chain: the
    # older one is marked superseded (as update_memory does), so both ends name each other.
    continuing = [item for item in items if _live(core.store, item.memory.supersedes)]
    later = {item.memory.id for item in continuing}
    core.store.add([item for item in items if item.memory.id not in later])
    for item in continuing:
        assert item.memory.supersedes is not None
        core.store.supersede(item.memory.supersedes, item, at=item.memory.created_at)
    return len(stale)


def _live(store: Store, memory_id: str | None) -> bool:
    found = store.find(memory_id, is_ref=False) if memory_id else []
    return bool(found) and found[0].superseded_by is None
