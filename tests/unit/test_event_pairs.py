"""Questions about two events in time (domain.events): which phrasings are split into two
events, which are left alone, and how the two events' memories join the first slots."""

from __future__ import annotations

import pytest

from tinycontext.domain.events import EventPair, event_pair, missing_events, with_pair

SPLIT = [
    ("Which came first, the trip to Paris or the wedding?", "the trip to Paris", "the wedding"),
    ("Which happened first: my trip to Rome, or the reunion?", "my trip to Rome",
     "the reunion"),
    ("Which did I do first: adopt the dog or start the new job?", "adopt the dog",
     "start the new job"),
    ("Which event did I attend first, the pottery workshop or the wine tasting?",
     "I attend the pottery workshop", "I attend the wine tasting"),
    ("Which pet did Jolene adopt first - Susie or Seraphim?", "pet Jolene adopt Susie",
     "pet Jolene adopt Seraphim"),
    ("who did I meet earlier, Tom or Ann", "I meet Tom", "I meet Ann"),
    ("The wedding or the move: which came first?", "The wedding", "the move"),
    ("Did I adopt the dog or start the job first?", "I adopt the dog", "start the job"),
    ("Did the wedding or the move come first?", "the wedding", "the move"),
    ("Did I start the new job before or after moving to Berlin?", "I start the new job",
     "moving to Berlin"),
    ("Was the concert after or before the wedding?", "the concert", "the wedding"),
    ("How many days passed between the day I bought the bike and the day I sold my car?",
     "I bought the bike", "I sold my car"),
    ("How many days were there between the day Mel and I met and the day we moved?",
     "Mel and I met", "we moved"),
    ("How much time passed between my graduation and my first job?", "my graduation",
     "my first job"),
    ("How many weeks passed between Maria adopting Coco and Shadow?", "Maria adopting Coco",
     "Maria adopting Shadow"),
    ("How many weeks from the kitchen renovation to the housewarming party?",
     "the kitchen renovation", "the housewarming party"),
    ("How many days before my sister's birthday party did I order her gift?",
     "my sister's birthday party", "I order her gift"),
    ("How long after the race did he notice the injury?", "the race",
     "he notice the injury"),
    ("How many weeks had passed since I started learning guitar when I played my first gig?",
     "I started learning guitar", "I played my first gig"),
    ("How long did James and Samantha date before moving in together?",
     "James and Samantha date", "moving in together"),
    ("Was the wedding earlier than the move?", "the wedding", "the move"),
    ("Did I buy the car before I moved to Lisbon?", "I buy the car", "I moved to Lisbon"),
    ("  did i BUY the car   before i moved to lisbon  ", "i BUY the car", "i moved to lisbon"),
]

ONE_EVENT_OR_NONE = [
    "What did she do after the race?",
    "What did he realise after the race?",
    "Where did she go before the race?",
    "What did Mel and her kids do?",
    "What did Mel and her kids do after the race?",
    "How long has she been practising art?",
    "How long ago was Caroline's 18th birthday?",
    "When did Caroline first go to the support group?",
    "Which restaurant did I visit first?",
    "What is the difference between a latte and a cappuccino?",
    "How many miles between Paris and Lyon?",
    "Did she paint after that?",
    "Where did Caroline move from 4 years ago?",
    "How long did it take for Jon to open his studio?",
    "What should I cook for dinner tonight?",
    "Which came first?",
    "",
]


@pytest.mark.parametrize(("question", "first", "second"), SPLIT)
def test_two_event_questions_are_split_into_their_events(
    question: str, first: str, second: str
) -> None:
    assert event_pair(question) == EventPair(first, second)


@pytest.mark.parametrize("question", ONE_EVENT_OR_NONE)
def test_other_questions_are_left_alone(question: str) -> None:
    assert event_pair(question) is None


def test_an_event_of_stopwords_alone_is_not_an_event() -> None:
    assert event_pair("Did I do it before or after that?") is None
    assert event_pair("Which came first, the move or the move?") is None


MOMENT = {"a1": 0, "a2": 0, "b1": 0, "b2": 1, "b3": 2, "r": 3}


def _apart(x: str, y: str) -> bool:
    return MOMENT[x] != MOMENT[y]


def test_each_events_best_is_added_when_the_results_lack_it() -> None:
    assert missing_events(["r"], ["a1", "a2"], ["b2", "b3"], _apart) == ["a1", "b2"]
    assert missing_events(["r", "a1"], ["a1", "a2"], ["b2", "b3"], _apart) == ["b2"]
    assert missing_events(["r", "b2", "a1"], ["a1", "a2"], ["b2", "b3"], _apart) == []
    # Another of the event's candidates among the results does not stand in for its best.
    assert missing_events(["r", "a2", "b2"], ["a1", "a2"], ["b2"], _apart) == ["a1"]


def test_the_second_event_prefers_another_moment_than_the_first() -> None:
    # b1 shares a1's moment: the second event's next best from another moment stands in,
    # even when b1 is among the results already.
    assert missing_events(["r"], ["a1"], ["b1", "b2", "b3"], _apart) == ["a1", "b2"]
    assert missing_events(["r", "a1", "b1"], ["a1"], ["b1", "b3"], _apart) == ["b3"]
    # None from another moment: the second event's best that is another memory.
    assert missing_events(["r"], ["a1"], ["a1", "b1"], _apart) == ["a1", "b1"]
    assert missing_events(["r"], ["a1"], ["a1"], _apart) == ["a1"]
    assert missing_events(["r"], [], ["b1"], _apart) == ["b1"]
    assert missing_events(["r"], [], [], _apart) == []


def test_the_pair_follows_the_best_result_and_the_rest_keeps_its_order() -> None:
    ranked = ["r1", "r2", "r3", "r4", "r5"]
    assert with_pair(ranked, ["x", "y"], 5) == ["r1", "x", "y", "r2", "r3"]
    assert with_pair(ranked, ["r4", "x"], 5) == ["r1", "r4", "x", "r2", "r3"]
    # Already the best result, or already right after it: nothing moves.
    assert with_pair(ranked, ["r1", "r2"], 5) == ranked
    assert with_pair(ranked, ["r2", "r1"], 3) == ["r1", "r2", "r3"]
    assert with_pair([], ["x", "y"], 5) == ["x", "y"]
    assert with_pair(ranked, [], 3) == ["r1", "r2", "r3"]
    assert with_pair(ranked, ["x", "y"], 2) == ["r1", "x"]
