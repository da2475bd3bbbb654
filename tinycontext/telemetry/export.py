"""Exporters that apply the telemetry allow-list (telemetry_policy) to everything they send.

Server processes wrap their OTLP/console exporters in these, so every span and metric point
the process exports, TinyContext's and those of FastAPI and the MCP SDK, is filtered at one
place just before it leaves. Needs the OpenTelemetry SDK (the `telemetry` extra).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.metrics.view import View
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Link, SpanContext, Status, TraceState

from tinycontext.telemetry.policy import ALLOWED, safe_attributes, safe_span_name


def _context(context: SpanContext | None) -> SpanContext | None:
    """The same trace and span ids without trace state (a caller's free-form header)."""
    if context is None:
        return None
    return SpanContext(context.trace_id, context.span_id, context.is_remote,
                       context.trace_flags, TraceState())


def private_span(span: ReadableSpan) -> ReadableSpan:
    """A copy of `span` with allowed attributes only, no events, no status text."""
    attributes = safe_attributes(span.attributes)
    return ReadableSpan(
        name=safe_span_name(span.name, span.attributes),
        context=_context(span.context),
        parent=_context(span.parent),
        resource=span.resource,  # the operator's service.name / OTEL_RESOURCE_ATTRIBUTES
        attributes=attributes,
        events=(),  # exception events carry messages and stack traces
        links=tuple(Link(_context(link.context)) for link in span.links),  # type: ignore[arg-type]
        kind=span.kind,
        status=Status(span.status.status_code),  # the code; the description may quote input
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class PrivateSpanExporter(SpanExporter):
    """Passes spans through `private_span` to the real exporter."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([private_span(span) for span in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def private_views() -> list[View]:
    """Every instrument keeps allowed attribute keys only, before aggregation (so points with
    different dropped values merge instead of being exported side by side)."""
    return [View(instrument_name="*", attribute_keys=set(ALLOWED))]


def _point(point: Any) -> Any:
    changes: dict[str, Any] = {"attributes": safe_attributes(point.attributes)}
    if hasattr(point, "exemplars"):
        changes["exemplars"] = []  # exemplars keep the attributes a view dropped
    return dataclasses.replace(point, **changes)


def _points(data: Any) -> Any:
    """A Sum, Gauge or (exponential) Histogram with its data points made private."""
    return dataclasses.replace(data, data_points=[_point(p) for p in data.data_points])


def private_metrics(data: MetricsData) -> MetricsData:
    """A copy of `data` whose points carry allowed attribute values only and no exemplars."""
    return dataclasses.replace(data, resource_metrics=[
        dataclasses.replace(rm, scope_metrics=[
            dataclasses.replace(sm, metrics=[
                dataclasses.replace(metric, data=_points(metric.data))
                for metric in sm.metrics
            ])
            for sm in rm.scope_metrics
        ])
        for rm in data.resource_metrics
    ])


class PrivateMetricExporter(MetricExporter):
    """Passes metric batches through `private_metrics` to the real exporter."""

    def __init__(self, inner: MetricExporter) -> None:
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self.inner = inner

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000,
               **kwargs: Any) -> MetricExportResult:
        return self.inner.export(private_metrics(metrics_data), timeout_millis=timeout_millis,
                                 **kwargs)

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self.inner.force_flush(timeout_millis=timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.inner.shutdown(timeout_millis=timeout_millis, **kwargs)


__all__ = [
    "PrivateMetricExporter", "PrivateSpanExporter", "private_metrics", "private_span",
    "private_views",
]
