"""A/B results benchmark: the experiments job over 10M calls and 20 experiments (target: under 5 s).

What it does:

1. Builds the calls in a fresh temporary embedded database (``Store.open`` + every migration), entirely in SQL:
   ``INSERT INTO llm_calls SELECT ... FROM numbers(...)`` in chunks of 1M rows, in time order, so the A/B rollup's
   materialized view (which the job reads for percentiles and discovery) fills as ingest would; the views of the
   rollups the job does not read (1m, 1h, usage, cost) are dropped in this throwaway database to build faster.
   Traffic: 30 days ending now, 100,000 users (SHA-256 user hashes, skewed: heavy users make many calls), 85% of
   calls tagged with one of 20 experiments (the rest with none), 0.2% of calls without a user. Assignment is
   sticky per user and experiment (a hash against cumulative weights, as the SDK does): 14 experiments 50/50,
   4 with three arms, 2 with 90/10. Per-user heterogeneity (cost level, error propensity) makes users, not calls,
   the independent units. Planted effects: exp-0 B 10% cheaper, exp-1 B 8% slower, exp-2 B twice the errors,
   exp-3 B 15% more thumbs-up; the others are A/A. Then 3% of experiment calls get feedback (thumbs or a score),
   copied from the calls with ``INSERT INTO feedback SELECT ... FROM llm_calls``.
2. Registers the 20 experiments (half with a planned sample size, so both sequential tests run), and writes 29
   earlier daily looks per experiment (the previous days' ``ab_verdicts`` and ``ab_results`` rows, derived from a
   first analysis with users and z-statistics scaled by the day), so the timed runs also read history and compute
   group-sequential boundaries over 30 looks, as on day 30 of real experiments.
3. Times :func:`run_experiments_job` (discovery, one per-user scan of the calls for all 20 experiments, feedback,
   percentiles, history, statistics, verdicts, writes), median of ``--runs`` runs (default 5), then one run step
   by step, and prints the verdicts: the planted effects should be found, the A/A experiments should say no
   difference (or keep running).

Benches print, never assert. Run: ``.venv/bin/python bench/experiments.py`` (a few minutes on 2 cores, most of
it building the data; ``--calls 1000000`` for a quick look). The temporary directory is removed unless ``--keep``.
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from inferwatch_alerts.experiments import metrics, registry, results  # noqa: E402
from inferwatch_collector.migrations import migrate, target_for  # noqa: E402
from inferwatch_collector.settings import Settings  # noqa: E402
from inferwatch_collector.store import Store  # noqa: E402
from timing import fmt, timed  # noqa: E402

PROJECT = "bench"
TARGET_S = 5.0
USERS = 100_000
DAYS = 30
EXPERIMENTS = 20
#: Rollups the job does not read: their views are dropped in the bench's own database to build faster.
UNUSED_VIEWS = ("llm_calls_1m_mv", "llm_calls_1h_mv", "usage_1h_mv", "cost_1d_mv")


def layouts() -> list[dict[str, Any]]:
    """Variants, weights and planted multipliers (cost, latency, errors, thumbs-up) of each experiment."""
    out = []
    for i in range(EXPERIMENTS):
        if i in (16, 17):
            names, weights = ["control", "treatment"], [0.9, 0.1]
        elif i in (12, 13, 14, 15):
            names, weights = ["A", "B", "C"], [1 / 3, 1 / 3, 1 / 3]
        else:
            names, weights = ["A", "B"], [0.5, 0.5]
        k = len(names)
        cost, latency, errors, thumbs = [1.0] * k, [1.0] * k, [1.0] * k, [1.0] * k
        if i == 0:
            cost[1] = 0.9
        elif i == 1:
            latency[1] = 1.08
        elif i == 2:
            errors[1] = 2.0
        elif i == 3:
            thumbs[1] = 1.15
        cumulative = [sum(weights[: j + 1]) for j in range(k)]
        cumulative[-1] = 1.0
        out.append({"name": f"exp-{i}", "variants": names, "weights": weights, "cum": cumulative, "cost": cost,
                    "latency": latency, "errors": errors, "thumbs": thumbs})
    return out


# u(k): a uniform [0, 1) value per call and k, from a hash of the call number (deterministic, no state).
_U = "(cityHash64(n, {k}) % 1000000) / 1000000."
COLUMNS = ("project_id", "start_time", "end_time", "trace_id", "span_id", "service_name", "span_name", "model",
           "request_model", "response_model", "provider", "operation", "input_tokens", "output_tokens", "ttft_ms",
           "latency_ms", "finish_reason", "status", "error_type", "streamed", "refusal", "empty_response",
           "truncated", "tool_calls", "tool_call_failures", "feature", "prompt_template", "experiment", "variant",
           "user_hash", "cost_usd", "price_version")
GENERATE = f"""
INSERT INTO {{table}} ({', '.join(COLUMNS)})
SELECT {{project:String}}, start_time, start_time + toIntervalMillisecond(latency_ms),
    concat(lower(hex(cityHash64(n, 100))), lower(hex(cityHash64(n, 101)))), lower(hex(cityHash64(n, 102))), 'app',
    'chat gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini', 'openai', 'chat', input_tokens, output_tokens,
    if(streamed, toUInt32(100 + latency_ms / 10), 0), latency_ms, if(truncated, 'length', 'stop'),
    if(is_error, 'error', 'ok'), if(is_error, 'RateLimitError', ''), streamed, refusal, empty_response, truncated,
    tool_calls, tool_call_failures, 'assistant', 'answer', experiment, variant, user_hash, cost_usd, 'bench'
