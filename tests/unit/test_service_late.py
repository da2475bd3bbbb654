"""Late interaction through the service: token bits saved, re-made, read back at recall."""

from __future__ import annotations

import pytest

from tests.fakes import HashEmbedder
from tinycontext.app.vectors import maxsim, token_bits

EMB = HashEmbedder()


def ids(result) -> list[str]:
    return [e["id"] for e in result["saved"]]


def expected_bits(text: str) -> bytes:
    [(_, rows)] = EMB.embed_with_tokens([text], True)
    return token_bits(rows, EMB.dimensions)


def test_saves_and_updates_store_each_memorys_token_bits(svc, store):
    adopted, named = "Caroline adopted a puppy.", "The puppy Caroline adopted is called Max."
    first, second = ids(svc.save([{"content": adopted}, {"content": named}], "s").to_dict())
    assert store.token_bits([first, second]) == {
        first: (expected_bits(adopted), None),
        second: (expected_bits(named), expected_bits(adopted)),
    }
    renamed = "The puppy Caroline adopted is called Maximilian."
    new = svc.update(second, renamed).to_dict()["id"]
    assert store.token_bits([new]) == {new: (expected_bits(renamed), None)}


def test_recall_rescores_the_shortlist_with_maxsim(svc, store, monkeypatch):
    svc.save([{"content": "The deploy runs on Tuesday."},
              {"content": "Lunch is at noon on Fridays."}], "s")
    asked: list[list[str]] = []
    real = store.token_bits

    def spy(memory_ids):  # type: ignore[no-untyped-def]
        asked.append(list(memory_ids))
        return real(memory_ids)

    monkeypatch.setattr(store, "token_bits", spy)
    [top, *_] = svc.recall("When does the deploy run?", "s").to_dict()["memories"]
    assert top["content"] == "The deploy runs on Tuesday." and len(asked) == 1
    assert len(asked[0]) == 2  # both candidates were shortlisted
    [(_, query_rows)] = EMB.embed_with_tokens(["When does the deploy run?"], False)
    late = maxsim(query_rows, real(asked[0]), EMB.dimensions)
    assert late[top["id"]] == max(late.values())


@pytest.mark.parametrize("config", [{"recall_late_interaction": False}, {"recall_fusion": "rrf"}])
def test_switched_off_nothing_is_stored_or_read(make, store, monkeypatch, config):
    svc = make(**config)
    [saved] = ids(svc.save([{"content": "The deploy runs on Tuesday."}], "s").to_dict())
    assert store.token_bits([saved]) == {}
    monkeypatch.setattr(store, "token_bits", lambda _: pytest.fail("read token bits"))
    assert svc.recall("deploy", "s").to_dict()["memories"][0]["id"] == saved


def test_re_embedding_fills_token_bits_of_older_memories(make, store):
    old = make(recall_late_interaction=False)
    [first] = ids(old.save([{"content": "The deploy runs on Tuesday."}], "s").to_dict())
    svc = make()
    assert svc.model_key != old.model_key and store.count_pending_embeddings(svc.model_key) == 1
    assert svc.reindexer.run_until_done() == 1
    assert store.token_bits([first]) == {first: (expected_bits("The deploy runs on Tuesday."),
                                                 None)}
