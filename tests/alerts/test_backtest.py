"""The backtest: the scheduler's evaluation replayed over stored history, in memory, silent unless asked.

A replay must say exactly what the scheduler would have done: the test runs the same rules through the database
minute by minute (as the scheduler does) and compares. It must not touch alert_state or notify anyone unless
asked, and the CLI prints what fired and resolved, and when.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime, timedelta

import pytest
from inferwatch_alerts.alert_state import DbBackend
from inferwatch_alerts.backtest import BacktestError, backtest
from inferwatch_alerts.evaluate import evaluate
from inferwatch_alerts.notifiers.base import AlertNotification
from inferwatch_alerts.notifiers.dispatch import Dispatcher
from inferwatch_alerts.rules import parse_rules
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.cli import alerts as alerts_cli

from tests.helpers.traffic import add_calls, lognormal

MIN = timedelta(minutes=1)
T = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=2)
RULES = """\
version: 1
channels:
  hook: {type: webhook, url: "https://127.0.0.1:9/unused", signing_key_env: UNUSED}
rules:
  - id: ttft
    signal: ttft_p95
    group_by: [project, model]
    window: 5m
    for: 5m
    min_requests: 20
    threshold: {op: ">", value: 2s}
    severity: critical
    renotify: 10m
    channels: [hook]
