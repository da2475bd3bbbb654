"""benchmark_hosted's visit plan: Zipf draws, the cold/open judgement at the LRU limit."""

from __future__ import annotations

import collections

from benchmarks._hosted_clients import MARKER, Visits, _plan, facts


def test_zipf_visits_are_seeded_skewed_and_within_the_population() -> None:
    one, two = Visits(10_000, 1.1, 64), Visits(10_000, 1.1, 64)
    first = [one.next() for _ in range(3000)]
    assert first == [two.next() for _ in range(3000)]
    users = collections.Counter(drawn[0] for drawn in first if drawn is not None)
    assert all(0 <= user < 10_000 for user in users)
    assert users.most_common(1)[0][0] == 0  # rank 1 is the most visited
    assert users[0] > 20 * max(users[u] for u in range(5000, 10_000))  # the tail is thin


def test_a_user_is_cold_after_max_open_other_users_and_open_before() -> None:
    visits = Visits(100, 0.0, max_open=3)
    assert [visits.next() for _ in range(4)] == [(0, 0, "new"), (1, 0, "new"), (2, 0, "new"),
                                                  (3, 0, "new")]
    visits.order = iter([2, 3, 0, 0])  # 2 and 3 are among the 3 most recent; 0 was evicted
    assert [visits.next() for _ in range(4)] == [(2, 1, "open"), (3, 1, "open"),
                                                  (0, 1, "reopen"), (0, 2, "open")]
    assert len(visits.recent) == 3
    assert Visits(2, 0.0, 8).next() == (0, 0, "new")


def test_once_each_ends_and_a_visit_is_20_saves_with_5_recalls_spread() -> None:
    visits = Visits(3, 0.0, 64)
    assert [visits.next() for _ in range(4)][-1] is None
    plan = _plan(20, 5)
    assert plan.count("save") == 20 and plan.count("recall") == 5 and plan[4] == "recall"
    assert _plan(1, 1) == ["save", "recall"]


def test_every_fact_carries_its_owner_and_returning_visits_say_new_things() -> None:
    first, again = facts(42, 20, 0), facts(42, 20, 1)
    assert len(first) == len(again) == 20 and not set(first) & set(again)
    assert {int(m) for text in first + again for m in MARKER.findall(text)} == {42}
    assert "favourite colour" in first[0]
