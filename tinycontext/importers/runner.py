"""Run an import: check the whole source, then save it in batches through the save path.

First pass: read every record (a malformed one stops the import before anything is
stored), clean and split the texts, count what would be imported and skipped (all a dry
run does). Second pass: the same items in batches of one session each, minus those already
in the store (ids derived from the source), through plan_saves - secrets redacted, sizes
checked, dedup against the store and the batch, save-time context - then stored with the
source's times. Each batch is one transaction: an interrupted import is rerun, and the
rerun skips what the first run stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from tinycontext.app.core import Core
from tinycontext.app.saving import plan_saves
from tinycontext.domain.errors import TinyContextError
from tinycontext.domain.memory import PROFILE, MemoryInput, clean_content
from tinycontext.ports.store import NewMemory

from . import chatgpt, claude, markdown, mcp_memory, mcp_memory_service, mem0
from .items import (
    ImportItem,
    Skipped,
    SourceError,
    clean_tags,
    fit_metadata,
    memory_id,
    printable_name,
)
from .report import ImportOptions, ImportSummary
from .splitter import split_text

Reader = Callable[[Path, bool], Iterator[ImportItem | Skipped]]
READERS: dict[str, Reader] = {
    "chatgpt": chatgpt.read, "claude": claude.read, "mcp-memory": mcp_memory.read,
    "mem0": mem0.read, "mcp-memory-service": mcp_memory_service.read,
    "markdown": markdown.read,
}
Progress = Callable[[int, int], None]
# Split pieces stay this many tokens under the limit: secrets' placeholders can be longer
# than the secrets they replace.
_MARGIN = 64


class ImportTarget(Protocol):
    """A MemoryService: its Core, and the index upkeep it runs after writes."""

    @property
    def core(self) -> Core: ...

    @property
    def reindexer(self) -> Any: ...


def pieces(core: Core, fmt: str, path: Path, options: ImportOptions,
           summary: ImportSummary) -> Iterator[tuple[str, ImportItem]]:
    """(stable id, item) for every piece to save, in source order; skips go to `summary`."""
    config = core.config
    extra_tags = clean_tags(list(options.tags))
    for found in _read(READERS[fmt], path, options.include_assistant):
        if isinstance(found, Skipped):
            summary.skip(found.reason, found.where)
            continue
        try:
            text = clean_content(found.content)
        except TinyContextError:
            summary.skip("blank once invisible characters are removed", found.source_id)
            continue
        limit = config.max_memory_tokens
        if found.role == "note":
            limit = min(limit, config.save_length_notice_tokens)
        parts = split_text(text, max(16, limit - _MARGIN), core.tokenizer.count)
        if len(parts) > 1:
            summary.split += 1
        session = None if found.kind == PROFILE else (options.session_id or found.session_id)
        tags = clean_tags(list(found.tags) + list(extra_tags))
        for number, part in enumerate(parts):
            source_id = found.source_id if len(parts) == 1 else f"{found.source_id}#{number}"
            item = replace(found, content=part, session_id=session, tags=tags,
                           source_id=source_id, metadata=fit_metadata(found.metadata))
            yield memory_id(fmt, source_id), item


def _read(reader: Reader, path: Path, include_assistant: bool) -> Iterator[ImportItem | Skipped]:
    """The reader's output; a file that cannot be read is a SourceError naming it."""
    label = printable_name(str(path))
    found = reader(path, include_assistant)
    while True:
        try:
            yield next(found)
        except StopIteration:
            return
        except UnicodeDecodeError as exc:
            raise SourceError(label, f"byte {exc.start}", "expected UTF-8 text") from None
        except OSError as exc:
            raise SourceError(label, "", f"could not be read ({exc.strerror or exc})") from None


def run_import(
    service: ImportTarget, fmt: str, path: Path, options: ImportOptions,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import `path` (see the module docstring); a dry run only fills the summary."""
    core = service.core
    summary = ImportSummary(fmt=fmt, dry_run=options.dry_run)
    for stable_id, item in pieces(core, fmt, path, options, summary):
        summary.count(item, already=bool(core.store.find(stable_id, is_ref=False)))
        if progress is not None and summary.pieces % 2000 == 0:
            progress(summary.pieces, 0)  # 0: still checking, the total is not known yet
    if options.dry_run or summary.new == 0:
        return summary
    total = summary.new
    service.reindexer.ensure_started()
    ignored = ImportSummary(fmt=fmt)
    batch: list[tuple[str, ImportItem]] = []
    seen: set[str] = set()
    for stable_id, item in pieces(core, fmt, path, options, ignored):
        if stable_id in seen or core.store.find(stable_id, is_ref=False):
            continue
        if batch and not _same_batch(core, batch[-1][1], item, options.batch_size, len(batch)):
            _save(service, fmt, batch, summary)
            batch, seen = [], set()
            if progress is not None:
                progress(summary.imported + summary.duplicates, total)
        batch.append((stable_id, item))
        seen.add(stable_id)
    if batch:
        _save(service, fmt, batch, summary)
    if progress is not None:
        progress(summary.imported + summary.duplicates, total)
    return summary


def _same_batch(core: Core, last: ImportItem, item: ImportItem, size: int, held: int) -> bool:
    """One batch is one session, in time order, each item within the save-time context
    window of the one before (the save path takes the previous memory as context)."""
    if held >= size or last.session_id != item.session_id or last.kind != item.kind:
        return False
    window = core.config.save_context_minutes
    gap = datetime.fromisoformat(item.created_at) - datetime.fromisoformat(last.created_at)
    return 0 <= gap.total_seconds() <= window * 60


def _save(service: ImportTarget, fmt: str, batch: list[tuple[str, ImportItem]],
          summary: ImportSummary) -> None:
    core = service.core
    session = batch[0][1].session_id
    inputs = [MemoryInput(content=item.content, kind=item.kind, tags=item.tags or None,
                          metadata=item.metadata or None) for _, item in batch]
    plan = plan_saves(core, inputs, session, batch[0][1].created_at)
    renamed: dict[str, str] = {}
    for saved in plan.saved:
        renamed[saved.id] = batch[saved.index][0]
    stored: list[NewMemory] = []
    for new, saved in zip(plan.to_store, plan.saved, strict=True):
        stable_id, item = batch[saved.index]
        memory = replace(new.memory, id=stable_id, created_at=item.created_at)
        context = renamed.get(new.context_id, new.context_id) if new.context_id else None
        stored.append(replace(new, memory=memory, context_id=context))
        if "[redacted:" in memory.content and "[redacted:" not in item.content:
            summary.redacted += 1
    core.store.add(stored)
    service.reindexer.after_write()
    summary.imported += len(stored)
    summary.duplicates += len(plan.skipped)
