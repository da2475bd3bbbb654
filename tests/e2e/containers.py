"""Helpers for the tests that run the built images (deploy/smoke.sh builds them and sets
TINYCONTEXT_IMAGE / TINYCONTEXT_PROXY_IMAGE; without them those tests are skipped).

The engine is podman unless TINYCONTEXT_CONTAINER_ENGINE names another one with the same
command line (docker). MCP is spoken as raw JSON-RPC over HTTP so that the same client works
directly, through the TLS proxy and with basic-auth credentials.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Any

import httpx
import pytest

IMAGE = os.environ.get("TINYCONTEXT_IMAGE", "")
PROXY_IMAGE = os.environ.get("TINYCONTEXT_PROXY_IMAGE", "")
ENGINE = os.environ.get("TINYCONTEXT_CONTAINER_ENGINE", "podman")

needs_image = pytest.mark.skipif(
    not IMAGE, reason="container tests run from deploy/smoke.sh (TINYCONTEXT_IMAGE unset)")
needs_stack = pytest.mark.skipif(
    not (IMAGE and PROXY_IMAGE),
    reason="container tests run from deploy/smoke.sh (TINYCONTEXT_PROXY_IMAGE unset)")


def engine(*args: str, check: bool = True, timeout: float = 120,
           input: str | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([ENGINE, *args], capture_output=True, text=True, timeout=timeout,
                          input=input)
    if check and done.returncode != 0:
        raise AssertionError(f"{ENGINE} {' '.join(args)} -> {done.returncode}\n"
                             f"{done.stdout}\n{done.stderr}")
    return done


def wait_until_answered(url: str, timeout: float = 60, **client: Any) -> float:
    """Seconds until `url` answers 200 (polled every 50 ms), or AssertionError."""
    start = time.monotonic()
    last: object = None
    while time.monotonic() - start < timeout:
        try:
            answer = httpx.get(url, timeout=2, **client)
            if answer.status_code == 200:
                return time.monotonic() - start
            last = answer.status_code
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.05)
    raise AssertionError(f"{url} did not answer within {timeout} s (last: {last!r})")


class McpHttp:
    """One Streamable HTTP MCP session: initialize, then tools/call by name."""

    def __init__(self, url: str, **client: Any) -> None:
        self.url = url
        self.http = httpx.Client(timeout=60, **client)
        self.headers = {"accept": "application/json, text/event-stream",
                        "content-type": "application/json"}
        self.next_id = 0
        init = self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "container-test", "version": "0"}})
        self.server_info = init["serverInfo"]
        self.notify("notifications/initialized")

    def __enter__(self) -> McpHttp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def post(self, message: dict[str, Any]) -> httpx.Response:
        answer = self.http.post(self.url, json=message, headers=self.headers)
        session = answer.headers.get("mcp-session-id")
        if session:
            self.headers["mcp-session-id"] = session
        return answer

    def notify(self, method: str) -> None:
        answer = self.post({"jsonrpc": "2.0", "method": method})
        assert answer.status_code in (200, 202), answer.text

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        answer = self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                            "params": params})
        if answer.status_code != 200:
            raise McpHttpError(answer.status_code, answer.text)
        for message in messages(answer):
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message["result"]  # type: ignore[no-any-return]
        raise AssertionError(f"no answer to {method}: {answer.text[:500]}")

    def tool(self, name: str, arguments: dict[str, Any]) -> str:
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        assert not result.get("isError"), result
        return result["content"][0]["text"]  # type: ignore[no-any-return]


class McpHttpError(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:300]}")
        self.status = status


def messages(answer: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a JSON or an SSE (text/event-stream) answer."""
    if answer.headers.get("content-type", "").startswith("application/json"):
        body = answer.json()
        return body if isinstance(body, list) else [body]
    found = []
    for line in answer.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            found.append(json.loads(line[5:]))
    return found
