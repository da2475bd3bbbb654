"""The handshake answers the stdio front gives before the MCP SDK is loaded (stdio_front.py).

They are what the SDK itself answers to `initialize` and `tools/list`, per protocol version of
the initialize handshake, recorded into handshake.json by running the real server over
in-memory streams, with a fingerprint of the code they come from (stdio_front.code_fingerprint):
the front uses them only for that code, and a test compares the file with a fresh recording,
so a change to a tool, its description or the SDK fails until the file is written again:

    python -m tinycontext.adapters.mcp.snapshot
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .stdio_front import SNAPSHOT_FILE, code_fingerprint

if TYPE_CHECKING:
    from tinycontext.app.service import MemoryService
    from tinycontext.app.service_source import Services


def _client_hello(version: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "snapshot", "version": "0"}}}


class _NoServices:
    """Services for listing the tools, which needs none."""

    def current(self) -> MemoryService:
        raise RuntimeError("listing the tools needs no service")

    def warm(self) -> None:
        """Nothing to load."""

    def close(self) -> None:
        """Nothing opened."""


def _answers(version: str) -> dict[str, Any]:
    """The SDK's own `initialize` and `tools/list` results for a client of this version."""
    import anyio
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    from .server import create_mcp_server
    from .stdio import serve_draining

    services: Services = _NoServices()
    server = create_mcp_server(services, warm=False)  # the tools do not depend on a store
    messages = [_client_hello(version),
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]

    async def exchange() -> dict[Any, Any]:
        to_server, server_reads = create_context_streams[SessionMessage | Exception](8)
        server_writes, from_server = create_context_streams[SessionMessage](8)
        answers: dict[Any, Any] = {}
        async with anyio.create_task_group() as group:
            group.start_soon(serve_draining, server, server_reads, server_writes, 5.0)
            async with to_server:
                for message in messages:
                    parsed = jsonrpc_message_adapter.validate_python(message, by_name=False)
                    await to_server.send(SessionMessage(parsed))
            async with from_server:
                async for item in from_server:
                    # What the SDK's stdio transport writes for each message.
                    dumped = json.loads(item.message.model_dump_json(by_alias=True,
                                                                    exclude_unset=True))
                    answers[dumped.get("id")] = dumped
        return answers

    answers = anyio.run(exchange)
    initialize = dict(answers[1]["result"])
    if initialize.pop("protocolVersion") != version:
        raise RuntimeError(f"the SDK did not accept protocol version {version}")
    return {"initialize": initialize, "tools/list": answers[2]["result"]}


def build_snapshot() -> dict[str, Any]:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    return {"fingerprint": code_fingerprint(),
            "versions": {v: _answers(v) for v in HANDSHAKE_PROTOCOL_VERSIONS}}


def render(snapshot: dict[str, Any]) -> str:
    return json.dumps(snapshot, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def main() -> None:
    path = Path(SNAPSHOT_FILE)
    path.write_text(render(build_snapshot()), encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
