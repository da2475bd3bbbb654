"""End of input on the stdio transport: requests still running get their answers first.

The server runs over in-memory streams shaped like `stdio_server()`'s (the stdio runner's own
wrapping, adapters/mcp/stdio.py); the client writes its requests, closes its side at once and
reads every answer until the server closes the other side.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.adapters.mcp.stdio import serve_draining
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service


class SlowEmbedder(HashEmbedder):
    """Takes `seconds` per embedding call, so a save is still running at end of input."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def embed(self, texts: Any) -> Any:
        time.sleep(self.seconds)
        return super().embed(texts)

    def embed_with_tokens(self, texts: Any, drop_stopwords: bool) -> Any:
        time.sleep(self.seconds)
        return super().embed_with_tokens(texts, drop_stopwords)


def _service(tmp_path: Path, embedder: HashEmbedder) -> Any:
    db = tmp_path / "m.db"
    return build_service(TinyContextConfig(memory_db_path=str(db)), store=SqliteStore(db),
                         embedder=embedder, tokenizer=WordTokenizer(), clock=FixedClock(),
                         background=False)


def _frames(*messages: dict[str, Any]) -> list[SessionMessage]:
    return [SessionMessage(jsonrpc_message_adapter.validate_python(
        {"jsonrpc": "2.0", **m}, by_name=False)) for m in messages]


INIT = {"id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "0"}}}
INITIALIZED = {"method": "notifications/initialized"}


def _save(id_: int, content: str) -> dict[str, Any]:
    return {"id": id_, "method": "tools/call", "params": {
        "name": "save_memories", "arguments": {"memories": [{"content": content}]}}}


def _exchange(service: Any, messages: list[dict[str, Any]],
              drain_seconds: float) -> tuple[dict[Any, dict[str, Any]], float]:
    """Send every message, close the input, collect what comes out until the server ends."""
    server = create_mcp_server(OneService(service), warm=False)

    async def main() -> tuple[dict[Any, dict[str, Any]], float]:
        to_server, server_reads = create_context_streams[SessionMessage | Exception](32)
        server_writes, from_server = create_context_streams[SessionMessage](32)
        answers: dict[Any, dict[str, Any]] = {}
        started = time.monotonic()
        async with anyio.create_task_group() as group:
            group.start_soon(serve_draining, server, server_reads, server_writes, drain_seconds)
            async with to_server:
                for frame in _frames(*messages):
                    await to_server.send(frame)
            # Input closed; the server ends by closing its output.
            async with from_server:
                async for item in from_server:
                    dumped = json.loads(item.message.model_dump_json(by_alias=True,
                                                                    exclude_unset=True))
                    if "id" in dumped:
                        answers[dumped["id"]] = dumped
        return answers, time.monotonic() - started

    return anyio.run(main)


def test_requests_running_at_end_of_input_are_answered(tmp_path: Path) -> None:
    service = _service(tmp_path, SlowEmbedder(0.5))
    answers, _ = _exchange(service, [INIT, INITIALIZED, _save(2, "The deploy key rotates monthly."),
                                     _save(3, "Billing moved to PostgreSQL in March.")], 30)
    assert set(answers) == {1, 2, 3}
    for id_ in (2, 3):
        assert "error" not in answers[id_], answers[id_]
        assert not answers[id_]["result"].get("isError"), answers[id_]
        assert json.loads(answers[id_]["result"]["content"][0]["text"])["saved"]
    assert service.list_page().to_dict()["total_count"] == 2
    service.close()


def test_the_wait_is_bounded(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    service = _service(tmp_path, SlowEmbedder(3.0))
    answers, _ = _exchange(service, [INIT, INITIALIZED, _save(2, "A slow save.")], 0.3)
    # Past the bound the request is abandoned as the SDK abandons it (its worker thread still
    # finishes; the answer is not sent), and the log says so.
    assert 2 not in answers
    assert "1 requests still running after 0 s are abandoned" in caplog.text


def test_a_request_the_client_cancelled_is_not_waited_for(tmp_path: Path) -> None:
    service = _service(tmp_path, SlowEmbedder(2.0))
    cancel = {"method": "notifications/cancelled", "params": {"requestId": 2}}
    answers, took = _exchange(service, [INIT, INITIALIZED, _save(2, "Cancelled."), cancel], 30)
    assert 2 not in answers  # a cancelled request is never answered
    assert took < 10
    service.close()


@pytest.mark.parametrize("drain", [30.0])
def test_nothing_open_means_no_wait(tmp_path: Path, drain: float) -> None:
    service = _service(tmp_path, HashEmbedder())
    answers, took = _exchange(service, [INIT, INITIALIZED], drain)
    assert set(answers) == {1} and took < 5
    service.close()
