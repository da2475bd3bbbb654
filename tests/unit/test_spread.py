"""The coverage step after fusion (domain.spread): slots spread over sessions and moments."""

from __future__ import annotations

import pytest

from tinycontext.domain.spread import Moment, moment_of, same_moment, spread

HOUR = 3600.0


def test_a_crowd_from_one_moment_gives_way_to_a_strong_candidate_from_another() -> None:
    ids = ["a1", "a2", "a3", "b1"]
    scores = [1.0, 0.95, 0.9, 0.85]
    moments = [Moment("s", 0.0), Moment("s", 10.0), Moment("s", 20.0), Moment("s", 5 * 86400.0)]
    assert spread(ids, scores, moments, 0.15, HOUR, 3) == ["a1", "b1", "a2"]
    # A light weight leaves the order as fused: b1 is not strong enough.
    assert spread(ids, scores, moments, 0.01, HOUR, 3) == ["a1", "a2", "a3"]


def test_another_session_at_the_same_time_is_another_moment() -> None:
    moments = [Moment("s", 0.0), Moment("s", 0.0), Moment("t", 0.0)]
    assert spread(["a", "b", "c"], [1.0, 0.9, 0.85], moments, 0.1, HOUR, 2) == ["a", "c"]


def test_no_effect_when_the_candidates_do_not_cluster_or_all_share_one_moment() -> None:
    ids = [f"m{i}" for i in range(8)]
    scores = [1.0 - 0.01 * i for i in range(8)]
    apart = [Moment("s", i * 86400.0) for i in range(8)]
    together = [Moment("s", float(i)) for i in range(8)]
    assert spread(ids, scores, apart, 0.5, HOUR, 5) == ids[:5]
    assert spread(ids, scores, together, 0.5, HOUR, 5) == ids[:5]


def test_zero_weight_and_short_lists_are_the_fused_order() -> None:
    moments = [Moment("s", 0.0), Moment("s", 1.0), Moment("s", 1e6)]
    assert spread(["a", "b", "c"], [1.0, 0.9, 0.8], moments, 0.0, HOUR, 2) == ["a", "b"]
    assert spread(["a"], [1.0], moments[:1], 0.3, HOUR, 5) == ["a"]
    assert spread([], [], [], 0.3, HOUR, 5) == []


def test_ties_keep_the_incoming_order_deterministically() -> None:
    ids = ["x", "y", "z", "w"]
    moments = [Moment("s", 0.0), Moment("s", 0.0), Moment("s", 1e6), Moment("s", 2e6)]
    first = spread(ids, [1.0, 0.9, 0.9, 0.9], moments, 0.2, HOUR, 4)
    assert first == ["x", "z", "w", "y"]
    assert all(spread(ids, [1.0, 0.9, 0.9, 0.9], moments, 0.2, HOUR, 4) == first
               for _ in range(5))
    # Equal adjusted scores: the earlier candidate of the fused order wins.
    assert spread(["p", "q"], [0.5, 0.5], [Moment("s", 0.0), Moment("t", 0.0)],
                  0.2, HOUR, 2) == ["p", "q"]


def test_the_window_decides_what_counts_as_one_moment() -> None:
    a, b = Moment("s", 0.0), Moment("s", 2 * HOUR)
    assert same_moment(a, b, 2 * HOUR) and not same_moment(a, b, HOUR)
    assert not same_moment(a, Moment(None, 0.0), HOUR)


def test_moments_read_stored_timestamps() -> None:
    assert moment_of("s", "2023-05-08T13:56:00Z") == Moment("s", 1683554160.0)
    assert moment_of(None, "not a time") == Moment(None, 0.0)


def test_mismatched_inputs_are_refused() -> None:
    with pytest.raises(ValueError):
        spread(["a", "b"], [1.0], [Moment("s", 0.0)], 0.1, HOUR, 2)
