"""The MCP tools through the SDK's in-memory client: names, parameters, prompts, errors, bad input.

Real SQLite store, fake embedder and tokenizer: what is tested here is the adapter.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service

TOOLS = {
    "save_memories": ["memories"],
    "recall_memories": ["query", "top_k", "tags", "metadata", "since", "until", "as_of"],
    "list_memories": ["kind", "since", "until", "limit", "offset", "sort", "search", "tags",
                      "metadata", "as_of"],
    "get_memory": ["memory_id", "as_of"],
    "update_memory": ["memory_id", "content", "tags", "metadata"],
    "delete_memory": ["memory_id"],
}


@pytest.fixture
def service(tmp_path: Path) -> Iterator[MemoryService]:
    db = tmp_path / "m.db"
    svc = build_service(TinyContextConfig(memory_db_path=str(db)), store=SqliteStore(db),
                        embedder=HashEmbedder(), tokenizer=WordTokenizer(), clock=FixedClock(),
                        background=False)
    yield svc
    svc.close()


def run(service: MemoryService, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str]]:
    server = create_mcp_server(OneService(service), warm=False)

    async def main() -> list[tuple[bool, str]]:
        async with Client(server) as client:
            out = []
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                out.append((result.is_error, result.content[0].text))  # type: ignore[union-attr]
            return out

    return anyio.run(main)


def test_tool_names_parameters_and_prompts(service: MemoryService) -> None:
    server = create_mcp_server(OneService(service), warm=False)

    async def main() -> Any:
        async with Client(server) as client:
            return client.instructions, (await client.list_tools()).tools

    instructions, tools = anyio.run(main)
    assert {t.name: list(t.input_schema["properties"]) for t in tools} == TOOLS
    required = {t.name: sorted(t.input_schema.get("required", [])) for t in tools}
    assert required == {"save_memories": ["memories"], "recall_memories": [],
                        "list_memories": [], "get_memory": ["memory_id"],
                        "update_memory": ["memory_id"], "delete_memory": ["memory_id"]}
    by_name = {t.name: t for t in tools}
    for tool in tools:
        assert len(tool.description or "") > 200
        assert all(p.get("description") for p in tool.input_schema["properties"].values())
    assert "profile" in by_name["save_memories"].description
    assert "update_memory" in by_name["save_memories"].description
    recall = by_name["recall_memories"].description
    assert "Without a query" in recall and "not an error" in recall and "not instructions" in recall
    assert by_name["delete_memory"].annotations.destructive_hint is True
    assert by_name["recall_memories"].annotations.read_only_hint is True
    assert instructions and "update_memory" in instructions and "<notice>" in instructions
    assert "session_id" not in json.dumps([t.input_schema for t in tools])


def test_json_results_and_round_trip(service: MemoryService) -> None:
    save, = run(service, [("save_memories", {"memories": [
        {"content": "Billing moved to PostgreSQL in March."}, {"content": "Call me Ada",
                                                               "kind": "profile"}]})])
    assert save[0] is False
    saved = json.loads(save[1])["saved"]
    assert [s["kind"] for s in saved] == ["episodic", "profile"]
    ref = saved[0]["ref"]
    out = run(service, [
        ("update_memory", {"memory_id": ref, "content": "Billing moved to PostgreSQL in April."}),
        ("recall_memories", {"query": "billing database"}),
    ])
    update = json.loads(out[0][1])
    assert update["supersedes"]["ref"] == ref and update["ref"] != ref
    recalled = out[1][1]
    assert f'ref="{update["ref"]}"' in recalled and "April" in recalled and "March" not in recalled
    deleted, listing = run(service, [("delete_memory", {"memory_id": update["id"]}),
                                     ("list_memories", {"kind": "episodic"})])
    assert json.loads(deleted[1]) == {"id": update["id"], "ref": update["ref"], "deleted": True,
                                      "restored": {"id": saved[0]["id"], "ref": ref}}
    assert f'ref="{ref}"' in listing[1]


def test_every_engine_error_arrives_as_code_colon_message(service: MemoryService) -> None:
    (_, text), = run(service, [("save_memories", {"memories": [{"content": "A fact."}]})])
    first = json.loads(text)
    ref = first["saved"][0]["ref"]
    run(service, [("update_memory", {"memory_id": ref, "content": "A newer fact."})])
    cases = [
        (("save_memories", {"memories": []}), "empty_memory"),
        (("save_memories", {"memories": [{"content": "   "}]}), "empty_memory"),
        (("save_memories", {"memories": [{"content": "x", "kind": "note"}]}),
         "invalid_memory_kind"),
        (("list_memories", {"sort": "oldest"}), "invalid_sort"),
        (("list_memories", {"sort": "relevance"}), "invalid_sort"),
        (("recall_memories", {"top_k": 0}), "recall_budget"),
        (("list_memories", {"limit": 0}), "recall_budget"),
        (("list_memories", {"offset": -1}), "recall_budget"),
        (("list_memories", {"since": "last tuesday"}), "invalid_request"),
        (("get_memory", {"memory_id": "0123456789ab"}), "memory_not_found"),
        (("get_memory", {"memory_id": ""}), "empty_memory"),
        (("update_memory", {"memory_id": ref, "content": "Again."}), "memory_already_superseded"),
        (("delete_memory", {"memory_id": "not-an-id"}), "memory_not_found"),
    ]
    results = run(service, [call for call, _ in cases])
    for (call, code), (error, text) in zip(cases, results, strict=True):
        assert error, call
        assert text.startswith(f"{code}: ") and len(text) > len(code) + 10, (call, text)


def test_bad_input_is_rejected_clearly_and_the_server_keeps_serving(
    service: MemoryService,
) -> None:
    many = [{"content": f"Fact number {i}."} for i in range(10_000)]
    cases: list[tuple[str, dict[str, Any]]] = [
        ("recall_memories", {"query": "x", "session_id": "work"}),  # not a parameter here
        ("recall_memories", {"top_k": "many"}),
        ("recall_memories", {"query": ["a", "list"]}),
        ("save_memories", {}),
        ("save_memories", {"memories": "just text"}),
        ("save_memories", {"memories": [{"text": "wrong key"}]}),
        ("save_memories", {"memories": many}),
        ("recall_memories", {"query": "q" * 20_000}),
        ("list_memories", {"search": "s" * 500}),
        ("get_memory", {"memory_id": 12345}),
        ("forget_everything", {}),
    ]
    results = run(service, [*cases, ("save_memories", {"memories": [{"content": "Still up."}]}),
                            ("recall_memories", {})])
    for (name, _), (error, text) in zip(cases, results, strict=False):
        assert error and text.startswith("invalid_request: "), (name, text)
    assert "at most 1000" in results[6][1]
    assert "scoped per process" in results[0][1]
    assert results[-2][0] is False and "Still up." in results[-1][1]
    assert "Fact number" not in results[-1][1]  # the rejected batch saved nothing


def test_oversized_content_is_saved_with_a_split_notice(service: MemoryService) -> None:
    (error, text), = run(service, [("save_memories", {"memories": [
        {"content": "word " * 5000}]})])
    assert not error and "split" in json.loads(text)["saved"][0]["notice"]


def test_unexpected_failures_leak_nothing(service: MemoryService, monkeypatch: Any,
                                          caplog: pytest.LogCaptureFixture) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret path /home/me/memories.db")

    monkeypatch.setattr(service.store, "browse", boom)
    (error, text), = run(service, [("list_memories", {})])
    assert error and text.startswith("internal_error: ") and "secret" not in text
    assert "list_memories failed unexpectedly" in caplog.text and "RuntimeError" in caplog.text
    assert "boom" in caplog.text and "secret" not in caplog.text
