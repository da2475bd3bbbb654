"""Store contract, part 3: stemmed recall keywords, save-time context, latest, contexts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.contract.store_support import KEY, day, listing, mem, mid, new, vec
from tinycontext.domain.text import recall_terms
from tinycontext.ports.store import NewMemory, Scope
from tinycontext.testing import InMemoryStore

EPI = Scope("episodic")


def recall(store, query: str, scope: Scope = EPI) -> list[tuple[str, float]]:
    hits = store.keyword_search(recall_terms(query), scope, 50)
    return [(h.memory.content, h.score) for h in hits]


def listed(store, search: str) -> list[str]:
    page = store.browse(listing(search=search))
    return [h.memory.content for h in page.memories]


def with_context(memory, context) -> NewMemory:
    return replace(new(memory), context_id=context.id, context=context.content)


def test_recall_keywords_match_by_stem(store):
    store.add([new(mem(1, "We went hiking in the Alps with two friends.")),
               new(mem(2, "Her paintings sold at the fair."))])
    assert [c for c, _ in recall(store, "Where did they hike?")] == [
        "We went hiking in the Alps with two friends."]
    assert [c for c, _ in recall(store, "Which painting sold?")] == [
        "Her paintings sold at the fair."]
    # Accents fold before stemming, on both sides.
    store.add([new(mem(3, "A naïve approach to caching."))])
    assert [c for c, _ in recall(store, "naive approaches")] == ["A naïve approach to caching."]


def test_list_search_keeps_the_words_as_written(store):
    store.add([new(mem(1, "We went hiking in the Alps."))])
    assert listed(store, "hike") == []
    assert listed(store, "hik") == ["We went hiking in the Alps."]  # last word: a prefix


def test_context_words_find_a_memory_below_its_own_words(store):
    first = mem(1, "Caroline adopted a puppy from the shelter.", created=day(1, 9))
    reply = mem(2, "His name is Max and he loves the beach.", created=day(1, 9))
    store.add([new(first), with_context(reply, first)])
    hits = recall(store, "What did Caroline adopt?")
    assert [c for c, _ in hits] == [first.content, reply.content]
    assert hits[0][1] > hits[1][1] > 0
    # List search never matches through context.
    assert listed(store, "adopted") == [first.content]


def test_latest_is_the_newest_live_memory_of_the_exact_scope(store):
    assert store.latest(Scope("episodic", "s", exact=True)) is None
    a = mem(1, "first in s", session="s", created=day(1))
    b = mem(2, "second in s", session="s", created=day(2))
    c = mem(3, "no session", created=day(3))
    d = mem(4, "a profile fact", kind="profile", created=day(4))
    store.add([new(a), new(b), new(c), new(d)])
    assert store.latest(Scope("episodic", "s", exact=True)) == b
    assert store.latest(Scope("episodic", None, exact=True)) == c
    assert store.latest(Scope("profile", None, exact=True)) == d
    e = mem(5, "second in s, corrected", session="s", created=day(5))
    store.supersede(b.id, new(e), day(5))
    assert store.latest(Scope("episodic", "s", exact=True)).id == e.id


def test_contexts_name_each_memorys_context_text(store):
    first, second, third = (mem(n, f"fact number {n}", created=day(1)) for n in (1, 2, 3))
    store.add([new(first), with_context(second, first), with_context(third, second)])
    assert store.contexts([first.id, second.id, third.id, mid(9)]) == {
        second.id: (first.id, first.content), third.id: (second.id, second.content)}
    assert store.contexts([]) == {}


def test_deleting_a_context_memory_leaves_no_trace_in_its_dependants(store):
    first = mem(1, "The launch code word is heliotrope.", created=day(1))
    reply = mem(2, "Noted, I will keep it safe.", created=day(1))
    store.add([new(first), with_context(reply, first)])
    assert [c for c, _ in recall(store, "heliotrope")] == [first.content, reply.content]
    store.delete(first.id, None, None)
    assert recall(store, "heliotrope") == []
    assert store.contexts([reply.id]) == {}
    # Its vector mixed the deleted text in: dropped, to be made again from its own text.
    assert [m.id for m in store.pending_embeddings(KEY, 10)] == [reply.id]
    assert store.nearest(vec(reply.content), KEY, EPI, 5) == []
    store.set_embeddings([(reply.id, vec(reply.content))], KEY)
    [hit] = store.nearest(vec(reply.content), KEY, EPI, 5)
    assert hit.memory.id == reply.id


def test_token_bits_name_each_memorys_own_and_its_contexts(store):
    first, second, plain = (mem(n, f"fact {n}", created=day(1)) for n in (1, 2, 3))
    store.add([replace(new(first), tokens=b"\x01" * 48),
               replace(with_context(second, first), tokens=b"\x02" * 96),
               new(plain)])  # saved without token bits
    assert store.token_bits([first.id, second.id, plain.id, mid(9)]) == {
        first.id: (b"\x01" * 48, None), second.id: (b"\x02" * 96, b"\x01" * 48)}
    assert store.token_bits([]) == {}
    store.set_embeddings([(plain.id, vec(plain.content))], KEY, {plain.id: b"\x03" * 48})
    assert store.token_bits([plain.id]) == {plain.id: (b"\x03" * 48, None)}
    store.delete(first.id, None, None)
    assert store.token_bits([first.id, second.id]) == {second.id: (b"\x02" * 96, None)}


def test_similarities_are_the_cosines_of_stored_vectors_of_that_model(store):
    from tests.fakes import HashEmbedder

    other = HashEmbedder(key="other")
    a, b = mem(1, "red green blue"), mem(2, "green blue yellow")
    c = mem(3, "red green blue", key="other")
    store.add([new(a), new(b), new(c, embedder=other), new(mem(4, "no vector"), vector=False)])
    query = vec("red green blue")
    got = store.similarities(query, KEY, [a.id, b.id, c.id, mid(4), mid(9)])
    assert set(got) == {a.id, b.id}  # other model, no vector, unknown: left out
    assert abs(got[a.id] - 1.0) < 1e-6
    [hit_b] = [h for h in store.nearest(query, KEY, EPI, 10) if h.memory.id == b.id]
    assert abs(got[b.id] - hit_b.score) < 1e-6
    assert store.similarities(query, KEY, []) == {}


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def weighted(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[float], Any]]:
    """Stores of each kind over the same rows, opened with a given keyword context weight
    (the recall_keyword_context_weight setting)."""
    opened: list[Any] = []

    def make(weight: float) -> Any:
        if request.param == "memory":
            made: Any = InMemoryStore(keyword_context_weight=weight)
        elif request.param == "sqlite":
            from tinycontext.adapters.sqlite.store import SqliteStore

            made = SqliteStore(tmp_path / f"w{len(opened)}.db", keyword_context_weight=weight)
        else:
            from tests.pg_fixture import fresh_store, shared_database
            from tinycontext.adapters.postgres.store import PostgresStore

            fresh_store().close()  # emptied
            made = PostgresStore(shared_database(), keyword_context_weight=weight)
        opened.append(made)
        return made

    yield make
    for made in opened:
        made.close()


def test_the_context_weight_sets_how_much_context_words_count(weighted):
    first = mem(1, "Caroline adopted a puppy from the shelter.", created=day(1, 9))
    reply = mem(2, "His name is Max and he loves the beach.", created=day(1, 9))
    scores = {}
    for weight in (0.0, 0.3, 1.0):
        store = weighted(weight)
        store.add([new(first), with_context(reply, first)])
        hits = dict(recall(store, "What did Caroline adopt?"))
        assert hits[first.content] > 0
        scores[weight] = hits.get(reply.content, 0.0)
    assert scores[0.0] == 0.0 < scores[0.3] < scores[1.0]
