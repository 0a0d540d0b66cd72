"""Dashboard benchmark: every page's API time over 10M calls (target: each page's data under 1 s).

What it does:

1. Builds the calls in a fresh temporary embedded database (``Store.open`` + every migration), entirely in SQL:
   ``INSERT INTO llm_calls SELECT ... FROM numbers(...)`` in chunks of 1M rows, in time order, so every
   materialized view (``llm_calls_1m``, ``llm_calls_1h``, ``usage_1h``, ``ab_rollup_1h``, ``cost_1d``,
   ``llm_calls_1d``) fills as ingest would; none is dropped, since the pages read all of them. Traffic: 60 days ending now with linear
   growth; 20 models from the bundled price table (one self-hosted, unpriced) over 6 providers; 10 features
   (skewed), 2 prompt templates each (20), each feature on its own primary model (80%), a fallback (15%) or any
   model (5%); 50,000 users (SHA-256 hashes, skewed); 3 A/B experiments on 3 features (sticky per user,
   50/50); lognormal TTFT per model, decode speed per model, 90% streamed; 2% errors, 1% refusals, 0.5% empty,
   1% truncated, tool calls on 30% with 3% failures, 0.5% missing usage, 3% application-cache hits, prompt
   caching on 35%; costs priced with the table's rates. Then, as the pages need them: 3% of calls get thumbs
   feedback (copied from the calls), retrieval and tool spans plus redacted prompt text for the newest 20,000
   calls, alert state/history/notifications, scheduler job runs, a silence, two budgets, and the experiments
   registered and analysed once by the real job (``run_experiments_job``).
2. Serves the collector app (``create_app`` on that store, uvicorn in a thread on a free 127.0.0.1 port) with a
   ``read`` + ``prompts:read`` key, as the dashboard sees it.
3. For each page (Overview, Cost, Latency, Quality, Experiments, Alerts, Traces, Capacity) issues exactly the
   GETs the page makes on a first (uncached) render, in the page's order, through the dashboard's own
   :class:`~inferwatch_dashboard.api.ApiClient`: the sidebar's two (``whoami``, ``facets``, which every page
   run makes first) and then the page's own, with the page's default widget values (Cost: by model, month to
   date; Quality: 7-day baseline; Capacity: llama-3-70b fp16 on 80 GiB at $3.50/h; Traces: the newest calls,
   then the first result's trace and prompt text). Streamlit runs a page top to bottom in one thread, so the
   requests are sequential and a page's API time is their sum. A request the page repeats with identical
   parameters is made once (``st.cache_data`` answers the repeat). Three views: the default range (last 24
   hours), the last 30 days, and the last 30 days filtered to one feature. Median of ``--runs`` runs (default
   5) after one warm-up run of all pages.
4. Prints one line per page and view (median seconds, [min-max], the slowest request with its median and the
   table that answered when the API names one) and PASS/FAIL against 1 s per page, then every request of each
   failing page and the eight slowest requests overall.

Benches print, never assert. Run: ``.venv/bin/python bench/dashboard.py`` (10M calls; several minutes on 2
cores, most of it building the data) or ``--quick`` (1M calls). The temporary directory is removed at the end
unless ``--keep``.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "dashboard"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import uvicorn  # noqa: E402

from inferwatch_collector.auth import KeyStore  # noqa: E402
from inferwatch_collector.cost.budgets import create_budget, validate_budget  # noqa: E402
from inferwatch_collector.migrations import migrate, target_for  # noqa: E402
from inferwatch_collector.cost.price_table import PriceTable, bundled_table  # noqa: E402
from inferwatch_collector.settings import Settings  # noqa: E402
from inferwatch_collector.store import Store  # noqa: E402
from inferwatch_dashboard import timerange  # noqa: E402
from inferwatch_dashboard.api import ApiClient, ApiError  # noqa: E402
from inferwatch_dashboard.timerange import Window  # noqa: E402
from inferwatch_server.app import create_app  # noqa: E402
from timing import fmt  # noqa: E402

PROJECT = "bench"
TARGET_S = 1.0
DAYS = 60
USERS = 50_000
FEATURES = 10
MODELS = ("gpt-4o-mini", "gpt-4.1-mini", "gpt-4o", "claude-haiku-4-5", "gemini-2.5-flash", "gpt-4.1-nano",
          "claude-sonnet-4-5", "gpt-5-mini", "o4-mini", "gemini-2.0-flash", "gpt-4.1", "mistral-small",
          "claude-3-5-haiku", "gemini-2.5-pro", "gpt-5", "mistral-large", "o3", "groq/llama-3.3-70b-versatile",
          "claude-opus-4-1", "acme-internal-llm")
REASONING = frozenset(("gpt-5-mini", "o4-mini", "gpt-5", "o3"))
#: feature index -> experiment run on that feature's calls (variants control/treatment, sticky per user)
EXPERIMENTS = {0: "exp-short-prompt", 1: "exp-model-swap", 3: "exp-rerank"}
FILTER_FEATURE = "feature-0"
INSERT_SETTINGS = {"optimize_on_insert": 0}

COLUMNS = ("project_id", "start_time", "end_time", "trace_id", "span_id", "service_name", "span_name", "model",
           "request_model", "response_model", "provider", "operation", "input_tokens", "output_tokens",
           "cache_read_tokens", "reasoning_tokens", "ttft_ms", "latency_ms", "decode_tps", "finish_reason",
           "status", "error_type", "streamed", "usage_missing", "refusal", "empty_response", "truncated",
           "tool_calls", "tool_call_failures", "response_chars", "feature", "prompt_template", "prompt_version",
           "experiment", "variant", "user_hash", "cost_usd", "price_version", "cost_input_usd",
           "cost_cache_read_usd", "cost_output_usd", "cost_reasoning_usd", "cache_savings_usd", "unpriced",
           "cache_hit", "cost_avoided_usd")

_U = "(cityHash64(n, {k}) % 1000000) / 1000000."


def _z(k: int) -> str:
    """A standard normal value per call (Box-Muller on two hashes)."""
    return f"(sqrt(-2 * log(greatest({_U.format(k=k)}, 1e-9))) * cos(2 * pi() * {_U.format(k=k + 50)}))"


_EXPERIMENT_OF = "multiIf(" + ", ".join(f"fi = {fi}, '{name}'" for fi, name in EXPERIMENTS.items()) + ", '')"
GENERATE = f"""
INSERT INTO {{table}} ({', '.join(COLUMNS)})
SELECT {{project:String}}, start_time, start_time + toIntervalMillisecond(latency_ms),
    concat(lower(hex(cityHash64(n, 100))), lower(hex(cityHash64(n, 101)))), lower(hex(cityHash64(n, 102))),
    'app', concat('chat ', model), model, model, model, provider, 'chat', input_tokens, output_tokens,
    cache_read_tokens, reasoning_tokens, ttft_ms, latency_ms,
    if(streamed AND output_tokens > 1 AND latency_ms > ttft_ms,
       toFloat32((output_tokens - 1) / ((latency_ms - ttft_ms) / 1000.)), toFloat32(0)),
    multiIf(is_error, '', truncated, 'length', 'stop'), if(is_error, 'error', 'ok'),
    if(is_error, multiIf({_U.format(k=15)} < 0.6, 'RateLimitError', {_U.format(k=15)} < 0.9, 'APITimeoutError',
                         'InternalServerError'), ''),
    streamed, usage_missing, refusal, empty_response, truncated, tool_calls, tool_failures,
    if(empty_response, 0, output_tokens * 4), feature, prompt_template, '1', experiment,
    if(experiment = '', '', if(cityHash64(user_idx, experiment) % 2 = 0, 'control', 'treatment')), user_hash,
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
            priced * cache_read_tokens * (r_in - r_read) AS savings,
            {_EXPERIMENT_OF} AS experiment
        FROM (
            SELECT *, if(unpriced OR usage_missing, 0., 1.) AS priced,
                toUInt32(least(60000, greatest(30, ttft_med * exp(0.5 * {_z(16)})))) AS ttft_ms,
                toUInt32(ttft_ms + 1000. * output_tokens / greatest(5., tps * exp(0.25 * {_z(17)}))) AS latency_ms
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
                    arrayElement({{ttft_med:Array(Float64)}}, mi) AS ttft_med,
                    arrayElement({{tps:Array(Float64)}}, mi) AS tps,
                    toUInt32(floor({FEATURES} * pow({_U.format(k=3)}, 1.5))) AS fi,
                    concat('feature-', toString(fi)) AS feature,
                    concat('template-', toString(fi * 2 + cityHash64(n, 4) % 2)) AS prompt_template,
                    toUInt32(floor({USERS} * pow({_U.format(k=5)}, 2))) AS user_idx,
                    lower(hex(SHA256(concat('user-', toString(user_idx))))) AS user_hash,
                    toUInt32(200 + floor(8000 * pow({_U.format(k=6)}, 3))) AS input_tokens,
                    if({_U.format(k=7)} < 0.35, toUInt32(input_tokens * 0.8 * {_U.format(k=8)}), 0)
                        AS cache_read_tokens,
                    {_U.format(k=20)} < 0.005 AS empty_response,
                    if(empty_response, 0, toUInt32(greatest(1, 220 * exp(0.6 * {_z(9)})))) AS output_tokens,
                    if(arrayElement({{reasoning:Array(UInt8)}}, mi) = 1, toUInt32(output_tokens * 0.6), 0)
                        AS reasoning_tokens,
                    {_U.format(k=10)} < 0.02 AS is_error,
                    {_U.format(k=11)} < 0.005 AS usage_missing,
                    {_U.format(k=12)} < 0.03 AS cache_hit,
                    {_U.format(k=13)} < 0.9 AS streamed,
                    {_U.format(k=18)} < 0.01 AS refusal,
                    {_U.format(k=19)} < 0.01 AS truncated,
                    toUInt16(if({_U.format(k=21)} < 0.3, 1 + cityHash64(n, 22) % 3, 0)) AS tool_calls,
                    toUInt16(if(tool_calls > 0 AND {_U.format(k=23)} < 0.03, 1, 0)) AS tool_failures,
                    arrayElement({{unpriced:Array(UInt8)}}, mi) = 1 AS unpriced
                FROM numbers({{count:UInt64}})
            )
        )
    )
)"""

FEEDBACK_SQL = """
INSERT INTO {feedback} (project_id, feedback_id, created_at, updated_at, trace_id, span_id, user_hash, kind, name,
    value, label, comment, source, model, experiment, variant, prompt_template, feature, is_deleted)
