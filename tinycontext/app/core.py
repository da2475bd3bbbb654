"""What every use case shares: the four ports, the settings and a few facts derived from them.

The use-case modules (saving, recalling, browsing, editing, queries, transfer) take this
object, never the MemoryService, so none of them imports the service and the service
imports them: no cycle. Telemetry's stage spans come in through `stage`.
"""

from __future__ import annotations

import contextvars
import hashlib
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.errors import (
    AmbiguousMemoryReferenceError,
    MemoryNotFoundError,
    SessionNotFoundError,
)
from tinycontext.domain.limits import check_length, check_tokens
from tinycontext.domain.memory import Memory, check_session_id, format_timestamp, parse_memory_key
from tinycontext.domain.recall import SCORE
from tinycontext.ports.clock import Clock
from tinycontext.ports.embedder import Embedder, Vector
from tinycontext.ports.store import Store
from tinycontext.ports.token_embedder import TokenEmbedder
from tinycontext.ports.tokenizer import Tokenizer

from .rendering import Framing
from .results import join_notices
from .vectors import TOKENS_KEY, RecentVectors, context_key, token_bits

T = TypeVar("T")


def _new_uuid() -> str:
    return str(uuid.uuid4())


def _no_stage(name: str) -> AbstractContextManager[None]:
    return nullcontext()


class Core:
    """The ports and settings of one store, with the helpers the use cases have in common."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        tokenizer: Tokenizer,
        clock: Clock,
        config: TinyContextConfig,
        new_id: Callable[[], str] = _new_uuid,
        stage: Callable[[str], AbstractContextManager[None]] = _no_stage,
    ) -> None:
        self.store, self.embedder, self.tokenizer, self.clock = store, embedder, tokenizer, clock
        self.config = config
        self.new_id = new_id
        # Marks an internal stage (rank, late interaction, reindex); telemetry makes it a span.
        self.stage = stage
        self._frame_tokens: dict[str, int] = {}
        # Own (unmixed) vectors of the last episodic memories saved: the next save in their
        # session takes one as context without embedding its text again.
        self.recent_vectors = RecentVectors()

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
            key += context_key(self.config.save_context_dense_weight)
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

    def document_text(self, content: str) -> str:
        """What the model embeds for a memory: the configured document prefix + content."""
        return self.config.dense_document_prefix + content

    def embed_documents(self, texts: Sequence[str]) -> list[tuple[Vector, bytes | None]]:
        """Vectors of memory texts and, with late interaction, their token sign bits."""
        documents = [self.document_text(t) for t in texts]
        embedder = self.embedder
        if not (self.late_interaction and isinstance(embedder, TokenEmbedder)):
            return [(v, None) for v in embedder.embed(documents)]
        dims = embedder.dimensions
        return [
            (vector, token_bits(rows, dims))
            for vector, rows in embedder.embed_with_tokens(documents, True)
        ]

    def now(self) -> str:
        return format_timestamp(self.clock.now())

    def measure(self, text: str, what: str = "content") -> int:
        """The token count of memory content; over `max_memory_tokens` is `memory_too_large`.

        The character bound comes first, so megabytes of text are refused without counting.
        """
        limit = self.config.max_memory_tokens
        check_length(what, text, limit)
        tokens = self.tokenizer.count(text)
        check_tokens(what, tokens, limit)
        return tokens

    def cost(self, memory: Memory, framing: Framing) -> int:
        """Tokens this memory takes in what the transport returns (content as sent + frame)."""
        tokens = memory.content_tokens
        if framing.escape is not None and not framing.escaped.isdisjoint(memory.content):
            tokens = self.tokenizer.count(framing.escape(memory.content))
        if framing.frame:
            frame = self._frame_tokens.get(framing.frame)
            if frame is None:
                frame = self._frame_tokens[framing.frame] = self.tokenizer.count(framing.frame)
            tokens += frame
        if framing.tags is not None and memory.tags:
            tokens += self.tokenizer.count(framing.tags(memory.tags))
        return tokens

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

    def check_session(self, session_id: object) -> str | None:
        """The session id, checked: a session nothing was ever saved in is session_not_found."""
        session = check_session_id(session_id)
        if session is not None and not self.store.session_exists(session):
            raise SessionNotFoundError(
                f"No memory was ever saved in session {session!r}; check the name, or omit "
                "session_id to use the whole store."
            )
        return session


def long_content_notice(tokens: int, limit: int) -> str:
    return (
        f"This memory is {tokens} tokens (over {limit}). It was saved, but recall works best "
        "with short single facts: consider splitting it into separate memories."
    )


def written_notice(config: TinyContextConfig, tokens: int, redaction: str | None) -> str | None:
    """The notice of one saved or updated memory (save and update alike): too long to
    recall well (over save_length_notice_tokens), then what redaction replaced."""
    limit = config.save_length_notice_tokens
    return join_notices(long_content_notice(tokens, limit) if tokens > limit else None,
                        redaction)


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
