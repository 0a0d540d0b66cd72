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
from dataclasses import dataclass
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


def quantile_bound(q: float, noise: float, confidence: float, *, upper: bool) -> float:
    """The one-sided bound of a percentile ``q`` at ``confidence``, with ``noise`` its relative standard error
    (:func:`~.signals.quantile_noise_of`): ``q * exp(-z * noise)`` (lower) or ``q * exp(z * noise)`` (upper).

    Why: a p95 from a few dozen calls is the second or third slowest call. At a normal 1-2% of calls slower than
    2 s, a 5-minute window of 90 calls shows p95 > 2 s about one window in fifty; a bound that accounts for
    how few calls the percentile stands on does not, while a real regression (every call slower) clears it.
    """
    z = NormalDist().inv_cdf(confidence)
    return q * math.exp((z if upper else -z) * max(noise, 0.0))


def guarded_quantile(cond: Threshold, q: float, noise: float) -> Verdict:
    """``cond`` applied to the percentile ``q`` (relative noise ``noise``) with its confidence bound."""
    assert cond.confidence is not None
    compared = quantile_bound(q, noise, cond.confidence, upper=cond.op in ("<", "<="))
    return Verdict(OPS[cond.op](compared, cond.value), compared, 0.0)
