"""Month-end cost forecast: spent so far + mean daily cost × days left, with a 90% t-prediction interval.

The sample is the complete days of the month from the project's first active day of the month (so a project
that started mid-month is not diluted by the empty days before it). For R days left (fractional when the period
ends today) and n sampled days with mean m and standard deviation s, the remaining cost is
R·m ± t(0.95, n − 1)·s·√(R + R²/n): R·s² is the variance of R future days, R²·s²/n that of the estimated
mean.
The low end never goes below what is already spent. Days are taken as independent and without weekly pattern;
with fewer than two complete days there is a point forecast (one day) or none (no day) and no range.
"""

from __future__ import annotations

import calendar
import math
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from .model import Forecast

FORECAST_LEVEL = 0.90
# t(0.95, df) for df = 1..30 (a forecast samples at most 30 days: df <= 29); beyond, the normal quantile.
_T95 = (6.313752, 2.919986, 2.353363, 2.131847, 2.015048, 1.943180, 1.894579, 1.859548, 1.833113, 1.812461,
        1.795885, 1.782288, 1.770933, 1.761310, 1.753050, 1.745884, 1.739607, 1.734064, 1.729133, 1.724718,
        1.720743, 1.717144, 1.713872, 1.710882, 1.708141, 1.705618, 1.703288, 1.701131, 1.699127, 1.697261)
_Z95 = 1.644854


def _t95(df: int) -> float:
    return _T95[df - 1] if df <= len(_T95) else _Z95


def forecast_month_end(daily_cost: Mapping[date, float], as_of: date, now: datetime) -> Forecast:
    """Month-end cost of ``as_of``'s month from the daily costs of its days so far (``daily_cost`` holds the
    days with calls; a missing day cost nothing)."""
    month_start = as_of.replace(day=1)
    days_in_month = calendar.monthrange(as_of.year, as_of.month)[1]
    month_end = as_of.replace(day=days_in_month)
    today = now.astimezone(UTC).date()
    spent = math.fsum(cost for day, cost in daily_cost.items() if month_start <= day <= as_of)
    remaining = float((month_end - as_of).days)
    if as_of >= today:  # the last day is still running: what is left of it is to come as well
        midnight = datetime(today.year, today.month, today.day, tzinfo=UTC)
        remaining += max(0.0, 1.0 - (now.astimezone(UTC) - midnight).total_seconds() / 86400)
    last_complete = min(as_of, today - timedelta(days=1))
    active = [day for day in daily_cost if month_start <= day <= last_complete]
    sample: list[float] = []
    if active:
        first = min(active)
        sample = [daily_cost.get(first + timedelta(days=i), 0.0) for i in range((last_complete - first).days + 1)]
    n = len(sample)
    month = f"{as_of.year:04d}-{as_of.month:02d}"
    base: dict[str, Any] = {"month": month, "spent_usd": spent, "days_in_month": days_in_month,
                            "days_sampled": n, "days_remaining": remaining, "level": FORECAST_LEVEL}
    if remaining == 0:
        return Forecast(**base, daily_mean_usd=None, daily_sd_usd=None, month_end_usd=spent, low_usd=spent,
                        high_usd=spent, method="month complete: the forecast is what was spent")
    if n == 0:
        return Forecast(**base, daily_mean_usd=None, daily_sd_usd=None, month_end_usd=None, low_usd=None,
                        high_usd=None, method="no complete day with calls this month yet: no forecast")
    mean = math.fsum(sample) / n
    point = spent + mean * remaining
    if n == 1:
        return Forecast(**base, daily_mean_usd=mean, daily_sd_usd=None, month_end_usd=point, low_usd=None,
                        high_usd=None, method="spent + 1 complete day's cost x days left; a range needs 2 days")
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in sample) / (n - 1))
    half = _t95(n - 1) * sd * math.sqrt(remaining + remaining * remaining / n)
    return Forecast(**base, daily_mean_usd=mean, daily_sd_usd=sd, month_end_usd=point,
                    low_usd=max(spent, point - half), high_usd=point + half,
                    method=f"spent + mean of {n} complete days x days left; {FORECAST_LEVEL:.0%} t prediction "
                           f"interval (df {n - 1})")

