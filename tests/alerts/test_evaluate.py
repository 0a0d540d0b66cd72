"""The evaluation function on a real embedded database with realistic traffic.

One database holds several weeks of synthetic calls (generated in SQL, rolled up by the real materialized views):

* project ``calm``: fifteen days of normal, noisy traffic (rates and lengths vary from day to day; TTFT and
  latency are lognormal; thumbs votes). No default rule and no drift detector may raise anything on it;
* project ``shop``: each default rule's problem planted in its own model (a TTFT regression, an error surge, a
  quality drop in the last hour, latency creeping up for five days, more thumbs-down votes today);
* project ``spendy``: a cost surge against a steady day;
* projects ``restart``, ``silenced`` and ``removed``: a TTFT regression each, evaluated through the database with
  a recording notifier: a restart mid-incident, a silence, a rule deleted while firing.

Evaluation times are driven explicitly (the backtest and the scheduler share :func:`evaluate`); nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from inferwatch_alerts.alert_state import DbBackend
from inferwatch_alerts.backtest import BacktestReport, backtest
from inferwatch_alerts.evaluate import RuleEvaluationJob, evaluate
from inferwatch_alerts.notifiers.base import AlertNotification
from inferwatch_alerts.notifiers.dispatch import Dispatcher
from inferwatch_alerts.rules import RuleSet, load_rules, parse_rules
from inferwatch_alerts.silences import create_silence, expire_silence
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store

from tests.helpers.traffic import add_calls, add_votes, lognormal, per_day

SECOND = timedelta(seconds=1)
MIN = timedelta(minutes=1)
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
# An hour boundary in the recent past (rollups keep 35 days), after which no traffic exists.
H = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - 2 * HOUR
R = H - 30 * MIN  # where the minute-scale regressions start
OFFSET = timedelta(seconds=60)  # the default evaluation offset: a window ending at E is evaluated at E + 60 s


@dataclass
class World:
    settings: Settings
    store: Store

    def restart(self) -> None:
        """What a scheduler restart leaves: the database, and nothing in memory."""
        self.store.close()
        self.store = Store.open(self.settings)


def build(store: Store) -> None:
    normal = dict(ttft_ms=lognormal(400, 0.35, 10, 1), latency_ms=lognormal(1500, 0.3, 20, 1))
    # --- calm: fifteen normal days, every rate varying by about 15% from day to day; busier (at the same cost
    # per hour) in the last two hours, so that every default rule has its minimum volume there
    calm = dict(project="calm", error_rate=f"0.003 * {per_day(0.15, 1)}",
                refusal_rate=f"0.01 * {per_day(0.15, 2)}",
                empty_rate=f"0.005 * {per_day(0.15, 3)}", truncated_rate=f"0.01 * {per_day(0.15, 4)}",
                tool_failure_rate=f"0.02 * {per_day(0.15, 5)}",
                output_tokens=lognormal(f"200 * {per_day(0.05, 6)}", 0.5, 30, 1),
                ttft_ms=lognormal(f"400 * {per_day(0.03, 7)}", 0.35, 10, 1),
                latency_ms=lognormal(f"1500 * {per_day(0.03, 8)}", 0.3, 20, 1))
    add_calls(store, H - 15 * DAY, 15 * 1440 - 120, 10, seed=1, cost_usd=0.002, **calm)
    add_calls(store, H - 2 * HOUR, 120, 20, seed=11, cost_usd=0.001, **calm)
    add_votes(store, H - 15 * DAY, 15 * 1440, 1, down_rate=f"0.1 * {per_day(0.15, 9)}", project="calm", seed=1)
    # --- shop/quality: eight normal days, then one bad hour [H - 1h, H)
    quality = dict(project="shop", model="quality", cost_usd=0.001)
    add_calls(store, H - 8 * DAY, 8 * 1440 - 60, 10, seed=2, refusal_rate=f"0.01 * {per_day(0.15, 2)}",
              empty_rate=f"0.005 * {per_day(0.15, 3)}", truncated_rate=f"0.01 * {per_day(0.15, 4)}",
              tool_failure_rate=f"0.02 * {per_day(0.15, 5)}",
              output_tokens=lognormal(f"200 * {per_day(0.05, 6)}", 0.5, 30, 2), **normal, **quality)
    add_calls(store, H - HOUR, 60, 10, seed=3, refusal_rate=0.12, empty_rate=0.06, truncated_rate=0.08,
              tool_failure_rate=0.15, output_tokens=lognormal(90, 0.5, 30, 3), **normal, **quality)
    add_votes(store, H - 8 * DAY, 7 * 1440, 1, down_rate=f"0.1 * {per_day(0.15, 9)}", project="shop",
              model="quality", seed=2)
    add_votes(store, H - DAY, 1440, 1, down_rate=0.35, project="shop", model="quality", seed=3)
    # --- shop/ttft and shop/errors: three hours, the last 30 minutes bad
    add_calls(store, H - 3 * HOUR, 150, 10, project="shop", model="ttft", seed=4, cost_usd=0.0, **normal)
    add_calls(store, R, 30, 10, project="shop", model="ttft", seed=5, cost_usd=0.0,
              ttft_ms=lognormal(3000, 0.2, 10, 5), latency_ms=lognormal(5000, 0.2, 20, 5))
    add_calls(store, H - 3 * HOUR, 150, 20, project="shop", model="errors", seed=6, cost_usd=0.0,
              error_rate=0.003, **normal)
    add_calls(store, R, 30, 20, project="shop", model="errors", seed=7, cost_usd=0.0, error_rate=0.06, **normal)
    # --- shop/creep: sixteen days; TTFT and latency p95 grow 6% a day over the last five days
    creep = f"pow(1.06, greatest(0, {{day}} - {int((H - 5 * DAY).timestamp()) // 86400}))"
    add_calls(store, H - 16 * DAY, 16 * 1440, 4, project="shop", model="creep", seed=8, cost_usd=0.0,
              ttft_ms=lognormal(f"600 * {creep}", 0.3, 10, 8), latency_ms=lognormal(f"2000 * {creep}", 0.3, 20, 8))
    # --- spendy: eight steady days at $1.20/h, then the last hour five times that
    add_calls(store, H - 8 * DAY, 8 * 1440 - 60, 10, project="spendy", seed=9, cost_usd=0.002, **normal)
    add_calls(store, H - HOUR, 60, 50, project="spendy", seed=10, cost_usd=0.002, **normal)
    # --- restart / silenced / removed: normal from H - 45m, TTFT 3 s in [H - 25m, H - 12m), then normal
    for i, project in enumerate(("restart", "silenced", "removed")):
        add_calls(store, H - 45 * MIN, 20, 10, project=project, model="m", seed=20 + i, **normal)
        add_calls(store, H - 25 * MIN, 13, 10, project=project, model="m", seed=30 + i,
                  ttft_ms=lognormal(3000, 0.2, 10, 30 + i))
        add_calls(store, H - 12 * MIN, 12, 10, project=project, model="m", seed=40 + i, **normal)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("evaluate") / "data", clickhouse_url="", cluster="",
                        database="inferwatch", migration_mode="auto")
    store = Store.open(settings)
    w = World(settings, store)
    try:
        migrate(store, target_for(settings, store))
        build(store)
        yield w
    finally:
        w.store.close()


@pytest.fixture(scope="module")
def shop(world: World) -> BacktestReport:
    """The default rules replayed minute by minute over the last hour of shop and spendy (in memory)."""
    return backtest(world.store, load_rules(), H - 62 * MIN + OFFSET, H + OFFSET, projects=["shop", "spendy"])


@pytest.fixture(scope="module")
def calm(world: World) -> BacktestReport:
    """The default rules replayed minute by minute over the calm project's last 90 minutes."""
    return backtest(world.store, load_rules(), H - 90 * MIN + OFFSET, H + OFFSET, projects=["calm"])


