"""list_memories validation and preview (domain/listing.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tinycontext.domain.errors import (
    InvalidMemoryKindError,
    InvalidRequestError,
    InvalidSortError,
    RecallBudgetError,
)
from tinycontext.domain.listing import build_list_query, preview


def q(**kw):
    args = dict(session_id=None, kind=None, since=None, until=None, limit=None, offset=None,
                sort=None, search=None)
    args.update(kw)
    return build_list_query(**args)


def test_defaults():
    query = q()
    assert (query.limit, query.offset, query.sort, query.search) == (20, 0, "recent", ())
    assert query.kind is None and query.since is None and query.until is None


def test_limit_capped_at_200_and_reported():
    assert q(limit=500).limit == 200
    assert q(limit=200).limit == 200
    assert q(limit=1).limit == 1


@pytest.mark.parametrize(("field", "value"), [("limit", 0), ("limit", -5), ("offset", -1)])
def test_budget_errors(field, value):
    with pytest.raises(RecallBudgetError) as info:
        q(**{field: value})
    assert info.value.code == "recall_budget"


@pytest.mark.parametrize("value", [True, False, 1.5, "10"])
def test_limit_must_be_whole_number(value):
    with pytest.raises(InvalidRequestError):
        q(limit=value)
    with pytest.raises(InvalidRequestError):
        q(offset=value)


def test_relevance_without_search_is_invalid_sort():
    with pytest.raises(InvalidSortError):
        q(sort="relevance")
    with pytest.raises(InvalidSortError):
        q(sort="relevance", search="   ")


@pytest.mark.parametrize("sort", ["newest", "", "RECENT", 1])
def test_unknown_sort(sort):
    with pytest.raises(InvalidSortError):
        q(sort=sort)


def test_search_defaults_to_relevance_and_keeps_other_sorts():
    assert q(search="python tips").sort == "relevance"
    assert q(search="python tips").search == (("python",), ("tips",))
    assert q(search="python", sort="stale").sort == "stale"
    assert q(search="python", sort="recent").sort == "recent"


def test_list_search_keeps_stopwords():
    assert q(search="the plan").search == (("the",), ("plan",))


def test_blank_search_is_no_search():
    query = q(search="  ")
    assert query.search == () and query.sort == "recent"


def test_search_length_limit():
    assert q(search="a" * 200).search == (("a" * 200,),)
    with pytest.raises(InvalidRequestError):
        q(search="a" * 201)


@pytest.mark.parametrize("search", ["***", '"', ":", "- ^ (", "("])
def test_search_without_keywords_is_invalid(search):
    with pytest.raises(InvalidRequestError):
        q(search=search)


def test_search_non_string():
    with pytest.raises(InvalidRequestError):
        q(search=["python"])


def test_since_after_until():
    with pytest.raises(InvalidRequestError):
        q(since="2026-08-01", until="2026-07-31")


def test_same_day_since_until_is_the_whole_day():
    query = q(since="2026-07-31", until="2026-07-31")
    assert query.since == datetime(2026, 7, 31, tzinfo=UTC)
    assert query.until == datetime(2026, 7, 31, 23, 59, 59, 999999, tzinfo=UTC)


def test_malformed_dates():
    with pytest.raises(InvalidRequestError):
        q(since="last week")
    with pytest.raises(InvalidRequestError):
        q(until="2026-02-31")


def test_kind_checked():
    assert q(kind="Profile").kind == "profile"
    with pytest.raises(InvalidMemoryKindError):
        q(kind="facts")


def test_preview_short_content_untouched():
    assert preview("x" * 200) == ("x" * 200, False)
    assert preview("short") == ("short", False)


def test_preview_cut_at_word_boundary():
    text = "abcd " * 50  # 250 chars; the space at index 199 is the last one in the window
    assert preview(text) == (("abcd " * 40).rstrip() + "…", True)


def test_preview_cut_without_near_space():
    text = "x" * 150 + " " + "y" * 100  # only space at 150, more than 40 chars back
    assert preview(text) == (text[:200] + "…", True)


def test_preview_cut_at_space_40_back():
    text = "x" * 160 + " " + "y" * 100  # space at 160 = 200 - 40: still used
    assert preview(text) == ("x" * 160 + "…", True)
