"""Traced ports (store and embedder) and the spans and metrics they share (telemetry on only).

Attributes are counts, sizes, modes, the model key and error codes: never content, queries,
session ids, paths or exception messages (SPEC section 10). The traced service is in
telemetry_wrappers.py.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, cast

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, Status, StatusCode

from tinycontext.domain.errors import TinyContextError
from tinycontext.ports.embedder import Embedder, Vector
from tinycontext.ports.store import Page, Store
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


# What a store call's span carries besides its name: how many items it was given (the
# argument counted as ITEMS) and its limit, never the values themselves.
STORE_SIZES: dict[str, tuple[str | None, str | None]] = {
    "add": ("items", None),
    "keyword_search": (None, "limit"),
    "nearest": (None, "limit"),
    "nearest_many": ("vectors", "limit"),
    "similarities": ("memory_ids", None),
    "contexts": ("memory_ids", None),
    "token_bits": ("memory_ids", None),
    "session_counts": (None, "limit"),
    "mark_recalled": ("memory_ids", None),
    "set_embeddings": ("vectors", None),
}
LIMIT = "tinycontext.store.limit"


def port_methods(port: type) -> set[str]:
    """The public methods a Protocol declares, its role protocols' included."""
    return {name for klass in port.__mro__ if klass not in (object, Protocol)
            for name, value in vars(klass).items()
            if not name.startswith("_") and callable(value)}


class Traced:
    """A port's calls as spans `tinycontext.<prefix>.<method>`, one proxy for any port.

    Every method the port declares is traced (but `untraced`); anything else the wrapped
    object has (a store's `path`, ...) passes through as it is.
    """

    def __init__(self, inner: object, port: type, prefix: str,
                 sizes: Mapping[str, tuple[str | None, str | None]],
                 untraced: frozenset[str] = frozenset()) -> None:
        self.inner = inner
        self._port = port
        self._prefix = prefix
        self._sizes = sizes
        self._traced = port_methods(port) - untraced

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)
        if name not in self._traced:
            return method
        traced = self._wrap(name, method)
        self.__dict__[name] = traced  # found directly from now on
        return traced

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        span_name = f"{self._prefix}.{name}"
        counted, limited = self._sizes.get(name, (None, None))
        signature = inspect.signature(getattr(self._port, name))

        def call(*args: Any, **kwargs: Any) -> Any:
            attrs: dict[str, Any] = {OPERATION: span_name}
            if counted or limited:
                given = signature.bind(self.inner, *args, **kwargs).arguments
                if counted:
                    attrs[ITEMS] = len(given[counted])
                if limited:
                    attrs[LIMIT] = given[limited]
            with instruments().span(span_name, attrs) as span:
                result = method(*args, **kwargs)
                if isinstance(result, Page):
                    span.set_attribute("tinycontext.store.result_count", len(result.memories))
                elif isinstance(result, list):
                    span.set_attribute("tinycontext.store.result_count", len(result))
                return result

        return call


def traced_store(store: Store) -> Store:
    """Every Store call as a span `tinycontext.store.<method>` (closing is not traced)."""
    return cast(Store, Traced(store, Store, "store", STORE_SIZES, frozenset({"close"})))


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
