"""One evaluation of the alert rules at a given time: the function the scheduler runs every minute and the
backtest replays over history.

:func:`evaluate` takes the evaluation time as an argument and keeps nothing between calls: every series' state
comes from a :class:`StateBackend` (``alert_state`` for the scheduler, memory for a backtest), so a restarted
scheduler carries on mid-incident, and a backtest runs exactly the code that pages people.

One evaluation:

1. the data window ends ``evaluation_offset`` (60 s by default) before ``at``, on a minute boundary, so calls
   still being exported by SDK batching are not read as a dip; a rule evaluated ``every`` hour uses the latest
   whole hour;
2. each due rule reads its signal per group (:mod:`.signals`), and turns it into an observation: a threshold
   comparison, a baseline comparison, or a drift test (:mod:`.drift`); groups under ``min_requests`` are no data;
3. each series' state advances (:mod:`.lifecycle`); transitions are appended to ``alert_events`` and states
   written to ``alert_state``, in one insert each, *before* anything is sent;
4. the notifications now due (pages, re-notifications, resolves; silences hold back pages) go to the
   dispatcher, and the states are written again, marked as sent. A crash between 3 and 4 leaves them due, so
   they are sent on the next evaluation with the same dedup key (PagerDuty deduplicates a repeated trigger);
   nothing is lost and nothing is paged twice by a restart. A delivery that still fails after the
   dispatcher's retries is recorded in ``notifications`` (ok = 0) and not repeated by later evaluations (that
   would turn one outage of Slack into a page storm once it recovers); the alert itself stays visible in
   ``alert_state`` and the API, and a re-notification interval sends it again.

A rule that fails (a query error) is logged and counted; the other rules are still evaluated and recorded, and
the job run is then recorded as a failure so the cause is visible.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from inferwatch_collector.store import Store

from . import drift
from .job_runs import JobFailed
from .lifecycle import (
    EPOCH,
    NO_DATA,
    Notice,
    Observation,
    Policy,
    SeriesState,
    Transition,
    advance,
    initial,
    mark_sent,
    notifications_due,
)
from .rules import OPS, BaselineSpec, DetectorSpec, Rule, RuleSet, Threshold, format_value, load_configured
from .signals import WindowRow, read_length_histograms, read_windows, value_of
from .silences import Silence, active_silences, find_silence
from .timeutil import iso_s as _iso, to_ms as _ms, utc as _utc

if TYPE_CHECKING:  # the notifiers are imported when a dispatcher is built, not with this module
    from .notifiers.base import AlertNotification, Notifier
    from .notifiers.dispatch import Delivery, Dispatcher

log = logging.getLogger("inferwatch.alerts")

SOURCE_LABEL: Final = "source"
SOURCE: Final = "rules"
SECRETS_FILE_ENV: Final = "INFERWATCH_ALERT_SECRETS_FILE"
DAY: Final = 86400
EVENT_COLUMNS: Final = ("project_id", "rule_id", "event_time", "series_key", "state", "severity", "metric",
                        "value", "threshold", "window_s", "message", "labels", "channels")
STATE_COLUMNS: Final = ("project_id", "rule_id", "series_key", "state", "since", "last_value", "last_eval_at",
                        "silenced_until", "updated_at", "is_deleted", "incident_start", "dedup_key", "notified",
                        "notified_key", "last_notified_at", "nodata_since", "severity", "threshold", "baseline",
                        "labels", "channels")


# ------------------------------------------------------------------------------------------------- series


@dataclass(frozen=True)
class Series:
    """A series' lifecycle state plus what is shown and routed with it (one ``alert_state`` row)."""

    state: SeriesState
    labels: Mapping[str, str]  # group labels (project excluded)
    severity: str
    channels: tuple[str, ...] = ()
    threshold: float | None = None
    baseline: float | None = None
    silenced_until: datetime = EPOCH

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.state.project_id, self.state.rule_id, self.state.series_key)


def series_key(labels: Mapping[str, str]) -> str:
    """``model=gpt-4o,provider=openai`` in group order; ``project`` for a project-level series."""
    if not labels:
        return "project"
    return ",".join(f"{k}={_escape(v)}" for k, v in labels.items())


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