SELECT project_id, concat('fb-', span_id), toDateTime64(end_time, 3, 'UTC') + toIntervalSecond(30),
    toDateTime64(end_time, 3, 'UTC') + toIntervalSecond(30), trace_id, span_id, user_hash, 'thumbs',
    'user_feedback', if(cityHash64(span_id, 1) % 100 < if(refusal OR status = 'error', 60, 12), -1., 1.), '', '',
    'end_user', model, experiment, variant, prompt_template, feature, 0
FROM {calls} WHERE cityHash64(span_id) % 100 < 3"""

SPANS_SQL = """
INSERT INTO {spans} (project_id, start_time, end_time, trace_id, span_id, parent_span_id, service_name, name,
    kind, operation, status, status_message, duration_ms, attributes)
SELECT project_id, start_time - toIntervalMillisecond(250), start_time - toIntervalMillisecond(20), trace_id,
    lower(hex(cityHash64(span_id, 1))), '', 'app', 'retrieve documents', 'internal', 'retrieval', 'ok', '', 230.,
    map('k', '8')
FROM (SELECT * FROM {calls} WHERE project_id = {{p:String}} ORDER BY start_time DESC LIMIT {{n:UInt32}})
UNION ALL
SELECT project_id, end_time + toIntervalMillisecond(5), end_time + toIntervalMillisecond(85), trace_id,
    lower(hex(cityHash64(span_id, 2))), '', 'app', 'execute_tool search', 'internal', 'execute_tool',
    if(tool_call_failures > 0, 'error', 'ok'), '', 80., map('tool', 'search')
