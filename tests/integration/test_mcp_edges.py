"""MCP tools and management resources at the edges of their inputs (issue 13 items 2, 7, 8):
numbers past the engine's bound, booleans for numbers, invisible content, the size limit.
Through the SDK's in-memory client over a real SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.management import Management
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service

INVALID_PARAMS = -32602


@pytest.fixture
def service(tmp_path: Path) -> Iterator[MemoryService]:
    db = tmp_path / "m.db"
    svc = build_service(TinyContextConfig(memory_db_path=str(db), max_memory_tokens=20),
                        store=SqliteStore(db), embedder=HashEmbedder(),
                        tokenizer=WordTokenizer(), clock=FixedClock(), background=False)
    svc.save([{"content": "The staging database is Postgres 16."}])
    yield svc
    svc.close()


def _call(service: MemoryService, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    server = create_mcp_server(OneService(service), warm=False)

    async def main() -> tuple[bool, str]:
        async with Client(server) as client:
            result = await client.call_tool(name, arguments)
            return result.is_error, result.content[0].text  # type: ignore[union-attr]

    return anyio.run(main)


@pytest.mark.parametrize(("name", "arguments"), [
    ("list_memories", {"offset": 2**64}),
    ("list_memories", {"offset": 2**63}),
    ("list_memories", {"limit": 2**63}),
    ("recall_memories", {"top_k": 2**64}),
    ("recall_memories", {"query": "database", "top_k": 2**63}),
], ids=["offset 2**64", "offset 2**63", "limit", "recent top_k", "semantic top_k"])
def test_numbers_past_the_bound_are_invalid_request_tool_errors(service, name, arguments):
    is_error, text = _call(service, name, arguments)
    assert is_error and text.startswith("invalid_request: ")
    assert "must be at most 9007199254740991" in text


@pytest.mark.parametrize(("name", "arguments"), [
    ("recall_memories", {"top_k": True}), ("list_memories", {"limit": "5"}),
    ("list_memories", {"offset": False}),
])
def test_booleans_and_strings_are_not_numbers(service, name, arguments):
    is_error, text = _call(service, name, arguments)
    assert is_error and text.startswith("invalid_request: ") and "JSON number" in text


def test_invisible_content_and_the_size_limit_are_tool_errors(service):
    for content in ("\u0000", "\u200b\ufeff", " \u2060 "):
        is_error, text = _call(service, "save_memories", {"memories": [{"content": content}]})
        assert is_error and text.startswith("empty_memory: ")
    big = " ".join(["word"] * 21)
    is_error, text = _call(service, "save_memories", {"memories": [{"content": big}]})
    assert is_error and text.startswith(
        "memory_too_large: memories[0].content is 21 tokens, over the limit of 20 tokens")
    memory_id = service.list_page().to_dict()["memories"][0]["id"]
    is_error, text = _call(service, "update_memory", {"memory_id": memory_id, "content": big})
    assert is_error and text.startswith("memory_too_large: ")
    assert service.list_page().to_dict()["total_count"] == 1


def test_control_characters_are_removed_as_on_rest(service):
    is_error, _ = _call(service, "save_memories",
                        {"memories": [{"content": "NUL\u0000 and ESC\u001b gone\u000bnext"}]})
    assert not is_error
    stored = service.list_page(search="gone").to_dict()["memories"][0]["content"]
    assert stored == "NUL and ESC gone\nnext"


def _read_error(service: MemoryService, uri: str) -> MCPError:
    server = create_mcp_server(OneService(service), warm=False, management=Management())

    async def main() -> MCPError:
        async with Client(server) as client:
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            return caught.value

    return anyio.run(main)


@pytest.mark.parametrize("query", [
    f"page={2**64}", f"page={2**63}", "page=" + "9" * 5000, f"page_size={2**64}",
    "page=%C2%B2", "page=-1", "page=0", "page_size=201",
], ids=["page 2**64", "page 2**63", "5000 digits", "page_size", "superscript", "negative",
        "zero", "page_size 201"])
def test_management_paging_out_of_range_is_invalid_params(service, query):
    error = _read_error(service, f"tinycontext://manage/memories?{query}")
    assert error.error.code == INVALID_PARAMS
    assert error.error.message.startswith("invalid_request: ")
    assert error.error.data == {"code": "invalid_request"}


def test_management_last_page_that_fits_is_an_empty_page(service):
    server = create_mcp_server(OneService(service), warm=False, management=Management())
    last = (2**53 - 1) // 25

    async def main() -> str:
        async with Client(server) as client:
            result = await client.read_resource(f"tinycontext://manage/memories?page={last}")
            return result.contents[0].text  # type: ignore[union-attr]

    assert '"rows": []' in anyio.run(main)
