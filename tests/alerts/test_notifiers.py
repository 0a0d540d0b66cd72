"""Notifiers against real local receivers: the exact Slack Block Kit, PagerDuty Events v2 and webhook payloads,
retries (429, 5xx, connection refused) capped and slept through injected sleeps, no retry of a rejected request,
PagerDuty over HTTPS with verification on, secrets kept out of logs and errors, the dispatcher recording every
delivery in ``notifications`` on a real embedded store, and the channel configuration with its errors.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from inferwatch_alerts.notifiers import (
    AlertNotification,
    Delivery,
    Dispatcher,
    NotifyError,
    PagerDutyNotifier,
    SlackNotifier,
    WebhookNotifier,
    load_channels,
)
from inferwatch_alerts.notifiers.pagerduty import pd_dedup_key
from inferwatch_alerts.notifiers.slack import format_value, unit_of
from inferwatch_alerts.notifiers.webhook import verify_signature
from inferwatch_collector.migrations import Target, migration_files, render
from inferwatch_collector.store import Store

from tests.helpers.notif_receiver import Receiver, Reply, SelfSigned, free_port, self_signed_cert

STARTED = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)  # 1796198400
FIRED = datetime(2026, 12, 2, 8, 5, tzinfo=UTC)
RESOLVED = datetime(2026, 12, 2, 8, 40, tzinfo=UTC)  # 1796200800
DASHBOARD = "http://127.0.0.1:8501/alerts?rule=ttft_p95"
DEDUP = "inferwatch:proj-1:ttft_p95:model=gpt-4o"
MESSAGE = "TTFT p95 was 2,450 ms over the last 5 minutes (threshold 2,000 ms, baseline 820 ms)."
ROUTING_KEY = "R0UTINGKEY0123456789abcdef012345"
SLACK_PATH = "/services/T0001/B0002/SlackSecretToken42"
PD_ACCEPTED = Reply(202, json.dumps({"status": "success", "message": "Event processed", "dedup_key": DEDUP}),
                    {"Content-Type": "application/json"})


def note(**changes: Any) -> AlertNotification:
    fields: dict[str, Any] = dict(
        project_id="proj-1", rule_id="ttft_p95", series_key="model=gpt-4o", state="firing", severity="warning",
        title="TTFT p95 above 2 s for gpt-4o", message=MESSAGE, signal="ttft_p95_ms", value=2450.0,
        threshold=2000.0, baseline=820.0, labels={"model": "gpt-4o"}, started_at=STARTED, event_time=FIRED,
        dedup_key=DEDUP, dashboard_url=DASHBOARD,
    )
    return AlertNotification(**(fields | changes))


RESOLVED_NOTE = dict(state="resolved", severity="critical", event_time=RESOLVED, value=1210.0, baseline=None,
                     dashboard_url=None, message="", labels={"model": "gpt-4o", "feature": "<none>"})


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> SelfSigned:
    return self_signed_cert(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def sleeps() -> list[float]:
    return []


def slack(url: str, sleeps: list[float], **options: Any) -> SlackNotifier:
    return SlackNotifier("team-slack", url + SLACK_PATH, max_retries=2, retry_backoff_s=0.5,
                         sleep=sleeps.append, **options)


def pd(url: str, tls: SelfSigned, **options: Any) -> PagerDutyNotifier:
    settings: dict[str, Any] = dict(source="inferwatch-test", ca_bundle=tls.cert, max_retries=2,
                                    retry_backoff_s=0.01)
    return PagerDutyNotifier("oncall-pd", ROUTING_KEY, events_url=url + "/v2/enqueue", **(settings | options))


# ------------------------------------------------------------------------------------------------------- Slack


def test_slack_firing_message_is_exact_block_kit() -> None:
    with Receiver([Reply(200, "ok")]) as r:
        slack(r.url, []).send(note())
    [request] = r.requests
    assert (request.method, request.path) == ("POST", SLACK_PATH)
    assert request.headers["content-type"] == "application/json;charset=utf-8"
    assert request.json() == {
        "text": "[WARNING] TTFT p95 above 2 s for gpt-4o",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "emoji": True,
                                        "text": ":large_orange_circle: TTFT p95 above 2 s for gpt-4o"}},
            {"type": "section", "text": {"type": "mrkdwn", "text": MESSAGE}},
            {"type": "section", "fields": [
                {"type": "mrkdwn", "text": "*Signal*\n`ttft_p95_ms`"},
                {"type": "mrkdwn", "text": "*Value*\n2,450 ms"},
                {"type": "mrkdwn", "text": "*Threshold*\n2,000 ms"},
                {"type": "mrkdwn", "text": "*Baseline*\n820 ms"},
                {"type": "mrkdwn", "text": "*Group*\nmodel=gpt-4o"},
                {"type": "mrkdwn", "text": "*Started*\n<!date^1796198400^{date_short_pretty} {time}"
                                           "|2026-12-02T08:00:00.000Z>"},
            ]},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": "severity *warning* · rule `ttft_p95` · "
                                                                        "project `proj-1` · model=gpt-4o"}]},
            {"type": "actions", "elements": [{"type": "button", "text": {"type": "plain_text",
                                                                         "text": "Open dashboard"},
                                              "url": DASHBOARD, "action_id": "open_dashboard"}]},
        ],
    }


def test_slack_resolved_message_is_green_and_escapes_mrkdwn() -> None:
    with Receiver([Reply(200, "ok")]) as r:
        slack(r.url, []).send(note(**RESOLVED_NOTE))
    assert [q.json() for q in r.requests] == [{
        "text": "[RESOLVED] TTFT p95 above 2 s for gpt-4o",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "emoji": True,
                                        "text": ":large_green_circle: Resolved: TTFT p95 above 2 s for gpt-4o"}},
            {"type": "section", "fields": [
                {"type": "mrkdwn", "text": "*Signal*\n`ttft_p95_ms`"},
                {"type": "mrkdwn", "text": "*Value*\n1,210 ms"},
                {"type": "mrkdwn", "text": "*Threshold*\n2,000 ms"},
                {"type": "mrkdwn", "text": "*Group*\nmodel=gpt-4o"},
                {"type": "mrkdwn", "text": "*Started*\n<!date^1796198400^{date_short_pretty} {time}"
                                           "|2026-12-02T08:00:00.000Z>"},
                {"type": "mrkdwn", "text": "*Resolved*\n<!date^1796200800^{date_short_pretty} {time}"
                                           "|2026-12-02T08:40:00.000Z>"},
            ]},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": "severity *critical* · rule `ttft_p95` · "
                                              "project `proj-1` · feature=&lt;none&gt; · model=gpt-4o"}]},
        ],
    }]


def test_slack_429_is_retried_after_retry_after(sleeps: list[float]) -> None:
    with Receiver([Reply(429, "rate_limited", {"Retry-After": "0"}), Reply(200, "ok")]) as r:
        slack(r.url, sleeps).send(note())
    assert len(r.requests) == 2 and r.requests[0].body == r.requests[1].body
    assert sleeps == [0.0]


def test_slack_retry_after_is_capped(sleeps: list[float]) -> None:
    with Receiver([Reply(429, "rate_limited", {"Retry-After": "3600"}), Reply(200, "ok")]) as r:
        slack(r.url, sleeps, max_retry_wait_s=5.0).send(note())
    assert len(r.requests) == 2 and sleeps == [5.0]


def test_slack_500_forever_fails_after_capped_attempts(sleeps: list[float]) -> None:
    with Receiver([Reply(500, "internal_error")]) as r, pytest.raises(NotifyError) as failed:
        slack(r.url, sleeps).send(note())
    assert len(r.requests) == 3  # 1 + max_retries
    assert sleeps == [0.5, 1.0]
    assert str(failed.value) == "slack channel 'team-slack': HTTP 500 (internal_error) after retries"
    assert failed.value.retryable


def test_slack_rejection_is_not_retried(sleeps: list[float]) -> None:
    with Receiver([Reply(404, "no_service")]) as r, pytest.raises(NotifyError) as failed:
        slack(r.url, sleeps).send(note())
    assert len(r.requests) == 1 and sleeps == []
    assert str(failed.value) == "slack channel 'team-slack': HTTP 404 (no_service)"
    assert not failed.value.retryable


def test_slack_connection_refused_is_retried_then_fails(sleeps: list[float]) -> None:
    with pytest.raises(NotifyError) as failed:
        slack(f"http://127.0.0.1:{free_port()}", sleeps).send(note())
    assert sleeps == [0.5, 1.0]
    assert "request failed (URLError" in str(failed.value) and failed.value.retryable


@pytest.mark.parametrize(("value", "unit", "text"), [
    (2450.0, "ms", "2,450 ms"), (0.0123, "ratio", "1.23%"), (0.01, "ratio", "1%"), (42.1, "USD/h", "$42.10/h"),
    (1250.0, "calls/min", "1,250 calls/min"), (0.5, "", "0.5"), (float("nan"), "ms", "n/a"), (None, "", "n/a"),
])
def test_slack_values_are_formatted_for_people(value: float | None, unit: str, text: str) -> None:
    assert format_value(value, unit) == text


def test_slack_unit_falls_back_to_the_signal_suffix() -> None:
    assert (unit_of("ttft_p95_ms"), unit_of("spend_usd"), unit_of("no_such_signal")) == ("ms", "USD", "")


def test_slack_url_must_be_https_except_loopback() -> None:
    with pytest.raises(ValueError, match="must be an https:// URL"):
        SlackNotifier("s", "http://hooks.example.com/services/T/B/secret")
    SlackNotifier("s", "https://hooks.slack.com/services/T/B/secret")


# --------------------------------------------------------------------------------------------------- PagerDuty


def test_pagerduty_trigger_then_resolve_share_the_dedup_key(tls: SelfSigned) -> None:
    with Receiver([PD_ACCEPTED], tls=tls.server_context()) as r:
        notifier = pd(r.url, tls)
        notifier.send(note())
        notifier.send(note(**RESOLVED_NOTE))
        notifier.close()
    assert [(q.method, q.path, q.headers["content-type"]) for q in r.requests] == [
        ("POST", "/v2/enqueue", "application/json")] * 2
    trigger, resolve = (q.json() for q in r.requests)
    assert trigger == {
        "event_action": "trigger",
        "routing_key": ROUTING_KEY,
        "dedup_key": DEDUP,
        "payload": {
            "summary": "TTFT p95 above 2 s for gpt-4o",
            "source": "inferwatch-test",
            "severity": "warning",
            "timestamp": "2026-12-02T08:05:00.000Z",
            "component": "model=gpt-4o",
            "group": "proj-1",
            "class": "ttft_p95_ms",
            "custom_details": {
                "signal": "ttft_p95_ms", "value": 2450.0, "threshold": 2000.0, "baseline": 820.0,
                "labels": {"model": "gpt-4o"}, "project_id": "proj-1", "rule_id": "ttft_p95",
                "series_key": "model=gpt-4o", "started_at": "2026-12-02T08:00:00.000Z", "message": MESSAGE,
            },
        },
        "client": "inferwatch",
        "client_url": DASHBOARD,
        "links": [{"href": DASHBOARD, "text": "Open dashboard"}],
    }
    assert resolve == {"event_action": "resolve", "routing_key": ROUTING_KEY, "dedup_key": DEDUP}


@pytest.mark.parametrize(("pd_severity", "expected"), [("critical", "critical"), ("info", "info")])
def test_pagerduty_severity_mapping_and_summary_limit(tls: SelfSigned, pd_severity: str, expected: str) -> None:
    with Receiver([PD_ACCEPTED], tls=tls.server_context()) as r:
        pd(r.url, tls).send(note(severity=pd_severity, title="x" * 2000))
    payload = r.requests[0].json()["payload"]
    assert payload["severity"] == expected
    assert len(payload["summary"]) == 1024 and payload["summary"].endswith("…")


def test_pagerduty_long_dedup_key_is_hashed_stably() -> None:
    long_key = "k" * 300
    assert pd_dedup_key(long_key) == pd_dedup_key(long_key) != long_key
    assert len(pd_dedup_key(long_key)) <= 255 and pd_dedup_key(DEDUP) == DEDUP


def test_pagerduty_429_is_retried(tls: SelfSigned) -> None:
    with Receiver([Reply(429, '{"status":"throttle"}'), PD_ACCEPTED], tls=tls.server_context()) as r:
        pd(r.url, tls).send(note())
    assert len(r.requests) == 2 and r.requests[0].body == r.requests[1].body


def test_pagerduty_429_forever_is_capped(tls: SelfSigned) -> None:
    with Receiver([Reply(429, '{"status":"throttle"}')], tls=tls.server_context()) as r, \
            pytest.raises(NotifyError) as failed:
        pd(r.url, tls).send(note())
    assert len(r.requests) == 3  # 1 + max_retries: the client's default would retry forever
    assert str(failed.value) == "pagerduty channel 'oncall-pd': HTTP 429 after retries"
    assert failed.value.retryable


def test_pagerduty_400_is_not_retried(tls: SelfSigned) -> None:
    bad = Reply(400, '{"status":"invalid event","message":"Event object is invalid"}')
    with Receiver([bad, PD_ACCEPTED], tls=tls.server_context()) as r, pytest.raises(NotifyError) as failed:
        pd(r.url, tls).send(note())
    assert len(r.requests) == 1
    assert str(failed.value) == "pagerduty channel 'oncall-pd': HTTP 400"
    assert not failed.value.retryable


def test_pagerduty_verifies_the_certificate(tls: SelfSigned) -> None:
    """Without the test CA the self-signed receiver must be refused: verification is really on."""
    with Receiver([PD_ACCEPTED], tls=tls.server_context()) as r, pytest.raises(NotifyError) as failed:
        pd(r.url, tls, ca_bundle=None, max_retries=0).send(note())
    assert r.requests == []
    assert str(failed.value) == "pagerduty channel 'oncall-pd': network error after retries"


def test_pagerduty_requires_https_events_url() -> None:
    with pytest.raises(ValueError, match="https"):
        PagerDutyNotifier("p", ROUTING_KEY, events_url="http://127.0.0.1:1/v2/enqueue")
    with pytest.raises(ValueError, match="/v2/enqueue"):
        PagerDutyNotifier("p", ROUTING_KEY, events_url="https://events.pagerduty.com/enqueue")


# ----------------------------------------------------------------------------------------------------- webhook


def test_webhook_body_is_the_notification_and_signature_verifies(sleeps: list[float]) -> None:
    key = "whsec-0123456789abcdef"
    with Receiver([Reply(204)]) as r:
        WebhookNotifier("audit", r.url + "/hooks/inferwatch", key, sleep=sleeps.append,
                        clock=lambda: 1796198712.9).send(note())
    [request] = r.requests
    assert request.path == "/hooks/inferwatch"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-inferwatch-timestamp"] == "1796198712"
    assert request.headers["x-inferwatch-dedup-key"] == DEDUP
    assert request.headers["x-inferwatch-state"] == "firing"
    expected_signature = "sha256=" + hmac.new(key.encode(), request.body, hashlib.sha256).hexdigest()
    assert request.headers["x-inferwatch-signature"] == expected_signature
    assert verify_signature(key, request.body, expected_signature)
    assert not verify_signature("another-key-entirely", request.body, expected_signature)
    assert request.json() == {
        "project_id": "proj-1", "rule_id": "ttft_p95", "series_key": "model=gpt-4o", "state": "firing",
        "severity": "warning", "title": "TTFT p95 above 2 s for gpt-4o", "message": MESSAGE,
        "signal": "ttft_p95_ms", "value": 2450.0, "threshold": 2000.0, "baseline": 820.0,
        "labels": {"model": "gpt-4o"}, "started_at": "2026-12-02T08:00:00.000Z",
        "event_time": "2026-12-02T08:05:00.000Z", "dedup_key": DEDUP, "dashboard_url": DASHBOARD,
    }
    assert sleeps == []


def test_webhook_non_finite_values_become_null() -> None:
    with Receiver([Reply(200)]) as r:
        WebhookNotifier("audit", r.url, "whsec-0123456789abcdef").send(
            note(value=float("nan"), threshold=None, baseline=float("inf")))
    body = r.requests[0].json()
    assert (body["value"], body["threshold"], body["baseline"]) == (None, None, None)


def test_webhook_retries_429_and_5xx(sleeps: list[float]) -> None:
    replies = [Reply(503), Reply(429, headers={"Retry-After": "2"}), Reply(200)]
    with Receiver(replies) as r:
        WebhookNotifier("audit", r.url, "whsec-0123456789abcdef", retry_backoff_s=0.5,
                        sleep=sleeps.append).send(note())
    assert len(r.requests) == 3 and sleeps == [0.5, 2.0]
    assert len({q.headers["x-inferwatch-signature"] for q in r.requests}) == 1


def test_webhook_4xx_is_not_retried(sleeps: list[float]) -> None:
    with Receiver([Reply(401)]) as r, pytest.raises(NotifyError) as failed:
        WebhookNotifier("audit", r.url, "whsec-0123456789abcdef", sleep=sleeps.append).send(note())
    assert len(r.requests) == 1 and sleeps == []
    assert str(failed.value) == "webhook channel 'audit': HTTP 401" and not failed.value.retryable


def test_webhook_connection_refused_is_retried_then_fails(sleeps: list[float]) -> None:
    notifier = WebhookNotifier("audit", f"http://127.0.0.1:{free_port()}/x", "whsec-0123456789abcdef",
                               max_retries=2, retry_backoff_s=0.25, sleep=sleeps.append)
    with pytest.raises(NotifyError) as failed:
        notifier.send(note())
    assert sleeps == [0.25, 0.5]
    assert str(failed.value).startswith("webhook channel 'audit': connection failed (ConnectError")
    assert str(failed.value).endswith("after 3 attempts") and failed.value.retryable


# ----------------------------------------------------------------------------------------------------- secrets


def test_secrets_never_reach_logs_or_errors(caplog: pytest.LogCaptureFixture, tls: SelfSigned,
                                            sleeps: list[float]) -> None:
    hook_token = "hooktoken-7f3a9c1e5b"
    signing_key = "whsec-never-logged-0123"
    caplog.set_level(logging.DEBUG)
    errors: list[str] = []
    with Receiver([Reply(500, "internal_error")]) as slack_down, \
            Receiver([Reply(400, json.dumps({"routing_key": ROUTING_KEY}))], tls=tls.server_context()) as pd_bad, \
            Receiver([Reply(502)]) as hook_down:
        failing = [
            slack(slack_down.url, sleeps),
            slack(f"http://127.0.0.1:{free_port()}", sleeps),  # connection refused: slack_sdk logs the URL
            pd(pd_bad.url, tls),
            WebhookNotifier("audit", f"{hook_down.url}/hooks/{hook_token}", signing_key, sleep=sleeps.append),
        ]
        for notifier in failing:
            with pytest.raises(NotifyError) as failed:
                notifier.send(note())
            errors.append(str(failed.value))
        deliveries = Dispatcher({"audit": failing[3]}, sleep=sleeps.append).dispatch(note(), ["audit"])
    errors.append(deliveries[0].error)
    logged = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert "Going to retry the same request" in logged and "HTTP Request: POST" in logged  # the libraries did log
    for secret in (SLACK_PATH, "SlackSecretToken42", ROUTING_KEY, hook_token, signing_key):
        assert secret not in logged, secret
        for error in errors:
            assert secret not in error, (secret, error)
    for error in errors:
        assert "://" not in error, error
    assert "[redacted]" in logged


# -------------------------------------------------------------------------------------------------- dispatcher


class Flaky:
    """A notifier that fails ``failures`` times (retryable or not), then succeeds."""

    def __init__(self, name: str, failures: int, *, retryable: bool = True,
                 error: Exception | None = None) -> None:
        self.name, self.failures, self.retryable, self.error, self.calls = name, failures, retryable, error, 0

    def send(self, notification: AlertNotification) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error or NotifyError(f"{self.name} down ({self.calls})", retryable=self.retryable)


def test_dispatcher_one_channel_down_does_not_stop_the_others_and_records(store: Store,
                                                                          sleeps: list[float]) -> None:
    with Receiver([Reply(500, "internal_error")]) as slack_down, Receiver([Reply(200)]) as hook:
        channels = {
            "team-slack": SlackNotifier("team-slack", slack_down.url + SLACK_PATH, max_retries=0,
                                        sleep=sleeps.append),
            "audit": WebhookNotifier("audit", hook.url, "whsec-0123456789abcdef", sleep=sleeps.append),
        }
        dispatcher = Dispatcher(channels, store, max_attempts=3, backoff_s=1.0, sleep=sleeps.append)
        deliveries = dispatcher.dispatch(note(), ["team-slack", "nowhere", "audit", "team-slack"])
        dispatcher.close()
    assert deliveries == [
        Delivery("team-slack", False, 3, "slack channel 'team-slack': HTTP 500 (internal_error) after retries"),
        Delivery("nowhere", False, 0, "unknown channel 'nowhere'"),
        Delivery("audit", True, 1, ""),
    ]
    assert len(slack_down.requests) == 3 and len(hook.requests) == 1
    assert sleeps == [1.0, 2.0]  # the dispatcher's backoff, through the injected sleep
    assert dispatcher.stats == {"sent": 1, "failed": 2, "retried": 2, "record_failed": 0}
    rows = store.query(
        "SELECT project_id, rule_id, series_key, dedup_key, channel, state, event_time, ok, attempts, error, "
        "sent_at >= event_time FROM notifications ORDER BY channel").result_rows
    fired = FIRED.replace(tzinfo=None)  # clickhouse-connect returns naive UTC
    assert [tuple(row) for row in rows] == [
        ("proj-1", "ttft_p95", "model=gpt-4o", DEDUP, "audit", "firing", fired, True, 1, "", 1),
        ("proj-1", "ttft_p95", "model=gpt-4o", DEDUP, "nowhere", "firing", fired, False, 0,
         "unknown channel 'nowhere'", 1),
        ("proj-1", "ttft_p95", "model=gpt-4o", DEDUP, "team-slack", "firing", fired, False, 3,
         "slack channel 'team-slack': HTTP 500 (internal_error) after retries", 1),
    ]
    engine = store.query("SELECT engine FROM system.tables WHERE database = currentDatabase() "
                         "AND name = 'notifications'").result_rows
    assert engine == [("MergeTree",)]


def test_dispatcher_retries_with_backoff_until_success(sleeps: list[float]) -> None:
    flaky = Flaky("pd", failures=2)
    dispatcher = Dispatcher({"pd": flaky}, max_attempts=4, backoff_s=0.5, sleep=sleeps.append)
    assert dispatcher.dispatch(note(), ["pd"]) == [Delivery("pd", True, 3, "")]
    assert sleeps == [0.5, 1.0]
    assert dispatcher.stats == {"sent": 1, "failed": 0, "retried": 2, "record_failed": 0}


def test_dispatcher_does_not_retry_a_rejection_or_a_bug(sleeps: list[float]) -> None:
    rejected = Flaky("hook", failures=9, retryable=False)
    buggy = Flaky("slack", failures=9, error=KeyError("blocks"))
    dispatcher = Dispatcher({"hook": rejected, "slack": buggy}, sleep=sleeps.append)
    assert dispatcher.dispatch(note(), ["hook", "slack"]) == [
        Delivery("hook", False, 1, "hook down (1)"),
        Delivery("slack", False, 1, "unexpected error (KeyError: 'blocks')"),
    ]
    assert sleeps == [] and rejected.calls == buggy.calls == 1


def test_dispatcher_survives_a_store_that_refuses_the_record(sleeps: list[float]) -> None:
    class BrokenStore:
        def insert_columns(self, *args: Any, **kwargs: Any) -> None:
            raise RuntimeError("Code: 241. DB::Exception: Memory limit exceeded")

    dispatcher = Dispatcher({"pd": Flaky("pd", 0)}, BrokenStore(), sleep=sleeps.append)  # type: ignore[arg-type]
    assert dispatcher.dispatch(note(), ["pd", "gone"]) == [Delivery("pd", True, 1, ""),
                                                           Delivery("gone", False, 0, "unknown channel 'gone'")]
    assert dispatcher.stats == {"sent": 1, "failed": 1, "retried": 0, "record_failed": 2}


def test_migration_0005_renders_for_every_target() -> None:
    [source] = [f for f in migration_files() if f.name == "0005_notifications.sql"]
    single = render(source.text, Target())
    assert len(single) == 1 and "ENGINE = MergeTree" in single[0] and "INTERVAL 400 DAY" in single[0]
    sharded = render(source.text, Target(mode="sharded", cluster="iw"))
    assert "inferwatch.notifications_local ON CLUSTER iw" in sharded[0] and "ReplicatedMergeTree" in sharded[0]
    assert "Distributed(iw, inferwatch, notifications_local, cityHash64(project_id, rule_id))" in sharded[1]


# ------------------------------------------------------------------------------------------------------ config


@pytest.fixture
def secrets_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "secrets.yaml"
    path.write_text(f"pd_llm: {ROUTING_KEY}\nhook_key: whsec-from-file-0123\n")
    path.chmod(0o600)
    yield path


def test_load_channels_resolves_env_and_secrets_file(tls: SelfSigned, secrets_file: Path) -> None:
    with Receiver([Reply(200, "ok")]) as slack_r, Receiver([PD_ACCEPTED], tls=tls.server_context()) as pd_r, \
            Receiver([Reply(200)]) as hook_r:
        env = {"SLACK_URL": slack_r.url + SLACK_PATH, "HOOK_URL": hook_r.url + "/in"}
        channels = load_channels({
            "team-slack": {"type": "slack", "webhook_url_env": "SLACK_URL", "retry_backoff_s": 0},
            "oncall-pd": {"type": "pagerduty", "routing_key_secret": "pd_llm",
                          "events_url": pd_r.url + "/v2/enqueue", "ca_bundle": str(tls.cert), "source": "prod"},
            "audit": {"type": "webhook", "url_env": "HOOK_URL", "signing_key_secret": "hook_key",
                      "timeout_s": 5, "max_retries": 0},
        }, env=env, secrets_file=secrets_file)
        assert {name: type(n).__name__ for name, n in channels.items()} == {
            "team-slack": "SlackNotifier", "oncall-pd": "PagerDutyNotifier", "audit": "WebhookNotifier"}
        deliveries = Dispatcher(channels).dispatch(note(), list(channels))
    assert [d.ok for d in deliveries] == [True, True, True]
    assert slack_r.requests[0].path == SLACK_PATH
    assert pd_r.requests[0].json()["routing_key"] == ROUTING_KEY
    assert pd_r.requests[0].json()["payload"]["source"] == "prod"
    body = hook_r.requests[0].body
    assert verify_signature("whsec-from-file-0123", body, hook_r.requests[0].headers["x-inferwatch-signature"])
    assert load_channels(None) == {} and load_channels({}) == {}


def test_load_channels_reads_a_json_secrets_file(tmp_path: Path) -> None:
    path = tmp_path / "secrets.json"
    path.write_text(json.dumps({"slack_team": "https://hooks.slack.com/services/T/B/fromjson"}))
    path.chmod(0o640)
    channels = load_channels({"s": {"type": "slack", "webhook_url_secret": "slack_team"}}, env={},
                             secrets_file=path)
    assert isinstance(channels["s"], SlackNotifier)


def test_secrets_file_must_not_be_world_readable(secrets_file: Path) -> None:
    secrets_file.chmod(0o644)
    with pytest.raises(ValueError, match=r"readable by every user \(mode 0644\)"):
        load_channels({"pd": {"type": "pagerduty", "routing_key_secret": "pd_llm"}}, env={},
                      secrets_file=secrets_file)


def test_secrets_file_parse_error_does_not_quote_it(tmp_path: Path) -> None:
    path = tmp_path / "secrets.yaml"
    path.write_text("pd_llm: [unclosed R0UTINGKEYsecretvalue\n")
    path.chmod(0o600)
    with pytest.raises(ValueError) as failed:
        load_channels({"pd": {"type": "pagerduty", "routing_key_secret": "pd_llm"}}, env={}, secrets_file=path)
    assert "not valid YAML/JSON" in str(failed.value) and "R0UTINGKEY" not in str(failed.value)


BAD_CONFIGS = [
    ({"s": {"type": "slack", "webhook_url": "https://hooks.slack.com/services/T/B/inlinesecret"}},
     "channel 's': webhook_url must not be written in the rules file; use webhook_url_env"),
    ({"s": {"type": "slack", "webhook_url_env": "NOT_SET"}},
     "channel 's': webhook_url_env names the environment variable NOT_SET, which is not set"),
    ({"s": {"type": "slack"}}, "channel 's': give exactly one of webhook_url_env or webhook_url_secret"),
    ({"s": {"type": "slack", "webhook_url_env": "SLACK", "webhook_url_secret": "x"}},
     "channel 's': give exactly one of webhook_url_env or webhook_url_secret (got webhook_url_env, "
     "webhook_url_secret)"),
    ({"s": {"type": "slack", "webhook_url_env": "PLAIN"}},
     "channel 's': the Slack webhook URL must be an https:// URL"),
    ({"s": {"type": "sms"}}, "channel 's': type must be one of slack, pagerduty, webhook, not 'sms'"),
    ({"p": {"type": "pagerduty", "routing_key_evn": "PD"}}, "channel 'p': unknown field(s) routing_key_evn"),
    ({"p": {"type": "pagerduty", "routing_key_secret": "pd"}},
     "channel 'p': routing_key_secret refers to the secrets file, but none was given"),
    ({"p": {"type": "pagerduty", "routing_key_env": "PD", "events_url": "http://events.pagerduty.com/v2/enqueue"}},
     "channel 'p': events_url must be an https:// URL"),
    ({"p": {"type": "pagerduty", "routing_key_env": "PD", "ca_bundle": "/nonexistent/ca.pem"}},
     "channel 'p': ca_bundle '/nonexistent/ca.pem' is not a file"),
    ({"p": {"type": "pagerduty", "routing_key_env": "PD", "max_retries": 1.5}},
     "channel 'p': max_retries must be an integer from 0 to 10, not 1.5"),
    ({"w": {"type": "webhook", "url": "https://example.com/in"}},
     "channel 'w': give exactly one of signing_key_env or signing_key_secret"),
    ({"w": {"type": "webhook", "url": "ftp://example.com/in", "signing_key_env": "KEY"}},
     "channel 'w': the webhook URL must be an http:// or https:// URL"),
    ({"bad name!": {"type": "slack"}}, "channel name 'bad name!' must be"),
    ({"s": "slack"}, "channel 's': settings must be a mapping"),
]


@pytest.mark.parametrize(("spec", "message"), BAD_CONFIGS)
def test_load_channels_errors_name_the_channel_and_field(spec: dict[str, Any], message: str) -> None:
    env = {"SLACK": "https://hooks.slack.com/services/T/B/envsecret", "PD": ROUTING_KEY, "KEY": "whsec-xyz-0123",
           "PLAIN": "http://hooks.example.com/services/T/B/plainsecret"}
    with pytest.raises(ValueError) as failed:
        load_channels(spec, env=env)
    assert str(failed.value).startswith(message), str(failed.value)
    for secret in ("envsecret", ROUTING_KEY, "whsec-xyz", "plainsecret", "inlinesecret"):
        assert secret not in str(failed.value)


def test_load_channels_names_a_missing_secret(secrets_file: Path) -> None:
    with pytest.raises(ValueError, match="channel 'p': routing_key_secret names 'pd_other', which is not in the "
                                         "secrets file"):
        load_channels({"p": {"type": "pagerduty", "routing_key_secret": "pd_other"}}, env={},
                      secrets_file=secrets_file)


def test_notification_rejects_unknown_state() -> None:
    with pytest.raises(ValueError, match="state must be one of firing, resolved"):
        note(state="pending")
