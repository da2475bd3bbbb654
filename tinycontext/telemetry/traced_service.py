"""The traced service, applied by the container below every transport (telemetry on only):
the six operations as spans `tinycontext.<operation>` with result-count metrics, read from
the typed results. Attributes follow the rules of telemetry_ports.py (SPEC section 10).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

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

    # The operations take what MemoryService's take, passed on as given (a parameter added
    # there needs nothing here); the spans read the few arguments they count by name.
    def recall(self, *args: Any, **kwargs: Any) -> RecallResult:
        given = _arguments(Base.recall, self, args, kwargs)
        attrs: dict[str, Any] = {
            "tinycontext.request.session_scoped": given.get("session_id") is not None,
            MODEL: self.embedder.model_key}
        for key in ("max_tokens", "top_k"):
            value = given.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                attrs[f"tinycontext.request.{key}"] = value
        return self._op("recall_memories", lambda: Base.recall(self, *args, **kwargs), **attrs)

    def list_page(self, *args: Any, **kwargs: Any) -> ListPage:
        given = _arguments(Base.list_page, self, args, kwargs)
        attrs = {"tinycontext.request.session_scoped": given.get("session_id") is not None,
                 "tinycontext.request.search": given.get("search") is not None}
        return self._op("list_memories", lambda: Base.list_page(self, *args, **kwargs), **attrs)

    def detail(self, *args: Any, **kwargs: Any) -> MemoryDetail:
        return self._op("get_memory", lambda: Base.detail(self, *args, **kwargs))

    def update(self, *args: Any, **kwargs: Any) -> UpdateResult:
        return self._op("update_memory", lambda: Base.update(self, *args, **kwargs),
                        **{MODEL: self.embedder.model_key})

    def delete(self, memory_id: str) -> DeleteResult:
        return self._op("delete_memory", lambda: Base.delete(self, memory_id))


def _arguments(method: Callable[..., Any], service: MemoryService, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a call by parameter name (those not given are left out)."""
    try:
        return dict(inspect.signature(method).bind(service, *args, **kwargs).arguments)
    except TypeError:  # a wrong call: the operation itself says so, inside its span
        return {}


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
