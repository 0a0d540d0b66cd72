"""The rules file: the shipped defaults, the schema's conveniences, and a bad file refused with every problem's
line and reason (by the loader, by ``alerts rules --check``, and by the scheduler, which does not start)."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import pytest
from inferwatch_alerts.rules import (
    BaselineSpec,
    DetectorSpec,
    RulesError,
    Sustain,
    Threshold,
    load_rules,
    parse_duration,
    parse_rules,
)
from inferwatch_alerts.scheduler import ALERT_RULES_JOB, default_jobs
from inferwatch_server.cli import alerts as alerts_cli


def errors_of(text: str) -> list[str]:
    with pytest.raises(RulesError) as info:
        parse_rules(textwrap.dedent(text), "rules.yaml")
    return info.value.errors


def assert_exactly(errors: list[str], expected: list[str]) -> None:
    """Each expected line starts one of ``errors``, and there is nothing else."""
    for line in expected:
        assert any(e.startswith(line) for e in errors), (line, errors)
    assert len(errors) == len(expected), errors


def test_the_shipped_defaults_are_the_product_briefs() -> None:
    rules = {r.id: r for r in load_rules().rules}
    ttft = rules["ttft-p95-high"]
    assert (ttft.signal.name, ttft.condition, ttft.severity) == (
        "ttft_p95", Threshold(">", 2000.0, confidence=0.95, clear=1600.0), "warning")
    assert (ttft.sustain, ttft.for_s, ttft.resolve_after_s) == (Sustain(4, 5, 0.8), 0, 600)
    errors = rules["error-rate-high"]
    assert (errors.signal.name, errors.condition, errors.severity) == (
        "error_rate", Threshold(">", 0.01, confidence=0.95, min_events=8), "critical")
    assert (errors.window_s, errors.sustain, errors.resolve_after_s) == (600, Sustain(5, 10), 600)
    cost = rules["cost-per-hour-spike"]
    assert cost.signal.name == "cost_per_hour" and cost.severity == "warning"
    assert isinstance(cost.condition, BaselineSpec)
    assert (cost.condition.kind, cost.condition.factor, cost.condition.op) == ("seasonal", 2.0, ">")
    assert cost.group_by == ("project", "model") and cost.condition.min_value > 0
    refusals = rules["refusal-rate-high"]
    assert (refusals.signal.name, refusals.condition, refusals.severity) == (
        "refusal_rate", Threshold(">", 0.05, confidence=0.95, min_events=5), "info")
    assert (refusals.sustain, refusals.resolve_after_s) == (Sustain(5, 15), 900)
    assert "investigate" in refusals.headline
    drift = {r.id: r.condition.kind for r in rules.values() if isinstance(r.condition, DetectorSpec)}
    assert drift == {"refusal-rate-drift": "proportion_spike", "empty-response-drift": "proportion_spike",
                     "truncated-response-drift": "proportion_spike", "tool-failure-drift": "proportion_spike",
                     "thumbs-down-drift": "proportion_spike", "response-length-shift": "length_shift",
                     "ttft-p95-creep": "percentile_creep", "latency-p95-creep": "percentile_creep",
                     "refusal-rate-drift-by-feature": "proportion_spike",
                     "empty-response-drift-by-feature": "proportion_spike",
                     "truncated-response-drift-by-feature": "proportion_spike",
                     "tool-failure-drift-by-feature": "proportion_spike"}
    # every baseline-relative rule states the history it needs, and has it checked (learning until then)
    assert all(r.condition.history_days >= 3 for r in rules.values() if not isinstance(r.condition, Threshold))
    ruleset = load_rules()
    assert ruleset.channels_of(errors) == ("pagerduty", "slack") and ruleset.channels_of(ttft) == ("slack",)


def test_no_default_threshold_rule_can_be_satisfied_by_a_two_minute_blip() -> None:
    # a blip of 2 minutes touches at most 3 one-minute buckets; the window alone is not enough either
    for rule in load_rules().rules:
        if isinstance(rule.condition, Threshold):
            assert rule.sustain is not None and rule.sustain.breaching >= 4, rule.id
            assert rule.sustain.of * 60 <= rule.window_s and rule.resolve_after_s >= 600, rule.id


def test_guard_sustain_and_hysteresis_in_the_units_people_write() -> None:
    ruleset = parse_rules(textwrap.dedent("""\
        version: 1
        defaults: {severity: warning, resolve_after: 5m}
        rules:
          - id: a
            signal: error_rate
            window: 10m
            for: {breaching: 7m, of: 10m}
            threshold: {op: ">=", value: 2%, confidence: 0.99, min_events: 3, clear: 1.5%}
          - {id: b, signal: ttft_p99, threshold: {op: "<", value: 100ms, clear: 0.2s}, resolve_after: 0}
        """))
    a, b = ruleset.rules
    assert a.condition == Threshold(">=", 0.02, 0.99, 3, 0.015) and a.condition.guarded
    assert (a.sustain, a.for_s, a.resolve_after_s, a.policy.resolve_after_s) == (Sustain(7, 10), 0, 300, 300)
    assert b.condition == Threshold("<", 100.0, clear=200.0) and not b.condition.guarded
    assert (b.sustain, b.resolve_after_s, b.condition.clear_level) == (None, 0, 200.0)
    described = a.to_json({})
    assert described["sustain"] == {"breaching": 7, "of": 10} and described["resolve_after_s"] == 300
    assert described["condition"] == {"type": "threshold", "op": ">=", "value": 0.02, "confidence": 0.99,
                                      "min_events": 3, "clear": 0.015}


def test_contradictory_guards_sustains_and_clear_levels_are_refused_with_their_lines() -> None:
    errors = errors_of("""\
        version: 1
        rules:
          - id: a
            signal: error_rate
            window: 10m
            for: {breaching: 8m, of: 6m}
            threshold: {value: 1%, confidence: 1.2}
            severity: info
          - id: b
            signal: ttft_p95
            window: 5m
            for: {breaching: 4m, of: 10m}
            threshold: {value: 2s, confidence: 0.9, min_events: 3, clear: 2.5s}
            severity: info
          - id: c
            signal: cost_per_hour
            for: {breaching: 3m, of: 5m}
            baseline: {kind: daily_average}
            severity: info
          - id: d
            signal: error_rate
            for: {breaching: 4, of: 5m}
            threshold: {op: "<", value: 99%, min_events: 3, clear: 98%}
            resolve_after: 90s
            severity: info
          - id: e
            signal: refusal_rate
            for: {breaching: 2m}
            threshold: {value: 5%, confidence: 0.5}
            severity: info
        """)
    expected = [
        "rules.yaml:6: rules[0].for.breaching: 8 breaching minutes out of 6 can never happen",
        "rules.yaml:7: rules[0].threshold.confidence: confidence must be a number between 0.5 and 1",
        "rules.yaml:12: rules[1].for.of: the 10 minutes must lie within the window (5m)",
        "rules.yaml:13: rules[1].threshold.min_events: min_events is a guard for rate signals",
        ("rules.yaml:13: rules[1].threshold.clear: the clear level must be on the good side of the threshold: at "
         "or below 2s for op >"),
        "rules.yaml:17: rules[2].for: for: {breaching, of} counts one-minute buckets over a threshold",
        "rules.yaml:22: rules[3].for.breaching: a number of minutes, written as a duration such as 4m",
        "rules.yaml:24: rules[3].resolve_after: must be a whole number of 1m",
        "rules.yaml:23: rules[3].threshold.min_events: min_events counts the events a rate is made of",
        ("rules.yaml:23: rules[3].threshold.clear: the clear level must be on the good side of the threshold: at "
         "or above 99% for op <"),
        "rules.yaml:28: rules[4].for: needs `of`",
        "rules.yaml:29: rules[4].threshold.confidence: confidence must be a number between 0.5 and 1",
    ]
    assert_exactly(errors, expected)


def test_a_bucket_confidence_is_a_joint_claim_and_needs_a_guarded_threshold() -> None:
    rule = parse_rules(textwrap.dedent("""\
        version: 1
        rules:
          - {id: a, signal: ttft_p95, for: {breaching: 4m, of: 5m, confidence: 0.8},
             threshold: {value: 2s, confidence: 0.95}, severity: info}
        """)).rules[0]
    assert rule.sustain == Sustain(4, 5, 0.8)
    assert rule.to_json({})["sustain"] == {"breaching": 4, "of": 5, "confidence": 0.8}
    # 4 of 5 buckets at 80% each, when the truth sits at the threshold: 5 * 0.2^4 * 0.8 + 0.2^5
    assert rule.sustain.false_rate(0.8) == pytest.approx(0.00672)
    errors = errors_of("""\
        version: 1
        rules:
          - {id: a, signal: error_rate, for: {breaching: 4m, of: 5m, confidence: 0.8}, threshold: {value: 1%},
             severity: info}
          - {id: b, signal: error_rate, for: {breaching: 4m, of: 5m, confidence: 1}, severity: info,
             threshold: {value: 1%, confidence: 0.95}}
        """)
    assert errors == [
        ("rules.yaml:3: rules[0].for.confidence: a bucket confidence needs a guarded threshold "
         "(threshold.confidence): without one the buckets are judged by their point value"),
        "rules.yaml:5: rules[1].for.confidence: confidence must be a number between 0.5 and 1 (exclusive), e.g. 0.8",
    ]


def test_values_in_the_units_people_write() -> None:
    ruleset = parse_rules(textwrap.dedent("""\
        version: 1
        defaults: {severity: warning, renotify: 2h}
        rules:
          - {id: a, signal: latency_p99, threshold: {op: ">=", value: 1.5s}, window: 10m, for: 1h30m}
          - {id: b, signal: error_rate, threshold: {value: 2.5%}, renotify: never, group_by: [feature]}
          - {id: c, signal: cost_per_hour, baseline: {kind: same_hour, days: 3, factor: 1.5}}
          - {id: d, signal: refusal_rate, threshold: {value: 0.1}, enabled: false}
        """))
    a, b, c = ruleset.rules
    assert (a.condition, a.window_s, a.for_s, a.renotify_s) == (Threshold(">=", 1500.0), 600, 5400, 7200)
    assert (b.condition, b.renotify_s, b.group_by) == (Threshold(">", 0.025), None, ("project", "feature"))
    assert c.condition == BaselineSpec("same_hour", 1.5, ">", 86400, 3, 0.0)
    assert [parse_duration(v) for v in (90, "90s", "5m", "2h", "1d", "1h30m", "250ms")] == [
        90, 90, 300, 7200, 86400, 5400, 0.25]


def test_a_bad_file_is_refused_with_every_line_and_reason() -> None:
    errors = errors_of("""\
        version: 1
        channels:
          slack: {type: slack, webhook_url_env: SLACK_URL}
        routing:
          critical: [slack, pager]
        rules:
          - id: ttft
            signal: ttft_p95
            threshold: {op: ">", value: 2s}
            severity: warning
            window: 90s
          - id: errors
            signal: error_rte
            threshold: {op: ">", value: 1%}
            severity: critical
          - id: ttft
            signal: refusal_rate
            threshold: {op: "!=", value: 5%}
            severity: urgent
            colour: red
          - id: thumbs
            signal: thumbs_down_rate
            group_by: [provider]
            detector: {kind: proportion_spike}
            severity: info
          - id: creep
            signal: error_rate
            detector: {kind: percentile_creep}
            severity: info
          - id: both
            signal: error_rate
            threshold: {value: 1%}
            baseline: {kind: daily_average}
            severity: info
            channels: [email]
        """)
    expected = [
        "rules.yaml:5: routing.critical[1]: unknown channel 'pager'",
        "rules.yaml:11: rules[0].window: must be a whole number of 1m",
        "rules.yaml:13: rules[1].signal: unknown or missing signal 'error_rte'",
        "rules.yaml:20: rules[2].colour: unknown key 'colour'",
        "rules.yaml:19: rules[2].severity: severity must be one of critical, warning, info",
        "rules.yaml:18: rules[2].threshold.op: op must be one of > >= < <=",
        "rules.yaml:23: rules[3].group_by: thumbs_down_rate cannot be grouped by project, provider",
        "rules.yaml:27: rules[4].signal: detector percentile_creep does not apply to error_rate",
        "rules.yaml:30: rules[5]: needs exactly one of threshold, baseline or detector (has threshold, baseline)",
        "rules.yaml:35: rules[5].channels[0]: unknown channel 'email'",
    ]
    assert_exactly(errors, expected)  # nothing else: an unknown signal does not also fail its threshold
    # the duplicate id is reported too, once the first definition is valid
    assert any("duplicate rule id" in e for e in errors_of("""\
        version: 1
        rules:
          - {id: a, signal: error_rate, threshold: {value: 1%}, severity: info}
          - {id: a, signal: error_rate, threshold: {value: 2%}, severity: info}
        """))


def test_contradictory_baseline_and_detector_settings_are_refused_with_their_line() -> None:
    errors = errors_of("""\
        version: 1
        defaults: {severity: info, window: 1h, every: 1h}
        rules:
          - id: never-runs
            signal: refusal_rate
            detector: {kind: proportion_spike, baseline_days: 3, min_baseline_days: 5}
          - id: no-day-noise
            signal: refusal_rate
            detector: {kind: proportion_spike, min_day_cv: 0}
          - id: no-spread
            signal: ttft_p95
            window: 1d
            detector: {kind: percentile_creep, min_rel_sd: 0}
          - id: short-reference
            signal: ttft_p95
            window: 1d
            detector: {kind: percentile_creep, reference_days: 5, min_reference: 6}
          - id: one-day-fires
            signal: ttft_p95
            window: 1d
            detector: {kind: percentile_creep, k: 0.5, h: 5, max_z: 6}
          - id: cost
            signal: cost_per_hour
            baseline: {kind: seasonal, days: 2, min_days: 3}
          - id: length
            signal: output_tokens_per_call
            detector: {kind: length_shift, baseline_days: 4, min_baseline_days: 7}
        """)
    expected = [
        "rules.yaml:6: rules[0].detector.min_baseline_days: min_baseline_days (5) is more than baseline_days (3)",
        "rules.yaml:9: rules[1].detector.min_day_cv: min_day_cv must be more than 0",
        "rules.yaml:13: rules[2].detector.min_rel_sd: min_rel_sd must be more than 0",
        "rules.yaml:17: rules[3].detector.min_reference: min_reference (6) is more than reference_days (5)",
        "rules.yaml:21: rules[4].detector.max_z: max_z - k (5.5) must be below h (5)",
        "rules.yaml:24: rules[5].baseline.min_days: min_days (3) is more than days (2)",
        "rules.yaml:27: rules[6].detector.min_baseline_days: min_baseline_days (7) is more than baseline_days (4)",
    ]
    assert_exactly(errors, expected)


def test_a_seasonal_baseline_takes_previous_days_and_weeks() -> None:
    ruleset = parse_rules(textwrap.dedent("""\
        version: 1
        rules:
          - id: cost
            signal: cost_per_hour
            window: 30m
            baseline: {kind: seasonal, days: 3, weeks: 2, min_days: 2, min_value: 0.25}
            severity: warning
        """))
    cond = ruleset.rules[0].condition
    assert isinstance(cond, BaselineSpec) and cond.offsets == (1, 2, 3, 7, 14)
    assert cond.history_days == 2 and cond.min_value == 0.25
    assert "median of the same window on the previous 3 days and 2 weeks" in ruleset.rules[0].headline
    assert any("weeks applies to a seasonal baseline only" in e for e in errors_of("""\
        version: 1
        rules:
          - {id: c, signal: cost_per_hour, severity: info, baseline: {kind: same_hour, weeks: 1}}
        """))


def test_yaml_mistakes_are_refused_with_their_line() -> None:
    assert errors_of("version: 1\nrules:\n  - id: a\n    signal: [unclosed\n")[0].startswith("rules.yaml:")
    dup = errors_of("""\
        version: 1
        rules:
          - id: a
            signal: error_rate
            threshold: {value: 1%}
            threshold: {value: 50%}
            severity: info
        """)
    assert dup == ["rules.yaml:6: rules[0].threshold: duplicate key (first at line 5)"]
    assert errors_of("rules: []\n") == ["rules.yaml:1: version: `version: 1` is required"]
    assert errors_of("version: 2\nrules: []\n")[0].startswith("rules.yaml:1: version: unsupported version 2")


def test_channels_are_checked_without_their_secrets() -> None:
    errors = errors_of("""\
        version: 1
        channels:
          slack: {type: slack, webhook_url: "https://hooks.slack.com/services/T/B/x"}
          pd: {type: pagerduty, routing_key_env: PD_KEY, retries: 3}
          hook: {type: email}
        rules: []
        """)
    assert errors[0].startswith("rules.yaml:3: channels.slack: webhook_url must not be written in the rules file")
    assert errors[1].startswith("rules.yaml:4: channels.pd: unknown field(s) retries")
    assert errors[2].startswith("rules.yaml:5: channels.hook.type: type must be one of slack, pagerduty, webhook")
    # an environment variable that is not set here is fine: only the scheduler needs it
    ok = parse_rules("version: 1\nchannels:\n  pd: {type: pagerduty, routing_key_env: NOT_SET_ANYWHERE}\n"
                     "rules: []\n")
    assert list(ok.channels) == ["pd"]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="inferwatch-server")
    p.add_argument("--data-dir")
    alerts_cli.register(p.add_subparsers(dest="command", required=True))
    return p


def test_cli_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("version: 1\nrules:\n"
                    "  - {id: a, signal: error_rate, threshold: {value: 1%}, severity: info}\n")
    args = parser().parse_args(["alerts", "rules", "--check", str(good)])
    assert args.func(args) == 0
    assert "OK, 1 rule(s)" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nrules:\n"
                   "  - {id: a, signal: error_rate, threshold: {value: lots}, severity: info}\n")
    args = parser().parse_args(["alerts", "rules", "--check", str(bad)])
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3: rules[0].threshold.value: must be a number (a fraction, or a percentage such as 1%)" in err
    unsafe = tmp_path / "unsafe.yaml"
    unsafe.write_text("version: 1\nrules:\n  - id: a\n    signal: error_rate\n    window: 5m\n"
                      "    for: {breaching: 8m, of: 10m}\n    threshold: {value: 1%, clear: 2%}\n"
                      "    severity: info\n")
    args = parser().parse_args(["alerts", "rules", "--check", str(unsafe)])
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert f"{unsafe}:6: rules[0].for.of: the 10 minutes must lie within the window (5m)" in err
    assert f"{unsafe}:7: rules[0].threshold.clear: the clear level must be on the good side" in err
    args = parser().parse_args(["alerts", "rules", "--check", str(tmp_path / "missing.yaml")])
    assert args.func(args) == 2 and "cannot read" in capsys.readouterr().err


def test_the_scheduler_refuses_to_start_on_a_bad_rules_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    bad = tmp_path / "rules.yaml"
    bad.write_text("version: 1\nrules:\n  - {id: a, signal: nope, threshold: {value: 1}, severity: info}\n")
    monkeypatch.setenv("INFERWATCH_ALERT_RULES_FILE", str(bad))
    with pytest.raises(RulesError, match=r"rules.yaml:3: rules\[0\].signal: unknown or missing signal 'nope'"):
        default_jobs()
    bad.write_text("version: 1\nrules:\n  - {id: a, signal: error_rate, threshold: {value: 1%}, severity: info}\n")
    jobs = {spec.name: spec for spec in default_jobs()}
    assert [r.id for r in jobs[ALERT_RULES_JOB].func.ruleset.rules] == ["a"]


def test_confidence_is_refused_on_signals_that_are_neither_rates_nor_percentiles() -> None:
    errors = errors_of("""
        version: 1
        rules:
          - id: a
            signal: request_rate
            threshold: {value: 100, confidence: 0.95}
            severity: info
        """)
    assert errors == ["rules.yaml:6: rules[0].threshold.confidence: confidence is a guard for rate and percentile "
                      "signals (error_rate, ttft_p95, ...); request_rate is neither"]


def test_cli_listing_states_how_each_rule_is_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(textwrap.dedent("""\
        version: 1
        rules:
          - id: ttft
            signal: ttft_p95
            window: 5m
            for: {breaching: 4m, of: 5m, confidence: 0.8}
            threshold: {op: ">", value: 2s, confidence: 0.95}
            resolve_after: 10m
            severity: warning
          - {id: errors, signal: error_rate, window: 5m, for: 2m, threshold: {value: 1%}, severity: critical}
        """))
    monkeypatch.setenv("INFERWATCH_ALERT_RULES_FILE", str(rules_file))
    args = parser().parse_args(["--data-dir", str(tmp_path / "data"), "alerts", "rules"])
    assert args.func(args) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert ("for 4 of the last 5 minutes (each at 80% confidence: 0.7% false runs), resolves after 600s clear"
            in lines["ttft"])
    assert "for 120s, every 60s" in lines["errors"]
