"""Backtest: replay alert evaluation over stored history, as if the scheduler had run then.

Users tune thresholds on last week's traffic: "with TTFT p95 > 1.5 s for 10 minutes, what would have paged, and
when?" The replay calls :func:`inferwatch_alerts.evaluate.evaluate` at each tick from ``start`` to ``end`` (the
very function the scheduler runs, with the evaluation time as its argument), so what it reports is what the
scheduler would have done with those rules, including ``for`` durations, re-notifications, silences that were
active then, and hourly drift rules on the hour.

States live in memory (:class:`~.alert_state.MemoryBackend`): ``alert_state`` and ``alert_events``
are not touched unless ``persist`` is asked for, and nothing is sent unless a dispatcher is given (``--notify``).
A replay starts with no open incidents. A week at one-minute steps is about ten thousand evaluations; what makes
that affordable is that an observation depends only on the data and its window end, not on alert state, so
threshold and baseline rules are read a block of upcoming ticks at a time (:class:`~.prefetch.BlockObserver`,
``block`` ticks per read, hourly proportion-drift rules a day of hours; ``block=0`` reads each tick on its own,
as the scheduler does) while the state machine still runs tick by tick. Length and creep detectors are read at
each hour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from inferwatch_collector.store import Store

from .alert_state import AlertEvent, DbBackend, MemoryBackend, Series, StateBackend
from .evaluate import Sent, evaluate, window_end
from .observations import observe
from .prefetch import BLOCK, BlockObserver
from .rules import RuleSet
from .silences import Silence, list_silences
from .timeutil import iso_s as _iso, utc as _utc

if TYPE_CHECKING:
    from .notifiers.dispatch import Dispatcher

MAX_TICKS = 200_000


class BacktestError(ValueError):
    """Bad backtest arguments (the message says which)."""


@dataclass(frozen=True)
class Incident:
    """One would-be alert: when it fired, when it resolved (None: still firing at the end), its peak value."""

    project_id: str
    rule_id: str
    series_key: str
    severity: str
    fired_at: datetime
    resolved_at: datetime | None
    peak: float
    dedup_key: str

    def to_json(self) -> dict[str, Any]:
        return {"project_id": self.project_id, "rule_id": self.rule_id, "series_key": self.series_key,
                "severity": self.severity, "fired_at": _iso(self.fired_at),
                "resolved_at": _iso(self.resolved_at) if self.resolved_at else None, "peak": self.peak,
                "dedup_key": self.dedup_key}


@dataclass
class BacktestReport:
    start: datetime
    end: datetime
    step_s: int
    ticks: int = 0
    events: list[AlertEvent] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    failed: dict[str, int] = field(default_factory=dict)
    open_series: list[Series] = field(default_factory=list)

    def incidents(self) -> list[Incident]:
        """Fired alerts in firing order, each with its resolve time (pending that never fired is left out)."""
        open_: dict[tuple[str, str, str], dict[str, Any]] = {}
        done: list[Incident] = []
        for e in self.events:
            key = (e.project_id, e.rule_id, e.series_key)
            if e.state in ("firing", "no_data") and key not in open_:
                open_[key] = {"fired": e.event_time, "peak": e.value, "severity": e.severity,
                              "dedup": e.labels.get("dedup_key", "")}
            elif e.state in ("firing", "no_data"):
                open_[key]["peak"] = max(open_[key]["peak"], e.value)
            elif e.state == "resolved" and key in open_:
                o = open_.pop(key)
                done.append(Incident(*key, o["severity"], o["fired"], e.event_time, o["peak"], o["dedup"]))
        done += [Incident(*k, o["severity"], o["fired"], None, o["peak"], o["dedup"]) for k, o in open_.items()]
        return sorted(done, key=lambda i: (i.fired_at, i.project_id, i.rule_id, i.series_key))

    def to_json(self) -> dict[str, Any]:
        return {"start": _iso(self.start), "end": _iso(self.end), "step_s": self.step_s, "ticks": self.ticks,
                "incidents": [i.to_json() for i in self.incidents()],
                "events": [{"time": _iso(e.event_time), "project_id": e.project_id, "rule_id": e.rule_id,
                            "series_key": e.series_key, "state": e.state, "value": e.value,
                            "message": e.message} for e in self.events],
                "notifications": [{"time": _iso(s.event_time), "kind": s.kind, "project_id": s.project_id,
                                   "rule_id": s.rule_id, "series_key": s.series_key, "channels": list(s.channels),
                                   "delivered": [d.channel for d in s.deliveries if d.ok]} for s in self.sent],
                "failed_rules": dict(self.failed)}


def _silences(store: Store) -> list[Silence] | None:
    """Every silence, read once for the whole replay (each tick keeps those active then); None, so each tick
    reads its own, when they cannot be read now."""
    try:
        return list_silences(store, None)
    except Exception:  # as in evaluate: a silence table problem must not stop the replay
        return None


def backtest(store: Store, ruleset: RuleSet, start: datetime, end: datetime, *, step_s: int = 60,
             projects: Sequence[str] | None = None, dispatcher: Dispatcher | None = None,
             persist: bool = False, block: int = BLOCK) -> BacktestReport:
    """Evaluate ``ruleset`` at every ``step_s`` from ``start`` to ``end`` (inclusive); see the module docstring.
    ``block``: evaluations read at once per threshold or baseline rule (0: one read per evaluation); the
    report is the same either way."""
    start, end = _utc(start), _utc(end)
    if end < start:
        raise BacktestError("--to must not be before --from")
    if step_s < 60 or step_s % 60:
        raise BacktestError("the step must be a whole number of minutes")
    ticks = int((end - start).total_seconds() // step_s) + 1
    if ticks > MAX_TICKS:
        raise BacktestError(f"{ticks} evaluations: use a shorter range or a larger step (at most {MAX_TICKS})")
    backend: StateBackend = DbBackend(store) if persist else MemoryBackend()
    report = BacktestReport(start, end, step_s)
    previous = None
    silences = _silences(store)
    last = window_end(start + timedelta(seconds=(ticks - 1) * step_s), ruleset.evaluation_offset_s)
    observer = BlockObserver(step_s, last, block) if block else observe
    for i in range(ticks):
        at = start + timedelta(seconds=i * step_s)
        result = evaluate(store, ruleset, at, backend=backend, dispatcher=dispatcher, projects=projects,
                          previous_end=previous, force=previous is None, silences=silences, observer=observer)
        previous = result.end
        report.ticks += 1
        report.events.extend(result.events)
        report.sent.extend(result.sent)
        for rule_id in result.failed_rules:
            report.failed[rule_id] = report.failed.get(rule_id, 0) + 1
    report.open_series = [s for s in backend.load(projects).values() if s.state.active]
    return report
