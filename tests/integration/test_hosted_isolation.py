"""Hosted mode isolation over real HTTP: each proven user reads and writes only their store
(their own SQLite file, or their own tenant of one PostgreSQL database)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.integration.hosted_support import (
    TOKEN,
    USER_HEADER,
    HostedServer,
    hosted_server,
    proxy_headers,
)
from tests.pg_fixture import temporary_database


@pytest.fixture(params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HostedServer]:
    """The same isolation checks over per-user SQLite files and over one PostgreSQL."""
    if request.param == "sqlite":
        with hosted_server(tmp_path) as running:
            yield running
        return
    with temporary_database(request) as url, hosted_server(tmp_path, store_url=url) as running:
        yield running


def _save(client: Any, content: str, **body: Any) -> dict[str, Any]:
    response = client.post("/save_memories", json={"memories": [{"content": content}], **body})
    assert response.status_code == 200, response.text
    return response.json()["saved"][0]  # type: ignore[no-any-return]


def test_two_users_each_see_only_their_own_memories(server: HostedServer) -> None:
    alice = server.client(**proxy_headers("alice@example.com"))
    bob = server.client(**proxy_headers("bob@example.com"))
    a = _save(alice, "Alice's team deploys the billing service on Tuesdays.")
    b = _save(bob, "Bob's team deploys the search service on Fridays.")
    _save(alice, "Alice prefers short answers.", session_id="chat-1")

    for client, mine, theirs in ((alice, "Alice", "Bob"), (bob, "Bob", "Alice")):
        recalled = client.post("/recall_memories", json={"query": "when does the team deploy"})
        contents = [m["content"] for m in recalled.json()["memories"]]
        assert contents and all(c.startswith(mine) for c in contents), contents
        listed = client.get("/list_memories").json()
        assert all(m["content"].startswith(mine) for m in listed["memories"])
        assert not any(theirs in m["content"] for m in listed["memories"])
        recent = client.get("/recall_memories").json()["memories"]
        assert all(m["content"].startswith(mine) for m in recent)
    assert alice.get("/list_memories").json()["total_count"] == 2
    assert bob.get("/list_memories").json()["total_count"] == 1
    # session_id stays a scope inside one user's store: Bob never used chat-1.
    assert alice.get("/list_memories", params={"session_id": "chat-1"}).json()["total_count"] == 1
    missing = bob.get("/list_memories", params={"session_id": "chat-1"})
    assert missing.status_code == 404 and missing.json()["detail"]["code"] == "session_not_found"

    assert alice.get("/get_memory", params={"memory_id": a["ref"]}).status_code == 200
    for attempt in (
        bob.get("/get_memory", params={"memory_id": a["ref"]}),
        bob.post("/get_memory", json={"memory_id": a["id"]}),
        bob.post("/update_memory", json={"memory_id": a["ref"], "content": "Hijacked."}),
        bob.post("/delete_memory", json={"memory_id": a["id"]}),
    ):
        assert attempt.status_code == 404, attempt.text
        assert attempt.json()["detail"]["code"] == "memory_not_found"
    intact = alice.get("/get_memory", params={"memory_id": a["id"]}).json()
    assert intact["content"] == "Alice's team deploys the billing service on Tuesdays."
    assert intact["superseded_by"] is None

    updated = bob.post("/update_memory", json={"memory_id": b["ref"],
                                                "content": "Bob's team deploys on Mondays."})
    assert updated.status_code == 200
    assert bob.post("/delete_memory", json={"memory_id": updated.json()["ref"]}).json()["deleted"]
    assert bob.get("/list_memories").json()["total_count"] == 1  # the older version is back
    assert alice.get("/list_memories").json()["total_count"] == 2


def test_user_id_is_never_taken_from_a_body_or_query(server: HostedServer) -> None:
    bob = server.client(**proxy_headers("bob"))
    smuggled = bob.post("/save_memories", json={"user_id": "alice", "memories": [
        {"content": "Planted into Alice's store?"}]})
    assert smuggled.status_code == 422
    by_query = bob.get("/list_memories", params={"user_id": "alice"})
    alice = server.client(**proxy_headers("alice"))
    assert alice.get("/list_memories").json()["total_count"] == 0
    assert by_query.status_code in (200, 422)
    if by_query.status_code == 200:
        assert by_query.json()["total_count"] == 0


class _Switchboard:
    """An HTTP client whose user-id header is whatever `user` says at send time."""

    def __init__(self) -> None:
        self.user = "alice"
        self.sessions: list[tuple[str, str | None]] = []

    async def hook(self, request: Any) -> None:
        request.headers[USER_HEADER] = self.user
        if request.method == "POST":
            self.sessions.append((self.user, request.headers.get("mcp-session-id")))


async def _one_session_many_users(base: str, mode: str) -> dict[str, Any]:
    board = _Switchboard()
    http = httpx2.AsyncClient(headers={"X-TinyContext-Proxy-Token": TOKEN}, timeout=30,
                              event_hooks={"request": [board.hook]})
    seen: dict[str, Any] = {}
    async with http, Client(streamable_http_client(base + "/mcp", http_client=http),
                            mode=mode) as client:
        for user, fact in (("alice", "Alice keeps bees in the garden."),
                           ("bob", "Bob keeps a koi pond in the garden."),
                           ("carol", "Carol grows tomatoes in the garden.")):
            board.user = user
            saved = await client.call_tool("save_memories", {"memories": [{"content": fact}]})
            assert not saved.is_error, saved.content
            seen[f"{user}-ref"] = json.loads(saved.content[0].text)["saved"][0]["ref"]
        for user in ("bob", "alice", "carol", "alice"):
            board.user = user
            recalled = await client.call_tool("recall_memories", {"query": "garden"})
            seen.setdefault(user, []).append(recalled.content[0].text)
        board.user = "bob"
        seen["bob-get-alice"] = await client.call_tool("get_memory",
                                                       {"memory_id": seen["alice-ref"]})
        seen["bob-delete-alice"] = await client.call_tool("delete_memory",
                                                          {"memory_id": seen["alice-ref"]})
        seen["smuggled"] = await client.call_tool(
            "save_memories", {"memories": [{"content": "x"}], "user_id": "alice"})
    seen["sessions"] = board.sessions
    return seen


@pytest.mark.parametrize("kind", ["mcp", "rest"])
def test_one_mcp_session_routes_each_message_to_its_own_users_store(
    tmp_path: Path, kind: str
) -> None:
    with hosted_server(tmp_path, kind=kind) as running:
        seen = anyio.run(_one_session_many_users, running.base, "legacy")
        names = {p.name for p in running.store_dir.glob("*.db")}
    session_ids = {sid for _, sid in seen["sessions"] if sid}
    assert len(session_ids) == 1  # every message after initialize rode the same MCP session
    assert {u for u, sid in seen["sessions"] if sid} == {"alice", "bob", "carol"}
    for user, word in (("alice", "bees"), ("bob", "koi"), ("carol", "tomatoes")):
        for text in seen[user]:
            assert word in text
            assert not any(w in text for w in {"bees", "koi", "tomatoes"} - {word}), text
    for key in ("bob-get-alice", "bob-delete-alice"):
        assert seen[key].is_error and seen[key].content[0].text.startswith("memory_not_found:")
    assert seen["smuggled"].is_error and "user_id" in seen["smuggled"].content[0].text
    assert len(names) == 3


def test_each_message_is_routed_without_a_session_too(tmp_path: Path) -> None:
    """The SDK's default (auto) mode: per-request routing holds there as well."""
    with hosted_server(tmp_path, kind="mcp") as running:
        seen = anyio.run(_one_session_many_users, running.base, "auto")
    for user, word in (("alice", "bees"), ("bob", "koi"), ("carol", "tomatoes")):
        assert all(word in text for text in seen[user])
        assert all(len([w for w in ("bees", "koi", "tomatoes") if w in t]) == 1
                   for t in seen[user])