def transitions(report: BacktestReport, rule: str, project: str = "shop") -> list[tuple[datetime, str, str]]:
    return [(e.event_time, e.series_key, e.state) for e in report.events
            if e.rule_id == rule and e.project_id == project]


# -------------------------------------------------------------------------------------- normal traffic: silence


def test_nothing_fires_on_normal_traffic(calm: BacktestReport) -> None:
    assert calm.failed == {} and calm.ticks == 91
    assert [(e.event_time, e.rule_id, e.state, e.message) for e in calm.events if e.state not in ("pending", "ok")
            ] == []
    assert calm.sent == [] and calm.incidents() == []
    # now and then two failed calls in a hundred make the point error rate 2%; the guarded, sustained rule does
    # not even go pending on that (it has no pending state: the sustain is counted in the data)
    assert not [e for e in calm.events if e.rule_id in ("error-rate-high", "ttft-p95-high", "refusal-rate-high")]


def test_drift_rules_see_calm_as_normal_with_data(world: World) -> None:
    from inferwatch_alerts.observations import observe

    for rule in load_rules().rules:
        observed = observe(world.store, rule, H, ["calm"])
        key = {("project",): "project", ("project", "model"): "model=gpt-4o",
               ("project", "feature"): "feature=search"}[rule.group_by]
        assert list(observed) == [("calm", key)], rule.id
        obs = next(iter(observed.values())).observation
        assert obs.has_data and obs.breaching is False, (rule.id, obs)


