"""Run every transport with planted private strings and print what telemetry captured (JSON).

    python -m tests.integration.telemetry_probe raw|filtered DB_DIR

Global OpenTelemetry providers can be set only once per process, so the tests run this in a
fresh interpreter. `raw`: in-memory exporters on plain SDK providers (what an application's
own providers would see: TinyContext spans, FastAPI's HTTP spans after the REST app's
redaction, MCP SDK spans). `filtered`: the providers servers install
(`tinycontext.telemetry.setup.install`), exporting through the allow-list.
"""

from __future__ import annotations

import json
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

CONTENT = "Zebra-7781 lives at Quokka Lane"
QUERY = "where does Zebra-7781 live"
SESSION = "session-Wombat-4410"
USER = "user-Pangolin-5521"
TOKEN = "tok-Axolotl-9ad3c61e5b7f40e2"
TOOL = "tool-Okapi-3318"
PLANTED = (CONTENT, "Zebra-7781", "Quokka", QUERY, SESSION, "Wombat", USER, "Pangolin", TOKEN,
           "Axolotl", TOOL, "Okapi", "Narwhal")
PROXY_TOKEN = "X-TinyContext-Proxy-Token"
SECRET_HEADERS = {"Authorization": f"Bearer {TOKEN}", "Cookie": f"sid={TOKEN}",
                  "X-User-Id": USER, "X-Api-Key": TOKEN}


def hosted_settings() -> dict[str, str]:
    """Hosted mode with management, its secrets generated (never a planted string)."""
    import secrets

    return {"TINYCONTEXT_TENANT_SECRET": secrets.token_urlsafe(48),
            "TINYCONTEXT_TRUSTED_PROXY_TOKEN": secrets.token_urlsafe(48),
            "TINYCONTEXT_MANAGEMENT": "on",
            "TINYCONTEXT_MANAGEMENT_TOKEN": secrets.token_urlsafe(48)}


def hosted_headers(settings: dict[str, str]) -> dict[str, str]:
    """What the authenticating proxy adds for the planted user."""
    return {PROXY_TOKEN: settings["TINYCONTEXT_TRUSTED_PROXY_TOKEN"], "X-TinyContext-User-Id": USER}


def _providers(mode: str) -> tuple[Any, Any]:
    """(spans() -> list of finished spans, metrics() -> list of MetricsData)."""
    from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    if mode == "raw":
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(spans))
        trace.set_tracer_provider(provider)
        reader = InMemoryMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        return spans.get_finished_spans, lambda: [reader.get_metrics_data()]

    class Collected(MetricExporter):
        def __init__(self) -> None:
            super().__init__()
            self.batches: list[Any] = []

        def export(self, metrics_data: Any, timeout_millis: float = 10_000,
                   **kwargs: Any) -> MetricExportResult:
            self.batches.append(metrics_data)
            return MetricExportResult.SUCCESS

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return True

        def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
            pass

    from tinycontext.telemetry.setup import install

    collected = Collected()
    shutdown = install(spans, collected, {})
    state = {"flushed": False}

    def flushed() -> None:
        if not state["flushed"]:
            shutdown()
            state["flushed"] = True

    def all_spans() -> Any:
        flushed()
        return spans.get_finished_spans()

    def all_metrics() -> Any:
        flushed()
        return collected.batches

    return all_spans, all_metrics


def _span(s: Any) -> dict[str, Any]:
    return {"name": s.name, "kind": s.kind.name, "attributes": dict(s.attributes or {}),
            "status": [s.status.status_code.name, s.status.description],
            "events": [[e.name, dict(e.attributes or {})] for e in s.events],
            "links": [dict(link.attributes or {}) for link in s.links],
            "trace_state": str(s.context.trace_state), "resource": dict(s.resource.attributes)}


def _points(batches: list[Any]) -> list[dict[str, Any]]:
    return [{"name": m.name, "attributes": dict(p.attributes or {}),
             "exemplars": [dict(e.filtered_attributes or {}) for e in (p.exemplars or [])]}
            for data in batches for rm in data.resource_metrics for sm in rm.scope_metrics
            for m in sm.metrics for p in m.data.data_points]


