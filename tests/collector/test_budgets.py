"""Budgets: the pure maths, spend and forecast from the rollups, the API (status contract the SDK reads), the CLI
and the job-runs endpoint."""

from __future__ import annotations

import json
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal

import pytest
from fastapi.testclient import TestClient
from inferwatch_collector.cost import budgets as b
from inferwatch_collector.rows import LLM_CALL_COLUMNS
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.cli import main

from tests.helpers.keys import Keys
from tests.helpers.factories import llm_call

USER = "ab" * 32
STATUS_KEYS = {"budget_id", "scope_type", "scope_value", "period", "kind", "limit_usd", "spent_usd", "used_ratio",
               "exceeded", "forecast_exceeds", "forecast_usd", "period_start", "period_end"}


@pytest.fixture
def app_settings(settings: Settings) -> Settings:
    """The collector's test settings, without the embedded scheduler (one test below turns it on)."""
    return settings.model_copy(update={"flush_interval_s": 0.02, "ingest_workers": 0,
                                       "collector_scheduler": "off"})


def us(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000)


def insert_costs(store: Store, *calls: tuple[datetime, float], project: str = "p1", **fields) -> None:
    """Calls of the given costs at the given times (all other fields from the factory, overridable)."""
    rows = [llm_call(project, start_time=us(when), cost_usd=cost, **fields) for when, cost in calls]
    store.insert_columns("llm_calls", [list(c) for c in zip(*rows)], LLM_CALL_COLUMNS)


def budget(**overrides) -> b.Budget:
    fields = dict(project_id="p1", budget_id="b1", scope_type="project", scope_value="", period="month",
                  kind="hard", limit_usd=Decimal("100"), thresholds=b.DEFAULT_THRESHOLDS,
                  created_at=datetime(2026, 1, 1, tzinfo=UTC))
    fields.update(overrides)
    return b.Budget(**fields)


def earlier_today(now: datetime, seconds: float = 60) -> datetime:
    """A moment before ``now`` that is still today (UTC), whatever the time of day the test runs at."""
    midnight = datetime.combine(now.date(), time(0), UTC)
    return now - min(timedelta(seconds=seconds), (now - midnight) / 2)


# ------------------------------------------------------------------------------------------------- pure maths


def test_periods_are_utc_days_and_calendar_months() -> None:
    now = datetime(2026, 12, 31, 23, 30, tzinfo=UTC)
    assert b.period_bounds("day", now) == (datetime(2026, 12, 31, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))
    assert b.period_bounds("month", now) == (datetime(2026, 12, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))
    feb = datetime(2028, 2, 10, 5, tzinfo=UTC)
    assert b.period_bounds("month", feb) == (datetime(2028, 2, 1, tzinfo=UTC), datetime(2028, 3, 1, tzinfo=UTC))
    # naive datetimes are UTC; aware ones are converted
    assert b.period_bounds("day", datetime(2026, 5, 1, 1)) == b.period_bounds(
        "day", datetime(2026, 5, 1, 3, tzinfo=UTC))


def test_burn_rates_and_forecast() -> None:
    now = datetime(2026, 11, 20, 12, 30, tzinfo=UTC)
    start, end = b.trailing_window(now)
    assert start == datetime(2026, 11, 19, 13, tzinfo=UTC) and end == now  # 23.5 hours
    assert b.burn_rate_per_hour(47.0, start, end) == pytest.approx(2.0)
    # daily: today's average; the first minutes of a day count as one hour
    day_start = datetime(2026, 11, 20, tzinfo=UTC)
    assert b.daily_burn_rate(30.0, day_start, now) == pytest.approx(30.0 / 12.5)
    assert b.daily_burn_rate(5.0, day_start, day_start + timedelta(minutes=6)) == pytest.approx(5.0)
    # spent + rate x hours left
    assert b.forecast_usd(10.0, 2.0, now, datetime(2026, 11, 21, tzinfo=UTC)) == pytest.approx(10.0 + 2.0 * 11.5)
    assert b.forecast_usd(10.0, 2.0, now, now) == 10.0