# ----------------------------------------------------------------------------------------- the default rules


def onset(report: BacktestReport, rule: str, key: str, project: str = "shop") -> tuple[datetime, datetime]:
    """(pending, firing) of the one incident of ``rule``: it fired once, after pending the whole ``for``.
    Pending blips that cleared before (noise, as on calm) may come first."""
    events = [(t, s) for t, k, s in transitions(report, rule, project) if k == key]
    assert [s for _, s in events][-2:] == ["pending", "firing"] and sum(s == "firing" for _, s in events) == 1
    return events[-2][0], events[-1][0]


def fired(report: BacktestReport, rule: str, key: str) -> datetime:
    """When the one incident of a sustained rule (``for: {breaching, of}``) fired: no pending state before it,
    and it is still firing (its problem lasts until the end of the data)."""
    assert transitions(report, rule) == [(t, key, "firing") for t, k, s in transitions(report, rule)]
    [(firing, _, _)] = transitions(report, rule)
    return firing


def test_ttft_regression_pages_once_most_of_its_minutes_are_slow(shop: BacktestReport) -> None:
    # 4 of the last 5 one-minute buckets above 2 s (and the window's p95): the fourth slow minute
    firing = fired(shop, "ttft-p95-high", "model=ttft")
    assert R + 4 * MIN <= firing <= R + 5 * MIN
    sent = [s for s in shop.sent if s.rule_id == "ttft-p95-high"]
    assert [(s.kind, s.channels, s.event_time) for s in sent] == [("firing", ("slack",), firing)]
    note = sent[0].notification
    assert note is not None and note.severity == "warning" and note.value > 2000 and note.threshold == 2000.0
    assert note.title == "TTFT p95 above 2 s for shop / model ttft"


def test_error_surge_is_critical_and_goes_to_pagerduty(shop: BacktestReport) -> None:
    firing = fired(shop, "error-rate-high", "model=errors")
    assert R + 5 * MIN <= firing <= R + 12 * MIN
    [sent] = [s for s in shop.sent if s.rule_id == "error-rate-high"]
    assert sent.channels == ("pagerduty", "slack") and sent.notification is not None
    assert sent.notification.severity == "critical" and sent.notification.value > 0.01
    event = next(e for e in shop.events if e.rule_id == "error-rate-high")
    assert 0.01 < float(event.labels["lower_bound"]) < event.value and int(event.labels["events"]) >= 5
    assert int(event.labels["buckets_breaching"].split("/")[0]) >= 5


def test_cost_surge_against_the_same_hours_of_previous_days(shop: BacktestReport) -> None:
    assert [s for _, _, s in transitions(shop, "cost-per-hour-spike", "spendy")] == ["pending", "firing"]
    pending, firing = onset(shop, "cost-per-hour-spike", "model=gpt-4o", "spendy")
    # $1.20/h rising to $6/h: the 30-minute window is above 2x the same window's median on the previous days
    # after about 8 minutes, then for 10
    assert H - 55 * MIN <= pending <= H - 50 * MIN and firing - pending == 10 * MIN
    [sent] = [s for s in shop.sent if s.rule_id == "cost-per-hour-spike"]
    note = sent.notification
    assert note is not None and note.baseline is not None and 1.1 < note.baseline < 1.4
    assert note.threshold == pytest.approx(2 * note.baseline) and note.value > note.threshold
    assert "against a baseline of $1." in note.message
    assert transitions(shop, "cost-per-hour-spike") == []  # shop's cost is flat


