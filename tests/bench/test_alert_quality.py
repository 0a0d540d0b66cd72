"""Issue 30's traffic simulator (examples/sim_*.py) and alert-quality scorer (bench/alert_quality*.py) on a small
scale: the simulator's shape (seasonality, overdispersion, planted incidents), the scorer's matching, and one
end-to-end run: simulated hours written through a real collector's OTLP ingest, the real backtest, the score.

The input is the simulator's traffic, shaped like real traffic (diurnal volume, four models with different
shares, four features, day-to-day varying rates), not hand-made rows: what the bench runs, only shorter."""

from __future__ import annotations

import statistics

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from datetime import UTC, datetime, timedelta
from pathlib import Path

from alert_quality_score import Fired, parse_series_key, score_week
from examples.sim_backfill import backfill_scenario, encode_span
from examples.sim_calls import CallGenerator
from examples.sim_incidents import Planted, incident_library
from examples.sim_scenario import Scenario, diurnal, midnight_days_ago, weekly
from inferwatch_alerts.backtest import backtest
from inferwatch_alerts.rules import parse_rules
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from tests.helpers.collector_process import collector_process
from tests.helpers.traffic import add_calls

MIN = timedelta(minutes=1)
MONDAY = datetime(2026, 11, 2, tzinfo=UTC)


def _burst(start: datetime) -> Planted:
    return Planted("error-burst", "error", "rate", start, start + 20 * MIN, 0.05, model="gpt-4o-mini",
                   rate_kind="error", max_delay=10 * MIN)


def test_volume_follows_the_day_and_the_week_around_the_mean() -> None:
    hours = [diurnal(h / 10) for h in range(240)]
    assert abs(statistics.fmean(hours) - 1) < 0.01
    assert min(hours) == diurnal(4) and abs(diurnal(4) - 0.1) < 1e-9 and abs(diurnal(16) - 1.9) < 1e-9
    assert abs(statistics.fmean(weekly(d) for d in range(7)) - 1) < 1e-9 and weekly(5) < weekly(0)
    sc = Scenario(MONDAY, 14, 1.0, seed=3)
    calls = {h: len(CallGenerator(sc).minute(MONDAY + timedelta(days=1, hours=h))) for h in (4, 16)}
    assert calls[4] < 20 and calls[16] > 80  # a minute at night vs in the afternoon, at 1 call/s mean


def test_daily_rates_vary_by_about_the_stated_coefficient_and_are_reproducible() -> None:
    sc = Scenario(MONDAY, 400, 1.0, seed=9)
    factors = [sc.day_factor(MONDAY + timedelta(days=d), "error", "m:gpt-4o-mini") for d in range(400)]
    assert abs(statistics.fmean(factors) - 1) < 0.05
    assert 0.15 < statistics.stdev(factors) < 0.25
    at = MONDAY + timedelta(hours=15)
    first, again = CallGenerator(sc).minute(at), CallGenerator(sc).minute(at)
    assert [c.span_id for c in first] == [c.span_id for c in again]
    assert all(int(at.timestamp() * 1e9) <= c.start_ns < int((at + MIN).timestamp() * 1e9) for c in first)


def test_a_planted_burst_sets_the_error_rate_of_its_model_only_during_its_window() -> None:
    start = MONDAY + timedelta(hours=14)
    sc = Scenario(MONDAY, 1, 20.0, seed=4)
    gen = CallGenerator(sc, (_burst(start),))
    during = [c for m in gen.minutes(start, start + 20 * MIN) for c in gen.minute(m)]
    after = [c for m in gen.minutes(start + 20 * MIN, start + 60 * MIN) for c in gen.minute(m)]

    def error_share(calls: list, model: str) -> float:
        mine = [c for c in calls if c.model.name == model]
        return sum(c.is_error for c in mine) / len(mine)

    assert 0.035 < error_share(during, "gpt-4o-mini") < 0.07
    assert error_share(during, "claude-sonnet-4-5") < 0.015 and error_share(after, "gpt-4o-mini") < 0.015


def test_the_incident_library_holds_issue_30s_incidents_and_blips_inside_the_week() -> None:
    week = midnight_days_ago(7, datetime(2026, 12, 6, 9, tzinfo=UTC))
    planted = incident_library(week)
    assert {p.name for p in planted if not p.is_blip} == {
        "error-burst", "ttft-regression", "cost-spike", "refusal-spike", "tool-failure-spike", "truncation-spike",
        "length-collapse", "ttft-creep"}
    assert {p.name for p in planted if p.is_blip} == {"error-blip", "ttft-blip"}
    assert all(week <= p.start < p.end <= week + timedelta(days=7) for p in planted)
    assert all(p.end - p.start == 2 * MIN for p in planted if p.is_blip)