def test_status_numbers() -> None:
    now = datetime(2026, 11, 20, 12, tzinfo=UTC)
    exact = b.compute_status(budget(period="day"), 100.0, 0.0, now)
    assert exact.exceeded and exact.used_ratio == 1.0 and not exact.forecast_exceeds  # at the limit = exceeded
    under = b.compute_status(budget(period="day"), 60.0, 5.0, now)
    assert (under.used_ratio, under.exceeded) == (0.6, False)
    assert under.forecast_usd == pytest.approx(60.0 + 5.0 * 12) and under.forecast_exceeds
    doc = under.to_json()
    assert set(doc) == STATUS_KEYS
    assert doc["period_start"] == "2026-11-20T00:00:00.000Z" and doc["period_end"] == "2026-11-21T00:00:00.000Z"


def _due(spent: float, sent: set[str], *, kind: str = "hard", rate: float = 0.0, thresholds=b.DEFAULT_THRESHOLDS
         ) -> list[b.DueAlert]:
    now = datetime(2026, 11, 20, 12, tzinfo=UTC)
    return b.due_alerts(b.compute_status(budget(kind=kind, period="day", thresholds=thresholds), spent, rate, now),
                        sent)


def test_due_alerts_one_per_threshold_and_a_jump_sends_only_the_highest() -> None:
    assert _due(40.0, set()) == []
    assert [a.label for a in _due(50.0, set())] == ["0.5"]
    assert _due(60.0, {"0.5"}) == []
    assert [a.label for a in _due(85.0, {"0.5"})] == ["0.8"]
    # from nothing to 90%: one "80%" alert, and "50%" never follows
    assert [a.label for a in _due(90.0, set())] == ["0.8"]
    assert _due(95.0, {"0.8"}) == []
    assert [a.label for a in _due(130.0, {"0.5", "0.8"})] == ["1.0"]
    assert [a.label for a in _due(130.0, set(), thresholds=(0.5, 1.0, 1.2))] == ["1.2"]
    assert [a.label for a in _due(55.0, {"", b.FORECAST})] == ["0.5"]  # unreadable labels cover nothing


def test_due_alerts_severity_and_words() -> None:
    (hard_full,) = _due(120.0, set(), kind="hard")
    (soft_full,) = _due(120.0, set(), kind="soft")
    (hard_half,) = _due(55.0, set(), kind="hard")
    assert (hard_full.severity, soft_full.severity, hard_half.severity) == ("critical", "warning", "warning")
    assert "$120.00 of its $100.00 hard budget today" in hard_full.message
    assert "120% used, past the 100% threshold" in hard_full.message and "blocked" in hard_full.message
    assert "blocked" not in soft_full.message


def test_due_forecast_alert_once_and_not_after_the_limit() -> None:
    # 12 hours left at $5/h: 50 + 60 = 110 > 100
    alerts = _due(50.0, {"0.5"}, rate=5.0)
    assert [a.label for a in alerts] == [b.FORECAST]
    assert alerts[0].severity == "warning" and "forecast to reach $110.00" in alerts[0].message
    assert _due(50.0, {"0.5", b.FORECAST}, rate=5.0) == []
    assert [a.label for a in _due(100.0, {"0.5", "0.8"}, rate=5.0)] == ["1.0"]  # exceeded: no forecast alert


@pytest.mark.parametrize("fields, field", [
    (dict(scope_type="team"), "scope_type"),
    (dict(scope_type="feature", scope_value=""), "scope_value"),
    (dict(scope_type="project", scope_value="x"), "scope_value"),
    (dict(period="week"), "period"),
    (dict(kind="firm"), "kind"),
    (dict(limit_usd=0), "limit_usd"),
    (dict(limit_usd="ten"), "limit_usd"),
    (dict(limit_usd=float("nan")), "limit_usd"),
    (dict(thresholds=[]), "thresholds"),
    (dict(thresholds=[0.5, -1]), "thresholds"),
    (dict(budget_id="no spaces"), "budget_id"),
])
def test_validation_names_the_field(fields: dict, field: str) -> None:
    args = dict(scope_type="project", scope_value="", period="month", kind="soft", limit_usd=10)
    with pytest.raises(b.BudgetError) as failure:
        b.validate_budget(**(args | fields))
    assert failure.value.field == field and str(failure.value).startswith(f"{field}: ")


