"""Store contract, part 1: add, find, sessions, keyword_search and nearest (ports/store.py)."""

from __future__ import annotations

from array import array
from dataclasses import replace

import pytest

from tests.contract.store_support import KEY, day, mem, mid, new, vec
from tests.fakes import HashEmbedder
from tinycontext.domain.text import keyword_groups, recall_terms, stemmed_terms
from tinycontext.ports.store import Scope, Store

EPI = Scope("episodic")


def contents(hits) -> list[str]:
    return [h.memory.content for h in hits]


def search(store: Store, query: str, scope: Scope = EPI, limit: int = 50) -> list[str]:
    return contents(store.keyword_search(keyword_groups(query), scope, limit))


def test_store_implements_the_port(store):
    assert isinstance(store, Store)


# -- add / find / session_exists ----------------------------------------------------------------
def test_add_then_find_by_id_and_ref(store):
    m = mem(1, "The project uses SQLite.", session="p")
    store.add([new(m)])
    assert store.find(m.id, is_ref=False) == [m]
    assert store.find(m.ref, is_ref=True) == [m]
    assert store.find(mid(2), is_ref=False) == [] and store.find("ffffffffffff", True) == []


def test_find_returns_every_memory_sharing_a_ref(store):
    a, b = mem(1, "first", prefix="abcdef012345"), mem(2, "second", prefix="abcdef012345")
    assert a.ref == b.ref != a.id
    store.add([new(a)])
    store.add([new(b)])
    assert store.find("abcdef012345", is_ref=True) == [a, b]
    assert store.find(b.id, is_ref=False) == [b]


def test_add_without_vector_stores_no_model(store):
    store.add([new(mem(1, "no vector yet"), vector=False)])
    [found] = store.find(mid(1), is_ref=False)
    assert found.embedding_model is None and found.content == "no vector yet"


def test_add_is_atomic_when_an_id_exists(store):
    store.add([new(mem(1, "existing"))])
    with pytest.raises(Exception):  # noqa: B017 - the port names no exception type
        store.add([new(mem(2, "fresh")), new(mem(1, "clash"))])
    assert store.find(mid(2), is_ref=False) == []
    assert [m.content for m in store.find(mid(1), is_ref=False)] == ["existing"]


def test_add_is_atomic_on_a_duplicate_within_the_batch(store):
    with pytest.raises(Exception):  # noqa: B017 - the port names no exception type
        store.add([new(mem(3, "fresh")), new(mem(1, "one")), new(mem(1, "again"))])
    assert store.find(mid(3), is_ref=False) == [] and store.find(mid(1), is_ref=False) == []


def test_sessions_are_recorded_by_add(store):
    assert not store.session_exists("p")
    store.add([new(mem(1, "scoped", session="p")), new(mem(2, "global"))])
    store.add([])
    assert store.session_exists("p")
    assert not store.session_exists("q") and not store.session_exists("")


# -- keyword_search ------------------------------------------------------------------------------
@pytest.fixture
def corpus(store):
    rows = [
        mem(1, "apple pie recipe", created=day(1)),
        mem(2, "banana split dessert", created=day(2)),
        mem(3, "cherry tart and apple", created=day(3), session="a"),
        mem(4, "we flew to new york", created=day(4), session="b"),
        mem(5, "york is not new", created=day(5)),
        mem(6, "apple profile fact", kind="profile", created=day(6)),
    ]
    store.add([new(m) for m in rows])
    return store


def test_keyword_search_any_group_matches(corpus):
    assert set(search(corpus, "apple banana")) == {"apple pie recipe", "banana split dessert",
                                                   "cherry tart and apple"}
    assert search(corpus, "durian") == []
    assert corpus.keyword_search([], EPI, 10) == []


def test_keyword_search_groups_are_phrases(corpus):
    assert contents(corpus.keyword_search([["new", "york"]], EPI, 10)) == ["we flew to new york"]


def test_keyword_search_scope(corpus):
    assert search(corpus, "apple", Scope("profile")) == ["apple profile fact"]
    assert search(corpus, "apple", Scope("episodic", "a")) == ["cherry tart and apple"]
    assert search(corpus, "apple", Scope("episodic", "zzz")) == []
    assert search(corpus, "apple", Scope("episodic", None, exact=True)) == ["apple pie recipe"]
    assert set(search(corpus, "apple")) == {"apple pie recipe", "cherry tart and apple"}


