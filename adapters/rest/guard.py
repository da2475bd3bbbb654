"""REST's request guard: a foreign Host header gets 421, a body declared too large gets 413,
before any route runs (the accepted names: tinycontext.config.allowed_hosts)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from tinycontext.config.allowed_hosts import host_allowed

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]

MAX_BODY_BYTES = 4 * 1024 * 1024  # the MCP SDK's limit too


async def _refuse(send: Any, status: int, message: str) -> None:
    import json

    body = json.dumps({"detail": {"code": "invalid_request", "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class RequestGuardMiddleware:
    """Plain ASGI middleware: a foreign Host header gets 421 (when `hosts` is given), a body
    declared larger than `max_body` gets 413, before any route runs."""

    def __init__(self, app: ASGIApp, hosts: list[str] | None,
                 max_body: int = MAX_BODY_BYTES) -> None:
        self.app, self.hosts, self.max_body = app, hosts, max_body

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            host = headers.get(b"host", b"").decode("latin-1")
            if self.hosts is not None and not host_allowed(host, self.hosts):
                await _refuse(send, 421, "Host not allowed.")
                return
            length = headers.get(b"content-length", b"0").decode("latin-1")
            if length.isdigit() and int(length) > self.max_body:
                await _refuse(send, 413, f"Request body over {self.max_body} bytes.")
                return
        await self.app(scope, receive, send)
