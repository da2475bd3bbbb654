"""A loopback stand-in for the Gemini API (generativelanguage v1beta), for running the real
Gemini CLI offline (GOOGLE_GEMINI_BASE_URL): it records every request body and answers
streamGenerateContent with SSE chunks, generateContent with one JSON response, countTokens with
a count. Every answer is the same text."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.e2e.agent_clients import loopback


class GeminiStandIn:
    def __init__(self, text: str) -> None:
        self.text = text
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def sent(self) -> str:
        """Everything the model was sent, as JSON text."""
        with self.lock:
            return json.dumps(self.requests)

    def response(self) -> dict[str, Any]:
        return {"candidates": [{"content": {"role": "model", "parts": [{"text": self.text}]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                  "totalTokenCount": 15}}


def _handler(standin: GeminiStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def _json(self, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._json({"models": []})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            path = self.path.split("?")[0]
            with standin.lock:
                standin.requests.append({"path": path, **body})
            if path.endswith(":countTokens"):
                self._json({"totalTokens": 10})
            elif path.endswith(":streamGenerateContent"):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(f"data: {json.dumps(standin.response())}\r\n\r\n".encode())
                self.wfile.flush()
                self.close_connection = True
            else:
                self._json(standin.response())

    return Handler


@contextmanager
def standin_gemini(text: str) -> Iterator[tuple[str, GeminiStandIn]]:
    """(base URL, the recorder) of a Gemini API stand-in on a free loopback port."""
    standin = GeminiStandIn(text)
    with loopback(_handler(standin)) as base:
        yield base, standin