FROM (SELECT * FROM {calls} WHERE project_id = {{p:String}} AND tool_calls > 0
      ORDER BY start_time DESC LIMIT {{n:UInt32}})"""

PROMPTS_SQL = """
INSERT INTO {prompts} (project_id, start_time, trace_id, span_id, model, prompt_template, prompt, completion,
    redaction)
SELECT project_id, start_time, trace_id, span_id, model, prompt_template,
    concat('Question ', toString(cityHash64(span_id) % 1000), ' from [EMAIL] about the order'),
    'Here is what I found ...', 'inferwatch-1'
FROM {calls} WHERE project_id = {{p:String}} ORDER BY start_time DESC LIMIT {{n:UInt32}}"""

ALERT_EVENTS_SQL = """
INSERT INTO {events} (project_id, rule_id, event_time, series_key, state, severity, metric, value, threshold,
    window_s, message, labels, channels)
SELECT {{p:String}}, rule, {{t0:DateTime64(3, 'UTC')}} + toIntervalSecond(toUInt64(n * {{step_s:Float64}})),
    concat('model=', m), arrayElement(['pending', 'firing', 'resolved', 'ok'], 1 + n % 4),
    if(rule = 'error_rate', 'critical', 'warning'), metric, 0.5 + (n % 97) / 10., 1., 300,
    concat(rule, ' on ', m), map('model', m, 'source', 'rules'), ['slack']