def test_refusal_rate_above_five_percent_is_info_to_investigate(shop: BacktestReport) -> None:
    firing = fired(shop, "refusal-rate-high", "model=quality")
    assert H - HOUR + 5 * MIN <= firing < H
    [sent] = [s for s in shop.sent if s.rule_id == "refusal-rate-high"]
    assert sent.notification is not None and sent.notification.severity == "info"
    assert "investigate" in sent.notification.title


# ------------------------------------------------------------------------------------------ the drift detectors


@pytest.mark.parametrize("rule", ["refusal-rate-drift", "empty-response-drift", "truncated-response-drift",
                                  "tool-failure-drift", "response-length-shift", "thumbs-down-drift"])
def test_each_quality_drift_is_found_in_the_bad_window_and_only_there(shop: BacktestReport, rule: str) -> None:
    # Hourly rules ran twice: at H - 2h (the first tick) and at H. The calls went bad in the last hour, so the
    # hour [H - 3h, H - 2h) was normal; the votes went bad over the last day, which the thumbs rule's one-day
    # window already sees at H - 2h.
    first = H - 2 * HOUR if rule == "thumbs-down-drift" else H
    assert transitions(shop, rule) == [(first, "model=quality", "firing")]
    [sent] = [s for s in shop.sent if s.rule_id == rule]
    note = sent.notification
    assert note is not None and note.baseline is not None and note.threshold is None
    assert "against a baseline of" in note.message and "evidence" in note.message
    event = next(e for e in shop.events if e.rule_id == rule)
    finding = event.labels
    assert {"method", "statistic", "critical", "window_start", "window_end", "baseline_start",
            "baseline"} <= set(finding)
    assert float(finding["statistic"]) >= float(finding["critical"])
    if rule == "response-length-shift":
        assert event.value < 0.6 * float(finding["baseline"])  # shorter answers
    else:
        assert event.value > 2 * float(finding["baseline"])


@pytest.mark.parametrize("rule", ["ttft-p95-creep", "latency-p95-creep"])
def test_latency_creeping_up_day_over_day_is_found(shop: BacktestReport, rule: str) -> None:
    events = transitions(shop, rule)
    assert events[0] == (H - 2 * HOUR, "model=creep", "firing")  # the first (forced) hourly evaluation
    event = next(e for e in shop.events if e.rule_id == rule)
    assert event.labels["method"] == "one-sided CUSUM of log daily values"
    assert float(event.labels["statistic"]) >= 5.0 and event.value > 1.15 * float(event.labels["baseline"])
    assert not any(e.rule_id == rule and e.series_key != "model=creep" for e in shop.events)


# ------------------------------------------------------------------------------ restart, silences, deleted rules

TTFT_RULES = """\
version: 1
channels:
  pager: {type: webhook, url: "https://127.0.0.1:9/unused", signing_key_env: UNUSED}
rules:
  - id: ttft
    signal: ttft_p95
    group_by: [project, model]
    window: 5m
    for: 5m
    min_requests: 20
    threshold: {op: ">", value: 2s}
    severity: critical
    channels: [pager]
"""


@dataclass
class Recorder:
    """A channel that records what it is sent (it stands in for PagerDuty here; the e2e test has the real one)."""

    name: str = "pager"
    sent: list[AlertNotification] = field(default_factory=list)

    def send(self, notification: AlertNotification) -> None:
        self.sent.append(notification)


def run(store: Store, ruleset: RuleSet, project: str, ends: list[datetime], channel: Recorder) -> list[str]:
    """Evaluate at each window end through the database, like the scheduler; returns the transitions."""
    dispatcher = Dispatcher({"pager": channel}, store, sleep=lambda s: None)
    states = []
    for end in ends:
        result = evaluate(store, ruleset, end + OFFSET, backend=DbBackend(store), dispatcher=dispatcher,
                          projects=[project])
        states += [f"{e.event_time:%H:%M} {e.state}" for e in result.events]
    return states


def minutes(start: datetime, stop: datetime) -> list[datetime]:
    return [start + i * MIN for i in range(int((stop - start) / MIN) + 1)]


def stored_state(store: Store, project: str) -> tuple[str, str, str, str]:
    [row] = store.query("SELECT state, dedup_key, notified, notified_key FROM alert_state FINAL "
                        "WHERE project_id = {p:String}", {"p": project}).result_rows
    return row


