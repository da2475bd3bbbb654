"""recall_memories over the fakes: modes, budgets, counting, profile pool, sessions."""

from __future__ import annotations

import pytest

from tests.unit.support import FRAME, save
from tinycontext.domain.errors import InvalidRequestError, RecallBudgetError, SessionNotFoundError

TOP_KEYS = {"current_time", "mode", "memories", "total_tokens", "truncated", "matched_count",
            "profile"}


def test_empty_store_is_an_empty_result(svc):
    for result in (svc.recall("anything").to_dict(), svc.recall().to_dict()):
        assert set(result) == TOP_KEYS
        assert result["memories"] == [] and result["profile"] == []
        assert result["total_tokens"] == 0 and result["matched_count"] == 0
        assert result["truncated"] is False
        assert result["current_time"] == "2026-07-31T10:15:00Z"


def test_unused_session_is_not_found(svc):
    save(svc, "The project uses SQLite.", session_id="used")
    with pytest.raises(SessionNotFoundError):
        svc.recall("sqlite", session_id="never")
    with pytest.raises(SessionNotFoundError):
        svc.recall(session_id="never")
    with pytest.raises(SessionNotFoundError):
        svc.list_page(session_id="never")
    assert svc.recall("sqlite", session_id="used").to_dict()["matched_count"] == 1


def test_sessions_scope_recall(svc, clock):
    save(svc, "alpha fact in a", session_id="a")
    save(svc, "alpha fact in b", session_id="b")
    save(svc, "alpha fact nowhere")
    assert [m["content"] for m in svc.recall("alpha", session_id="a").to_dict()["memories"]] == [
        "alpha fact in a"
    ]
    assert svc.recall("alpha").to_dict()["matched_count"] == 3


@pytest.mark.parametrize("query", [None, "", "   \n"])
def test_recent_mode(svc, clock, query):
    for i in range(7):
        save(svc, f"fact number {i}")
        clock.advance(60)
    embed_calls = svc.embedder.calls
    result = svc.recall(query).to_dict()
    assert result["mode"] == "recent"
    assert svc.embedder.calls == embed_calls  # no embedding call
    newest = [f"fact number {i}" for i in (6, 5, 4, 3, 2)]
    assert [m["content"] for m in result["memories"]] == newest
    assert [m["rank"] for m in result["memories"]] == [1, 2, 3, 4, 5]
    for m in result["memories"]:
        assert set(m) == {"rank", "content_tokens", "created_at", "id", "ref", "content"}
    assert result["matched_count"] == 5 and not result["truncated"]
    assert result["total_tokens"] == 5 * (3 + FRAME)
    listed = svc.list_page().to_dict()["memories"]
    assert all(m["recall_count"] == 0 and m["last_recalled_at"] is None for m in listed)


def test_recent_mode_excludes_profile_and_superseded(svc, clock):
    save(svc, "Call the user Ann.", kind="profile")
    [old] = save(svc, "The deadline is Friday.")
    svc.update(old["id"], "The deadline is Monday.")
    result = svc.recall().to_dict()
    assert [m["content"] for m in result["memories"]] == ["The deadline is Monday."]
    assert [p["content"] for p in result["profile"]] == ["Call the user Ann."]


def test_recent_top_k(svc, clock):
    for i in range(3):
        save(svc, f"fact number {i}")
        clock.advance(1)
    assert len(svc.recall(top_k=2).to_dict()["memories"]) == 2


def test_semantic_mode_fields_and_exact_top_score(svc):
    [m] = save(svc, "alpha beta gamma delta")
    result = svc.recall("alpha beta gamma delta").to_dict()
    assert result["mode"] == "semantic"
    [hit] = result["memories"]
    assert set(hit) == {"rank", "relevance", "scores", "content_tokens", "created_at", "id",
                        "ref", "content"}
    assert (hit["rank"], hit["id"], hit["ref"], hit["content_tokens"]) == (1, m["id"], m["ref"], 4)
    # Rank 1 in both lists: normalised rrf 1.0; identical text: cosine 1.0.
    assert hit["scores"]["fused"] == 1.0 and hit["scores"]["dense"] == pytest.approx(1.0, abs=1e-6)
    assert hit["scores"]["bm25"] > 0 and hit["relevance"] == "high"
    assert result["total_tokens"] == 4 + FRAME


