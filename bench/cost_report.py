"""Cost report benchmark: report generation over 10M calls, from the ``cost_1d`` rollup (target: under 5 s).

What it does:

1. Builds the calls in a fresh temporary embedded database (``Store.open`` + every migration), entirely in SQL:
   ``INSERT INTO llm_calls SELECT ... FROM numbers(...)`` in chunks of 1M rows, in time order, so the
   materialized view fills ``cost_1d`` (and its projections) exactly as ingest would. To build faster, the views
   of the rollups reports do not read (1m, 1h, usage, A/B) are dropped in this throwaway database, and inserts
   skip the per-insert pre-merge of equal keys (``optimize_on_insert = 0``: background merges do it, and reports
   ``sum()`` anyway). The traffic is synthetic but shaped like real traffic: 60 days ending at midnight UTC today
   with linear growth; 10 features (skewed) with 2 prompt templates each, each feature served by its own primary
   model (80%), a fallback (15%) or any model (5%); 20 models in all (19 from the bundled price table, priced
   with their table rates; one self-hosted model without a price, flagged ``unpriced``); 50,000 users (SHA-256
   user hashes, skewed); prompt caching on 35% of calls, reasoning tokens on reasoning models, 2% errors, 0.5%
   missing usage and 3% answers from the application's cache (cost avoided). Progress is printed per chunk.
2. Times :func:`compute_cost_report` for yesterday (``day``) and for the last whole month (``month``, so the
   month and its previous period cover the 60 days: the largest report), once per breakdown dimension, median of
   ``--runs`` runs (default 5), plus, for information, the report with every dimension, storing it
   (``save_cost_report``), the daily job for the project, and a what-if (mix + cascade) on that month.
3. Prints a table and PASS/FAIL against the target: the slowest median single-dimension report under 5 s.

Benches print, never assert. Run: ``.venv/bin/python bench/cost_report.py`` (about 2-4 minutes on 2 cores;
``--calls 1000000`` for a quick look). The temporary directory is removed at the end unless ``--keep``.
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

from inferwatch_collector.cost.reports import (
    DIMENSIONS,
    compute_cost_report,
    run_cost_report_job,
    save_cost_report,
)
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.cost.price_table import PriceTable, bundled_table
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_collector.cost.whatif import run_whatif
from timing import fmt, timed  # noqa: E402

PROJECT = "bench"
TARGET_S = 5.0
MODELS = ("gpt-4o-mini", "gpt-4.1-mini", "gpt-4o", "claude-haiku-4-5", "gemini-2.5-flash", "gpt-4.1-nano",
          "claude-sonnet-4-5", "gpt-5-mini", "o4-mini", "gemini-2.0-flash", "gpt-4.1", "mistral-small",
          "claude-3-5-haiku", "gemini-2.5-pro", "gpt-5", "mistral-large", "o3", "groq/llama-3.3-70b-versatile",
          "claude-opus-4-1", "acme-internal-llm")
REASONING = frozenset(("gpt-5-mini", "o4-mini", "gpt-5", "o3"))
USERS = 50_000
FEATURES = 10
DAYS = 60
#: Rollups the reports do not read: their views are dropped in the bench's own database to build faster.
UNUSED_VIEWS = ("llm_calls_1m_mv", "llm_calls_1h_mv", "usage_1h_mv", "ab_rollup_1h_mv")
#: Rows of one insert are not pre-merged by key (background merges do it; reports sum() either way).
INSERT_SETTINGS = {"optimize_on_insert": 0}

# Column order of the INSERT; the SELECT below yields the same order.
COLUMNS = ("project_id", "start_time", "end_time", "trace_id", "span_id", "service_name", "span_name", "model",
           "request_model", "response_model", "provider", "operation", "input_tokens", "output_tokens",
           "cache_read_tokens", "reasoning_tokens", "ttft_ms", "latency_ms", "finish_reason", "status",
           "error_type", "streamed", "usage_missing", "feature", "prompt_template", "prompt_version", "user_hash",
           "cost_usd", "price_version", "cost_input_usd", "cost_cache_read_usd", "cost_output_usd",
           "cost_reasoning_usd", "cache_savings_usd", "unpriced", "cache_hit", "cost_avoided_usd")

# u(k): a uniform [0, 1) value per call and k, from a hash of the call number (deterministic, no state).
_U = "(cityHash64(n, {k}) % 1000000) / 1000000."
GENERATE = f"""
INSERT INTO {{table}} ({', '.join(COLUMNS)})
SELECT {{project:String}}, start_time, start_time + toIntervalMillisecond(latency_ms),
    concat(lower(hex(cityHash64(n, 100))), lower(hex(cityHash64(n, 101)))), lower(hex(cityHash64(n, 102))), 'app',
    concat('chat ', model), model, model, model, provider, 'chat', input_tokens, output_tokens, cache_read_tokens,
    reasoning_tokens, toUInt32(least(latency_ms, 200 + latency_ms / 10)), latency_ms,
    if(is_error, '', 'stop'), if(is_error, 'error', 'ok'), if(is_error, 'RateLimitError', ''), true,
    usage_missing, feature, prompt_template, '1', user_hash,
    if(cache_hit, 0., charged), {{version:String}}, if(cache_hit, 0., c_in), if(cache_hit, 0., c_read),
    if(cache_hit, 0., c_out), if(cache_hit, 0., c_reason), if(cache_hit, 0., savings), unpriced, cache_hit,
    if(cache_hit, charged, 0.)
