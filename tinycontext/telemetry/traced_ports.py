"""Traced ports (store and embedder) and the spans and metrics they share (telemetry on only).

Attributes are counts, sizes, modes, the model key and error codes: never content, queries,
session ids, paths or exception messages (SPEC section 10). The traced service is in
telemetry_wrappers.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, Status, StatusCode

from tinycontext.domain.errors import TinyContextError
from tinycontext.domain.listing import ListQuery
from tinycontext.domain.memory import Memory
from tinycontext.ports.embedder import Embedder, Vector
from tinycontext.ports.store import NewMemory, Page, Scope, Scored, Store
from tinycontext.ports.token_embedder import TokenEmbedder, TokenRows
from tinycontext.version import __version__

SCOPE = "tinycontext"
OPERATION = "gen_ai.operation.name"
RECORDS = "gen_ai.memory.record.count"
MODEL = "gen_ai.request.model"
ITEMS = "tinycontext.store.item_count"


class _Instruments:
    def __init__(self) -> None:
        self.tracer = trace.get_tracer(SCOPE, __version__)
        meter = metrics.get_meter(SCOPE, __version__)
        self.duration = meter.create_histogram(
            "tinycontext.operation.duration", unit="s",
            description="Duration of TinyContext operations and internal stages.",
        )
        self.results = meter.create_histogram(
            "tinycontext.operation.result.count", unit="{memory}",
            description="Memories returned or written by an operation.",
        )

    @contextmanager
    def span(self, name: str, attributes: dict[str, Any]) -> Iterator[Span]:
        """A span `tinycontext.<name>` plus a duration sample; errors export their code only."""
        started = time.perf_counter()
        error: str | None = None
        with self.tracer.start_as_current_span(
            f"tinycontext.{name}", attributes=attributes,
            record_exception=False, set_status_on_exception=False,
        ) as span:
            try:
                yield span
            except TinyContextError as exc:
                error = exc.code
                raise
            except BaseException as exc:
                error = type(exc).__qualname__
                raise
            finally:
                labels = {OPERATION: name}
                if error is not None:
                    labels["error.type"] = error
                    span.set_attribute("error.type", error)
                    span.set_status(Status(StatusCode.ERROR))
                self.duration.record(time.perf_counter() - started, labels)


_instruments: _Instruments | None = None


def instruments() -> _Instruments:
    global _instruments
    if _instruments is None:
        _instruments = _Instruments()
    return _instruments


class TracedStore(Store):
    """Every Store call as a span `tinycontext.store.<method>`."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:  # diagnostics(), path, ... of the real store
        return getattr(self.inner, name)

    def _run(self, method: str, call: Callable[[], Any], **attrs: Any) -> Any:
        with instruments().span(f"store.{method}", {OPERATION: f"store.{method}", **attrs}) as s:
            result = call()
            if isinstance(result, Page):
                s.set_attribute("tinycontext.store.result_count", len(result.memories))
            elif isinstance(result, list):
                s.set_attribute("tinycontext.store.result_count", len(result))
            return result

    def add(self, items: Sequence[NewMemory]) -> None:
        self._run("add", lambda: self.inner.add(items), **{ITEMS: len(items)})

    def find(self, key: str, is_ref: bool) -> list[Memory]:
        return self._run("find", lambda: self.inner.find(key, is_ref))  # type: ignore[no-any-return]

    def keyword_search(
        self, groups: Sequence[Sequence[str]], scope: Scope, limit: int
    ) -> list[Scored]:
        return self._run(  # type: ignore[no-any-return]
            "keyword_search", lambda: self.inner.keyword_search(groups, scope, limit),
            **{"tinycontext.store.limit": limit},
        )

    def keyword_ideal(self, groups: Sequence[Sequence[str]]) -> float:
        return self._run("keyword_ideal", lambda: self.inner.keyword_ideal(groups))  # type: ignore[no-any-return]

    def nearest(self, vector: Vector, model_key: str, scope: Scope, limit: int) -> list[Scored]:
        return self._run(  # type: ignore[no-any-return]
            "nearest", lambda: self.inner.nearest(vector, model_key, scope, limit),
            **{"tinycontext.store.limit": limit},
        )

    def nearest_many(
        self, vectors: Sequence[Vector], model_key: str, scope: Scope, limit: int
    ) -> list[list[Scored]]:
        return self._run(  # type: ignore[no-any-return]
            "nearest_many", lambda: self.inner.nearest_many(vectors, model_key, scope, limit),
            **{ITEMS: len(vectors), "tinycontext.store.limit": limit},
        )

    def similarities(
        self, vector: Vector, model_key: str, memory_ids: Sequence[str]
    ) -> dict[str, float]:
        return self._run(  # type: ignore[no-any-return]
            "similarities", lambda: self.inner.similarities(vector, model_key, memory_ids),
            **{ITEMS: len(memory_ids)},
        )

    def latest(self, scope: Scope) -> Memory | None:
        return self._run("latest", lambda: self.inner.latest(scope))  # type: ignore[no-any-return]

    def contexts(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        return self._run(  # type: ignore[no-any-return]
            "contexts", lambda: self.inner.contexts(memory_ids), **{ITEMS: len(memory_ids)}
        )

    def token_bits(self, memory_ids: Sequence[str]) -> dict[str, tuple[bytes, bytes | None]]:
        return self._run(  # type: ignore[no-any-return]
            "token_bits", lambda: self.inner.token_bits(memory_ids), **{ITEMS: len(memory_ids)}
        )

    def browse(self, query: ListQuery) -> Page:
        return self._run("browse", lambda: self.inner.browse(query))  # type: ignore[no-any-return]

    def session_counts(self, limit: int) -> list[tuple[str, int]]:
        return self._run(  # type: ignore[no-any-return]
            "session_counts", lambda: self.inner.session_counts(limit),
            **{"tinycontext.store.limit": limit},
        )

    def session_exists(self, session_id: str) -> bool:
        return self._run("session_exists", lambda: self.inner.session_exists(session_id))  # type: ignore[no-any-return]

    def mark_recalled(self, memory_ids: Sequence[str], at: str) -> None:
        self._run("mark_recalled", lambda: self.inner.mark_recalled(memory_ids, at),
                  **{ITEMS: len(memory_ids)})

    def supersede(self, old_id: str, new: NewMemory, at: str) -> None:
        self._run("supersede", lambda: self.inner.supersede(old_id, new, at))

    def delete(self, memory_id: str, predecessor_id: str | None, successor_id: str | None) -> None:
        self._run("delete", lambda: self.inner.delete(memory_id, predecessor_id, successor_id))

    def pending_embeddings(self, model_key: str, limit: int) -> list[Memory]:
        return self._run(  # type: ignore[no-any-return]
            "pending_embeddings", lambda: self.inner.pending_embeddings(model_key, limit)
        )

    def count_pending_embeddings(self, model_key: str) -> int:
        return self._run(  # type: ignore[no-any-return]
            "count_pending_embeddings", lambda: self.inner.count_pending_embeddings(model_key)
        )

    def set_embeddings(
        self, vectors: Sequence[tuple[str, Vector]], model_key: str,
        tokens: Mapping[str, bytes] | None = None,
    ) -> None:
        self._run("set_embeddings",
                  lambda: self.inner.set_embeddings(vectors, model_key, tokens),
                  **{ITEMS: len(vectors)})

    def maintain_index(self, model_key: str) -> bool:
        return self._run(  # type: ignore[no-any-return]
            "maintain_index", lambda: self.inner.maintain_index(model_key)
        )

    def export_page(
        self, after: int, limit: int, session_id: str | None
    ) -> list[tuple[int, Memory, Vector | None]]:
        return self._run(  # type: ignore[no-any-return]
            "export_page", lambda: self.inner.export_page(after, limit, session_id)
        )

    def close(self) -> None:
        self.inner.close()


class TracedEmbedder(TokenEmbedder):
    """Each embed batch as a span `tinycontext.embed`."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def model_key(self) -> str:
        return self.inner.model_key

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        attrs = {OPERATION: "embeddings", MODEL: self.inner.model_key,
                 "tinycontext.embed.text_count": len(texts)}
        with instruments().span("embed", attrs):
            return self.inner.embed(texts)

    @property
    def has_tokens(self) -> bool:
        return isinstance(self.inner, TokenEmbedder) and self.inner.has_tokens

    def embed_with_tokens(
        self, texts: Sequence[str], drop_stopwords: bool
    ) -> list[tuple[Vector, TokenRows]]:
        if not isinstance(self.inner, TokenEmbedder):
            raise TypeError("the wrapped embedder has no token states")
        attrs = {OPERATION: "embeddings", MODEL: self.inner.model_key,
                 "tinycontext.embed.text_count": len(texts)}
        with instruments().span("embed", attrs):
            return self.inner.embed_with_tokens(texts, drop_stopwords)