def test_semantic_ranks_the_matching_memory_first_deterministically(svc, clock):
    for text in ("Lunch is at noon.", "The project stores state in SQLite.", "Cats sleep a lot."):
        save(svc, text)
        clock.advance(1)
    first = svc.recall("Where does the project store state? SQLite?").to_dict()
    assert first["memories"][0]["content"] == "The project stores state in SQLite."
    order = [m["id"] for m in first["memories"]]
    for _ in range(3):
        assert [m["id"] for m in svc.recall("Where does the project store state? SQLite?").to_dict()
                ["memories"]] == order


def test_lone_unrelated_memory_is_low(svc):
    save(svc, "Lunch is at noon.")
    [hit] = svc.recall("quantum chromodynamics").to_dict()["memories"]
    assert hit["rank"] == 1 and hit["relevance"] == "low"
    # The only candidate is its own best (relative score 1), but far in meaning: low.
    assert hit["scores"]["bm25"] is None and hit["scores"]["fused"] == 1.0


def test_lone_unrelated_memory_under_rank_fusion_scores_half(make):
    svc = make(recall_fusion="rrf")
    save(svc, "Lunch is at noon.")
    [hit] = svc.recall("quantum chromodynamics").to_dict()["memories"]
    assert hit["relevance"] == "low" and hit["scores"]["fused"] == 0.5


def test_semantic_recall_counts_and_get_does_not(svc, clock):
    [m] = save(svc, "The project uses SQLite.")
    assert svc.detail(m["id"]).to_dict()["recall_count"] == 0
    clock.advance(3600)
    svc.recall("sqlite")
    svc.recall("project sqlite")
    got = svc.detail(m["id"]).to_dict()
    assert got["recall_count"] == 2 and got["last_recalled_at"] == "2026-07-31T11:15:00Z"
    assert svc.detail(m["id"]).to_dict()["recall_count"] == 2


def test_token_budget_cut(svc, clock):
    for i in range(3):
        save(svc, f"alpha fact number {i}")  # 4 words + frame = 10 tokens each
        clock.advance(1)
    result = svc.recall("alpha", max_tokens=25).to_dict()
    assert len(result["memories"]) == 2 and result["total_tokens"] == 20
    assert result["truncated"] is True and result["matched_count"] == 3
    counts = sorted(m["recall_count"] for m in svc.list_page().to_dict()["memories"])
    assert counts == [0, 1, 1]  # only what was returned is counted
    recent = svc.recall(max_tokens=25).to_dict()
    assert len(recent["memories"]) == 2 and recent["truncated"] and recent["matched_count"] == 3


def test_single_memory_over_budget_is_returned_alone(svc):
    save(svc, "alpha " + "word " * 50)
    result = svc.recall("alpha", max_tokens=5).to_dict()
    assert len(result["memories"]) == 1 and result["truncated"] is True
    assert result["total_tokens"] == 51 + FRAME


def test_top_k_applies_before_the_budget(svc, clock):
    for i in range(4):
        save(svc, f"alpha fact number {i}")
        clock.advance(1)
    result = svc.recall("alpha", top_k=2).to_dict()
    assert len(result["memories"]) == 2 and result["matched_count"] == 2
    assert not result["truncated"]


@pytest.mark.parametrize("kwargs", [{"top_k": 0}, {"max_tokens": 0}, {"top_k": -1},
                                    {"max_tokens": -10}])
def test_budget_errors(svc, kwargs):
    with pytest.raises(RecallBudgetError):
        svc.recall("q", **kwargs)
    with pytest.raises(RecallBudgetError):
        svc.recall(None, **kwargs)


@pytest.mark.parametrize("kwargs", [{"top_k": True}, {"max_tokens": "5"}, {"query": 5},
                                    {"query": "x" * 4001}, {"query": "bad \ud800"}])
def test_invalid_recall_arguments(svc, kwargs):
    with pytest.raises(InvalidRequestError):
        svc.recall(**kwargs)


def test_profile_pool_in_every_recall_newest_first_and_trimmed(make, clock):
    svc = make(profile_max_tokens=2 * (4 + FRAME) + 3)  # room for two 4-word profiles
    for name in ("Ann", "Bea", "Cid"):
        save(svc, f"Call me {name} please.", kind="profile", session_id="s")
        clock.advance(60)
    save(svc, "An episodic fact here.", session_id="s")
    expected = ["Call me Cid please.", "Call me Bea please."]
    for result in (svc.recall("fact").to_dict(), svc.recall("fact", session_id="s").to_dict(),
                   svc.recall().to_dict(), svc.recall(session_id="s").to_dict()):
        assert [p["content"] for p in result["profile"]] == expected
        assert set(result["profile"][0]) == {"id", "ref", "content", "content_tokens", "created_at"}
        assert all("Call me" not in m["content"] for m in result["memories"])


