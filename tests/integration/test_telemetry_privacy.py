"""Nothing private in any span or metric: REST (POST and GET forms), MCP over HTTP, hosted mode.

The probe (tests/integration/telemetry_probe.py) plants content, a query, a session id, a user
id, a token in headers and query strings, a made-up tool name and a private folder name, on
every transport, and prints what the in-memory exporters captured.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import (
    HistogramDataPoint,
    Metric,
    MetricsData,
    ResourceMetrics,
    ScopeMetrics,
    Sum,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceState

from tests.integration.telemetry_probe import PLANTED
from tinycontext.telemetry.export import private_metrics, private_span
from tinycontext.telemetry.policy import allowed, safe_span_name
from tinycontext.telemetry.setup import otlp_protocol

ROOT = Path(__file__).resolve().parents[2]
LEAKY = ("url.query", "url.full", "url.path", "http.target", "http.url", "server.address",
         "server.port", "client.address", "user_agent.original", "jsonrpc.request.id",
         "enduser.id")


def _probe(tmp_path: Path, mode: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TINYCONTEXT_"))}
    env["PYTHONPATH"] = str(ROOT)
    env["FASTAPI_OTEL_AUTO_CONFIGURE"] = "true"  # must not add exporters of its own
    done = subprocess.run(
        [sys.executable, "-m", "tests.integration.telemetry_probe", mode,
         str(tmp_path / "private-dir-Narwhal")],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _leaks(document: Any, captured: dict[str, Any], tmp_path: Path) -> list[str]:
    text = json.dumps(document).lower()
    planted = (*PLANTED, *captured["refs"], str(tmp_path))
    return [p for p in planted if p.lower() in text]


def _names(captured: dict[str, Any]) -> set[str]:
    return {s["name"] for s in captured["spans"]}


def test_filtered_export_carries_nothing_private(tmp_path: Path) -> None:
    captured = _probe(tmp_path, "filtered")
    names = _names(captured)
    # the spans did arrive: HTTP server spans by route template, MCP messages, ours
    assert {"GET /recall_memories", "GET /list_memories", "GET /get_memory", "POST /mcp",
            "tools/call save_memories", "tools/call recall_memories",
            "tinycontext.recall_memories", "tinycontext.save_memories"} <= names
    assert "tools/call" in names  # the made-up tool name was cut off, the method stays
    assert _leaks(captured["spans"], captured, tmp_path) == []
    assert _leaks(captured["metrics"], captured, tmp_path) == []
    for span in captured["spans"]:
        assert not set(span["attributes"]) & set(LEAKY), span
        assert not any(k.startswith("http.request.header") for k in span["attributes"]), span
        assert span["events"] == [] and span["status"][1] in (None, ""), span
        assert span["trace_state"] in ("", "{}", "[]") or "=" not in span["trace_state"]
        assert all(allowed(k, v) for k, v in span["attributes"].items()), span
    metric_names = {p["name"] for p in captured["metrics"]}
    assert {"tinycontext.operation.duration", "http.server.request.duration"} <= metric_names
    routes = {p["attributes"].get("http.route") for p in captured["metrics"]}
    assert "/recall_memories" in routes
    for point in captured["metrics"]:
        assert all(allowed(k, v) for k, v in point["attributes"].items()), point
        assert point["exemplars"] == []
    errors = {s["attributes"].get("error.type") for s in captured["spans"]}
    assert {"session_not_found", "memory_not_found"} <= errors  # codes still say what failed


def test_rest_spans_private_at_the_source(tmp_path: Path) -> None:
    """Under an application's own providers (no export filter), the REST app's HTTP server
    spans (FastAPI's) and TinyContext's spans hold no query, session, id, path or header."""
    captured = _probe(tmp_path, "raw")
    rest = [s for s in captured["spans"]
            if s["name"].split(" ")[0] in ("GET", "POST") or s["name"].startswith("fastapi.")]
    ours = [s for s in captured["spans"] if s["name"].startswith("tinycontext.")]
    gets = [s for s in rest if s["name"] in ("GET /recall_memories", "GET /list_memories",
                                              "GET /get_memory")]
    assert len(gets) >= 7 and ours
    assert all(s["attributes"].get("url.query") == "REDACTED" for s in gets)
    assert _leaks(rest, captured, tmp_path) == []
    assert _leaks(ours, captured, tmp_path) == []


def _span(**overrides: Any) -> ReadableSpan:
    context = SpanContext(1, 2, False, trace_state=TraceState([("vendor", "Zebra-7781")]))
    fields: dict[str, Any] = dict(
        name="GET /recall_memories", context=context, parent=context,
        resource=Resource.create({"service.name": "tinycontext"}),
        attributes={"url.query": "query=Zebra-7781", "url.full": "http://h/x?q=Zebra-7781",
                    "http.target": "/recall_memories?q=Zebra-7781",
                    "http.url": "http://h/recall_memories?q=Zebra-7781",
                    "url.path": "/recall_memories", "http.route": "/recall_memories",
                    "http.request.header.authorization": ("Bearer Zebra-7781",),
                    "http.request.header.x_user_id": ("Zebra-7781",),
                    "http.request.method": "GET", "http.response.status_code": 200,
                    "tinycontext.recall.mode": "semantic",
                    "tinycontext.request.query": "where is Zebra-7781",
                    "gen_ai.tool.name": "Zebra-7781", "error.type": "session_not_found"},
        events=[Event("exception", {"exception.message": "Zebra-7781"})],
        links=[Link(context, {"note": "Zebra-7781"})], kind=SpanKind.SERVER,
        status=Status(StatusCode.ERROR, "memory_not_found: Zebra-7781"),
        start_time=1, end_time=2, instrumentation_scope=InstrumentationScope("fastapi"),
    )
    fields.update(overrides)
    return ReadableSpan(**fields)


def test_private_span_keeps_allowed_facts_only() -> None:
    span = private_span(_span())
    assert dict(span.attributes or {}) == {
        "http.route": "/recall_memories", "http.request.method": "GET",
        "http.response.status_code": 200, "tinycontext.recall.mode": "semantic",
        "error.type": "session_not_found"}
    assert span.events == () and span.status.status_code is StatusCode.ERROR
    assert not span.status.description
    assert "Zebra" not in repr(span.context.trace_state) + repr(span.parent)
    assert [dict(link.attributes or {}) for link in span.links] == [{}]
    assert (span.context.trace_id, span.context.span_id) == (1, 2)
    assert span.name == "GET /recall_memories" and span.kind is SpanKind.SERVER


@pytest.mark.parametrize(("name", "attributes", "expected"), [
    ("GET /recall_memories", {"http.route": "/recall_memories"}, "GET /recall_memories"),
    ("GET /where does Zebra-7781 live", {}, "GET"),
    ("tools/call save_memories", {}, "tools/call save_memories"),
    ("tools/call Zebra-7781", {}, "tools/call"),
    ("MCP send tools/call Zebra-7781", {}, "MCP send tools/call"),
    ("Zebra-7781/list", {}, "span"),
    ("tinycontext.store.add", {}, "tinycontext.store.add"),
])
def test_span_names_keep_protocol_words_only(name: str, attributes: dict[str, Any],
                                             expected: str) -> None:
    assert safe_span_name(name, attributes) == expected


def test_metric_points_lose_private_attributes_and_exemplars() -> None:
    from opentelemetry.sdk.metrics import Exemplar

    exemplar = Exemplar({"url.query": "q=Zebra-7781"}, 1.0, 1, 1, 1)
    point = HistogramDataPoint(
        attributes={"http.route": "/recall_memories", "http.target": "/recall?q=Zebra-7781"},
        start_time_unix_nano=0, time_unix_nano=1, count=1, sum=1.0, bucket_counts=[1],
        explicit_bounds=[], min=1.0, max=1.0, exemplars=[exemplar])
    metric = Metric("http.server.request.duration", None, "s", Sum([point], 1, False))
    data = MetricsData([ResourceMetrics(Resource.create({}), [
        ScopeMetrics(InstrumentationScope("fastapi"), [metric], "")], "")])
    out = private_metrics(data).resource_metrics[0].scope_metrics[0].metrics[0].data
    assert dict(out.data_points[0].attributes) == {"http.route": "/recall_memories"}
    assert list(out.data_points[0].exemplars) == []


def test_every_attribute_we_set_is_allowed() -> None:
    """A new TinyContext attribute must be added to the allow-list (or it never leaves)."""
    source = "".join((ROOT / "tinycontext" / "telemetry" / name).read_text()
                     for name in ("traced_service.py", "traced_ports.py"))
    keys = set(re.findall(r'"((?:tinycontext|gen_ai)\.[a-z_.]+)"', source))
    keys |= {f"tinycontext.request.{k}" for k in ("max_tokens", "top_k")}
    metric_names = {"tinycontext.operation.duration", "tinycontext.operation.result.count"}
    assert keys - metric_names
    for key in keys - metric_names:
        assert allowed(key, 1) or allowed(key, "semantic") or allowed(key, "hash-64"), key


@pytest.mark.parametrize(("env", "traces", "metrics"), [
    ({}, "http/protobuf", "http/protobuf"),
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "grpc", "grpc"),
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
      "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf"}, "grpc", "http/protobuf"),
    ({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, "grpc", "http/protobuf"),
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "http/protobuf", "http/protobuf"),
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"}, None, None),
])
def test_otlp_protocol_per_signal(env: dict[str, str], traces: str | None,
                                  metrics: str | None) -> None:
    assert (otlp_protocol(env, "traces"), otlp_protocol(env, "metrics")) == (traces, metrics)


def test_grpc_exporters_are_chosen_for_grpc() -> None:
    from tinycontext.telemetry.setup import _exporter

    grpc = {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
    assert type(_exporter(grpc, "traces", "otlp")).__module__ == (
        "opentelemetry.exporter.otlp.proto.grpc.trace_exporter")
    assert type(_exporter(grpc, "metrics", "otlp")).__module__ == (
        "opentelemetry.exporter.otlp.proto.grpc.metric_exporter")
    assert type(_exporter({}, "traces", "otlp")).__module__ == (
        "opentelemetry.exporter.otlp.proto.http.trace_exporter")
