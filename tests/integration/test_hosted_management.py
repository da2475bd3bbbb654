"""Management views (tinysuite.manage/1) through a real MCP client: hosted, HTTP and stdio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tests.integration.hosted_support import OPERATOR, hosted_server, proxy_headers, serve
from tinycontext.adapters.hosting.tenancy import Access
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.adapters.mcp.transports import http_app
from tinycontext.app.management import Management
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service

MEDIA = "application/vnd.tinysuite.manage+json"
MANIFEST = "tinycontext://manage/manifest"
ALICE_FACTS = [
    "The cello lesson is on Monday.",
    "Alice bought a new bow for the cello; the cello shop is in Leipzig and sells cello strings.",
    "Quarterly report is due in October.",
    "The dentist appointment moved to Friday.",
]


def _http(headers: dict[str, str]) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers=headers, timeout=30)


async def _read(client: Client, uri: str) -> dict[str, Any]:
    result = await client.read_resource(uri)
    content = result.contents[0]
    assert content.mime_type == MEDIA, content.mime_type
    return json.loads(content.text)  # type: ignore[union-attr,no-any-return]


async def _refused(client: Client, uri: str) -> str:
    with pytest.raises(MCPError) as caught:
        await client.read_resource(uri)
    return caught.value.message


def test_hosted_views_show_only_the_callers_store(tmp_path: Path) -> None:
    env = {"TINYCONTEXT_MANAGEMENT": "on", "TINYCONTEXT_MANAGEMENT_TOKEN": OPERATOR}
    with hosted_server(tmp_path, kind="mcp", **env) as server:
        url = server.base + "/mcp"

        async def as_alice() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            http = _http(proxy_headers("alice"))
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                for fact in ALICE_FACTS:
                    server.clock.advance(3600)
                    await client.call_tool("save_memories", {"memories": [{"content": fact}]})
                await client.call_tool("save_memories", {"memories": [
                    {"content": "Call the user Ali.", "kind": "profile"}]})
                await client.call_tool("recall_memories",
                                      {"query": "dentist appointment", "top_k": 1})
                listed = await client.list_resources()
                seen["listed"] = {str(r.uri) for r in listed.resources}
                templates = await client.list_resource_templates()
                seen["templates"] = {t.uri_template for t in templates.resource_templates}
                seen["manifest"] = await _read(client, MANIFEST)
                seen["page1"] = await _read(client, "tinycontext://manage/memories?page_size=2")
                seen["page2"] = await _read(client, seen["page1"]["page"]["next"])
                seen["search"] = await _read(client, "tinycontext://manage/memories?search=cello")
                seen["profile"] = await _read(client, "tinycontext://manage/memories?kind=profile")
                seen["stale"] = await _read(client, "tinycontext://manage/memories?order=stale")
                row = seen["search"]["rows"][0]
                seen["detail"] = await _read(client, row["detail"])
                seen["overview"] = await _read(client, "tinycontext://manage/overview")
                seen["service"] = await _refused(client, "tinycontext://manage/service")
                seen["bad"] = await _refused(client, "tinycontext://manage/memories?page=0")
                seen["gone"] = await _refused(client, "tinycontext://manage/memories/0123456789ab")
            return seen

        async def visit(headers: dict[str, str]) -> dict[str, Any]:
            seen: dict[str, Any] = {}
            http = _http(headers)
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                seen["memories"] = await _read(client, "tinycontext://manage/memories")
                seen["overview"] = await _read(client, "tinycontext://manage/overview")
                seen["manifest"] = await _read(client, MANIFEST)
                listed = await client.list_resources()
                seen["listed"] = {str(r.uri) for r in listed.resources}
                seen["service"] = await _read(client, "tinycontext://manage/service")
            return seen

        alice = anyio.run(as_alice)
        operator = anyio.run(
            visit, proxy_headers("bob", Authorization=f"Bearer {OPERATOR}"))

    manifest = alice["manifest"]
    assert manifest["contract"] == "tinysuite.manage/1" and manifest["mode"] == "hosted"
    views = {v["id"]: v for v in manifest["views"]}
    assert list(views) == ["memories", "overview", "service"]
    assert views["memories"]["available"] and views["overview"]["available"]
    assert views["service"]["available"] is False and views["service"]["access"] == "operator"
    assert "tinycontext://manage/service" not in alice["listed"]
    assert {MANIFEST, "tinycontext://manage/overview"} <= alice["listed"]
    assert views["memories"]["uri_template"] in alice["templates"]

    page1, page2 = alice["page1"], alice["page2"]
    assert page1["page"]["total_count"] == 5 and page1["page"]["page_count"] == 3
    assert [r["content"] for r in page1["rows"]] == ["Call the user Ali.", ALICE_FACTS[3]]
    assert page2["page"]["number"] == 2 and page2["page"]["previous"]
    assert [r["content"] for r in page2["rows"]] == [ALICE_FACTS[2], ALICE_FACTS[1]]
    search = alice["search"]
    assert search["query"]["order"] == "relevance" and search["page"]["total_count"] == 2
    assert search["rows"][0]["content"].startswith("Alice bought")  # best match first
    assert [r["kind"] for r in alice["profile"]["rows"]] == ["profile"]
    stale = alice["stale"]["rows"]
    assert [r["recall_count"] for r in stale] == [0, 0, 0, 0, 1]
    assert stale[-1]["content"] == ALICE_FACTS[3]
    detail = alice["detail"]["memory"]
    assert detail["content"] == ALICE_FACTS[1] and alice["detail"]["view"] == "memory"
    assert {a["tool"] for a in alice["detail"]["actions"]} == {"update_memory", "delete_memory"}
    overview = alice["overview"]
    assert overview["counts"] == {"total": 5, "by_kind": {"episodic": 4, "profile": 1}}
    never = overview["never_recalled"]
    assert never["count"] == 3 and never["kind"] == "episodic"
    assert [e["content"] for e in never["examples"]] == ALICE_FACTS[:3]  # oldest first
    assert overview["time_bounds"]["oldest"] < overview["time_bounds"]["newest"]
    assert alice["service"].startswith("unauthorized:")
    assert alice["bad"].startswith("invalid_request:")
    assert alice["gone"].startswith("memory_not_found:")

    assert operator["memories"]["rows"] == []  # bob's own (empty) store, never alice's
    assert operator["overview"]["counts"]["total"] == 0
    assert "tinycontext://manage/service" in operator["listed"]
    service = operator["service"]
    assert service["mode"] == "hosted" and service["stores"]["store_count"] == 2  # alice, bob
    assert service["stores"]["disk_bytes"] > 0 and service["stores"]["max_open_stores"] == 64
    assert service["embedding"]["model_key"] == "hash-64+ctx1+tok1"  # context, token bits
    assert service["embedding"]["dimensions"] == 64


def _single_user(tmp_path: Path) -> Any:
    return build_service(TinyContextConfig(memory_db_path=str(tmp_path / "m.db")),
                         embedder=HashEmbedder(), tokenizer=WordTokenizer(),
                         clock=FixedClock(), background=False)


def test_http_management_needs_the_operator_token(tmp_path: Path) -> None:
    service = _single_user(tmp_path)
    service.save([{"content": "The build uses Bazel."}])
    app = http_app(OneService(service), "127.0.0.1", access=Access(management_token=OPERATOR),
                   management=Management())

    async def visit(headers: dict[str, str]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        http = _http(headers)
        async with http, Client(streamable_http_client(base + "/mcp", http_client=http)) as c:
            seen["listed"] = {str(r.uri) for r in (await c.list_resources()).resources}
            for name in ("manifest", "memories", "overview", "service"):
                try:
                    seen[name] = await _read(c, f"tinycontext://manage/{name}")
                except MCPError as exc:
                    seen[name] = exc.message
            seen["tool"] = (await c.call_tool("list_memories", {})).is_error
        return seen

    with serve(app) as base:
        anonymous = anyio.run(visit, {})
        wrong = anyio.run(visit, {"Authorization": "Bearer " + "x" * 40})
        operator = anyio.run(visit, {"Authorization": f"Bearer {OPERATOR}"})
    service.close()
    for refused in (anonymous, wrong):
        assert refused["listed"] == set()
        for name in ("manifest", "memories", "overview", "service"):
            assert isinstance(refused[name], str) and refused[name].startswith("unauthorized:")
        assert refused["tool"] is False  # the ordinary tools are not management reads
    assert operator["manifest"]["mode"] == "single-user"
    assert all(v["available"] for v in operator["manifest"]["views"])
    assert operator["memories"]["rows"][0]["content"] == "The build uses Bazel."
    assert operator["service"]["stores"]["store_count"] == 1


def test_stdio_operator_sees_every_view_and_management_is_off_by_default(tmp_path: Path) -> None:
    service = _single_user(tmp_path)
    service.save([{"content": "The staging database is Postgres 16."}])
    with_views = create_mcp_server(OneService(service), warm=False, management=Management())
    without = create_mcp_server(OneService(service), warm=False)

    async def main() -> tuple[dict[str, Any], dict[str, Any], int]:
        async with Client(with_views) as client:
            manifest = await _read(client, MANIFEST)
            info = await _read(client, "tinycontext://manage/service")
        async with Client(without) as client:
            listed = len((await client.list_resources()).resources)
        return manifest, info, listed

    manifest, info, listed = anyio.run(main)
    service.close()
    assert all(v["available"] for v in manifest["views"])
    assert info["mode"] == "single-user" and info["stores"]["disk_bytes"] > 0
    assert listed == 0


def _shape(value: Any) -> Any:
    """The keys of a JSON document, recursively (list items: the first one)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [_shape(value[0])]
    return None


