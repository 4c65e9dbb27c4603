"""The gate's arithmetic, pinned: the `agree` rule (k of n equivalent references, a minimum
of valid ones), the legacy top-k mean, max and mean modes, and the exact θ boundary.

Each assertion is chosen so that a small mutation of `verdict`, `aggregate` or `passes` fails
it: averaging the lowest k, averaging all, `>=` turned into `>`, min_agree or min_references
off by one, the share of agreeing references computed over the wrong count.
"""

from __future__ import annotations

import pytest

from builder.nap.gate import GateRule, aggregate, passes, verdict

# eight references, as the reference pipeline samples them; top 3 = 0.9, 0.8, 0.7
EIGHT = [0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.0, 0.4]


def test_mean_top_k_averages_the_k_best_of_eight_references() -> None:
    assert aggregate(EIGHT, "mean_top_k", 3) == pytest.approx(0.8)
    assert aggregate(EIGHT, "mean_top_k", 1) == pytest.approx(0.9)
    assert aggregate(EIGHT, "mean_top_k", 8) == pytest.approx(3.4 / 8)


def test_mean_top_k_is_neither_the_lowest_k_nor_all_of_them() -> None:
    score = aggregate(EIGHT, "mean_top_k", 3)
    assert score != pytest.approx((0.0 + 0.1 + 0.2) / 3)  # the lowest three
    assert score != pytest.approx(sum(EIGHT) / 8)  # all eight
    # a candidate that matches three references exactly passes, whatever the other five say
    assert passes(aggregate([1.0, 1.0, 1.0, 0, 0, 0, 0, 0], "mean_top_k", 3), 0.65)


def test_top_k_larger_than_the_references_averages_those_there_are() -> None:
    assert aggregate([0.9, 0.6], "mean_top_k", 3) == pytest.approx(0.75)
    assert aggregate([0.4], "mean_top_k", 0) == pytest.approx(0.4)  # k < 1 counts as 1


def test_max_and_mean_modes() -> None:
    assert aggregate(EIGHT, "max") == pytest.approx(0.9)
    assert aggregate(EIGHT, "mean") == pytest.approx(3.4 / 8)


def test_no_references_scores_zero_and_fails() -> None:
    assert aggregate([], "mean_top_k", 3) == 0.0
    assert not passes(aggregate([]), 0.65)


@pytest.mark.parametrize("theta", [0.6, 0.65, 0.5, 1.0])
def test_a_score_exactly_at_theta_passes_and_just_below_fails(theta: float) -> None:
    assert passes(theta, theta)
    assert not passes(theta - 1e-9, theta)
    assert passes(theta + 1e-9, theta)


def test_rounded_similarities_that_average_exactly_to_theta_pass() -> None:
    # the similarity rounds its scores, so a top-3 mean lands exactly on θ in real runs
    assert passes(aggregate([0.65, 0.65, 0.65, 0.1], "mean_top_k", 3), 0.65)
    assert passes(aggregate([0.65], "max"), 0.65)


# ---------------------------------------------------------------- the agree rule (issue 26)

AGREE = GateRule("agree", threshold=0.75, min_agree=2, min_references=4)


def test_one_exact_match_cannot_outvote_two_near_misses() -> None:
    # issue 26, class 4: under the mean of the top 3 one exact match and two capped near
    # misses gave (1 + 0.5 + 0.5) / 3 = 0.667 >= 0.65 and passed
    near_misses = [1.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert passes(aggregate(near_misses, "mean_top_k", 3), 0.65)
    assert verdict(near_misses, AGREE) == (pytest.approx(1 / 8), False)


def test_agree_passes_at_exactly_min_agree_equivalent_references() -> None:
    two = [1.0, 0.75, 0.74, 0.0, 0.0, 0.0, 0.0, 0.0]  # 0.75 is at θ, 0.74 below it
    assert verdict(two, AGREE) == (pytest.approx(2 / 8), True)
    one = [1.0, 0.74, 0.74, 0.74, 0.0, 0.0, 0.0, 0.0]
    assert verdict(one, AGREE) == (pytest.approx(1 / 8), False)


def test_agree_needs_min_references_valid_references() -> None:
    assert verdict([1.0, 1.0, 1.0], AGREE) == (pytest.approx(1.0), False)  # 3 < 4 valid
    assert verdict([1.0, 1.0, 1.0, 0.0], AGREE) == (pytest.approx(0.75), True)
    assert verdict([], AGREE) == (0.0, False)


def test_one_logged_reference_decides_with_min_agree_one() -> None:
    logged = GateRule("agree", threshold=0.75, min_agree=1, min_references=1)
    assert verdict([1.0], logged) == (1.0, True)
    assert verdict([0.74], logged) == (0.0, False)


def test_legacy_aggregates_still_compare_the_mean_with_theta() -> None:
    rule = GateRule("mean_top_k", threshold=0.65, top_k=3)
    assert verdict(EIGHT, rule) == (pytest.approx(0.8), True)
    assert verdict([], rule) == (0.0, False)
    with pytest.raises(ValueError, match="needs θ"):
        aggregate([1.0], "agree")
