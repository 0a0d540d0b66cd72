"""Report periods: whole UTC days, each compared with the equally long period immediately before it.

``day`` D is that day, compared with D − 1. ``month`` D is month to date, the 1st of D's month through D,
compared with the same number of days immediately before it (March 1–15 with February 14–28): equal lengths make
the comparison fair, whereas "the same days last month" does not exist for March 29–31.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, timedelta

PERIODS = ("day", "month")


class ReportError(ValueError):
    """Bad report parameters; the message names the parameter."""


@dataclass(frozen=True)
class Period:
    """A report period of whole UTC days, ``start``..``end`` inclusive, and the equally long one before it."""

    kind: str
    start: date
    end: date
    previous_start: date
    previous_end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    @property
    def month_start(self) -> date:
        return self.end.replace(day=1)

    @property
    def month_end(self) -> date:
        return self.end.replace(day=calendar.monthrange(self.end.year, self.end.month)[1])


def period_bounds(kind: str, day: date) -> Period:
    """The ``day`` or ``month`` (to date) period ending on ``day`` (see the module docstring)."""
    if kind not in PERIODS:
        raise ReportError(f"period must be one of {', '.join(PERIODS)}, got {kind!r}")
    start = day if kind == "day" else day.replace(day=1)
    length = (day - start).days + 1
    return Period(kind, start, day, start - timedelta(days=length), start - timedelta(days=1))


def parse_day(text: str | None, today: date, name: str = "date") -> date:
    """``YYYY-MM-DD`` (default: ``today``), not after today; :class:`ReportError` names the parameter."""
    if text is None or text == "":
        return today
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ReportError(f"{name} must be a day as YYYY-MM-DD, got {text!r}") from None
    if day > today:
        raise ReportError(f"{name} {day} is in the future (today is {today}, UTC)")
    return day