FROM (SELECT number AS n,
             arrayElement(['ttft_p95_slo', 'error_rate', 'drift:refusal_rate', 'drift:output_length',
                           'latency_creep'], 1 + cityHash64(number, 1) % 5) AS rule,
             arrayElement(['ttft_ms_p95', 'error_rate', 'refusal_rate', 'output_tokens_mean', 'latency_ms_p95'],
                          1 + cityHash64(number, 1) % 5) AS metric,
             arrayElement({{models:Array(String)}}, 1 + cityHash64(number, 2) % {{n_models:UInt32}}) AS m
      FROM numbers({{count:UInt64}}))"""

NOTIFICATIONS_SQL = """
INSERT INTO {notifications} (project_id, rule_id, series_key, dedup_key, channel, state, event_time, sent_at, ok,
    attempts, error)
SELECT {{p:String}}, arrayElement(['ttft_p95_slo', 'error_rate', 'drift:refusal_rate'], 1 + n % 3),
    concat('model=', arrayElement({{models:Array(String)}}, 1 + cityHash64(n, 2) % {{n_models:UInt32}})),
    concat('iw-', toString(n % 50)), arrayElement(['slack', 'pagerduty', 'webhook'], 1 + cityHash64(n, 3) % 3),
    if(n % 2 = 0, 'firing', 'resolved'), t, t + toIntervalSecond(2), cityHash64(n, 4) % 20 != 0,
    if(cityHash64(n, 4) % 20 != 0, 1, 3), if(cityHash64(n, 4) % 20 != 0, '', 'HTTP 503')
FROM (SELECT number AS n,
             {{t0:DateTime64(3, 'UTC')}} + toIntervalSecond(toUInt64(number * {{step_s:Float64}})) AS t
      FROM numbers({{count:UInt64}}))"""

JOB_RUNS_SQL = """
INSERT INTO {runs} (job, run_id, started_at, ended_at, outcome, error, trigger, host, details, updated_at)
SELECT job, concat('r-', toString(n)), t, t + toIntervalMillisecond(100 + n % 900),
    if(cityHash64(n) % 200 = 0, 'failure', 'success'), if(cityHash64(n) % 200 = 0, 'timeout', ''), 'schedule',
    'bench', map('bench', '1'), t + toIntervalMillisecond(100 + n % 900)
