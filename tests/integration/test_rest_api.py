"""The REST API under a real uvicorn on a free port, driven with httpx.

Every endpoint in both forms, every error code of the table, 422 for malformed requests, the
OpenAPI documentation, the Host check, and Streamable HTTP MCP mounted in the same app.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from tests.e2e.servers import uvicorn_thread
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.config.allowed_hosts import allowed_hosts
from tinycontext.config.engine import TinyContextConfig
from tinycontext.rest import create_app


def _service(db: Path, same_ref: bool = False) -> MemoryService:
    counter = itertools.count(1)
    # same_ref: every id starts with the same 12 hex digits, so refs clash (ambiguous refs).
    prefix = "aaaaaaaa-aaaa" if same_ref else None
    return MemoryService(
        SqliteStore(db), HashEmbedder(), WordTokenizer(), FixedClock(),
        TinyContextConfig(memory_db_path=str(db)), background=False,
        new_id=(lambda: f"{prefix}-4000-8000-{next(counter):012x}") if prefix else
        (lambda: f"{next(counter):08x}-0000-4000-8000-000000000000"),
    )


@pytest.fixture
def api(tmp_path: Path) -> Iterator[httpx.Client]:
    app = create_app(OneService(_service(tmp_path / "m.db")), hosts=allowed_hosts("127.0.0.1", ""))
    with uvicorn_thread(app) as base, httpx.Client(base_url=base, timeout=30) as client:
        yield client


def _save(api: httpx.Client, *contents: str, session: str | None = "work", kind: str | None = None
          ) -> list[dict[str, Any]]:
    items = [{"content": c, **({"kind": kind} if kind else {})} for c in contents]
    response = api.post("/save_memories", json={"session_id": session, "memories": items})
    assert response.status_code == 200, response.text
    return response.json()["saved"]  # type: ignore[no-any-return]


def test_every_endpoint_in_both_forms(api: httpx.Client) -> None:
    saved = _save(api, "Billing runs on PostgreSQL.", "Deploys happen on Tuesdays.")
    _save(api, "Call the user Ada.", session=None, kind="profile")
    semantic = api.post("/recall_memories", json={"query": "which database", "session_id": "work"})
    assert semantic.status_code == 200
    body = semantic.json()
    assert body["mode"] == "semantic" and body["profile"][0]["content"] == "Call the user Ada."
    assert {"relevance", "scores"} <= set(body["memories"][0])
    assert set(body["memories"][0]["scores"]) == {"fused", "dense", "bm25"}
    got = api.get("/recall_memories", params={"query": "which database", "session_id": "work"})
    assert [m["id"] for m in got.json()["memories"]] == [m["id"] for m in body["memories"]]
    for recent in (api.get("/recall_memories", params={"session_id": "work"}),
                   api.post("/recall_memories", json={"query": "  ", "top_k": 1}),
                   api.post("/recall_memories")):
        assert recent.status_code == 200 and recent.json()["mode"] == "recent"
        assert all("relevance" not in m and "scores" not in m for m in recent.json()["memories"])
    listed = api.get("/list_memories", params={"search": "postgre", "session_id": "work"}).json()
    assert listed["sort"] == "relevance" and listed["returned_count"] == 1
    both = api.post("/list_memories", json={"search": "bill postg"}).json()  # each a prefix
    assert [m["content"] for m in both["memories"]] == ["Billing runs on PostgreSQL."]
    page = api.post("/list_memories", json={"limit": 1, "offset": 1}).json()
    assert page["has_more"] is True and page["limit"] == 1 and page["memories"][0]["rank"] == 2
    assert api.post("/list_memories").json()["total_count"] == 3
    detail = api.get("/get_memory", params={"memory_id": saved[0]["ref"]}).json()
    assert detail == api.post("/get_memory", json={"memory_id": saved[0]["id"]}).json()
    assert detail["content"] == "Billing runs on PostgreSQL." and detail["superseded_by"] is None
    updated = api.post("/update_memory", json={"memory_id": saved[0]["ref"],
                                               "content": "Billing runs on MySQL."}).json()
    assert updated["supersedes"] == {"id": saved[0]["id"], "ref": saved[0]["ref"]}
    old = api.get("/get_memory", params={"memory_id": saved[0]["id"]}).json()
    assert old["superseded_by"] == updated["ref"]
    deleted = api.post("/delete_memory", json={"memory_id": updated["id"]}).json()
    assert deleted == {"id": updated["id"], "ref": updated["ref"], "deleted": True,
                       "restored": {"id": saved[0]["id"], "ref": saved[0]["ref"]}}
    assert api.get("/health").json()["status"] == "ok"


def _error(response: httpx.Response) -> tuple[int, str]:
    detail = response.json()["detail"]
    assert set(detail) == {"code", "message"} and detail["message"]
    return response.status_code, detail["code"]


def test_every_error_code_of_the_table(api: httpx.Client, tmp_path: Path) -> None:
    saved = _save(api, "A fact to replace.")
    api.post("/update_memory", json={"memory_id": saved[0]["id"], "content": "Replaced."})
    cases = [
        (api.post("/save_memories", json={"memories": []}), 400, "empty_memory"),
        (api.post("/save_memories", json={"memories": [{"content": " "}]}), 400, "empty_memory"),
        (api.post("/save_memories", json={"memories": [{"content": "x", "kind": "fact"}]}),
         400, "invalid_memory_kind"),
        (api.get("/list_memories", params={"sort": "alphabetical"}), 400, "invalid_sort"),
        (api.post("/list_memories", json={"sort": "relevance"}), 400, "invalid_sort"),
        (api.post("/recall_memories", json={"top_k": 0}), 400, "recall_budget"),
        (api.get("/recall_memories", params={"max_tokens": -5}), 400, "recall_budget"),
        (api.post("/list_memories", json={"offset": -1}), 400, "recall_budget"),
        (api.post("/list_memories", json={"until": "yesterday"}), 400, "invalid_request"),
        (api.post("/recall_memories", json={"query": "q" * 5000}), 400, "invalid_request"),
        (api.post("/save_memories", json={"memories": [{"content": "x"}] * 1001}),
         400, "invalid_request"),
        (api.post("/recall_memories", json={"session_id": "nope"}), 404, "session_not_found"),
        (api.get("/list_memories", params={"session_id": "nope"}), 404, "session_not_found"),
        (api.get("/get_memory", params={"memory_id": "0123456789ab"}), 404, "memory_not_found"),
        (api.post("/delete_memory", json={"memory_id": "x"}), 404, "memory_not_found"),
        (api.post("/get_memory", json={"memory_id": ""}), 400, "empty_memory"),
        (api.post("/update_memory", json={"memory_id": saved[0]["ref"], "content": "Again."}),
         409, "memory_already_superseded"),
    ]
    for response, status, code in cases:
        assert _error(response) == (status, code), response.text
    clash = create_app(OneService(_service(tmp_path / "clash.db", same_ref=True)))
    with uvicorn_thread(clash) as base:
        httpx.post(base + "/save_memories", json={"memories": [{"content": "One."},
                                                               {"content": "Two two."}]})
        response = httpx.get(base + "/get_memory", params={"memory_id": "aaaaaaaaaaaa"})
        assert _error(response) == (409, "ambiguous_memory_reference")


def test_internal_errors_leak_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    service = _service(tmp_path / "m.db")

    def boom(*args: Any) -> Any:
        raise RuntimeError("disk full at /home/secret/memories.db")

    service.store.browse = boom  # type: ignore[method-assign]
    with uvicorn_thread(create_app(OneService(service))) as base:
        response = httpx.get(base + "/list_memories")
        assert _error(response) == (500, "internal_error")
        assert "secret" not in response.text
        assert httpx.get(base + "/health").status_code == 200
    # Logged: the route, the exception's type and frames; not its message.
    assert "GET /list_memories" in caplog.text and "RuntimeError" in caplog.text
    assert "boom" in caplog.text and "secret" not in caplog.text


@pytest.mark.parametrize("method,path,kwargs", [
    ("post", "/save_memories",
     {"content": b"not json", "headers": {"content-type": "application/json"}}),
    ("post", "/save_memories", {"json": {"memories": "text"}}),
    ("post", "/save_memories", {"json": {"memories": [{"content": 5}]}}),
    ("post", "/save_memories", {"json": {}}),
    ("post", "/save_memories", {"json": {"memories": [{"content": "x"}], "user": "bob"}}),
    ("post", "/recall_memories", {"json": {"top_k": "ten"}}),
    ("post", "/recall_memories", {"json": {"query": 42}}),
    ("get", "/recall_memories", {"params": {"top_k": "ten"}}),
    ("get", "/list_memories", {"params": {"colour": "red"}}),
    ("post", "/get_memory", {"json": {}}),
    ("get", "/get_memory", {"params": {}}),
    ("post", "/update_memory", {"json": {"memory_id": "abc", "content": 5}}),
    ("post", "/delete_memory", {"json": ["abc"]}),
])
def test_malformed_requests_get_422(api: httpx.Client, method: str, path: str,
                                    kwargs: dict[str, Any]) -> None:
    response = getattr(api, method)(path, **kwargs) if method == "get" else api.request(
        "POST", path, **kwargs)
    assert response.status_code == 422, response.text
    assert api.get("/list_memories").status_code == 200


def test_openapi_documents_every_field_and_error(api: httpx.Client) -> None:
    spec = api.get("/openapi.json").json()
    for name, schema in spec["components"]["schemas"].items():
        if name in ("HTTPValidationError", "ValidationError", "ErrorResponse") or \
                "properties" not in schema:
            continue
        for field, prop in schema["properties"].items():
            assert prop.get("description"), f"{name}.{field} is undocumented"
    operations = {(path, verb): op for path, item in spec["paths"].items()
                  for verb, op in item.items()}
    assert {p for p, _ in operations} == {
        "/save_memories", "/recall_memories", "/list_memories", "/get_memory",
        "/update_memory", "/delete_memory", "/health"}
    for (path, _verb), op in operations.items():
        if path == "/health":
            continue
        assert {"200", "422", "500"} <= set(op["responses"]), path
        assert set(op["responses"]) & {"400", "404", "409"}, path
        for status in set(op["responses"]) - {"200", "422"}:
            ref = op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
            assert ref.endswith("/ErrorResponse") and "`" in op["responses"][status]["description"]
    update = operations[("/update_memory", "post")]["responses"]
    assert "memory_already_superseded" in update["409"]["description"]


def test_foreign_host_headers_are_refused(api: httpx.Client) -> None:
    assert api.get("/health", headers={"host": "attacker.example"}).status_code == 421
    for host in ("127.0.0.1:8765@evil.example", "localhost:9/x", "[::1]evil.example"):
        assert api.get("/health", headers={"host": host}).status_code == 421, host
    assert api.get("/health", headers={"host": "localhost:9"}).status_code == 200


def test_mcp_mounted_in_the_rest_app_shares_the_store(tmp_path: Path) -> None:
    app = create_app(OneService(_service(tmp_path / "m.db")), mcp=True,
                     hosts=allowed_hosts("127.0.0.1", ""))
    with uvicorn_thread(app) as base:
        async def main() -> str:
            async with Client(base + "/mcp") as client:
                saved = await client.call_tool(
                    "save_memories", {"memories": [{"content": "Mounted MCP works."}]})
                assert not saved.is_error
                recalled = await client.call_tool("recall_memories", {})
                return recalled.content[0].text  # type: ignore[union-attr,no-any-return]

        assert "Mounted MCP works." in anyio.run(main)
        listed = httpx.get(base + "/list_memories").json()
        assert [m["content"] for m in listed["memories"]] == ["Mounted MCP works."]


def test_oversized_bodies_are_refused_before_parsing(api: httpx.Client) -> None:
    huge = {"memories": [{"content": "x" * (5 * 1024 * 1024)}]}
    response = api.post("/save_memories", json=huge)
    assert response.status_code == 413 and response.json()["detail"]["code"] == "invalid_request"
    assert api.get("/list_memories").json()["total_count"] == 0
