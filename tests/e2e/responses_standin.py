"""A loopback stand-in for the OpenAI Responses API, for running Codex CLI offline.

Each `POST /v1/responses` is recorded and answered, as a server-sent event stream, with the
next scripted output item (a tool call, say) or, once the script is used up, a short final
message. Only the events Codex needs to finish a turn are sent: `response.created`, one
`response.output_item.done` per item and `response.completed`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FINAL_TEXT = "Done."


def function_call(name: str, arguments: dict[str, Any], namespace: str | None = None,
                  call_id: str = "call_1") -> dict[str, Any]:
    """An output item calling a tool (an MCP tool: its name inside the server's namespace)."""
    item: dict[str, Any] = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id,
                            "name": name, "arguments": json.dumps(arguments),
                            "status": "completed"}
    if namespace is not None:
        item["namespace"] = namespace
    return item


def message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_final", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


class StandIn:
    """The recorded requests and the script still to play."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.base_url = ""

    def next_item(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests.append(body)
            return self.script.pop(0) if self.script else message(FINAL_TEXT)

    def tools_offered(self, index: int = 0) -> dict[str, list[str]]:
        """Tool names of one request: plain functions under "", a namespace's under its name."""
        found: dict[str, list[str]] = {}
        for tool in self.requests[index].get("tools", []):
            if tool.get("type") == "namespace":
                found[tool["name"]] = sorted(t["name"] for t in tool.get("tools", []))
            elif "name" in tool:
                found.setdefault("", []).append(tool["name"])
        return found

    def outputs(self, call_id: str) -> list[Any]:
        """What the client sent back for a tool call (its function_call_output items)."""
        return [item.get("output") for body in self.requests for item in body.get("input", [])
                if isinstance(item, dict) and item.get("type") == "function_call_output"
                and item.get("call_id") == call_id]


def _handler(stand_in: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            if not self.path.rstrip("/").endswith("/responses"):
                self.send_error(404)
                return
            item = stand_in.next_item(body)
            response = {"id": f"resp_{len(stand_in.requests)}", "object": "response",
                        "status": "in_progress", "model": body.get("model"), "output": []}
            events = [
                ("response.created", {"response": response}),
                ("response.output_item.done", {"output_index": 0, "item": item}),
                ("response.completed", {"response": {
                    **response, "status": "completed", "output": [item],
                    "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}}),
            ]
            stream = b"".join(
                f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': n, **data})}"
                f"\n\n".encode() for n, (kind, data) in enumerate(events))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(stream)))
            self.end_headers()
            self.wfile.write(stream)

        def do_GET(self) -> None:  # noqa: N802
            self.send_error(404)  # e.g. a model list: the client falls back to its defaults

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Quiet: the test reads the recorded requests instead."""

    return Handler


@contextmanager
def responses_stand_in(script: list[dict[str, Any]]) -> Iterator[StandIn]:
    """A stand-in on a free loopback port; `base_url` ends in /v1 as providers' do."""
    stand_in = StandIn(script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stand_in))
    stand_in.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, name="responses-stand-in",
                              daemon=True)
    thread.start()
    try:
        yield stand_in
    finally:
        server.shutdown()
        server.server_close()
