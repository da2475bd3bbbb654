"""REST's recall budget counts what REST returns (issue 14): each memory's content tokens,
no MCP tag around it, so `total_tokens` is the sum of the returned `content_tokens` and a
budget fits exactly as many memories as their content allows. MCP keeps counting its
frame (tests/integration/test_mcp_budget.py)."""

from __future__ import annotations

import itertools

from fastapi.testclient import TestClient

from tinycontext.adapters.mcp.frame import PROMPT_FRAMING
from tinycontext.adapters.rest.api import build_app
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer

FACTS = [f"Fact {word} number {i} is about the <deploy> pipeline." for i, word in
         enumerate(["alpha", "beta", "gamma", "delta", "epsilon"])]


def _client() -> tuple[TestClient, MemoryService]:
    counter = itertools.count(1)
    service = MemoryService(
        InMemoryStore(), HashEmbedder(), WordTokenizer(), FixedClock(),
        TinyContextConfig(profile_max_tokens=20), background=False,
        new_id=lambda: f"{next(counter):08x}-0000-4000-8000-000000000000",
        recall_framing=PROMPT_FRAMING,  # the Python API's default, as the container builds it
    )
    client = TestClient(build_app(OneService(service), warm=False))
    saved = client.post("/save_memories", json={"memories": [
        *({"content": f} for f in FACTS), {"content": "Call the user Ada.", "kind": "profile"}]})
    assert saved.status_code == 200 and len(saved.json()["saved"]) == 6
    return client, service


def test_the_rest_budget_counts_content_tokens_only() -> None:
    client, service = _client()
    each = WordTokenizer().count(FACTS[0])  # 9 words; every fact has as many
    for path in ("recent", "semantic"):
        body = {"max_tokens": 3 * each} | ({"query": "deploy pipeline"} if path == "semantic"
                                            else {})
        answer = client.post("/recall_memories", json=body).json()
        assert answer["mode"] == path
        # With the MCP frame (6 more words each) only 1 would fit; REST returns what its
        # own text fits.
        assert len(answer["memories"]) == 3, path
        assert answer["total_tokens"] == sum(m["content_tokens"] for m in answer["memories"])
        assert answer["total_tokens"] <= 3 * each and answer["truncated"]
        assert answer["profile"][0]["content"] == "Call the user Ada."
    # The Python API (and MCP) still count the prompt frame around each memory: 9 + 6.
    python = service.recall(max_tokens=3 * each).to_dict()
    assert len(python["memories"]) == 1 and python["total_tokens"] == each + 6


def test_the_composition_gives_built_services_the_prompt_frame(tmp_path) -> None:
    # The Python API, the hooks and the web UI's Ask page recall with the service's default:
    # the container's services count MCP's prompt frame; a hand-built service counts none.
    from tinycontext.app.rendering import PLAIN
    from tinycontext.entry.container import build_service

    built = build_service(TinyContextConfig(memory_db_path=str(tmp_path / "m.db")),
                          store=InMemoryStore(), embedder=HashEmbedder(),
                          tokenizer=WordTokenizer(), clock=FixedClock(), background=False)
    assert built.recall_framing == PROMPT_FRAMING
    plain = MemoryService(InMemoryStore(), HashEmbedder(), WordTokenizer(), FixedClock())
    assert plain.recall_framing == PLAIN
    built.close()
    plain.close()
