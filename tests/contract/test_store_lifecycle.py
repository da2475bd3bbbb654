"""Store contract, part 2: browse, recall marks, supersede, delete, pending embeddings."""

from __future__ import annotations

import pytest

from tests.contract.store_support import KEY, day, listing, mem, mid, new, vec
from tests.fakes import HashEmbedder
from tinycontext.domain.errors import MemoryAlreadySupersededError
from tinycontext.ports.store import Scope

EPI = Scope("episodic")


def ids(page_or_hits) -> list[str]:
    hits = page_or_hits.memories if hasattr(page_or_hits, "memories") else page_or_hits
    return [h.memory.id for h in hits]


# -- browse --------------------------------------------------------------------------------------
@pytest.fixture
def shelf(store):
    store.add([
        new(mem(1, "python tips for beginners", created=day(1, 9))),
        new(mem(2, "rust and python interop", created=day(2, 9), session="a")),
        new(mem(3, "gardening in spring", created=day(3, 9))),
        new(mem(4, "call me Ann", kind="profile", created=day(4, 9))),
        new(mem(5, "pythonic code style python python", created=day(5, 9))),
    ])
    store.add([new(mem(6, "same second later insert", created=day(5, 9)))])
    return store


def test_browse_recent_with_total_and_paging(shelf):
    page = shelf.browse(listing())
    assert ids(page) == [mid(6), mid(5), mid(4), mid(3), mid(2), mid(1)]
    assert page.total_count == 6 and all(h.score == 0.0 for h in page.memories)
    page2 = shelf.browse(listing(limit=2, offset=2))
    assert ids(page2) == [mid(4), mid(3)] and page2.total_count == 6
    assert ids(shelf.browse(listing(limit=5, offset=5))) == [mid(1)]
    assert shelf.browse(listing(offset=50)).memories == []


def test_browse_filters(shelf):
    assert ids(shelf.browse(listing(kind="profile"))) == [mid(4)]
    assert ids(shelf.browse(listing(session_id="a"))) == [mid(2)]
    page = shelf.browse(listing(since="2026-07-02", until="2026-07-04"))
    assert ids(page) == [mid(4), mid(3), mid(2)] and page.total_count == 3
    assert ids(shelf.browse(listing(since="2026-07-02T09:00:00Z", until="2026-07-02T09:00:00Z"))) \
        == [mid(2)]
    assert ids(shelf.browse(listing(since="2026-07-02T09:00:00.5Z"))) == [
        mid(6), mid(5), mid(4), mid(3)]


def test_browse_search_all_words_each_a_prefix(shelf):
    page = shelf.browse(listing(search="pyth"))
    assert set(ids(page)) == {mid(1), mid(2), mid(5)} and page.total_count == 3
    assert ids(shelf.browse(listing(search="python rus"))) == [mid(2)]
    assert ids(shelf.browse(listing(search="pyth rust"))) == [mid(2)]  # every word a prefix
    assert ids(shelf.browse(listing(search="rus pyth"))) == [mid(2)]
    assert ids(shelf.browse(listing(search="pyth gard"))) == []  # every word still required
    shelf.add([new(mem(7, "PostgreSQL replica latency spiked after the upgrade", created=day(6)))])
    assert ids(shelf.browse(listing(search="postgres lat"))) == [mid(7)]
    assert ids(shelf.browse(listing(search="python", kind="profile"))) == []
    assert ids(shelf.browse(listing(search="python", sort="recent"))) == [mid(5), mid(2), mid(1)]


def test_browse_relevance_best_match_first(shelf):
    page = shelf.browse(listing(search="python"))
    assert ids(page)[0] == mid(5) and all(h.score > 0 for h in page.memories)


def test_browse_scores_a_prefix_word_by_bm25(shelf):
    shelf.add([new(mem(8, "pythons pythons pythons", created=day(1, 8)))])
    page = shelf.browse(listing(search="pyth"))
    assert all(h.score > 0 for h in page.memories)
    assert ids(page)[0] == mid(8)  # oldest, but the densest prefix match


def test_browse_stale_order(shelf):
    shelf.mark_recalled([mid(3), mid(5)], day(10))
    shelf.mark_recalled([mid(1)], day(11))
    shelf.mark_recalled([mid(1)], day(12))
    page = shelf.browse(listing(sort="stale"))
    # never recalled, oldest first; then recalled once, least recently; same time -> oldest
    assert ids(page) == [mid(2), mid(4), mid(6), mid(3), mid(5), mid(1)]


