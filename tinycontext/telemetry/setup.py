"""OpenTelemetry traces and metrics (SPEC section 10), off unless configured.

- Library use: when the application has installed a global tracer or meter provider before
  the first call, the service is built with traced ports and operations (spans
  `tinycontext.<operation>`, metrics `tinycontext.operation.duration` and
  `tinycontext.operation.result.count`). Otherwise nothing is wrapped and nothing is paid.
- Server processes call `configure_from_environment()`, which installs providers from the
  standard `OTEL_*` variables (OTLP over http/protobuf or gRPC, or console) and returns the
  hook that flushes them on shutdown. Their exporters see every span and metric point through
  the allow-list of telemetry_policy, FastAPI's and the MCP SDK's as well as ours.

Never exported: memory content, queries, session ids, user ids, paths, credentials, exception
messages. Spans carry counts, modes, sizes, the model key, route templates and error codes only.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable, Mapping
from typing import Any

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


def _environment() -> Mapping[str, str]:
    from tinycontext.config.settings import environment

    return environment()


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
    """Install global providers from OTEL_* (servers only); returns flush-and-shutdown.
    `environ`: what the bootstrap read (None: the process environment, via settings)."""
    env = _environment() if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return lambda: None
    traces, metrics_kind = _exporter_wanted(env, "traces"), _exporter_wanted(env, "metrics")
    if traces is None and metrics_kind is None:
        return lambda: None
    try:
        import opentelemetry.sdk.metrics  # noqa: F401
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        log.warning("OTEL_* telemetry is configured but OpenTelemetry is missing: %s", INSTALL_HINT)
        return lambda: None
    span_exporter = _exporter(env, "traces", traces) if traces else None
    metric_exporter = _exporter(env, "metrics", metrics_kind) if metrics_kind else None
    return install(span_exporter, metric_exporter, env)


def install(
    span_exporter: Any = None, metric_exporter: Any = None,
    environ: Mapping[str, str] | None = None,
) -> Callable[[], None]:
    """Global tracer/meter providers exporting to these exporters through the allow-list
    (telemetry_policy): nothing leaves but allowed attributes, on every span and metric point
    of the process. Returns flush-and-shutdown. Used by servers, and by tests with in-memory
    exporters."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from tinycontext.telemetry.export import (
        PrivateMetricExporter,
        PrivateSpanExporter,
        private_views,
    )
    from tinycontext.version import __version__

    env = _environment() if environ is None else environ
    attributes: dict[str, Any] = {"service.version": __version__}
    if not env.get("OTEL_SERVICE_NAME"):
        attributes["service.name"] = "tinycontext"
    resource = Resource.create(attributes)
    hooks: list[Callable[[], Any]] = []
    if span_exporter is not None:
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(PrivateSpanExporter(span_exporter)))
        trace.set_tracer_provider(tracer_provider)
        hooks.append(tracer_provider.shutdown)
    if metric_exporter is not None:
        reader = PeriodicExportingMetricReader(PrivateMetricExporter(metric_exporter))
        meter_provider = MeterProvider(resource=resource, metric_readers=[reader],
                                       views=private_views(), **_no_exemplars())
        metrics.set_meter_provider(meter_provider)
        hooks.append(meter_provider.shutdown)

    def shutdown() -> None:
        for hook in hooks:
            try:
                hook()
            except Exception as exc:  # noqa: BLE001 - never fail a shutdown over telemetry
                log.warning("telemetry flush failed: %s", type(exc).__name__)

    return shutdown


def _no_exemplars() -> dict[str, Any]:
    """Exemplars copy the attributes a view dropped (and link points to single requests):
    recorded never, where the SDK lets us say so (the exporter strips them anyway)."""
    try:
        from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter
    except ImportError:
        return {}
    return {"exemplar_filter": AlwaysOffExemplarFilter()}


def otlp_protocol(env: Mapping[str, str], signal: str) -> str | None:
    """"grpc" or "http/protobuf" for the signal (OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, then
    OTEL_EXPORTER_OTLP_PROTOCOL, default http/protobuf); None (with a warning) if unsupported."""
    chosen = (env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", "").strip()
              or env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").strip() or "http/protobuf").lower()
    if chosen in ("grpc", "http/protobuf"):
        return chosen
    if chosen == "http/json":  # same collector port; the Python SDK has no JSON exporter
        log.warning("OTLP http/json is not available; %s are sent as http/protobuf", signal)
        return "http/protobuf"
    log.warning("OTLP protocol %r is not supported (use grpc or http/protobuf); %s are off",
                chosen, signal)
    return None


_OTLP_CLASSES = {"traces": "trace_exporter.OTLPSpanExporter",
                 "metrics": "metric_exporter.OTLPMetricExporter"}


def _exporter(env: Mapping[str, str], signal: str, kind: str) -> Any:
    """The exporter for a signal: console (stderr, never stdout: safe on stdio), or OTLP over
    the protocol the environment names; None if that exporter cannot be had."""
    if kind == "console":
        if signal == "traces":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            return ConsoleSpanExporter(out=sys.stderr)
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return ConsoleMetricExporter(out=sys.stderr)
    protocol = otlp_protocol(env, signal)
    if protocol is None:
        return None
    package = "grpc" if protocol == "grpc" else "http"
    module_name, class_name = _OTLP_CLASSES[signal].split(".")
    try:
        module = importlib.import_module(
            f"opentelemetry.exporter.otlp.proto.{package}.{module_name}")
    except ImportError:
        log.warning("the OTLP %s exporter is missing, %s are off: %s", protocol, signal,
                    INSTALL_HINT)
        return None
    return getattr(module, class_name)()
