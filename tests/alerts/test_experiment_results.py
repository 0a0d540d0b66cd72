"""The experiments job on a real embedded database: its numbers equal scipy's on the raw rows; exclusions,
feedback, SRM, guardrails, automatic registration, daily looks of the sequential test; and the verdict rules."""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import UTC, datetime, time, timedelta
from typing import Any

import numpy as np
import pytest
from inferwatch.context import assign
from inferwatch_alerts.experiments import registry, results, stats
from inferwatch_alerts.experiments.stats import Moments, SrmResult
from inferwatch_alerts.experiments.verdict import ArmOutcome, MetricOutcome, Plan, decide
from inferwatch_alerts.scheduler import EXPERIMENTS_JOB, default_jobs
from inferwatch_collector.routes.feedback import COLUMNS as FEEDBACK_COLUMNS
from inferwatch_collector.rows import LLM_CALL_COLUMNS
from inferwatch_collector.store import Store
from scipy import stats as st

from tests.helpers.factories import llm_call

DAY0 = datetime.combine(datetime.now(UTC).date() - timedelta(days=10), time(0), UTC)
NOW = DAY0 + timedelta(hours=20)


def insert_calls(store: Store, rows: list[Any]) -> None:
    store.insert_columns("llm_calls", [list(c) for c in zip(*rows)], LLM_CALL_COLUMNS)


def insert_feedback(store: Store, items: list[dict[str, Any]]) -> None:
    rows = []
    for i, item in enumerate(items):
        created = int(item["at"].timestamp() * 1000)
        rows.append(["p1", f"fb{i}-{item['trace_id'][:8]}", created, created, item["trace_id"], "",
                     item.get("user_hash", ""), item["kind"], "user_feedback", item["value"], "", "", "api",
                     "gpt-4o-mini", item.get("experiment", ""), item.get("variant", ""), "answer", "search", 0])
    store.insert_columns("feedback", [list(c) for c in zip(*rows)], FEEDBACK_COLUMNS)


def user_hash(i: int) -> str:
    return f"{i:064x}"


