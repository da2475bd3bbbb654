"""MemoryService: the six operations of SPEC section 2 over the ports. Every adapter calls it."""

from __future__ import annotations

import contextvars
import hashlib
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

from tinycontext.config import TinyContextConfig
from tinycontext.domain import listing
from tinycontext.domain.errors import (
    AmbiguousMemoryReferenceError,
    EmptyMemoryError,
    InvalidRequestError,
    MemoryNotFoundError,
    SessionNotFoundError,
)
from tinycontext.domain.lifecycle import check_updatable, plan_deletion
from tinycontext.domain.limits import MAX_ITEMS_PER_SAVE, MAX_QUERY_CHARS, whole_number
from tinycontext.domain.memory import (
    Memory,
    MemoryInput,
    check_session_id,
    clean_content,
    format_timestamp,
    has_visible,
    parse_memory_key,
    ref_of,
)
from tinycontext.domain.recall import SCORE
from tinycontext.ports.clock import Clock
from tinycontext.ports.embedder import Embedder, Vector
from tinycontext.ports.store import NewMemory, Store
from tinycontext.ports.token_embedder import TokenEmbedder
from tinycontext.ports.tokenizer import Tokenizer
from tinycontext.rendering import MEMORY_FRAME, NEEDS_ESCAPE, escape

from .recalling import profile_pool, recent_recall, semantic_recall
from .redacting import add_notice, redact_content
from .reindex import Reindexer
from .saving import measure, plan_saves
from .vectors import CONTEXT_KEY, TOKENS_KEY, RecentVectors, token_bits

T = TypeVar("T")
RECENT_TOP_K = 5


def _positive(value: object, name: str, default: int) -> int:
    return whole_number(value, name, default=default, minimum=1)


