"""The statistical guard of thresholds: is a rate (or a latency percentile) beyond its threshold with confidence,
not by a handful of events?

At a true 0.3% error rate, two to four failures in a window of 100 to 270 calls are routine, yet they make the
point rate 1-2%: a plain ``> 1%`` pages on them. The guard compares the Wilson score bound instead (the lower
bound for ``>``/``>=``: "the rate is above 1% with 95% confidence"; the upper bound for ``<``/``<=``) and asks for
a minimum count of events. Wilson's interval, unlike the normal approximation, stays inside [0, 1] and keeps its
coverage for small counts and rates near 0, which is exactly where alert windows live.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

from .rules import OPS, Threshold


def wilson_bound(events: float, trials: float, confidence: float, *, upper: bool) -> float:
    """The one-sided Wilson score bound of the rate ``events / trials`` at ``confidence`` (0.5 < c < 1).

    With z the standard normal quantile of ``confidence`` and p = events / trials::

        (p + z²/2n ± z·sqrt(p(1 - p)/n + z²/4n²)) / (1 + z²/n)

    ``-`` gives the lower bound, ``+`` the upper. No trials: the whole range (0 lower, 1 upper).
    """
    if trials <= 0:
        return 1.0 if upper else 0.0
    p = min(max(events / trials, 0.0), 1.0)
    z = NormalDist().inv_cdf(confidence)
    z2n = z * z / trials
    centre = p + z2n / 2.0
    spread = z * math.sqrt(p * (1.0 - p) / trials + z2n / (4.0 * trials))
    bound = (centre + spread if upper else centre - spread) / (1.0 + z2n)
    return min(max(bound, 0.0), 1.0)


@dataclass(frozen=True)
class Verdict:
    """A guarded comparison: ``breaching``, and the value compared (the bound, or the point rate)."""

    breaching: bool
    compared: float
    events: float


def guarded(cond: Threshold, events: float, trials: float) -> Verdict:
    """``cond`` applied to ``events`` out of ``trials`` with its guard: the Wilson bound at ``cond.confidence``
    (the point rate without one) beyond ``cond.value``, and at least ``cond.min_events`` events."""
    if cond.confidence is not None:
        compared = wilson_bound(events, trials, cond.confidence, upper=cond.op in ("<", "<="))
    else:
        compared = events / trials if trials > 0 else math.nan
    ok = trials > 0 and OPS[cond.op](compared, cond.value) and events >= cond.min_events
    return Verdict(ok, compared, events)


def quantile_bound(grid: Sequence[tuple[float, float]], level: float, n: float, confidence: float, *,
                   upper: bool) -> float:
    """The one-sided distribution-free bound of the ``level`` quantile of ``n`` values at ``confidence``: the
    sample's order statistic x(r) at the rank of :func:`order_statistic_rank`, read from ``grid`` (``(level,
    value)`` pairs of the same t-digest) at level (r - 0.5) / n, the grid point at or below it for a lower bound
    (at or above for an upper: never a value past x(r)). No such rank (too few values), or a level outside the
    grid: unbounded (``-inf`` lower, ``+inf`` upper), so nothing is claimed.

    It is the exact test of the rate rules turned around: "the p95 is above 2 s with 95% confidence" is "more than
    5% of calls are slower than 2 s, with 95% confidence", which holds exactly when x(r) is above 2 s. Why order
    statistics and not a spread: a p95 of a few dozen calls is its second or third slowest call, and a spread
    estimated from the neighbouring quantiles of the same few calls is as noisy as the p95 itself (two slow
    outliers side by side look like a tight, confident tail). The bound reads a lower rank: of 90 calls the 9th
    slowest instead of the 5th, of 9 calls the 2nd slowest at 80%, which a normal 1-3% of slow outliers rarely
    reaches, while a regression that slows every call moves it as much as the p95.
    """
    count = round(n)
    rank = order_statistic_rank(count, level, confidence, upper=upper)
    if rank is None:
        return math.inf if upper else -math.inf
    at = (rank - 0.5) / count
    points = [p for p in grid if (p[0] >= at if upper else p[0] <= at)]
    if not points:
        return math.inf if upper else -math.inf
    return points[0][1] if upper else points[-1][1]


@lru_cache(maxsize=4096)
def order_statistic_rank(n: int, level: float, confidence: float, *, upper: bool) -> int | None:
    """The rank r (1 = smallest of ``n``) whose order statistic bounds the ``level`` quantile at ``confidence``:
    for a lower bound the largest r with P(Binomial(n, level) >= r) >= confidence (x(r) is below the true
    quantile at least that often), for an upper bound the smallest r with P(Binomial(n, level) <= r - 1) >=
    confidence. None when no rank qualifies (too few values for that confidence)."""
    if n <= 0 or not 0.0 < level < 1.0:
        return None
    log_p, log_q = math.log(level), math.log1p(-level)
    head = math.lgamma(n + 1)

    def pmf(k: int) -> float:
        return math.exp(head - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q)

    tail = 0.0  # P(Binomial >= r), r going down from n
    for r in range(n, 0, -1):
        tail += pmf(r)
        if not upper and tail >= confidence:
            return r
        if upper and tail > 1.0 - confidence:
            return r + 1 if r < n else None
    return None if not upper else 1


def guarded_quantile(cond: Threshold, grid: Sequence[tuple[float, float]], level: float, n: float) -> Verdict:
    """``cond`` applied to the ``level`` quantile of ``n`` values by its confidence bound
    (:func:`quantile_bound`)."""
    assert cond.confidence is not None
    compared = quantile_bound(grid, level, n, cond.confidence, upper=cond.op in ("<", "<="))
    return Verdict(OPS[cond.op](compared, cond.value), compared, 0.0)