def test_validation_normalises() -> None:
    spec = b.validate_budget(scope_type="feature", scope_value="checkout", period="day", kind="hard",
                             limit_usd=12.3456789, thresholds=[1.0, 0.25, 0.25])
    assert spec.limit_usd == Decimal("12.345679") and spec.thresholds == (0.25, 1.0)
    assert spec.budget_id.startswith("b_")


# ------------------------------------------------------------------------------------------- spend and status


def test_spend_per_scope_and_period_from_the_rollups(store: Store) -> None:
    now = datetime.combine(datetime.now(UTC).date() - timedelta(days=2), time(12), UTC)
    yesterday = now - timedelta(days=1)
    insert_costs(store, (now - timedelta(hours=1), 3.0), (yesterday, 4.0), feature="checkout", user_hash=USER)
    insert_costs(store, (now - timedelta(hours=2), 5.0), feature="search", user_hash="cd" * 32)
    insert_costs(store, (now - timedelta(hours=1), 1000.0), project="p2")  # another project: never counted
    insert_costs(store, (now + timedelta(hours=13), 7.0))  # tomorrow: not in today's spend

    def status(**fields) -> b.BudgetStatus:
        return b.budget_status(store, budget(**fields), now)

    assert status(period="day").spent_usd == pytest.approx(8.0)
    assert status(period="day", scope_type="feature", scope_value="checkout").spent_usd == pytest.approx(3.0)
    assert status(period="day", scope_type="user", scope_value=USER).spent_usd == pytest.approx(3.0)
    month = status(period="month")
    others = ((yesterday, 4.0), (now + timedelta(hours=13), 7.0))
    in_month = [cost for when, cost in others if when.month == now.month]
    assert month.spent_usd == pytest.approx(8.0 + sum(in_month))
    # the monthly burn is the trailing window [13:00 yesterday, 12:00): 3 + 5 (+ 0 for yesterday's 12:00 call)
    assert month.burn_rate_usd_per_hour == pytest.approx(8.0 / 23)
    hours_left = (month.period_end - now).total_seconds() / 3600
    assert month.forecast_usd == pytest.approx(month.spent_usd + 8.0 / 23 * hours_left)
    feature = status(period="month", scope_type="feature", scope_value="search")
    assert feature.burn_rate_usd_per_hour == pytest.approx(5.0 / 23)
    user = status(period="month", scope_type="user", scope_value=USER)
    assert user.burn_rate_usd_per_hour == pytest.approx(3.0 / 23)
    # daily: today's own average over 12 elapsed hours
    assert status(period="day").burn_rate_usd_per_hour == pytest.approx(8.0 / 12)


# ------------------------------------------------------------------------------------------------------- API


def create(client: TestClient, key: str, **body) -> dict:
    response = client.post("/api/v1/budgets", json=body, headers=Keys.header(key))
    assert response.status_code == 201, response.text
    return response.json()


