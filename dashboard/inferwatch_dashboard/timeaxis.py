"""The x axis of every time-series chart: its buckets, its fixed range and its ticks. Pure.

Why a fixed axis: left to itself, Plotly ranges a date axis over the data, so one bucket of a few minutes' traffic
becomes an axis of a millisecond with ticks like ``02:14:59.999``, and a quiet night vanishes from the chart
instead of showing as a quiet night. Here the axis is the selected window (its first bucket included whole),
every bucket of it is on the grid, and the ticks step at a round interval with labels for that interval: times of
day up to a day, dates beyond (never below the minute).

Missing buckets (no calls in them) are handled per measure, see :data:`ZERO` and :data:`GAP`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pandas as pd

from .timerange import Window

BUCKET_SECONDS: dict[str, int] = {"minute": 60, "5m": 300, "15m": 900, "hour": 3600, "day": 86400}
#: A count or a sum of no calls is 0: calls and cost are drawn as zero in an empty bucket.
ZERO = "zero"
#: A percentile or a rate of no calls does not exist: latency and quality leave the empty bucket as a gap (drawing
#: 0 there would claim "0 ms" or "0% errors").
GAP = "gap"
MAX_TICKS = 8
_DAY = 86400
#: tick steps in seconds, then in months (Plotly's "M<n>")
_STEPS: tuple[int, ...] = (60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, _DAY, 2 * _DAY, 7 * _DAY,
                           14 * _DAY)
_MONTHS: tuple[int, ...] = (1, 2, 3, 6, 12)
_MONDAY = "2000-01-03"  # ticks of a day or less fall on midnight, weekly ones on Mondays
_MONTH_START = "2000-01-01"


def naive(moment: datetime | pd.Timestamp) -> pd.Timestamp:
    """UTC without a zone: Plotly ignores offsets, so data and range must both be plain UTC."""
    stamp = pd.Timestamp(moment)
    return stamp.tz_convert("UTC").tz_localize(None) if stamp.tzinfo is not None else stamp


@dataclass(frozen=True)
class TimeAxis:
    """A window cut into ``bucket`` buckets: ``start`` is the window's start rounded down to a whole bucket (the
    API answers whole buckets), ``end`` the window's end, both naive UTC."""

    start: pd.Timestamp
    end: pd.Timestamp
    bucket: str
    length: timedelta | None = None  # the window's own length (ticks follow it); None: ``end - start``

    @property
    def step(self) -> timedelta:
        return timedelta(seconds=BUCKET_SECONDS[self.bucket])

    def grid(self) -> pd.DatetimeIndex:
        """Every bucket's start in the window, in order."""
        return pd.date_range(self.start, self.end - pd.Timedelta(microseconds=1), freq=self.step)

    def ticks(self) -> dict[str, Any]:
        """Plotly tick settings: the smallest round step giving at most :data:`MAX_TICKS` ticks, and its format."""
        span = (self.length or (self.end - self.start)).total_seconds()
        seconds = next((s for s in _STEPS if span / s <= MAX_TICKS), None)
        if seconds is None:
            months = next((m for m in _MONTHS if span / (m * 30 * _DAY) <= MAX_TICKS), _MONTHS[-1])
            form = "%b %Y" if months >= 3 else "%b %d"
            return {"dtick": f"M{months}", "tick0": _MONTH_START, "tickformat": form}
        if seconds >= _DAY:
            form = "%b %d"
        elif span <= _DAY:
            form = "%H:%M"
        else:
            form = "%b %d %H:%M"
        return {"dtick": seconds * 1000, "tick0": _MONDAY, "tickformat": form}

    def layout(self) -> dict[str, Any]:
        """The x axis of a figure: fixed to the window, round ticks, the bucket's start when hovering."""
        hover = "%Y-%m-%d" if self.bucket == "day" else "%b %d %H:%M"
        return {"type": "date", "range": [self.start.isoformat(), self.end.isoformat()], "autorange": False,
                "hoverformat": f"{hover} UTC", "title": {"text": "UTC"}, **self.ticks()}

    def complete(self, frame: pd.DataFrame, y: str, *, by: str | None, missing: str) -> pd.DataFrame:
        """``frame``'s ``y`` on every bucket of the grid, one row per (bucket, ``by`` value), ``t`` naive UTC.

        An empty bucket is 0 (``missing`` = :data:`ZERO`) or NaN (:data:`GAP`, drawn as a break in the line).
        Rows outside the window are dropped; rows of one bucket and name are summed (only counts and sums repeat:
        the API answers one row per bucket and name).
        """
        grid = self.grid()
        fill = 0.0 if missing == ZERO else float("nan")
        rows = frame if y in frame else frame.iloc[0:0].assign(**{y: []})
        if not rows.empty:
            rows = rows.assign(t=rows["t"].map(naive))
            rows = rows[(rows["t"] >= self.start) & (rows["t"] < self.end)]
        if not by:
            values = rows.groupby("t")[y].sum(min_count=1) if not rows.empty else pd.Series(dtype=float)
            values = values.reindex(grid).astype(float).fillna(fill)
            return pd.DataFrame({"t": grid, y: values.to_numpy(dtype=float)})
        names = sorted(frame[by].astype(str).unique()) if by in frame else []
        keys = pd.MultiIndex.from_product([grid, names], names=["t", by])
        if rows.empty:
            values = pd.Series(float("nan"), index=keys)
        else:
            values = rows.assign(**{by: rows[by].astype(str)}).groupby(["t", by])[y].sum(min_count=1)
            values = values.reindex(keys).astype(float)
        return values.fillna(fill).rename(y).reset_index()


def axis(win: Window, bucket: str) -> TimeAxis:
    """The axis of a chart over ``win`` at ``bucket`` (one of :data:`BUCKET_SECONDS`)."""
    step = pd.Timedelta(seconds=BUCKET_SECONDS[bucket])
    start = naive(win.start)
    return TimeAxis(start.floor(step), naive(win.end), bucket, win.length)
