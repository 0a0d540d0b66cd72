"""End to end: OTLP traffic through the collector, the scheduler's alert job, real Slack and PagerDuty notifiers
against local receivers (PagerDuty over HTTPS with a certificate the client verifies).

A TTFT regression is planted in the traffic. Traffic is posted minute by minute and the scheduler's job is run
after each minute with the evaluation time driven explicitly (no sleeping): exactly one PagerDuty trigger and one
Slack message after the ``for`` duration; the collector and the scheduler are then restarted mid-incident (new
app, store, scheduler, job and notifiers; the same database) and nobody is paged again; on recovery exactly one
resolve goes out, with the dedup key of the trigger.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from inferwatch_alerts.scheduler import ALERT_RULES_JOB, Scheduler
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app

from tests.helpers import payloads
from tests.helpers.keys import Keys
from tests.helpers.notif_receiver import Receiver, Reply, self_signed_cert

MIN = timedelta(minutes=1)
B = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=90)  # minute 0 of the traffic
FIRST = 24  # the first minute of traffic
REGRESSION = range(30, 45)  # minutes whose calls take 3.2 s to the first token
PER_MINUTE = 20
ROUTING_KEY = "e2eR0UTINGkey0123456789abcdef0123"
SLACK_PATH = "/services/T0E2E/B0E2E/e2eSlackSecret"
RULES = """\
version: 1
channels:
  oncall:
    type: pagerduty
    routing_key_env: E2E_PD_ROUTING_KEY
    events_url: {pd_url}/v2/enqueue
    ca_bundle: {ca}
    source: inferwatch-e2e
  team:
    type: slack
    webhook_url_env: E2E_SLACK_WEBHOOK_URL
rules:
  - id: ttft-p95-high
    title: TTFT p95 above 2 s
    signal: ttft_p95
    group_by: [project, model]
    window: 5m
    for: 5m
    min_requests: 20
    threshold: {{op: ">", value: 2s}}
    severity: critical
    channels: [oncall, team]
"""


def spans(minute: int) -> bytes:
    """One minute of streamed chat calls of project p1 as an OTLP/protobuf request."""
    ttft_s = 3.2 if minute in REGRESSION else 0.3
    start = int((B + minute * MIN).timestamp() * 1e9)
    step = 60 * 10**9 // PER_MINUTE
    out = []
    for i in range(PER_MINUTE):
        attributes = {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
            "gen_ai.request.stream": True, "gen_ai.response.finish_reasons": ["stop"],
            "gen_ai.usage.input_tokens": 800, "gen_ai.usage.output_tokens": 150,
            "gen_ai.response.time_to_first_chunk": ttft_s + 0.01 * (i % 7),
        }
        out.append(payloads.make_span("chat gpt-4o", attributes, start=start + i * step,
                                      duration_ms=ttft_s * 1000 + 900))
    return payloads.make_request(*out).SerializeToString()


class Clock:
    """The scheduler's clock, set by the test: evaluation times are explicit."""

    def __init__(self) -> None:
        self.now = B

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Platform:
    """One running collector + scheduler over the test's database."""

    client: TestClient
    scheduler: Scheduler
    clock: Clock
    keys: Keys

    def minute(self, m: int) -> None:
        """Minute ``m`` of traffic arrives; then the alert job runs as it would a minute later."""
        response = self.client.post("/v1/traces", content=spans(m), headers={
            "Content-Type": "application/x-protobuf", **Keys.header(self.keys.ingest)})
        assert response.status_code == 200, response.text
        self.client.app.state.call_pairing.settle_all()  # 65 s later the 10 s pairing window has long passed
        self.clock.now = B + (m + 1) * MIN + timedelta(seconds=65)  # the window ending after minute m
        run = self.scheduler.run_now(ALERT_RULES_JOB)
        assert run.ok, run.error


@pytest.fixture
def receivers(tmp_path: Path) -> Iterator[tuple[Receiver, Receiver, Path]]:
    tls = self_signed_cert(tmp_path)
    accepted = Reply(202, json.dumps({"status": "success", "message": "Event processed"}),
                     {"Content-Type": "application/json"})
    with Receiver([accepted], tls=tls.server_context()) as pagerduty, Receiver([Reply(200, "ok")]) as slack:
        yield pagerduty, slack, tls.cert