def test_status_endpoint_contract(client: TestClient, keys: Keys, store: Store) -> None:
    create(client, keys.admin, budget_id="b1", scope_type="project", period="month", kind="hard", limit_usd=100)
    create(client, keys.admin, budget_id="chk", scope_type="feature", scope_value="checkout", period="day",
           kind="soft", limit_usd=2.5, thresholds=[0.9])
    now = datetime.now(UTC)
    insert_costs(store, (earlier_today(now), 3.0), feature="checkout")

    for key in (keys.read, keys.ingest, keys.admin):  # the SDK guard polls with the app's ingest key
        response = client.get("/api/v1/budgets/status", headers=Keys.header(key))
        assert response.status_code == 200, response.text
    doc = response.json()
    assert set(doc) == {"generated_at", "budgets"}
    generated = datetime.fromisoformat(doc["generated_at"])
    assert generated.tzinfo is not None and abs(generated - datetime.now(UTC)) < timedelta(minutes=5)
    by_id = {entry["budget_id"]: entry for entry in doc["budgets"]}
    assert set(by_id) == {"b1", "chk"}
    for entry in by_id.values():
        assert set(entry) == STATUS_KEYS
        assert all(isinstance(entry[k], float) for k in ("limit_usd", "spent_usd", "used_ratio", "forecast_usd"))
        assert all(isinstance(entry[k], bool) for k in ("exceeded", "forecast_exceeds"))
        start, end = datetime.fromisoformat(entry["period_start"]), datetime.fromisoformat(entry["period_end"])
        assert start <= generated < end
    project, feature = by_id["b1"], by_id["chk"]
    assert (project["scope_type"], project["scope_value"], project["period"], project["kind"]) == (
        "project", "", "month", "hard")
    assert project["spent_usd"] == pytest.approx(3.0) and project["used_ratio"] == pytest.approx(0.03)
    assert project["exceeded"] is False and project["limit_usd"] == 100.0
    assert (feature["scope_type"], feature["scope_value"], feature["kind"]) == ("feature", "checkout", "soft")
    assert feature["exceeded"] is True and feature["used_ratio"] == pytest.approx(1.2)
    assert feature["forecast_exceeds"] is True and feature["forecast_usd"] >= 3.0

    # a key with neither read nor ingest, and no key at all
    assert client.get("/api/v1/budgets/status").status_code == 401
    # another project sees only its own (none)
    other = client.get("/api/v1/budgets/status", headers=Keys.header(keys.other_project)).json()
    assert other["budgets"] == []


def test_budget_crud_scopes_and_isolation(client: TestClient, keys: Keys) -> None:
    body = dict(budget_id="b1", scope_type="user", scope_value=USER, period="day", kind="soft", limit_usd=5)
    assert client.post("/api/v1/budgets", json=body, headers=Keys.header(keys.read)).status_code == 403
    made = create(client, keys.admin, **body)
    assert made["thresholds"] == [0.5, 0.8, 1.0] and made["limit_usd"] == 5.0
    duplicate = client.post("/api/v1/budgets", json=body, headers=Keys.header(keys.admin))
    assert duplicate.status_code == 409 and "already exists" in duplicate.json()["error"]
    generated = create(client, keys.admin, scope_type="project", period="month", kind="hard", limit_usd=1)
    assert generated["budget_id"].startswith("b_")
    # the same id in another project is another budget
    create(client, keys.other_project, **body)

    listed = client.get("/api/v1/budgets", headers=Keys.header(keys.read)).json()["budgets"]
    assert sorted(x["budget_id"] for x in listed) == sorted(["b1", generated["budget_id"]])
    assert client.get("/api/v1/budgets", headers=Keys.header(keys.ingest)).status_code == 403

    assert client.delete("/api/v1/budgets/b1", headers=Keys.header(keys.read)).status_code == 403
    assert client.delete("/api/v1/budgets/b1", headers=Keys.header(keys.admin)).status_code == 204
    assert client.delete("/api/v1/budgets/b1", headers=Keys.header(keys.admin)).status_code == 404
    listed = client.get("/api/v1/budgets", headers=Keys.header(keys.read)).json()["budgets"]
    assert [x["budget_id"] for x in listed] == [generated["budget_id"]]
    other = client.get("/api/v1/budgets", headers=Keys.header(keys.other_project)).json()["budgets"]
    assert [x["budget_id"] for x in other] == ["b1"]  # p2's budget survived p1's delete
    # re-creating a deleted id works
    create(client, keys.admin, **body)