FROM (SELECT number AS n, arrayElement(['alerts', 'budgets', 'cost_reports', 'experiments', 'retention'],
                                       1 + number % 5) AS job,
             {{t0:DateTime64(3, 'UTC')}} + toIntervalSecond(number * 60) AS t
      FROM numbers({{count:UInt64}}))"""


def model_params(table: PriceTable) -> dict[str, Any]:
    """Per-model query parameters: name, provider, rates (USD per token), flags, TTFT median and decode speed."""
    params: dict[str, list[Any]] = {key: [] for key in ("models", "providers", "r_input", "r_cache_read",
                                                        "r_output", "r_reasoning", "reasoning", "unpriced",
                                                        "ttft_med", "tps")}
    for i, name in enumerate(MODELS):
        price = table.lookup(name)
        rates = price.base if price else None
        params["models"].append(name)
        params["providers"].append(price.provider if price else "self-hosted")
        for key, kind in (("r_input", "input"), ("r_cache_read", "cache_read"), ("r_output", "output"),
                          ("r_reasoning", "reasoning")):
            params[key].append(getattr(rates, kind) * rates.unit / 1e18 if rates else 0.0)
        params["reasoning"].append(1 if name in REASONING else 0)
        params["unpriced"].append(0 if price else 1)
        params["ttft_med"].append(250.0 + 90.0 * (i % 7) + (900.0 if name in REASONING else 0.0))
        params["tps"].append(40.0 + 12.0 * (i % 9))
    return params


def progress(done: int, total: int, started: float, what: str = "calls") -> None:
    elapsed = time.monotonic() - started
    print(f"  inserted {done:>12,} / {total:,} {what}  ({elapsed:6.1f} s, {done / max(elapsed, 1e-9):,.0f}/s)",
          flush=True)


def build_calls(store: Store, calls: int, chunk: int, now: datetime) -> float:
    table = bundled_table()
    params: dict[str, Any] = {"project": PROJECT, "version": table.version, "t0": now - timedelta(days=DAYS),
                              "total": calls, "span_us": DAYS * 86_400_000_000, **model_params(table)}
    sql = GENERATE.replace("{table}", store.table("llm_calls"))
    started = time.monotonic()
    done = 0
    while done < calls:
        count = min(chunk, calls - done)
        store.command(sql, parameters={**params, "offset": done, "count": count}, settings=INSERT_SETTINGS)
        done += count
        progress(done, calls, started)
    return time.monotonic() - started


def build_extras(store: Store, now: datetime) -> None:
    """What the pages show besides the calls: feedback, spans and prompt text, alerts, job runs, a silence,
    budgets, and the experiments analysed once by the real job."""
    t = store.table
    step = time.monotonic()
    store.command(FEEDBACK_SQL.format(feedback=t("feedback"), calls=t("llm_calls")))
    store.command(SPANS_SQL.format(spans=t("spans"), calls=t("llm_calls")), parameters={"p": PROJECT, "n": 20_000})
    store.command(PROMPTS_SQL.format(prompts=t("prompt_logs"), calls=t("llm_calls")),
                  parameters={"p": PROJECT, "n": 20_000})
    models = {"models": list(MODELS), "n_models": len(MODELS), "p": PROJECT}
    store.command(ALERT_EVENTS_SQL.format(events=t("alert_events")),
                  parameters={**models, "t0": now - timedelta(days=DAYS), "step_s": DAYS * 86400 / 5000,
                              "count": 5000})
    store.command(NOTIFICATIONS_SQL.format(notifications=t("notifications")),
                  parameters={**models, "t0": now - timedelta(days=DAYS), "step_s": DAYS * 86400 / 2000,
                              "count": 2000})
    store.command(JOB_RUNS_SQL.format(runs=t("job_runs")),
                  parameters={"t0": now - timedelta(days=7), "count": 7 * 1440})
    state_columns = ("project_id", "rule_id", "series_key", "state", "since", "last_value", "last_eval_at",
                     "updated_at", "incident_start", "dedup_key", "severity", "threshold", "labels", "channels")
    states = [(PROJECT, rule, f"model={model}", state, now - timedelta(minutes=20 + i), 2500.0 + i, now, now,
               now - timedelta(minutes=20 + i), f"iw-{i}", severity, 2000.0, {"model": model}, ["slack"])
              for i, (rule, model, state, severity) in enumerate((
                  ("ttft_p95_slo", "o3", "firing", "warning"), ("ttft_p95_slo", "gpt-5", "pending", "warning"),
                  ("error_rate", "acme-internal-llm", "firing", "critical"),
                  ("drift:refusal_rate", "gpt-4o", "firing", "info"), ("latency_creep", "o4-mini", "no_data",
                                                                        "warning")))]
    store.insert_columns("alert_state", [list(col) for col in zip(*states)], state_columns)
    print(f"  feedback, spans, prompt text, alerts, job runs: {time.monotonic() - step:.1f} s", flush=True)

    from inferwatch_alerts import silences

    silences.create_silence(store, PROJECT, rule_id="ttft_p95_slo", matchers={"model": "gpt-5"},
                            ends_at=now + timedelta(hours=4), comment="bench: known slow model",
                            created_by="bench", now=now)
    for spec in (validate_budget(scope_type="project", period="month", kind="soft", limit_usd=250_000),
                 validate_budget(scope_type="feature", scope_value="feature-0", period="month", kind="hard",
                                 limit_usd=60_000)):
        create_budget(store, PROJECT, spec, now=now)

    step = time.monotonic()
    try:
        from inferwatch_alerts.experiments import registry, results

        for name in EXPERIMENTS.values():
            exp = registry.validate_experiment(project_id=PROJECT, name=name,
                                               variants=[("control", 0.5), ("treatment", 0.5)],
                                               start=now - timedelta(days=14), planned_users=20_000, source="cli",
                                               now=now - timedelta(days=14))
            registry.save_experiment(store, exp, now=now - timedelta(days=14))
        details = results.run_experiments_job(store, now)
        print(f"  experiments registered and analysed by run_experiments_job: {time.monotonic() - step:.1f} s "
              f"({details})", flush=True)
    except Exception as exc:  # noqa: BLE001 - the page still loads without a verdict; say so and go on
        print(f"  experiments job failed ({type(exc).__name__}: {exc}); the page will show no verdict", flush=True)


# --------------------------------------------------------------------------------------------- the pages


Request = tuple[str, dict[str, str]]


def _params(**values: Any) -> dict[str, str]:
    return {name: str(value) for name, value in values.items() if value is not None and value != ""}


@dataclass(frozen=True)
class View:
    name: str
    window: Window
    filters: tuple[tuple[str, str], ...] = ()

    def scoped(self, window: Window | None = None, filters: tuple[tuple[str, str], ...] | None = None,
               **extra: Any) -> dict[str, str]:
        win = window or self.window
        return _params(**win.params(), **dict(self.filters if filters is None else filters), **extra)

    def stats(self, need: str, *, by: str | None = None, bucket: str | None = None, top: int = 20,
              window: Window | None = None, filters: tuple[tuple[str, str], ...] | None = None) -> Request:
        return ("/api/v1/dashboard/stats",
                self.scoped(window, filters, need=need, by=by, bucket=bucket, top=top if by else None))


def sidebar(view: View) -> list[Request]:
    """context.setup(), before every page: the key's project, then the filter values of the range."""
    return [("/api/v1/dashboard/whoami", {}), ("/api/v1/dashboard/facets", _params(**view.window.params()))]


