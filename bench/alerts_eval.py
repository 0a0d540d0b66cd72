"""Alert evaluation benchmark: one evaluation cycle of every default rule and drift detector over 10M calls
(target: under 2 s).

What it does:

1. Builds the calls in a fresh temporary embedded database (``Store.open`` + every migration), entirely in SQL:
   ``INSERT INTO llm_calls SELECT ... FROM numbers(...)`` in chunks of 1M rows, in time order, so the
   materialized views fill ``llm_calls_1m`` and ``llm_calls_1h`` exactly as ingest would. The views of rollups
   alert rules do not read (``usage_1h``, ``ab_rollup_1h``, ``cost_1d``) are dropped in this throwaway database
   to build faster. The traffic: 15 days ending at the last whole hour (the longest look-back of the default
   rules is the 14 days of the latency-creep detectors), 4 projects (one with 55% of the calls), 12 models per
   project with Zipf-like weights (48 series per rule), lognormal TTFT, latency and output tokens, 2% errors,
   1% refusals, 0.5% empty, 1% truncated, tool calls with 3% failures; plus 200,000 thumbs votes in
   ``feedback``.
2. Times :func:`inferwatch_alerts.evaluate.evaluate` with the packaged default rules at an evaluation time on
   the hour, with every rule due (``force``): the 4 threshold/baseline rules on the 1-minute rollup and the 8
   hourly drift detectors (1-hour rollup, raw-table length histograms, feedback). States are kept in memory (a
   first cycle writes every series' first state, which only happens once in a deployment). Median of
   ``--runs`` runs (default 5). For information: a cycle through ``alert_state`` (the scheduler's path), the
   ordinary every-minute cycle (threshold rules only), and each rule's own read.
3. Prints a table and PASS/FAIL against the target.

Benches print, never assert. Run: ``.venv/bin/python bench/alerts_eval.py`` (a few minutes on 2 cores, most of
it building the data; ``--calls 1000000`` for a quick look). The temporary directory is removed at the end
unless ``--keep``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from inferwatch_alerts.alert_state import DbBackend, MemoryBackend
from inferwatch_alerts.evaluate import evaluate, window_end
from inferwatch_alerts.observations import observe
from inferwatch_alerts.rules import load_rules
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from timing import fmt as shared_fmt, timed  # noqa: E402

TARGET_S = 2.0
DAYS = 15
PROJECTS = ("shop", "support", "search", "internal")
PROJECT_SHARE = (0.55, 0.2, 0.15, 0.1)
MODELS = 12
VOTES = 200_000
UNUSED_VIEWS = ("usage_1h_mv", "ab_rollup_1h_mv", "cost_1d_mv")
INSERT_SETTINGS = {"optimize_on_insert": 0}

_U = "(cityHash64(n, {k}) % 1000000) / 1000000."


def _lognormal(median: str, sigma: float, k: int) -> str:
    z = f"sqrt(-2 * log(greatest({_U.format(k=k)}, 1e-9))) * cos(2 * pi() * {_U.format(k=k + 50)})"
    return f"{median} * exp({sigma} * {z})"


GENERATE = f"""
INSERT INTO {{table}} (project_id, start_time, end_time, trace_id, span_id, service_name, span_name, model,
    request_model, response_model, provider, operation, input_tokens, output_tokens, ttft_ms, latency_ms,
    finish_reason, status, error_type, streamed, refusal, empty_response, truncated, tool_calls,
    tool_call_failures, feature, cost_usd, price_version)
SELECT project_id, start_time, start_time + toIntervalMillisecond(latency_ms),
    concat(lower(hex(cityHash64(n, 100))), lower(hex(cityHash64(n, 101)))), lower(hex(cityHash64(n, 102))),
    'app', concat('chat ', model), model, model, model, 'openai', 'chat', 600, output_tokens, ttft_ms, latency_ms,
    if(truncated, 'length', 'stop'), if(is_error, 'error', 'ok'), if(is_error, 'RateLimitError', ''), true,
    refusal, empty_response, truncated, 1, tool_failure, 'chat', 0.000002 * (600 + 4 * output_tokens), 'bench'
FROM (
    SELECT number + {{offset:UInt64}} AS n,
        {{t0:DateTime64(6, 'UTC')}} + toIntervalMicrosecond(toUInt64(n * {{step_us:Float64}})) AS start_time,
        multiIf({_U.format(k=1)} < {PROJECT_SHARE[0]}, '{PROJECTS[0]}',
                {_U.format(k=1)} < {sum(PROJECT_SHARE[:2])}, '{PROJECTS[1]}',
                {_U.format(k=1)} < {sum(PROJECT_SHARE[:3])}, '{PROJECTS[2]}', '{PROJECTS[3]}') AS project_id,
        concat('model-', toString(toUInt32(floor({MODELS} * pow({_U.format(k=2)}, 2))))) AS model,
        toUInt32(greatest(1, {_lognormal('450', 0.4, 3)})) AS ttft_ms,
        toUInt32(greatest(toFloat64(ttft_ms) + 1, {_lognormal('1800', 0.35, 4)})) AS latency_ms,
        toUInt32(greatest(0, {_lognormal('220', 0.6, 5)})) AS output_tokens,
        {_U.format(k=6)} < 0.02 AS is_error,
        {_U.format(k=7)} < 0.01 AS refusal,
        {_U.format(k=8)} < 0.005 AS empty_response,
        {_U.format(k=9)} < 0.01 AS truncated,
        {_U.format(k=10)} < 0.03 AS tool_failure
    FROM numbers({{count:UInt64}})
)"""

VOTES_SQL = f"""
INSERT INTO {{table}} (project_id, feedback_id, created_at, trace_id, span_id, user_hash, kind, name, value,
    label, source, model)
