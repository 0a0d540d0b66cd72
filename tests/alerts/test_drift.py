"""The drift detectors on synthetic series: a planted shift is found within two evaluation windows, and long
stretches of normal, noisy traffic (diurnal volume, day-to-day variation, binomial and lognormal noise) give no
finding at all. Pure functions: no database."""

from __future__ import annotations

import math

import numpy as np
import pytest
from inferwatch_alerts.drift import (
    Counts,
    ks_distance,
    ks_p_value,
    length_shift,
    percentile_creep,
    proportion_spike,
)

HOURS = 24
BASELINE_DAYS = 7


def traffic(days: int, rng: np.random.Generator, base_calls: int = 600) -> np.ndarray:
    """Calls per hour: a diurnal cycle (quiet nights, busy afternoons) with Poisson noise."""
    hours = np.arange(days * HOURS)
    shape = 0.35 + 0.65 * (1 + np.sin(2 * np.pi * ((hours % HOURS) - 9) / HOURS)) / 2
    return rng.poisson(base_calls * shape)


def rates(days: int, rng: np.random.Generator, base: float, day_sd: float = 0.15) -> np.ndarray:
    """An hourly rate with a diurnal pattern and a day-to-day multiplier (the traffic mix changes daily)."""
    hours = np.arange(days * HOURS)
    diurnal = 1 + 0.3 * np.sin(2 * np.pi * (hours % HOURS) / HOURS)
    daily = np.exp(rng.normal(0, day_sd, days)).repeat(HOURS)
    return np.clip(base * diurnal * daily, 0, 1)


def spike_at(events: np.ndarray, calls: np.ndarray, t: int, **options: float) -> object:
    baseline = [Counts(events[t - d * HOURS], calls[t - d * HOURS]) for d in range(1, BASELINE_DAYS + 1)]
    return proportion_spike(Counts(events[t], calls[t]), baseline, **options)


# ------------------------------------------------------------------------------------------------ proportions


@pytest.mark.parametrize("seed", range(5))
def test_proportion_spike_is_silent_on_two_months_of_normal_traffic(seed: int) -> None:
    rng = np.random.default_rng(seed)
    days = 60
    calls = traffic(days, rng)
    events = rng.binomial(calls, rates(days, rng, 0.02))
    found = [t for t in range(BASELINE_DAYS * HOURS, days * HOURS)
             if (r := spike_at(events, calls, t, min_volume=100)) is not None and r.finding]
    assert found == []


@pytest.mark.parametrize(("base", "factor"), [(0.02, 4.0), (0.005, 6.0), (0.10, 3.0)])
def test_proportion_spike_finds_a_planted_shift_within_two_windows(base: float, factor: float) -> None:
    rng = np.random.default_rng(11)
    days = 14
    calls = traffic(days, rng)
    p = rates(days, rng, base)
    start = 10 * HOURS + 14  # an afternoon hour of day 10
    p[start:] = np.clip(p[start:] * factor, 0, 1)
    events = rng.binomial(calls, p)
    results = [spike_at(events, calls, t, min_volume=100) for t in (start, start + 1)]
    assert any(r is not None and r.finding for r in results)
    first = next(r for r in results if r is not None and r.finding)
    assert first.value > first.baseline * 1.5 and first.statistic > first.critical
    assert first.p_value is not None and first.p_value < 1e-4
    assert first.details["baseline_days"] == "7"
    # before the shift the same hour was normal
    before = spike_at(events, calls, start - 1, min_volume=100)
    assert before is not None and not before.finding


def test_proportion_spike_needs_volume_and_enough_baseline_days() -> None:
    normal = [Counts(10, 1000)] * 7
    assert proportion_spike(Counts(30, 99), normal, min_volume=100) is None
    assert proportion_spike(Counts(300, 1000), [Counts(10, 1000)] * 2 + [Counts(1, 50)] * 5) is None
    assert proportion_spike(Counts(300, 1000), normal) is not None


