"""OpenTelemetry: the same core spans below MCP and REST, metrics, and nothing private exported.

Global OpenTelemetry providers can be set only once per process, so each scenario runs in a
fresh interpreter that installs in-memory exporters and prints what they captured as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SECRET_CONTENT = "Zebra-7781 lives at Quokka Lane"
SECRET_QUERY = "where does Zebra-7781 live"
SECRET_SESSION = "session-Wombat-4410"

PROBE = r"""
import json, sys
import anyio
from fastapi.testclient import TestClient
from mcp import Client
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)
reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))

from tests.fakes import HashEmbedder, WordTokenizer
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.app.service_source import OneService
from tinycontext.rest import create_app
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service

db, content, query, session = sys.argv[1:5]

def fresh(name):
    return build_service(TinyContextConfig(memory_db_path=db + name), embedder=HashEmbedder(),
                         tokenizer=WordTokenizer(), background=False)

service = fresh(".mcp")

def dump():
    out = []
    for s in spans.get_finished_spans():
        out.append({"name": s.name, "attributes": dict(s.attributes or {}),
                    "status": [s.status.status_code.name, s.status.description],
                    "events": [[e.name, dict(e.attributes or {})] for e in s.events],
                    "resource": dict(s.resource.attributes)})
    spans.clear()
    return out

async def over_mcp():
    async with Client(create_mcp_server(OneService(service), warm=False)) as c:
        saved = await c.call_tool("save_memories", {"memories": [{"content": content}]})
        ref = json.loads(saved.content[0].text)["saved"][0]["ref"]
        await c.call_tool("recall_memories", {"query": query})
        await c.call_tool("recall_memories", {})
        await c.call_tool("list_memories", {"search": "zebra"})
        await c.call_tool("get_memory", {"memory_id": ref})
        new = json.loads((await c.call_tool("update_memory", {"memory_id": ref,
                          "content": content + " now"})).content[0].text)
        await c.call_tool("delete_memory", {"memory_id": new["ref"]})

anyio.run(over_mcp)
mcp_spans = dump()
with TestClient(create_app(OneService(fresh(".rest")))) as api:
    ref = api.post("/save_memories", json={"memories": [{"content": content}]}
                   ).json()["saved"][0]["ref"]
    api.post("/recall_memories", json={"query": query})
    api.get("/recall_memories")
    api.get("/list_memories", params={"search": "zebra"})
    api.get("/get_memory", params={"memory_id": ref})
    new = api.post("/update_memory", json={"memory_id": ref, "content": content + " now"}).json()
    api.post("/delete_memory", json={"memory_id": new["ref"]})
    rest_spans = dump()
    api.post("/save_memories", json={"session_id": session, "memories": [{"content": content}]})
    api.post("/recall_memories", json={"query": query, "session_id": session})
    api.post("/recall_memories", json={"query": query, "session_id": session + "-unknown"})
    api.post("/get_memory", json={"memory_id": "0123456789ab"})
    private_spans = dump()
data = reader.get_metrics_data()
points = [{"name": m.name, "attributes": dict(p.attributes or {})}
          for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
          for p in m.data.data_points]
print(json.dumps({"type": type(service).__name__, "mcp": mcp_spans, "rest": rest_spans,
                  "private": private_spans, "metrics": points}))
