"""Parity: one scenario through MCP and through REST (real model, real SQLite, real uvicorn)
ends in the same stored state, with the same JSON results and the same ranked memories."""

from __future__ import annotations

import io
import itertools
import json
import re
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from tests.e2e.servers import uvicorn_thread
from tests.fakes import FixedClock
from tinycontext.adapters.embedding.tiktoken_tokenizer import TiktokenTokenizer
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.app.transfer import export_jsonl
from tinycontext.config.engine import TinyContextConfig
from tinycontext.rest import create_app

pytestmark = pytest.mark.slow

FACTS = [
    "The billing service was migrated from MySQL to PostgreSQL in March.",
    "Deployments to production happen every Tuesday afternoon.",
    "The user's daughter is learning to play the violin.",
    "Build error E4711 means the Gradle cache is corrupted.",
    "The API rate limit is 600 requests per minute per key.",
    "Quarterly planning moved to the second week of March.",
    "The staging database listens on port 5433.",
    "The team prefers squash merges for feature branches.",
]
UPDATED = "The billing service moved to CockroachDB in June."
QUERIES = ["Which database does billing use?", "What instrument is the kid studying?",
           "E4711", "when is planning"]


def _service(path: Path, embedder: Any) -> MemoryService:
    counter = itertools.count(1)
    store = SqliteStore(path)
    return MemoryService(
        store, embedder, TiktokenTokenizer(), FixedClock(),
        TinyContextConfig(memory_db_path=str(path)), background=False, release=store.close,
        new_id=lambda: f"{next(counter):08x}-1111-4222-8333-444444444444",
    )


def _refs(text: str) -> list[tuple[str, str]]:
    body = text.split("<recalled_memories", 1)[1]
    return re.findall(r'<memory index="\d+" ref="([0-9a-f]{12})" relevance="(\w+)"', body)


def _mcp(service: MemoryService) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {"recalls": []}
        async with Client(create_mcp_server(OneService(service), warm=False)) as client:
            async def call(name: str, args: dict[str, Any]) -> Any:
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content
                return result.structured_content or result.content[0].text  # type: ignore[union-attr]

            out["save"] = await call("save_memories", {"memories": [
                *({"content": f} for f in FACTS), {"content": "Call me Ada.", "kind": "profile"}]})
            for query in QUERIES:
                out["recalls"].append(_refs(await call("recall_memories", {"query": query})))
            out["list"] = re.findall(r'ref="([0-9a-f]{12})"',
                                     await call("list_memories", {"search": "march"}))
            ref = out["save"]["saved"][0]["ref"]
            out["update"] = await call("update_memory", {"memory_id": ref, "content": UPDATED})
            doomed = out["save"]["saved"][6]["id"]
            out["delete"] = await call("delete_memory", {"memory_id": doomed})
            out["recalls"].append(_refs(await call("recall_memories", {"query": QUERIES[0]})))
        return out

    return anyio.run(main)


def _rest(service: MemoryService) -> dict[str, Any]:
    out: dict[str, Any] = {"recalls": []}
    app = create_app(OneService(service))
    with uvicorn_thread(app) as base, httpx.Client(base_url=base) as api:
        def call(path: str, body: dict[str, Any]) -> Any:
            response = api.post(path, json=body)
            assert response.status_code == 200, response.text
            return response.json()

        def ranked(query: str) -> list[tuple[str, str]]:
            result = call("/recall_memories", {"query": query})
            return [(m["ref"], m["relevance"]) for m in result["memories"]]

        out["save"] = call("/save_memories", {"memories": [
            *({"content": f} for f in FACTS), {"content": "Call me Ada.", "kind": "profile"}]})
        out["recalls"] = [ranked(q) for q in QUERIES]
        out["list"] = [m["ref"] for m in call("/list_memories", {"search": "march"})["memories"]]
        ref = out["save"]["saved"][0]["ref"]
        out["update"] = call("/update_memory", {"memory_id": ref, "content": UPDATED})
        out["delete"] = call("/delete_memory", {"memory_id": out["save"]["saved"][6]["id"]})
        out["recalls"].append(ranked(QUERIES[0]))
    return out


def _state(service: MemoryService) -> list[dict[str, Any]]:
    out = io.StringIO()
    export_jsonl(service.store, out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_mcp_and_rest_agree(tmp_path: Path, real_embedder: Any) -> None:
    via_mcp = _service(tmp_path / "mcp.db", real_embedder)
    via_rest = _service(tmp_path / "rest.db", real_embedder)
    seen_mcp, seen_rest = _mcp(via_mcp), _rest(via_rest)
    assert seen_mcp["save"] == seen_rest["save"]
    assert seen_mcp["update"] == seen_rest["update"] and seen_mcp["delete"] == seen_rest["delete"]
    assert seen_mcp["recalls"] == seen_rest["recalls"]
    assert all(seen_mcp["recalls"]) and seen_mcp["list"] == seen_rest["list"]
    assert _state(via_mcp) == _state(via_rest)
    via_mcp.close()
    via_rest.close()
