"""Date cues (domain/dates.py) and their share of score fusion (domain/recall.py)."""

from __future__ import annotations

from datetime import date

import pytest

from tinycontext.domain.dates import Period, asked_period, dated_ids, mentioned
from tinycontext.domain.recall import (
    DATE_CUE_WEIGHT,
    SCORE,
    Candidate,
    FusionWeights,
    rank,
    score_fusion,
)

TODAY = date(2026, 12, 1)  # a Tuesday
NOW = "2026-12-01T10:00:00Z"


def day(y: int, m: int, d: int) -> Period:
    return Period(date(y, m, d), date(y, m, d))


@pytest.mark.parametrize(("question", "period"), [
    ("What did Andrew do in March 2023?", Period(date(2023, 3, 1), date(2023, 3, 31))),
    ("What happened on 16 March 2022?", day(2022, 3, 16)),
    ("What happened on the 16th of March, 2022?", day(2022, 3, 16)),
    ("Where were we on May 8, 2023?", day(2023, 5, 8)),
    ("What changed on 2024-02-29?", day(2024, 2, 29)),
    ("Which books did I read in 2022?", Period(date(2022, 1, 1), date(2022, 12, 31))),
    ("Where did I go last May?", Period(date(2026, 5, 1), date(2026, 5, 31))),
    ("What did I buy last December?", Period(date(2025, 12, 1), date(2025, 12, 31))),
    ("What did we decide two weeks ago?", Period(date(2026, 11, 14), date(2026, 11, 20))),
    ("What did she say 3 days ago?", Period(date(2026, 11, 27), date(2026, 11, 29))),
    ("What did we plan a month ago?", Period(date(2026, 11, 1), date(2026, 11, 30))),
    ("What did I note yesterday?", day(2026, 11, 30)),
    ("What did we ship last week?", Period(date(2026, 11, 23), date(2026, 11, 29))),
    ("What happened last month?", Period(date(2026, 11, 1), date(2026, 11, 30))),
    ("Where did we travel last year?", Period(date(2025, 1, 1), date(2025, 12, 31))),
    # The same period named twice, or a month inside the year also named, is one ask.
    ("Did we talk in May 2023, or at any time in 2023?",
     Period(date(2023, 1, 1), date(2023, 12, 31))),
])
def test_the_period_a_question_names(question: str, period: Period) -> None:
    assert asked_period(question, TODAY) == period


@pytest.mark.parametrize("question", [
    "May I ask what my favourite colour is?",      # "may" the verb
    "What did we decide in May?",                  # which year: a guess, so no cue
    "How many cats do I have?",
    "Was it in 2021 or in 2023?",                  # two periods: no single cue
    "What happened on 31 February 2023?",          # no such day: the month it names stays
])
def test_questions_without_one_clear_period_or_with_an_impossible_day(question: str) -> None:
    period = asked_period(question, TODAY)
    if "February" in question:
        assert period == Period(date(2023, 2, 1), date(2023, 2, 28))
    else:
        assert period is None


def test_dates_a_memory_mentions() -> None:
    text = "[1:56 pm on 8 May, 2023] Caroline: we moved in Sept 2021, back in 2019; id 4821"
    assert mentioned(text) == [
        day(2023, 5, 8),
        Period(date(2021, 9, 1), date(2021, 9, 30)),
        Period(date(2019, 1, 1), date(2019, 12, 31)),
    ]
    assert mentioned("no dates here, just 42 and 12345") == []


def test_dated_ids_uses_saved_day_and_mentioned_dates() -> None:
    memories = [
        ("saved-in", "Lunch with Sam at the harbour.", "2023-03-14T12:00:00Z"),
        ("mentions", "On 2 March 2023 we adopted a puppy.", "2026-01-01T00:00:00Z"),
        ("wider", "Everything in 2023 was busy.", "2026-01-01T00:00:00Z"),
        ("outside", "On 2 April 2023 we moved.", "2026-01-01T00:00:00Z"),
    ]
    # A year mentioned is wider than the month asked about: not inside it.
    assert dated_ids("What did we do in March 2023?", NOW, memories) == {"saved-in", "mentions"}
    assert dated_ids("What did we do in 2023?", NOW, memories) == {
        "saved-in", "mentions", "wider", "outside"}
    assert dated_ids("What did we do?", NOW, memories) == frozenset()
    assert dated_ids("What did we do in 2023?", "not a time", memories) == frozenset()


def cand(mid: str, bm25: float | None, dense: float) -> Candidate:
    return Candidate(mid, NOW, bm25_rank=None if bm25 is None else 1, bm25=bm25,
                     dense_rank=1, dense=dense)


def test_dated_candidates_add_the_cue_weight_exactly() -> None:
    weights = FusionWeights(method=SCORE, keyword=0.4)
    pool = [cand("a", 4.0, 0.5), cand("b", 4.0, 0.5), cand("c", None, 0.3)]
    plain = score_fusion(pool, weights)
    cued = score_fusion(pool, weights, dated={"b"})
    raw = [0.4 + 0.6 * 0.5, 0.4 + 0.6 * 0.5 + DATE_CUE_WEIGHT, 0.6 * 0.3]
    assert DATE_CUE_WEIGHT == 0.1
    assert cued == pytest.approx([v / raw[1] for v in raw], rel=1e-12)
    assert plain[0] == plain[1]
    # Between two equally good memories the dated one now comes first.
    assert [r.memory_id for r in rank(pool, weights, dated={"b"})][:2] == ["b", "a"]
    assert [r.memory_id for r in rank(pool, weights)][:2] == ["a", "b"]
