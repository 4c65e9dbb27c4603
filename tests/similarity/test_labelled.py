"""Interval arithmetic of the agreement figures: what a per-category figure on a handful of
"same" pairs can be said to be."""

from __future__ import annotations

import pytest

from builder.similarity.labelled import Agreement, wilson


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (5, 6, 0.4365, 0.9700),  # run's held-out precision, 5 of 6
        (0, 10, 0.0, 0.2775),  # z²/n / (1 + z²/n)
        (10, 10, 0.7225, 1.0),  # 1 / (1 + z²/n): the "rule of three"'s cousin
        (62, 64, 0.8930, 0.9914),
    ],
)
def test_wilson_interval_matches_the_closed_form(k: int, n: int, low: float, high: float) -> None:
    assert wilson(k, n) == pytest.approx((low, high), abs=5e-4)


def test_wilson_interval_holds_the_estimate_and_narrows_with_more_pairs() -> None:
    for k, n in [(1, 3), (5, 6), (40, 50), (400, 500)]:
        low, high = wilson(k, n)
        assert low < k / n < high
    widths = [wilson(5 * m, 6 * m)[1] - wilson(5 * m, 6 * m)[0] for m in (1, 4, 16)]
    assert widths[0] > widths[1] > widths[2]
    assert wilson(0, 0) == (0.0, 1.0)


def test_agreement_intervals_are_over_said_same_and_labelled_same() -> None:
    r = Agreement(tp=5, fp=1, tn=100, fn=3)
    assert r.precision_interval == wilson(5, 6)
    assert r.recall_interval == wilson(5, 8)