def test_profile_pool_can_be_switched_off(make):
    svc = make(profile_max_tokens=0)
    save(svc, "Call me Ann.", kind="profile")
    assert svc.recall().to_dict()["profile"] == []


def test_profiles_are_never_ranked(svc):
    save(svc, "Call me Ann.", kind="profile")
    result = svc.recall("Call me Ann").to_dict()
    assert result["memories"] == [] and result["matched_count"] == 0
    assert [p["content"] for p in result["profile"]] == ["Call me Ann."]


def test_profile_pool_never_exceeds_profile_max_tokens(make):
    svc = make(profile_max_tokens=20)
    save(svc, "word " * 100, kind="profile")
    pool = svc.recall().to_dict()["profile"]
    assert sum(p["content_tokens"] + FRAME for p in pool) <= 20


def test_spread_gives_a_later_slot_to_another_moment_only_when_turned_on(make, clock):
    """Recall with recall_spread_weight: a memory from a day later is not crowded out by
    near neighbours of the best one saved in the same sitting; off, the fused order stands."""
    for spread_weight in (0.0, 0.5):
        svc = make(recall_spread_weight=spread_weight, save_context_minutes=0)
        session = f"s{spread_weight}"
        for text in ("hiking trip in the alps with sam", "hiking trip in the alps, day two",
                     "hiking trip in the alps, day three"):
            save(svc, text, session_id=session)
            clock.advance(60)
        clock.advance(86400)
        save(svc, "the hiking boots sam gave me broke", session_id=session)
        top = [m["content"] for m in svc.recall(
            "hiking trip alps sam", session_id=session, top_k=2).to_dict()["memories"]]
        assert top[0] == "hiking trip in the alps with sam"
        if spread_weight:
            assert top[1] == "the hiking boots sam gave me broke"
        else:
            assert top[1].startswith("hiking trip in the alps, day")


@pytest.mark.parametrize(("setting", "weight", "texts", "question"), [
    ("recall_moment_weight", 0.8, ("hiking trip in the alps with sam", "hiking boots for the alps",
                                   "sam booked the mountain hut", "the weather in the alps turned"),
     "hiking alps sam"),
    ("recall_facet_weight", 0.6, ("hiking trip in the alps with sam", "sam booked the mountain hut",
                                  "the weather in the alps turned", "hiking boots from the shop"),
     "hiking alps sam hut"),
], ids=["moment-prior", "facet-coverage"])
def test_sitting_levers_change_nothing_when_every_memory_shares_one_sitting(
        make, clock, setting, weight, texts, question):
    """recall_moment_weight compares moments, and recall_facet_weight lifts only memories from
    moments not yet chosen: a store saved in one sitting ranks and scores exactly as without."""
    results = []
    for value in (0.0, weight):
        svc = make(**{setting: value}, save_context_minutes=0)
        for text in texts:
            save(svc, text, session_id="one")
            clock.advance(60)
        results.append(svc.recall(question, session_id="one", top_k=4).to_dict())
    assert results[0]["memories"] == results[1]["memories"]


def test_facet_coverage_gives_another_day_the_question_s_other_word(make, clock):
    """With the fake embedder the keyword side decides: the hut, named only on another day,
    takes the second slot from the first day's second alps memory when the lever is on."""
    tops = {}
    for weight in (0.0, 2.0):
        svc = make(recall_facet_weight=weight, save_context_minutes=0)
        for text in ("alps alps trip with sam", "alps weather with sam"):
            save(svc, text, session_id="one")
            clock.advance(60)
        clock.advance(3 * 86400)
        save(svc, "the mountain hut", session_id="one")
        result = svc.recall("alps sam hut", session_id="one", top_k=3).to_dict()
        tops[weight] = [m["content"] for m in result["memories"]]
    assert tops[0.0][0] == tops[2.0][0]
    assert tops[2.0][1] == "the mountain hut"
    assert tops[0.0][1] != "the mountain hut"