FROM (
    SELECT *,
        if(in_exp, arrayElement({{names:Array(Array(String))}}, ei + 1)[vi], '') AS variant,
        if(in_exp, arrayElement({{cost:Array(Array(Float64))}}, ei + 1)[vi], 1.) AS m_cost,
        if(in_exp, arrayElement({{latency:Array(Array(Float64))}}, ei + 1)[vi], 1.) AS m_latency,
        if(in_exp, arrayElement({{errors:Array(Array(Float64))}}, ei + 1)[vi], 1.) AS m_errors,
        toUInt32((300 + 6000 * pow({_U.format(k=7)}, 2)) * m_latency) AS latency_ms,
        {_U.format(k=8)} < 0.7 AS streamed,
        {_U.format(k=9)} < 0.02 * m_errors * user_error AS is_error,
        {_U.format(k=10)} < 0.01 AS refusal,
        {_U.format(k=11)} < 0.005 AS empty_response,
        {_U.format(k=12)} < 0.02 AS truncated,
        toUInt16(if({_U.format(k=13)} < 0.2, 1 + floor(3 * {_U.format(k=14)}), 0)) AS tool_calls,
        toUInt16(tool_calls > 0 AND {_U.format(k=15)} < 0.05) AS tool_call_failures,
        toUInt32(20 + floor(1500 * pow({_U.format(k=16)}, 2))) AS output_tokens,
        toUInt32(200 + floor(4000 * pow({_U.format(k=17)}, 2))) AS input_tokens,
        (0.0005 + 0.004 * pow({_U.format(k=6)}, 2)) * user_cost * m_cost AS cost_usd
    FROM (
        SELECT number + {{offset:UInt64}} AS n,
            {{t0:DateTime64(6, 'UTC')}} + toIntervalMicrosecond(toUInt64(
                (n + {_U.format(k=1)}) / {{total:UInt64}} * {{span_us:UInt64}})) AS start_time,
            toUInt32(floor({USERS} * pow({_U.format(k=5)}, 2))) AS ui,
            if({_U.format(k=4)} < 0.002, '', lower(hex(SHA256(concat('user-', toString(ui)))))) AS user_hash,
            {_U.format(k=2)} < 0.85 AS in_exp,
            toUInt32(floor({EXPERIMENTS} * {_U.format(k=3)})) AS ei,
            if(in_exp, concat('exp-', toString(ei)), '') AS experiment,
            (cityHash64(ui, ei, 'assign') % 1000000) / 1000000. AS position,
            arrayFirstIndex(c -> position < c, arrayElement({{cum:Array(Array(Float64))}}, ei + 1)) AS vi,
            0.4 + 1.2 * (cityHash64(ui, 'cost') % 1000) / 1000. AS user_cost,
            0.25 + 3 * pow((cityHash64(ui, 'errors') % 1000) / 1000., 2) AS user_error
        FROM numbers({{count:UInt64}})
    )
)"""

FEEDBACK = """
INSERT INTO {table} (project_id, feedback_id, created_at, updated_at, trace_id, span_id, user_hash, kind, name,
    value, label, comment, source, model, experiment, variant, prompt_template, feature)