@dataclass(frozen=True)
class AlertEvent:
    """One transition, as appended to ``alert_events``."""

    project_id: str
    rule_id: str
    series_key: str
    event_time: datetime
    state: str
    severity: str
    metric: str
    value: float
    threshold: float
    window_s: int
    message: str
    labels: Mapping[str, str]
    channels: tuple[str, ...]

    def row(self) -> tuple[Any, ...]:
        return (self.project_id, self.rule_id, self.event_time, self.series_key, self.state, self.severity,
                self.metric, _float(self.value), _float(self.threshold), self.window_s, self.message,
                dict(self.labels), list(self.channels))


@dataclass(frozen=True)
class Sent:
    """A notification handed to the dispatcher, with its deliveries (empty without a dispatcher)."""

    notification: AlertNotification | None
    notice: Notice
    project_id: str
    rule_id: str
    series_key: str
    channels: tuple[str, ...]
    deliveries: tuple[Delivery, ...] = ()
    event_time: datetime = EPOCH

    @property
    def kind(self) -> str:
        return "renotify" if self.notice.renotify else self.notice.kind


# ------------------------------------------------------------------------------------------------ backends


class StateBackend(Protocol):
    """Where series states and events live: ``alert_state``/``alert_events``, or memory for a backtest."""

    def load(self, projects: Sequence[str] | None) -> dict[tuple[str, str, str], Series]: ...

    def record(self, events: Sequence[AlertEvent], series: Sequence[Series]) -> list[Series]: ...