def _span_ids(bodies: list[tuple[bytes, int]]) -> list[bytes]:
    return [span.span_id for body, _ in bodies
            for span in ExportTraceServiceRequest.FromString(body).resource_spans[0].scope_spans[0].spans]


def test_encoded_bodies_hold_the_same_calls_however_the_time_is_split() -> None:
    sc = Scenario(MONDAY + timedelta(hours=14), 1 / 24, 2.0, seed=5)
    whole = encode_span(sc, (), sc.start, sc.end, batch_size=100)
    middle = sc.start + 25 * MIN
    halves = encode_span(sc, (), sc.start, middle, batch_size=100) + encode_span(sc, (), middle, sc.end)
    assert sum(n for _, n in whole) == len(_span_ids(whole)) > 5000
    assert _span_ids(whole) == _span_ids(halves)


@pytest.mark.parametrize("slow_receiver", [(0.0, 2)], indirect=True)
def test_backfill_in_worker_processes_posts_every_call_once_retrying_503(slow_receiver) -> None:
    sc = Scenario(MONDAY + timedelta(hours=14), 3 / 24, 0.5, seed=6)
    stats = backfill_scenario(slow_receiver.url, "iwk_test", sc, workers=2, batch_size=500, progress=False)
    expected = sum(n for _, n in encode_span(sc, (), sc.start, sc.end, batch_size=500))
    assert stats.calls_acked == stats.calls_generated == expected and stats.dropped_calls == 0
    assert slow_receiver.posts == stats.requests == stats.acks + 2


def _fired(signal: str, minute: int, severity: str = "critical", **labels: str) -> Fired:
    at = MONDAY + minute * MIN
    return Fired("p", f"rule-{signal}", signal, severity, labels, at, at + 10 * MIN)


def test_the_scorer_matches_by_signal_scope_and_time_and_counts_the_rest_as_false() -> None:
    burst = _burst(MONDAY + 60 * MIN)
    blip = Planted("error-blip", "error", "rate", MONDAY + 300 * MIN, MONDAY + 302 * MIN, 0.2,
                   model="gpt-4o-mini", rate_kind="error")
    fired = [
        _fired("error_rate", 67, model="gpt-4o-mini"),  # the burst, 7 minutes in
        _fired("error_rate", 70),  # the burst again, project-level
        _fired("error_rate", 66, model="claude-sonnet-4-5"),  # another model: false
        _fired("ttft_p95", 66, "warning", model="gpt-4o-mini"),  # another signal: false
        _fired("error_rate", 200, model="gpt-4o-mini"),  # long after: false
        _fired("error_rate", 304, model="gpt-4o-mini"),  # the blip paged: false, and the blip is ALERTED
    ]
    score = score_week("p", fired, (burst, blip), MONDAY, MONDAY + timedelta(days=1))
    found, blipped = score.detections
    assert (found.verdict, found.delay, len(found.matches)) == ("ok", 7 * MIN, 2)
    assert blipped.verdict == "ALERTED" and len(blipped.matches) == 1
    assert score.false_by_severity() == {"critical": 3, "warning": 1, "info": 0}
    day = MONDAY + timedelta(days=1)
    late = score_week("p", [_fired("error_rate", 85, model="gpt-4o-mini")], (burst,), MONDAY, day)
    assert late.detections[0].verdict == "late"
    assert score_week("p", [], (burst,), MONDAY, day).detections[0].verdict == "MISS"
    assert parse_series_key("model=a\\,b,feature=x\\=y") == {"model": "a,b", "feature": "x=y"}
    assert parse_series_key("project") == {}


# A rules file of its own: this test checks the simulator and the scorer, not how the default rules are tuned.
RULES = """
version: 1
evaluation_offset: 60s
rules:
  - id: errors
    signal: error_rate
    group_by: [project, model]
    window: 5m
    for: 2m
    min_requests: 50
    threshold: {op: ">", value: 2%}
    severity: critical
  - id: ttft
    signal: ttft_p95
    group_by: [project, model]
    window: 5m
    for: 10m
    min_requests: 20
    threshold: {op: ">", value: 2s}
    severity: warning
"""