def test_proportion_spike_ignores_significant_but_tiny_changes() -> None:
    # a million calls an hour: 1.00% -> 1.10% is within normal day-to-day variation (min_day_cv 10%) ...
    result = proportion_spike(Counts(11_000, 1_000_000), [Counts(10_000, 1_000_000)] * 7)
    assert result is not None and not result.finding
    # ... and even where days never vary it is certain, but too small to matter (min_increase: 1 point)
    result = proportion_spike(Counts(11_000, 1_000_000), [Counts(10_000, 1_000_000)] * 7, min_day_cv=0.0)
    assert result is not None and result.p_value is not None and result.p_value < 1e-5
    assert not result.finding
    # a baseline without a single refusal: one refusal now is not a spike
    result = proportion_spike(Counts(1, 400), [Counts(0, 5000)] * 7)
    assert result is not None and not result.finding


def test_proportion_spike_between_day_variance_widens_the_test() -> None:
    current = Counts(45, 1500)  # 3.0%
    steady = [Counts(30, 1500)] * 7  # 2.0% every day
    jumpy = [Counts(x, 1500) for x in (15, 45, 18, 42, 20, 40, 30)]  # 2.0% on average, varying a lot
    calm, wild = proportion_spike(current, steady), proportion_spike(current, jumpy)
    assert calm is not None and wild is not None
    assert wild.statistic < calm.statistic
    assert float(wild.details["day_cv"]) > float(calm.details["day_cv"])


def test_bonferroni_guard_raises_the_bar_with_more_series() -> None:
    current, baseline = Counts(80, 1000), [Counts(25, 1000)] * 7  # p about 1e-5
    one = proportion_spike(current, baseline, tests=1)
    many = proportion_spike(current, baseline, tests=1000)
    assert one is not None and many is not None
    assert many.critical > one.critical
    assert one.finding and not many.finding


# ------------------------------------------------------------------------------------------------ lengths


def histogram(tokens: np.ndarray) -> dict[int, int]:
    """The same log-spaced bins as signals.LENGTH_BIN_SQL: 0, then four per doubling."""
    bins = np.where(tokens <= 0, 0, 1 + np.floor(np.log2(np.maximum(tokens, 1)) * 4)).astype(int)
    values, counts = np.unique(bins, return_counts=True)
    return dict(zip(values.tolist(), counts.tolist()))


