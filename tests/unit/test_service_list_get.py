"""list_memories and get_memory over the fakes: filters, sorts, search, paging, previews."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.unit.support import save
from tinycontext.domain.errors import (
    EmptyMemoryError,
    InvalidMemoryKindError,
    InvalidRequestError,
    InvalidSortError,
    MemoryNotFoundError,
    RecallBudgetError,
)


def contents(page):
    return [m["content"] for m in page["memories"]]


@pytest.fixture
def dated(svc, clock):
    """Three memories on 29, 30 and 31 July 2026 at 12:00 UTC, plus a profile on the 31st."""
    days = ((29, "alpha on the 29th"), (30, "bravo on the 30th"), (31, "charlie on the 31st"))
    for day, text in days:
        clock.current = datetime(2026, 7, day, 12, 0, tzinfo=UTC)
        save(svc, text)
    clock.current = datetime(2026, 7, 31, 13, 0, tzinfo=UTC)
    save(svc, "Call the user Ann.", kind="profile")
    return svc


def test_list_defaults_newest_first_with_every_field(dated):
    page = dated.list_page().to_dict()
    assert contents(page) == ["Call the user Ann.", "charlie on the 31st", "bravo on the 30th",
                              "alpha on the 29th"]
    assert (page["total_count"], page["returned_count"], page["has_more"]) == (4, 4, False)
    assert (page["limit"], page["offset"], page["sort"]) == (20, 0, "recent")
    assert page["current_time"] == "2026-07-31T13:00:00Z"
    entry = page["memories"][1]
    assert set(entry) == {"rank", "id", "ref", "session_id", "kind", "content", "preview_truncated",
                          "content_tokens", "created_at", "recall_count", "last_recalled_at"}
    assert (entry["rank"], entry["kind"], entry["created_at"]) == (2, "episodic",
                                                                   "2026-07-31T12:00:00Z")


def test_kind_filter(dated):
    assert contents(dated.list_page(kind="profile").to_dict()) == ["Call the user Ann."]
    assert len(dated.list_page(kind="episodic").to_dict()["memories"]) == 3
    with pytest.raises(InvalidMemoryKindError):
        dated.list_page(kind="semantic")


@pytest.mark.parametrize(
    ("since", "until", "expected"),
    [
        ("2026-07-30", None, ["Call the user Ann.", "charlie on the 31st", "bravo on the 30th"]),
        (None, "2026-07-30", ["bravo on the 30th", "alpha on the 29th"]),  # until covers the day
        ("2026-07-30", "2026-07-30", ["bravo on the 30th"]),
        ("2026-07-30T12:00:00Z", "2026-07-31T12:00:00Z",
         ["charlie on the 31st", "bravo on the 30th"]),
        ("2026-07-30T12:00:01Z", None, ["Call the user Ann.", "charlie on the 31st"]),
        ("2026-07-30T14:00:00+02:00", "2026-07-30T14:00:00+02:00", ["bravo on the 30th"]),
        ("2026-08-01", None, []),
    ],
)
def test_since_until(dated, since, until, expected):
    assert contents(dated.list_page(since=since, until=until).to_dict()) == expected


def test_stale_sort(svc, clock):
    for text in ("alpha one", "bravo two", "charlie three", "delta four"):
        save(svc, text)
        clock.advance(60)
    svc.recall("charlie three", top_k=1)
    clock.advance(60)
    svc.recall("alpha one", top_k=1)
    clock.advance(60)
    svc.recall("charlie three", top_k=1)
    svc.recall("delta four", top_k=1)
    # never recalled first; then fewer recalls; then least recently recalled; then oldest
    page = svc.list_page(sort="stale").to_dict()
    assert contents(page) == ["bravo two", "alpha one", "delta four", "charlie three"]
    assert [m["recall_count"] for m in page["memories"]] == [0, 1, 1, 2]


def test_search_all_words_each_a_prefix_and_relevance_default(svc, clock):
    for text in ("I write Python every day", "Python and Rust together", "Rust only here",
                 "pythons are snakes"):
        save(svc, text)
        clock.advance(1)
    page = svc.list_page(search="pyth").to_dict()
    assert page["sort"] == "relevance"
    assert set(contents(page)) == {"I write Python every day", "Python and Rust together",
                                   "pythons are snakes"}
    assert contents(svc.list_page(search="rust pyth").to_dict()) == ["Python and Rust together"]
    assert contents(svc.list_page(search="python rus").to_dict()) == ["Python and Rust together"]
    assert contents(svc.list_page(search="rus", sort="recent").to_dict()) == [
        "Rust only here", "Python and Rust together"]
    # every word must appear, each as a prefix (as people expect from a search box)
    assert contents(svc.list_page(search="pyth rust").to_dict()) == ["Python and Rust together"]
    assert contents(svc.list_page(search="pyth snak").to_dict()) == ["pythons are snakes"]
    assert svc.list_page(search="pyth only").to_dict()["total_count"] == 0


def test_search_relevance_prefers_the_better_match(svc, clock):
    save(svc, "kiwi kiwi kiwi")
    clock.advance(1)
    save(svc, "kiwi and many other fruits like apples pears plums and grapes")
    assert contents(svc.list_page(search="kiwi").to_dict())[0] == "kiwi kiwi kiwi"


def test_paging(svc, clock):
    for i in range(5):
        save(svc, f"fact number {i}")
        clock.advance(1)
    first = svc.list_page(limit=2).to_dict()
    assert contents(first) == ["fact number 4", "fact number 3"]
    assert (first["total_count"], first["returned_count"], first["has_more"]) == (5, 2, True)
    middle = svc.list_page(limit=2, offset=2).to_dict()
    assert [m["rank"] for m in middle["memories"]] == [3, 4] and middle["has_more"]
    last = svc.list_page(limit=2, offset=4).to_dict()
    assert contents(last) == ["fact number 0"] and not last["has_more"]
    beyond = svc.list_page(limit=2, offset=10).to_dict()
    assert beyond["memories"] == [] and beyond["total_count"] == 5 and not beyond["has_more"]
    assert svc.list_page(limit=500).to_dict()["limit"] == 200


def test_preview_in_list_and_full_text_in_get(svc):
    text = "abcd " * 60
    [m] = save(svc, text)
    [entry] = svc.list_page().to_dict()["memories"]
    assert entry["preview_truncated"] is True and entry["content"].endswith("…")
    assert len(entry["content"]) <= 201
    assert svc.detail(m["id"]).to_dict()["content"] == text.strip()


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"limit": 0}, RecallBudgetError), ({"offset": -1}, RecallBudgetError),
        ({"limit": True}, InvalidRequestError), ({"sort": "relevance"}, InvalidSortError),
        ({"sort": "oldest"}, InvalidSortError), ({"search": "x" * 201}, InvalidRequestError),
        ({"search": "***"}, InvalidRequestError), ({"since": "yesterday"}, InvalidRequestError),
        ({"since": "2026-08-01", "until": "2026-07-01"}, InvalidRequestError),
    ],
)
def test_list_errors(dated, kwargs, error):
    with pytest.raises(error):
        dated.list_page(**kwargs)


def test_get_memory_fields(svc, clock):
    [m] = save(svc, "The project uses SQLite.", session_id="p")
    got = svc.detail(m["ref"]).to_dict()
    assert got == {
        "id": m["id"], "ref": m["ref"], "session_id": "p", "kind": "episodic",
        "content": "The project uses SQLite.", "content_tokens": 4,
        "created_at": "2026-07-31T10:15:00Z", "recall_count": 0, "last_recalled_at": None,
        "superseded_by": None, "superseded_at": None, "supersedes": None,
        "current_time": "2026-07-31T10:15:00Z", "tags": [], "metadata": {},
    }
    assert svc.detail(m["id"].upper()).to_dict()["id"] == m["id"]


def test_get_errors(svc):
    with pytest.raises(EmptyMemoryError):
        svc.detail("  ")
    with pytest.raises(MemoryNotFoundError):
        svc.detail("0123456789ab")
    with pytest.raises(MemoryNotFoundError):
        svc.detail("00000000-0000-4000-8000-000000000000")
    with pytest.raises(MemoryNotFoundError):
        svc.detail("not an id")