def overview(view: View, state: dict[str, Any]) -> list[Request]:
    need, bucket = "volume,flags,latency", timerange.bucket(view.window)
    return [view.stats(need), view.stats(need, window=view.window.previous()),
            view.stats("volume", by="model", bucket=bucket, top=10), ("/api/v1/alerts", {})]


def cost(view: View, state: dict[str, Any]) -> list[Request]:
    now = datetime.now(UTC)
    month = Window(now.replace(day=1, hour=0, minute=0, second=0, microsecond=0), timerange.now_minute(now),
                   "this month")
    report = _params(period="month", by="model")  # defaults: "Model", "Month to date" (asked twice, cached)
    return [view.stats("volume", by="model", bucket=timerange.bucket(view.window), top=10),
            ("/api/v1/costs/report", report), view.stats("volume", bucket="day", window=month, filters=()),
            ("/api/v1/budgets/status", {}), ("/api/v1/costs/report.csv", report)]


def latency(view: View, state: dict[str, Any]) -> list[Request]:
    need, bucket = "volume,latency", timerange.bucket(view.window)
    recent = view.window
    if recent.length > timedelta(hours=24):
        recent = Window(recent.end - timedelta(hours=24), recent.end, "the last 24 hours")
    return [view.stats(need, by="model"), view.stats(need), view.stats(need, by="model", bucket=bucket, top=10),
            view.stats(need, bucket=bucket), view.stats("decode", by="model", window=recent)]


def quality(view: View, state: dict[str, Any]) -> list[Request]:
    need, bucket, base = "volume,flags", timerange.bucket(view.window), view.window.before(7)
    feedback_filters = tuple(f for f in view.filters if f[0] != "provider")
    feedback = "/api/v1/dashboard/feedback"
    return [view.stats(need), view.stats(need, window=base), view.stats(need, bucket=bucket),
            (feedback, view.scoped(filters=feedback_filters, bucket=bucket)),
            (feedback, view.scoped(filters=feedback_filters)),
            (feedback, view.scoped(window=base, filters=feedback_filters)),
            ("/api/v1/alerts/history", _params(**view.window.params()))]


def experiments(view: View, state: dict[str, Any]) -> list[Request]:
    # facets (the experiment names) was already asked by the sidebar with the same parameters: a cache hit.
    name = dict(view.filters).get("experiment") or state.get("experiment") or sorted(EXPERIMENTS.values())[0]
    others = tuple(f for f in view.filters if f[0] not in ("experiment", "variant"))
    return [("/api/v1/experiments", {}), (f"/api/v1/experiments/{name}", {}),
            view.stats("volume,latency", by="variant", filters=(*others, ("experiment", name)))]