def hourly_lengths(days: int, rng: np.random.Generator, median: float = 200.0, sigma: float = 0.6,
                   shift_from: int | None = None, shifted_median: float | None = None) -> list[np.ndarray]:
    calls = traffic(days, rng)
    day_median = median * np.exp(rng.normal(0, 0.05, days))  # prompts and users vary a little by day
    out = []
    for t, n in enumerate(calls):
        m = shifted_median if shift_from is not None and t >= shift_from else day_median[t // HOURS]
        out.append(np.round(rng.lognormal(math.log(m), sigma, n)))
    return out


def length_at(samples: list[np.ndarray], t: int) -> object:
    base = [samples[t - d * HOURS] for d in range(1, BASELINE_DAYS + 1)]
    pooled = np.concatenate(base)
    return length_shift(histogram(samples[t]), [histogram(b) for b in base], current_mean=float(samples[t].mean()),
                        baseline_mean=float(pooled.mean()), min_volume=100)


@pytest.mark.parametrize("seed", range(3))
def test_length_shift_is_silent_on_a_month_of_normal_traffic(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    samples = hourly_lengths(30, rng)
    found = [t for t in range(BASELINE_DAYS * HOURS, len(samples))
             if (r := length_at(samples, t)) is not None and r.finding]
    assert found == []


def test_length_shift_finds_shorter_answers_within_two_windows() -> None:
    rng = np.random.default_rng(5)
    start = 10 * HOURS + 15
    samples = hourly_lengths(12, rng, shift_from=start, shifted_median=110.0)
    results = [length_at(samples, t) for t in (start, start + 1)]
    first = next(r for r in results if r is not None and r.finding)
    assert first.value < 0.7 * first.baseline  # the mean moved from ~240 to ~130 tokens
    assert first.statistic >= first.critical and first.p_value is not None and first.p_value < 1e-6
    before = length_at(samples, start - 1)
    assert before is not None and not before.finding


def test_length_shift_finds_a_change_of_shape_with_the_same_median() -> None:
    rng = np.random.default_rng(8)
    base = [np.round(rng.lognormal(math.log(200), 0.4, 800)) for _ in range(7)]
    # half the answers now much shorter, half much longer: same median, very different distribution
    now = np.concatenate([np.round(rng.lognormal(math.log(60), 0.3, 400)),
                          np.round(rng.lognormal(math.log(650), 0.3, 400))])
    result = length_shift(histogram(now), [histogram(b) for b in base], current_mean=float(now.mean()),
                          baseline_mean=float(np.concatenate(base).mean()))
    assert result is not None and result.finding


def test_ks_helpers() -> None:
    assert ks_distance({1: 10}, {1: 5}) == 0.0
    assert ks_distance({1: 10}, {2: 10}) == 1.0
    assert ks_p_value(0.0, 100, 100) == 1.0
    assert ks_p_value(0.5, 200, 200) < 1e-10
    assert 0.01 < ks_p_value(0.12, 200, 200) < 0.2  # critical value at 5% is about 0.136


# ------------------------------------------------------------------------------------------------ latency


def daily_p95(days: int, rng: np.random.Generator, base: float = 900.0, noise: float = 0.02) -> np.ndarray:
    return base * np.exp(rng.normal(0, noise, days))


def creep_at(series: np.ndarray, day: int) -> object:
    window = [float(v) for v in series[day - 13: day + 1]]  # 7 reference days, then 7 monitored
    return percentile_creep(window, reference_days=7)


@pytest.mark.parametrize("seed", range(5))
def test_percentile_creep_is_silent_on_a_stationary_quarter(seed: int) -> None:
    series = daily_p95(100, np.random.default_rng(200 + seed))
    assert [d for d in range(13, 100) if (r := creep_at(series, d)) is not None and r.finding] == []


def test_percentile_creep_finds_a_slow_creep_that_no_single_day_shows() -> None:
    rng = np.random.default_rng(3)
    series = daily_p95(40, rng)
    start = 25
    series[start:] *= 1.04 ** np.arange(1, 40 - start + 1)  # +4% a day: each day alone looks ordinary
    found = [d for d in range(start, 40) if (r := creep_at(series, d)) is not None and r.finding]
    assert found and found[0] <= start + 4
    result = creep_at(series, found[0])
    assert result is not None and result.value > result.baseline and result.statistic >= result.critical
    assert int(result.details["rising_for_days"]) >= 2
    # no single day-over-day jump was more than ~10%
    assert max(series[d] / series[d - 1] for d in range(start, found[0] + 1)) < 1.12


def test_percentile_creep_finds_a_step_within_two_windows() -> None:
    series = daily_p95(30, np.random.default_rng(4))
    series[20:] *= 1.15
    assert any((r := creep_at(series, d)) is not None and r.finding for d in (20, 21))


@pytest.mark.parametrize("seed", range(5))
def test_percentile_creep_one_outlier_day_cannot_fire_alone(seed: int) -> None:
    # a 30-minute incident moved one day's p95 tenfold; every other day is ordinary (2% noise)
    series = daily_p95(40, np.random.default_rng(300 + seed))
    series[25] *= 10.0
    assert [d for d in range(13, 40) if (r := creep_at(series, d)) is not None and r.finding] == []
    # the clip is what holds it: unclipped, the outlier day alone crosses h
    unclipped = percentile_creep([float(v) for v in series[12:26]], reference_days=7, max_z=1e9)
    assert unclipped is not None and unclipped.finding


def test_percentile_creep_finds_a_9_percent_daily_creep_within_four_days() -> None:
    series = daily_p95(40, np.random.default_rng(5), noise=0.04)
    start = 25
    series[start:] *= 1.09 ** np.arange(1, 40 - start + 1)
    found = [d for d in range(start, 40) if (r := creep_at(series, d)) is not None and r.finding]
    assert found and found[0] <= start + 3  # the fourth creeping day at the latest


def test_percentile_creep_with_identical_reference_days_and_no_floor_does_not_divide_by_zero() -> None:
    result = percentile_creep([900.0] * 7 + [900.0] * 5 + [990.0, 1000.0], reference_days=7, min_rel_sd=0.0)
    assert result is not None and math.isfinite(result.statistic)
    assert result.statistic <= 2 * (3.0 - 0.5)  # two raised days, each clipped at max_z


def test_percentile_creep_needs_a_reference_and_a_current_value() -> None:
    assert percentile_creep([None] * 5 + [900.0] * 9) is None
    assert percentile_creep([900.0] * 13 + [None]) is None
    assert percentile_creep([900.0] * 14) is not None
