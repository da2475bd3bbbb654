"""Hosted mode: who sent this request, proven by the trusted reverse proxy (SPEC section 8).

A request is accepted only when ALL hold: the TCP peer is inside the trusted proxy networks,
it carries the proxy token (compared in constant time), and exactly one well-formed user-id
header. The user id is never read from a body or a tool argument. `TenantGate` refuses
anything else with 401 before any route, store or model is touched; the MCP layer repeats
`Access.caller` for every MCP message, because one MCP session can carry several users.

The proven caller of the request being served lives in a context variable (`RequestScope`,
tinycontext/app/request_scope.py); the per-user services (tenant_stores) read it, and release what
they leased when it ends. `Access` is the transports' `CallerCheck` (tinycontext/app/callers.py):
the bootstrap passes it in, so neither transport imports this module. The 401 body is this
module's own (`_unauthorized`), not REST's error table: the gate answers before any route.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import unicodedata
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tinycontext.app.callers import UNAUTHORIZED_MESSAGE, ASGIApp, Receive, Refused, Send
from tinycontext.app.request_scope import Caller, request_scope

__all__ = [
    "Access", "ProxyTrust", "TenantGate", "bearer_token", "check_user_id", "header_values",
    "same_secret",
]

log = logging.getLogger("tinycontext.hosted")

DEFAULT_USER_HEADER = "X-TinyContext-User-Id"
PROXY_TOKEN_HEADER = "X-TinyContext-Proxy-Token"
MAX_USER_ID_BYTES = 256
OPEN_PATHS = frozenset({"/health"})
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Scope = MutableMapping[str, Any]


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


def same_secret(given: bytes, expected: bytes) -> bool:
    """Constant-time equality that also hides the expected value's length."""
    return hmac.compare_digest(_digest(given), _digest(expected))


def header_values(scope: Scope, name: bytes) -> list[bytes]:
    """Every value of one header (ASGI names are lower-case bytes)."""
    return [value for key, value in scope.get("headers") or () if key == name]


def check_user_id(raw: bytes) -> str:
    """A sane user id: 1-256 bytes of UTF-8, no control characters, no list separator."""
    if not raw or len(raw) > MAX_USER_ID_BYTES:
        raise Refused(f"user-id header empty or over {MAX_USER_ID_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("user-id header is not UTF-8") from None
    if text != text.strip():
        raise Refused("user-id header has surrounding whitespace")
    for char in text:
        # Cc: C0/C1 controls incl. tab; Zl/Zp: line breaks. A comma would read as two
        # values once some proxy joins repeated headers (RFC 9110 5.3).
        if unicodedata.category(char) in ("Cc", "Zl", "Zp") or char == ",":
            raise Refused("user-id header has a control character or a comma")
    return text


def bearer_token(scope: Scope) -> bytes | None:
    values = header_values(scope, b"authorization")
    if len(values) != 1:
        return None
    scheme, _, token = values[0].partition(b" ")
    if scheme.lower() != b"bearer" or not token.strip():
        return None
    return token.strip()


@dataclass(frozen=True)
class ProxyTrust:
    """The checks every hosted request passes: peer network, proxy token, user-id header."""

    networks: tuple[Network, ...]
    token: bytes = field(repr=False)
    user_header: str = DEFAULT_USER_HEADER

    def peer_trusted(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)

    def verify(self, scope: Scope) -> str:
        """The proven user id of this HTTP request, or Refused."""
        client = scope.get("client")
        if not client or not self.peer_trusted(str(client[0])):
            raise Refused("peer outside TINYCONTEXT_TRUSTED_PROXY_CIDRS")
        tokens = header_values(scope, PROXY_TOKEN_HEADER.lower().encode())
        if len(tokens) != 1 or not same_secret(tokens[0], self.token):
            raise Refused("missing, repeated or wrong proxy token")
        ids = header_values(scope, self.user_header.lower().encode())
        if len(ids) != 1:
            raise Refused(f"{len(ids)} user-id headers instead of exactly one")
        return check_user_id(ids[0])


@dataclass(frozen=True)
class Access:
    """How callers are identified: hosted proxy trust and/or the management token."""

    trust: ProxyTrust | None = None
    management_token: str | None = field(default=None, repr=False)

    @property
    def hosted(self) -> bool:
        return self.trust is not None

    def is_operator(self, scope: Scope) -> bool:
        if not self.management_token:
            return False
        token = bearer_token(scope)
        return token is not None and same_secret(token, self.management_token.encode())

    def caller(self, scope: Scope | None) -> Caller:
        """The caller of an HTTP request (scope) or of stdio (None); Refused when unproven."""
        if scope is None:
            if self.hosted:
                raise Refused("hosted mode serves HTTP requests from the proxy only")
            return Caller(operator=True, local=True)
        user = self.trust.verify(scope) if self.trust is not None else None
        return Caller(user_id=user, operator=self.is_operator(scope))

    def gate(self, app: ASGIApp) -> ASGIApp:
        """`app` behind the TenantGate in hosted mode; unchanged otherwise."""
        return TenantGate(app, self) if self.hosted else app


async def _unauthorized(send: Send) -> None:
    body = json.dumps(
        {"detail": {"code": "unauthorized", "message": UNAUTHORIZED_MESSAGE}}
    ).encode()
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class TenantGate:
    """ASGI middleware for hosted mode: 401 for an unproven request, before anything runs.

    A proven request runs inside a RequestScope naming its caller. `/health` stays open.
    """

    def __init__(self, app: ASGIApp, access: Access, open_paths: Sequence[str] = ()) -> None:
        if access.trust is None:
            raise ValueError("TenantGate needs the hosted proxy trust settings")
        self.app, self.access = app, access
        self.open_paths = OPEN_PATHS | frozenset(open_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get("path") in self.open_paths:
            await self.app(scope, receive, send)
            return
        try:
            caller = self.access.caller(scope)
        except Refused as refused:
            client = scope.get("client")
            log.warning("refused %s %s from %s: %s", scope.get("method", ""),
                        scope.get("path", ""), client[0] if client else "?", refused)
            if scope["type"] == "http":
                await _unauthorized(send)
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        with request_scope(caller):
            await self.app(scope, receive, send)
