"""Every unproven request is answered 401 and touches nothing (the store folder is unchanged).

Peers other than the trusted proxy (127.0.0.1/32) are client sockets bound to 127.0.0.2.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.integration.hosted_support import (
    TOKEN,
    TRUSTED,
    UNTRUSTED,
    USER_HEADER,
    HostedServer,
    hosted_server,
    proxy_headers,
    snapshot,
)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "0"}}}
MCP_HEADERS = {"accept": "application/json, text/event-stream",
               "content-type": "application/json"}
TOKEN_HEADER = "X-TinyContext-Proxy-Token"

# (name, peer, headers as a list so a header can repeat)
CASES: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("untrusted peer with token and user", UNTRUSTED,
     [(TOKEN_HEADER, TOKEN), (USER_HEADER, "alice")]),
    ("untrusted peer, no token", UNTRUSTED, [(USER_HEADER, "alice")]),
    ("trusted peer, missing token", TRUSTED, [(USER_HEADER, "alice")]),
    ("trusted peer, wrong token", TRUSTED, [(TOKEN_HEADER, "x" * 52), (USER_HEADER, "alice")]),
    ("trusted peer, token prefix", TRUSTED, [(TOKEN_HEADER, TOKEN[:-1]), (USER_HEADER, "alice")]),
    ("trusted peer, two tokens", TRUSTED,
     [(TOKEN_HEADER, TOKEN), (TOKEN_HEADER, TOKEN), (USER_HEADER, "alice")]),
    ("missing user header", TRUSTED, [(TOKEN_HEADER, TOKEN)]),
    ("two user headers", TRUSTED,
     [(TOKEN_HEADER, TOKEN), (USER_HEADER, "alice"), (USER_HEADER, "bob")]),
    ("two identical user headers", TRUSTED,
     [(TOKEN_HEADER, TOKEN), (USER_HEADER, "alice"), (USER_HEADER, "alice")]),
    ("empty user id", TRUSTED, [(TOKEN_HEADER, TOKEN), (USER_HEADER, "")]),
    ("over-long user id", TRUSTED, [(TOKEN_HEADER, TOKEN), (USER_HEADER, "a" * 257)]),
    ("tab in user id", TRUSTED, [(TOKEN_HEADER, TOKEN), (USER_HEADER, "ali\tce")]),
    ("comma-joined user ids", TRUSTED, [(TOKEN_HEADER, TOKEN), (USER_HEADER, "alice,bob")]),
]
REQUESTS = [
    ("POST", "/save_memories", {"memories": [{"content": "Must never be stored."}]}),
    ("POST", "/recall_memories", {"query": "anything"}),
    ("GET", "/list_memories", None),
    ("POST", "/get_memory", {"memory_id": "0123456789ab"}),
    ("POST", "/update_memory", {"memory_id": "0123456789ab", "content": "x"}),
    ("POST", "/delete_memory", {"memory_id": "0123456789ab"}),
    ("GET", "/openapi.json", None),
    ("POST", "/mcp", INIT),
    ("GET", "/mcp", None),
    ("DELETE", "/mcp", None),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedServer]:
    with hosted_server(tmp_path_factory.mktemp("refusals")) as running:
        # One proven user already has a store: refusals must leave it byte-for-byte alone.
        alice = running.client(**proxy_headers("alice"))
        assert alice.post("/save_memories", json={"memories": [
            {"content": "Alice's existing memory."}]}).status_code == 200
        yield running


def _send(server: HostedServer, peer: str, method: str, path: str,
          headers: list[tuple[str, str]], body: object) -> httpx.Response:
    extra = list(MCP_HEADERS.items()) if path == "/mcp" else []
    with server.client(peer=peer) as client:
        return client.request(method, path, json=body, headers=[*extra, *headers])


@pytest.mark.parametrize("name,peer,headers", CASES, ids=[c[0] for c in CASES])
def test_unproven_requests_get_401_and_touch_nothing(
    server: HostedServer, name: str, peer: str, headers: list[tuple[str, str]]
) -> None:
    before = snapshot(server.store_dir)
    opened = server.stores.opened
    for method, path, body in REQUESTS:
        response = _send(server, peer, method, path, headers, body)
        assert response.status_code == 401, (name, method, path, response.text)
        assert response.json() == {"detail": {"code": "unauthorized", "message": (
            "The caller is not proven: requests must come through the authenticating proxy.")}}
    assert snapshot(server.store_dir) == before
    assert server.stores.opened == opened


def _raw_request(base: str, user_value: bytes, peer: str = TRUSTED) -> bytes:
    port = int(base.rsplit(":", 1)[1])
    with socket.socket() as sock:
        sock.bind((peer, 0))
        sock.connect(("127.0.0.1", port))
        sock.sendall(b"GET /list_memories HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     + f"{TOKEN_HEADER}: {TOKEN}\r\n".encode()
                     + USER_HEADER.encode() + b": " + user_value + b"\r\n"
                     + b"Connection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data.split(b"\r\n", 1)[0]


@pytest.mark.parametrize("value", [b"ali\x01ce", b"ali\x7fce", b"ali\x1bce", b"\xff\xfe",
                                   "ali\u0085ce".encode(), "a\u2028b".encode()],
                         ids=["SOH", "DEL", "ESC", "not-utf8", "C1-NEL", "line-separator"])
def test_control_characters_in_the_user_id_are_refused(server: HostedServer,
                                                       value: bytes) -> None:
    before = snapshot(server.store_dir)
    status = _raw_request(server.base, value)
    # The caller check answers 401; with httptools (a dependency of the server extra) the
    # HTTP parser itself refuses ASCII control characters in a header with a 400 before any
    # TinyContext code runs. Either way nothing is opened or stored.
    assert status.startswith((b"HTTP/1.1 401", b"HTTP/1.1 400")), status
    assert snapshot(server.store_dir) == before


def test_a_well_formed_request_on_the_same_path_is_accepted(server: HostedServer) -> None:
    assert _raw_request(server.base, "jos\u00e9@example.com".encode()).startswith(
        b"HTTP/1.1 200")
    assert _raw_request(server.base, b"a" * 256).startswith(b"HTTP/1.1 200")


def test_health_stays_open_to_anyone(server: HostedServer) -> None:
    before = snapshot(server.store_dir)
    with server.client(peer=UNTRUSTED) as client:
        assert client.get("/health").json()["status"] == "ok"
    assert snapshot(server.store_dir) == before


def test_the_mcp_client_cannot_connect_from_an_untrusted_peer(server: HostedServer) -> None:
    before = snapshot(server.store_dir)

    async def connect() -> None:
        http = httpx2.AsyncClient(
            headers=proxy_headers("alice"), timeout=10,
            transport=httpx2.AsyncHTTPTransport(local_address=UNTRUSTED))
        async with http, Client(streamable_http_client(server.base + "/mcp", http_client=http),
                                mode="legacy") as client:
            await client.call_tool("list_memories", {})

    with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as its own error
        anyio.run(connect)
    assert snapshot(server.store_dir) == before
