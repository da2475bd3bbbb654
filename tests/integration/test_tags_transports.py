"""Tags, metadata and filters over the real transports: MCP tools (in-memory client) and
REST under uvicorn; and export/import keeping them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.servers import uvicorn_thread
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tests.integration.test_mcp_tools import run
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.config.allowed_hosts import allowed_hosts
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service
from tinycontext.rest import create_app


def _service(db: Path) -> MemoryService:
    return build_service(TinyContextConfig(memory_db_path=str(db)), store=SqliteStore(db),
                         embedder=HashEmbedder(), tokenizer=WordTokenizer(), clock=FixedClock(),
                         background=False)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[MemoryService]:
    svc = _service(tmp_path / "m.db")
    yield svc
    svc.close()


def test_mcp_tools_take_and_show_tags(service: MemoryService) -> None:
    saved = [
        {"content": "Billing runs on PostgreSQL.", "tags": ["Billing", "db"],
         "metadata": {"owner": "ana"}},
        {"content": "Billing invoices go out monthly."},
    ]
    out = run(service, [
        ("save_memories", {"memories": saved}),
        ("recall_memories", {"query": "billing", "tags": ["billing"]}),
        ("list_memories", {"metadata": {"owner": "ana"}}),
        ("recall_memories", {"query": "billing", "tags": ["bad tag"]}),
        ("recall_memories", {"query": "billing", "as_of": "2020-01-01"}),
    ])
    assert not out[0][0] and json.loads(out[0][1])["saved"][0]["tags"] == ["billing", "db"]
    recall = out[1][1]
    assert 'tags="billing,db">\nBilling runs on PostgreSQL.' in recall
    assert "monthly" not in recall
    assert 'metadata="{&quot;owner&quot;:&quot;ana&quot;}"' in out[2][1]
    assert out[3][0] and out[3][1].startswith("invalid_request:")
    assert "Historical view as of 2020-01-01T23:59:59Z" in out[4][1]
    ref = json.loads(out[0][1])["saved"][0]["ref"]
    [(error, text)] = run(service, [("update_memory", {"memory_id": ref, "tags": ["db"]})])
    assert not error and json.loads(text)["tags"] == ["db"]


def test_tags_count_in_the_recall_budget(service: MemoryService) -> None:
    from tinycontext.adapters.mcp.frame import MEMORY_FRAME, PROMPT_FRAMING, tags_attribute

    tags = tuple(f"topic-{i}" for i in range(16))
    service.save([{"content": "alpha beta gamma", "tags": list(tags)},
                  {"content": "alpha beta delta"}])
    frame = service.tokenizer.count(MEMORY_FRAME)
    shown = service.tokenizer.count(tags_attribute(tags))
    tagged = service.recall("alpha", top_k=1, tags=["topic-0"], framing=PROMPT_FRAMING)
    assert tagged.total_tokens == 3 + frame + shown
    plain = service.recall("delta", top_k=1, framing=PROMPT_FRAMING)
    assert plain.memories[0].content == "alpha beta delta"
    assert plain.total_tokens == 3 + frame
    # A budget that fits the memory and its frame but not its tags leaves it out.
    cut = service.recall("alpha", top_k=2, tags=["topic-0"], max_tokens=3 + frame + shown - 1,
                         framing=PROMPT_FRAMING)
    assert cut.truncated and cut.matched_count == 1


@pytest.fixture
def api(tmp_path: Path) -> Iterator[httpx.Client]:
    app = create_app(OneService(_service(tmp_path / "r.db")), hosts=allowed_hosts("127.0.0.1", ""))
    with uvicorn_thread(app) as base, httpx.Client(base_url=base, timeout=30) as client:
        yield client


def test_rest_filters_in_both_forms(api: httpx.Client) -> None:
    saved = api.post("/save_memories", json={"memories": [
        {"content": "Billing runs on PostgreSQL.", "tags": ["billing"],
         "metadata": {"owner": "ana", "n": 2}},
        {"content": "Billing invoices go out monthly.", "tags": ["billing", "finance"]},
    ]}).json()["saved"]
    assert saved[0]["metadata"] == {"owner": "ana", "n": 2}
    body = api.post("/recall_memories", json={"query": "billing", "tags": ["finance"]}).json()
    assert [m["ref"] for m in body["memories"]] == [saved[1]["ref"]]
    got = api.get("/recall_memories", params=[("query", "billing"), ("tags", "billing"),
                                              ("metadata", json.dumps({"n": 2.0}))]).json()
    assert [m["ref"] for m in got["memories"]] == [saved[0]["ref"]]
    listed = api.get("/list_memories", params=[("tags", "billing"), ("tags", "finance")]).json()
    assert [m["ref"] for m in listed["memories"]] == [saved[1]["ref"]]
    bad = api.get("/list_memories", params={"metadata": "{not json"})
    assert bad.status_code == 400 and bad.json()["detail"]["code"] == "invalid_request"
    bad = api.post("/recall_memories", json={"query": "x", "since": "2026-08-01",
                                             "until": "2026-07-01"})
    assert bad.status_code == 400 and "since is after until" in bad.json()["detail"]["message"]
    nested = api.post("/save_memories", json={"memories": [
        {"content": "x", "metadata": {"a": {"b": 1}}}]})
    assert nested.status_code == 422
    updated = api.post("/update_memory", json={"memory_id": saved[0]["ref"],
                                               "tags": ["billing", "db"]}).json()
    assert updated["tags"] == ["billing", "db"]
    detail = api.get("/get_memory", params={"memory_id": updated["ref"],
                                            "as_of": "2020-01-01"})
    assert detail.status_code == 404
    schema = api.get("/openapi.json").json()["components"]["schemas"]
    assert {"tags", "metadata", "since", "until", "as_of"} <= set(
        schema["RecallRequest"]["properties"])


def test_export_import_keeps_tags_and_old_files_import(service: MemoryService,
                                                      tmp_path: Path) -> None:
    from tinycontext.domain.records import record

    service.save([{"content": "Billing runs on PostgreSQL.", "tags": ["billing"],
                   "metadata": {"owner": "ana"}}])
    lines = [json.dumps(record(m, v)) for m, v in service.export_records()]
    assert json.loads(lines[0])["tags"] == ["billing"]
    old: dict[str, Any] = json.loads(lines[0])
    old.pop("tags"), old.pop("metadata")
    old["id"] = "11111111-1111-4111-8111-111111111111"
    other = _service(tmp_path / "other.db")
    report = other.import_jsonl([*lines, json.dumps(old)])
    assert report.imported == 2
    got = other.list_page(tags=["billing"]).to_dict()["memories"]
    assert len(got) == 1 and got[0]["metadata"] == {"owner": "ana"}
    assert other.detail("111111111111").to_dict()["tags"] == []
    other.close()
