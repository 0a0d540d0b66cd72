"""The demo's alert channels: the real notifiers, built from the rules file ``up --demo-traffic`` writes, deliver to
the local receiver, which records and prints each delivery; the dispatcher records them in ``notifications``.

Nothing is mocked: the channels come from :func:`inferwatch_alerts.evaluate.build_channels` on the written file,
and each one posts over HTTP(S) (PagerDuty over TLS with the receiver's certificate) to the running receiver.
"""

from __future__ import annotations

import logging
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from inferwatch_alerts.evaluate import RuleEvaluationJob, build_channels
from inferwatch_alerts.notifiers import AlertNotification, Dispatcher, WebhookNotifier
from inferwatch_alerts.rules.files import RULES_FILE_ENV, load_rules
from inferwatch_collector.settings import Settings
from inferwatch_server.alert_receiver import AlertReceiver
from inferwatch_server.cli import up
from inferwatch_server.demo_alerts import (
    PAGERDUTY_KEY_ENV,
    SLACK_URL_ENV,
    WEBHOOK_KEY_ENV,
    DemoAlerts,
    start_demo_alerts,
)

EXPECTED_CHANNELS = {"slack", "webhook"} | ({"pagerduty"} if shutil.which("openssl") else set())


def notification(state: str = "firing", severity: str = "critical") -> AlertNotification:
    at = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
    return AlertNotification(
        project_id="demo", rule_id="error-rate-high", series_key="model=gpt-4o-mini", state=state,  # type: ignore
        severity=severity, title="Error rate above 1%", message="2.4% of calls failed over 5 minutes",  # type: ignore
        signal="error_rate", value=0.024, threshold=0.01, baseline=None, labels={"model": "gpt-4o-mini"},
        started_at=at, event_time=at, dedup_key="inferwatch:demo:error-rate-high:model=gpt-4o-mini")


@pytest.fixture
def demo(tmp_path: Path) -> Any:
    alerts = start_demo_alerts(tmp_path)
    yield alerts
    alerts.stop()


def test_the_demo_rules_are_the_packaged_rules_with_every_channel_configured(
        demo: DemoAlerts, caplog: pytest.LogCaptureFixture) -> None:
    packaged, written = load_rules(None), load_rules(demo.rules_file)
    assert [rule.id for rule in written.rules] == [rule.id for rule in packaged.rules]
    assert set(demo.channels) == EXPECTED_CHANNELS and bool(demo.note) == ("pagerduty" not in demo.channels)
    with caplog.at_level(logging.WARNING):
        channels = build_channels(written, env=demo.env)
    assert set(channels) == EXPECTED_CHANNELS, caplog.text  # none "not available": each one's settings are set
    assert not caplog.records
    for channel in channels.values():
        getattr(channel, "close", lambda: None)()


def test_the_real_notifiers_deliver_to_the_receiver(demo: DemoAlerts, store: Any, capsys: pytest.CaptureFixture[str],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    channels = build_channels(load_rules(demo.rules_file), env=demo.env)
    dispatcher = Dispatcher(channels, store, max_attempts=1)
    try:
        names = sorted(channels)
        with caplog.at_level(logging.WARNING):
            fired = dispatcher.dispatch(notification("firing"), names)
            resolved = dispatcher.dispatch(notification("resolved"), names)
    finally:
        dispatcher.close()
    assert all(d.ok for d in fired + resolved), fired + resolved
    assert not caplog.records, caplog.text  # e.g. PagerDuty's "accepted with an unexpected response body"
    got = sorted((r.kind, r.state, r.title) for r in demo.receiver.received)
    # a PagerDuty resolve carries only the incident's dedup key: the receiver shows its trigger's summary
    expected = sorted((kind, state, "Error rate above 1%") for kind in names for state in ("firing", "resolved"))
    assert got == expected
    printed = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("alert receiver: ") for line in printed) == len(got)
    recorded = store.query("SELECT channel, state, ok FROM notifications ORDER BY channel, state").result_rows
    assert recorded == sorted((name, state, True) for name in names for state in ("firing", "resolved"))


def test_the_receiver_refuses_a_webhook_signed_with_another_key(demo: DemoAlerts) -> None:
    forged = WebhookNotifier("forged", demo.receiver.webhook_url, "not-the-demo-signing-key", max_retries=0)
    try:
        delivery, = Dispatcher({"forged": forged}, max_attempts=1).dispatch(notification(), ["forged"])
    finally:
        forged.close()
    assert not delivery.ok and "HTTP 401" in delivery.error
    assert demo.receiver.received == []


@pytest.mark.parametrize("path, body, status", [
    ("/webhook", b"not json", 400),
    ("/slack/T/B/x", b"[1, 2]", 400),
    ("/elsewhere", b"{}", 404),
    ("/v2/enqueue", b"{}", 404),  # PagerDuty's endpoint is served over HTTPS only
])
def test_the_receiver_answers_bad_requests_without_recording_them(path: str, body: bytes, status: int) -> None:
    with AlertReceiver("key", on_delivery=lambda r: None) as receiver:
        base = receiver.webhook_url.removesuffix("/webhook")
        assert httpx.post(base + path, content=body).status_code == status
        assert receiver.received == []


def test_up_points_the_scheduler_at_the_receiver_unless_a_rules_file_is_configured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: Any, caplog: pytest.LogCaptureFixture) -> None:
    for name in (RULES_FILE_ENV, SLACK_URL_ENV, PAGERDUTY_KEY_ENV, WEBHOOK_KEY_ENV):
        monkeypatch.setenv(name, "")  # restored (removed) after the test, whatever up.demo_alerts sets
        monkeypatch.delenv(name)
    settings = Settings(data_dir=tmp_path / "data")
    alerts = up.demo_alerts(settings)
    assert alerts is not None
    try:
        assert os.environ[RULES_FILE_ENV] == str(tmp_path / "demo-alert-rules.yaml") == str(alerts.rules_file)
        # the scheduler's own job, as it is made in the server process: the rules file and credentials it finds
        with caplog.at_level(logging.WARNING):
            dispatcher = RuleEvaluationJob().dispatcher(store)
        assert set(dispatcher.channels) == EXPECTED_CHANNELS and not caplog.records, caplog.text
        dispatcher.close()
    finally:
        alerts.stop()
    mine = tmp_path / "mine.yaml"
    assert up.demo_alerts(settings.model_copy(update={"alert_rules_file": mine})) is None
    monkeypatch.setenv(RULES_FILE_ENV, str(mine))
    assert up.demo_alerts(Settings(data_dir=tmp_path / "data")) is None