def test_keyword_search_excludes_superseded(corpus):
    corpus.supersede(mid(1), new(mem(7, "apple crumble recipe", created=day(7))), day(7))
    assert set(search(corpus, "apple")) == {"apple crumble recipe", "cherry tart and apple"}


def test_keyword_search_limit_and_positive_scores(corpus):
    hits = corpus.keyword_search(keyword_groups("apple banana"), EPI, 2)
    assert len(hits) == 2 and all(h.score > 0 for h in hits)
    assert hits[0].score >= hits[1].score


def test_bm25_prefers_the_rare_term(store):
    store.add([new(mem(i, f"common filler{i} words here", created=day(i))) for i in range(1, 6)])
    store.add([new(mem(9, "common rare words here", created=day(1)))])
    hits = store.keyword_search([["common"], ["rare"]], EPI, 10)
    assert hits[0].memory.content == "common rare words here"
    assert len(hits) == 6 and hits[0].score > hits[1].score


def test_keyword_ideal_sums_the_idf_of_the_query_words(store):
    assert store.keyword_ideal([]) == 0.0
    store.add([new(mem(i, f"common filler{i} words here", created=day(i))) for i in range(1, 9)])
    store.add([new(mem(9, "common rare words here", created=day(1)))])
    common, rare = store.keyword_ideal([["common"]]), store.keyword_ideal([["rare"]])
    # A rarer word weighs more; the query's ideal is the sum over its words, stems included.
    assert 0.0 < common < rare
    assert store.keyword_ideal([["common"], ["rare"]]) == pytest.approx(common + rare)
    assert store.keyword_ideal([["rarely"]]) == pytest.approx(rare)
    # A memory holding the rare word once scores about the ideal of that word (more when it
    # is shorter than a typical memory, as here).
    [hit] = store.keyword_search([["rare"]], EPI, 10)
    assert rare / 2 <= hit.score <= 2 * rare


def test_keyword_rarity_is_each_stored_words_idf(store):
    assert store.keyword_rarity([]) == {}
    store.add([new(mem(i, f"common filler{i} words here", created=day(i))) for i in range(1, 9)])
    store.add([new(mem(9, "common rare words here", created=day(1)))])
    rarity = store.keyword_rarity(["common", "rare", "unseen"])
    # Words stored nowhere are left out; a rarer word weighs more, as in keyword_ideal.
    assert set(rarity) == {"common", "rare"}
    assert 0.0 < rarity["common"] < rarity["rare"]
    assert rarity["rare"] > store.keyword_ideal([["rare"]]) / 2


def test_indexed_words_are_the_stemmed_words_of_each_memory(store, store_kind):
    a = mem(1, "Orla rented a pottery studio in Kilkenny, beside the bakery.", created=day(1))
    b = mem(2, "Running shoes, running tracks", created=day(2))
    store.add([new(a), replace(new(b), context="studios and bakeries")])
    words = store.indexed_words([a.id, b.id, mid(9)])
    if store_kind == "postgres":
        # Its keyword index keeps tsvectors, not the words in order: recall stems instead.
        assert words == {}
        return
    # The memory's own words only (not its save-time context), folded and stemmed, in order;
    # an unknown id is left out.
    assert words == {a.id: stemmed_terms(a.content).split(), b.id: ["run", "shoe", "run",
                                                                    "track"]}
    assert words[a.id][:4] == ["orla", "rent", "a", "potteri"]
    assert store.indexed_words([]) == {}


def test_keyword_ties_newer_first_then_id(store):
    store.add([new(mem(2, "same words", created=day(1))), new(mem(1, "same words", created=day(1))),
               new(mem(3, "same words", created=day(2)))])
    hits = store.keyword_search([["same"]], EPI, 10)
    assert [h.memory.id for h in hits] == [mid(3), mid(1), mid(2)]


def test_keyword_search_non_ascii(store):
    store.add([new(mem(1, "我爱北京天安门")), new(mem(2, "I love 🍕 tonight")),
               new(mem(3, "Crème brûlée in São Paulo"))])
    assert search(store, "北京") == ["我爱北京天安门"]
    assert search(store, "京北") == []
    assert search(store, "🍕") == ["I love 🍕 tonight"]
    assert search(store, "brûlée") == ["Crème brûlée in São Paulo"]
    assert contents(store.keyword_search(recall_terms("Where is São Paulo?"), EPI, 5)) == [
        "Crème brûlée in São Paulo"]


