"""The budget evaluation job on a real embedded database: one alert per threshold per period, across repeated
evaluations and restarts; forecast alerts; soft vs hard; project and scope isolation; period rollover."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest
from inferwatch_alerts import budget_alerts
from inferwatch_alerts.budget_alerts import BudgetAlertEvent, BudgetEvaluationError, evaluate_budgets
from inferwatch_alerts.job_runs import run_recorded
from inferwatch_collector.cost import budgets as b
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store

from tests.helpers.budget_data import DAY, LATE, make, spend

def first_of_previous_month() -> datetime:
    this_month = date.today().replace(day=1)
    return datetime.combine((this_month - timedelta(days=1)).replace(day=1), time(12), UTC)


def events(store: Store, project: str | None = None, state: str = "firing") -> list[dict]:
    where = " AND project_id = {p:String}" if project else ""
    rows = store.query(
        "SELECT project_id, rule_id, series_key, severity, metric, value, threshold, message, labels "
        "FROM alert_events WHERE state = {s:String}" + where + " ORDER BY event_time, labels['threshold']",
        {"s": state, "p": project or ""},
    ).result_rows
    names = ("project_id", "rule_id", "series_key", "severity", "metric", "value", "threshold", "message",
             "labels")
    return [dict(zip(names, row)) for row in rows]


def alert_state(store: Store) -> dict[tuple[str, str], str]:
    rows = store.query("SELECT project_id, rule_id, state FROM alert_state FINAL").result_rows
    return {(p, r): s for p, r, s in rows}


def test_one_event_per_threshold_across_evaluations_and_a_restart(settings: Settings, store: Store) -> None:
    make(store)
    minute = timedelta(minutes=1)
    spend(store, LATE - timedelta(hours=5), 30.0)
    for i in range(3):
        assert evaluate_budgets(store, LATE + i * minute).fired == []  # 30%: nothing yet
    spend(store, LATE - timedelta(hours=4), 25.0)  # 55%
    results = [evaluate_budgets(store, LATE + (3 + i) * minute) for i in range(3)]
    assert [len(r.fired) for r in results] == [1, 0, 0]
    spend(store, LATE - timedelta(hours=3), 30.0)  # 85%
    assert [len(evaluate_budgets(store, LATE + (6 + i) * minute).fired) for i in range(3)] == [1, 0, 0]

    # restart: the store is closed and a new one opened on the same data; nothing is kept in memory
    store.close()
    reopened = Store.open(settings)
    try:
        assert evaluate_budgets(reopened, LATE + 10 * minute).fired == []
        spend(reopened, LATE - timedelta(hours=2), 20.0)  # 105%
        assert len(evaluate_budgets(reopened, LATE + 11 * minute).fired) == 1
        reopened.close()
        again = Store.open(settings)
        try:
            for i in range(3):
                assert evaluate_budgets(again, LATE + (12 + i) * minute).fired == []
            fired = events(again)
            assert alert_state(again) == {("p1", "budget:b1"): "firing"}
        finally:
            again.close()
    finally:
        reopened.close()

    assert [e["labels"]["threshold"] for e in fired] == ["0.5", "0.8", "1.0"]
    assert [e["severity"] for e in fired] == ["warning", "warning", "critical"]  # hard: critical at 100%
    assert {e["rule_id"] for e in fired} == {"budget:b1"} and {e["series_key"] for e in fired} == {"project"}
    full = fired[-1]
    assert full["metric"] == "budget_spend_usd" and full["value"] == pytest.approx(105.0)
    assert full["threshold"] == pytest.approx(100.0)
    assert "$105.00 of its $100.00 hard budget today" in full["message"]
    assert full["labels"]["scope_type"] == "project" and full["labels"]["period"] == "day"
    assert full["labels"]["period_start"] == f"{DAY.isoformat()}T00:00:00.000Z"


def test_forecast_alert_fires_once(store: Store) -> None:
    now = first_of_previous_month()  # a whole month ahead
    make(store, now=now, period="month", kind="hard", limit_usd=100)
    spend(store, now - timedelta(hours=2), 10.0)
    spend(store, now - timedelta(hours=30), 500.0)  # before the trailing window (and the period): not burn
    result = evaluate_budgets(store, now)
    (event,) = result.fired
    assert event.labels["threshold"] == b.FORECAST and event.severity == "warning"
    hours_left = (b.period_bounds("month", now)[1] - now).total_seconds() / 3600
    assert event.metric == "budget_forecast_usd" and event.value == pytest.approx(10.0 + 10.0 / 23 * hours_left)
    assert event.threshold == 100.0
    assert "forecast to reach $" in event.message and "$10.00 of its $100.00" in event.message
    for minutes in range(1, 4):
        assert evaluate_budgets(store, now + timedelta(minutes=minutes)).fired == []
    assert len(events(store)) == 1


def test_daily_forecast_uses_todays_rate(store: Store) -> None:
    noon = datetime.combine(DAY, time(12), UTC)
    make(store, now=noon, period="day", kind="soft", limit_usd=100)
    spend(store, noon - timedelta(hours=1), 45.0)  # 45% by noon: $3.75/h, $90 by midnight: fine
    assert evaluate_budgets(store, noon).fired == []
    spend(store, noon - timedelta(minutes=30), 10.0)  # 55%: $4.58/h, $110 by midnight
    fired = evaluate_budgets(store, noon + timedelta(minutes=1)).fired
    assert sorted(e.labels["threshold"] for e in fired) == ["0.5", b.FORECAST]


def test_soft_and_hard_budgets(store: Store) -> None:
    make(store, budget_id="soft", kind="soft")
    make(store, budget_id="hard", kind="hard")
    spend(store, LATE - timedelta(hours=1), 130.0)  # straight past 100%: one alert each, the highest
    evaluate_budgets(store, LATE)
    evaluate_budgets(store, LATE + timedelta(minutes=1))
    fired = {e["rule_id"]: e for e in events(store)}
    assert set(fired) == {"budget:soft", "budget:hard"} and len(events(store)) == 2
    assert fired["budget:soft"]["severity"] == "warning" and fired["budget:hard"]["severity"] == "critical"
    assert all(e["labels"]["threshold"] == "1.0" for e in fired.values())
    assert "soft budget" in fired["budget:soft"]["message"]
    assert "blocked or downgraded" in fired["budget:hard"]["message"]


def test_projects_and_scopes_are_isolated(store: Store) -> None:
    make(store, "p1", budget_id="b1", limit_usd=10)
    make(store, "p2", budget_id="b1", limit_usd=10)
    make(store, "p1", budget_id="chk", scope_type="feature", scope_value="checkout", limit_usd=10)
    make(store, "p1", budget_id="usr", scope_type="user", scope_value="cd" * 32, limit_usd=10)
    spend(store, LATE - timedelta(hours=1), 9.0, project="p2", feature="checkout", user_hash="cd" * 32)
    spend(store, LATE - timedelta(hours=1), 6.0, project="p1", feature="search", user_hash="ab" * 32)
    evaluate_budgets(store, LATE)
    got = {(e["project_id"], e["rule_id"]): e["labels"]["threshold"] for e in events(store)}
    # p2's $9 is 90% of p2's budget only; p1's $6 is not checkout's nor the user's
    assert got == {("p2", "budget:b1"): "0.8", ("p1", "budget:b1"): "0.5"}


def test_a_new_period_resolves_and_alerts_again(store: Store) -> None:
    make(store, limit_usd=10)
    spend(store, LATE - timedelta(hours=1), 6.0)
    assert len(evaluate_budgets(store, LATE).fired) == 1
    next_day = LATE + timedelta(hours=2)  # 01:00 the next day: a new daily period, nothing spent yet
    result = evaluate_budgets(store, next_day)
    assert result.fired == [] and len(result.resolved) == 1
    assert "a new day began" in result.resolved[0].message
    assert alert_state(store) == {("p1", "budget:b1"): "resolved"}
    assert evaluate_budgets(store, next_day + timedelta(minutes=1)).resolved == []  # resolved once
    spend(store, next_day - timedelta(minutes=30), 5.0)  # 50% half an hour into the day: forecast over too
    fired = evaluate_budgets(store, next_day + timedelta(minutes=2)).fired
    assert sorted(e.labels["threshold"] for e in fired) == ["0.5", b.FORECAST]
    assert alert_state(store) == {("p1", "budget:b1"): "firing"}
    assert sorted((e["labels"]["period_start"][:10], e["labels"]["threshold"]) for e in events(store)) == [
        (DAY.isoformat(), "0.5"), ((DAY + timedelta(days=1)).isoformat(), "0.5"),
        ((DAY + timedelta(days=1)).isoformat(), b.FORECAST)]


def test_deleting_or_recreating_a_budget(store: Store) -> None:
    make(store, limit_usd=10)
    spend(store, LATE - timedelta(hours=1), 6.0)
    evaluate_budgets(store, LATE)
    # re-created (a new revision): the old alert resolves, and the new definition alerts on its own
    assert b.delete_budget(store, "p1", "b1", now=LATE)
    b.create_budget(store, "p1", b.validate_budget(budget_id="b1", scope_type="project", period="day",
                                                   kind="hard", limit_usd=10, thresholds=[0.5, 0.9]),
                    now=LATE + timedelta(seconds=1))
    result = evaluate_budgets(store, LATE + timedelta(minutes=1))
    assert "re-created" in result.resolved[0].message
    assert [e.labels["threshold"] for e in result.fired] == ["0.5"]
    assert b.delete_budget(store, "p1", "b1", now=LATE + timedelta(minutes=2))
    result = evaluate_budgets(store, LATE + timedelta(minutes=3))
    assert result.budgets == 0 and "deleted" in result.resolved[0].message
    assert alert_state(store) == {("p1", "budget:b1"): "resolved"}


def test_notify_seam_gets_each_recorded_event_once_and_failures_do_not_resend(store: Store) -> None:
    make(store, budget_id="a", limit_usd=10)
    make(store, budget_id="z", limit_usd=10)
    spend(store, LATE - timedelta(hours=1), 6.0)
    received: list[BudgetAlertEvent] = []

    def notify(event: BudgetAlertEvent) -> None:
        received.append(event)
        if event.rule_id == "budget:a":
            raise ConnectionError("slack is down")

    result = evaluate_budgets(store, LATE, notify=notify)
    assert sorted(e.rule_id for e in received) == ["budget:a", "budget:z"] and result.notify_failures == 1
    evaluate_budgets(store, LATE + timedelta(minutes=1), notify=notify)
    assert len(received) == 2  # recorded before notifying: a failed notification is not re-sent by evaluation


def test_one_failing_budget_does_not_stop_the_others(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    make(store, budget_id="bad", limit_usd=10)
    make(store, budget_id="good", limit_usd=10)
    spend(store, LATE - timedelta(hours=1), 6.0)
    real = budget_alerts.budget_status

    def flaky(store_: Store, budget: b.Budget, now: datetime) -> b.BudgetStatus:
        if budget.budget_id == "bad":
            raise RuntimeError("boom")
        return real(store_, budget, now)

    monkeypatch.setattr(budget_alerts, "budget_status", flaky)
    with pytest.raises(BudgetEvaluationError, match="1 of 2 budgets could not be evaluated"):
        evaluate_budgets(store, LATE)
    assert [e["rule_id"] for e in events(store)] == ["budget:good"]
    run = run_recorded(store, "budgets", evaluate_budgets)  # as the scheduler records it: failure, counts kept
    assert run.outcome == "failure" and run.details["failed"] == "1" and run.details["budgets"] == "2"
    monkeypatch.setattr(budget_alerts, "budget_status", real)
    assert [e.rule_id for e in evaluate_budgets(store, LATE + timedelta(minutes=1)).fired] == ["budget:bad"]
