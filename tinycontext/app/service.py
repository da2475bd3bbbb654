"""MemoryService: the six operations of SPEC section 2 over the ports. Every adapter calls it.

Each operation is typed (`save`, `recall`, `list_page`, `detail`, `update`, `delete`,
returning the result types of results.py): the transports and telemetry read them, and the
Python API (tinycontext.entry.api) returns their `to_dict()`. The work itself is in the
use-case modules, which take the shared Core.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.errors import EmptyMemoryError, InvalidRequestError
from tinycontext.domain.filters import build_filter
from tinycontext.domain.limits import MAX_ITEMS_PER_SAVE, MAX_QUERY_CHARS, whole_number
from tinycontext.domain.listing import ListQuery
from tinycontext.domain.memory import (
    Memory,
    MemoryInput,
    check_session_id,
    clean_content,
    has_visible,
)
from tinycontext.ports.clock import Clock
from tinycontext.ports.embedder import Embedder, Vector
from tinycontext.ports.store import Page, Store
from tinycontext.ports.tokenizer import Tokenizer

from . import browsing, editing, queries, transfer
from .core import Core
from .recalling import historical_notice, profile_pool, recent_recall, semantic_recall
from .reindex import Reindexer
from .rendering import PLAIN, Framing
from .results import (
    DeleteResult,
    ListPage,
    MemoryDetail,
    R,
    RecallResult,
    SaveResult,
    UpdateResult,
)
from .saving import plan_saves

__all__ = ["MemoryService"]

RECENT_TOP_K = 5


def _positive(value: object, name: str, default: int) -> int:
    return whole_number(value, name, default=default, minimum=1)


class MemoryService:
    """The use cases over the four ports of one store."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        tokenizer: Tokenizer,
        clock: Clock,
        config: TinyContextConfig | None = None,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        background: bool = True,
        release: Callable[[], None] | None = None,
        recall_framing: Framing = PLAIN,
    ) -> None:
        # The store is a port, not the service's to close: whoever composed the service says
        # what its close() also releases (the composition root closes the store it opened).
        self._release = release
        # What a recall's budget counts around each memory when the caller names no framing:
        # the composition gives the prompt frame of MCP (adapters/mcp/frame.py).
        self.recall_framing = recall_framing
        # The stage hook resolves `self._stage` on each call, so a subclass's override
        # (telemetry's spans) reaches the use cases.
        self.core = Core(store, embedder, tokenizer, clock, config or TinyContextConfig(),
                         new_id, stage=lambda name: self._stage(name))
        self.reindexer = Reindexer(
            store, clock, self.model_key, self.embed_documents,
            self.config.embedding_batch_size, background=background,
            stage=lambda: self._stage("reindex"),
            with_context=self.config.save_context_minutes > 0,
            context_weight=self.config.save_context_dense_weight,
        )

    # -- the ports and shared facts (read by the composition, doctor and tests) ------------
    @property
    def store(self) -> Store:
        return self.core.store

    @property
    def embedder(self) -> Embedder:
        return self.core.embedder

    @property
    def tokenizer(self) -> Tokenizer:
        return self.core.tokenizer

    @property
    def clock(self) -> Clock:
        return self.core.clock

    @property
    def config(self) -> TinyContextConfig:
        return self.core.config

    @property
    def model_key(self) -> str:
        return self.core.model_key

    def embed_documents(self, texts: Sequence[str]) -> list[tuple[Vector, bytes | None]]:
        return self.core.embed_documents(texts)

    def _stage(self, name: str) -> AbstractContextManager[None]:
        """Marks an internal stage (rank, reindex); telemetry overrides it with a span."""
        return nullcontext()

    def _with_notice(self, result: R) -> R:
        return result.with_notice(self.reindexer.notice())

    # -- the six operations, typed ---------------------------------------------------------
    def save(
        self, memories: Sequence[MemoryInput | dict[str, Any]], session_id: str | None = None
    ) -> SaveResult:
        self.reindexer.ensure_started()
        if not isinstance(memories, (list, tuple)) or not memories:
            raise EmptyMemoryError("memories is empty: pass a list of {content, kind} items.")
        if len(memories) > MAX_ITEMS_PER_SAVE:
            raise InvalidRequestError(
                f"{len(memories)} memories in one call; save at most {MAX_ITEMS_PER_SAVE} "
                "per call and send the rest in further calls."
            )
        session = check_session_id(session_id)
        plan = plan_saves(self.core, memories, session, self.core.now())
        self.store.add(plan.to_store)
        self.reindexer.after_write()
        return self._with_notice(
            SaveResult(saved=tuple(plan.saved), skipped_duplicates=tuple(plan.skipped))
        )

    def recall(
        self,
        query: str | None = None,
        session_id: str | None = None,
        max_tokens: int | None = None,
        top_k: int | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
        *,
        count: bool = True,
        framing: Framing | None = None,
    ) -> RecallResult:
        """`count=False` answers exactly the same but leaves recall counts alone: a person
        previewing what an agent would get (the web UI's Ask page) is not a recall.
        `framing` is what the caller's transport wraps around each memory: the budget
        counts it (None: the service's `recall_framing`)."""
        if framing is None:
            framing = self.recall_framing
        self.reindexer.ensure_started()
        budget = _positive(max_tokens, "max_tokens", self.config.recall_max_tokens)
        if query is not None and not isinstance(query, str):
            raise InvalidRequestError("query must be a string (or omitted for recent memories).")
        # A query with nothing visible (blank, zero-width characters) asks for recent memories.
        semantic = query is not None and has_visible(query)
        k = _positive(top_k, "top_k", self.config.recall_top_k if semantic else RECENT_TOP_K)
        if query is not None and len(query) > MAX_QUERY_CHARS:
            raise InvalidRequestError(
                f"query is {len(query)} characters; ask a focused question of at most "
                f"{MAX_QUERY_CHARS}."
            )
        filters = build_filter(tags, metadata, since, until, as_of)
        session = self.core.check_session(session_id)
        now = self.core.now()
        # An answer about the past counts nothing as recalled now.
        count = count and filters.as_of is None
        if semantic and query is not None:
            clean_content(query, what="query")
            found = semantic_recall(
                self.core, query, session, budget, k, now, count, framing, filters or None)
        else:
            found = recent_recall(self.core, session, budget, k, now, framing, filters or None)
        profile = profile_pool(self.core, framing, filters.as_of)
        return self._with_notice(found.with_profile(profile).with_notice(
            historical_notice(filters.as_of)))

    def list_page(
        self,
        session_id: str | None = None,
        kind: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = 20,
        offset: int | None = 0,
        sort: str | None = None,
        search: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        as_of: str | None = None,
    ) -> ListPage:
        self.reindexer.ensure_started()
        page = browsing.list_page(
            self.core, session_id, kind, since, until, limit, offset, sort, search,
            build_filter(tags, metadata, as_of=as_of) or None,
        )
        return self._with_notice(page)

    def detail(self, memory_id: str, as_of: str | None = None) -> MemoryDetail:
        return browsing.detail(self.core, memory_id, as_of)

    def update(
        self, memory_id: str, content: str | None, tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> UpdateResult:
        self.reindexer.ensure_started()
        result = editing.update(self.core, memory_id, content, tags, metadata)
        self.reindexer.after_write()  # the store's upkeep indexes the replaced version
        return self._with_notice(result)

    def delete(self, memory_id: str) -> DeleteResult:
        result = editing.delete(self.core, memory_id)
        # Memories that had it as context lost their vector: make it again right away.
        self.reindexer.kick()
        return result

    # -- management queries and import/export (the application's, not the store's) -------
    def overview(self) -> queries.Overview:
        """Counts by kind, never-recalled memories and the time span of the store."""
        return queries.overview(self.core)

    def browse(self, query: ListQuery) -> Page:
        """The store's page for a query built with domain.listing (replaced versions, the
        never-recalled filter, counts with limit 1): what list_page reads, before it becomes
        list entries; the session is checked as list_page checks it. For adapters that show
        more than the list operation does (the web UI), instead of reaching the store."""
        self.core.check_session(query.session_id)
        return self.store.browse(query)

    def session_counts(self, limit: int) -> list[tuple[str, int]]:
        """Live memories per session, the `limit` largest first; [] when the store cannot
        tell cheaply (Store.session_counts)."""
        return self.store.session_counts(limit)

    def export_records(
        self, session_id: str | None = None
    ) -> Iterator[tuple[Memory, bytes | None]]:
        """Every memory (superseded ones too) with its vector, oldest first (export)."""
        return transfer.iter_stored(self.store, session_id)

    def import_jsonl(
        self, lines: Iterable[str], batch_size: int = 256,
        progress: Callable[[transfer.ImportReport], None] | None = None,
    ) -> transfer.ImportReport:
        """Import an export's JSON Lines (see transfer.py for the guarantees)."""
        return transfer.import_jsonl(self.core, lines, batch_size, progress)

    def stop(self) -> None:
        """Stop the background re-embedding (what the service itself runs)."""
        self.reindexer.stop()

    def close(self) -> None:
        """Stop, then release what the composer asked to (e.g. close the store it opened)."""
        release, self._release = self._release, None
        self.stop()
        if release is not None:
            release()