def _single_user_rest(db: Path) -> list[str]:
    """REST over one store, POST and GET forms, with private headers on every request."""
    from fastapi.testclient import TestClient

    from tests.fakes import HashEmbedder, WordTokenizer
    from tinycontext.app.service_source import OneService
    from tinycontext.config.engine import TinyContextConfig
    from tinycontext.entry.container import build_service
    from tinycontext.rest import create_app

    service = build_service(TinyContextConfig(memory_db_path=str(db / "rest.db")),
                            embedder=HashEmbedder(), tokenizer=WordTokenizer(), background=False)
    refs = []
    with TestClient(create_app(OneService(service), warm=False), headers=SECRET_HEADERS) as api:
        saved = api.post("/save_memories", json={"session_id": SESSION,
                                                  "memories": [{"content": CONTENT}]}).json()
        ref = saved["saved"][0]["ref"]
        refs += [ref, saved["saved"][0]["id"]]
        api.get("/recall_memories", params={"query": QUERY, "session_id": SESSION,
                                            "api_key": TOKEN})
        api.get("/recall_memories", params={"query": QUERY, "session_id": SESSION + "-x"})
        api.get("/recall_memories", params={"query": QUERY, "top_k": "many"})  # 422
        api.post("/recall_memories", json={"query": QUERY, "session_id": SESSION})
        api.get("/list_memories", params={"search": "Zebra-7781", "session_id": SESSION})
        api.get("/get_memory", params={"memory_id": ref})
        api.get("/get_memory", params={"memory_id": "Zebra-7781"})
        api.get(f"/{QUERY}/{SESSION}", params={"token": TOKEN})  # no route: 404
        new = api.post("/update_memory", json={"memory_id": ref,
                                               "content": CONTENT + " now"}).json()
        refs.append(new["ref"])
        api.post("/delete_memory", json={"memory_id": new["ref"]})
    return refs


async def _mcp_session(url: str, headers: dict[str, str]) -> list[str]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers=headers, timeout=60)
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        saved = await client.call_tool("save_memories",
                                       {"memories": [{"content": CONTENT + " by MCP"}]})
        ref = json.loads(saved.content[0].text)["saved"][0]["ref"]
        await client.call_tool("recall_memories", {"query": QUERY})
        await client.call_tool("list_memories", {"search": "Zebra-7781"})
        await client.call_tool("get_memory", {"memory_id": ref})
        await client.call_tool("get_memory", {"memory_id": "Zebra-7781"})
        with suppress(Exception):
            await client.call_tool(TOOL, {"query": QUERY})
        with suppress(Exception):
            await client.read_resource(f"tinycontext://manage/memories?search={TOOL}")
        with suppress(Exception):
            await client.read_resource(f"tinycontext://manage/memories/{TOOL}")
        return [ref]


def _hosted(db: Path, kind: str) -> list[str]:
    """Hosted mode (REST + /mcp, or Streamable HTTP MCP only) for a planted user id."""
    import anyio

    from tests.integration.hosted_support import hosted_server

    env = hosted_settings()
    headers = {**SECRET_HEADERS, **hosted_headers(env)}
    refs: list[str] = []
    (db / kind).mkdir()
    with hosted_server(db / kind, kind=kind, **env) as server:
        if kind == "rest":
            import httpx

            with httpx.Client(base_url=server.base, headers=headers, timeout=30) as http:
                http.post("/save_memories", json={"memories": [{"content": CONTENT}]})
                http.get("/recall_memories", params={"query": QUERY, "session_id": SESSION})
                http.get("/list_memories", params={"search": "Zebra-7781"})
                http.get("/recall_memories", params={"query": QUERY},
                         headers={PROXY_TOKEN: TOKEN})  # 401
        refs += anyio.run(_mcp_session, server.base + "/mcp", headers)
    return refs


def main(mode: str, folder: str) -> None:
    spans, metrics = _providers(mode)
    db = Path(folder)
    db.mkdir(parents=True, exist_ok=True)
    refs = _single_user_rest(db) + _hosted(db, "rest") + _hosted(db, "mcp")
    print(json.dumps({"spans": [_span(s) for s in spans()], "metrics": _points(metrics()),
                      "refs": refs}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
