"""The REST app's HTTP telemetry: FastAPI's own OpenTelemetry support, kept private at the source.

FastAPI (>= 0.13x) opens an HTTP server span per request whenever a tracer provider is
installed, with `url.path` and `url.query` (the recall query, a session id, a search) among
its attributes. Server processes filter everything at export (tinycontext.telemetry.export);
an application that mounts this app under its own providers has no such filter, so the
outermost middleware overwrites, on the request's current span, every attribute outside the
allow-list before the span ends. The route template (`http.route`), method, status and
duration stay.
"""

from __future__ import annotations

from typing import Any

from tinycontext.telemetry.policy import allowed

REDACTED = "REDACTED"
# FastAPI's native telemetry: no exporters of its own (OTLP settings are the server's), no
# log records (they carry validation input and exception messages).
FASTAPI_TELEMETRY: Any = {"auto_configure": False, "logs": False}


def _redact(span: Any) -> None:
    attributes = getattr(span, "attributes", None) or {}
    for key, value in list(attributes.items()):
        if value != REDACTED and not allowed(key, value):
            span.set_attribute(key, REDACTED)


class RedactRequestSpan:
    """ASGI middleware: strips private attributes from the current (HTTP server) span at the
    start of the request and again when the response starts."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        span = _current_span() if scope["type"] == "http" else None
        if span is None:
            await self.app(scope, receive, send)
            return
        _redact(span)

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                _redact(span)
            await send(message)

        await self.app(scope, receive, sending)


def _current_span() -> Any:
    try:
        from opentelemetry import trace
    except ImportError:  # an older FastAPI without OpenTelemetry: nothing records requests
        return None
    span = trace.get_current_span()
    return span if span.is_recording() else None