def alerts(view: View, state: dict[str, Any]) -> list[Request]:
    window = _params(**view.window.params())
    return [("/api/v1/alerts", {}), ("/api/v1/alerts/history", window), ("/api/v1/alerts/rules", {}),
            ("/api/v1/alerts/silences", {}), ("/api/v1/dashboard/notifications", window),
            ("/api/v1/jobs/runs", _params(limit=50))]


def traces(view: View, state: dict[str, Any]) -> list[Request]:
    first = [("/api/v1/dashboard/calls", view.scoped(limit=100))]
    trace_id = state.get(("trace", view.name))
    if not trace_id:
        return first
    return [*first, (f"/api/v1/traces/{trace_id}", {}), (f"/api/v1/dashboard/prompts/{trace_id}", {})]


def capacity(view: View, state: dict[str, Any]) -> list[Request]:
    inputs = {"model": "llama-3-70b", "precision": "fp16", "gpu_mem_gib": 80.0, "gpu_hour_usd": 3.5,
              "replica_tps": 2500.0, "headroom": 1.2, "brief": "false",
              "traffic_model": dict(view.filters).get("model")}
    return [("/api/v1/dashboard/capacity/presets", {}),
            ("/api/v1/capacity/plan", _params(**view.window.params(), **inputs))]


PAGES: tuple[tuple[str, Callable[[View, dict[str, Any]], list[Request]]], ...] = (
    ("Overview", overview), ("Cost", cost), ("Latency", latency), ("Quality", quality),
    ("Experiments", experiments), ("Alerts", alerts), ("Traces", traces), ("Capacity", capacity))


def views() -> list[View]:
    """Recomputed per run, as the dashboard does: a preset's end is now rounded up to the minute."""
    day, month = timerange.window("24h"), timerange.window("30d")
    return [View("24h (default)", day), View("30d", month),
            View(f"30d, feature={FILTER_FEATURE}", month, (("feature", FILTER_FEATURE),))]


