"""Facet coverage (domain.facets): later slots go to other moments' memories holding the
question's words the chosen ones lack."""

from __future__ import annotations

import pytest

from tinycontext.domain.facets import cover_facets, facet_matches, group_rarity
from tinycontext.domain.spread import Moment

HOUR = 3600.0
DAY = 86400.0


def test_a_group_is_held_only_when_every_word_of_it_is() -> None:
    groups = [["paris"], ["e", "mail"], []]
    words = [{"paris", "trip"}, {"e", "mail", "paris"}, {"mail"}]
    assert facet_matches(groups, words) == [frozenset({0}), frozenset({0, 1}), frozenset()]


def test_group_rarity_is_its_rarest_word_and_zero_for_unknown_words() -> None:
    groups = [["paris"], ["e", "mail"], ["zzz"]]
    assert group_rarity(groups, {"paris": 2.0, "e": 0.5, "mail": 1.5}) == [2.0, 1.5, 0.0]


def test_the_other_part_of_the_question_takes_the_second_slot_from_another_day() -> None:
    # The trip's sitting fills the top; the purchase is named only on another day.
    scores = [1.0, 0.9, 0.85, 0.6]
    matches = [frozenset({0}), frozenset({0}), frozenset({0}), frozenset({1})]
    moments = [Moment("s", 0.0), Moment("s", 60.0), Moment("s", 120.0), Moment("s", DAY)]
    order = cover_facets(scores, matches, [1.0, 1.0], moments, 0.8, HOUR, 3)
    assert order == [0, 3, 1]
    # Without the weight it is the fused order.
    assert cover_facets(scores, matches, [1.0, 1.0], moments, 0.0, HOUR, 3) == [0, 1, 2]


def test_a_neighbour_of_a_chosen_memory_earns_nothing() -> None:
    scores = [1.0, 0.9, 0.6]
    matches = [frozenset({0}), frozenset(), frozenset({1})]
    same_sitting = [Moment("s", 0.0), Moment("s", 60.0), Moment("s", 120.0)]
    assert cover_facets(scores, matches, [1.0, 1.0], same_sitting, 0.8, HOUR, 3) == [0, 1, 2]
    other_session = [Moment("s", 0.0), Moment("s", 60.0), Moment("t", 120.0)]
    assert cover_facets(scores, matches, [1.0, 1.0], other_session, 0.8, HOUR, 3) == [0, 2, 1]


def test_words_already_covered_earn_nothing_and_rarer_words_earn_more() -> None:
    scores = [1.0, 0.8, 0.7, 0.7]
    matches = [frozenset({0}), frozenset({0}), frozenset({1}), frozenset({2})]
    moments = [Moment(None, float(i) * DAY) for i in range(4)]
    # Group 2 is rarer than group 1: its holder wins the tie of fused scores.
    order = cover_facets(scores, matches, [1.0, 1.0, 3.0], moments, 1.0, HOUR, 4)
    assert order == [0, 3, 2, 1]


def test_the_best_candidate_stays_first_and_limits_hold() -> None:
    scores = [1.0, 0.2]
    matches = [frozenset(), frozenset({0, 1})]
    moments = [Moment("a", 0.0), Moment("b", 0.0)]
    assert cover_facets(scores, matches, [1.0, 1.0], moments, 2.0, HOUR, 2) == [0, 1]
    assert cover_facets(scores, matches, [1.0, 1.0], moments, 2.0, HOUR, 1) == [0]
    assert cover_facets([], [], [1.0], [], 0.5, HOUR, 5) == []
    assert cover_facets(scores, matches, [0.0, 0.0], moments, 0.5, HOUR, 5) == [0, 1]
    with pytest.raises(ValueError):
        cover_facets(scores, matches[:1], [1.0], moments, 0.5, HOUR, 2)
