"""The dashboard-facing alerts API: current alerts, history, silences, rules; scopes and project isolation.

The app is the platform's (the server's factory: collector app, alerts routers, its own lifespan), with keys for
two projects. Alerts come from real evaluations of planted regressions in both projects.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from inferwatch_alerts.alert_state import DbBackend
from inferwatch_alerts.evaluate import evaluate
from inferwatch_alerts.rules import parse_rules
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app

from tests.helpers.keys import Keys
from tests.helpers.traffic import add_calls, lognormal

MIN = timedelta(minutes=1)
T = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=1)
RULES = """\
version: 1
rules:
  - id: ttft
    title: TTFT p95 above 2 s
    signal: ttft_p95
    group_by: [project, model]
    window: 5m
    for: 5m
    min_requests: 20
    threshold: {op: ">", value: 2s}
    severity: warning
  - id: errors
    signal: error_rate
    group_by: [project]
    threshold: {value: 50%}
    severity: critical
    projects: [p2]
"""


@pytest.fixture
def api(app_settings: Settings, store: Store, keys: Keys) -> Iterator[TestClient]:
    app = create_app(app_settings.model_copy(update={"collector_scheduler": "off"}), store=store)
    with TestClient(app) as client:
        yield client


@pytest.fixture
def incidents(store: Store) -> None:
    """p1: model a regressed 20 minutes ago and is firing, model b is fine; p2: model c is pending."""
    add_calls(store, T, 40, 10, project="p1", model="a", seed=1, ttft_ms=lognormal(400, 0.3, 10, 1))
    add_calls(store, T + 40 * MIN, 20, 10, project="p1", model="a", seed=2, ttft_ms=3000)
    add_calls(store, T, 60, 10, project="p1", model="b", seed=3, ttft_ms=lognormal(400, 0.3, 10, 3))
    add_calls(store, T, 57, 10, project="p2", model="c", seed=4, ttft_ms=lognormal(400, 0.3, 10, 4))
    add_calls(store, T + 57 * MIN, 3, 10, project="p2", model="c", seed=5, ttft_ms=3000)
    rules = parse_rules(RULES)
    for minute in range(30, 61):
        evaluate(store, rules, T + (minute + 1) * MIN, backend=DbBackend(store))


def get(api: TestClient, path: str, key: str, **params: object) -> dict:
    response = api.get(path, headers=Keys.header(key), params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_current_alerts_are_the_projects_own(api: TestClient, keys: Keys, incidents: None) -> None:
    [alert] = get(api, "/api/v1/alerts", keys.read)["alerts"]
    assert {k: alert[k] for k in ("rule_id", "kind", "series_key", "state", "severity", "threshold", "labels",
                                  "notified")} == {
        "rule_id": "ttft", "kind": "rule", "series_key": "model=a", "state": "firing", "severity": "warning",
        "threshold": 2000.0, "labels": {"model": "a"}, "notified": True}
    assert alert["value"] == 3000.0 and alert["since"] == f"{T + 46 * MIN:%Y-%m-%dT%H:%M}:00.000Z"
    assert alert["incident_start"] == f"{T + 41 * MIN:%Y-%m-%dT%H:%M}:00.000Z"
    assert alert["dedup_key"].startswith("iw-") and alert["silenced_until"] is None
    everything = get(api, "/api/v1/alerts", keys.read, state="all")["alerts"]
    assert sorted((a["series_key"], a["state"]) for a in everything) == [("model=a", "firing"), ("model=b", "ok")]
    other = get(api, "/api/v1/alerts", keys.other_project)["alerts"]
    assert [(a["series_key"], a["state"]) for a in other] == [("model=c", "pending")]
    assert get(api, "/api/v1/alerts", keys.read, rule_id="errors")["alerts"] == []


def test_history_filters_and_isolation(api: TestClient, keys: Keys, incidents: None) -> None:
    events = get(api, "/api/v1/alerts/history", keys.read)["events"]
    assert [(e["series_key"], e["state"]) for e in events] == [("model=a", "firing"), ("model=a", "pending")]
    firing = events[0]
    assert firing["signal"] == "ttft_p95" and firing["window_s"] == 300 and firing["dedup_key"].startswith("iw-")
    assert "TTFT" in firing["labels"]["title"] and "threshold > 2.00 s" in firing["message"]
    assert get(api, "/api/v1/alerts/history", keys.read, state="pending")["events"][0]["state"] == "pending"
    assert get(api, "/api/v1/alerts/history", keys.read, series_key="model=b")["events"] == []
    assert get(api, "/api/v1/alerts/history", keys.read, end=(T + 30 * MIN).isoformat())["events"] == []
    assert [e["series_key"] for e in get(api, "/api/v1/alerts/history", keys.other_project)["events"]] == [
        "model=c"]
    bad = api.get("/api/v1/alerts/history", headers=Keys.header(keys.read),
                  params={"start": T.isoformat(), "end": (T - MIN).isoformat()})
    assert bad.status_code == 400
    epoch = api.get("/api/v1/alerts/history", headers=Keys.header(keys.read), params={"start": "0"})  # 1970
    assert epoch.status_code == 400 and epoch.json()["error"].startswith("start:")


def test_silences_need_admin_and_stay_in_their_project(api: TestClient, keys: Keys) -> None:
    body = {"rule_id": "ttft", "matchers": {"model": "a"}, "duration": "2h", "comment": "deploying"}
    assert api.post("/api/v1/alerts/silences", json=body, headers=Keys.header(keys.read)).status_code == 403
    created = api.post("/api/v1/alerts/silences", json=body, headers=Keys.header(keys.admin))
    assert created.status_code == 201, created.text
    silence = created.json()
    assert silence["rule_id"] == "ttft" and silence["matchers"] == {"model": "a"} and silence["active"]
    ends = datetime.fromisoformat(silence["ends_at"].replace("Z", "+00:00"))
    assert timedelta(hours=1, minutes=59) < ends - datetime.now(UTC) <= timedelta(hours=2)
    listed = get(api, "/api/v1/alerts/silences", keys.read)["silences"]
    assert [s["silence_id"] for s in listed] == [silence["silence_id"]]
    assert get(api, "/api/v1/alerts/silences", keys.other_project)["silences"] == []
    path = f"/api/v1/alerts/silences/{silence['silence_id']}"
    assert api.delete(path, headers=Keys.header(keys.other_project)).status_code == 404
    assert api.delete(path, headers=Keys.header(keys.read)).status_code == 403
    expired = api.delete(path, headers=Keys.header(keys.admin))
    assert expired.status_code == 200 and expired.json()["active"] is False
    assert get(api, "/api/v1/alerts/silences", keys.read)["silences"] == []
    assert [s["active"] for s in get(api, "/api/v1/alerts/silences", keys.read, include_expired=True)[
        "silences"]] == [False]


@pytest.mark.parametrize(("body", "message"), [
    ({"duration": "2h", "ends_at": "2099-01-01T00:00:00Z"}, "exactly one of ends_at and duration"),
    ({}, "exactly one of ends_at and duration"),
    ({"ends_at": "2020-01-01T00:00:00Z"}, "in the future"),
    ({"duration": "forever"}, "not a duration"),
    ({"duration": "200d"}, "at most 90 days"),
    ({"duration": "1h", "matchers": {"Model Name": "a"}}, "must be a label name"),
    ({"duration": "1h", "colour": "red"}, "colour"),
])
def test_bad_silences_are_refused(api: TestClient, keys: Keys, body: dict, message: str) -> None:
    response = api.post("/api/v1/alerts/silences", json=body, headers=Keys.header(keys.admin))
    assert response.status_code == 422 and message in response.json()["error"]


def test_rules_in_force_for_the_project(api: TestClient, keys: Keys, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = get(api, "/api/v1/alerts/rules", keys.read)
    assert defaults["source"] == "<packaged default_rules.yaml>"
    assert defaults["channels"] == {"pagerduty": "pagerduty", "slack": "slack"}
    ids = [r["id"] for r in defaults["rules"]]
    assert ids[:4] == ["ttft-p95-high", "error-rate-high", "cost-per-hour-spike", "refusal-rate-high"]
    errors = next(r for r in defaults["rules"] if r["id"] == "error-rate-high")
    assert errors["channels"] == ["pagerduty", "slack"] and errors["condition"] == {
        "type": "threshold", "op": ">", "value": 0.01, "confidence": 0.95, "min_events": 8, "clear": None}
    assert (errors["sustain"], errors["resolve_after_s"], errors["for_s"]) == ({"breaching": 5, "of": 10}, 600, 0)
    rules_file = tmp_path / "team-rules.yaml"
    rules_file.write_text(RULES)
    monkeypatch.setenv("INFERWATCH_ALERT_RULES_FILE", str(rules_file))
    assert [r["id"] for r in get(api, "/api/v1/alerts/rules", keys.read)["rules"]] == ["ttft"]
    assert [r["id"] for r in get(api, "/api/v1/alerts/rules", keys.other_project)["rules"]] == ["ttft", "errors"]
    assert get(api, "/api/v1/alerts/rules", keys.read)["source"] == "team-rules.yaml"  # no server path
    rules_file.write_text("version: 1\nrules:\n  - {id: x, signal: nope}\n")
    broken = api.get("/api/v1/alerts/rules", headers=Keys.header(keys.read))
    assert broken.status_code == 503 and "team-rules.yaml:3" in broken.json()["error"]


def test_every_endpoint_needs_a_key(api: TestClient) -> None:
    for path in ("/api/v1/alerts", "/api/v1/alerts/history", "/api/v1/alerts/silences", "/api/v1/alerts/rules"):
        assert api.get(path).status_code == 401


def test_rules_report_learning_until_the_project_has_their_history(api: TestClient, keys: Keys,
                                                                    store: Store) -> None:
    """The read key's project (p1) has one day and a half of calls; another project (p2) has none."""
    add_calls(store, datetime.now(UTC) - timedelta(hours=36), 30, 2, project="p1", model="a", seed=9)
    listed = get(api, "/api/v1/alerts/rules", keys.read)
    assert listed["history_days"] == 1
    rules = {r["id"]: r for r in listed["rules"]}
    cost = rules["cost-per-hour-spike"]
    assert cost["condition"]["kind"] == "seasonal" and cost["history_days"] == 3
    assert cost["learning"] is True and cost["learning_status"] == "learning: has 1 of 3 days"
    assert rules["ttft-p95-creep"]["learning_status"] == "learning: has 1 of 11 days"
    errors = rules["error-rate-high"]  # a threshold judges the window alone: nothing to learn
    assert errors["history_days"] == 0 and errors["learning"] is False and errors["learning_status"] == "ready"
    empty = {r["id"]: r for r in get(api, "/api/v1/alerts/rules", keys.other_project)["rules"]}
    assert empty["cost-per-hour-spike"]["learning_status"] == "learning: has 0 of 3 days"