class MemoryService:
    """Use cases over the four ports; returns plain JSON-ready dicts."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        tokenizer: Tokenizer,
        clock: Clock,
        config: TinyContextConfig | None = None,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        background: bool = True,
    ) -> None:
        self.store, self.embedder, self.tokenizer, self.clock = store, embedder, tokenizer, clock
        self.config = config or TinyContextConfig()
        self._new_id = new_id
        self._frame_tokens: int | None = None
        # Own (unmixed) vectors of the last episodic memories saved: the next save in their
        # session takes one as context without embedding its text again.
        self.recent_vectors = RecentVectors()
        self.reindexer = Reindexer(
            store, clock, self.model_key, self.embed_documents,
            self.config.embedding_batch_size, background=background,
            stage=lambda: self._stage("reindex"),
            with_context=self.config.save_context_minutes > 0,
        )

    # -- shared helpers ------------------------------------------------------------------
    def _stage(self, name: str) -> AbstractContextManager[None]:
        """Marks an internal stage (rank, reindex); telemetry overrides it with a span."""
        return nullcontext()

    def background_call(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run `fn` on the process's helper threads, carrying the caller's context (tracing)."""
        context = contextvars.copy_context()
        return _helper_threads().submit(context.run, fn, *args)

    @property
    def model_key(self) -> str:
        """The embedder's key plus the document prefix and whether vectors carry save-time
        context: a change of any re-embeds."""
        key = self.embedder.model_key
        prefix = self.config.dense_document_prefix
        if prefix:
            key += f"+doc:{hashlib.sha256(prefix.encode()).hexdigest()[:8]}"
        if self.config.save_context_minutes > 0:
            key += CONTEXT_KEY
        if self.late_interaction:
            key += TOKENS_KEY
        return key

    @property
    def late_interaction(self) -> bool:
        """Whether recall rescores with token vectors (on by default; needs a model that
        exposes token states, which the default does)."""
        return (
            self.config.recall_late_interaction and self.config.recall_fusion == SCORE
            and isinstance(self.embedder, TokenEmbedder) and self.embedder.has_tokens
        )

    def embed_documents(self, texts: Sequence[str]) -> list[tuple[Vector, bytes | None]]:
        """Vectors of memory texts and, with late interaction, their token sign bits."""
        documents = [self._document_text(t) for t in texts]
        if not self.late_interaction:
            return [(v, None) for v in self.embedder.embed(documents)]
        dims = self.embedder.dimensions
        return [
            (vector, token_bits(rows, dims))
            for vector, rows in self.embedder.embed_with_tokens(documents, True)  # type: ignore[attr-defined]
        ]

    def _document_text(self, content: str) -> str:
        return self.config.dense_document_prefix + content

    def _now(self) -> str:
        return format_timestamp(self.clock.now())

    def _with_notice(self, result: dict[str, Any]) -> dict[str, Any]:
        notice = self.reindexer.notice()
        if notice:
            result["notice"] = (result["notice"] + " " + notice) if result.get("notice") else notice
        return result

    def resolve(self, memory_id: object) -> Memory:
        """The one memory an id or ref names, or memory_not_found / ambiguous."""
        key = parse_memory_key(memory_id)
        found = self.store.find(key.value, key.is_ref)
        if not found:
            raise MemoryNotFoundError(
                f"No memory has the {'ref' if key.is_ref else 'id'} {key.value}; "
                "list_memories shows what is stored."
            )
        if len(found) > 1:
            raise AmbiguousMemoryReferenceError(
                f"The ref {key.value} matches {len(found)} memories "
                f"({', '.join(m.id for m in found[:5])}); pass the full id instead."
            )
        return found[0]

    def _check_session(self, session_id: object) -> str | None:
        session = check_session_id(session_id)
        if session is not None and not self.store.session_exists(session):
            raise SessionNotFoundError(
                f"No memory was ever saved in session {session!r}; check the name, or omit "
                "session_id to use the whole store."
            )
        return session

    def _frame_cost(self) -> int:
        if self._frame_tokens is None:
            self._frame_tokens = self.tokenizer.count(MEMORY_FRAME)
        return self._frame_tokens

    def _cost(self, memory: Memory) -> int:
        """Tokens this memory takes in the rendered recall text (escaped content + tag)."""
        tokens = memory.content_tokens
        if not NEEDS_ESCAPE.isdisjoint(memory.content):
            tokens = self.tokenizer.count(escape(memory.content))
        return tokens + self._frame_cost()

    # -- save ----------------------------------------------------------------------------
    def save_memories(
        self, memories: Sequence[MemoryInput | dict[str, Any]], session_id: str | None = None
    ) -> dict[str, Any]:
        self.reindexer.ensure_started()
        if not isinstance(memories, (list, tuple)) or not memories:
            raise EmptyMemoryError("memories is empty: pass a list of {content, kind} items.")
        if len(memories) > MAX_ITEMS_PER_SAVE:
            raise InvalidRequestError(
                f"{len(memories)} memories in one call; save at most {MAX_ITEMS_PER_SAVE} "
                "per call and send the rest in further calls."
            )
        session = check_session_id(session_id)
        plan = plan_saves(self, memories, session, self._now())
        self.store.add([item for item in plan.to_store])
        self.reindexer.after_write()
        result: dict[str, Any] = {"saved": plan.saved}
        if plan.skipped:
            result["skipped_duplicates"] = plan.skipped
        return self._with_notice(result)

    # -- recall --------------------------------------------------------------------------
    def recall_memories(
        self,
        query: str | None = None,
        session_id: str | None = None,
        max_tokens: int | None = None,
        top_k: int | None = None,
        *,
        count: bool = True,
    ) -> dict[str, Any]:
        """`count=False` answers exactly the same but leaves recall counts alone: a person
        previewing what an agent would get (the web UI's Ask page) is not a recall."""
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
        session = self._check_session(session_id)
        now = self._now()
        result: dict[str, Any] = {"current_time": now}
        if semantic:
            clean_content(query, what="query")
            result.update(semantic_recall(
                self, query, session, budget, k, now, count))  # type: ignore[arg-type]
        else:
            result.update(recent_recall(self, session, budget, k))
        result["profile"] = profile_pool(self)
        return self._with_notice(result)

    # -- list / get ----------------------------------------------------------------------
    def list_memories(
        self,
        session_id: str | None = None,
        kind: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = 20,
        offset: int | None = 0,
        sort: str | None = None,
        search: str | None = None,
    ) -> dict[str, Any]:
        self.reindexer.ensure_started()
        query = listing.build_list_query(
            check_session_id(session_id), kind, since, until, limit, offset, sort, search
        )
        self._check_session(query.session_id)
        page = self.store.browse(query)
        entries = []
        for position, hit in enumerate(page.memories, start=query.offset + 1):
            m = hit.memory
            text, cut = listing.preview(m.content)
            entries.append(
                {
                    "rank": position, "id": m.id, "ref": m.ref, "session_id": m.session_id,
                    "kind": m.kind, "content": text, "preview_truncated": cut,
                    "content_tokens": m.content_tokens, "created_at": m.created_at,
                    "recall_count": m.recall_count, "last_recalled_at": m.last_recalled_at,
                }
            )
        return self._with_notice(
            {
                "memories": entries,
                "total_count": page.total_count,
                "returned_count": len(entries),
                "has_more": query.offset + len(entries) < page.total_count,
                "limit": query.limit,
                "offset": query.offset,
                "sort": query.sort,
                "current_time": self._now(),
            }
        )

    def get_memory(self, memory_id: str) -> dict[str, Any]:
        m = self.resolve(memory_id)
        return {
            "id": m.id, "ref": m.ref, "session_id": m.session_id, "kind": m.kind,
            "content": m.content, "content_tokens": m.content_tokens,
            "created_at": m.created_at, "recall_count": m.recall_count,
            "last_recalled_at": m.last_recalled_at,
            "superseded_by": ref_of(m.superseded_by) if m.superseded_by else None,
            "superseded_at": m.superseded_at,
            "supersedes": ref_of(m.supersedes) if m.supersedes else None,
            "current_time": self._now(),
        }

    # -- update / delete -----------------------------------------------------------------
    def update_memory(self, memory_id: str, content: str) -> dict[str, Any]:
        self.reindexer.ensure_started()
        old = self.resolve(memory_id)
        check_updatable(old)
        redaction = redact_content(self.config, clean_content(content))
        text = redaction.text
        tokens = measure(self, text)
        [(vector, bits)] = self.embed_documents([text])
        now = self._now()
        new = Memory(
            id=self._new_id(), content=text, kind=old.kind, session_id=old.session_id,
            created_at=now, content_tokens=tokens, supersedes=old.id,
            embedding_model=self.model_key,
        )
        self.store.supersede(old.id, NewMemory(new, vector, tokens=bits), now)
        result: dict[str, Any] = {
            "id": new.id, "ref": new.ref, "session_id": new.session_id, "kind": new.kind,
            "content_tokens": tokens, "created_at": now,
            "supersedes": {"id": old.id, "ref": old.ref},
        }
        if tokens > self.config.save_length_notice_tokens:
            result["notice"] = long_content_notice(tokens, self.config.save_length_notice_tokens)
        add_notice(result, redaction.notice)
        return self._with_notice(result)

    def delete_memory(self, memory_id: str) -> dict[str, Any]:
        target = self.resolve(memory_id)
        predecessor = None
        if target.supersedes:
            found = self.store.find(target.supersedes, is_ref=False)
            predecessor = found[0] if found else None
        plan = plan_deletion(target, predecessor)
        self.store.delete(plan.target_id, plan.predecessor_id, plan.successor_id)
        # Memories that had it as context lost their vector: make it again right away.
        self.reindexer.kick()
        result: dict[str, Any] = {"id": target.id, "ref": target.ref, "deleted": True}
        if plan.predecessor_id and plan.successor_id is None:
            result["restored"] = {"id": plan.predecessor_id, "ref": ref_of(plan.predecessor_id)}
        return result

    def close(self) -> None:
        self.reindexer.stop()
        self.store.close()


_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _helper_threads() -> ThreadPoolExecutor:
    """Helper threads shared by every service in the process (hosted mode runs many services),
    created on first use so importing the module starts nothing."""
    global _executor
    if _executor is None:
        with _executor_lock:
            if _executor is None:
                _executor = ThreadPoolExecutor(4, thread_name_prefix="tinycontext")
    return _executor


def long_content_notice(tokens: int, limit: int) -> str:
    return (
        f"This memory is {tokens} tokens (over {limit}). It was saved, but recall works best "
        "with short single facts: consider splitting it into separate memories."
    )
