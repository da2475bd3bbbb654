"""A PostgreSQL store that fails: server down, login refused, read-only transactions.

Each is a coded store error naming the server (never its password) through the Python API and
REST (real HTTP); on a read-only server recall still answers, without counting, and says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from tests.e2e.servers import free_port, uvicorn_thread
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tests.pg_fixture import admin_url, temporary_database, with_database
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.errors import (
    StoreReadOnlyError,
    StoreUnavailableError,
    TinyContextError,
)
from tinycontext.entry.container import build_service
from tinycontext.rest import create_app

pytestmark = pytest.mark.slow
READ_ONLY = "options=-c%20default_transaction_read_only%3Don"


def open_service(url: str) -> MemoryService:
    return build_service(
        TinyContextConfig(memory_db_path="/nonexistent/unused.db", store_url=url),
        embedder=HashEmbedder(), tokenizer=WordTokenizer(), clock=FixedClock(),
        background=False,
    )


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> Iterator[str]:
    with temporary_database(request) as url:
        yield url


def read_only(url: str) -> str:
    return url + ("&" if "?" in url else "?") + READ_ONLY


def expect(error: type[TinyContextError], call: Any) -> str:
    with pytest.raises(error) as caught:
        call()
    return caught.value.message


def rest(service: MemoryService, calls: list[tuple[str, str, dict[str, Any]]]
         ) -> list[httpx.Response]:
    with uvicorn_thread(create_app(OneService(service), warm=False)) as base, \
            httpx.Client(base_url=base, timeout=120) as client:
        return [client.request(method, path, json=body) for method, path, body in calls]


def coded(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    assert response.json()["detail"]["code"] == code
    return str(response.json()["detail"]["message"])


def test_server_down_is_store_unavailable_without_the_password() -> None:
    url = f"postgresql://app:pw-not-to-show@127.0.0.1:{free_port()}/memories"
    service = open_service(url)
    try:
        for call in (lambda: service.save([{"content": "Billing runs nightly."}]).to_dict(),
                     lambda: service.recall("billing").to_dict(),
                     lambda: service.list_page().to_dict()):
            message = expect(StoreUnavailableError, call)
            assert "127.0.0.1" in message and "refused" in message
            assert "pw-not-to-show" not in message and "Billing" not in message
    finally:
        service.close()
    responses = rest(open_service(url), [
        ("POST", "/save_memories", {"memories": [{"content": "Billing runs nightly."}]}),
        ("GET", "/recall_memories", {}),
    ])
    for response in responses:
        assert "pw-not-to-show" not in coded(response, 503, "store_unavailable")


def test_refused_login_is_store_unavailable(pg_url: str) -> None:
    database = pg_url.split("?")[0].rsplit("/", 1)[1]
    with psycopg.connect(admin_url(), autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS tc_no_login")
        conn.execute("CREATE ROLE tc_no_login NOLOGIN")
    try:
        for user in ("tc_no_login", "tc_no_such_role"):
            service = open_service(with_database(pg_url, database, user))
            try:
                message = expect(StoreUnavailableError, lambda s=service: s.list_page().to_dict())
                assert "authentication failed" in message, message
            finally:
                service.close()
    finally:
        with psycopg.connect(admin_url(), autocommit=True) as conn:
            conn.execute("DROP ROLE IF EXISTS tc_no_login")


def test_read_only_server_recalls_without_counting_and_refuses_writes(pg_url: str) -> None:
    writer = open_service(pg_url)
    saved = writer.save([
        {"content": "The billing job runs nightly at 02:00."},
        {"content": "Deploys happen on Tuesdays."},
    ], session_id="work").to_dict()["saved"]
    writer.close()

    service = open_service(read_only(pg_url))  # e.g. a standby: every transaction read-only
    try:
        result = service.recall("billing job", session_id="work").to_dict()
        assert result["memories"][0]["id"] == saved[0]["id"]
        assert "read-only" in result["notice"] and "not updated" in result["notice"]
        assert service.list_page(session_id="work").to_dict()["total_count"] == 2
        assert service.detail(saved[0]["id"]).to_dict()["recall_count"] == 0
        for call in (lambda: service.save([{"content": "Cannot be kept."}]).to_dict(),
                     lambda: service.update(saved[1]["id"], "Cannot change.").to_dict(),
                     lambda: service.delete(saved[1]["id"]).to_dict()):
            message = expect(StoreReadOnlyError, call)
            assert "accepts only reads" in message
    finally:
        service.close()
    save, recall = rest(open_service(read_only(pg_url)), [
        ("POST", "/save_memories", {"memories": [{"content": "Cannot be kept."}]}),
        ("POST", "/recall_memories", {"query": "billing job", "session_id": "work"}),
    ])
    coded(save, 503, "store_read_only")
    assert recall.status_code == 200 and "not updated" in recall.json()["notice"]


def test_read_only_server_that_needs_the_schema_is_store_read_only(pg_url: str) -> None:
    service = open_service(read_only(pg_url))  # a fresh database: the schema cannot be made
    try:
        expect(StoreReadOnlyError, lambda: service.list_page().to_dict())
    finally:
        service.close()
