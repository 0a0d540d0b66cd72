"""Scoring a backtest against ground truth: which fired alert detected which planted incident, how late, and
which alerts were false. Pure: a backtest's incidents and the rules in, a :class:`WeekScore` out.

Matching is by what an alert watches, not by its id (rules are renamed and split; the signal is what says
"errors" or "TTFT"): an alert matches a planted change when

- its rule's signal is in the change's signal family (:data:`examples.sim_incidents.SIGNAL_FAMILIES`: an error
  burst is seen on ``error_rate``, a cost spike on ``cost_per_hour``/``request_rate``/token rates, ...);
- its series does not contradict the change's scope: a ``model=`` label must name the change's model when the
  change is confined to a model, a ``feature=`` label its feature (a project-level series, or a per-feature
  series for a per-model change, sees it diluted and counts);
- it was firing at some time in ``[start, end + max_delay]`` of the change (blips: ``[start, end + 15 min]``).

The delay is from the change's start to the first matching alert's firing (0 if one was firing already). An
alert that matches no real incident is false, an alert that matches a blip too (a blip must never alert).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from examples.sim_incidents import SIGNAL_FAMILIES, Planted
from inferwatch_alerts.backtest import Incident

BLIP_GRACE = timedelta(minutes=15)
SEVERITIES = ("critical", "warning", "info")


@dataclass(frozen=True)
class Fired:
    """One fired alert of a backtest, with the signal its rule watches."""

    project: str
    rule_id: str
    signal: str
    severity: str
    labels: Mapping[str, str]
    fired_at: datetime
    resolved_at: datetime | None  # None: still firing at the end of the backtest

    def describe(self) -> str:
        scope = ",".join(f"{k}={v}" for k, v in self.labels.items()) or "project"
        return f"{self.fired_at:%a %H:%M} {self.severity:<8} {self.rule_id} [{scope}]"


@dataclass
class Detection:
    """What the alerts made of one planted change."""

    planted: Planted
    matches: list[Fired] = field(default_factory=list)

    @property
    def first(self) -> Fired | None:
        return min(self.matches, key=lambda f: f.fired_at) if self.matches else None

    @property
    def delay(self) -> timedelta | None:
        first = self.first
        return None if first is None else max(timedelta(0), first.fired_at - self.planted.start)

    @property
    def verdict(self) -> str:
        """``ok``/``late``/``MISS`` for an incident; ``quiet``/``ALERTED`` for a blip."""
        if self.planted.is_blip:
            return "ALERTED" if self.matches else "quiet"
        if self.delay is None:
            return "MISS"
        return "ok" if self.delay <= self.planted.max_delay else "late"


@dataclass
class WeekScore:
    """One simulated week (one project): its detections and its false alerts."""

    name: str
    start: datetime
    end: datetime
    detections: list[Detection]
    false_alerts: list[Fired]
    first_day_end: datetime | None = None  # set for a fresh install: its first day is reported on its own

    def false_by_severity(self) -> dict[str, int]:
        return {s: sum(f.severity == s for f in self.false_alerts) for s in SEVERITIES}

    def first_day_false(self) -> list[Fired]:
        if self.first_day_end is None:
            return []
        return [f for f in self.false_alerts if f.fired_at < self.first_day_end]


def parse_series_key(key: str) -> dict[str, str]:
    """``model=gpt-4o,feature=a\\,b`` -> labels (the inverse of ``alert_state.series_key``; ``project`` -> {})."""
    if key == "project":
        return {}
    labels, name, buf, escaped = {}, None, [], False
    for ch in key + ",":
        if escaped:
            buf.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "=" and name is None:
            name, buf = "".join(buf), []
        elif ch == ",":
            if name is not None:
                labels[name] = "".join(buf)
            name, buf = None, []
        else:
            buf.append(ch)
    return labels


def matches(fired: Fired, planted: Planted, end: datetime) -> bool:
    """Whether ``fired`` shows ``planted`` (signal family, scope, time); ``end`` closes alerts still firing."""
    if fired.signal not in SIGNAL_FAMILIES[planted.family]:
        return False
    if planted.model and fired.labels.get("model", planted.model) != planted.model:
        return False
    if planted.feature and fired.labels.get("feature", planted.feature) != planted.feature:
        return False
    window_end = planted.end + (BLIP_GRACE if planted.max_delay is None else planted.max_delay)
    return fired.fired_at <= window_end and (fired.resolved_at or end) >= planted.start


def score_week(name: str, fired: Iterable[Fired], planted: Sequence[Planted], start: datetime, end: datetime,
               *, fresh_install: bool = False) -> WeekScore:
    """Match ``fired`` (one project's alerts in ``[start, end]``) to ``planted``; the rest are false alerts."""
    fired = sorted(fired, key=lambda f: f.fired_at)
    detections = [Detection(p) for p in planted]
    false_alerts = []
    for f in fired:
        hits = [d for d in detections if matches(f, d.planted, end)]
        for d in hits:
            d.matches.append(f)
        if not hits or all(d.planted.is_blip for d in hits):
            false_alerts.append(f)
    return WeekScore(name, start, end, detections, false_alerts,
                     start + timedelta(days=1) if fresh_install else None)


def fired_from_backtest(incidents: Iterable[Incident], signal_of: Mapping[str, str]) -> dict[str, list[Fired]]:
    """The backtest's incidents as :class:`Fired`, per project (``signal_of``: rule id -> signal name)."""
    out: dict[str, list[Fired]] = {}
    for i in incidents:
        f = Fired(i.project_id, i.rule_id, signal_of.get(i.rule_id, "?"), i.severity,
                  parse_series_key(i.series_key), i.fired_at, i.resolved_at)
        out.setdefault(f.project, []).append(f)
    return out


def format_delay(delay: timedelta | None) -> str:
    if delay is None:
        return "-"
    s = int(delay.total_seconds())
    if s >= 86400:
        return f"{s / 86400:.1f} d"
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} m"
    return f"{s // 60} m"