def test_keyword_search_folds_diacritics(store):
    store.add([new(mem(1, "Café in Paris"))])
    assert search(store, "cafe") == ["Café in Paris"]


# -- nearest -------------------------------------------------------------------------------------
def cos(a: bytes, b: bytes) -> float:
    return sum(x * y for x, y in zip(array("f", a), array("f", b), strict=True))


def test_nearest_orders_by_cosine(store):
    texts = ["alpha beta gamma", "alpha beta delta", "alpha zeta eta", "omega psi chi"]
    store.add([new(mem(i, t)) for i, t in enumerate(texts, start=1)])
    query = vec("alpha beta gamma")
    hits = store.nearest(query, KEY, EPI, 10)
    expected = sorted(texts, key=lambda t: -cos(query, vec(t)))
    assert contents(hits) == expected and expected[0] == "alpha beta gamma"
    for h in hits:
        assert h.score == pytest.approx(cos(query, vec(h.memory.content)), abs=1e-5)
    assert contents(store.nearest(query, KEY, EPI, 2)) == expected[:2]


def test_nearest_scope_and_model_filter(store):
    other = HashEmbedder(key="other")
    store.add([new(mem(1, "shared words", session="a")), new(mem(2, "shared words")),
               new(mem(3, "shared words", kind="profile")), new(mem(4, "no vector"), vector=False),
               new(mem(5, "shared words", key="other"), embedder=other)])
    q = vec("shared words")
    assert {h.memory.id for h in store.nearest(q, KEY, EPI, 10)} == {mid(1), mid(2)}
    assert [h.memory.id for h in store.nearest(q, KEY, Scope("episodic", "a"), 10)] == [mid(1)]
    assert [h.memory.id for h in store.nearest(q, KEY, Scope("episodic", None, True), 10)] == [
        mid(2)]
    assert [h.memory.id for h in store.nearest(q, KEY, Scope("profile"), 10)] == [mid(3)]
    assert [h.memory.id for h in store.nearest(q, "other", EPI, 10)] == [mid(5)]
    assert store.nearest(q, "never-used-model", EPI, 10) == []


def test_nearest_excludes_superseded_and_breaks_ties_newer_first(store):
    store.add([new(mem(2, "tie text", created=day(1))), new(mem(1, "tie text", created=day(1))),
               new(mem(3, "tie text", created=day(2)))])
    hits = store.nearest(vec("tie text"), KEY, EPI, 10)
    assert [h.memory.id for h in hits] == [mid(3), mid(1), mid(2)]
    store.supersede(mid(3), new(mem(4, "tie text v2", created=day(3))), day(3))
    assert mid(3) not in {h.memory.id for h in store.nearest(vec("tie text"), KEY, EPI, 10)}


def test_nearest_with_dimensions_not_a_multiple_of_eight(store):
    odd = HashEmbedder(dimensions=12, key="odd")
    store.add([new(mem(1, "red green", key="odd"), embedder=odd),
               new(mem(2, "blue yellow", key="odd"), embedder=odd)])
    hits = store.nearest(vec("red green", odd), "odd", EPI, 5)
    assert hits[0].memory.id == mid(1) and hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_nearest_on_empty_store(store):
    assert store.nearest(vec("x"), KEY, EPI, 5) == []


def test_nearest_many_answers_as_nearest_does_for_each_vector(store):
    # 400 memories: the whole store and a session holding a sixth of it are both larger than
    # the candidates an in-memory index would rescore, so every search path is taken.
    store.add([new(mem(i + 1, f"memory number {i} about topic {i % 7} and thing {i % 11}",
                       session="b" if i % 6 == 0 else "a", created=day(1 + i % 9)))
               for i in range(400)])
    queries = [vec(q) for q in ("topic 3 and thing 2", "memory number 7", "nothing alike")]
    for scope in (EPI, Scope("episodic", "b"), Scope("episodic", "a")):
        many = store.nearest_many(queries, KEY, scope, 5)
        assert many == [store.nearest(q, KEY, scope, 5) for q in queries]
        assert all(len(hits) == 5 for hits in many)
    assert store.nearest_many([], KEY, EPI, 5) == []
    assert store.nearest_many(queries, "other-model", EPI, 5) == [[], [], []]
