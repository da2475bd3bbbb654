"""Run by test_store_read_only.py in a process that cannot write the store (a read-only mount,
or file permissions): every operation through the Python API, REST and MCP; prints JSON."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client

from tests.e2e.servers import uvicorn_thread
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.app.transfer import export_jsonl
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.errors import TinyContextError
from tinycontext.entry.container import build_service
from tinycontext.rest import create_app


def open_service(path: Path) -> MemoryService:
    return build_service(
        TinyContextConfig(memory_db_path=str(path)), store=SqliteStore(path),
        embedder=HashEmbedder(), tokenizer=WordTokenizer(), clock=FixedClock(),
        background=False,
    )


def outcome(call: Any) -> dict[str, Any]:
    try:
        return {"ok": call()}
    except TinyContextError as exc:
        return {"code": exc.code, "message": exc.message}


def _export(service: MemoryService) -> int:
    return export_jsonl(service.core.store, io.StringIO())


def python_api(path: Path) -> dict[str, Any]:
    service = open_service(path)
    try:
        first = service.list_page(session_id="work").to_dict()["memories"][0]["id"]
        return {
            "recall": outcome(lambda: service.recall("billing job", session_id="work").to_dict()),
            "recent": outcome(lambda: service.recall(session_id="work").to_dict()),
            "list": outcome(lambda: service.list_page(session_id="work").to_dict()),
            "get": outcome(lambda: service.detail(first).to_dict()),
            "save": outcome(lambda: service.save([{"content": "Cannot be kept."}]).to_dict()),
            "update": outcome(lambda: service.update(first, "Cannot be changed.").to_dict()),
            "delete": outcome(lambda: service.delete(first).to_dict()),
            "export": outcome(lambda: _export(service)),
        }
    finally:
        service.close()


def rest(path: Path) -> dict[str, Any]:
    app = create_app(OneService(open_service(path)), warm=False)
    with uvicorn_thread(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        calls = {
            "recall": client.post("/recall_memories", json={"query": "billing job"}),
            "list": client.get("/list_memories"),
            "save": client.post("/save_memories", json={"memories": [{"content": "No."}]}),
        }
    return {name: {"status": r.status_code, "body": r.json()} for name, r in calls.items()}


def mcp(path: Path) -> dict[str, Any]:
    service = open_service(path)
    server = create_mcp_server(OneService(service), warm=False)

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            out = {}
            for name, args in (
                ("recall_memories", {"query": "billing job"}),
                ("save_memories", {"memories": [{"content": "No."}]}),
            ):
                result = await client.call_tool(name, args)
                out[name] = {"error": result.is_error, "text": result.content[0].text}  # type: ignore[union-attr]
            return out

    try:
        return anyio.run(main)
    finally:
        service.close()


if __name__ == "__main__":
    store = Path(sys.argv[1])
    print(json.dumps({"python": python_api(store), "rest": rest(store), "mcp": mcp(store)}))
