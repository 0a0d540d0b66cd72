"""Alert rule evaluation: :func:`evaluate` (one evaluation at a given time, which the backtest replays over
history) and :class:`RuleEvaluationJob` (the scheduler's job that runs it every minute).

:func:`evaluate` takes the evaluation time as an argument and keeps nothing between calls: every series' state
comes from a :class:`~.alert_state.StateBackend` (``alert_state`` for the scheduler, memory for a backtest), so a
restarted scheduler carries on mid-incident, and a backtest runs exactly the code that pages people.

One evaluation:

1. the data window ends ``evaluation_offset`` (60 s by default) before ``at``, on a minute boundary, so calls
   still being exported by SDK batching are not read as a dip; a rule evaluated ``every`` hour uses the latest
   whole hour;
2. each due rule reads its signal per group and turns it into an observation (:mod:`.observations`); groups
   under ``min_requests`` are no data;
3. each series' state advances (:mod:`.lifecycle`); transitions are appended to ``alert_events`` and states
   written to ``alert_state`` (:mod:`.alert_state`), in one insert each, *before* anything is sent;
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
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from inferwatch_collector.store import Store

from .alert_messages import notification_for, retired_event, transition_event
from .alert_state import AlertEvent, DbBackend, Series, StateBackend
from .job_runs import JobFailed
from .lifecycle import (
    EPOCH,
    NO_DATA,
    Notice,
    Policy,
    SeriesState,
    Transition,
    advance,
    initial,
    mark_sent,
    notifications_due,
)
from .observations import Observed, observe
from .prefetch import Observer
from .rules import Rule, RuleSet, load_configured
from .silences import Silence, active_silences, find_silence
from .timeutil import iso_s as _iso, utc as _utc

if TYPE_CHECKING:  # the notifiers are imported when a dispatcher is built, not with this module
    from .notifiers.base import AlertNotification, Notifier
    from .notifiers.dispatch import Delivery, Dispatcher

log = logging.getLogger("inferwatch.alerts")

SECRETS_FILE_ENV: Final = "INFERWATCH_ALERT_SECRETS_FILE"


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
             previous_end: datetime | None = None, force: bool = False,
             silences: Sequence[Silence] | None = None, observer: Observer = observe) -> EvaluationResult:
    """Evaluate every due rule of ``ruleset`` at time ``at``; record transitions; send what is due.

    ``backend`` defaults to the database (:class:`~.alert_state.DbBackend`). Without a ``dispatcher`` nothing is
    sent, but notifications are still worked out and marked as sent (a backtest reports what would have gone out).
    ``projects`` limits the evaluation to those projects. ``previous_end`` and ``force``: see :func:`due_end`.
    ``silences``: every silence that may matter (a backtest reads them once for its range); by default those
    active at ``at`` are read. ``observer``: how a rule's observations at a window end are read (a backtest
    passes a :class:`~.prefetch.BlockObserver`, which reads a block of ends at once).
    Series of rules that are no longer in ``ruleset`` (or no longer cover their project) are resolved.
    """
    at = _utc(at)
    backend = backend or DbBackend(store)
    end = window_end(at, ruleset.evaluation_offset_s)
    result = EvaluationResult(at=at, end=end)
    states = backend.load(projects)
    silences = _silences(store, at, projects) if silences is None else [
        s for s in silences if s.starts_at <= at < s.ends_at and (projects is None or s.project_id in projects)]
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
            observed = observer(store, rule, rule_end, scope)
        except Exception:
            log.exception("alert rule %s could not be evaluated at %s", rule.id, _iso(rule_end))
            result.failed_rules.append(rule.id)
            continue
        result.rules += 1
        known = {(k[0], k[2]) for k in states if k[1] == rule.id and (scope is None or k[0] in scope)}
        for project, key in sorted(set(observed) | known):  # sorted: events in the same order however read
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
    event = transition_event(series, transition, rule, obs) if transition is not None else None
    # ok series are written once (so a vanished one is known), active ones every time (current value)
    write = first or transition is not None or state.active or _differs(before, state)
    return _Outcome(series, transition, notices, rule, rule_end, event, write)


def _differs(a: SeriesState, b: SeriesState) -> bool:
    keys = ("state", "since", "incident_start", "dedup_key", "notified", "notified_key", "last_notified_at",
            "nodata_since", "clear_since")
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
    event = retired_event(prev, state, end) if transition is not None else None
    return _Outcome(series, transition, notices, None, end, event, True)


def _collect(outcome: _Outcome, events: list[AlertEvent],
             changed: dict[tuple[str, str, str], Series], due: dict[tuple[str, str, str], Any]) -> None:
    if outcome.event is not None:
        events.append(outcome.event)
    if outcome.write:
        changed[outcome.series.key] = outcome.series
    if outcome.notices:
        due[outcome.series.key] = (outcome.notices, outcome.rule_end, outcome.rule)


def _send(series: Series, notices: Sequence[Notice], rule: Rule | None, ruleset: RuleSet, event_time: datetime,
          dispatcher: Dispatcher | None) -> list[Sent]:
    out = []
    st = series.state
    for notice in notices:
        notification = None
        deliveries: tuple[Delivery, ...] = ()
        try:
            notification = notification_for(series, notice, rule, ruleset, event_time)
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