def test_browse_most_recalled_is_stale_reversed_and_count_can_be_skipped(shelf):
    from dataclasses import replace

    shelf.mark_recalled([mid(3), mid(5)], day(10))
    shelf.mark_recalled([mid(1)], day(11))
    shelf.mark_recalled([mid(1)], day(12))
    stale = ids(shelf.browse(listing(sort="stale")))
    most = shelf.browse(replace(listing(sort="stale"), sort="recalled"))
    assert ids(most) == list(reversed(stale)) and most.total_count == 6
    second = shelf.browse(replace(listing(sort="stale", limit=2, offset=1), sort="recalled"))
    assert ids(second) == list(reversed(stale))[1:3]
    uncounted = shelf.browse(replace(listing(limit=2), count=False))
    assert ids(uncounted) == [mid(6), mid(5)] and uncounted.total_count == -1
    only_count = shelf.browse(replace(listing(), limit=0))
    assert only_count.memories == [] and only_count.total_count == 6


def test_browse_oldest_is_recent_reversed(shelf):
    from dataclasses import replace

    recent = ids(shelf.browse(listing()))
    oldest = shelf.browse(replace(listing(), sort="oldest"))
    assert ids(oldest) == list(reversed(recent)) and oldest.total_count == 6
    first = shelf.browse(replace(listing(limit=1), sort="oldest", count=False))
    assert ids(first) == [recent[-1]]


def test_session_counts_live_memories_largest_first(shelf, store_kind):
    # Every store of ours counts (the port's default, [], is for stores written elsewhere).
    shelf.add([new(mem(7, "another in a", created=day(6), session="a")),
               new(mem(8, "one in b", created=day(6), session="b"))])
    shelf.supersede(mid(8), new(mem(9, "one in b, revised", created=day(7), session="b")),
                    day(7))
    shelf.add([new(mem(10, "second in b", created=day(8), session="b")),
               new(mem(11, "one in c", created=day(8), session="c"))])
    assert shelf.session_counts(10) == [("a", 2), ("b", 2), ("c", 1)]
    assert shelf.session_counts(1) == [("a", 2)]


def test_browse_filters_by_recalled(shelf):
    from dataclasses import replace

    shelf.mark_recalled([mid(3), mid(5)], day(10))
    never = shelf.browse(replace(listing(), recalled=False))
    assert ids(never) == [mid(6), mid(4), mid(2), mid(1)] and never.total_count == 4
    once = shelf.browse(replace(listing(kind="episodic", sort="stale"), recalled=True))
    assert ids(once) == [mid(3), mid(5)] and once.total_count == 2
    assert shelf.browse(replace(listing(limit=1), recalled=False)).total_count == 4


def test_browse_hides_superseded(shelf):
    shelf.supersede(mid(3), new(mem(7, "gardening in autumn", created=day(7))), day(7))
    page = shelf.browse(listing())
    assert mid(3) not in ids(page) and mid(7) in ids(page) and page.total_count == 6


def test_browse_superseded_only(shelf):
    from dataclasses import replace

    shelf.supersede(mid(3), new(mem(7, "gardening in autumn", created=day(7))), day(7))
    shelf.supersede(mid(1), new(mem(8, "python tips, revised", created=day(8))), day(8))
    page = shelf.browse(replace(listing(), superseded=True))
    assert ids(page) == [mid(3), mid(1)] and page.total_count == 2
    found = shelf.browse(replace(listing(search="garden"), superseded=True))
    assert ids(found) == [mid(3)]


# -- mark_recalled / supersede -------------------------------------------------------------------
def test_mark_recalled(store):
    store.add([new(mem(1, "a")), new(mem(2, "b"))])
    store.mark_recalled([mid(1)], day(9))
    store.mark_recalled([mid(1)], day(10))
    store.mark_recalled([], day(11))
    [one] = store.find(mid(1), False)
    [two] = store.find(mid(2), False)
    assert (one.recall_count, one.last_recalled_at) == (2, day(10))
    assert (two.recall_count, two.last_recalled_at) == (0, None)


def test_supersede(store):
    store.add([new(mem(1, "deadline friday", session="s"))])
    v2 = mem(2, "deadline monday", session="s", created=day(2), supersedes=mid(1))
    store.supersede(mid(1), new(v2), day(2))
    [old] = store.find(mid(1), False)
    assert (old.superseded_by, old.superseded_at, old.live) == (mid(2), day(2), False)
    assert store.find(mid(2), False) == [v2]
    with pytest.raises(MemoryAlreadySupersededError):
        store.supersede(mid(1), new(mem(3, "deadline tuesday", created=day(3))), day(3))
    assert store.find(mid(3), False) == []  # the failed supersede inserted nothing
    assert store.find(mid(1), False)[0].superseded_by == mid(2)