@pytest.mark.parametrize("body, field", [
    (dict(scope_type="project", period="month", kind="hard", limit_usd=-1), "limit_usd"),
    (dict(scope_type="feature", period="month", kind="hard", limit_usd=1), "scope_value"),
    (dict(scope_type="project", period="week", kind="hard", limit_usd=1), "period"),
    (dict(scope_type="project", period="day", kind="hard"), "limit_usd"),
    (dict(scope_type="project", period="day", kind="hard", limit_usd=1, thresholds=[0]), "thresholds"),
    (dict(scope_type="project", period="day", kind="hard", limit_usd=1, limit=3), "limit"),
    (dict(scope_type="project", period="day", kind="hard", limit_usd=1, budget_id="a b"), "budget_id"),
])
def test_api_validation_errors_name_the_field(client: TestClient, keys: Keys, body: dict, field: str) -> None:
    response = client.post("/api/v1/budgets", json=body, headers=Keys.header(keys.admin))
    assert response.status_code == 422, response.text
    assert response.json()["error"].startswith(f"{field}: ")


def test_job_runs_endpoint(client: TestClient, keys: Keys, store: Store) -> None:
    from inferwatch_alerts.job_runs import run_recorded

    def broken(_store: Store, _now: datetime) -> None:
        raise RuntimeError("reports table is missing")

    ok = run_recorded(store, "budgets", lambda _s, _n: {"fired": 2})
    failed = run_recorded(store, "cost_report", broken)
    response = client.get("/api/v1/jobs/runs", headers=Keys.header(keys.read))
    assert response.status_code == 200
    runs = {run["run_id"]: run for run in response.json()["runs"]}
    assert set(runs) == {ok.run_id, failed.run_id}  # each run once: its final version replaced 'running'
    assert runs[ok.run_id]["outcome"] == "success" and runs[ok.run_id]["details"] == {"fired": "2"}
    assert runs[failed.run_id]["outcome"] == "failure"
    assert runs[failed.run_id]["error"] == "RuntimeError: reports table is missing"
    assert runs[failed.run_id]["ended_at"] >= runs[failed.run_id]["started_at"]
    only = client.get("/api/v1/jobs/runs", params={"outcome": "failure"}, headers=Keys.header(keys.read)).json()
    assert [run["run_id"] for run in only["runs"]] == [failed.run_id]
    running = client.get("/api/v1/jobs/runs", params={"outcome": "running"}, headers=Keys.header(keys.read))
    assert running.json()["runs"] == []
    by_job = client.get("/api/v1/jobs/runs", params={"job": "budgets"}, headers=Keys.header(keys.read)).json()
    assert [run["run_id"] for run in by_job["runs"]] == [ok.run_id]
    assert client.get("/api/v1/jobs/runs", headers=Keys.header(keys.ingest)).status_code == 403


# ------------------------------------------------------------------------------------------------------- CLI


def test_budgets_cli(tmp_path, capsys) -> None:
    data = str(tmp_path / "data")
    assert main(["--data-dir", data, "budgets", "create", "--project", "shop", "--scope", "feature", "--value",
                 "checkout", "--period", "day", "--kind", "hard", "--limit", "2.50", "--id", "chk"]) == 0
    assert "created budget chk" in capsys.readouterr().out
    assert main(["--data-dir", data, "budgets", "create", "--project", "shop", "--scope", "feature",
                 "--period", "day", "--kind", "hard", "--limit", "1"]) == 2
    assert "scope_value: a feature budget needs" in capsys.readouterr().err
    assert main(["--data-dir", data, "budgets", "list"]) == 0
    assert "hard $2.50 per day on feature=checkout (alerts at 50%, 80%, 100%)" in capsys.readouterr().out
    assert main(["--data-dir", data, "budgets", "status", "--project", "shop", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["budgets"]
    assert (entry["budget_id"], entry["spent_usd"], entry["exceeded"]) == ("chk", 0.0, False)
    assert main(["--data-dir", data, "budgets", "status", "--project", "shop"]) == 0
    assert "chk" in capsys.readouterr().out
    assert main(["--data-dir", data, "scheduler", "--once", "budgets"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("budgets success") and "budgets: 1" in out
    assert main(["--data-dir", data, "scheduler", "--once", "nope"]) == 2
    assert main(["--data-dir", data, "budgets", "delete", "--project", "shop", "chk"]) == 0
    assert main(["--data-dir", data, "budgets", "delete", "--project", "shop", "chk"]) == 1
