"""Save-time context through the service: which memory is context, mixed vectors, deletes."""

from __future__ import annotations

from tests.fakes import HashEmbedder
from tinycontext.app.vectors import cosine, mix_context
from tinycontext.ports.store import Scope

EMB = HashEmbedder()
# The fake embedder's vectors are bags of words: these share enough words to be related.
ADOPT = "Caroline adopted a puppy from the shelter."
REPLY = "The puppy is called Max and Caroline loves him."
WALK = "Caroline walks the puppy every morning."


class Counting(HashEmbedder):
    """Keeps every text it runs through the model."""

    def __init__(self, dimensions: int = 64, key: str = "hash-64") -> None:
        super().__init__(dimensions, key)
        self.texts: list[str] = []

    def embed_with_tokens(self, texts, drop_stopwords):  # type: ignore[no-untyped-def]
        self.texts += list(texts)
        return super().embed_with_tokens(texts, drop_stopwords)


def save(svc, *contents: str, session_id: str | None = None) -> list[str]:
    """Saves the contents in one call; their ids."""
    result = svc.save([{"content": c} for c in contents], session_id=session_id).to_dict()
    return [entry["id"] for entry in result["saved"]]


def context_of(store, memory_id: str) -> str | None:
    found = store.contexts([memory_id]).get(memory_id)
    return None if found is None else found[1]


def test_each_memory_of_a_call_takes_the_one_before_as_context(svc, store):
    first, second, third = save(svc, ADOPT, REPLY, WALK, session_id="s")
    assert context_of(store, first) is None
    assert context_of(store, second) == ADOPT
    assert context_of(store, third) == REPLY
    # The stored vector mixes the context's own vector in; the content is unchanged.
    own, ctx = EMB.embed([REPLY, ADOPT])
    hit = store.nearest(mix_context(own, ctx), svc.model_key, Scope("episodic", "s"), 1)[0]
    assert hit.memory.content == REPLY and abs(hit.score - 1.0) < 1e-6


def test_a_later_call_continues_from_the_newest_memory_within_the_window(svc, store, clock):
    [first] = save(svc, ADOPT, session_id="s")
    clock.advance(59 * 60)
    [second] = save(svc, REPLY, session_id="s")
    assert context_of(store, second) == ADOPT
    clock.advance(61 * 60)
    [third] = save(svc, "The office closes at six.", session_id="s")
    assert context_of(store, third) is None  # over an hour later: a new stretch


def test_context_stays_inside_the_session_and_skips_profiles(svc, store):
    save(svc, ADOPT, session_id="a")
    [other] = save(svc, REPLY, session_id="b")
    [nosession] = save(svc, "A fact saved without a session.")
    assert context_of(store, other) is None and context_of(store, nosession) is None
    result = svc.save([{"content": "Call me Caro.", "kind": "profile"},
                       {"content": "Caroline takes the puppy to the bakery on Monday."}],
                      session_id="b").to_dict()
    profile, episodic = (e["id"] for e in result["saved"])
    assert context_of(store, profile) is None
    assert context_of(store, episodic) == REPLY  # the profile fact in between is skipped


def test_recall_finds_a_reply_through_its_context_words(svc):
    save(svc, ADOPT, REPLY, "The office closes at six.", session_id="s")
    found = [m for m in svc.recall("Which shelter did she adopt from?", "s").to_dict()["memories"]]
    assert {m["content"] for m in found[:2]} == {ADOPT, REPLY}
    [reply] = [m for m in found if m["content"] == REPLY]
    assert reply["scores"]["bm25"] is not None  # "shelter" and "adopt" are only in its context


def test_dedup_compares_own_vectors_not_mixed_ones(svc):
    save(svc, ADOPT, REPLY, session_id="s")
    again = svc.save([{"content": REPLY}], session_id="s").to_dict()
    [skipped] = again["skipped_duplicates"]
    assert skipped["similarity"] >= 0.979 and "saved" in again and again["saved"] == []


def test_switched_off_nothing_is_mixed(make, store):
    svc = make(save_context_minutes=0)
    first, second = save(svc, ADOPT, REPLY, session_id="s")
    assert store.contexts([first, second]) == {}
    [hit] = store.nearest(EMB.embed([REPLY])[0], svc.model_key, Scope("episodic", "s"), 1)
    assert hit.memory.id == second and abs(hit.score - 1.0) < 1e-6


