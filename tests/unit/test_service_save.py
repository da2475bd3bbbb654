"""save_memories over the fakes: indexes, dedup, similar_to, notices, profile scope."""

from __future__ import annotations

import pytest

from tests.fakes import HashEmbedder
from tests.unit.support import TableEmbedder, save
from tinycontext.domain.errors import (
    EmptyMemoryError,
    InvalidMemoryKindError,
    InvalidRequestError,
)
from tinycontext.domain.memory import MemoryInput, ref_of

BASE = "moved to Berlin on 3 March"


def test_save_returns_one_entry_per_item_with_its_index(svc):
    result = svc.save(
        [MemoryInput("The project uses SQLite."), {"content": " Call me Ann ", "kind": "profile"}],
        session_id="proj",
    ).to_dict()
    assert "skipped_duplicates" not in result and "notice" not in result
    first, second = result["saved"]
    assert first["index"] == 0 and second["index"] == 1
    assert first["ref"] == ref_of(first["id"]) and len(first["ref"]) == 12
    assert (first["session_id"], first["kind"], first["content_tokens"]) == ("proj", "episodic", 4)
    assert first["created_at"] == "2026-07-31T10:15:00Z"
    # Profile memories are global: the session is ignored.
    assert (second["session_id"], second["kind"], second["content_tokens"]) == (None, "profile", 3)
    assert svc.detail(second["id"]).to_dict()["content"] == "Call me Ann"


def test_dedup_within_one_batch_reports_the_input_index(svc):
    result = svc.save([
        {"content": "The project uses SQLite."},
        {"content": "the project USES sqlite"},  # same words: identical hash vector
        {"content": "Deploys happen on Fridays."},
    ]).to_dict()
    assert [s["index"] for s in result["saved"]] == [0, 2]
    assert result["skipped_duplicates"] == [
        {"index": 1, "duplicate_of": result["saved"][0]["ref"], "similarity": 1.0}
    ]
    assert svc.list_page().to_dict()["total_count"] == 2


def test_dedup_against_the_store(svc):
    [first] = save(svc, "The project uses SQLite.")
    result = svc.save([{"content": "The project uses SQLite!"}]).to_dict()
    assert result["saved"] == []
    assert result["skipped_duplicates"] == [
        {"index": 0, "duplicate_of": first["ref"], "similarity": 1.0}
    ]


def test_dedup_against_the_store_in_a_large_batch_keeps_each_items_own_scope(svc):
    # 12 items: the store lookups are split over two threads; each answer must stay with
    # its own item, kind and scope.
    stored = save(svc, *[f"fact number {n} about the build" for n in range(12)])
    profile = svc.save([{"content": "fact number 9 about the build", "kind": "profile"}]).to_dict()
    assert len(profile["saved"]) == 1  # another kind: not a duplicate
    batch = [f"new fact {n} about deploys" for n in range(12)]
    batch[3], batch[10] = "fact number 3 about the build", "fact number 10 about the build"
    result = svc.save([{"content": text} for text in batch]).to_dict()
    assert [s["index"] for s in result["skipped_duplicates"]] == [3, 10]
    assert [s["duplicate_of"] for s in result["skipped_duplicates"]] == [
        stored[3]["ref"], stored[10]["ref"]]
    assert len(result["saved"]) == 10


def test_dedup_is_scoped_by_kind_and_session(svc):
    save(svc, "The project uses SQLite.", session_id="a")
    assert len(save(svc, "The project uses SQLite.", session_id="b")) == 1
    assert len(save(svc, "The project uses SQLite.")) == 1  # no session: its own scope
    assert len(save(svc, "The project uses SQLite.", kind="profile")) == 1
    assert svc.list_page(limit=200).to_dict()["total_count"] == 4


def test_dedup_ignores_superseded_versions(svc):
    [old] = save(svc, "The deadline is Friday.")
    svc.update(old["id"], "The deadline is Monday.")
    assert len(save(svc, "The deadline is Friday.")) == 1


