"""The moment prior (domain.moments): the best candidates of the strongest sittings rise."""

from __future__ import annotations

import pytest

from tinycontext.domain.moments import moment_prior, moment_runs

HOUR = 3600.0
DAY = 86400.0


def test_runs_chain_within_a_session_and_split_on_gaps_and_sessions() -> None:
    sessions = ["s", "s", "s", "s", "t", None, None, "s"]
    created = [
        "2026-01-01T10:00:00Z", "2026-01-01T10:50:00Z", "2026-01-01T11:40:00Z",  # one chain
        "2026-01-02T10:00:00Z", "2026-01-01T10:00:00Z",
        "2026-01-01T10:00:00Z", "2026-01-01T10:00:10Z",
        "not a time",  # an unreadable timestamp counts as the epoch: a run of its own here
    ]
    runs = moment_runs(sessions, created, HOUR)
    assert runs[0] == runs[1] == runs[2]
    assert len({runs[0], runs[3], runs[4], runs[5], runs[7]}) == 5
    assert runs[5] == runs[6]
    assert moment_runs([], [], HOUR) == []
    with pytest.raises(ValueError):
        moment_runs(["s"], [], HOUR)


def test_a_weak_turn_of_the_best_sitting_overtakes_a_lone_match_elsewhere() -> None:
    base = [1.0, 0.5, 0.6]  # best turn and its weak neighbour; a lone match on another day
    runs = [0, 0, 1]
    lifted = moment_prior(base, runs, 0.5)
    assert lifted[0] == 1.0 and lifted[1] == 0.5  # the best sitting loses nothing
    assert lifted[2] == pytest.approx(0.6 - 0.5 * (1 - 0.6))
    assert lifted[1] > lifted[2]


def test_only_the_best_few_of_a_sitting_are_lifted() -> None:
    base = [1.0 - 0.01 * i for i in range(8)] + [0.6]
    runs = [0] * 8 + [1]
    out = moment_prior(base, runs, 0.8, lifted=5)
    assert out[:5] == base[:5]
    assert out[5:8] == [pytest.approx(v - 0.8) for v in base[5:8]]
    # The other sitting's best now comes before the sixth turn of the first.
    assert out[8] > out[5]


def test_a_run_without_any_of_the_best_loses_the_whole_weight() -> None:
    base = [1.0, 0.9, 0.1]
    out = moment_prior(base, [0, 0, 1], 0.3, depth=2)
    assert out[2] == pytest.approx(0.1 - 0.3)


def test_no_change_with_one_run_zero_weight_or_no_positive_best() -> None:
    base = [0.9, 0.3, 0.2]
    assert moment_prior(base, [0, 0, 0], 0.8) == base
    assert moment_prior(base, [0, 1, 2], 0.0) == base
    assert moment_prior([0.0, -0.1], [0, 1], 0.8) == [0.0, -0.1]
    assert moment_prior([], [], 0.8) == []


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError):
        moment_prior([1.0], [0, 1], 0.5)