def test_deleting_the_context_memory_re_embeds_its_dependant_from_its_own_text(make, store):
    svc = make()
    first, second = save(svc, ADOPT, REPLY, session_id="s")
    svc.delete(first)
    assert store.contexts([second]) == {}
    assert svc.reindexer.run_until_done() == 1
    [hit] = store.nearest(EMB.embed([REPLY])[0], svc.model_key, Scope("episodic", "s"), 1)
    assert hit.memory.id == second and abs(hit.score - 1.0) < 1e-6
    [left] = svc.recall("adopted from the shelter", "s").to_dict()["memories"]
    assert left["id"] == second and left["scores"]["bm25"] is None  # no context words left


def test_re_embedding_after_a_model_change_mixes_the_context_again(make, store):
    first, second = save(make(), ADOPT, REPLY, session_id="s")
    new_model = HashEmbedder(dimensions=32, key="other")
    svc = make(embedder=new_model)
    assert svc.reindexer.run_until_done() == 2
    own, ctx = new_model.embed([REPLY, ADOPT])
    [hit] = store.nearest(mix_context(own, ctx), svc.model_key, Scope("episodic", "s"), 1)
    assert hit.memory.id == second and abs(hit.score - 1.0) < 1e-6
    assert cosine(own, mix_context(own, ctx)) < 0.9999  # the mix really moved it


def test_a_single_save_reuses_the_previous_memorys_own_vector(make):
    embedder = Counting()
    svc = make(embedder=embedder)
    save(svc, ADOPT, session_id="s")
    save(svc, REPLY, session_id="s")
    assert embedder.texts == [ADOPT, REPLY]  # ADOPT's vector was kept, not made again
    fresh = make(embedder=embedder)  # another process: it embeds the stored text once
    save(fresh, WALK, session_id="s")
    assert embedder.texts[2:] == [WALK, REPLY]


def test_an_unrelated_previous_memory_is_not_context(svc, store):
    # Independent facts saved one after another (cosine of their own vectors under 0.2).
    first, second = save(svc, ADOPT, "Deploys are frozen from 20 December.", session_id="s")
    assert store.contexts([first, second]) == {}
    [hit] = store.nearest(EMB.embed(["Deploys are frozen from 20 December."])[0], svc.model_key,
                          Scope("episodic", "s"), 1)
    assert hit.memory.id == second and abs(hit.score - 1.0) < 1e-6  # nothing mixed in


def test_re_embedding_runs_each_text_once_when_contexts_share_the_batch(make):
    save(make(), ADOPT, REPLY, WALK, session_id="s")
    embedder = Counting(dimensions=32, key="other")
    svc = make(embedder=embedder)
    assert svc.reindexer.run_until_done() == 3
    assert sorted(embedder.texts) == sorted([ADOPT, REPLY, WALK])  # contexts reused, not re-run


def test_the_dense_share_of_the_context_is_a_setting() -> None:
    """save_context_dense_weight: 0 keeps each memory's own vector (its keyword context
    stays), another weight mixes that much in; the model key says which, so a change
    re-embeds."""
    from tinycontext import TinyContextConfig, build_service
    from tinycontext.testing import InMemoryStore, WordTokenizer

    keys = {}
    for weight in (0.2, 0.0, 0.5):
        store = InMemoryStore()
        service = build_service(TinyContextConfig(save_context_dense_weight=weight),
                                store=store, embedder=HashEmbedder(), tokenizer=WordTokenizer(),
                                background=False)
        [_, second] = save(service, ADOPT, REPLY, session_id="s")
        assert context_of(store, second) == ADOPT
        own, ctx = EMB.embed([REPLY, ADOPT])
        stored = own if weight == 0.0 else mix_context(own, ctx, weight)
        hit = store.nearest(stored, service.model_key, Scope("episodic", "s"), 1)[0]
        assert hit.memory.content == REPLY and abs(hit.score - 1.0) < 1e-6
        keys[weight] = service.model_key
        service.close()
    assert keys[0.2] == "hash-64+ctx1+tok1"  # the default's key, as before the setting
    assert len(set(keys.values())) == 3