SELECT project_id, lower(hex(cityHash64(trace_id, 'fb'))), toDateTime64(start_time, 3) + toIntervalSecond(30),
    toDateTime64(start_time, 3) + toIntervalSecond(30), trace_id, span_id, user_hash, kind, 'user_feedback',
    if(kind = 'thumbs', if((cityHash64(trace_id, 'up') % 1000) / 1000. < 0.6 * boost, 1., -1.),
       toFloat64(1 + cityHash64(trace_id, 'score') % 5)), '', '', 'bench', model, experiment, variant,
    prompt_template, feature
FROM (
    SELECT *, if(cityHash64(trace_id, 'kind') % 3 = 0, 'score', 'thumbs') AS kind,
        if(in_boost, {boost:Float64}, 1.) AS boost
    FROM (SELECT project_id, start_time, trace_id, span_id, user_hash, model, experiment, variant,
                 prompt_template, feature, experiment = {boosted:String} AND variant = 'B' AS in_boost
          FROM {calls} WHERE project_id = {project:String} AND experiment != '' AND user_hash != ''
              AND cityHash64(trace_id, 'feedback') % 100 < 3)
)"""


def build(store: Store, calls: int, chunk: int, now: datetime) -> float:
    """Insert ``calls`` synthetic calls in chunks and the feedback on 3% of them; returns the seconds taken."""
    specs = layouts()
    params: dict[str, Any] = {
        "project": PROJECT, "t0": now - timedelta(days=DAYS), "total": calls, "span_us": DAYS * 86_400_000_000,
        "names": [s["variants"] for s in specs], "cum": [s["cum"] for s in specs],
        "cost": [s["cost"] for s in specs],
        "latency": [s["latency"] for s in specs], "errors": [s["errors"] for s in specs],
    }
    sql = GENERATE.replace("{table}", store.table("llm_calls"))  # our own table name, not input
    started = time.monotonic()
    done = 0
    while done < calls:
        count = min(chunk, calls - done)
        store.command(sql, parameters={**params, "offset": done, "count": count})
        done += count
        elapsed = time.monotonic() - started
        print(f"  inserted {done:>12,} / {calls:,} calls  ({elapsed:6.1f} s, {done / elapsed:,.0f} calls/s)",
              flush=True)
    feedback = FEEDBACK.replace("{table}", store.table("feedback")).replace("{calls}", store.table("llm_calls"))
    store.command(feedback, parameters={"project": PROJECT, "boosted": "exp-3", "boost": specs[3]["thumbs"][1]})
    return time.monotonic() - started


def register(store: Store, now: datetime) -> None:
    """The 20 experiments: even ones with a planned sample size (group-sequential), odd ones without (mSPRT)."""
    for i, spec in enumerate(layouts()):
        primary = {1: "latency_ms", 3: "thumbs_up_rate"}.get(i, "cost_per_call")
        exp = registry.validate_experiment(
            project_id=PROJECT, name=spec["name"], variants=list(zip(spec["variants"], spec["weights"])),
            primary_metric=primary, start=now - timedelta(days=DAYS), planned_users=60_000 if i % 2 == 0 else None,
            source="cli", now=now - timedelta(days=DAYS))
        registry.save_experiment(store, exp, now=now - timedelta(days=DAYS))


def write_history(store: Store, now: datetime, days: int) -> None:
    """Earlier daily looks: today's analysis scaled to each previous day (users x d/30, z x sqrt(d/30))."""
    reports = results.analyze_project(store, PROJECT, registry.list_experiments(store, PROJECT), now)
    for back in range(days, 0, -1):
        share = (DAYS - back) / DAYS
        at = now - timedelta(days=back)
        scaled = []
        for report in reports:
            window = results.window_for(report.experiment, at)
            rows = [replace(row, details={**row.details, **({"z": float(row.details["z"]) * math.sqrt(share)}
                                                                    if "z" in row.details else {})})
                    for row in report.rows]
            users = {v: int(n * share) for v, n in report.users.items()}
            scaled.append(replace(report, window=window, computed_at=at, rows=rows, users=users))
        results.save_reports(store, scaled)




