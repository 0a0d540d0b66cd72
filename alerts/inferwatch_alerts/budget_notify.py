"""Budget alerts out through the alert channels: the scheduler's budget job with a notifier.

Budget events (50/80/100 % and "forecast exceeds", :mod:`budget_alerts`) are routed like rule alerts: by severity
through the ``routing`` and ``channels`` of the alert rules file, with the same dispatcher (retries, delivery log).
One budget period is one incident: its threshold events share a dedup key, so PagerDuty updates one incident as
spend climbs and the period's end resolves it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inferwatch_collector.store import Store

from .budget_alerts import BudgetAlertEvent, EvaluationResult, evaluate_budgets
from .notifiers.base import AlertNotification
from .rules import RuleSet, load_configured


def notification_for(event: BudgetAlertEvent, dashboard_url: str | None = None) -> AlertNotification:
    """The notifier-facing form of a budget event (pure)."""
    labels = event.labels
    period_start = labels.get("period_start", "")
    incident = ":".join(("budget", event.project_id, labels.get("budget_id", event.rule_id),
                         labels.get("revision", ""), period_start))
    started = _parse(period_start) or event.event_time
    scope = labels.get("scope_type", "project")
    scope_value = labels.get("scope_value", "")
    where = f"{scope} {scope_value}" if scope_value else scope
    if event.state == "resolved":
        title = f"Budget {labels.get('budget_id', event.rule_id)} ({where}): period over, resolved"
    else:
        title = f"Budget {labels.get('budget_id', event.rule_id)} ({where}): {_threshold(labels)} reached"
    return AlertNotification(
        project_id=event.project_id, rule_id=event.rule_id, series_key=event.series_key,
        state="resolved" if event.state == "resolved" else "firing",
        severity=event.severity if event.severity in ("critical", "warning", "info") else "warning",
        title=title, message=event.message, signal=event.metric,
        value=event.value, threshold=event.threshold, baseline=None, labels=dict(labels), started_at=started,
        event_time=event.event_time, dedup_key=incident, dashboard_url=dashboard_url)


def _threshold(labels: Mapping[str, str]) -> str:
    """``0.8`` → ``80%``; the forecast label stays as it is."""
    label = labels.get("threshold", "")
    try:
        return f"{float(label):.0%}"
    except ValueError:
        return label.replace("_", " ") or "threshold"


def _parse(text: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class BudgetsJob:
    """The scheduler's budget job: evaluate every budget, send what is due through the alert channels.

    The rules file (channels, routing) is read when the job is made, so a bad file stops the scheduler at start;
    the dispatcher is built on the first run, with the store its deliveries are recorded in."""

    def __init__(self, ruleset: RuleSet | None = None, *, env: Mapping[str, str] = os.environ,
                 secrets_file: str | Path | None = None) -> None:
        self.ruleset = ruleset if ruleset is not None else load_configured()
        self._env = env
        self._secrets_file = secrets_file
        self._dispatcher: Any = None

    def _dispatch(self, store: Store, event: BudgetAlertEvent) -> None:
        if self._dispatcher is None:
            from .evaluate import build_channels
            from .notifiers.dispatch import Dispatcher

            self._dispatcher = Dispatcher(build_channels(self.ruleset, env=self._env,
                                                         secrets_file=self._secrets_file), store)
        channels = tuple(self.ruleset.routing.get(event.severity, ()))
        if channels:
            self._dispatcher.dispatch(notification_for(event, self.ruleset.dashboard_url), channels)

    def __call__(self, store: Store, now: datetime) -> EvaluationResult:
        return evaluate_budgets(store, now, notify=lambda event: self._dispatch(store, event))