def test_docs_show_the_json_shapes_the_views_return(tmp_path: Path) -> None:
    import re

    docs = Path(__file__).resolve().parents[2] / "docs" / "guides" / "hosted.md"
    documented = {}
    for block in re.findall(r"```json\n(.*?)```", docs.read_text(), re.S):
        document = json.loads(block)
        if "contract" in document:
            documented[document.get("view", "manifest")] = document
    service = _single_user(tmp_path)
    service.save([{"content": "Docs and code agree."}])
    server = create_mcp_server(OneService(service), warm=False, management=Management())

    async def main() -> dict[str, Any]:
        actual: dict[str, Any] = {}
        async with Client(server) as client:
            actual["manifest"] = await _read(client, MANIFEST)
            actual["memories"] = await _read(client, "tinycontext://manage/memories?page_size=1")
            ref = actual["memories"]["rows"][0]["ref"]
            actual["memory"] = await _read(client, f"tinycontext://manage/memories/{ref}")
            actual["overview"] = await _read(client, "tinycontext://manage/overview")
            actual["service"] = await _read(client, "tinycontext://manage/service")
        return actual

    actual = anyio.run(main)
    service.close()
    assert set(documented) == set(actual)
    for name in ("manifest", "memories", "overview"):
        assert _shape(documented[name]) == _shape(actual[name]), name
    assert _shape(documented["memory"])["memory"] == _shape(actual["memory"])["memory"]
    doc_service, real_service = _shape(documented["service"]), _shape(actual["service"])
    assert set(doc_service) == set(real_service)
    assert doc_service["embedding"] == real_service["embedding"]
    assert set(real_service["stores"]) <= set(doc_service["stores"])  # hosted adds open_*
