"""The traced service, applied by the container below every transport (telemetry on only):
the six operations as spans `tinycontext.<operation>` with result-count metrics, read from
the typed results. Attributes follow the rules of telemetry_ports.py (SPEC section 10).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from tinycontext.app.rendering import PROMPT_FRAMING, Framing
from tinycontext.app.results import (
    DeleteResult,
    ListPage,
    MemoryDetail,
    RecallResult,
    Result,
    SaveResult,
    UpdateResult,
)
from tinycontext.app.service import MemoryService
from tinycontext.domain.listing import SORTS
from tinycontext.domain.memory import MemoryInput
from tinycontext.telemetry.traced_ports import (
    MODEL,
    OPERATION,
    RECORDS,
    instruments,
)

__all__ = ["TracedMemoryService"]

Base = MemoryService  # the untraced operations
Out = TypeVar("Out", bound=Result)


class TracedMemoryService(MemoryService):
    """The six operations as spans `tinycontext.<operation>` with result-count metrics."""

    def _op(self, name: str, call: Callable[[], Out], **attrs: Any) -> Out:
        tools = instruments()
        with tools.span(name, {OPERATION: name, **attrs}) as span:
            result = call()
            count, extra = _summary(result)
            span.set_attribute(RECORDS, count)
            span.set_attributes(extra)
            tools.results.record(count, {OPERATION: name})
            return result

    @contextmanager
    def _stage(self, name: str) -> Iterator[None]:
        """Internal stage span (rank, reindex) for the engine's optional stage hook."""
        with instruments().span(name, {OPERATION: name}):
            yield

    def save(
        self, memories: Sequence[MemoryInput | dict[str, Any]], session_id: str | None = None
    ) -> SaveResult:
        attrs = {"tinycontext.request.item_count": _count(memories),
                 "tinycontext.request.session_scoped": session_id is not None,
                 MODEL: self.embedder.model_key}
        return self._op("save_memories", lambda: Base.save(self, memories, session_id),
                        **attrs)

    def recall(
        self, query: str | None = None, session_id: str | None = None,
        max_tokens: int | None = None, top_k: int | None = None, *, count: bool = True,
        framing: Framing = PROMPT_FRAMING,
    ) -> RecallResult:
        attrs: dict[str, Any] = {"tinycontext.request.session_scoped": session_id is not None,
                                 MODEL: self.embedder.model_key}
        for key, value in (("max_tokens", max_tokens), ("top_k", top_k)):
            if isinstance(value, int) and not isinstance(value, bool):
                attrs[f"tinycontext.request.{key}"] = value
        return self._op(
            "recall_memories",
            lambda: Base.recall(self, query, session_id, max_tokens, top_k, count=count,
                                framing=framing),
            **attrs,
        )

    def list_page(
        self, session_id: str | None = None, kind: str | None = None, since: str | None = None,
        until: str | None = None, limit: int | None = 20, offset: int | None = 0,
        sort: str | None = None, search: str | None = None,
    ) -> ListPage:
        attrs = {"tinycontext.request.session_scoped": session_id is not None,
                 "tinycontext.request.search": search is not None}
        return self._op(
            "list_memories",
            lambda: Base.list_page(
                self, session_id, kind, since, until, limit, offset, sort, search
            ),
            **attrs,
        )

    def detail(self, memory_id: str) -> MemoryDetail:
        return self._op("get_memory", lambda: Base.detail(self, memory_id))

    def update(self, memory_id: str, content: str) -> UpdateResult:
        return self._op("update_memory", lambda: Base.update(self, memory_id, content),
                        **{MODEL: self.embedder.model_key})

    def delete(self, memory_id: str) -> DeleteResult:
        return self._op("delete_memory", lambda: Base.delete(self, memory_id))


def _count(result: object) -> int:
    return len(result) if isinstance(result, (list, tuple)) else int(bool(result))


def _summary(result: Result) -> tuple[int, dict[str, Any]]:
    """(records returned or written, safe attributes) for one operation's result."""
    if isinstance(result, SaveResult):
        return len(result.saved), {
            "tinycontext.save.skipped_count": len(result.skipped_duplicates)
        }
    if isinstance(result, RecallResult):
        return len(result.memories), {
            "tinycontext.recall.mode": result.mode,
            "tinycontext.recall.matched_count": result.matched_count,
            "tinycontext.recall.truncated": result.truncated,
            "tinycontext.recall.total_tokens": result.total_tokens,
            "tinycontext.recall.profile_count": len(result.profile),
        }
    if isinstance(result, ListPage):
        return result.returned_count, {
            "tinycontext.list.total_count": result.total_count,
            "tinycontext.list.sort": result.sort if result.sort in SORTS else "other",
        }
    return 1, {}
