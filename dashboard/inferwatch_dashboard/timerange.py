"""Time windows the sidebar offers, the period before them, and the bucket width their charts use. Pure.

The end of a preset window is "now" rounded up to the minute: identical requests within that minute share one
cached answer, and the 1-minute rollup's current minute is still included.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

PRESETS: dict[str, tuple[str, timedelta]] = {
    "1h": ("Last hour", timedelta(hours=1)),
    "6h": ("Last 6 hours", timedelta(hours=6)),
    "24h": ("Last 24 hours", timedelta(hours=24)),
    "7d": ("Last 7 days", timedelta(days=7)),
    "30d": ("Last 30 days", timedelta(days=30)),
    "90d": ("Last 90 days", timedelta(days=90)),
}
CUSTOM = "custom"
DEFAULT = "24h"
CHOICES: tuple[str, ...] = (*PRESETS, CUSTOM)


def label(choice: str) -> str:
    return PRESETS[choice][0] if choice in PRESETS else "Custom dates"


@dataclass(frozen=True)
class Window:
    """A half-open UTC range ``[start, end)`` with the words that describe it."""

    start: datetime
    end: datetime
    label: str

    @property
    def length(self) -> timedelta:
        return self.end - self.start

    def previous(self) -> Window:
        """The period of the same length just before (what the deltas compare with)."""
        return Window(self.start - self.length, self.start, f"previous {self.label.lower()}")

    def before(self, days: int) -> Window:
        """The ``days`` before this window (a baseline)."""
        return Window(self.start - timedelta(days=days), self.start, f"{days} days before")

    def params(self) -> dict[str, str]:
        return {"start": self.start.isoformat(), "end": self.end.isoformat()}

    def describe(self) -> str:
        fmt = "%Y-%m-%d %H:%M"
        return f"{self.label} ({self.start.strftime(fmt)} → {self.end.strftime(fmt)} UTC)"


def now_minute(now: datetime | None = None) -> datetime:
    """``now`` rounded up to the next whole minute (UTC)."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    floor = now.replace(second=0, microsecond=0)
    return floor if floor == now else floor + timedelta(minutes=1)


def window(choice: str, *, now: datetime | None = None, first: date | None = None, last: date | None = None
           ) -> Window:
    """The window for a preset, or for custom dates (whole UTC days ``first`` … ``last``, never past now)."""
    end = now_minute(now)
    if choice == CUSTOM and first is not None:
        last = last or first
        first, last = min(first, last), max(first, last)
        start = datetime.combine(first, time(), UTC)
        stop = min(datetime.combine(last + timedelta(days=1), time(), UTC), end)
        if stop <= start:
            stop = start + timedelta(days=1)
        return Window(start, stop, f"{first.isoformat()} to {last.isoformat()}")
    name, length = PRESETS.get(choice, PRESETS[DEFAULT])
    return Window(end - length, end, name)


def bucket(win: Window) -> str:
    """Bucket width for a chart over ``win``: about 30-200 buckets up to half a year (a 30-day range gets 31
    daily bars, not 2,880 15-minute ones), never finer than the API serves (hourly beyond 48 hours)."""
    span = win.length
    if span <= timedelta(hours=2):
        return "minute"
    if span <= timedelta(hours=12):
        return "5m"
    if span <= timedelta(hours=48):
        return "15m"
    if span <= timedelta(days=8):
        return "hour"
    return "day"