SELECT multiIf({_U.format(k=1)} < {PROJECT_SHARE[0]}, '{PROJECTS[0]}',
               {_U.format(k=1)} < {sum(PROJECT_SHARE[:2])}, '{PROJECTS[1]}',
               {_U.format(k=1)} < {sum(PROJECT_SHARE[:3])}, '{PROJECTS[2]}', '{PROJECTS[3]}'),
    concat('vote-', toString(n)),
    {{t0:DateTime64(3, 'UTC')}} + toIntervalMillisecond(toUInt64(n * {{step_ms:Float64}})), '', '', '', 'thumbs',
    'helpful', if({_U.format(k=11)} < 0.1, -1, 1), '', 'end_user',
    concat('model-', toString(toUInt32(floor({MODELS} * pow({_U.format(k=2)}, 2)))))
FROM (SELECT number AS n FROM numbers({{count:UInt64}}))"""


def build(store: Store, calls: int, chunk: int, end: datetime) -> float:
    """Insert ``calls`` calls (and the votes) in chunks, printing progress; returns the seconds taken."""
    for view in UNUSED_VIEWS:
        store.command(f"DROP VIEW IF EXISTS {store.table(view)}")
    t0 = end - timedelta(days=DAYS)
    step_us = DAYS * 86_400_000_000 / calls
    sql = GENERATE.replace("{table}", store.table("llm_calls"))
    started = time.monotonic()
    done = 0
    while done < calls:
        count = min(chunk, calls - done)
        store.command(sql, parameters={"offset": done, "count": count, "t0": t0, "step_us": step_us},
                      settings=INSERT_SETTINGS)
        done += count
        elapsed = time.monotonic() - started
        print(f"  inserted {done:>12,} / {calls:,} calls  ({elapsed:6.1f} s, {done / elapsed:,.0f} calls/s)",
              flush=True)
    store.command(VOTES_SQL.replace("{table}", store.table("feedback")),
                  parameters={"t0": t0, "step_ms": DAYS * 86_400_000 / VOTES, "count": VOTES})
    return time.monotonic() - started



def fmt(times: list[float]) -> str:
    return shared_fmt(times, 7)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000_000, help="calls to generate (default 10M)")
    parser.add_argument("--chunk", type=int, default=1_000_000, help="calls per INSERT (default 1M)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs (the median is reported)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="inferwatch-bench-alerts-"))
    store = Store.open(Settings(data_dir=tmp / "data", clickhouse_url=""))
    try:
        migrate(store, target_for(store.settings, store))
        end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        print(f"building {args.calls:,} calls over {DAYS} days ending {end:%Y-%m-%d %H:%M} UTC in {tmp}")
        built = build(store, args.calls, args.chunk, end)
        rollup_rows = {t: store.query(f"SELECT count() FROM {t}").result_rows[0][0]
                       for t in ("llm_calls", "llm_calls_1m", "llm_calls_1h", "feedback")}
        print(f"built in {built:.1f} s: " + ", ".join(f"{t} {n:,} rows" for t, n in rollup_rows.items()))

        rules = load_rules()
        at = end + timedelta(seconds=rules.evaluation_offset_s)  # the scheduler's tick just after the hour
        assert window_end(at, rules.evaluation_offset_s) == end

        def full_cycle() -> Any:
            return evaluate(store, rules, at, backend=MemoryBackend(), force=True)

        full_cycle()  # warm-up: first reads of each table's parts
        full_times, result = timed(full_cycle, args.runs)
        series = result.series
        db_times, _ = timed(lambda: evaluate(store, rules, at, backend=DbBackend(store), force=True), args.runs)
        minute_at = at + timedelta(minutes=7)  # not on the hour: only the every-minute rules are due
        minute_times, minute = timed(lambda: evaluate(store, rules, minute_at, backend=MemoryBackend()),
                                     args.runs)
        print()
        print(f"{'evaluation (default rules)':58} {'median':>9}  [min-max] over {args.runs} runs")
        print(f"{'  full cycle: %d rules, %d series, in memory' % (result.rules, series):58} {fmt(full_times)}")
        print(f"{'  full cycle through alert_state/alert_events':58} {fmt(db_times)}")
        print(f"{'  every-minute cycle: %d rules (threshold/baseline)' % minute.rules:58} {fmt(minute_times)}")
        print()
        print(f"{'per rule (its read and test only)':58} {'median':>9}")
        for rule in rules.rules:
            times, observed = timed(lambda rule=rule: observe(store, rule, end), args.runs)
            median = statistics.median(times)
            print(f"  {rule.id:32} {rule.signal.name:22} {len(observed):3} series {median:7.3f} s")
        findings = sorted({(e.rule_id, e.state) for e in result.events if e.state != "ok"})
        print(f"\ntransitions in the measured cycle (synthetic traffic is stationary): {findings or 'none'}")
        median = statistics.median(full_times)
        verdict = "PASS" if median < TARGET_S else "FAIL"
        print(f"\n{verdict}: full evaluation cycle over {args.calls:,} calls {median:.3f} s "
              f"(target < {TARGET_S} s)")
        return 0
    finally:
        store.close()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
