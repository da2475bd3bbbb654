"""Store contract, filters: tags, metadata, time windows and "as of" are applied before the
top results are chosen, the same way in the fake, SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.contract.store_support import day, listing, mem, mid, new, vec
from tests.fakes import HashEmbedder
from tinycontext.app.vectors import cosine
from tinycontext.domain.filters import build_filter
from tinycontext.domain.labels import MemoryFilter
from tinycontext.ports.store import Scope

KEY = HashEmbedder().model_key


def scope(**kw) -> Scope:
    return Scope("episodic", filters=build_filter(**kw))


def ids(hits) -> list[str]:
    hits = hits.memories if hasattr(hits, "memories") else hits
    return [h.memory.id for h in hits]


@pytest.fixture
def tagged(store):
    store.add([
        new(mem(1, "billing runs on postgres", created=day(1), tags=("billing", "db"),
                metadata=(("project", "atlas"), ("priority", 2)))),
        new(mem(2, "billing invoices go out monthly", created=day(2), tags=("billing",),
                metadata=(("project", "zeus"), ("urgent", True)))),
        new(mem(3, "the database is postgres 16", created=day(3), tags=("db",),
                metadata=(("priority", 2.0),))),
        new(mem(4, "lunch is at noon", created=day(4))),
    ])
    return store


def test_tags_and_metadata_round_trip(tagged):
    [found] = tagged.find(mid(1), is_ref=False)
    assert found.tags == ("billing", "db")
    assert dict(found.metadata) == {"project": "atlas", "priority": 2}
    [page_hit] = [h for h in tagged.browse(listing()).memories if h.memory.id == mid(2)]
    assert dict(page_hit.memory.metadata) == {"project": "zeus", "urgent": True}


@pytest.mark.parametrize(("kw", "expected"), [
    ({"tags": ["billing"]}, [2, 1]),
    ({"tags": ["billing", "db"]}, [1]),
    ({"tags": ["BILLING "]}, [2, 1]),  # normalised like a saved tag
    ({"metadata": {"project": "atlas"}}, [1]),
    ({"metadata": {"priority": 2}}, [3, 1]),  # 2 and 2.0 are one number
    ({"metadata": {"priority": "2"}}, []),  # a string is not a number
    ({"metadata": {"urgent": 1}}, []),  # true is not 1
    ({"metadata": {"urgent": True}}, [2]),
    ({"metadata": {"nobody-has-this": "x"}}, []),
    ({"tags": ["db"], "metadata": {"priority": 2}}, [3, 1]),
    ({"tags": ["missing"]}, []),
])
def test_browse_filters(tagged, kw, expected):
    query = replace(listing(), filters=build_filter(**kw))
    page = tagged.browse(query)
    assert ids(page) == [mid(n) for n in expected]
    assert page.total_count == len(expected)


def test_keyword_search_is_filtered_before_the_limit(tagged):
    assert ids(tagged.keyword_search([["postgres"]], scope(tags=["billing"]), 10)) == [mid(1)]
    assert ids(tagged.keyword_search([["billing"]], scope(metadata={"project": "zeus"}), 1)) \
        == [mid(2)]
    assert ids(tagged.keyword_search([["postgres"]], scope(since="2026-07-02"), 10)) == [mid(3)]
    assert ids(tagged.keyword_search([["postgres"]], scope(until="2026-07-01"), 10)) == [mid(1)]


def test_nearest_is_filtered_before_the_limit(tagged):
    near = tagged.nearest(vec("billing runs on postgres"), KEY, scope(tags=["db"]), 1)
    assert ids(near) == [mid(1)]
    near = tagged.nearest(vec("billing runs on postgres"), KEY, scope(since="2026-07-02"), 2)
    assert set(ids(near)) <= {mid(2), mid(3), mid(4)} and len(near) == 2


def test_a_rare_tag_gets_its_best_top_k(store):
    """300 memories, 5 carry the tag and none of them is near the query: a filter applied
    after an unfiltered top list would return nothing."""
    items = [new(mem(n, f"note {n} about the weather forecast today", created=day(1)))
             for n in range(1, 296)]
    items += [new(mem(n, f"rare topic {n} zebra migration", created=day(1), tags=("rare",)))
              for n in range(296, 301)]
    store.add(items)
    query = vec("note about the weather forecast")
    near = store.nearest(query, KEY, scope(tags=["rare"]), 3)
    rare = sorted(range(296, 301), key=lambda n: -cosine(
        query, vec(f"rare topic {n} zebra migration")))
    assert ids(near) == [mid(n) for n in rare[:3]]
    hits = store.keyword_search([["zebra"]], scope(tags=["rare"]), 10)
    assert len(hits) == 5


@pytest.fixture
def versions(store):
    """Memory 1 (day 1) replaced by 2 on day 3, which is replaced by 3 on day 5; memory 4
    (day 2) stays."""
    store.add([new(mem(1, "the office is in berlin", created=day(1), tags=("office",)))])
    store.add([new(mem(4, "the team has five people", created=day(2)))])
    store.supersede(mid(1), new(mem(2, "the office is in paris", created=day(3),
                                    tags=("office",), supersedes=mid(1))), day(3))
    store.supersede(mid(2), new(mem(3, "the office is in rome", created=day(5),
                                    tags=("office", "moved"), supersedes=mid(2))), day(5))
    return store


@pytest.mark.parametrize(("moment", "expected"), [
    ("2026-06-30", []),  # before the first memory: nothing, not an error
    ("2026-07-01T12:00:00Z", [1]),
    ("2026-07-02T12:00:00Z", [4, 1]),
    ("2026-07-03T00:00:00Z", [2, 4]),  # replaced at that second: the new version
    ("2026-07-04", [2, 4]),
    ("2026-07-05T00:00:00Z", [3, 4]),
    ("2026-08-01", [3, 4]),
])
def test_as_of_sees_the_versions_live_then(versions, moment, expected):
    filters = build_filter(as_of=moment)
    page = versions.browse(replace(listing(), filters=filters))
    assert ids(page) == [mid(n) for n in expected]
    office = {1, 2, 3} & set(expected)
    hits = versions.keyword_search([["office"]], Scope("episodic", filters=filters), 10)
    assert ids(hits) == [mid(n) for n in office]
    near = versions.nearest(vec("the office is in"), KEY, Scope("episodic", filters=filters), 10)
    assert sorted(ids(near)) == sorted(mid(n) for n in expected)


def test_as_of_with_tags(versions):
    filters = build_filter(tags=["moved"], as_of="2026-07-04")
    assert ids(versions.browse(replace(listing(), filters=filters))) == []
    filters = build_filter(tags=["office"], as_of="2026-07-04")
    assert ids(versions.browse(replace(listing(), filters=filters))) == [mid(2)]


def test_delete_removes_the_labels(tagged):
    tagged.delete(mid(1), None, None)
    query = replace(listing(), filters=MemoryFilter(tags=("db",)))
    assert ids(tagged.browse(query)) == [mid(3)]
    assert ids(tagged.nearest(vec("billing runs on postgres"), KEY,
                              Scope("episodic", filters=MemoryFilter(tags=("db",))), 5)) \
        == [mid(3)]
