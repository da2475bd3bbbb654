"""Host-header checks against DNS rebinding, shared by the MCP HTTP server and the REST API.

A web page can make a browser send requests to 127.0.0.1 under a hostname the attacker
controls; the Host header then names that hostname. Servers therefore accept only the
loopback names, the address they are bound to, and whatever `TINYCONTEXT_ALLOWED_HOSTS`
(comma-separated host names, optionally with `:port`; `*` turns the check off) adds.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_BINDS = ("", "0.0.0.0", "::", "[::]")
ENV_NAME = "TINYCONTEXT_ALLOWED_HOSTS"

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


def allowed_hosts(bind_host: str | None = None, extra: str | None = None) -> list[str] | None:
    """Accepted Host names (`name` or `name:port`), or None when the check is switched off."""
    if extra is None:
        extra = os.environ.get(ENV_NAME, "")
    names = [item.strip().lower() for item in extra.split(",") if item.strip()]
    if "*" in names:
        return None
    hosts = list(LOOPBACK)
    if bind_host and bind_host not in WILDCARD_BINDS:
        ipv6 = ":" in bind_host and not bind_host.startswith("[")
        hosts.append((f"[{bind_host}]" if ipv6 else bind_host).lower())
    for name in names:
        if name not in hosts:
            hosts.append(name)
    return hosts


def _host_name(value: str) -> str:
    """The name part of a Host header: `[::1]:8000` -> `[::1]`, `a.example:80` -> `a.example`."""
    if value.startswith("["):
        return value[: value.find("]") + 1]
    return value.split(":", 1)[0] if value.count(":") == 1 else value


def host_allowed(header: str | None, hosts: list[str]) -> bool:
    """Whether a Host header value names one of `hosts` (a bare name allows any port)."""
    if not header:
        return False
    value = header.strip().lower()
    return value in hosts or _host_name(value) in hosts


def mcp_transport_security(hosts: list[str] | None) -> Any:
    """The MCP SDK's TransportSecuritySettings for these hosts (protection off for None)."""
    from mcp.server.transport_security import TransportSecuritySettings

    if hosts is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    patterns, origins = [], []
    for host in hosts:
        has_port = host.rsplit(":", 1)[-1].isdigit() and not host.endswith("]")
        patterns += [host] if has_port else [host, f"{host}:*"]
        for scheme in ("http", "https"):
            origins += [f"{scheme}://{host}"] if has_port else [
                f"{scheme}://{host}", f"{scheme}://{host}:*"
            ]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=patterns, allowed_origins=origins
    )


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
