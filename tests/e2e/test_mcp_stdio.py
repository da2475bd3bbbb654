"""`tinycontext` as a stdio MCP subprocess with the real default model, driven by the SDK client."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.e2e.servers import cli_env, tinycontext_command

pytestmark = pytest.mark.slow

TOOLS = {
    "save_memories": ["memories"],
    "recall_memories": ["query", "top_k", "tags", "metadata", "since", "until", "as_of"],
    "list_memories": ["kind", "since", "until", "limit", "offset", "sort", "search", "tags",
                      "metadata", "as_of"],
    "get_memory": ["memory_id", "as_of"],
    "update_memory": ["memory_id", "content", "tags", "metadata"],
    "delete_memory": ["memory_id"],
}


def _params(tmp_path: Path, *args: str, **env: str) -> StdioServerParameters:
    command = tinycontext_command()
    return StdioServerParameters(command=command[0], args=[*command[1:], *args],
                                 env=cli_env(tmp_path, **env))


async def round_trip(client: Client) -> dict[str, Any]:
    """save -> recall -> list -> get -> update -> delete, with the texts and JSON seen."""
    seen: dict[str, Any] = {}

    async def tool(name: str, arguments: dict[str, Any]) -> str:
        result = await client.call_tool(name, arguments)
        assert not result.is_error, (name, result.content)
        return result.content[0].text  # type: ignore[union-attr,no-any-return]

    saved = json.loads(await tool("save_memories", {"memories": [
        {"content": "The billing service was migrated from MySQL to PostgreSQL."},
        {"content": "Deployments to production happen every Tuesday afternoon."},
        {"content": "Call the user Marcell.", "kind": "profile"},
    ]}))["saved"]
    seen["saved"] = saved
    seen["recall"] = await tool("recall_memories", {"query": "Which database does billing use?"})
    seen["recent"] = await tool("recall_memories", {})
    seen["list"] = await tool("list_memories", {"search": "deploy"})
    seen["get"] = await tool("get_memory", {"memory_id": saved[0]["ref"]})
    seen["update"] = json.loads(await tool("update_memory", {
        "memory_id": saved[1]["ref"], "content": "Deployments happen every Thursday morning."}))
    seen["delete"] = json.loads(await tool("delete_memory", {"memory_id": saved[0]["id"]}))
    seen["after"] = await tool("recall_memories", {"query": "When are deployments?"})
    return seen


def test_stdio_round_trip_errors_and_tool_names(tmp_path: Path) -> None:
    async def main() -> tuple[dict[str, Any], Any, list[Any]]:
        async with Client(_params(tmp_path)) as client:
            tools = (await client.list_tools()).tools
            seen = await round_trip(client)
            errors = [
                await client.call_tool("recall_memories", {"query": "x", "session_id": "a"}),
                await client.call_tool("get_memory", {"memory_id": "0123456789ab"}),
                await client.call_tool("save_memories", {"memories": [{"content": ""}]}),
            ]
            still = await client.call_tool("recall_memories", {"query": "deployments"})
            assert not still.is_error
            return seen, tools, errors

    seen, tools, errors = anyio.run(main)
    assert {t.name: list(t.input_schema["properties"]) for t in tools} == TOOLS
    saved = seen["saved"]
    assert seen["recall"].startswith("<agent_profile>\n")
    assert "Call the user Marcell." in seen["recall"]
    first = seen["recall"].split("<recalled_memories", 1)[1]
    assert f'index="1" ref="{saved[0]["ref"]}" relevance="high"' in first
    assert 'mode="recent"' in seen["recent"] and "relevance=" not in seen["recent"].split(
        "<recalled_memories", 1)[1]
    assert f'ref="{saved[1]["ref"]}"' in seen["list"]
    assert "MySQL to PostgreSQL" in seen["get"] and 'status="live"' in seen["get"]
    assert seen["update"]["supersedes"]["ref"] == saved[1]["ref"]
    assert seen["delete"] == {"id": saved[0]["id"], "ref": saved[0]["ref"], "deleted": True}
    assert "Thursday" in seen["after"] and "Tuesday" not in seen["after"]
    texts = [e.content[0].text for e in errors]
    assert all(e.is_error for e in errors)
    assert texts[0].startswith("invalid_request: ") and texts[1].startswith("memory_not_found: ")
    assert texts[2].startswith("empty_memory: ")


def _rpc(id_: int | None, method: str, params: dict[str, Any]) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        message["id"] = id_
    return json.dumps(message) + "\n"


def test_stdout_carries_nothing_but_protocol(tmp_path: Path) -> None:
    first = "".join([
        _rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "raw", "version": "0"}}),
        _rpc(None, "notifications/initialized", {}),
        _rpc(2, "tools/list", {}),
        _rpc(3, "tools/call", {"name": "save_memories",
                               "arguments": {"memories": [{"content": "Raw stdio works."}]}}),
    ])
    then = "".join([  # requests run concurrently, so these wait for the save's answer
        _rpc(4, "tools/call", {"name": "get_memory", "arguments": {"memory_id": "nope"}}),
        _rpc(5, "tools/call", {"name": "recall_memories", "arguments": {"query": "raw stdio"}}),
    ])
    process = subprocess.Popen(
        tinycontext_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        env=cli_env(tmp_path, TINYCONTEXT_LOG_LEVEL="DEBUG"),
    )
    assert process.stdin is not None and process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60

    def read_until(answer_id: int) -> None:
        while not any(json.loads(ln).get("id") == answer_id for ln in lines if ln.strip()):
            line = process.stdout.readline()  # type: ignore[union-attr]
            assert line and time.monotonic() < deadline, lines
            lines.append(line)

    process.stdin.write(first)
    process.stdin.flush()
    read_until(3)
    process.stdin.write(then)
    process.stdin.flush()
    read_until(5)
    rest, stderr = process.communicate(timeout=30)
    lines += rest.splitlines(keepends=True)
    assert process.returncode == 0, stderr
    for line in lines:
        assert line.strip(), "blank line on stdout"
        assert json.loads(line)["jsonrpc"] == "2.0"
    answers = {m["id"]: m for m in map(json.loads, lines) if "id" in m}
    assert answers[4]["result"]["isError"] is True
    assert "Raw stdio works." in answers[5]["result"]["content"][0]["text"]
    assert "DEBUG" in stderr or "INFO" in stderr  # logging happened, on stderr


def test_a_fresh_process_answers_its_first_recall(tmp_path: Path) -> None:
    async def main() -> float:
        started = time.perf_counter()
        async with Client(_params(tmp_path)) as client:
            result = await client.call_tool("recall_memories", {"query": "anything stored?"})
            assert not result.is_error
            return time.perf_counter() - started

    elapsed = anyio.run(main)
    # Only a hang guard: how fast the first answer comes is a benchmark figure
    # (benchmark_speed.py, "fresh process"), not a test that a loaded machine can fail.
    assert elapsed < 60.0, elapsed


def test_stdio_refuses_hosted_mode(tmp_path: Path) -> None:
    done = subprocess.run([*tinycontext_command(), "mcp"], capture_output=True, text=True,
                          env=cli_env(tmp_path, TINYCONTEXT_TENANCY="proxy-header"), timeout=60)
    assert done.returncode == 2 and "refused on stdio" in done.stderr and done.stdout == ""
