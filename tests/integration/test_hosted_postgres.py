"""Hosted mode on PostgreSQL over real HTTP: one database, rows keyed by the HMAC tenant key.

The isolation checks shared with SQLite run in test_hosted_isolation (parametrised over both
backends); this file checks what is PostgreSQL's own: what the rows carry (read as a
superuser, past row-level security), one connection pool per process, per-tenant background
re-embedding, the operators' storage facts and that no store folder is needed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import psycopg
import pytest

from tests.fakes import HashEmbedder
from tests.integration.hosted_support import SECRET, HostedServer, hosted_server, proxy_headers
from tests.integration.test_hosted_isolation import _one_session_many_users
from tests.pg_fixture import admin_url, temporary_database, with_database
from tinycontext.adapters.hosting.tenant_stores import tenant_key

ALICE, BOB = "alice.9f2c@example.com", "bob.71d0@example.com"


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> Iterator[str]:
    with temporary_database(request) as url:
        yield url


def superuser(url: str) -> psycopg.Connection[Any]:
    """A superuser connection to the test database: row-level security does not apply."""
    return psycopg.connect(with_database(admin_url(), urlsplit(url).path.lstrip("/")),
                           autocommit=True)


def app_connections(url: str) -> int:
    with superuser(url) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s "
                           "AND usename = 'tinycontext_app'",
                           (urlsplit(url).path.lstrip("/"),)).fetchone()
    assert row is not None
    return int(row[0])


def save(server: HostedServer, user: str, *contents: str, **body: Any) -> list[dict[str, Any]]:
    with server.client(**proxy_headers(user)) as client:
        response = client.post("/save_memories", json={
            "memories": [{"content": c} for c in contents], **body})
    assert response.status_code == 200, response.text
    return response.json()["saved"]  # type: ignore[no-any-return]


def test_rows_carry_the_hmac_tenant_key_and_never_the_user_id(
    tmp_path: Path, pg_url: str
) -> None:
    with hosted_server(tmp_path, store_url=pg_url) as server:
        assert not server.store_dir.exists()  # no store folder in PostgreSQL hosted mode
        save(server, ALICE, "Deploys happen on Tuesdays.", session_id="chat-1")
        save(server, BOB, "Deploys happen on Fridays.")
        with server.client(**proxy_headers(ALICE)) as alice:
            recalled = alice.post("/recall_memories", json={"query": "when do deploys happen"})
            assert [m["content"] for m in recalled.json()["memories"]] == [
                "Deploys happen on Tuesdays."]
    keys = {tenant_key(SECRET.encode(), user): user for user in (ALICE, BOB)}
    assert all(len(k) == 64 for k in keys)
    with superuser(pg_url) as conn:
        rows = conn.execute("SELECT tenant, content FROM tinycontext.memories").fetchall()
        assert {(keys[t], c) for t, c in rows} == {
            (ALICE, "Deploys happen on Tuesdays."), (BOB, "Deploys happen on Fridays.")}
        assert conn.execute("SELECT tenant, session_id FROM tinycontext.sessions").fetchall() \
            == [(tenant_key(SECRET.encode(), ALICE), "chat-1")]
        for table in ("memories", "sessions", "memory_terms"):
            rows = conn.execute(f"SELECT t::text FROM tinycontext.{table} t").fetchall()
            dump = " ".join(r[0] for r in rows)
            assert dump and "alice" not in dump and "bob" not in dump, table


def test_every_tenant_shares_one_pool_and_evictions_leave_it_open(
    tmp_path: Path, pg_url: str
) -> None:
    users = [f"user-{n}" for n in range(12)]
    with hosted_server(tmp_path, store_url=pg_url, TINYCONTEXT_MAX_OPEN_STORES="2") as server:
        for round_ in range(2):  # the second round reopens services the LRU closed
            for user in users:
                save(server, user, f"Note {round_} of {user}.")
        stores = server.stores
        assert stores.evicted >= len(users) and stores.open_count <= 2 + 1
        for user in users:
            key, service = stores.acquire(user)
            try:
                assert service.store._pool.shared is stores.pool
                assert service.store.tenant == key == tenant_key(SECRET.encode(), user)
            finally:
                stores.release(key, service)
        # A pool per tenant would hold a connection for each of the 12 users.
        assert 1 <= app_connections(pg_url) <= stores.pool.max_size < len(users)
        with server.client(**proxy_headers("user-3")) as client:
            listed = client.get("/list_memories").json()
        assert sorted(m["content"] for m in listed["memories"]) == [
            "Note 0 of user-3.", "Note 1 of user-3."]
    deadline = time.monotonic() + 10  # the server's shutdown closed the shared pool
    while app_connections(pg_url) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert app_connections(pg_url) == 0


def test_one_mcp_session_routes_each_message_to_its_own_tenant(
    tmp_path: Path, pg_url: str
) -> None:
    with hosted_server(tmp_path, kind="mcp", store_url=pg_url) as server:
        seen = anyio.run(_one_session_many_users, server.base, "legacy")
    for user, word in (("alice", "bees"), ("bob", "koi"), ("carol", "tomatoes")):
        for text in seen[user]:
            assert word in text
            assert not any(w in text for w in {"bees", "koi", "tomatoes"} - {word}), text
    for key in ("bob-get-alice", "bob-delete-alice"):
        assert seen[key].content[0].text.startswith("memory_not_found:")
    with superuser(pg_url) as conn:
        tenants = {r[0] for r in conn.execute("SELECT tenant FROM tinycontext.memories")}
    assert tenants == {tenant_key(SECRET.encode(), u) for u in ("alice", "bob", "carol")}


def _models(url: str) -> dict[str, set[str]]:
    with superuser(url) as conn:
        rows = conn.execute("SELECT tenant, embedding_model FROM tinycontext.memories").fetchall()
    found: dict[str, set[str]] = {}
    for tenant, model in rows:
        found.setdefault(tenant, set()).add(model)
    return found


def test_each_tenant_is_re_embedded_in_the_background_after_a_model_change(
    tmp_path: Path, pg_url: str
) -> None:
    with hosted_server(tmp_path, store_url=pg_url) as server:
        for user in (ALICE, BOB):
            save(server, user, "The cello lesson is on Monday.", "The bow came from Leipzig.")
    alice, bob = (tenant_key(SECRET.encode(), u) for u in (ALICE, BOB))
    assert _models(pg_url) == {alice: {"hash-64+ctx1+tok1"}, bob: {"hash-64+ctx1+tok1"}}
    new_model = HashEmbedder(dimensions=32, key="hash-32")
    with hosted_server(tmp_path, store_url=pg_url, embedder=new_model, background=True) as server:
        with server.client(**proxy_headers(ALICE)) as client:
            assert client.get("/list_memories").status_code == 200  # starts alice's upkeep
        deadline = time.monotonic() + 20
        while _models(pg_url)[alice] != {"hash-32+ctx1+tok1"} and time.monotonic() < deadline:
            time.sleep(0.05)
        # Only the user it served.
        assert _models(pg_url) == {alice: {"hash-32+ctx1+tok1"}, bob: {"hash-64+ctx1+tok1"}}
        with server.client(**proxy_headers(ALICE)) as client:
            found = client.post("/recall_memories", json={"query": "cello lesson"}).json()
        assert found["memories"][0]["content"] == "The cello lesson is on Monday."


def test_storage_facts_name_the_backend_and_no_user(tmp_path: Path, pg_url: str) -> None:
    with hosted_server(tmp_path, store_url=pg_url) as server:
        save(server, ALICE, "A fact for the facts.")
        facts = server.stores.storage_facts()
    assert facts["backend"] == "postgresql" and facts["store_count"] is None
    assert facts["disk_bytes"] > 0 and facts["max_open_stores"] == 64
    text = json.dumps(facts)
    assert "alice" not in text and tenant_key(SECRET.encode(), ALICE) not in text
