"""`tinycontext serve` (Streamable HTTP at /mcp) as a subprocess, driven by the SDK's client."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from tests.e2e.servers import cli_env, free_port, served_process, wait_for_health
from tests.e2e.test_mcp_stdio import TOOLS, round_trip

pytestmark = pytest.mark.slow

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "0"}}}
MCP_HEADERS = {"accept": "application/json, text/event-stream",
               "content-type": "application/json"}


# The server's response modes (one JSON body, the default; SSE streams; no sessions) with the
# official client's connect modes (auto = the per-request protocol, legacy = handshake + session).
MODES = [(("--sse",), "auto"), (("--sse",), "legacy"), ((), "auto"),
         ((), "legacy"), (("--stateless", "--sse"), "legacy"),
         (("--stateless",), "legacy")]


@pytest.mark.parametrize(("server_args", "client_mode"), MODES,
                         ids=["sse-auto", "sse-legacy", "json-auto", "json-legacy",
                              "stateless-sse-legacy", "stateless-json-legacy"])
def test_streamable_http_round_trip(tmp_path: Path, server_args: tuple[str, ...],
                                    client_mode: str) -> None:
    with served_process(tmp_path, "serve", *server_args) as (base, _):
        assert httpx.get(base + "/health").json()["status"] == "ok"

        async def main() -> tuple[Any, dict[str, Any], Any]:
            async with Client(base + "/mcp", mode=client_mode) as client:  # type: ignore[arg-type]
                tools = (await client.list_tools()).tools
                seen = await round_trip(client)
                error = await client.call_tool("update_memory", {"memory_id": "0123456789ab",
                                                                 "content": "x"})
                return tools, seen, error

        tools, seen, error = anyio.run(main)
    assert {t.name: list(t.input_schema["properties"]) for t in tools} == TOOLS
    assert f'ref="{seen["saved"][0]["ref"]}" relevance="high"' in seen["recall"]
    assert "Thursday" in seen["after"]
    assert error.is_error and error.content[0].text.startswith("memory_not_found: ")


def test_dns_rebinding_protection(tmp_path: Path) -> None:
    with served_process(tmp_path, "serve",
                        TINYCONTEXT_ALLOWED_HOSTS="memory.internal") as (base, _):
        port = base.rsplit(":", 1)[1]
        refused = httpx.post(base + "/mcp", json=INIT,
                             headers={**MCP_HEADERS, "host": f"attacker.example:{port}"})
        assert refused.status_code == 421
        for host in (f"127.0.0.1:{port}@evil.example", f"memory.internal:{port}/evil.example"):
            tail = httpx.post(base + "/mcp", json=INIT, headers={**MCP_HEADERS, "host": host})
            assert tail.status_code == 421, host
        evil_origin = httpx.post(base + "/mcp", json=INIT,
                                 headers={**MCP_HEADERS, "origin": "http://attacker.example"})
        assert evil_origin.status_code == 403
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"memory.internal:{port}"):
            accepted = httpx.post(base + "/mcp", json=INIT, headers={**MCP_HEADERS, "host": host})
            assert accepted.status_code == 200, (host, accepted.text)


def test_eight_concurrent_clients_lose_nothing(tmp_path: Path) -> None:
    duration, clients = 4.0, 8
    with served_process(tmp_path, "serve") as (base, _):
        counts = {"saves": 0, "recalls": 0, "errors": 0}

        async def worker(number: int) -> None:
            async with Client(base + "/mcp") as client:
                end = time.monotonic() + duration
                i = 0
                while time.monotonic() < end:
                    i += 1
                    saved = await client.call_tool("save_memories", {"memories": [
                        {"content": f"Client {number} noted fact {i} about project {i * 7919}."}]})
                    recalled = await client.call_tool("recall_memories",
                                                      {"query": f"project {i * 7919}"})
                    if saved.is_error or recalled.is_error:
                        counts["errors"] += 1
                    else:
                        counts["saves"] += len(json.loads(saved.content[0].text)["saved"])
                        counts["recalls"] += 1

        async def main() -> int:
            async with anyio.create_task_group() as group:
                for number in range(clients):
                    group.start_soon(worker, number)
            async with Client(base + "/mcp") as client:
                page = await client.call_tool("list_memories", {"limit": 1})
                text = page.content[0].text  # type: ignore[union-attr]
                return int(text.split('total_count="', 1)[1].split('"', 1)[0])

        stored = anyio.run(main)
    assert counts["errors"] == 0 and counts["recalls"] > clients
    assert stored == counts["saves"]


def test_rest_app_import_path_runs_under_uvicorn(tmp_path: Path) -> None:
    import subprocess

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "tinycontext.adapters.rest_api:app",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base + "/health", process=process)
        saved = httpx.post(base + "/save_memories", json={"session_id": "s", "memories": [
            {"content": "The REST app path works with uvicorn."}]})
        assert saved.status_code == 200
        recalled = httpx.get(base + "/recall_memories",
                             params={"query": "does the REST path work", "session_id": "s"})
        assert recalled.json()["memories"][0]["content"] == "The REST app path works with uvicorn."
        assert httpx.get(base + "/health", headers={"host": "evil.example"}).status_code == 421
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert (tmp_path / "store" / "memories.db").exists()


def test_json_response_mode_answers_with_one_json_body(tmp_path: Path) -> None:
    """By default (and with --json-response) a tool call is answered as application/json;
    --sse answers it as an SSE stream."""
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_memories", "arguments": {"limit": 1}}}
    for args, expected in ((("--sse",), "text/event-stream"), ((), "application/json"),
                           (("--json-response",), "application/json")):
        with served_process(tmp_path, "serve", *args) as (base, _):
            opened = httpx.post(base + "/mcp", json=INIT, headers=MCP_HEADERS)
            session = {"mcp-session-id": opened.headers["mcp-session-id"],
                       "mcp-protocol-version": "2025-06-18"}
            httpx.post(base + "/mcp", headers={**MCP_HEADERS, **session},
                       json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            answer = httpx.post(base + "/mcp", json=call, headers={**MCP_HEADERS, **session})
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith(expected), answer.headers
        body = answer.text if expected == "application/json" else \
            answer.text.split("data: ", 1)[1].strip()
        text = json.loads(body)["result"]["content"][0]["text"]
        assert 'total_count="0"' in text