"""


@pytest.fixture
def history(store: Store) -> Store:
    """p1 and p2: 60 minutes of calls from T; TTFT 3 s in [T + 20m, T + 40m) for p1 only."""
    for project, seed in (("p1", 1), ("p2", 2)):
        add_calls(store, T, 20, 10, project=project, seed=seed, ttft_ms=lognormal(400, 0.3, 10, seed))
        add_calls(store, T + 20 * MIN, 20, 10, project=project, seed=seed + 10,
                  ttft_ms=lognormal(3000 if project == "p1" else 400, 0.2, 10, seed))
        add_calls(store, T + 40 * MIN, 20, 10, project=project, seed=seed + 20,
                  ttft_ms=lognormal(400, 0.3, 10, seed))
    return store


def at(minutes: int) -> datetime:
    """The evaluation time whose window ends ``minutes`` after T (the default offset is 60 s)."""
    return T + (minutes + 1) * MIN


def table_rows(store: Store, table: str) -> int:
    return int(store.query(f"SELECT count() FROM {table}").result_rows[0][0])


def test_backtest_lists_what_would_have_fired_and_resolved(history: Store) -> None:
    report = backtest(history, parse_rules(RULES), at(0), at(60))
    assert report.ticks == 61 and report.failed == {}
    [incident] = report.incidents()
    assert (incident.project_id, incident.rule_id, incident.series_key) == ("p1", "ttft", "model=gpt-4o")
    assert incident.fired_at == T + 26 * MIN and incident.resolved_at == T + 45 * MIN and incident.peak > 2000
    kinds = [(s.event_time, s.kind) for s in report.sent]
    # a page, re-notifications every 10 minutes while firing, one resolve; none of it sent (no dispatcher)
    assert kinds == [(T + 26 * MIN, "firing"), (T + 36 * MIN, "renotify"), (T + 45 * MIN, "resolved")]
    assert all(s.deliveries == () for s in report.sent)
    assert len({s.notification.dedup_key for s in report.sent if s.notification}) == 1
    # nothing was written: a replay is not an incident
    assert table_rows(history, "alert_state") == table_rows(history, "alert_events") == 0
    assert table_rows(history, "notifications") == 0


def test_backtest_is_the_schedulers_evaluation(history: Store) -> None:
    rules = parse_rules(RULES)
    replay = backtest(history, rules, at(15), at(50), projects=["p1"])
    live = []
    for minute in range(15, 51):  # what the scheduler does: one evaluation a minute, state in the database
        live += evaluate(history, rules, at(minute), backend=DbBackend(history), projects=["p1"]).events
    assert [(e.event_time, e.series_key, e.state, e.value, e.labels["dedup_key"]) for e in replay.events] == [
        (e.event_time, e.series_key, e.state, e.value, e.labels["dedup_key"]) for e in live]


def test_backtest_notifies_and_persists_only_when_asked(history: Store) -> None:
    class Recorder:
        name = "hook"

        def __init__(self) -> None:
            self.sent: list[AlertNotification] = []

        def send(self, notification: AlertNotification) -> None:
            self.sent.append(notification)

    hook = Recorder()
    report = backtest(history, parse_rules(RULES), at(20), at(50), dispatcher=Dispatcher({"hook": hook}),
                      persist=True, projects=["p1"])
    assert [n.state for n in hook.sent] == ["firing", "firing", "resolved"]
    assert all(d.ok for s in report.sent for d in s.deliveries)
    rows = history.query("SELECT project_id, state FROM alert_state FINAL").result_rows
    assert rows == [("p1", "resolved")]


def test_backtest_arguments_are_checked(history: Store) -> None:
    rules = parse_rules(RULES)
    with pytest.raises(BacktestError, match="before"):
        backtest(history, rules, at(10), at(0))
    with pytest.raises(BacktestError, match="whole number of minutes"):
        backtest(history, rules, at(0), at(10), step_s=90)
    coarse = backtest(history, rules, at(0), at(60), step_s=300)
    assert coarse.ticks == 13 and [i.rule_id for i in coarse.incidents()] == ["ttft"]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="inferwatch-server")
    p.add_argument("--data-dir")
    alerts_cli.register(p.add_subparsers(dest="command", required=True))
    return p


def test_cli_backtest_and_silences(history: Store, settings: Settings, tmp_path, capsys: pytest.CaptureFixture[str]
                                   ) -> None:
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(RULES)
    history.close()  # the CLI opens the database itself, like a separate process would
    data = ["--data-dir", str(settings.data_dir)]
    args = parser().parse_args([*data, "alerts", "backtest", "--from", at(0).isoformat(), "--to",
                                at(60).isoformat(), "--rules", str(rules_file)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "61 evaluations" in out and "1 alert(s) would have fired" in out
    assert f"{(T + 26 * MIN):%Y-%m-%dT%H:%M}:00Z  FIRED     p1" in out
    assert f"resolved {(T + 45 * MIN):%Y-%m-%dT%H:%M}:00Z" in out
    assert "3 notification(s) would have been sent" in out

    args = parser().parse_args([*data, "alerts", "backtest", "--from", at(0).isoformat(), "--to",
                                at(60).isoformat(), "--rules", str(rules_file), "--project", "p2", "--json"])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["incidents"] == []

    args = parser().parse_args([*data, "alerts", "backtest", "--from", "now", "--to", "now-1h"])
    assert args.func(args) == 2 and "must not be before" in capsys.readouterr().err

    args = parser().parse_args([*data, "alerts", "silence", "add", "--project", "p1", "--rule", "ttft",
                                "--match", "model=gpt-4o", "--for", "2h", "--comment", "deploy"])
    assert args.func(args) == 0
    created = capsys.readouterr().out
    assert created.startswith("created silence s_") and "ttft for model=gpt-4o until" in created
    silence_id = created.split()[2].rstrip(":")
    args = parser().parse_args([*data, "alerts", "silence", "list", "--project", "p1"])
    assert args.func(args) == 0 and silence_id in capsys.readouterr().out
    args = parser().parse_args([*data, "alerts", "silence", "expire", "--project", "p2", silence_id])
    assert args.func(args) == 1  # another project's silence is not found
    capsys.readouterr()
    args = parser().parse_args([*data, "alerts", "silence", "expire", "--project", "p1", silence_id])
    assert args.func(args) == 0 and f"silence {silence_id} ends" in capsys.readouterr().out
    args = parser().parse_args([*data, "alerts", "silence", "list", "--project", "p1"])
    assert args.func(args) == 0 and silence_id not in capsys.readouterr().out  # active ones only
    args = parser().parse_args([*data, "alerts", "silence", "list", "--project", "p1", "--all"])
    assert args.func(args) == 0 and f"{silence_id:20} ended" in capsys.readouterr().out
    args = parser().parse_args([*data, "alerts", "silence", "add", "--project", "p1", "--match", "model",
                                "--for", "1h"])
    assert args.func(args) == 2 and "LABEL=VALUE" in capsys.readouterr().err