FROM (
    SELECT *, c_in + c_read + c_out + c_reason AS charged
    FROM (
        SELECT *, priced * (input_tokens - cache_read_tokens) * r_in AS c_in,
            priced * cache_read_tokens * r_read AS c_read,
            priced * (output_tokens - reasoning_tokens) * r_out AS c_out,
            priced * reasoning_tokens * r_reason AS c_reason,
            priced * cache_read_tokens * (r_in - r_read) AS savings
        FROM (
            SELECT n, start_time, model, provider, feature, prompt_template, user_hash, latency_ms, is_error,
                usage_missing, cache_hit, unpriced, input_tokens, output_tokens, cache_read_tokens,
                reasoning_tokens, r_in, r_read, r_out, r_reason,
                if(unpriced OR usage_missing, 0., 1.) AS priced
            FROM (
                SELECT number + {{offset:UInt64}} AS n,
                    {{t0:DateTime64(6, 'UTC')}} + toIntervalMicrosecond(toUInt64(
                        sqrt((n + {_U.format(k=1)}) / {{total:UInt64}}) * {{span_us:UInt64}})) AS start_time,
                    if({_U.format(k=2)} < 0.05, toUInt32(floor({len(MODELS)} * {_U.format(k=14)})),
                       (fi * 2 + if({_U.format(k=2)} < 0.8, 0, 1)) % {len(MODELS)}) + 1 AS mi,
                    arrayElement({{models:Array(String)}}, mi) AS model,
                    arrayElement({{providers:Array(String)}}, mi) AS provider,
                    arrayElement({{r_input:Array(Float64)}}, mi) AS r_in,
                    arrayElement({{r_cache_read:Array(Float64)}}, mi) AS r_read,
                    arrayElement({{r_output:Array(Float64)}}, mi) AS r_out,
                    arrayElement({{r_reasoning:Array(Float64)}}, mi) AS r_reason,
                    toUInt32(floor({FEATURES} * pow({_U.format(k=3)}, 1.5))) AS fi,
                    concat('feature-', toString(fi)) AS feature,
                    concat('template-', toString(fi * 2 + cityHash64(n, 4) % 2)) AS prompt_template,
                    lower(hex(SHA256(concat('user-', toString(
                        toUInt32(floor({USERS} * pow({_U.format(k=5)}, 2)))))))) AS user_hash,
                    toUInt32(200 + floor(8000 * pow({_U.format(k=6)}, 3))) AS input_tokens,
                    if({_U.format(k=7)} < 0.35, toUInt32(input_tokens * 0.8 * {_U.format(k=8)}), 0)
                        AS cache_read_tokens,
                    toUInt32(20 + floor(1500 * pow({_U.format(k=9)}, 2))) AS output_tokens,
                    if(arrayElement({{reasoning:Array(UInt8)}}, mi) = 1, toUInt32(output_tokens * 0.6), 0)
                        AS reasoning_tokens,
                    toUInt32(300 + floor(6000 * pow({_U.format(k=13)}, 2))) AS latency_ms,
                    {_U.format(k=10)} < 0.02 AS is_error,
                    {_U.format(k=11)} < 0.005 AS usage_missing,
                    {_U.format(k=12)} < 0.03 AS cache_hit,
                    arrayElement({{unpriced:Array(UInt8)}}, mi) = 1 AS unpriced
                FROM numbers({{count:UInt64}})
            )
        )
    )
)"""


def model_params(table: PriceTable) -> dict[str, Any]:
    """Per-model query parameters: name, provider, base rates in USD per token, reasoning and unpriced flags."""
    params: dict[str, list[Any]] = {key: [] for key in ("models", "providers", "r_input", "r_cache_read",
                                                        "r_output", "r_reasoning", "reasoning", "unpriced")}
    for name in MODELS:
        price = table.lookup(name)
        rates = price.base if price else None
        params["models"].append(name)
        params["providers"].append(price.provider if price else "self-hosted")
        for key, kind in (("r_input", "input"), ("r_cache_read", "cache_read"), ("r_output", "output"),
                          ("r_reasoning", "reasoning")):
            params[key].append(getattr(rates, kind) * rates.unit / 1e18 if rates else 0.0)
        params["reasoning"].append(1 if name in REASONING else 0)
        params["unpriced"].append(0 if price else 1)
    return params


def build(store: Store, calls: int, chunk: int, today: datetime) -> float:
    """Insert ``calls`` synthetic calls in chunks, printing progress; returns the seconds taken."""
    table = bundled_table()
    t0 = today - timedelta(days=DAYS)
    params: dict[str, Any] = {"project": PROJECT, "version": table.version, "t0": t0, "total": calls,
                              "span_us": DAYS * 86_400_000_000, **model_params(table)}
    sql = GENERATE.replace("{table}", store.table("llm_calls"))  # our own table name, not input
    started = time.monotonic()
    done = 0
    while done < calls:
        count = min(chunk, calls - done)
        store.command(sql, parameters={**params, "offset": done, "count": count}, settings=INSERT_SETTINGS)
        done += count
        elapsed = time.monotonic() - started
        print(f"  inserted {done:>12,} / {calls:,} calls  ({elapsed:6.1f} s, {done / elapsed:,.0f} calls/s)",
              flush=True)
    return time.monotonic() - started




def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000_000, help="calls to generate (default 10M)")
    parser.add_argument("--chunk", type=int, default=1_000_000, help="calls per INSERT (default 1M)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per report (median is reported)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="inferwatch-bench-costs-"))
    settings = Settings(data_dir=tmp / "data", clickhouse_url="")
    store = Store.open(settings)
    try:
        migrate(store, target_for(settings, store))
        for view in UNUSED_VIEWS:
            store.command(f"DROP VIEW IF EXISTS {store.table(view)}")
        now = datetime.now(UTC)
        today = datetime(now.year, now.month, now.day, tzinfo=UTC)
        yesterday = (today - timedelta(days=1)).date()
        # day: yesterday; month: the last whole month (a month to date early in a month would be a few days)
        last_month_end = today.date().replace(day=1) - timedelta(days=1)
        dates = {"day": yesterday, "month": last_month_end}
        print(f"building {args.calls:,} calls over {DAYS} days ending {yesterday} in {tmp} ...", flush=True)
        build_s = build(store, args.calls, args.chunk, today)
        raw, rollup = (store.query(f"SELECT count() FROM {store.table(name)}").result_rows[0][0]
                       for name in ("llm_calls", "cost_1d"))
        parts = store.query("SELECT count() FROM system.parts WHERE database = {db:String} AND table = 'cost_1d' "
                            "AND active", {"db": store.database}).result_rows[0][0]
        print(f"built in {build_s:.1f} s: llm_calls {raw:,} rows; cost_1d {rollup:,} rows in {parts} active parts",
              flush=True)

        results: list[tuple[str, str, list[float]]] = []
        for period in ("day", "month"):
            for dim in DIMENSIONS:
                times, report = timed(compute_cost_report, args.runs, store, PROJECT, period, dates[period],
                                      by=[dim], now=now)
                results.append((period, dim, times))
                b = report.breakdown(dim)
                print(f"  {period:5} by {dim:15} {fmt(times)}   {report.totals.calls:>10,} calls  "
                      f"${report.totals.cost_usd:>12,.2f}  {b.keys_total:>6,} keys", flush=True)

        print("information (not targets):", flush=True)
        info: list[tuple[str, list[float]]] = []
        for period in ("day", "month"):
            times, full = timed(compute_cost_report, 1, store, PROJECT, period, dates[period],
                                by=tuple(DIMENSIONS), now=now)
            info.append((f"{period} report, all 6 dimensions", times))
            times, _ = timed(save_cost_report, 1, store, full)
            info.append((f"save_cost_report ({period})", times))
            if period == "day":
                forecast = full.forecast  # this month's, as of yesterday
        times, job = timed(run_cost_report_job, 1, store, now)
        info.append(("run_cost_report_job (1 project, day + month)", times))
        request = {"period": "month", "date": last_month_end.isoformat(),
                   "mix": [{"feature": "feature-0", "share": 0.7, "to_model": "gpt-4o-mini"}],
                   "cascade": [{"feature": "feature-1", "cheap_model": "gpt-4.1-nano", "escalation_rate": 0.2}]}
        times, whatif = timed(run_whatif, args.runs, store, PROJECT, request, bundled_table(), now=now)
        info.append(("what-if, month to date (mix + cascade)", times))
        for name, times in info:
            print(f"  {name:48} {fmt(times)}", flush=True)
        month_end = "-" if forecast.month_end_usd is None else f"${forecast.month_end_usd:,.2f}"
        print(f"  month-end forecast {forecast.month} as of {yesterday}: {month_end} ({forecast.method}); "
              f"job saved {len(job.saved)} reports, failed {len(job.failed)}")
        print(f"  what-if: baseline ${whatif.baseline_cost_usd:,.2f} -> scenario ${whatif.scenario_cost_usd:,.2f} "
              f"({whatif.delta_pct:+.1%}); observed ${whatif.observed_cost_usd:,.2f}")

        worst = max(results, key=lambda item: statistics.median(item[2]))
        worst_s = statistics.median(worst[2])
        print()
        print(f"{'target':48} {'goal':10} {'measured (median [min-max])':32} result")
        print(f"{f'cost report, {raw:,} calls, slowest dimension':48} {'< 5 s':10} "
              f"{fmt(worst[2]) + f' ({worst[0]} by {worst[1]})':32} {'PASS' if worst_s < TARGET_S else 'FAIL'}")
        return 0
    finally:
        store.close()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