@contextmanager
def running(settings: Settings, store: Store, keys: Keys) -> Iterator[Platform]:
    """A collector (the real app, the alerts API included) and a scheduler (the platform's default jobs, built
    from INFERWATCH_ALERT_RULES_FILE and the secrets in the environment) on ``store``."""
    app = create_app(settings, store=store)
    clock = Clock()
    with TestClient(app) as client:
        yield Platform(client, Scheduler(store, clock=clock), clock, keys)


def test_ttft_regression_pages_once_survives_a_restart_and_resolves_once(
        app_settings: Settings, settings: Settings, store: Store, keys: Keys,
        receivers: tuple[Receiver, Receiver, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pagerduty, slack, ca = receivers
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES.format(pd_url=pagerduty.url, ca=ca))
    monkeypatch.setenv("INFERWATCH_ALERT_RULES_FILE", str(rules))
    monkeypatch.setenv("E2E_PD_ROUTING_KEY", ROUTING_KEY)
    monkeypatch.setenv("E2E_SLACK_WEBHOOK_URL", slack.url + SLACK_PATH)
    quiet = app_settings.model_copy(update={"collector_scheduler": "off"})  # the test drives the scheduler

    def pages() -> list[tuple[str, str]]:
        return [(r.json()["event_action"], r.json()["dedup_key"]) for r in pagerduty.requests]

    def posts() -> list[str]:
        return [r.json()["text"] for r in slack.requests]

    with running(quiet, store, keys) as platform:
        for m in range(FIRST, 35):  # normal traffic, then the regression from minute 30: pending, not paged
            platform.minute(m)
        assert pages() == [] and posts() == []
        platform.minute(35)  # five minutes after it went pending: paged, once, on both channels
        [(action, key)] = pages()
        assert action == "trigger" and key.startswith("iw-")
        assert posts() == ["[CRITICAL] TTFT p95 above 2 s for p1 / model gpt-4o"]
        trigger = pagerduty.requests[0].json()
        assert trigger["routing_key"] == ROUTING_KEY and trigger["payload"]["severity"] == "critical"
        assert trigger["payload"]["custom_details"]["value"] > 2000
        assert trigger["payload"]["timestamp"] == f"{B + 36 * MIN:%Y-%m-%dT%H:%M}:00.000Z"
        for m in range(36, 40):
            platform.minute(m)
        [alert] = platform.client.get("/api/v1/alerts", headers=Keys.header(keys.read)).json()["alerts"]
        assert (alert["state"], alert["dedup_key"], alert["notified"]) == ("firing", key, True)

    # restart mid-incident: the collector and the scheduler stop; new ones start on the same database
    store.close()
    reopened = Store.open(settings)
    try:
        with running(quiet, reopened, keys) as platform:
            for m in range(40, 49):  # still regressed, then recovering: nobody is paged again
                platform.minute(m)
            assert pages() == [("trigger", key)] and len(posts()) == 1
            platform.minute(49)  # the first five-minute window without a slow call: resolved, once
            assert pages() == [("trigger", key), ("resolve", key)]
            assert posts()[1] == "[RESOLVED] TTFT p95 above 2 s for p1 / model gpt-4o"
            for m in range(50, 60):
                platform.minute(m)
            assert len(pages()) == 2 and len(posts()) == 2
            assert platform.client.get("/api/v1/alerts", headers=Keys.header(keys.read)).json()["alerts"] == []
            history = platform.client.get("/api/v1/alerts/history", headers=Keys.header(keys.read)).json()
            assert [(e["state"], e["dedup_key"]) for e in reversed(history["events"])] == [
                ("pending", key), ("firing", key), ("resolved", key)]
        deliveries = reopened.query("SELECT channel, state, ok, dedup_key FROM notifications ORDER BY sent_at, "
                                    "channel").result_rows
        assert deliveries == [("oncall", "firing", True, key), ("team", "firing", True, key),
                              ("oncall", "resolved", True, key), ("team", "resolved", True, key)]
        runs = reopened.query("SELECT count(), countIf(outcome = 'success') FROM job_runs FINAL "
                              "WHERE job = 'alert_rules'").result_rows
        assert runs == [(60 - FIRST, 60 - FIRST)]
    finally:
        reopened.close()
