"""What the transports return, byte for byte, for one fixed scenario over the port fakes.

A refactoring of the application core must not change a single byte of the MCP tool texts,
the REST JSON, the management documents or the Python API's dicts (key order included).
The recorded outputs live in snapshots/transport_outputs.json; after an intended change,
rewrite them with TINYCONTEXT_UPDATE_SNAPSHOT=1 and review the diff.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import anyio
from fastapi.testclient import TestClient
from mcp import Client

from tinycontext.adapters.mcp.frame import PROMPT_FRAMING
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.adapters.rest.api import build_app
from tinycontext.app import management as views
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer

SNAPSHOT = Path(__file__).parent / "snapshots" / "transport_outputs.json"
FACTS = [
    "Billing runs on PostgreSQL <since March> & uses \"pgbouncer\".",
    "Deployments to production happen every Tuesday afternoon.",
    "The staging database listens on port 5433.",
    "The team prefers squash merges for feature branches.",
    "Build error E4711 means the Gradle cache is corrupted " + "really " * 30 + "badly.",
    "The deploy key is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + " for the bot.",
]


def _service() -> MemoryService:
    counter = itertools.count(1)
    config = TinyContextConfig(save_length_notice_tokens=20, profile_max_tokens=40)
    return MemoryService(
        InMemoryStore(), HashEmbedder(), WordTokenizer(), FixedClock(), config,
        background=False, new_id=lambda: f"{next(counter):08x}-0000-4000-8000-000000000000",
        recall_framing=PROMPT_FRAMING,  # the Python API's default, as the container builds it
    )


def _mcp() -> list[Any]:
    service = _service()

    async def main() -> list[Any]:
        out: list[Any] = []
        async with Client(create_mcp_server(OneService(service), warm=False)) as client:
            async def call(name: str, args: dict[str, Any]) -> None:
                result = await client.call_tool(name, args)
                out.append([name, result.is_error, [c.text for c in result.content]])  # type: ignore[union-attr]

            await call("recall_memories", {})
            await call("save_memories", {"memories": [
                *({"content": f} for f in FACTS), {"content": FACTS[1]},
                {"content": "Call the user Ada <admin>.", "kind": "profile"}]})
            await call("recall_memories", {"query": "database PostgreSQL"})
            await call("recall_memories", {"query": "deploy", "top_k": 3})
            await call("recall_memories", {})
            await call("list_memories", {"limit": 2, "offset": 1})
            await call("list_memories", {"kind": "profile"})
            await call("list_memories", {"search": "nothing-like-this"})
            await call("list_memories", {"offset": 50})
            await call("update_memory", {"memory_id": "000000010000",
                                         "content": FACTS[0] + " Now."})
            await call("get_memory", {"memory_id": "000000010000"})
            await call("get_memory", {"memory_id": "000000080000"})
            await call("get_memory", {"memory_id": "000000090000"})
            await call("delete_memory", {"memory_id": "000000080000"})
            await call("delete_memory", {"memory_id": "000000030000"})
            await call("get_memory", {"memory_id": "000000030000"})
        return out

    return anyio.run(main)


def _rest() -> list[Any]:
    client = TestClient(build_app(OneService(_service()), warm=False))
    out: list[Any] = []

    def call(method: str, path: str, **kwargs: Any) -> None:
        response = client.request(method, path, **kwargs)
        out.append([method, path, response.status_code, response.text])

    call("POST", "/recall_memories", json={})
    call("POST", "/save_memories", json={"session_id": "work", "memories": [
        *({"content": f} for f in FACTS), {"content": FACTS[1]},
        {"content": "Call the user Ada <admin>.", "kind": "profile"}]})
    call("POST", "/recall_memories", json={"query": "database PostgreSQL", "session_id": "work"})
    call("GET", "/recall_memories", params={"query": "deploy", "top_k": 3, "max_tokens": 30})
    call("POST", "/recall_memories", json={"max_tokens": 25})
    call("POST", "/list_memories", json={"limit": 2, "offset": 1})
    call("GET", "/list_memories", params={"kind": "profile", "session_id": "work"})
    call("POST", "/update_memory", json={"memory_id": "000000010000", "content": "Now MySQL."})
    call("POST", "/get_memory", json={"memory_id": "000000010000"})
    call("GET", "/get_memory", params={"memory_id": "000000080000"})
    call("GET", "/get_memory", params={"memory_id": "000000090000"})
    call("POST", "/delete_memory", json={"memory_id": "000000080000"})
    call("POST", "/delete_memory", json={"memory_id": "000000030000"})
    call("POST", "/get_memory", json={"memory_id": "000000030000"})
    return out


def _python_and_views() -> list[Any]:
    service = _service()
    out: list[Any] = []

    def keep(name: str, value: Any) -> None:
        out.append([name, json.dumps(value, ensure_ascii=False)])

    keep("recall_empty", service.recall().to_dict())
    keep("save", service.save(
        [{"content": f} for f in FACTS] + [{"content": FACTS[2]},
                                 {"content": "Call me Ada.", "kind": "profile"}],
        session_id="s1").to_dict())
    keep("recall", service.recall("database port", max_tokens=20).to_dict())
    keep("recent", service.recall(session_id="s1", top_k=2).to_dict())
    keep("list", service.list_page(limit=3, sort="stale").to_dict())
    keep("update", service.update("000000020000", "Deploys happen on Wednesdays.").to_dict())
    keep("get", service.detail("000000020000").to_dict())
    keep("delete", service.delete("000000080000").to_dict())
    keep("view_memories", views.memories_view(service, page="1", page_size="2"))
    keep("view_detail", views.memory_detail_view(service, "000000030000"))
    keep("view_overview", views.overview_view(service))
    return out


def _capture() -> dict[str, Any]:
    return {"mcp": _mcp(), "rest": _rest(), "python": _python_and_views()}


def test_transport_outputs_are_unchanged() -> None:
    captured = _capture()
    if os.environ.get("TINYCONTEXT_UPDATE_SNAPSHOT") == "1":
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(captured, indent=1, ensure_ascii=False) + "\n")
    recorded = json.loads(SNAPSHOT.read_text())
    for part in ("mcp", "rest", "python"):
        for got, want in zip(captured[part], recorded[part], strict=True):
            # A deliberate change (ranking, a new field) changes these too: rewrite the
            # snapshot with TINYCONTEXT_UPDATE_SNAPSHOT=1 and review its diff in the commit.
            assert got == want