def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000_000, help="calls to generate (default 10M)")
    parser.add_argument("--chunk", type=int, default=1_000_000, help="calls per INSERT (default 1M)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of the job (median is reported)")
    parser.add_argument("--history-days", type=int, default=DAYS - 1, help="earlier daily looks to write")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="inferwatch-bench-experiments-"))
    settings = Settings(data_dir=tmp / "data", clickhouse_url="")
    store = Store.open(settings)
    try:
        migrate(store, target_for(settings, store))
        for view in UNUSED_VIEWS:
            store.command(f"DROP VIEW IF EXISTS {store.table(view)}")
        now = datetime.now(UTC).replace(microsecond=0)
        print(f"building {args.calls:,} calls over {DAYS} days, {EXPERIMENTS} experiments, {USERS:,} users in "
              f"{tmp} ...", flush=True)
        build_s = build(store, args.calls, args.chunk, now)
        calls, in_exp, feedback = store.query(
            f"SELECT count(), countIf(experiment != ''), (SELECT count() FROM {store.table('feedback')}) "
            f"FROM {store.table('llm_calls')}").result_rows[0]
        print(f"built in {build_s:.1f} s: {calls:,} calls ({in_exp:,} in experiments), {feedback:,} feedback rows",
              flush=True)
        register(store, now)
        started = time.perf_counter()
        write_history(store, now, args.history_days)
        print(f"wrote {args.history_days} earlier daily looks per experiment in "
              f"{time.perf_counter() - started:.1f} s", flush=True)

        times, details = timed(lambda: results.run_experiments_job(store, now), args.runs)
        print(f"run_experiments_job: {fmt(times)}   ({details})", flush=True)
        print("one run, step by step (information):", flush=True)
        experiments = registry.list_experiments(store, PROJECT)
        windows = {e.name: results.window_for(e, now) for e in experiments}
        steps: list[tuple[str, Any]] = [
            ("discovery (A/B rollup)", lambda: registry.discover(store, now)),
            ("per-user scan + feedback + percentiles", lambda: metrics.fetch(
                store, PROJECT, {n: (w.start, w.data_until) for n, w in windows.items()})),
            ("history of daily looks", lambda: results.load_history(store, PROJECT, windows)),
        ]
        outputs = {}
        for name, step in steps:
            step_times, outputs[name] = timed(step, 1)
            print(f"  {name:44} {fmt(step_times)}", flush=True)
        data, history = outputs["per-user scan + feedback + percentiles"], outputs["history of daily looks"]
        step_times, reports = timed(lambda: [
            results.analyze(e, windows[e.name], data.get(e.name), history.get(e.name, []), now)
            for e in experiments], 1)
        print(f"  {'statistics and verdicts (Python)':44} {fmt(step_times)}", flush=True)
        step_times, _ = timed(lambda: results.save_reports(store, reports), 1)
        print(f"  {'writing ab_results and ab_verdicts':44} {fmt(step_times)}", flush=True)

        print()
        print(f"{'experiment':10} {'users':>8} {'method':13} {'verdict':22} reason")
        for report in sorted(reports, key=lambda r: int(r.experiment.name.split("-")[1])):
            print(f"{report.experiment.name:10} {sum(report.users.values()):>8,} "
                  f"{report.details['sequential_method']!s:13} {report.verdict.verdict:22} "
                  f"{report.verdict.reason[:150]}")
        median = statistics.median(times)
        print()
        print(f"{'target':48} {'goal':10} {'measured (median [min-max])':32} result")
        print(f"{f'experiments job, {calls:,} calls, {EXPERIMENTS} experiments':48} {'< 5 s':10} {fmt(times):32} "
              f"{'PASS' if median < TARGET_S else 'FAIL'}")
        return 0
    finally:
        store.close()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