@dataclass
class Timing:
    totals: list[float] = field(default_factory=list)
    requests: dict[str, list[float]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def label(path: str, params: dict[str, str]) -> str:
    """A short name for a request: the path's tail and the parameters that tell requests of a page apart."""
    name = path.removeprefix("/api/v1/").removeprefix("dashboard/")
    if name.startswith(("traces/", "prompts/")):
        name = name.split("/")[0] + "/{id}"
    keys = [f"{k}={params[k]}" for k in ("need", "by", "bucket", "period", "limit") if k in params]
    if "start" in params and "end" in params:
        span = datetime.fromisoformat(params["end"]) - datetime.fromisoformat(params["start"])
        keys.append(f"range={span.days}d" if span.days else f"range={span.seconds // 3600}h")
    return name + (f"({', '.join(keys)})" if keys else "")


def run_page(client: ApiClient, key: str, page: Callable[[View, dict[str, Any]], list[Request]], view: View,
             state: dict[str, Any], timing: Timing | None) -> float:
    total = 0.0
    seen: set[str] = set()
    for i, (path, params) in enumerate([*sidebar(view), *page(view, state)]):
        ident = f"{path}?{sorted(params.items())}"
        if ident in seen:  # st.cache_data answers the repeat
            continue
        seen.add(ident)
        started = time.perf_counter()
        try:
            answer: Any = (client.get_bytes(path, key, params) if path.endswith(".csv")
                           else client.get_json(path, key, params))
        except ApiError as error:
            answer = None
            if timing is not None:
                timing.errors.append(f"{label(path, params)}: {error}")
        elapsed = time.perf_counter() - started
        total += elapsed
        name = f"{i:02d} {label(path, params)}"
        if timing is not None:
            timing.requests.setdefault(name, []).append(elapsed)
            if path.endswith("/stats") and isinstance(answer, dict) and "source" in answer:
                timing.sources[name] = answer["source"]
        if path == "/api/v1/dashboard/calls" and isinstance(answer, dict) and answer.get("calls"):
            state[("trace", view.name)] = answer["calls"][0]["trace_id"]
    if timing is not None:
        timing.totals.append(total)
    return total


# ------------------------------------------------------------------------------------------------ server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """uvicorn serving the collector app on a free 127.0.0.1 port in a daemon thread."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="bench-collector", daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the collector did not start")
            time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000_000, help="calls to generate (default 10M)")
    parser.add_argument("--quick", action="store_true", help="1M calls (indicative only)")
    parser.add_argument("--chunk", type=int, default=1_000_000, help="calls per INSERT (default 1M)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per page and view (median is reported)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    args = parser.parse_args()
    calls = 1_000_000 if args.quick else args.calls

    tmp = Path(tempfile.mkdtemp(prefix="inferwatch-bench-dashboard-"))
    settings = Settings(data_dir=tmp / "data", clickhouse_url="", migration_mode="auto", ingest_workers=0,
                        collector_scheduler="off")
    store = Store.open(settings)
    try:
        migrate(store, target_for(settings, store))
        now = datetime.now(UTC)
        print(f"building {calls:,} calls over {DAYS} days ending {now:%Y-%m-%d %H:%M} UTC in {tmp} ...",
              flush=True)
        build_s = build_calls(store, calls, args.chunk, now)
        step = time.monotonic()
        build_extras(store, now)
        extras_s = time.monotonic() - step
        counts = {name: store.query(f"SELECT count() FROM {store.table(name)}").result_rows[0][0]
                  for name in ("llm_calls", "llm_calls_1m", "llm_calls_1h", "usage_1h", "ab_rollup_1h", "cost_1d",
                               "llm_calls_1d", "feedback", "spans", "alert_events")}
        print(f"built in {build_s:.1f} s (+ {extras_s:.1f} s extras): "
              + ", ".join(f"{name} {n:,}" for name, n in counts.items()), flush=True)

        key = KeyStore(store).create_key(PROJECT, ["read", "prompts:read"])
        app = create_app(settings, store=store, run_migrations=False)
        with ServerThread(app) as url:
            client = ApiClient(url, timeout_s=120.0)
            state: dict[str, Any] = {}
            print(f"collector on {url}; warm-up run of every page and view ...", flush=True)
            for view in views():
                for _, page in PAGES:
                    run_page(client, key, page, view, state, None)
            timings: dict[tuple[str, str], Timing] = {}
            for run in range(args.runs):
                for view in views():
                    for name, page in PAGES:
                        timing = timings.setdefault((name, view.name), Timing())
                        run_page(client, key, page, view, state, timing)
                print(f"  timed run {run + 1}/{args.runs} done", flush=True)
            client.close()

        print()
        print(f"API time per page over {calls:,} calls: sequential requests as the page makes them (sidebar's "
              f"whoami + facets included), median of {args.runs} runs")
        print(f"{'page':12} {'view':26} {'median [min-max]':24} {'reqs':>4}  slowest request (median, source)")
        failed = []
        all_requests: list[tuple[float, str, str, str]] = []
        for view in views():
            for name, _ in PAGES:
                timing = timings[(name, view.name)]
                medians = {req: statistics.median(times) for req, times in timing.requests.items()}
                slow = max(medians, key=medians.get)
                source = timing.sources.get(slow)
                for req, median in medians.items():
                    all_requests.append((median, name, view.name, req + (f" [{timing.sources[req]}]"
                                                                          if req in timing.sources else "")))
                median = statistics.median(timing.totals)
                verdict = "PASS" if median < TARGET_S else "FAIL"
                if verdict == "FAIL":
                    failed.append((name, view.name))
                print(f"{name:12} {view.name:26} {fmt(timing.totals):24} {len(medians):>4}  "
                      f"{slow[3:]} {medians[slow]:.3f} s{f' [{source}]' if source else ''}  {verdict}")
                for error in sorted(set(timing.errors)):
                    print(f"{'':40} error: {error}")
        for page, view_name in failed:
            timing = timings[(page, view_name)]
            print(f"\n{page}, {view_name}: its requests in order (median, source)")
            for req, times in timing.requests.items():
                source = timing.sources.get(req)
                print(f"  {statistics.median(times):6.3f} s  {req[3:]}{f' [{source}]' if source else ''}")
        print()
        print("slowest requests (median):")
        for median, page, view_name, req in sorted(all_requests, reverse=True)[:8]:
            print(f"  {median:6.3f} s  {page:12} {view_name:26} {req[3:]}")
        print()
        if failed:
            print(f"FAIL: {len(failed)} of {len(timings)} page views over {TARGET_S:g} s: "
                  + ", ".join(f"{p} ({v})" for p, v in failed))
        else:
            print(f"PASS: every page's API time under {TARGET_S:g} s over {calls:,} calls")
        return 0
    finally:
        store.close()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
