"""Save-time context rules: the window (domain/context.py) and the vector mix (vectors.py)."""

from __future__ import annotations

from array import array

import pytest

from tinycontext.app.vectors import cosine, mix_context
from tinycontext.domain.context import DENSE_CONTEXT_WEIGHT, within_window


@pytest.mark.parametrize(
    ("previous", "now", "minutes", "expected"),
    [
        ("2026-07-01T10:00:00Z", "2026-07-01T10:00:00Z", 60, True),
        ("2026-07-01T09:00:00Z", "2026-07-01T10:00:00Z", 60, True),
        ("2026-07-01T08:59:59Z", "2026-07-01T10:00:00Z", 60, False),
        ("2026-07-01T10:00:01Z", "2026-07-01T10:00:00Z", 60, False),  # from the future
        ("2026-07-01T10:00:00Z", "2026-07-01T10:00:00Z", 0, False),  # switched off
    ],
)
def test_window(previous: str, now: str, minutes: int, expected: bool) -> None:
    assert within_window(previous, now, minutes) is expected


def unit(*values: float) -> bytes:
    norm = sum(v * v for v in values) ** 0.5
    return array("f", [v / norm for v in values]).tobytes()


def test_mix_is_the_normalised_weighted_sum() -> None:
    mixed = array("f")
    mixed.frombytes(mix_context(unit(1, 0), unit(0, 1)))
    norm = (1 + DENSE_CONTEXT_WEIGHT**2) ** 0.5
    assert list(mixed) == pytest.approx([1 / norm, DENSE_CONTEXT_WEIGHT / norm], rel=1e-6)


def test_an_identical_text_still_clears_the_dedup_line_against_a_mixed_vector() -> None:
    # Worst case over the context's direction: orthogonal (0.2 weight gives 1/sqrt(1.04)).
    own = unit(1, 0, 0)
    for context in (unit(0, 1, 0), unit(1, 1, 0), unit(-1, 3, 0)):
        assert cosine(own, mix_context(own, context)) >= 0.979


def test_opposite_vectors_leave_the_own_vector() -> None:
    assert mix_context(unit(1, 0), unit(-1, 0), weight=1.0) == unit(1, 0)
