"""REST edges (issue 13 items 2, 3, 7, 8) under a real uvicorn: every error in the documented
`{"detail": {"code", "message"}}` shape with its status, integers past the engine's bound,
bodies that are not UTF-8 JSON, 405/OPTIONS with `Allow`, the size limit, control characters,
and an OpenAPI document that states the limits the engine applies."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.servers import uvicorn_thread
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.rest import create_app

JSON = {"content-type": "application/json"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[httpx.Client]:
    counter = itertools.count(1)
    db = tmp_path / "m.db"
    service = MemoryService(
        SqliteStore(db), HashEmbedder(), WordTokenizer(), FixedClock(),
        TinyContextConfig(memory_db_path=str(db), max_memory_tokens=50), background=False,
        new_id=lambda: f"{next(counter):08x}-0000-4000-8000-000000000000",
    )
    with uvicorn_thread(create_app(OneService(service), warm=False)) as base, \
            httpx.Client(base_url=base, timeout=30) as client:
        yield client


def _detail(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()
    assert set(body) == {"detail"} and set(body["detail"]) == {"code", "message"}, response.text
    return response.status_code, body["detail"]["code"], body["detail"]["message"]


def _total(api: httpx.Client) -> int:
    return int(api.get("/list_memories").json()["total_count"])


@pytest.mark.parametrize(("method", "path", "kwargs"), [
    ("POST", "/list_memories", {"json": {"offset": 2**64}}),
    ("POST", "/list_memories", {"json": {"limit": 2**63}}),
    ("GET", "/list_memories", {"params": {"offset": str(2**63)}}),
    ("GET", "/list_memories", {"params": {"limit": "9" * 30}}),
    ("POST", "/recall_memories", {"json": {"top_k": 2**64}}),
    ("POST", "/recall_memories", {"json": {"query": "fact", "top_k": 2**63}}),
    ("GET", "/recall_memories", {"params": {"max_tokens": str(2**64)}}),
], ids=["offset", "limit", "GET offset", "GET limit", "top_k", "semantic top_k", "max_tokens"])
def test_integers_past_the_bound_are_invalid_request(api, method, path, kwargs):
    api.post("/save_memories", json={"memories": [{"content": "A fact."}]})
    status, code, message = _detail(api.request(method, path, **kwargs))
    assert (status, code) == (400, "invalid_request")
    assert "must be at most 9007199254740991" in message


def test_the_largest_integers_work_on_sqlite(api):
    api.post("/save_memories", json={"memories": [{"content": "A fact."}]})
    big = 2**53 - 1
    page = api.post("/list_memories", json={"offset": big, "limit": big})
    assert page.status_code == 200 and page.json()["offset"] == big
    recalled = api.get("/recall_memories", params={"top_k": big, "max_tokens": big})
    assert recalled.status_code == 200 and len(recalled.json()["memories"]) == 1


@pytest.mark.parametrize(("body", "words"), [
    (b'{"memories": [{"content": "\xff\xfe caf\xe9"}]}', "not valid UTF-8"),
    (b'{"memories": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    (b"not json at all", "not valid JSON"),
    (b'{"memories": [{"content": "x"}]', "not valid JSON"),
    (b'{"memories": [{"content": "x"}], "session_id": ' + b"1" * 5000 + b"}", "could not be read"),
], ids=["latin-1", "nested", "text", "truncated", "5000-digit number"])
def test_bodies_that_are_not_json_get_422_in_the_documented_shape(api, body, words):
    status, code, message = _detail(api.post("/save_memories", content=body, headers=JSON))
    assert (status, code) == (422, "invalid_request") and words in message
    assert _total(api) == 0


@pytest.mark.parametrize(("method", "path", "kwargs", "where"), [
    ("POST", "/save_memories", {"json": {"memories": [{"content": 5}]}}, "memories.0.content"),
    ("POST", "/save_memories", {"json": {"memories": [], "user": "bob"}}, "user: unknown"),
    ("POST", "/recall_memories", {"json": {"top_k": True}}, "top_k"),
    ("POST", "/list_memories", {"json": {"offset": "3"}}, "offset"),
    ("GET", "/recall_memories", {"params": {"top_k": "ten"}}, "top_k"),
    ("POST", "/get_memory", {"json": {}}, "memory_id: Field required"),
], ids=["wrong type", "unknown field", "true as number", "text as number", "GET text",
        "missing"])
def test_validation_errors_use_the_documented_shape(api, method, path, kwargs, where):
    status, code, message = _detail(api.request(method, path, **kwargs))
    assert (status, code) == (422, "invalid_request")
    assert message.startswith("Malformed request: ") and where in message


def test_query_strings_still_take_digits(api):
    page = api.get("/list_memories", params={"limit": "3", "offset": "0"})
    assert page.status_code == 200 and page.json()["limit"] == 3


@pytest.mark.parametrize(("path", "allow"), [
    ("/save_memories", "OPTIONS, POST"), ("/recall_memories", "GET, OPTIONS, POST"),
    ("/list_memories", "GET, OPTIONS, POST"), ("/get_memory", "GET, OPTIONS, POST"),
    ("/delete_memory", "OPTIONS, POST"), ("/health", "GET, OPTIONS"),
])
def test_options_and_405_name_every_method_of_the_path(api, path, allow):
    options = api.options(path)
    assert options.status_code == 204 and options.headers["allow"] == allow
    wrong = api.put(path, json={})
    assert wrong.headers["allow"] == allow
    status, code, message = _detail(wrong)
    assert (status, code) == (405, "invalid_request") and message.startswith("PUT is not allowed")


def test_unknown_paths_get_404_in_the_documented_shape(api):
    status, code, message = _detail(api.get("/no_such_thing"))
    assert (status, code) == (404, "invalid_request") and "/openapi.json" in message


def test_memory_too_large_is_413_and_says_to_split(api):
    big = " ".join(["word"] * 51)
    status, code, message = _detail(api.post("/save_memories", json={
        "memories": [{"content": "fits"}, {"content": big}]}))
    assert (status, code) == (413, "memory_too_large")
    assert message.startswith("memories[1].content is 51 tokens, over the limit of 50 tokens")
    assert "Split it into smaller memories" in message
    huge = "x" * 2_000_000
    assert _detail(api.post("/save_memories", json={"memories": [{"content": huge}]}))[:2] == (
        413, "memory_too_large")
    assert _total(api) == 0
    saved = api.post("/save_memories", json={"memories": [{"content": "fits"}]}).json()
    status, code, _ = _detail(api.post("/update_memory", json={
        "memory_id": saved["saved"][0]["id"], "content": big}))
    assert (status, code) == (413, "memory_too_large")


def test_invisible_content_is_empty_memory_and_controls_are_removed(api):
    for content in ("\u0000", "\u200b\u200c\u200d", "\ufeff \u2060"):
        response = api.post("/save_memories", json={"memories": [{"content": content}]})
        assert _detail(response)[:2] == (400, "empty_memory")
    saved = api.post("/save_memories", json={
        "memories": [{"content": "\ufeffNUL\u0000 and ESC\u001b gone\u000bnext line"}]}).json()
    got = api.get("/get_memory", params={"memory_id": saved["saved"][0]["id"]}).json()
    assert got["content"] == "NUL and ESC gone\nnext line"


def _schema(spec: dict[str, Any], name: str) -> dict[str, Any]:
    return spec["components"]["schemas"][name]  # type: ignore[no-any-return]


def _param(spec: dict[str, Any], path: str, name: str) -> dict[str, Any]:
    [param] = [p for p in spec["paths"][path]["get"]["parameters"] if p["name"] == name]
    return param["schema"]  # type: ignore[no-any-return]


def test_openapi_states_the_engine_limits(api):
    spec = api.get("/openapi.json").json()
    maximum = 2**53 - 1
    recall = _schema(spec, "RecallRequest")["properties"]
    assert recall["top_k"]["anyOf"][0] == {"type": "integer", "minimum": 1, "maximum": maximum}
    assert recall["query"]["anyOf"][0]["maxLength"] == 4000
    listing = _schema(spec, "ListRequest")["properties"]
    assert listing["offset"]["anyOf"][0]["minimum"] == 0
    assert listing["search"]["anyOf"][0]["maxLength"] == 200
    assert listing["sort"]["anyOf"][0]["enum"] == ["recent", "stale", "relevance"]
    assert _schema(spec, "ListRequest")["then"]["required"] == ["search"]
    assert _param(spec, "/list_memories", "limit")["anyOf"][0]["minimum"] == 1
    save = _schema(spec, "SaveRequest")["properties"]
    assert (save["memories"]["minItems"], save["memories"]["maxItems"]) == (1, 1000)
    assert save["session_id"]["anyOf"][0]["maxLength"] == 200
    content = _schema(spec, "MemoryItem")["properties"]["content"]
    assert content["minLength"] == 1 and "\u200b" in content["pattern"]
    memory_id = _schema(spec, "MemoryIdRequest")["properties"]["memory_id"]
    assert memory_id["pattern"].startswith("^\\s*([0-9a-fA-F]{8}-")
    for path, item in spec["paths"].items():
        for verb, op in item.items():
            if path != "/health":
                ref = op["responses"]["422"]["content"]["application/json"]["schema"]["$ref"]
                assert ref.endswith("/ErrorResponse"), (verb, path)
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    saves = spec["paths"]["/save_memories"]["post"]["responses"]
    assert "memory_too_large" in saves["413"]["description"]
    assert set(saves["200"]["links"]) == {"GetSavedMemory", "GetSavedMemoryByQuery",
                                          "UpdateSavedMemory", "DeleteSavedMemory"}


def test_a_session_id_that_looks_like_a_secret_is_refused(api):
    token = "ghp_5FWqS0UW13SlKKby36dyp5qaOveMCPvenqsV"
    for response in (
        api.post("/save_memories", json={"session_id": token, "memories": [{"content": "x y"}]}),
        api.get("/list_memories", params={"session_id": token}),
        api.post("/recall_memories", json={"query": "x", "session_id": token}),
    ):
        status, code, message = _detail(response)
        assert (status, code) == (400, "invalid_request") and "looks like a secret" in message
        assert token not in response.text
    assert _total(api) == 0
