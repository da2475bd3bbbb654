"""A loopback stand-in for the Anthropic Messages API, for running the real Claude Code CLI
offline: it records every request body and answers with streamed (SSE) events, or one JSON
message when the request does not stream. `script(body)` picks each answer: text, or a
tool_use of a tool the request offered."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.e2e.agent_clients import loopback

Reply = dict[str, Any]  # {"text": str} or {"tool": name, "input": {...}}
Script = Callable[[dict[str, Any]], Reply]


def say(text: str) -> Script:
    return lambda body: {"text": text}


def _blocks(reply: Reply) -> tuple[list[dict[str, Any]], str]:
    if "tool" in reply:
        block = {"type": "tool_use", "id": "toolu_standin_1", "name": reply["tool"],
                 "input": reply.get("input", {})}
        return [block], "tool_use"
    return [{"type": "text", "text": reply["text"]}], "end_turn"


def _events(reply: Reply, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    blocks, stop = _blocks(reply)
    message = {"id": "msg_standin", "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": message}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": start}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                      "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "usage": {"output_tokens": 5},
                            "delta": {"stop_reason": stop, "stop_sequence": None}}
    yield "message_stop", {"type": "message_stop"}


class StandIn:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def messages(self) -> list[dict[str, Any]]:
        """The recorded /v1/messages request bodies that carry the conversation."""
        with self.lock:
            return [r for r in self.requests if r.get("messages")]


def _handler(standin: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._json(200, {"data": [], "has_more": False})

        def do_HEAD(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            with standin.lock:
                standin.requests.append({"path": self.path, **body})
            if not self.path.split("?")[0].endswith("/v1/messages"):
                self._json(200, {"input_tokens": 10})  # count_tokens and the like
                return
            reply = standin.script(body)
            model = str(body.get("model", "claude-standin"))
            if not body.get("stream"):
                blocks, stop = _blocks(reply)
                self._json(200, {"id": "msg_standin", "type": "message", "role": "assistant",
                                 "model": model, "content": blocks, "stop_reason": stop,
                                 "stop_sequence": None,
                                 "usage": {"input_tokens": 10, "output_tokens": 5}})
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in _events(reply, model):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler


@contextmanager
def standin_model(script: Script) -> Iterator[tuple[str, StandIn]]:
    """(base URL, the recorder) of a stand-in model served on a free loopback port."""
    standin = StandIn(script)
    with loopback(_handler(standin)) as base:
        yield base, standin
