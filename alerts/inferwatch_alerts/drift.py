"""Quality-drift detectors: pure functions that compare a current window with a baseline and say whether the
difference is more than noise.

Each detector needs a minimum volume and a statistical test or control limit, because the same detector runs for
every group of every project every hour: a test at a plain 5% level would page somebody every day. The guards,
in the order they apply:

* **volume**: a current window (and each baseline day) must have at least ``min_volume`` events; otherwise the
  detector returns None (no data: a quiet hour is not evidence of anything);
* **significance with a multiple-testing guard**: the level ``alpha`` is divided by the number of series tested
  in the same evaluation (Bonferroni), so a rule over fifty models is no noisier than a rule over one; the
  default level is small (1e-4) because the same series is tested again every hour, month after month;
* **the baseline's own variability**: traffic is not a perfect binomial process (the mix of users and prompts
  changes from day to day), so the baseline comes from several trailing days at the same hour and their
  day-to-day spread widens the test (proportions) or sets the bar (lengths, latency);
* **effect size**: a statistically certain but tiny change (0.1% more refusals at a million calls an hour) is
  not worth an alert, so each detector also needs a minimum relative and absolute change.

Detectors:

* :func:`proportion_spike`: refusal, empty-response, truncated, tool-failure, thumbs-down and error rates. The
  exact upper tail of a beta-binomial: the binomial count of the current window, with the day-to-day variation
  of the rate (from the baseline days) and the uncertainty of the baseline rate added (overdispersion),
  averaged over the uncertainty of that day-to-day variation (a week of days estimates it poorly).
* :func:`length_shift`: the distribution of output tokens per call, as log-spaced histograms. A two-sample
  Kolmogorov-Smirnov test on the binned distributions; the distance must also exceed every baseline day's
  distance from the other baseline days (how far a normal day strays) and ``min_distance``.
* :func:`percentile_creep`: a latency percentile per day. A one-sided CUSUM of the daily values' log against the
  mean and spread of a reference period: it accumulates small daily increases, so a creep of a few percent a
  day is found, not only a one-day jump.

Each returns a :class:`DriftResult` (value, baseline, statistic, critical value, p-value where there is one,
whether it is a finding, and details), or None when there is too little data to judge.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Final

_NORMAL: Final = NormalDist()


@dataclass(frozen=True)
class Counts:
    """``events`` out of ``trials`` (e.g. refusals out of calls) in one window."""

    events: float
    trials: float

    @property
    def rate(self) -> float:
        return self.events / self.trials if self.trials > 0 else 0.0


@dataclass(frozen=True)
class DriftResult:
    """A detector's verdict on one series. ``finding`` is True when the change is real and large enough."""

    method: str
    value: float
    baseline: float
    statistic: float
    critical: float
    finding: bool
    p_value: float | None = None
    details: Mapping[str, str] = field(default_factory=dict)


def _alpha_per_test(alpha: float, tests: int) -> float:
    return alpha / max(1, tests)


def fmean(values: Iterable[float]) -> float:
    """Arithmetic mean in plain floats (the statistics module's exact fractions are slow in a hot loop)."""
    items = list(values)
    return math.fsum(items) / len(items)