"""


def _probe(tmp_path: Path) -> dict[str, Any]:
    db = tmp_path / "private-dir-Narwhal" / "m.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TINYCONTEXT_"))}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(db), SECRET_CONTENT, SECRET_QUERY, SECRET_SESSION],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _core(spans: list[dict[str, Any]]) -> list[str]:
    return sorted({s["name"] for s in spans if s["name"].startswith("tinycontext.")})


def test_spans_metrics_and_privacy(tmp_path: Path) -> None:
    captured = _probe(tmp_path)
    assert captured["type"] == "TracedMemoryService"
    operations = {f"tinycontext.{op}" for op in (
        "save_memories", "recall_memories", "list_memories", "get_memory", "update_memory",
        "delete_memory")}
    stages = {"tinycontext.embed", "tinycontext.store.add", "tinycontext.store.nearest",
              "tinycontext.store.keyword_search", "tinycontext.store.browse",
              "tinycontext.store.supersede", "tinycontext.store.delete"}
    assert operations | stages <= set(_core(captured["mcp"]))
    assert _core(captured["mcp"]) == _core(captured["rest"])  # the same spans below transports

    recall = next(s for s in captured["rest"] if s["name"] == "tinycontext.recall_memories")
    attrs = recall["attributes"]
    assert attrs["gen_ai.operation.name"] == "recall_memories"
    assert attrs["gen_ai.memory.record.count"] >= 1 and attrs["gen_ai.request.model"] == "hash-64"
    assert attrs["tinycontext.recall.mode"] in ("semantic", "recent")

    failed = [s for s in captured["private"] if s["status"][0] == "ERROR"
              and s["name"].startswith("tinycontext.") and "." not in s["name"][12:]]
    assert {s["attributes"]["error.type"] for s in failed} == {"session_not_found",
                                                               "memory_not_found"}
    assert all(s["status"][1] in (None, "") and not s["events"] for s in failed)

    names = {p["name"] for p in captured["metrics"]}
    assert {"tinycontext.operation.duration", "tinycontext.operation.result.count"} <= names

    exported = json.dumps(captured).lower()
    for secret in (SECRET_CONTENT, "zebra-7781", "quokka", SECRET_QUERY, "wombat", "narwhal",
                   str(tmp_path).lower(), "no memory was ever saved", "0123456789ab"):
        assert secret.lower() not in exported, secret


def test_off_unless_configured(tmp_path: Path) -> None:
    script = (
        "from tinycontext.telemetry.setup import configure_from_environment, enabled\n"
        "from tinycontext.entry.container import build_service\n"
        "from tinycontext.config.engine import TinyContextConfig\n"
        "from tests.fakes import HashEmbedder, WordTokenizer\n"
        "shutdown = configure_from_environment({'OTEL_SERVICE_NAME': 'x'})\n"
        "shutdown()\n"
        f"svc = build_service(TinyContextConfig(memory_db_path={str(tmp_path / 'm.db')!r}),"
        " embedder=HashEmbedder(), tokenizer=WordTokenizer(), background=False)\n"
        "print(enabled(), type(svc).__name__, type(svc.store).__name__)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "MemoryService", "SqliteStore"]


def test_servers_configure_from_otel_variables(tmp_path: Path) -> None:
    script = (
        "from opentelemetry import trace\n"
        "from tinycontext.telemetry.setup import configure_from_environment, enabled\n"
        "shutdown = configure_from_environment({'OTEL_TRACES_EXPORTER': 'console',"
        " 'OTEL_METRICS_EXPORTER': 'none'})\n"
        "with trace.get_tracer('t').start_as_current_span('tinycontext.probe'):\n"
        "    pass\n"
        "print(enabled())\n"
        "shutdown()\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
    assert "tinycontext.probe" in done.stderr  # console exporter writes to stderr, flushed


def test_traced_ports_cover_every_port_method() -> None:
    from tinycontext.ports.embedder import Embedder
    from tinycontext.ports.store import Store
    from tinycontext.telemetry.traced_ports import TracedEmbedder, port_methods, traced_store
    from tinycontext.testing import InMemoryStore

    methods = {n for n in vars(Embedder) if not n.startswith("_")}
    missing = {n for n in methods if n not in vars(TracedEmbedder)}
    assert not missing, f"TracedEmbedder does not forward {missing}"
    # The store proxy traces every method of every role of the port (closing is not traced).
    inner = InMemoryStore()
    store = traced_store(inner)
    assert isinstance(store, Store)
    assert len(port_methods(Store)) >= 22
    for name in port_methods(Store) - {"close"}:
        assert getattr(store, name) != getattr(inner, name), name
    assert store.close == inner.close


STORE_SPANS = """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)

from tests.contract.store_support import KEY, listing, mem, new
from tinycontext.ports.store import Scope
from tinycontext.telemetry.traced_ports import traced_store
from tinycontext.testing import InMemoryStore

store = traced_store(InMemoryStore())
added = new(mem(1, "alpha"))
store.add([added])
store.keyword_search([["alpha"]], Scope("episodic"), limit=5)
store.nearest_many([added.vector, added.vector], KEY, Scope("episodic"), 3)
store.find(added.memory.id, is_ref=False)
store.browse(listing())
store.close()
print(json.dumps([[s.name, dict(s.attributes)] for s in spans.get_finished_spans()]))
"""


def test_the_store_proxy_records_sizes_and_limits_never_values() -> None:
    done = subprocess.run([sys.executable, "-c", STORE_SPANS], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    op = "gen_ai.operation.name"
    assert json.loads(done.stdout) == [
        ["tinycontext.store.add", {op: "store.add", "tinycontext.store.item_count": 1}],
        ["tinycontext.store.keyword_search",
         {op: "store.keyword_search", "tinycontext.store.limit": 5,
          "tinycontext.store.result_count": 1}],
        ["tinycontext.store.nearest_many",
         {op: "store.nearest_many", "tinycontext.store.item_count": 2,
          "tinycontext.store.limit": 3, "tinycontext.store.result_count": 2}],
        ["tinycontext.store.find", {op: "store.find", "tinycontext.store.result_count": 1}],
        ["tinycontext.store.browse", {op: "store.browse", "tinycontext.store.result_count": 1}],
    ]
