"""OpenTelemetry traces and metrics (SPEC section 10), off unless configured.

- Library use: when the application has installed a global tracer or meter provider before
  the first call, the service is built with traced ports and operations (spans
  `tinycontext.<operation>`, metrics `tinycontext.operation.duration` and
  `tinycontext.operation.result.count`). Otherwise nothing is wrapped and nothing is paid.
- Server processes call `configure_from_environment()`, which installs providers from the
  standard `OTEL_*` variables and returns the hook that flushes them on shutdown.

Never exported: memory content, queries, session ids, paths, credentials, exception messages.
Spans carry counts, modes, sizes, the model key and error codes only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

from tinycontext.service import MemoryService

log = logging.getLogger("tinycontext.telemetry")
INSTALL_HINT = "pip install 'tinysuite-context[telemetry]'"


def _api_available() -> bool:
    try:
        import opentelemetry.metrics  # noqa: F401
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


def enabled() -> bool:
    """Whether a real (non-default) global tracer or meter provider is installed."""
    if not _api_available():
        return False
    from opentelemetry import metrics, trace
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider

    tracer_provider = trace.get_tracer_provider()
    meter_provider = metrics.get_meter_provider()
    tracing = not isinstance(tracer_provider, ProxyTracerProvider | NoOpTracerProvider)
    metering = not isinstance(meter_provider, NoOpMeterProvider) and (
        type(meter_provider).__name__ != "_ProxyMeterProvider"
    )
    return tracing or metering


def instrumented_service(**kwargs: Any) -> MemoryService:
    """The container's service factory: a plain MemoryService, traced when telemetry is on."""
    if not enabled():
        return MemoryService(**kwargs)
    from tinycontext.telemetry_wrappers import TracedEmbedder, TracedMemoryService, TracedStore

    kwargs["store"] = TracedStore(kwargs["store"])
    kwargs["embedder"] = TracedEmbedder(kwargs["embedder"])
    return TracedMemoryService(**kwargs)


def _exporter_wanted(env: Mapping[str, str], signal: str) -> str | None:
    """"otlp", "console" or None for the traces/metrics signal, per the OTEL_* conventions."""
    choice = env.get(f"OTEL_{signal.upper()}_EXPORTER", "").strip().lower()
    if choice in ("none", ""):
        endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get(
            f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT"
        )
        return "otlp" if choice == "" and endpoint else None
    if choice.split(",")[0] in ("otlp", "console"):
        return choice.split(",")[0]
    log.warning("OTEL_%s_EXPORTER=%s is not supported; use otlp or console", signal.upper(), choice)
    return None


def configure_from_environment(environ: Mapping[str, str] | None = None) -> Callable[[], None]:
    """Install global providers from OTEL_* (servers only); returns flush-and-shutdown."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return lambda: None
    traces, metrics_kind = _exporter_wanted(env, "traces"), _exporter_wanted(env, "metrics")
    if traces is None and metrics_kind is None:
        return lambda: None
    try:
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:
        log.warning("OTEL_* telemetry is configured but OpenTelemetry is missing: %s", INSTALL_HINT)
        return lambda: None
    if env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf") not in ("http/protobuf", ""):
        log.warning("only OTLP over http/protobuf is bundled; OTEL_EXPORTER_OTLP_PROTOCOL ignored")

    from tinycontext import __version__

    attributes: dict[str, Any] = {"service.version": __version__}
    if not env.get("OTEL_SERVICE_NAME"):
        attributes["service.name"] = "tinycontext"
    resource = Resource.create(attributes)
    hooks: list[Callable[[], Any]] = []
    if traces is not None:
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(_span_processor(traces))
        trace.set_tracer_provider(tracer_provider)
        hooks.append(tracer_provider.shutdown)
    if metrics_kind is not None:
        meter_provider = MeterProvider(resource=resource, metric_readers=[_reader(metrics_kind)])
        metrics.set_meter_provider(meter_provider)
        hooks.append(meter_provider.shutdown)

    def shutdown() -> None:
        for hook in hooks:
            try:
                hook()
            except Exception as exc:  # noqa: BLE001 - never fail a shutdown over telemetry
                log.warning("telemetry flush failed: %s", type(exc).__name__)

    return shutdown


def _span_processor(kind: str) -> Any:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    if kind == "console":
        import sys

        return BatchSpanProcessor(ConsoleSpanExporter(out=sys.stderr))
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return BatchSpanProcessor(OTLPSpanExporter())


def _reader(kind: str) -> Any:
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        PeriodicExportingMetricReader,
    )

    if kind == "console":
        import sys

        return PeriodicExportingMetricReader(ConsoleMetricExporter(out=sys.stderr))
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return PeriodicExportingMetricReader(OTLPMetricExporter())
