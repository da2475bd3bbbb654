"""How "as of" on PostgreSQL sizes its first index probes from a sample of version times."""

from __future__ import annotations

from tinycontext.adapters.postgres.as_of import EF_SEARCH_MAX, EF_SEARCH_MIN, TimeSample


def t(n: int) -> str:
    return f"2026-01-01T{n // 60:02d}:{n % 60:02d}:00Z"


# 1,000 live versions made a minute apart; 500 replaced ones, each live for 100 minutes.
SAMPLE = TimeSample([t(n) for n in range(1000)],
                    [(t(2 * n), t(2 * n + 100)) for n in range(500)], others=1.0)


def test_a_late_moment_needs_about_the_pool_over_the_share_live_then() -> None:
    live, replaced = SAMPLE.probes(t(999), 200, own_index=False)
    # ~1,000 live + 50 replaced at the moment: each index reached as deep as 200 of 1,050.
    assert 300 <= live <= 400
    assert 150 <= replaced <= 250  # half the rows, plus a few more for a handful in the answer


def test_an_early_moment_probes_wider_and_a_part_with_nothing_then_goes_exact() -> None:
    live, replaced = SAMPLE.probes(t(250), 200, own_index=False)
    assert live == EF_SEARCH_MAX  # ~250 live + 50 replaced: the widest live probe
    assert 500 < replaced < EF_SEARCH_MAX  # the replaced index is half as large
    assert SAMPLE.probes(t(1200), 200, own_index=False)[1] == 0  # nothing replaced live then
    assert SAMPLE.probes(t(999), 5, own_index=False)[0] >= EF_SEARCH_MIN


def test_hopeless_probes_are_skipped_and_other_tenants_rows_count() -> None:
    # ~100 live + 50 replaced: far deeper into the live index than the widest probe
    # reaches, so exact at once; the smaller replaced index is probed at its widest.
    assert SAMPLE.probes(t(100), 200, own_index=False) == (0, EF_SEARCH_MAX)
    shared = TimeSample(SAMPLE.live, SAMPLE.replaced, others=2.0)
    alone = SAMPLE.probes(t(999), 200, own_index=False)
    assert shared.probes(t(999), 200, own_index=False)[0] > alone[0]
    assert shared.probes(t(999), 200, own_index=True)[0] == alone[0]  # the tenant's own index
