"""Recall with the real default ONNX model and the real SQLite store."""

from __future__ import annotations

import pytest

FACTS = [
    "The user's daughter is learning to play the violin.",
    "Deployments to production happen every Tuesday afternoon.",
    "The team decided to migrate the billing service from MySQL to PostgreSQL.",
    "The build failed with error E4711 when the Gradle cache was corrupted.",
    "Marcell prefers short answers without bullet points.",
    "The office coffee machine is broken again.",
    "Quarterly planning meeting moved to the second week of March.",
    "The API rate limit is 600 requests per minute per key.",
]


@pytest.fixture
def stocked(real_service):  # type: ignore[no-untyped-def]
    real_service.save([{"content": f} for f in FACTS], session_id="work")
    return real_service


def test_paraphrase_without_shared_keywords_is_found(stocked) -> None:  # type: ignore[no-untyped-def]
    result = stocked.recall("Which musical instrument is the kid studying?", "work").to_dict()
    assert result["memories"][0]["content"] == FACTS[0]
    assert result["memories"][0]["scores"]["bm25"] is None  # found by meaning alone


def test_exact_rare_token_is_found_by_keyword(stocked) -> None:  # type: ignore[no-untyped-def]
    dense_only = stocked.store.nearest(
        stocked.embedder.embed(["E4711"])[0], stocked.model_key,
        __import__("tinycontext.ports.store", fromlist=["Scope"]).Scope("episodic", "work"), 10,
    )
    dense_rank = [h.memory.content for h in dense_only].index(FACTS[3]) + 1
    result = stocked.recall("E4711", "work", top_k=3).to_dict()
    assert result["memories"][0]["content"] == FACTS[3]
    assert result["memories"][0]["scores"]["bm25"] is not None
    assert dense_rank > 1 or result["memories"][0]["scores"]["bm25"] is not None


@pytest.mark.parametrize(
    ("content", "query"),
    [
        ("Réunion au café près de la gare à Zürich", "café"),
        ("Die Straße heißt Müllerweg", "müllerweg"),
        ("会议在东京举行，时间是下午三点", "东京"),
        ("プロジェクトの締め切りは金曜日です", "締め切り"),
        ("The launch party theme is 🚀 rockets", "🚀"),
    ],
)
def test_non_ascii_found_by_keyword(
    real_service, content: str, query: str  # type: ignore[no-untyped-def]
) -> None:
    real_service.save([{"content": c} for c in FACTS] + [{"content": content}])
    hits = real_service.list_page(search=query).to_dict()["memories"]
    assert [h["content"] for h in hits] == [content]
    result = real_service.recall(query, top_k=3).to_dict()
    assert result["memories"][0]["content"] == content
    assert result["memories"][0]["scores"]["bm25"] is not None


def test_dated_plans_are_not_merged_by_dedup(real_service) -> None:  # type: ignore[no-untyped-def]
    first = real_service.save([{"content": "Moved to Berlin on 3 March."}]).to_dict()
    second = real_service.save([{"content": "Moved to Berlin on 9 April."}]).to_dict()
    assert first["saved"] and second["saved"]
    assert second["saved"][0]["similar_to"]["ref"] == first["saved"][0]["ref"]
    again = real_service.save([{"content": "moved to berlin on 3 march"}]).to_dict()
    assert again["saved"] == []
    assert again["skipped_duplicates"][0]["duplicate_of"] == first["saved"][0]["ref"]


def test_relevance_labels_need_semantic_closeness(real_service) -> None:  # type: ignore[no-untyped-def]
    real_service.save([{"content": "The office coffee machine is broken again."}])
    lone = real_service.recall("What is the capital of Australia?").to_dict()["memories"][0]
    assert lone["scores"]["fused"] >= 0.45 and lone["relevance"] == "low"


def test_fts_operators_in_queries_are_plain_text(stocked) -> None:  # type: ignore[no-untyped-def]
    before = stocked.list_page(limit=200).to_dict()
    for query in ['"', "*", "NEAR(", "AND", "-", ":", "OR NOT", 'rate" OR "limit', "col:val^2"]:
        result = stocked.recall(query, "work").to_dict()
        assert isinstance(result["memories"], list)
        if any(c.isalnum() for c in query):
            assert isinstance(stocked.list_page(search=query).to_dict()["memories"], list)
    after = stocked.list_page(limit=200).to_dict()
    assert [m["id"] for m in after["memories"]] == [m["id"] for m in before["memories"]]