def sample_sd(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1 in the denominator); 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    mean = fmean(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


# ------------------------------------------------------------------------------------------ proportions


def proportion_spike(current: Counts, baseline_days: Sequence[Counts], *, tests: int = 1, alpha: float = 1e-4,
                     min_volume: int = 100, min_baseline_days: int = 3, min_ratio: float = 1.5,
                     min_increase: float = 0.01, min_day_cv: float = 0.1, prior_cv: float = 0.5
                     ) -> DriftResult | None:
    """Has the rate risen above the baseline days' rate by more than noise, and by enough to matter?

    ``baseline_days`` are the same window on trailing days (same hour of day: refusal and error rates follow
    the daily traffic mix). Days under ``min_volume`` are ignored; fewer than ``min_baseline_days`` usable days,
    or a current window under ``min_volume``, give None.

    Model: today's rate is the baseline rate p0 (pooled over the baseline days, with a half-event continuity
    correction so that a baseline without a single event does not make one event infinitely significant) times a
    day-to-day variation with coefficient of variation cv (at least ``min_day_cv``), plus the uncertainty of p0
    itself. Given cv the current count is beta-binomial, and its exact upper tail is the p-value: small counts
    (a dozen refusals an hour) have a heavier tail than the normal approximation admits.

    cv is not known, and a handful of days estimates it poorly: plugging the estimate in understates the tail
    whenever the baseline week happened to be calm, and with a real day-to-day variation of 20-30% the
    false-alarm rate was then several times ``alpha``. The p-value is therefore predictive: the beta-binomial
    tail averaged over the posterior of cv given the baseline days (:func:`day_cv_posterior`; half-normal prior
    with scale ``prior_cv``). Seven days of a few hundred calls cannot tell a 10% from a 40% variation apart;
    the test then weighs both. ``bench/drift_false_alarms.py`` measures the false-alarm rate against ``alpha``.

    One-sided: only increases are findings. Finding when p < alpha / tests, p1 >= min_ratio * p0 and
    p1 - p0 >= min_increase. ``statistic`` is the equivalent z score.
    """
    days = [d for d in baseline_days if d.trials >= min_volume]
    if current.trials < min_volume or len(days) < min_baseline_days:
        return None
    n0 = sum(d.trials for d in days)
    x0 = sum(d.events for d in days)
    p0 = (x0 + 0.5) / (n0 + 1.0)
    p1 = current.rate
    binomial = p0 * (1.0 - p0)
    x, n = round(current.events), round(current.trials)
    posterior = day_cv_posterior([d.rate for d in days], [binomial / d.trials for d in days], p0, prior_cv)
    p_value = 0.0
    for cv, weight in posterior:
        tau2 = (max(cv, min_day_cv) * p0) ** 2
        spread = tau2 * (1.0 + 1.0 / len(days)) + binomial / n0  # today's rate around p0, as a variance
        p_value += weight * beta_binomial_upper_tail(x, n, p0, spread)
    p_value = min(1.0, p_value)
    level = _alpha_per_test(alpha, tests)
    z = -_NORMAL.inv_cdf(max(p_value, 1e-300)) if p_value < 0.5 else 0.0
    finding = p_value < level and p1 >= min_ratio * p0 and p1 - p0 >= min_increase
    return DriftResult(
        method="predictive beta-binomial tail (day-to-day variation with its uncertainty)", value=p1,
        baseline=x0 / n0 if n0 else 0.0, statistic=z, critical=_NORMAL.inv_cdf(1.0 - level), finding=finding,
        p_value=p_value,
        details={"events": f"{current.events:.0f}", "trials": f"{current.trials:.0f}",
                 "baseline_events": f"{x0:.0f}", "baseline_trials": f"{n0:.0f}", "baseline_days": str(len(days)),
                 "day_cv": f"{math.fsum(cv * w for cv, w in posterior):.3f}", "alpha_per_test": f"{level:.3g}"})


_CV_GRID: Final = tuple(i * 0.05 for i in range(41))  # day-to-day coefficients of variation 0 .. 2


def day_cv_posterior(rates: Sequence[float], binomial_variances: Sequence[float], p0: float,
                     prior_cv: float = 0.3) -> list[tuple[float, float]]:
    """The posterior of the day-to-day coefficient of variation cv of a rate, on a grid from 0 to 2: points and
    weights summing to 1 (points of negligible weight left out).

    Each day's observed rate is taken as normal with mean ``p0`` and variance (cv * p0)^2 plus that day's
    binomial variance (known from its calls), so binomial noise is never mistaken for day-to-day variation; the
    prior on cv is half-normal with scale ``prior_cv``. Why a posterior and not an estimate: a week of days
    estimates a variance with six degrees of freedom, and a test that takes the estimate as known pages after
    every calm week.
    """
    scale = max(prior_cv, 1e-6)
    logs = []
    # p0 is estimated from these same days: their deviations from it understate the spread by (k - 1) / k, so
    # the log-determinant is weighted by that too (restricted likelihood: k - 1 degrees of freedom, not k)
    restricted = (len(rates) - 1) / len(rates) if len(rates) > 1 else 1.0
    for cv in _CV_GRID:
        tau2 = (cv * p0) ** 2
        log_lik = 0.0
        for rate, var in zip(rates, binomial_variances):
            total = tau2 + var
            log_lik -= 0.5 * (restricted * math.log(total) + (rate - p0) ** 2 / total)
        logs.append(log_lik - 0.5 * (cv / scale) ** 2)
    top = max(logs)
    weights = [math.exp(v - top) for v in logs]
    total = math.fsum(weights)
    return [(cv, w / total) for cv, w in zip(_CV_GRID, weights) if w / total > 1e-12]


def beta_binomial_upper_tail(x: int, n: int, mean: float, variance: float) -> float:
    """P(X >= x) for X ~ BetaBinomial(n, a, b) whose Beta has this mean and variance (binomial at variance 0).

    Only upper tails are needed (is the count surprisingly high?): for x at or below the expected count the
    answer is at least about one half and 1.0 is returned. Terms are summed from x upwards until they no longer
    matter, so a million-call window with a count far in the tail costs a handful of terms.
    """
    if x <= 0:
        return 1.0
    if x > n:
        return 0.0
    if x <= n * mean:
        return 1.0
    mean = min(max(mean, 1e-12), 1.0 - 1e-12)
    size = mean * (1.0 - mean) / variance - 1.0 if variance > 0 else math.inf
    lgamma = math.lgamma
    log_choose = lgamma(n + 1) - lgamma(x + 1) - lgamma(n - x + 1)
    if math.isfinite(size) and size < 1e9:
        size = max(size, 1e-6)
        a, b = mean * size, (1.0 - mean) * size
        first = (log_choose + lgamma(x + a) + lgamma(n - x + b) - lgamma(n + a + b)
                 - (lgamma(a) + lgamma(b) - lgamma(a + b)))

        def ratio(k: int) -> float:  # pmf(k + 1) / pmf(k)
            return (n - k) / (k + 1) * (k + a) / (n - k - 1 + b)
        rising_again = b < 1.0  # U-shaped: mass piles up again towards n, so sum to the end
    else:
        first = log_choose + x * math.log(mean) + (n - x) * math.log1p(-mean)
        odds = mean / (1.0 - mean)

        def ratio(k: int) -> float:
            return (n - k) / (k + 1) * odds
        rising_again = False
    total, term, k = 1.0, 1.0, x
    while k < n and k - x < 200_000:
        term *= ratio(k)
        total += term
        k += 1
        if term < 1e-12 * total and not rising_again:
            break
    return min(1.0, math.exp(first) * total)


# ----------------------------------------------------------------------------------------------- lengths


def _cdf(counts: Mapping[int, float], bins: Sequence[int]) -> list[float]:
    total = sum(counts.values())
    out, acc = [], 0.0
    for b in bins:
        acc += counts.get(b, 0)
        out.append(acc / total if total else 0.0)
    return out


def ks_distance(a: Mapping[int, float], b: Mapping[int, float]) -> float:
    """Largest gap between the two binned empirical CDFs (a lower bound of the unbinned distance)."""
    bins = sorted(set(a) | set(b))
    return max((abs(x - y) for x, y in zip(_cdf(a, bins), _cdf(b, bins))), default=0.0)


def ks_p_value(distance: float, n1: float, n2: float) -> float:
    """Asymptotic two-sample Kolmogorov-Smirnov p-value, with Stephens' small-sample correction."""
    if distance <= 0 or n1 <= 0 or n2 <= 0:
        return 1.0
    ne = n1 * n2 / (n1 + n2)
    lam = (math.sqrt(ne) + 0.12 + 0.11 / math.sqrt(ne)) * distance
    if lam < 0.2:
        return 1.0
    total = sum((-1) ** (j - 1) * math.exp(-2.0 * j * j * lam * lam) for j in range(1, 101))
    return min(1.0, max(0.0, 2.0 * total))


def _merge(histograms: Sequence[Mapping[int, float]]) -> dict[int, float]:
    merged: dict[int, float] = {}
    for h in histograms:
        for b, n in h.items():
            merged[b] = merged.get(b, 0.0) + n
    return merged


def length_shift(current: Mapping[int, float], baseline_days: Sequence[Mapping[int, float]], *,
                 current_mean: float, baseline_mean: float, tests: int = 1, alpha: float = 1e-4,
                 min_volume: int = 200, min_baseline_days: int = 3, min_distance: float = 0.1,
                 spread_factor: float = 5.0) -> DriftResult | None:
    """Has the distribution of output tokens per call moved away from the baseline days'?

    Histograms map bin -> calls (log-spaced bins, see :data:`inferwatch_alerts.signals.LENGTH_BIN_SQL`).
    Finding when the binned KS distance D between the current window and the pooled baseline days has
    p < alpha / tests (more than sampling noise), D >= ``min_distance`` (large enough to matter), and D is at
    least ``spread_factor`` times the typical (root-mean-square) distance of a baseline day from the other
    baseline days. The last guard is the day-to-day one: the KS test knows only sampling noise, but answers get
    longer and shorter from day to day with the traffic mix, so a window is anomalous only when it lies several
    normal day-to-day spreads away (a control limit, like a 5-sigma limit with the default factor). The means
    are reported, not tested: a change of shape with the same mean (half the answers now very short, half very
    long) counts too.
    """
    days = [d for d in baseline_days if sum(d.values()) >= min_volume]
    n1 = sum(current.values())
    if n1 < min_volume or len(days) < min_baseline_days:
        return None
    pooled = _merge(days)
    n0 = sum(pooled.values())
    distance = ks_distance(current, pooled)
    p_value = ks_p_value(distance, n1, n0)
    leave_one_out = [ks_distance(day, _merge([d for d in days if d is not day])) for day in days]
    normal_spread = math.sqrt(fmean(d * d for d in leave_one_out))
    critical = max(min_distance, spread_factor * normal_spread)
    level = _alpha_per_test(alpha, tests)
    finding = p_value < level and distance >= critical
    return DriftResult(
        method="binned two-sample Kolmogorov-Smirnov", value=current_mean, baseline=baseline_mean,
        statistic=distance, critical=critical, finding=finding, p_value=p_value,
        details={"calls": f"{n1:.0f}", "baseline_calls": f"{n0:.0f}", "baseline_days": str(len(days)),
                 "normal_day_distance": f"{normal_spread:.4f}", "alpha_per_test": f"{level:.3g}"})


# ---------------------------------------------------------------------------------------------- latency


def percentile_creep(daily: Sequence[float | None], *, noise: Sequence[float | None] | None = None,
                     reference_days: int = 7, k: float = 0.5, h: float = 5.0, min_rel_sd: float = 0.03,
                     min_reference: int = 4, confidence: float = 0.9, max_z: float = 3.0) -> DriftResult | None:
    """Has a daily latency percentile crept up against a reference period?

    ``daily``: one value per day, oldest first, the current day last (None: too few calls that day). The first
    ``reference_days`` are the reference, the rest are monitored. Each monitored day's value becomes
    z = (log v - mean) / sd against the reference days' logs, and a one-sided CUSUM S = max(0, S + z - k)
    accumulates them. Finding when S >= h at the current day and the current day is still above the reference
    (a creep that has already gone back down is not reported on the strength of older days).

    The spread ``sd`` is the largest of three, because underestimating it is what makes a CUSUM page on noise:

    * the reference days' sample standard deviation, raised to its upper ``confidence`` bound (seven days give a
      poor estimate: a calm week understates the spread a third of the time);
    * the sampling noise of the percentile itself (``noise``: per day, the standard error of the log, see
      :func:`inferwatch_alerts.signals.quantile_noise_of`), which dominates for groups with a few hundred calls
      a day;
    * ``min_rel_sd`` (about a relative spread), so a perfectly steady reference does not turn a 1% wobble into an
      alarm.

    Each day's z is clipped at ``max_z`` before it is added: a creep is a run of raised days, and one outlier
    day (a 30-minute incident that moved the day's p95 tenfold) must not fire alone. With max_z - k < h (checked
    by the rules parser) at least two raised days are needed.

    With the defaults (k = 0.5, h = 5, max_z = 3, in units of that spread) a step of 3 spreads is found on its
    second day and a steady creep of one spread a day within about four days, while a stationary series raises
    a false alarm about once in several hundred days (the CUSUM's in-control run length).
    """
    reference = [v for v in daily[:reference_days] if v is not None and v > 0]
    monitored = list(daily[reference_days:])
    if len(reference) < min_reference or not monitored or monitored[-1] is None or monitored[-1] <= 0:
        return None
    logs = [math.log(v) for v in reference]
    mean = fmean(logs)
    df = len(logs) - 1
    upper = sample_sd(logs) * math.sqrt(df / _chi2_quantile(1.0 - confidence, df))
    noises = [n for n in (noise or ()) if n is not None and n > 0]
    sampling = math.sqrt(fmean(n * n for n in noises)) if noises else 0.0
    sd = max(upper, sampling, math.log1p(min_rel_sd), _MIN_SD)
    cusum, peak_day, z = 0.0, 0, 0.0
    for i, value in enumerate(monitored):
        if value is None or value <= 0:
            continue
        z = (math.log(value) - mean) / sd
        cusum = max(0.0, cusum + min(z, max_z) - k)
        if cusum == 0.0:
            peak_day = i + 1
    current = float(monitored[-1])
    baseline = math.exp(mean)
    return DriftResult(
        method="one-sided CUSUM of log daily values", value=current, baseline=baseline, statistic=cusum,
        critical=h, finding=cusum >= h and z > 0,
        details={"reference_days": str(len(reference)), "reference_sd_log": f"{sd:.4f}",
                 "sampling_sd_log": f"{sampling:.4f}", "change": f"{current / baseline - 1.0:+.1%}",
                 "rising_for_days": str(max(0, len(monitored) - peak_day)), "k": f"{k:g}"})


_MIN_SD: Final = 1e-6  # a reference of identical days and min_rel_sd 0 must not divide by zero


def _chi2_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of a chi-square with ``df`` degrees of freedom (Wilson-Hilferty, within 1% here)."""
    z = _NORMAL.inv_cdf(p)
    c = 2.0 / (9.0 * df)
    return df * max(1e-9, 1.0 - c + z * math.sqrt(c)) ** 3
