"""Real servers exporting to real OTLP receivers on loopback: the bytes on the wire hold no
content, query, session id, user id, memory id, path or token.

`tinycontext rest --with-mcp` in hosted mode sends OTLP over HTTP/protobuf to a tiny HTTP
receiver; `tinycontext serve` sends OTLP over gRPC to a tiny gRPC receiver. Both servers run
with FastAPI's auto-configuration and header capture asked for by the environment, which
must change nothing.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.e2e.servers import served_process
from tests.integration.hosted_support import hosted_env
from tests.integration.telemetry_probe import (
    CONTENT,
    PLANTED,
    PROXY_TOKEN,
    QUERY,
    SECRET_HEADERS,
    SESSION,
    TOKEN,
    _mcp_session,
    hosted_headers,
    hosted_settings,
)

pytestmark = pytest.mark.slow

TRACES = "opentelemetry.proto.collector.trace.v1.TraceService"
METRICS = "opentelemetry.proto.collector.metrics.v1.MetricsService"
LOGS = "opentelemetry.proto.collector.logs.v1.LogsService"


@contextmanager
def otlp_http_receiver() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """A loopback HTTP server keeping every request body by path (/v1/traces, /v1/metrics)."""
    received: list[tuple[str, bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            received.append((self.path, body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def otlp_grpc_receiver() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """A loopback gRPC server answering the OTLP Export calls, keeping the raw request bytes."""
    import grpc

    received: list[tuple[str, bytes]] = []

    def service(name: str) -> Any:
        def export(request: bytes, context: Any) -> bytes:
            received.append((name, request))
            return b""  # an empty Export*ServiceResponse

        return grpc.method_handlers_generic_handler(
            name, {"Export": grpc.unary_unary_rpc_method_handler(export)})

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers([service(n) for n in (TRACES, METRICS, LOGS)])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"http://127.0.0.1:{port}", received
    finally:
        server.stop(grace=None)


def _otel_env(endpoint: str, **extra: str) -> dict[str, str]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "200",
            "OTEL_METRIC_EXPORT_INTERVAL": "500", "FASTAPI_OTEL_AUTO_CONFIGURE": "true",
            "OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_SERVER_REQUEST": ".*", **extra}


def _decode(received: list[tuple[str, bytes]]) -> tuple[set[str], set[str], set[str]]:
    """(span names, metric names, route attributes) from the raw bodies."""
    spans, metrics, routes = set(), set(), set()
    for where, body in received:
        if where.endswith(("/v1/traces", TRACES)):
            request = ExportTraceServiceRequest.FromString(body)
            for rs in request.resource_spans:
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        spans.add(span.name)
                        routes |= {a.value.string_value for a in span.attributes
                                   if a.key == "http.route"}
        elif where.endswith(("/v1/metrics", METRICS)):
            metric_request = ExportMetricsServiceRequest.FromString(body)
            for rm in metric_request.resource_metrics:
                for sm in rm.scope_metrics:
                    metrics |= {m.name for m in sm.metrics}
    return spans, metrics, routes


def _leaks(received: list[tuple[str, bytes]], extra: list[str]) -> list[str]:
    found = []
    for _, body in received:
        for planted in (*PLANTED, *extra):
            if planted.encode() in body or planted.lower().encode() in body.lower():
                found.append(planted)
    return sorted(set(found))


def _stop(process: Any) -> None:
    """SIGTERM: the server shuts down cleanly and flushes its telemetry."""
    process.terminate()
    process.wait(timeout=30)


def _await_spans(received: list[tuple[str, bytes]], names: set[str], seconds: float = 30) -> None:
    """Wait for the periodic export (every 200 ms here) to deliver these spans before the
    server is stopped, so a loaded machine's slow shutdown flush cannot decide the test."""
    deadline = time.monotonic() + seconds
    while names - _decode(list(received))[0] and time.monotonic() < deadline:
        time.sleep(0.2)


def test_rest_and_mcp_hosted_over_otlp_http(tmp_path: Path) -> None:
    tenants = tmp_path / "tenants"
    tenants.mkdir(mode=0o700)
    settings = hosted_settings()
    headers = {**SECRET_HEADERS, **hosted_headers(settings)}
    with otlp_http_receiver() as (endpoint, received):
        env = {**hosted_env(tenants, **settings), **_otel_env(endpoint)}
        with served_process(tmp_path, "rest", "--with-mcp", **env) as (base, process):
            with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
                saved = http.post("/save_memories", json={"memories": [{"content": CONTENT}]})
                assert saved.status_code == 200, saved.text
                ref = saved.json()["saved"][0]["ref"]
                assert http.get("/recall_memories", params={
                    "query": QUERY, "session_id": SESSION, "api_key": TOKEN}).status_code >= 400
                assert http.get("/recall_memories", params={"query": QUERY}).status_code == 200
                assert http.get("/list_memories", params={"search": "Zebra-7781"}).is_success
                assert http.get("/get_memory", params={"memory_id": ref}).is_success
                refused = http.get("/recall_memories", params={"query": QUERY},
                                   headers={PROXY_TOKEN: TOKEN})
                assert refused.status_code == 401
            refs = anyio.run(_mcp_session, base + "/mcp", headers)
            expected = {"GET /recall_memories", "GET /list_memories", "GET /get_memory",
                        "POST /mcp", "tools/call save_memories", "tinycontext.recall_memories",
                        "tinycontext.save_memories", "tinycontext.embed"}
            _await_spans(received, expected)
            _stop(process)
    spans, metrics, routes = _decode(received)
    assert expected - spans == set()
    assert {"/recall_memories", "/mcp"} <= routes
    assert {"tinycontext.operation.duration", "http.server.request.duration"} <= metrics
    assert not any(where == "/v1/logs" for where, _ in received)  # FastAPI logs stay off
    secrets = [settings[k] for k in settings if k != "TINYCONTEXT_MANAGEMENT"]
    assert _leaks(received, [ref, *refs, *secrets, str(tmp_path)]) == []


def test_mcp_serve_over_otlp_grpc(tmp_path: Path) -> None:
    with otlp_grpc_receiver() as (endpoint, received):
        env = _otel_env(endpoint, OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
        with served_process(tmp_path, "serve", **env) as (base, process):
            refs = anyio.run(_mcp_session, base + "/mcp", SECRET_HEADERS)
            expected = {"tools/call save_memories", "tools/call recall_memories", "tools/call",
                        "tinycontext.save_memories", "tinycontext.recall_memories"}
            _await_spans(received, expected)
            _stop(process)
    spans, metrics, _ = _decode(received)
    assert expected - spans == set()
    assert "tinycontext.operation.duration" in metrics
    assert _leaks(received, [*refs, str(tmp_path)]) == []
