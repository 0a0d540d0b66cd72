"""The statistical guard of ratio thresholds: Wilson score bounds against published and hand-computed values,
and the verdicts on the small samples that paged people for nothing (issue 30)."""

from __future__ import annotations

import math

import pytest
from inferwatch_alerts.guards import guarded, order_statistic_rank, quantile_bound, wilson_bound
from inferwatch_alerts.rules import Threshold
from inferwatch_alerts.signals import grid_levels

# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Statistics in Medicine 17,
# Table II, method 3 (Wilson score, no continuity correction), 95% two-sided: each bound is the one-sided bound
# at 97.5%.
NEWCOMBE = [((81, 263), (0.2553, 0.3662)), ((15, 148), (0.0624, 0.1605)), ((0, 20), (0.0, 0.1611)),
            ((1, 29), (0.0061, 0.1718))]


@pytest.mark.parametrize(("counts", "interval"), NEWCOMBE)
def test_wilson_bounds_match_the_published_table(counts: tuple[int, int], interval: tuple[float, float]) -> None:
    x, n = counts
    assert wilson_bound(x, n, 0.975, upper=False) == pytest.approx(interval[0], abs=5e-5)
    assert wilson_bound(x, n, 0.975, upper=True) == pytest.approx(interval[1], abs=5e-5)


def test_one_sided_95_percent_bounds_computed_by_hand() -> None:
    # x = 5, n = 300, z = 1.644854 (the 95% one-sided normal quantile): p = 0.0166667, z^2/n = 0.0090185,
    # centre = p + z^2/2n = 0.0211759, spread = z * sqrt(p(1-p)/n + z^2/4n^2) = 0.0129668,
    # lower = (centre - spread) / (1 + z^2/n) = 0.0081357, upper = (centre + spread) / 1.0090185 = 0.0338375
    assert wilson_bound(5, 300, 0.95, upper=False) == pytest.approx(0.0081357, abs=2e-7)
    assert wilson_bound(5, 300, 0.95, upper=True) == pytest.approx(0.0338375, abs=2e-7)
    # the edges stay inside [0, 1], where the normal approximation would not
    assert wilson_bound(0, 50, 0.95, upper=False) == 0.0
    assert wilson_bound(50, 50, 0.95, upper=True) == pytest.approx(1.0)
    assert 0.9 < wilson_bound(50, 50, 0.95, upper=False) < 1.0
    assert wilson_bound(0, 0, 0.95, upper=False) == 0.0 and wilson_bound(0, 0, 0.95, upper=True) == 1.0


ERRORS = Threshold(">", 0.01, confidence=0.95, min_events=5)


@pytest.mark.parametrize(("events", "calls"), [(2, 100), (3, 100), (4, 100), (4, 270), (5, 270)])
def test_a_handful_of_errors_in_a_small_window_is_no_breach(events: int, calls: int) -> None:
    # at a true 0.3% error rate these are routine; each point rate is above 1%
    assert events / calls > 0.01
    assert not guarded(ERRORS, events, calls).breaching


@pytest.mark.parametrize(("events", "calls"), [(5, 100), (30, 600), (12, 300)])
def test_a_rate_clearly_above_the_threshold_breaches(events: int, calls: int) -> None:
    verdict = guarded(ERRORS, events, calls)
    assert verdict.breaching and 0.01 < verdict.compared < events / calls and verdict.events == events


def test_min_events_and_confidence_each_hold_back_a_breach() -> None:
    # 4 of 100: its lower bound (1.8%) is above 1%, but 4 events are under min_events
    assert guarded(Threshold(">", 0.01, confidence=0.95), 4, 100).breaching
    assert not guarded(ERRORS, 4, 100).breaching
    # 5 of 270: enough events, but the rate is not above 1% with 95% confidence (lower bound 0.9%)
    assert guarded(Threshold(">", 0.01, min_events=5), 5, 270).breaching
    assert not guarded(ERRORS, 5, 270).breaching


def test_night_time_refusals_do_not_reach_five_percent_with_confidence() -> None:
    refusals = Threshold(">", 0.05, confidence=0.95, min_events=5)
    for events, calls in [(2, 30), (3, 40), (4, 60), (5, 50), (5, 100)]:
        assert not guarded(refusals, events, calls).breaching, (events, calls)
    assert guarded(refusals, 12, 100).breaching  # a real 12% spike


def test_below_thresholds_use_the_upper_bound() -> None:
    success = Threshold("<", 0.99, confidence=0.95)
    assert not guarded(success, 98, 100).breaching  # 98% of 100: could still be 99% (upper bound 99.3%)
    assert guarded(success, 940, 1000).breaching


def test_a_percentile_bound_reads_a_lower_rank_the_fewer_the_values() -> None:
    # the rank r whose order statistic is below the true p95 with 80% / 95% confidence: P(Binomial(n, 0.95) >= r)
    assert order_statistic_rank(6, 0.95, 0.8, upper=False) == 5  # P(>= 6) = 0.735, P(>= 5) = 0.967
    assert order_statistic_rank(9, 0.95, 0.8, upper=False) == 8  # the 2nd slowest of 9
    assert order_statistic_rank(25, 0.95, 0.8, upper=False) == 23  # the 3rd slowest of 25
    assert order_statistic_rank(90, 0.95, 0.95, upper=False) == 82  # the 9th slowest of 90
    assert order_statistic_rank(90, 0.95, 0.95, upper=True) == 90  # P(Binomial(90, 0.95) <= 88) = 0.943
    assert order_statistic_rank(20, 0.95, 0.95, upper=True) is None  # 20 values cannot bound a p95 from above
    assert order_statistic_rank(0, 0.95, 0.95, upper=False) is None
    # read from the t-digest's grid at level (r - 0.5) / n, the grid point at or below it (above: upper bound)
    grid = tuple((x, 1000.0 * x) for x in grid_levels(0.95))
    assert quantile_bound(grid, 0.95, 90, 0.95, upper=False) == pytest.approx(905.0)  # 81.5 / 90 = 0.9056
    assert quantile_bound(grid, 0.95, 90, 0.95, upper=True) == pytest.approx(995.0)  # 89.5 / 90 = 0.9944
    assert quantile_bound(grid, 0.95, 20, 0.95, upper=True) == math.inf
    assert quantile_bound(grid, 0.95, 0, 0.95, upper=False) == -math.inf
    assert quantile_bound(grid, 0.95, 1, 0.999, upper=False) == -math.inf  # one value: no rank at 99.9%
