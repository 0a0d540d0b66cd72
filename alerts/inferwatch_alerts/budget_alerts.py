"""The budget evaluation job: record an alert when a budget crosses a threshold or is forecast to overrun.

:func:`evaluate_budgets` is a plain function of ``(store, now)``: the scheduler calls it every minute, tests and
backtests call it with any ``now``. It keeps no memory between calls. What was already sent is read back from
``alert_events`` each time, so an alert goes out exactly once per threshold, budget revision and period, across
repeated evaluations and across restarts (one active scheduler is the deployment rule, architecture §2).

What gets recorded, per budget (the decision is the pure :func:`inferwatch_collector.cost.budgets.due_alerts`):

* a ``firing`` event in ``alert_events`` with ``rule_id = "budget:<budget_id>"``, ``series_key`` the budget's
  scope (``project``, ``feature=<name>``, ``user=<hash>``), severity ``critical`` for a hard budget at or over
  100% and ``warning`` otherwise, labels naming the scope, period, revision and threshold (``0.8``, ``1.0`` or
  ``forecast``), and a message in words and dollars;
* the budget's row in ``alert_state`` set to ``firing`` (what a "current alerts" view reads), and set back to
  ``resolved`` with a ``resolved`` event once the period that fired is over, the budget was re-created, or the
  budget was deleted.

Notifications go through the ``notify`` parameter: a callable given each :class:`BudgetAlertEvent` *after* it is
recorded (the scheduler's job routes them through the alert channels, :mod:`.budget_notify`). Recording first
makes the database the single source of "already sent", so a notifier that fails cannot cause a duplicate later;
notifiers must therefore retry on their own. A notifier that raises is logged and counted, and never stops the
other alerts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from inferwatch_collector.cost.budgets import (
    FORECAST,
    Budget,
    DueAlert,
    budget_status,
    due_alerts,
    list_budgets,
    period_bounds,
)
from inferwatch_collector.store import Store

from .job_runs import JobFailed
from .timeutil import iso_ms as _iso, utc as _utc

log = logging.getLogger("inferwatch.budgets")

RULE_PREFIX: Final = "budget:"
EVENT_COLUMNS: Final = ("project_id", "rule_id", "event_time", "series_key", "state", "severity", "metric",
                        "value", "threshold", "window_s", "message", "labels", "channels")
STATE_COLUMNS: Final = ("project_id", "rule_id", "series_key", "state", "since", "last_value", "last_eval_at",
                        "updated_at", "is_deleted")


@dataclass(frozen=True)
class BudgetAlertEvent:
    """One recorded budget alert event: what a notifier receives."""

    project_id: str
    rule_id: str
    series_key: str
    state: str  # firing | resolved
    severity: str  # warning | critical | info
    metric: str
    value: float
    threshold: float
    window_s: int
    message: str
    labels: dict[str, str]
    event_time: datetime


Notify = Callable[[BudgetAlertEvent], None]


class BudgetEvaluationError(JobFailed):
    """Some budgets could not be evaluated; the others were, and their alerts were recorded (see ``details``)."""


@dataclass
class EvaluationResult:
    """What one evaluation did (recorded in the job run's details)."""

    budgets: int = 0
    fired: list[BudgetAlertEvent] = field(default_factory=list)
    resolved: list[BudgetAlertEvent] = field(default_factory=list)
    failed: int = 0
    notify_failures: int = 0

    def details(self) -> dict[str, str]:
        return {"budgets": str(self.budgets), "fired": str(len(self.fired)), "resolved": str(len(self.resolved)),
                "failed": str(self.failed), "notify_failures": str(self.notify_failures)}


def rule_id(budget_id: str) -> str:
    """The alert rule id of a budget's events and state."""
    return f"{RULE_PREFIX}{budget_id}"


def evaluate_budgets(store: Store, now: datetime | None = None, *, notify: Notify | None = None
                     ) -> EvaluationResult:
    """Evaluate every budget of every project at ``now``; record (and hand to ``notify``) what is due.

    A budget that cannot be evaluated is logged and skipped, the others still are; the function then raises
    :class:`BudgetEvaluationError` so that the run is recorded as a failure and the cause is visible.
    """
    now = _utc(now or datetime.now(UTC))
    result = EvaluationResult()
    budgets = list_budgets(store, None)
    result.budgets = len(budgets)
    sent = _sent_labels(store, budgets, now)
    states = _firing_states(store)
    due: list[DueAlert] = []
    for budget in budgets:
        try:
            status = budget_status(store, budget, now)
            due.extend(due_alerts(status, sent.get(_dedup_key(budget, now), ())))
        except Exception:
            log.exception("budget %s of project %s could not be evaluated", budget.budget_id, budget.project_id)
            result.failed += 1
    fired = [_firing_event(alert, now) for alert in due]
    resolved = _resolutions(budgets, states, now)
    _record(store, resolved, fired, states, now)
    result.fired, result.resolved = fired, resolved
    for event in [*resolved, *fired]:
        log.warning("budget alert %s %s [%s] %s", event.rule_id, event.state, event.project_id, event.message)
        if notify is not None:
            try:
                notify(event)
            except Exception:
                log.exception("notifying %s of project %s failed", event.rule_id, event.project_id)
                result.notify_failures += 1
    if result.failed:
        raise BudgetEvaluationError(f"{result.failed} of {result.budgets} budgets could not be evaluated (the "
                                    f"scheduler log names them); {len(fired)} alert(s) were recorded",
                                    result.details())
    return result


# -------------------------------------------------------------------------------------------- what was sent


def _dedup_key(budget: Budget, now: datetime) -> tuple[str, str, str, str, str]:
    start, _ = period_bounds(budget.period, now)
    return (budget.project_id, rule_id(budget.budget_id), budget.period, _iso(start), budget.revision)


def _sent_labels(store: Store, budgets: Sequence[Budget], now: datetime
                 ) -> dict[tuple[str, str, str, str, str], set[str]]:
    """Threshold labels already recorded, per budget revision and current period (one query for all)."""
    if not budgets:
        return {}
    since = min(period_bounds(b.period, now)[0] for b in budgets)
    rows = store.query(
        "SELECT project_id, rule_id, labels['period'], labels['period_start'], labels['revision'], "
        "labels['threshold'] FROM alert_events WHERE startsWith(rule_id, {prefix:String}) "
        "AND state = 'firing' AND event_time >= fromUnixTimestamp64Milli({since:Int64})",
        {"prefix": RULE_PREFIX, "since": int(since.timestamp() * 1000)},
    ).result_rows
    sent: dict[tuple[str, str, str, str, str], set[str]] = {}
    for project_id, rule, period, start, revision, label in rows:
        sent.setdefault((project_id, rule, period, start, revision), set()).add(label)
    return sent


@dataclass(frozen=True)
class _State:
    project_id: str
    rule_id: str
    series_key: str
    since: datetime
    last_value: float


def _firing_states(store: Store) -> list[_State]:
    rows = store.query(
        "SELECT project_id, rule_id, series_key, since, last_value FROM alert_state FINAL "
        "WHERE startsWith(rule_id, {prefix:String}) AND state = 'firing' AND is_deleted = 0",
        {"prefix": RULE_PREFIX},
    ).result_rows
    return [_State(p, r, s, _utc(since), float(v)) for p, r, s, since, v in rows]


# ------------------------------------------------------------------------------------------------- events


def _labels(budget: Budget, start: datetime, end: datetime) -> dict[str, str]:
    return {"budget_id": budget.budget_id, "scope_type": budget.scope_type, "scope_value": budget.scope_value,
            "period": budget.period, "period_start": _iso(start), "period_end": _iso(end),
            "revision": budget.revision, "kind": budget.kind, "limit_usd": f"{float(budget.limit_usd):.6f}"}


def _firing_event(alert: DueAlert, now: datetime) -> BudgetAlertEvent:
    status, budget = alert.status, alert.status.budget
    limit = float(budget.limit_usd)
    labels = _labels(budget, status.period_start, status.period_end) | {
        "threshold": alert.label, "spent_usd": f"{status.spent_usd:.6f}",
        "forecast_usd": f"{status.forecast_usd:.6f}", "used_ratio": f"{status.used_ratio:.6f}"}
    forecast = alert.label == FORECAST
    return BudgetAlertEvent(
        project_id=budget.project_id, rule_id=rule_id(budget.budget_id), series_key=budget.scope_key,
        state="firing", severity=alert.severity,
        metric="budget_forecast_usd" if forecast else "budget_spend_usd",
        value=status.forecast_usd if forecast else status.spent_usd,
        threshold=limit if forecast else limit * (alert.threshold or 1.0),
        window_s=int((status.period_end - status.period_start).total_seconds()), message=alert.message,
        labels=labels, event_time=now)


def _resolutions(budgets: Iterable[Budget], states: Iterable[_State], now: datetime) -> list[BudgetAlertEvent]:
    """Resolve firing budget states whose period is over, whose budget was re-created, or that was deleted.

    An alert of the new period may fire in the same evaluation: it is recorded after the resolution, so the
    state ends ``firing`` and a pager sees one incident end and the next begin.
    """
    live = {(b.project_id, rule_id(b.budget_id)): b for b in budgets}
    events = []
    for state in states:
        budget = live.get((state.project_id, state.rule_id))
        if budget is None:
            reason, labels = "the budget was deleted", {"budget_id": state.rule_id.removeprefix(RULE_PREFIX)}
        else:
            start, end = period_bounds(budget.period, now)
            if state.since >= max(start, budget.created_at):
                continue  # still firing in the current period of the current revision
            per = "day" if budget.period == "day" else "month"
            reason = (f"a new {per} began" if state.since < start else "the budget was re-created")
            labels = _labels(budget, start, end)
        events.append(BudgetAlertEvent(
            project_id=state.project_id, rule_id=state.rule_id, series_key=state.series_key, state="resolved",
            severity="info", metric="budget_spend_usd", value=state.last_value, threshold=0.0, window_s=0,
            message=f"Budget {labels['budget_id']} ({state.series_key}) is no longer alerting: {reason}.",
            labels=labels, event_time=now))
    return events


def _record(store: Store, resolved: Sequence[BudgetAlertEvent], fired: Sequence[BudgetAlertEvent],
            states: Sequence[_State], now: datetime) -> None:
    """Append the events and set the states, one insert each (events first: they are the dedup source).

    A budget that was already firing in this period keeps its ``since``; otherwise ``since`` is now.
    """
    events = [*resolved, *fired]
    if not events:
        return
    store.insert_columns("alert_events", [list(c) for c in zip(*(
        (e.project_id, e.rule_id, e.event_time, e.series_key, e.state, e.severity, e.metric, float(e.value),
         float(e.threshold), e.window_s, e.message, e.labels, []) for e in events))], EVENT_COLUMNS)
    still_firing = {(s.project_id, s.rule_id): s.since for s in states}
    for event in resolved:
        still_firing.pop((event.project_id, event.rule_id), None)
    latest: dict[tuple[str, str], BudgetAlertEvent] = {}
    for event in events:  # one state per budget: the last event of this evaluation wins
        latest[(event.project_id, event.rule_id)] = event
    rows = []
    for key, e in latest.items():
        since = still_firing.get(key, now) if e.state == "firing" else now
        rows.append((e.project_id, e.rule_id, e.series_key, e.state, since, float(e.value), now, now, 0))
    store.insert_columns("alert_state", [list(c) for c in zip(*rows)], STATE_COLUMNS)