class DbBackend:
    """``alert_state`` (read with FINAL, one row per series) and ``alert_events`` (append-only)."""

    def __init__(self, store: Store, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.store = store
        self._clock = clock

    def load(self, projects: Sequence[str] | None) -> dict[tuple[str, str, str], Series]:
        where = f"labels['{SOURCE_LABEL}'] = {{source:String}} AND is_deleted = 0"
        params: dict[str, Any] = {"source": SOURCE}
        if projects is not None:
            where += " AND project_id IN {projects:Array(String)}"
            params["projects"] = list(projects)
        columns = [c for c in STATE_COLUMNS if c != "is_deleted"]
        rows = self.store.query(f"SELECT {', '.join(columns)} FROM alert_state FINAL WHERE {where}",
                                params).result_rows
        out = {}
        for row in rows:
            r = dict(zip(columns, row))
            labels = {k: v for k, v in dict(r["labels"]).items() if k != SOURCE_LABEL}
            state = SeriesState(
                project_id=r["project_id"], rule_id=r["rule_id"], series_key=r["series_key"], state=r["state"],
                since=_utc(r["since"]), last_value=float(r["last_value"]),
                incident_start=_utc(r["incident_start"]), dedup_key=r["dedup_key"], notified=r["notified"],
                notified_key=r["notified_key"], last_notified_at=_utc(r["last_notified_at"]),
                nodata_since=_utc(r["nodata_since"]), last_eval_at=_utc(r["last_eval_at"]),
                updated_at=_utc(r["updated_at"]))
            series = Series(state, labels, r["severity"], tuple(r["channels"]), _finite(r["threshold"]),
                            _finite(r["baseline"]), _utc(r["silenced_until"]))
            out[series.key] = series
        return out

    def record(self, events: Sequence[AlertEvent], series: Sequence[Series]) -> list[Series]:
        """Events first (the history is the audit trail), then the states with strictly newer versions."""
        if events:
            self.store.insert_columns("alert_events", _columns(e.row() for e in events), EVENT_COLUMNS)
        if not series:
            return []
        now = _ms(self._clock())
        written = []
        for s in series:
            version = max(now, s.state.updated_at + timedelta(milliseconds=1))
            written.append(replace(s, state=replace(s.state, updated_at=version)))
        self.store.insert_columns("alert_state", _columns(_state_row(s) for s in written), STATE_COLUMNS)
        return written


class MemoryBackend:
    """States and events in memory: the backtest's default, so replaying history never touches alert_state."""

    def __init__(self) -> None:
        self.series: dict[tuple[str, str, str], Series] = {}
        self.events: list[AlertEvent] = []

    def load(self, projects: Sequence[str] | None) -> dict[tuple[str, str, str], Series]:
        return {k: v for k, v in self.series.items() if projects is None or k[0] in projects}

    def record(self, events: Sequence[AlertEvent], series: Sequence[Series]) -> list[Series]:
        self.events.extend(events)
        for s in series:
            self.series[s.key] = s
        return list(series)


def _state_row(s: Series) -> tuple[Any, ...]:
    st = s.state
    labels = {**s.labels, SOURCE_LABEL: SOURCE}
    return (st.project_id, st.rule_id, st.series_key, st.state, st.since, _float(st.last_value), st.last_eval_at,
            s.silenced_until.replace(microsecond=0), st.updated_at, 0, st.incident_start, st.dedup_key,
            st.notified, st.notified_key, st.last_notified_at, st.nodata_since, s.severity, _float(s.threshold),
            _float(s.baseline), labels, list(s.channels))


def _columns(rows: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    return [list(c) for c in zip(*rows)]


# ------------------------------------------------------------------------------------------- observations


@dataclass(frozen=True)
class Observed:
    labels: Mapping[str, str]
    observation: Observation


Observations = dict[tuple[str, str], Observed]  # (project, series key) -> observation


def _labels(rule: Rule, values: Sequence[str]) -> dict[str, str]:
    return dict(zip([g for g in rule.group_by if g != "project"], values))


def _span(start: int, end: int) -> dict[str, str]:
    return {"window_start": _iso(datetime.fromtimestamp(start, UTC)),
            "window_end": _iso(datetime.fromtimestamp(end, UTC))}


def _by_series(rule: Rule, rows: Iterable[WindowRow]) -> dict[tuple[str, tuple[str, ...]], dict[int, WindowRow]]:
    out: dict[tuple[str, tuple[str, ...]], dict[int, WindowRow]] = {}
    for row in rows:
        out.setdefault((row.project_id, row.labels), {})[row.k] = row
    return out


def observe(store: Store, rule: Rule, end: datetime, projects: Sequence[str] | None = None) -> Observations:
    """Every group's observation of ``rule`` for the window ending at ``end``; groups with no calls at all are
    absent (the caller treats a known series that is absent as no data)."""
    e = int(end.timestamp())
    w = rule.window_s
    cond = rule.condition
    if isinstance(cond, Threshold):
        return _threshold(store, rule, cond, e, projects)
    if isinstance(cond, BaselineSpec):
        return _baseline(store, rule, cond, e, projects)
    if cond.kind == "percentile_creep":
        return _creep(store, rule, cond, e, projects)
    days = int(cond.params["baseline_days"])
    windows = [(e - d * DAY - w, e - d * DAY) for d in range(days + 1)]
    if cond.kind == "length_shift":
        return _length(store, rule, cond, windows, projects)
    return _proportion(store, rule, cond, windows, projects)


def _enough(rule: Rule, row: WindowRow | None) -> bool:
    return row is not None and row.measures.get(rule.signal.volume, 0.0) >= max(1, rule.min_requests)


def _threshold(store: Store, rule: Rule, cond: Threshold, e: int, projects: Sequence[str] | None
               ) -> Observations:
    start = e - rule.window_s
    out: Observations = {}
    for (project, values), windows in _by_series(rule, read_windows(
            store, rule.signal, rule.group_by, [(start, e)], projects)).items():
        labels = _labels(rule, values)
        row = windows.get(0)
        value = value_of(rule.signal, row.measures, rule.window_s) if _enough(rule, row) and row else None
        details = {**_span(start, e), "volume": f"{row.measures.get(rule.signal.volume, 0):.0f}" if row else "0"}
        obs = Observation(None if value is None else OPS[cond.op](value, cond.value), value, cond.value,
                          details=details)
        out[(project, series_key(labels))] = Observed(labels, obs)
    return out


def _baseline(store: Store, rule: Rule, cond: BaselineSpec, e: int, projects: Sequence[str] | None
              ) -> Observations:
    w = rule.window_s
    current = (e - w, e)
    if cond.kind == "daily_average":
        windows = [current, (e - w - cond.lookback_s, e - w)]
        lengths = [w, cond.lookback_s]
    else:
        windows = [current] + [(e - d * DAY - w, e - d * DAY) for d in range(1, cond.days + 1)]
        lengths = [w] * len(windows)
    out: Observations = {}
    for (project, values), rows in _by_series(rule, read_windows(
            store, rule.signal, rule.group_by, windows, projects)).items():
        labels = _labels(rule, values)
        row = rows.get(0)
        value = value_of(rule.signal, row.measures, w) if row is not None and _enough(rule, row) else None
        base_values = [value_of(rule.signal, rows[k].measures, lengths[k]) for k in range(1, len(windows))
                       if _enough(rule, rows.get(k))]
        usable = [v for v in base_values if v is not None]
        need = 1 if cond.kind == "daily_average" else min(3, cond.days)
        baseline = sum(usable) / len(usable) if len(usable) >= need else None
        details = {**_span(*current), "baseline_windows": str(len(usable)),
                   "baseline_start": _iso(datetime.fromtimestamp(min(s for s, _ in windows[1:]), UTC))}
        if value is None or baseline is None:
            obs = Observation(None, value, baseline=baseline, details=details)
        else:
            limit = cond.factor * baseline
            breaching = OPS[cond.op](value, limit) and max(value, baseline) >= cond.min_value
            obs = Observation(breaching, value, limit, baseline, details)
        out[(project, series_key(labels))] = Observed(labels, obs)
    return out


def _drift_observation(result: drift.DriftResult | None, window: tuple[int, int],
                       baseline_start: int) -> Observation:
    if result is None:
        return NO_DATA
    details = {**_span(*window), "baseline_start": _iso(datetime.fromtimestamp(baseline_start, UTC)),
               "method": result.method, "statistic": f"{result.statistic:.4g}",
               "critical": f"{result.critical:.4g}", **dict(result.details)}
    if result.p_value is not None:
        details["p_value"] = f"{result.p_value:.3g}"
    return Observation(result.finding, result.value, None, result.baseline, details)


def _proportion(store: Store, rule: Rule, cond: DetectorSpec, windows: Sequence[tuple[int, int]],
                projects: Sequence[str] | None) -> Observations:
    signal, p = rule.signal, cond.params
    grouped = _by_series(rule, read_windows(store, signal, rule.group_by, windows, projects))

    def counts(row: WindowRow | None) -> drift.Counts:
        if row is None:
            return drift.Counts(0, 0)
        return drift.Counts(row.measures.get(signal.numerator, 0.0), row.measures.get(signal.denominator, 0.0))

    minimum = max(1, rule.min_requests)
    tests = sum(1 for rows in grouped.values() if counts(rows.get(0)).trials >= minimum)
    out: Observations = {}
    for (project, values), rows in grouped.items():
        labels = _labels(rule, values)
        result = drift.proportion_spike(
            counts(rows.get(0)), [counts(rows.get(k)) for k in range(1, len(windows))], tests=tests,
            alpha=p["alpha"], min_volume=minimum, min_baseline_days=int(p["min_baseline_days"]),
            min_ratio=p["min_ratio"], min_increase=p["min_increase"], min_day_cv=p["min_day_cv"])
        out[(project, series_key(labels))] = Observed(labels, _drift_observation(result, windows[0],
                                                                                  windows[-1][0]))
    return out


def _length(store: Store, rule: Rule, cond: DetectorSpec, windows: Sequence[tuple[int, int]],
            projects: Sequence[str] | None) -> Observations:
    p = cond.params
    grouped = read_length_histograms(store, rule.group_by, windows, projects)
    minimum = max(1, rule.min_requests)
    tests = sum(1 for hists in grouped.values() if 0 in hists and hists[0].n >= minimum)
    out: Observations = {}
    for (project, values), hists in grouped.items():
        labels = _labels(rule, values)
        current = hists.get(0)
        days = [hists[k] for k in range(1, len(windows)) if k in hists]
        result = None
        if current is not None:
            base_n = sum(h.n for h in days)
            result = drift.length_shift(
                current.counts, [h.counts for h in days], current_mean=current.mean,
                baseline_mean=sum(h.tokens for h in days) / base_n if base_n else 0.0, tests=tests,
                alpha=p["alpha"], min_volume=minimum, min_baseline_days=int(p["min_baseline_days"]),
                min_distance=p["min_distance"], spread_factor=p["spread_factor"])
        out[(project, series_key(labels))] = Observed(labels, _drift_observation(result, windows[0],
                                                                                  windows[-1][0]))
    return out


def _creep(store: Store, rule: Rule, cond: DetectorSpec, e: int, projects: Sequence[str] | None) -> Observations:
    p = cond.params
    w = rule.window_s
    n = int(p["reference_days"] + p["monitor_days"])
    windows = [(e - (n - i) * w, e - (n - i - 1) * w) for i in range(n)]  # oldest first, current last
    out: Observations = {}
    for (project, values), rows in _by_series(rule, read_windows(
            store, rule.signal, rule.group_by, windows, projects, quantile_noise=True)).items():
        labels = _labels(rule, values)
        usable = [rows[i] if _enough(rule, rows.get(i)) else None for i in range(n)]
        daily = [value_of(rule.signal, r.measures, w) if r is not None else None for r in usable]
        noise = [r.measures.get("q_noise") if r is not None else None for r in usable]
        result = drift.percentile_creep(daily, noise=noise, reference_days=int(p["reference_days"]), k=p["k"],
                                        h=p["h"], min_rel_sd=p["min_rel_sd"],
                                        min_reference=int(p["min_reference"]), confidence=p["confidence"])
        out[(project, series_key(labels))] = Observed(labels, _drift_observation(result, windows[-1],
                                                                                  windows[0][0]))
    return out


# ------------------------------------------------------------------------------------------------ evaluate


@dataclass
class EvaluationResult:
    """What one evaluation did."""

    at: datetime
    end: datetime
    rules: int = 0
    series: int = 0
    events: list[AlertEvent] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    failed_rules: list[str] = field(default_factory=list)

    def details(self) -> dict[str, str]:
        by_state: dict[str, int] = {}
        for event in self.events:
            by_state[event.state] = by_state.get(event.state, 0) + 1
        return {"window_end": _iso(self.end), "rules": str(self.rules), "series": str(self.series),
                **{f"events_{k}": str(v) for k, v in sorted(by_state.items())},
                "notifications": str(len(self.sent)),
                "delivery_failures": str(sum(1 for s in self.sent for d in s.deliveries if not d.ok)),
                "failed_rules": ",".join(self.failed_rules)}


def window_end(at: datetime, offset_s: int) -> datetime:
    """The end of the data window evaluated at ``at``: ``offset_s`` earlier, down to the minute."""
    t = int((_utc(at) - timedelta(seconds=offset_s)).timestamp())
    return datetime.fromtimestamp(t - t % 60, UTC)


def due_end(rule: Rule, end: datetime, previous_end: datetime | None, force: bool = False) -> datetime | None:
    """The window end ``rule`` is evaluated at now, or None when it is not due.

    A rule runs at each multiple of its ``every`` (hourly rules on the hour). ``previous_end`` (the last
    evaluation's window end) lets a late tick still catch a boundary it passed; ``force`` evaluates every rule
    at its latest boundary (a backtest's first tick, the benchmark).
    """
    t = int(end.timestamp())
    boundary = datetime.fromtimestamp(t - t % rule.every_s, UTC)
    if force or boundary == end or (previous_end is not None and boundary > previous_end):
        return boundary
    return None


def evaluate(store: Store, ruleset: RuleSet, at: datetime, *, backend: StateBackend | None = None,
             dispatcher: Dispatcher | None = None, projects: Sequence[str] | None = None,
             previous_end: datetime | None = None, force: bool = False) -> EvaluationResult:
    """Evaluate every due rule of ``ruleset`` at time ``at``; record transitions; send what is due.

    ``backend`` defaults to the database (:class:`DbBackend`). Without a ``dispatcher`` nothing is sent, but
    notifications are still worked out and marked as sent (a backtest reports what would have gone out).
    ``projects`` limits the evaluation to those projects. ``previous_end`` and ``force``: see :func:`due_end`.
    Series of rules that are no longer in ``ruleset`` (or no longer cover their project) are resolved.
    """
    at = _utc(at)
    backend = backend or DbBackend(store)
    end = window_end(at, ruleset.evaluation_offset_s)
    result = EvaluationResult(at=at, end=end)
    states = backend.load(projects)
    silences = _silences(store, at, projects)
    events: list[AlertEvent] = []
    changed: dict[tuple[str, str, str], Series] = {}
    due: dict[tuple[str, str, str], tuple[list[Notice], datetime, Rule | None]] = {}
    for rule in ruleset.rules:
        rule_end = due_end(rule, end, previous_end, force)
        if rule_end is None:
            continue
        scope = _scope(rule, projects)
        if scope is not None and not scope:
            continue
        try:
            observed = observe(store, rule, rule_end, scope)
        except Exception:
            log.exception("alert rule %s could not be evaluated at %s", rule.id, _iso(rule_end))
            result.failed_rules.append(rule.id)
            continue
        result.rules += 1
        known = {(k[0], k[2]) for k in states if k[1] == rule.id and (scope is None or k[0] in scope)}
        for project, key in set(observed) | known:
            found = observed.get((project, key))
            prev = states.get((project, rule.id, key))
            if prev is None and (found is None or not found.observation.has_data):
                continue
            result.series += 1
            outcome = _step(rule, ruleset, project, key, prev, found, rule_end, at, silences)
            _collect(outcome, events, changed, due)
    for key, prev in states.items():
        rule = ruleset.rule(key[1])
        if rule is not None and (rule.projects is None or key[0] in rule.projects):
            continue  # evaluated above, or not due now (or failing): left as it is
        outcome = _retire(prev, end)
        if outcome is not None:
            _collect(outcome, events, changed, due)
    written = {s.key: s for s in backend.record(events, list(changed.values()))}
    result.events = events
    marked = []
    for key, (notices, rule_end, rule) in due.items():
        series = written.get(key) or changed.get(key) or states[key]
        result.sent.extend(_send(series, notices, rule, ruleset, rule_end, dispatcher))
        marked.append(replace(series, state=mark_sent(series.state, notices, rule_end)))
    if marked:
        backend.record([], marked)
    return result


def _scope(rule: Rule, projects: Sequence[str] | None) -> list[str] | None:
    if rule.projects is None:
        return list(projects) if projects is not None else None
    return [p for p in rule.projects if projects is None or p in projects]


def _silences(store: Store, at: datetime, projects: Sequence[str] | None) -> list[Silence]:
    try:
        return active_silences(store, at, projects)
    except Exception:  # a silence table problem must not stop alerting; it is loud in the log
        log.exception("silences could not be read; evaluating without them")
        return []


@dataclass(frozen=True)
class _Outcome:
    series: Series
    transition: Transition | None
    notices: list[Notice]
    rule: Rule | None
    rule_end: datetime
    event: AlertEvent | None
    write: bool


def _step(rule: Rule, ruleset: RuleSet, project: str, key: str, prev: Series | None, found: Observed | None,
          rule_end: datetime, at: datetime, silences: Sequence[Silence]) -> _Outcome:
    obs = found.observation if found is not None else NO_DATA
    labels = dict(found.labels) if found is not None else dict(prev.labels if prev else {})
    first = prev is None
    before = prev.state if prev is not None else initial(project, rule.id, key, rule_end)
    state, transition = advance(before, obs, rule_end, rule.policy)
    silence = find_silence(silences, project, rule.id, labels, at)
    channels = ruleset.channels_of(rule)
    series = Series(state, labels, rule.severity, channels,
                    obs.threshold if obs.has_data else (prev.threshold if prev else None),
                    obs.baseline if obs.baseline is not None else (prev.baseline if prev else None),
                    silence.ends_at if silence is not None else EPOCH)
    notices = notifications_due(state, rule_end, rule.policy, silenced=silence is not None)
    event = _event(series, transition, rule, obs) if transition is not None else None
    # ok series are written once (so a vanished one is known), active ones every time (current value)
    write = first or transition is not None or state.active or _differs(before, state)
    return _Outcome(series, transition, notices, rule, rule_end, event, write)


def _differs(a: SeriesState, b: SeriesState) -> bool:
    keys = ("state", "since", "incident_start", "dedup_key", "notified", "notified_key", "last_notified_at",
            "nodata_since")
    return any(getattr(a, k) != getattr(b, k) for k in keys)


def _retire(prev: Series, end: datetime) -> _Outcome | None:
    """A series whose rule is gone from the rules file (or no longer covers its project): resolve it, once."""
    st = prev.state
    if not st.active and st.notified != "firing":
        return None
    state, transition = st, None
    if st.active:
        state = replace(st, state="ok" if st.state == "pending" else "resolved", since=end, last_eval_at=end)
        transition = Transition(st.state, state.state, end)
    series = replace(prev, state=state)
    notices = notifications_due(state, end, Policy(), silenced=False)
    event = None
    if transition is not None:
        message = (f"Alert {st.rule_id} ({st.series_key}) ended: the rule is no longer in the rules file or no "
                   "longer covers this project.")
        event = AlertEvent(st.project_id, st.rule_id, st.series_key, end, state.state, prev.severity, "",
                           st.last_value, _float(prev.threshold), 0, message,
                           {**prev.labels, "dedup_key": st.dedup_key, "reason": "rule removed"}, prev.channels)
    return _Outcome(series, transition, notices, None, end, event, True)


def _collect(outcome: _Outcome, events: list[AlertEvent],
             changed: dict[tuple[str, str, str], Series], due: dict[tuple[str, str, str], Any]) -> None:
    if outcome.event is not None:
        events.append(outcome.event)
    if outcome.write:
        changed[outcome.series.key] = outcome.series
    if outcome.notices:
        due[outcome.series.key] = (outcome.notices, outcome.rule_end, outcome.rule)


# ------------------------------------------------------------------------------------------------- messages


def _event(series: Series, transition: Transition, rule: Rule, obs: Observation) -> AlertEvent:
    st = series.state
    labels = {**series.labels, "dedup_key": st.dedup_key, "title": rule.headline, **obs.details}
    if obs.baseline is not None:
        labels["baseline"] = f"{obs.baseline:.6g}"
    return AlertEvent(st.project_id, rule.id, st.series_key, transition.at, transition.to, rule.severity,
                      rule.signal.name, _float(obs.value if obs.value is not None else st.last_value),
                      _float(obs.threshold), rule.window_s, _message(rule, series, transition.to, obs),
                      labels, series.channels)


def _where(series: Series) -> str:
    return f"{series.state.project_id}" + (f" / {', '.join(f'{k} {v}' for k, v in series.labels.items())}"
                                            if series.labels else "")


def _window_text(seconds: int) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}" if n != 1 else f"{unit}"
    return f"{seconds} s"


def _message(rule: Rule, series: Series, state: str, obs: Observation) -> str:
    signal = rule.signal
    value = obs.value if obs.value is not None else series.state.last_value
    where = _where(series)
    if state == "no_data":
        return (f"No data for {signal.name} in {where}: fewer than {max(1, rule.min_requests)} calls per "
                f"{_window_text(rule.window_s)} since {_iso(series.state.nodata_since)}.")
    if state in ("resolved", "ok"):
        verb = "recovered" if state == "resolved" else "is back within bounds before the alert fired"
        return (f"{signal.description.capitalize()} in {where} {verb}: {format_value(signal, value)} over the "
                f"last {_window_text(rule.window_s)}.")
    text = (f"{signal.description.capitalize()} in {where} is {format_value(signal, value)} over the last "
            f"{_window_text(rule.window_s)}")
    cond = rule.condition
    if isinstance(cond, Threshold):
        text += f" (threshold {cond.op} {format_value(signal, cond.value)})"
    elif isinstance(cond, BaselineSpec):
        text += (f", against a baseline of {format_value(signal, obs.baseline)} (fires {cond.op} "
                 f"{cond.factor:g}x, i.e. {format_value(signal, obs.threshold)})")
    elif isinstance(cond, DetectorSpec):
        d = obs.details
        base = f"{obs.baseline:.1f} tokens" if signal.kind == "per_call" else format_value(signal, obs.baseline)
        now = f"{value:.1f} tokens" if signal.kind == "per_call" else format_value(signal, value)
        text = (f"{signal.description.capitalize()} in {where} is {now} against a baseline of {base} "
                f"({d.get('method', cond.kind)}: statistic {d.get('statistic')} vs {d.get('critical')}"
                + (f", p = {d['p_value']}" if "p_value" in d else "") + f"; evidence {d.get('window_start')} to "
                f"{d.get('window_end')}, baseline from {d.get('baseline_start')})")
    if state == "pending":
        return text + f"; firing if it holds for {_window_text(rule.for_s)}."
    return text + "."


def _notification(series: Series, notice: Notice, rule: Rule | None, ruleset: RuleSet, event_time: datetime
                  ) -> AlertNotification:
    from .notifiers.base import AlertNotification

    st = series.state
    title = (rule.headline if rule else st.rule_id) + f" for {_where(series)}"
    if rule is not None:
        signal_name = rule.signal.name
        obs = Observation(True, st.last_value, series.threshold, series.baseline)
        message = _message(rule, series, "resolved" if notice.kind == "resolved" else st.state, obs)
    else:
        signal_name = ""
        message = f"Alert {st.rule_id} ({st.series_key}) ended: its rule is no longer in the rules file."
    if notice.renotify:
        message = f"Still firing since {_iso(st.since)}. " + message
    return AlertNotification(
        project_id=st.project_id, rule_id=st.rule_id, series_key=st.series_key, state=notice.kind,
        severity=series.severity if series.severity in ("critical", "warning", "info") else "warning",
        title=title, message=message, signal=signal_name, value=_float(st.last_value), threshold=series.threshold,
        baseline=series.baseline, labels=dict(series.labels), started_at=st.incident_start, event_time=event_time,
        dedup_key=notice.dedup_key, dashboard_url=ruleset.dashboard_url)


def _send(series: Series, notices: Sequence[Notice], rule: Rule | None, ruleset: RuleSet, event_time: datetime,
          dispatcher: Dispatcher | None) -> list[Sent]:
    out = []
    st = series.state
    for notice in notices:
        notification = None
        deliveries: tuple[Delivery, ...] = ()
        try:
            notification = _notification(series, notice, rule, ruleset, event_time)
            if dispatcher is not None:
                deliveries = tuple(dispatcher.dispatch(notification, series.channels))
        except Exception:  # never let one notification stop the others
            log.exception("notifying %s %s of project %s failed", st.rule_id, st.series_key, st.project_id)
        out.append(Sent(notification, notice, st.project_id, st.rule_id, st.series_key, series.channels,
                        deliveries, event_time))
    return out


# ---------------------------------------------------------------------------------------------- scheduling


def build_channels(ruleset: RuleSet, *, env: Mapping[str, str] = os.environ,
                   secrets_file: str | Path | None = None) -> dict[str, Notifier]:
    """The rules file's channels as notifiers. A channel that cannot be built (its secret is not set) is
    skipped with a warning: alerts are still evaluated and recorded, and its deliveries are recorded as failed."""
    from .notifiers.config import load_channels

    secrets_file = secrets_file or env.get(SECRETS_FILE_ENV) or None
    channels: dict[str, Notifier] = {}
    for name, spec in ruleset.channels.items():
        try:
            channels.update(load_channels({name: spec}, env=env, secrets_file=secrets_file))
        except ValueError as exc:
            log.warning("alert channel %r is not available (its notifications will fail): %s", name, exc)
    return channels


class RuleEvaluationJob:
    """The scheduler's job: evaluate the rules every minute, notify through the configured channels.

    The rules file is loaded when the job is made (so a bad file stops the scheduler from starting, with the
    line and reason); channels and the dispatcher are built on the first run, with the store the deliveries
    are recorded in. The last window end is remembered so a late tick still evaluates an hourly rule whose
    boundary it passed.
    """

    def __init__(self, ruleset: RuleSet | None = None, *, env: Mapping[str, str] = os.environ,
                 secrets_file: str | Path | None = None) -> None:
        self.ruleset = ruleset if ruleset is not None else load_configured()
        self._env = env
        self._secrets_file = secrets_file
        self._dispatcher: Dispatcher | None = None
        self._previous_end: datetime | None = None

    def dispatcher(self, store: Store) -> Dispatcher:
        if self._dispatcher is None:
            from .notifiers.dispatch import Dispatcher

            self._dispatcher = Dispatcher(build_channels(self.ruleset, env=self._env,
                                                         secrets_file=self._secrets_file), store)
        return self._dispatcher

    def __call__(self, store: Store, now: datetime) -> EvaluationResult:
        result = evaluate(store, self.ruleset, now, backend=DbBackend(store), dispatcher=self.dispatcher(store),
                          previous_end=self._previous_end)
        self._previous_end = result.end
        if result.failed_rules:
            raise JobFailed(f"{len(result.failed_rules)} alert rule(s) could not be evaluated: "
                            f"{', '.join(result.failed_rules)}", result.details())
        return result


# ------------------------------------------------------------------------------------------------- helpers


def _float(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None
