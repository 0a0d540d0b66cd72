"""False-alarm rate of ``proportion_spike`` against its nominal alpha when daily rates really vary.

Simulates a rate signal (say refusals) whose true rate changes from day to day by a coefficient of variation
``cv`` (gamma-distributed multipliers: 0%, 10%, 20%, 30%), with binomial counts on top: seven baseline days
and a current window from the same process, so every finding is a false alarm. Measures how often the
detector's p-value falls under ``alpha``, for two tests in the same run on the same draws:

* ``plug-in``: the day-to-day variance estimated from the baseline days plugged straight into the
  beta-binomial (the test before issue 30);
* ``predictive``: :func:`inferwatch_alerts.drift.proportion_spike` now, averaging over that estimate's
  uncertainty.

Usage (from the repository root)::

    .venv/bin/python bench/drift_false_alarms.py                      # ~9 min on 2 loaded cores
    .venv/bin/python bench/drift_false_alarms.py --reps 4000 --alpha 0.01 --seed 7

Prints one row per cv: the false-alarm rates, their ratio to alpha, and a PASS/FAIL against the target
(predictive at most 2x alpha). The fast check in ``tests/bench/test_drift_false_alarms.py`` runs a small version.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "alerts") not in sys.path:
    sys.path.insert(0, str(ROOT / "alerts"))

from inferwatch_alerts.drift import (  # noqa: E402 (the path above makes the package importable)
    Counts,
    beta_binomial_upper_tail,
    fmean,
    proportion_spike,
    sample_sd,
)

TARGET_RATIO = 2.0


def plug_in_p_value(current: Counts, days: Sequence[Counts], min_day_cv: float = 0.1) -> float:
    """The test before issue 30: the baseline days' variance beyond binomial noise, plugged in as if known."""
    n0 = sum(d.trials for d in days)
    x0 = sum(d.events for d in days)
    p0 = (x0 + 0.5) / (n0 + 1.0)
    binomial = p0 * (1.0 - p0)
    between = sample_sd([d.rate for d in days]) ** 2
    expected = fmean(binomial / d.trials for d in days)
    tau2 = max(between - expected, (min_day_cv * p0) ** 2)
    spread = tau2 * (1.0 + 1.0 / len(days)) + binomial / n0
    return beta_binomial_upper_tail(round(current.events), round(current.trials), p0, spread)


@dataclass(frozen=True)
class Rates:
    cv: float
    reps: int
    alpha: float
    plug_in: float
    predictive: float


def false_alarm_rates(cv: float, *, reps: int, alpha: float, seed: int, days: int = 7, calls: int = 1000,
                      rate: float = 0.02, min_day_cv: float = 0.1) -> Rates:
    """Share of ``reps`` null draws (current window from the same process as the baseline) whose p-value is
    under ``alpha``, for the plug-in and the predictive test. Gamma day multipliers with mean 1 and sd ``cv``."""
    rng = np.random.default_rng(seed)
    if cv > 0:
        shape = 1.0 / (cv * cv)
        multipliers = rng.gamma(shape, 1.0 / shape, size=(reps, days + 1))
    else:
        multipliers = np.ones((reps, days + 1))
    events = rng.binomial(calls, np.clip(rate * multipliers, 0.0, 1.0))
    plug_in = predictive = 0
    for row in events:
        baseline = [Counts(float(e), float(calls)) for e in row[1:]]
        current = Counts(float(row[0]), float(calls))
        if plug_in_p_value(current, baseline, min_day_cv) < alpha:
            plug_in += 1
        result = proportion_spike(current, baseline, alpha=alpha, min_volume=1, min_baseline_days=days,
                                  min_ratio=1.0, min_increase=0.0, min_day_cv=min_day_cv)
        if result is not None and result.p_value is not None and result.p_value < alpha:
            predictive += 1
    return Rates(cv, reps, alpha, plug_in / reps, predictive / reps)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=20000, help="null draws per cv (default 20000)")
    parser.add_argument("--alpha", type=float, default=0.01, help="nominal level (default 0.01)")
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--calls", type=int, default=1000, help="calls per window (default 1000)")
    parser.add_argument("--rate", type=float, default=0.02, help="mean rate (default 2%%)")
    parser.add_argument("--cvs", default="0,0.1,0.2,0.3", help="day-to-day variations (default 0,0.1,0.2,0.3)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"proportion_spike false alarms: {args.reps} null draws per row, alpha {args.alpha:g}, "
          f"{args.calls} calls per window at {args.rate:.1%}, 7 baseline days, seed {args.seed}")
    print(f"{'day cv':>7} {'plug-in':>9} {'x alpha':>8} {'predictive':>11} {'x alpha':>8}  target <= "
          f"{TARGET_RATIO:g}x")
    ok = True
    for i, text in enumerate(args.cvs.split(",")):
        r = false_alarm_rates(float(text), reps=args.reps, alpha=args.alpha, seed=args.seed + i,
                              calls=args.calls, rate=args.rate)
        good = r.predictive <= TARGET_RATIO * args.alpha
        ok &= good
        print(f"{r.cv:>7.0%} {r.plug_in:>9.4f} {r.plug_in / args.alpha:>8.2f} {r.predictive:>11.4f} "
              f"{r.predictive / args.alpha:>8.2f}  {'PASS' if good else 'FAIL'}")
    # binomial sampling error of a rate near alpha, so a reader can tell noise from bias
    se = math.sqrt(args.alpha * (1 - args.alpha) / args.reps) / args.alpha
    print(f"(one standard error of a ratio near 1: {se:.2f}; {time.perf_counter() - started:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