def test_a_simulated_afternoon_through_a_real_collector_and_the_real_backtest_scores_its_burst(
        tmp_path: Path) -> None:
    start = midnight_days_ago(2) + timedelta(hours=12)
    scenario = Scenario(start, 4 / 24, 1.0, seed=11)  # 12:00-16:00 at ~1.5-1.9 calls/s
    burst = _burst(start + timedelta(hours=1))
    blip = Planted("ttft-blip", "ttft", "ttft", start + timedelta(hours=3), start + timedelta(hours=3) + 2 * MIN,
                   4.0, model="gpt-4o-mini")
    with collector_process(tmp_path / "data", projects=("sim",)) as collector:
        stats = backfill_scenario(collector.url, collector.keys["sim"], scenario, (burst, blip), parallel=4,
                                  progress=False)
    assert stats.calls_acked > 15_000 and stats.dropped_calls == stats.failures == 0

    store = Store.open(Settings(data_dir=tmp_path / "data", clickhouse_url="", cluster="", database="inferwatch",
                                migration_mode="auto"))
    try:
        stored, errors = store.query(
            "SELECT count(), countIf(error_type != '') FROM llm_calls WHERE project_id = 'sim' "
            "AND model = 'gpt-4o-mini' AND start_time >= {s:DateTime64(6)} AND start_time < {e:DateTime64(6)}",
            {"s": burst.start.replace(tzinfo=None), "e": burst.end.replace(tzinfo=None)}).result_rows[0]
        assert stored > 500 and 0.03 < errors / stored < 0.08  # the ground truth is in the store, via ingest
        ruleset = parse_rules(RULES, "<test rules>")
        report = backtest(store, ruleset, scenario.start, scenario.end, step_s=60, projects=["sim"])
    finally:
        store.close()

    fired = [Fired(i.project_id, i.rule_id, ruleset.rule(i.rule_id).signal.name, i.severity,
                   parse_series_key(i.series_key), i.fired_at, i.resolved_at) for i in report.incidents()]
    score = score_week("sim", fired, (burst, blip), scenario.start, scenario.end)
    found, quiet = score.detections
    assert found.verdict == "ok" and found.delay <= 10 * MIN
    assert {(f.rule_id, f.labels.get("model")) for f in found.matches} == {("errors", "gpt-4o-mini")}
    assert quiet.verdict == "quiet"
    assert score.false_by_severity() == {"critical": 0, "warning": 0, "info": 0}


def test_a_kept_data_dir_is_backtested_and_scored_again_with_other_rules(tmp_path: Path, capsys) -> None:
    """``--data-dir`` skips the collector and the ingest: the same stored calls, another rules file. Here a
    normal week's day with 20 slow minutes on one model: a false warning under a rule that watches TTFT, none
    under one that does not; a week that was never written there is refused by name."""
    import alert_quality

    settings = Settings(data_dir=tmp_path / "data", clickhouse_url="", cluster="", database="inferwatch",
                        migration_mode="auto")
    day = midnight_days_ago(1)
    store = Store.open(settings)
    try:
        migrate(store, target_for(settings, store))
        add_calls(store, day + timedelta(hours=10), 60, 20, project="normal-1", model="m1", ttft_ms=400)
        add_calls(store, day + timedelta(hours=11), 20, 20, project="normal-1", model="m1", ttft_ms=3000, seed=2)
    finally:
        store.close()
    ttft_rules, error_rules = tmp_path / "ttft.yaml", tmp_path / "errors.yaml"
    rule = RULES.split("  - id: ttft")
    error_rules.write_text(rule[0])
    ttft_rules.write_text("version: 1\nevaluation_offset: 60s\nrules:\n  - id: ttft" + rule[1])
    common = ["--weeks", "normal-1", "--days", "1", "--data-dir", str(tmp_path / "data")]

    assert alert_quality.main([*common, "--rules", str(ttft_rules)]) == 0
    out = capsys.readouterr().out
    assert "ttft warning [model=m1] 1" in out and " 1,600 " in out  # the calls stored, no ingest timed
    assert alert_quality.main([*common, "--rules", str(error_rules)]) == 0
    assert "normal-1:\n    none" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="no calls stored for fresh-1"):
        alert_quality.main(["--weeks", "fresh-1", "--days", "1", "--data-dir", str(tmp_path / "data"),
                            "--rules", str(error_rules)])