# -- delete --------------------------------------------------------------------------------------
def chain(store, n: int) -> None:
    """1 <- 2 <- ... <- n: each version replaced the previous one."""
    store.add([new(mem(1, "plan version 1", created=day(1)))])
    for i in range(2, n + 1):
        store.supersede(mid(i - 1), new(mem(i, f"plan version {i}", created=day(i),
                                            supersedes=mid(i - 1))), day(i))


def test_delete_removes_everywhere(store):
    store.add([new(mem(1, "ephemeral note", session="s")), new(mem(2, "kept note"))])
    store.delete(mid(1), None, None)
    assert store.find(mid(1), False) == [] and store.find(mem(1, "x").ref, True) == []
    assert ids(store.keyword_search([["ephemeral"]], EPI, 5)) == []
    assert mid(1) not in ids(store.nearest(vec("ephemeral note"), KEY, EPI, 5))
    assert ids(store.browse(listing())) == [mid(2)]
    store.delete(mid(1), None, None)  # already gone: no error


def test_delete_live_head_restores_predecessor(store):
    chain(store, 2)
    store.delete(mid(2), mid(1), None)
    [back] = store.find(mid(1), False)
    assert back.live and back.superseded_at is None
    assert ids(store.keyword_search([["plan"]], EPI, 5)) == [mid(1)]
    assert ids(store.nearest(vec("plan version 1"), KEY, EPI, 5)) == [mid(1)]
    assert ids(store.browse(listing())) == [mid(1)]


def test_delete_middle_relinks(store):
    chain(store, 3)
    store.delete(mid(2), mid(1), mid(3))
    [first] = store.find(mid(1), False)
    [last] = store.find(mid(3), False)
    assert first.superseded_by == mid(3) and not first.live
    assert last.supersedes == mid(1) and last.live
    assert ids(store.browse(listing())) == [mid(3)]
    assert ids(store.nearest(vec("plan version 1"), KEY, EPI, 5)) == [mid(3)]


# -- pending embeddings --------------------------------------------------------------------------
def test_pending_embeddings_and_set_embeddings(store):
    store.add([new(mem(1, "first without vector"), vector=False),
               new(mem(2, "second with vector")),
               new(mem(3, "third without vector"), vector=False)])
    assert store.count_pending_embeddings(KEY) == 2
    assert ids_of(store.pending_embeddings(KEY, 10)) == [mid(1), mid(3)]
    assert ids_of(store.pending_embeddings(KEY, 1)) == [mid(1)]
    assert store.count_pending_embeddings("new-model") == 3
    assert ids(store.nearest(vec("first without vector"), KEY, EPI, 5)) == [mid(2)]

    store.set_embeddings([(mid(1), vec("first without vector")), (mid(99), vec("gone"))], KEY)
    assert store.count_pending_embeddings(KEY) == 1
    assert store.find(mid(1), False)[0].embedding_model == KEY
    assert ids(store.nearest(vec("first without vector"), KEY, EPI, 5))[0] == mid(1)


def test_model_change_makes_everything_pending_including_superseded(store):
    chain(store, 2)
    other = HashEmbedder(dimensions=32, key="other")
    assert store.count_pending_embeddings("other") == 2
    pending = store.pending_embeddings("other", 10)
    assert ids_of(pending) == [mid(1), mid(2)]
    store.set_embeddings([(m.id, other.embed([m.content])[0]) for m in pending], "other")
    assert store.count_pending_embeddings("other") == 0
    q = other.embed(["plan version 1"])[0]
    assert ids(store.nearest(q, "other", EPI, 5)) == [mid(2)]  # superseded stays hidden
    store.delete(mid(2), mid(1), None)
    assert ids(store.nearest(q, "other", EPI, 5)) == [mid(1)]  # restored with its new vector
    assert store.nearest(vec("plan version 1"), KEY, EPI, 5) == []


def test_close_then_use_again(store):
    store.add([new(mem(1, "survives close"))])
    store.close()
    assert [m.content for m in store.find(mid(1), False)] == ["survives close"]


def ids_of(memories) -> list[str]:
    return [m.id for m in memories]