@pytest.mark.parametrize(
    ("text", "similarity", "outcome"),
    [
        ("moved to Berlin on 9 April", 0.97, "similar"),  # new date: kept, never lost
        ("Moved to Berlin on 3 March!", 0.97, "skipped"),  # same tokens: adds nothing
        ("moved to Berlin on 3 March 2026", 0.97, "similar"),  # adds the year
        ("moved to Berlin in spring", 0.85, "similar"),
        ("moved to Berlin in spring", 0.79, "plain"),
    ],
)
def test_similarity_outcomes(make, text, similarity, outcome):
    svc = make(embedder=TableEmbedder({BASE: 1.0, text: similarity}))
    [base] = save(svc, BASE)
    result = svc.save([{"content": text}]).to_dict()
    if outcome == "skipped":
        assert result["saved"] == []
        assert result["skipped_duplicates"] == [
            {"index": 0, "duplicate_of": base["ref"], "similarity": similarity}
        ]
        return
    [entry] = result["saved"]
    if outcome == "similar":
        assert entry["similar_to"] == {"ref": base["ref"], "similarity": similarity}
    else:
        assert "similar_to" not in entry


def test_similar_to_within_one_batch(make):
    svc = make(embedder=TableEmbedder({BASE: 1.0, "moved to Berlin on 9 April": 0.97}))
    result = svc.save([{"content": BASE}, {"content": "moved to Berlin on 9 April"}]).to_dict()
    first, second = result["saved"]
    assert "similar_to" not in first
    assert second["similar_to"] == {"ref": first["ref"], "similarity": 0.97}


def test_long_content_notice(make):
    svc = make(save_length_notice_tokens=5)
    result = svc.save([{"content": "one two three four five"},
                       {"content": "one two three four five six"}]).to_dict()
    short, long = result["saved"]
    assert "notice" not in short
    assert "6 tokens (over 5)" in long["notice"] and "split" in long["notice"]


def test_saves_embed_the_batch_once(svc):
    embedder = svc.embedder
    before = embedder.calls
    svc.save([{"content": f"fact number {i}"} for i in range(5)])
    assert embedder.calls == before + 1


def test_document_prefix_context_and_tokens_change_the_model_key(make):
    plain = {"save_context_minutes": 0, "recall_late_interaction": False}
    assert make(**plain).model_key == "hash-64"
    assert make().model_key == "hash-64+ctx1+tok1"
    assert make(save_context_minutes=0).model_key == "hash-64+tok1"
    assert make(recall_fusion="rrf").model_key == "hash-64+ctx1"  # rank fusion: no rescoring
    prefixed = make(dense_document_prefix="passage: ", **plain)
    assert prefixed.model_key.startswith("hash-64+doc:") and prefixed.model_key != "hash-64"


@pytest.mark.parametrize(
    ("items", "error"),
    [
        ([], EmptyMemoryError),
        ([{"content": "ok"}, {"content": "  "}], EmptyMemoryError),
        ([{"content": "ok"}, {"content": "x", "kind": "facts"}], InvalidMemoryKindError),
        ([{"content": "ok"}, {"content": "x", "labels": ["a"]}], InvalidRequestError),
        ([{"content": "ok"}, {"content": "x", "tags": ["a b"]}], InvalidRequestError),
        ([{"content": "ok"}, "just a string"], InvalidRequestError),
        ([{"content": 5}], InvalidRequestError),
        ([{"content": "bad \ud800"}], InvalidRequestError),
        ([{"content": f"m{i}"} for i in range(1001)], InvalidRequestError),
        ("not a list", EmptyMemoryError),
    ],
)
def test_invalid_batches_save_nothing(svc, items, error):
    embedder: HashEmbedder = svc.embedder  # type: ignore[assignment]
    calls = embedder.calls
    with pytest.raises(error):
        svc.save(items)
    assert embedder.calls == calls
    assert svc.list_page().to_dict()["total_count"] == 0


def test_error_names_the_bad_item(svc):
    with pytest.raises(EmptyMemoryError, match=r"memories\[1\]"):
        svc.save([{"content": "ok"}, {"content": ""}])