def traffic(experiment: str, users: int, *, seed: int, at: datetime, weights: dict[str, float],
            cost_factor: dict[str, float] | None = None, error_factor: dict[str, float] | None = None,
            first_user: int = 0) -> list[Any]:
    """Heterogeneous users (their own price level and error propensity), 1-6 calls each, sticky assignment."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(first_user, first_user + users):
        variant = assign(f"user-{u}", experiment, weights)
        level, propensity = rng.lognormal(0, 0.5), rng.beta(1, 9)
        for _ in range(1 + rng.poisson(2)):
            start = at + timedelta(seconds=float(rng.uniform(0, 3600)))
            rows.append(llm_call(
                "p1", start_time=int(start.timestamp() * 1_000_000), experiment=experiment, variant=variant,
                user_hash=user_hash(u), latency_ms=int(rng.integers(300, 3000)),
                ttft_ms=int(rng.integers(50, 400)),
                cost_usd=float(level * rng.lognormal(-6, 0.3) * (cost_factor or {}).get(variant, 1.0)),
                status="error" if rng.random() < propensity * (error_factor or {}).get(variant, 1.0) else "ok",
                refusal=bool(rng.random() < 0.03), tool_calls=int(rng.integers(0, 3)),
                tool_call_failures=int(rng.random() < 0.1)))
    return rows


def result_rows(store: Store, experiment: str) -> dict[tuple[str, str], dict[str, Any]]:
    names = ("metric", "variant", "window_end", "n", "value", "ci_low", "ci_high", "lift", "p_value", "method",
             "details")
    rows = store.query(f"SELECT {', '.join(names)} FROM ab_results FINAL WHERE experiment = {{e:String}} "
                       "ORDER BY window_end DESC LIMIT 1 BY metric, variant", {"e": experiment}).result_rows
    return {(r[0], r[1]): dict(zip(names, r)) for r in rows}


def verdicts(store: Store, experiment: str) -> list[dict[str, Any]]:
    names = ("window_start", "window_end", "verdict", "trustworthy", "winner", "users", "srm_p_value", "reason",
             "details")
    rows = store.query(f"SELECT {', '.join(names)} FROM ab_verdicts FINAL WHERE experiment = {{e:String}} "
                       "ORDER BY window_end", {"e": experiment}).result_rows
    return [dict(zip(names, r)) for r in rows]


def per_user(store: Store, experiment: str, start: datetime) -> dict[str, dict[str, np.ndarray]]:
    """Per-user sums straight from the raw calls of project p1 since ``start`` (and their feedback), for users
    seen in exactly one variant."""
    calls = store.query(
        "SELECT user_hash, variant, cost_usd, status = 'error', tool_calls, tool_call_failures, trace_id "
        "FROM llm_calls WHERE project_id = 'p1' AND experiment = {e:String} "
        "AND start_time >= fromUnixTimestamp({s:Int64})", {"e": experiment, "s": int(start.timestamp())}
    ).result_rows
    users: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    variants: dict[str, set[str]] = defaultdict(set)
    trace_user = {}
    for uh, variant, cost, error, tools, failures, trace in calls:
        if not uh:
            continue
        variants[uh].add(variant)
        u = users[uh]
        u["calls"] += 1
        u["cost"] += cost
        u["errors"] += error
        u["tools"] += tools
        u["failures"] += failures
        trace_user[trace] = uh
    for trace, kind, value, fb_experiment, fb_user in store.query(
            "SELECT trace_id, kind, value, experiment, user_hash FROM feedback FINAL").result_rows:
        uh = fb_user if fb_experiment == experiment else trace_user.get(trace) if fb_experiment == "" else None
        if uh in users and kind == "thumbs":
            users[uh]["thumbs"] += 1
            users[uh]["up"] += value > 0
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for uh, sums in users.items():
        if len(variants[uh]) != 1:
            continue
        (variant,) = variants[uh]
        for key in ("calls", "cost", "errors", "tools", "failures", "thumbs", "up"):
            out[variant][key].append(sums[key])
    return {v: {k: np.array(values) for k, values in cols.items()} for v, cols in out.items()}


def delta_method(y_c: np.ndarray, x_c: np.ndarray, y_t: np.ndarray, x_t: np.ndarray) -> tuple[float, float]:
    """(difference of ratios, two-sided p): Deng et al. 2018, written out with numpy and scipy."""
    def var(y: np.ndarray, x: np.ndarray) -> float:
        r = y.sum() / x.sum()
        cov = np.cov(y, x, ddof=1)
        return (cov[0, 0] - 2 * r * cov[0, 1] + r * r * cov[1, 1]) / (len(y) * x.mean() ** 2)

    delta = y_t.sum() / x_t.sum() - y_c.sum() / x_c.sum()
    z = delta / math.sqrt(var(y_c, x_c) + var(y_t, x_t))
    return delta, 2 * st.norm.sf(abs(z))


def register(store: Store, name: str, variants: dict[str, float], **fields: Any) -> registry.Experiment:
    exp = registry.validate_experiment(project_id="p1", name=name, variants=variants, start=DAY0, now=DAY0,
                                       **fields)
    return registry.save_experiment(store, exp, now=DAY0)


# ---------------------------------------------------------------------------------------- the job


def test_job_results_match_scipy_on_the_raw_rows(store: Store) -> None:
    weights = {"A": 0.5, "B": 0.5}
    register(store, "prompt-v3", weights, planned_users=1_250)
    rows = traffic("prompt-v3", 1200, seed=1, at=DAY0 + timedelta(hours=2), weights=weights,
                   cost_factor={"B": 0.85})
    # one user who switched variant, and calls without a user: both excluded and counted
    rows += [llm_call("p1", start_time=rows[0].start_time, experiment="prompt-v3", variant=v,
                      user_hash=user_hash(99_999)) for v in ("A", "B")]
    rows += [llm_call("p1", start_time=rows[0].start_time, experiment="prompt-v3", variant="A", user_hash="")
             for _ in range(3)]
    # calls before the start and of another project are not part of the experiment
    rows += [llm_call("p1", start_time=int((DAY0 - timedelta(hours=1)).timestamp() * 1e6), experiment="prompt-v3",
                      variant="A", user_hash=user_hash(1), cost_usd=50.0),
             llm_call("p2", start_time=rows[0].start_time, experiment="prompt-v3", variant="A",
                      user_hash=user_hash(1), cost_usd=50.0)]
    insert_calls(store, rows)
    fb_rng = np.random.default_rng(2)
    feedback = [{"trace_id": r.trace_id, "kind": "thumbs", "value": 1.0 if fb_rng.random() < 0.7 else -1.0,
                 "experiment": r.experiment, "variant": r.variant, "user_hash": r.user_hash,
                 "at": DAY0 + timedelta(hours=4)} for r in rows[:-7] if fb_rng.random() < 0.4]
    # feedback stored before its call was known: no experiment copied; matched now by trace id
    late = rows[5]
    feedback.append({"trace_id": late.trace_id, "kind": "thumbs", "value": 1.0, "at": DAY0 + timedelta(hours=4)})
    insert_feedback(store, feedback)

    details = results.run_experiments_job(store, NOW)
    assert details["experiments"] == 1 and details.get("verdict_ship") == 1

    got = result_rows(store, "prompt-v3")
    raw = per_user(store, "prompt-v3", DAY0)
    a, b = raw["A"], raw["B"]
    # users per variant and the SRM test
    assert got[("users", "A")]["n"] == len(a["calls"]) and got[("users", "B")]["n"] == len(b["calls"])
    assert got[("users", "A")]["p_value"] == pytest.approx(st.chisquare([len(a["calls"]), len(b["calls"])]).pvalue)
    # a mean metric: Welch's t-test on per-user cost
    welch = st.ttest_ind(b["cost"], a["cost"], equal_var=False)
    row = got[("cost_per_user", "B")]
    assert row["method"] == "welch_t"
    assert row["p_value"] == pytest.approx(welch.pvalue, rel=1e-6)
    assert float(row["details"]["statistic"]) == pytest.approx(welch.statistic, rel=1e-6)
    assert row["value"] == pytest.approx(b["cost"].mean(), rel=1e-9)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        st.t.interval(0.95, len(b["cost"]) - 1, b["cost"].mean(), st.sem(b["cost"])), rel=1e-6)
    assert row["lift"] == pytest.approx(b["cost"].mean() / a["cost"].mean() - 1, rel=1e-9)
    # ratio and rate metrics: delta method over users
    for metric, y, x in (("cost_per_call", "cost", "calls"), ("error_rate", "errors", "calls"),
                         ("tool_failure_rate", "failures", "tools"), ("thumbs_up_rate", "up", "thumbs")):
        delta, p = delta_method(a[y], a[x], b[y], b[x])
        row = got[(metric, "B")]
        assert row["method"] == "delta", metric
        assert float(row["details"]["delta"]) == pytest.approx(delta, rel=1e-6), metric
        assert row["p_value"] == pytest.approx(p, rel=1e-5, abs=1e-12), metric
        assert got[(metric, "A")]["value"] == pytest.approx(a[y].sum() / a[x].sum(), rel=1e-9), metric
    # exclusions are reported, and the late feedback was attributed by its trace id
    verdict = verdicts(store, "prompt-v3")[-1]
    assert verdict["verdict"] == "ship" and verdict["winner"] == "B" and verdict["trustworthy"]
    assert float(verdict["details"]["mixed_users"]) == 1
    assert float(verdict["details"]["anonymous_calls"]) == 3
    assert float(verdict["details"]["feedback_matched_by_trace"]) == 1
    assert verdict["users"] == len(a["calls"]) + len(b["calls"])
    assert verdict["window_end"] == (DAY0 + timedelta(days=1)).replace(tzinfo=None)
    # percentiles are descriptive rows from the rollup
    assert got[("latency_p95_ms", "A")]["method"] == "descriptive"
    assert 300 <= got[("latency_p95_ms", "A")]["value"] <= 3000

    # a recompute replaces the window's rows instead of adding to them
    results.run_experiments_job(store, NOW + timedelta(hours=1))
    counts = store.query("SELECT count(), uniqExact(window_end) FROM ab_results FINAL").result_rows[0]
    assert counts == (len(got), 1)
    assert len(verdicts(store, "prompt-v3")) == 1


def test_srm_marks_the_experiment_untrustworthy(store: Store) -> None:
    register(store, "srm", {"A": 0.5, "B": 0.5})
    start = int((DAY0 + timedelta(hours=1)).timestamp() * 1_000_000)
    insert_calls(store, [llm_call("p1", start_time=start + i, experiment="srm", variant="A" if i < 10_400 else "B",
                                  user_hash=user_hash(i)) for i in range(20_000)])
    results.run_experiments_job(store, NOW)
    verdict = verdicts(store, "srm")[-1]
    assert verdict["verdict"] == "srm_invalid" and not verdict["trustworthy"]
    assert verdict["srm_p_value"] < 1e-6
    assert "sample ratio mismatch" in verdict["reason"] and "52.0%" in verdict["reason"]


def test_a_guardrail_regression_blocks_a_cheaper_variant(store: Store) -> None:
    weights = {"control": 0.5, "cheap": 0.5}
    register(store, "cheap-model", weights, guardrails=["error_rate"])
    insert_calls(store, traffic("cheap-model", 1500, seed=3, at=DAY0 + timedelta(hours=1), weights=weights,
                                cost_factor={"cheap": 0.7}, error_factor={"cheap": 2.5}))
    results.run_experiments_job(store, NOW)
    verdict = verdicts(store, "cheap-model")[-1]
    assert verdict["verdict"] == "guardrail_regression", verdict["reason"]
    assert "error_rate" in verdict["reason"]


def test_unregistered_experiments_are_registered_automatically(store: Store) -> None:
    at = DAY0 + timedelta(hours=1)
    insert_calls(store, traffic("auto-exp", 300, seed=4, at=at, weights={"control": 1, "new": 1}))
    details = results.run_experiments_job(store, NOW)
    assert details["auto_registered"] == 1
    exp = registry.get_experiment(store, "p1", "auto-exp")
    assert exp is not None and exp.source == "auto"
    assert exp.variants == ("control", "new") and exp.control == "control" and exp.weights == (1.0, 1.0)
    assert exp.start == at.replace(minute=0)
    assert any("registered automatically" in v for v in verdicts(store, "auto-exp")[-1]["details"].values())

    # a new variant appears: the automatic definition follows; an experiment registered by hand would not
    insert_calls(store, traffic("auto-exp", 50, seed=5, at=at + timedelta(hours=2), first_user=1000,
                                weights={"newer": 1}))
    assert results.run_experiments_job(store, NOW)["auto_updated"] == 1
    assert registry.get_experiment(store, "p1", "auto-exp").variants == ("control", "new", "newer")

    # registering it by hand replaces the assumptions, and the job leaves it alone afterwards
    register(store, "auto-exp", {"control": 0.45, "new": 0.45, "newer": 0.1}, primary_metric="error_rate")
    insert_calls(store, traffic("auto-exp", 5, seed=6, at=at + timedelta(hours=3), first_user=2000,
                                weights={"newest": 1}))
    results.run_experiments_job(store, NOW)
    exp = registry.get_experiment(store, "p1", "auto-exp")
    assert exp.source == "api" and exp.primary_metric == "error_rate" and "newest" not in exp.variants
    verdict = verdicts(store, "auto-exp")[-1]
    assert verdict["verdict"] == "srm_invalid" and "newest" in verdict["reason"]  # the mismatch is reported


def test_daily_looks_feed_the_group_sequential_test(store: Store) -> None:
    weights = {"A": 0.5, "B": 0.5}
    register(store, "seq", weights, planned_users=2_400)
    looks = [DAY0 + timedelta(days=d, hours=23) for d in range(3)]
    for day, at in enumerate(looks):
        insert_calls(store, traffic("seq", 400, seed=10 + day, at=at - timedelta(hours=3), weights=weights,
                                    cost_factor={"B": 0.97}, first_user=400 * day))
        results.run_experiments_job(store, at)
    windows = verdicts(store, "seq")
    assert [w["window_end"] for w in windows] == [(DAY0 + timedelta(days=d + 1)).replace(tzinfo=None)
                                                  for d in range(3)]
    fractions = [w["users"] / 2_400 for w in windows]
    assert fractions == pytest.approx([float(w["details"]["info_fraction"]) for w in windows])
    bounds = stats.spending_boundaries(fractions)
    z = [float(r[0]) for r in store.query(
        "SELECT details['z'] FROM ab_results FINAL WHERE experiment = 'seq' AND metric = 'cost_per_call' "
        "AND variant = 'B' ORDER BY window_end").result_rows]
    expected = min(stats.boundary_scaled_p(2 * st.norm.sf(abs(zk)), ck, 0.05) for zk, ck in zip(z, bounds))
    last = result_rows(store, "seq")[("cost_per_call", "B")]
    assert float(last["details"]["p_sequential"]) == pytest.approx(expected, rel=1e-9)
    assert float(last["details"]["boundary_z"]) == pytest.approx(bounds[-1])
    assert windows[-1]["verdict"] in ("keep_running", "ship")


def test_the_scheduler_runs_the_job_hourly(monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = {spec.name: spec for spec in default_jobs()}
    assert str(jobs[EXPERIMENTS_JOB].trigger) == "cron[minute='20']"
    assert EXPERIMENTS_JOB == results.JOB_NAME
    calls: list[tuple[object, datetime]] = []
    monkeypatch.setattr(results, "run_experiments_job", lambda store, now: calls.append((store, now)) or "ran")
    assert jobs[EXPERIMENTS_JOB].func("the store", NOW) == "ran"  # imported on its first run, not at start
    assert calls == [("the store", NOW)]


# ------------------------------------------------------------------------------------- pure parts


def test_windows_are_utc_days_up_to_the_planned_end() -> None:
    exp = registry.validate_experiment(project_id="p", name="e", variants={"A": 1, "B": 1}, start=DAY0, now=DAY0)
    window = results.window_for(exp, DAY0 + timedelta(days=2, hours=5))
    assert (window.start, window.end) == (DAY0, DAY0 + timedelta(days=3))
    assert results.window_for(exp, DAY0 + timedelta(days=1)).end == DAY0 + timedelta(days=1)  # midnight
    ended = registry.validate_experiment(project_id="p", name="e", variants={"A": 1, "B": 1}, start=DAY0,
                                         end=DAY0 + timedelta(days=1, hours=6), now=DAY0)
    window = results.window_for(ended, DAY0 + timedelta(days=1, hours=9))
    assert window.end == window.data_until == DAY0 + timedelta(days=1, hours=6)
    assert results.is_active(ended, DAY0 + timedelta(days=2))
    assert not results.is_active(ended, DAY0 + timedelta(days=4))


def test_design_drops_looks_without_new_information_and_stops_at_the_plan() -> None:
    exp = registry.validate_experiment(project_id="p", name="e", variants={"A": 1, "B": 1}, start=DAY0,
                                       planned_users=1000, now=DAY0)
    window = results.window_for(exp, DAY0 + timedelta(days=3))
    history = [results.Look(DAY0 + timedelta(days=d + 1), DAY0 + timedelta(days=d + 1), users)
               for d, users in enumerate((300, 300, 700))]
    design = results.design_for(exp, window, history, 900)
    assert design is not None
    assert design.looks == (1, 2, 3) and design.fractions == (0.3, 0.7, 0.9) and design.current_in_design
    done = results.design_for(exp, window, history + [results.Look(DAY0, DAY0, 1000)], 1100)
    assert done is not None and done.fractions[-1] == 1.0 and not done.current_in_design
    assert results.design_for(registry.validate_experiment(project_id="p", name="e", variants={"A": 1, "B": 1},
                                                           now=DAY0), window, history, 900) is None


def test_registry_validation_names_the_field() -> None:
    ok = dict(project_id="p", name="e", variants={"A": 1, "B": 1})
    cases = [({"variants": {"A": 1}}, "variants"), ({"control": "C"}, "control"),
             ({"primary_metric": "calls_per_user"}, "primary_metric"), ({"guardrails": ["nope"]}, "guardrails"),
             ({"variants": {"A": 1, "B": -1}}, "variants"), ({"planned_users": -5}, "planned_users"),
             ({"planned_users": 10**13}, "planned_users"), ({"variants": {"A": 1e308, "B": 1e308}}, "variants"),
             ({"mde": 0}, "mde"), ({"alpha": 0.5}, "alpha"), ({"name": "a\nb"}, "name"),
             ({"start": DAY0, "end": DAY0}, "end"), ({"variants": {"A": 1, "B": 0}}, "variants")]
    for change, field in cases:
        with pytest.raises(registry.ExperimentError) as info:
            registry.validate_experiment(**(ok | change))
        assert info.value.field == field, change
    exp = registry.validate_experiment(**(ok | {"guardrails": ["error_rate", "cost_per_call"]}))
    assert exp.guardrails == ("error_rate",)  # the primary metric is not its own guardrail
    assert registry.pick_control(["treatment", "Control"]) == "Control"
    assert registry.pick_control(["v2", "b"]) == "b"


def _arm(variant: str, p: float, lift: float, *, guardrails: tuple[tuple[str, float, float], ...] = ()
         ) -> ArmOutcome:
    primary = MetricOutcome("cost_per_call", p, lift, (lift - 0.05, lift + 0.05), lift, -1)
    return ArmOutcome(variant, primary, [MetricOutcome(name, gp, glift, (0, 0), glift, -1)
                                         for name, gp, glift in guardrails])


def _decide(arms: list[ArmOutcome], *, complete: bool = False, sequential: bool = True,
            users: dict[str, int] | None = None, srm_p: float = 0.5) -> Any:
    users = users or {"A": 5000, **{a.variant: 5000 for a in arms}}
    srm = SrmResult(1.0, 1, srm_p, srm_p < 0.001, users, {v: 5000.0 for v in users}, ())
    plan = Plan(complete=complete, users=sum(users.values()), users_needed=12_000.0, description="plan")
    return decide(primary_metric="cost_per_call", alpha=0.05, control="A", users=users, srm=srm, arms=arms,
                  plan=plan, decisions_valid=sequential or complete, sequential=sequential)


def test_verdict_rules() -> None:
    assert _decide([_arm("B", 0.001, -0.1)]).verdict == "ship"
    assert _decide([_arm("B", 0.001, -0.1)], srm_p=1e-5).verdict == "srm_invalid"
    assert _decide([_arm("B", 0.001, 0.1)]).verdict == "primary_regression"
    assert _decide([_arm("B", 0.001, -0.1, guardrails=(("error_rate", 0.001, 0.5),))]).verdict == \
        "guardrail_regression"
    # a guardrail that improved is no regression; Holm across guardrails
    assert _decide([_arm("B", 0.001, -0.1, guardrails=(("error_rate", 0.001, -0.5),))]).verdict == "ship"
    assert _decide([_arm("B", 0.001, -0.1, guardrails=(("error_rate", 0.03, 0.2), ("latency_ms", 0.9, 0.0)))
                    ]).verdict == "ship"
    running = _decide([_arm("B", 0.3, -0.01)])
    assert running.verdict == "keep_running" and "12,000 users" in running.reason
    assert _decide([_arm("B", 0.3, -0.01)], complete=True).verdict == "no_difference"
    # a fixed-horizon test decides nothing before its plan is complete
    assert _decide([_arm("B", 0.001, -0.1)], sequential=False).verdict == "keep_running"
    assert _decide([_arm("B", 0.001, -0.1)], sequential=False, complete=True).verdict == "ship"
    # minimum sample
    small = _decide([_arm("B", 0.001, -0.1)], users={"A": 50, "B": 60})
    assert small.verdict == "keep_running" and "minimum sample" in small.reason
    # several arms: the best significant arm wins; Holm across arms
    multi = _decide([_arm("B", 0.01, -0.05), _arm("C", 0.001, -0.2)])
    assert multi.verdict == "ship" and multi.winner == "C"
    assert _decide([_arm("B", 0.04, -0.05), _arm("C", 0.5, 0.0)]).verdict == "keep_running"  # 0.04 x 2 > 0.05


def test_analysis_without_traffic_keeps_running() -> None:
    exp = registry.validate_experiment(project_id="p", name="e", variants={"A": 1, "B": 1}, start=DAY0, now=DAY0)
    report = results.analyze(exp, results.window_for(exp, NOW), None, [], NOW)
    assert report.verdict.verdict == "keep_running" and report.rows[0].metric == "users"
    assert report.to_json()["results"][0]["p_value"] == 1.0


def test_moments_of_identical_users_are_not_significant() -> None:
    c = Moments.from_sums(100, 12_000.0, 1_440_000.0, 100.0, 100.0, 12_000.0)
    assert c.value == pytest.approx(120.0) and c.variance == pytest.approx(0.0, abs=1e-9)
    assert stats.delta_ratio(c, c).p_value == 1.0