def test_a_restart_mid_incident_neither_pages_again_nor_forgets_to_resolve(world: World) -> None:
    rules = parse_rules(TTFT_RULES)
    first = Recorder()
    run(world.store, rules, "restart", minutes(H - 30 * MIN, H - 16 * MIN), first)
    assert [n.state for n in first.sent] == ["firing"]
    state, key, notified, notified_key = stored_state(world.store, "restart")
    assert (state, notified, notified_key) == ("firing", "firing", key)
    assert first.sent[0].dedup_key == key

    world.restart()  # new process: new store clients, new dispatcher, new notifier, nothing in memory
    second = Recorder()
    after = run(world.store, parse_rules(TTFT_RULES), "restart", minutes(H - 15 * MIN, H), second)
    assert [n.state for n in second.sent] == ["resolved"]
    assert second.sent[0].dedup_key == key and after == [f"{H - 7 * MIN:%H:%M} resolved"]
    assert stored_state(world.store, "restart")[0] == "resolved"
    history = world.store.query(
        "SELECT state, labels['dedup_key'] FROM alert_events WHERE project_id = 'restart' ORDER BY event_time"
    ).result_rows
    assert history == [("pending", key), ("firing", key), ("resolved", key)]
    deliveries = world.store.query(
        "SELECT state, dedup_key, channel, ok FROM notifications WHERE project_id = 'restart' ORDER BY sent_at"
    ).result_rows
    assert deliveries == [("firing", key, "pager", True), ("resolved", key, "pager", True)]


def test_a_silence_holds_the_page_and_an_expired_one_lets_it_through(world: World) -> None:
    rules = parse_rules(TTFT_RULES)
    channel = Recorder()
    # evaluation times are driven explicitly, so the silence is made and expired at those times too
    silence = create_silence(world.store, "silenced", rule_id="ttft", matchers={"model": "m"},
                             ends_at=H + HOUR, comment="deploy in progress", now=H - 31 * MIN)
    create_silence(world.store, "silenced", rule_id="ttft", matchers={"model": "other"}, ends_at=H + HOUR,
                   now=H - 31 * MIN)
    states = run(world.store, rules, "silenced", minutes(H - 30 * MIN, H - 16 * MIN), channel)
    assert states[-1].endswith("firing") and channel.sent == []
    current = world.store.query("SELECT state, silenced_until FROM alert_state FINAL WHERE project_id = "
                                "'silenced'").result_rows
    assert current[0][0] == "firing" and current[0][1].replace(tzinfo=UTC) == silence.ends_at.replace(
        microsecond=0)
    assert expire_silence(world.store, "silenced", silence.silence_id, now=H - 14 * MIN - 30 * SECOND) is not None
    run(world.store, rules, "silenced", [H - 15 * MIN], channel)
    assert [n.state for n in channel.sent] == ["firing"]  # still firing when the silence ended: paged now
    run(world.store, rules, "silenced", minutes(H - 14 * MIN, H), channel)
    assert [n.state for n in channel.sent] == ["firing", "resolved"]


def test_a_rule_deleted_while_firing_is_resolved_once(world: World) -> None:
    channel = Recorder()
    run(world.store, parse_rules(TTFT_RULES), "removed", minutes(H - 30 * MIN, H - 16 * MIN), channel)
    assert [n.state for n in channel.sent] == ["firing"]
    empty = parse_rules(TTFT_RULES.split("rules:\n")[0] + "rules: []\n")
    run(world.store, empty, "removed", [H - 15 * MIN, H - 14 * MIN], channel)
    key = channel.sent[0].dedup_key
    assert [(n.state, n.dedup_key) for n in channel.sent] == [("firing", key), ("resolved", key)]
    assert stored_state(world.store, "removed")[0] == "resolved"


def test_the_scheduler_job_evaluates_and_records_its_run(world: World, monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    from inferwatch_alerts.job_runs import run_recorded

    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(TTFT_RULES)
    monkeypatch.setenv("INFERWATCH_ALERT_RULES_FILE", str(rules_file))
    job = RuleEvaluationJob(env={})  # no channel secret set: the channel is skipped, alerts still recorded
    run_ = run_recorded(world.store, "alert_rules", job, clock=lambda: H - 16 * MIN + OFFSET)
    assert run_.ok and run_.details["rules"] == "1" and run_.details["failed_rules"] == ""
    assert job.dispatcher(world.store).channels == {}
