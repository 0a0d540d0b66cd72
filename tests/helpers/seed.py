"""Deterministic traffic for the dashboard tests, and the figures it must produce.

120 calls in the last 20 hours (three priced models, one unpriced, one without usage; errors, refusals,
truncated/empty answers, tool failures, an experiment with two variants, four users), 60 calls in the 24 hours
before (the "previous period" of the deltas), one trace with a retrieval span, a tool span and redacted prompt
text, and thumbs feedback. The tests compare what the pages render with what the API answers for the same
question, and the exact counts and sums with :func:`totals` over these rows.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from inferwatch_collector.routes.feedback import COLUMNS as FEEDBACK_COLUMNS
from inferwatch_collector.rows import LLM_CALL_COLUMNS, PROMPT_LOG_COLUMNS, SPAN_COLUMNS, LlmCallRow
from inferwatch_collector.store import Store
from tests.helpers.factories import llm_call

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
LLM_SPAN_ID = "00f067aa0ba902b7"
PROMPT_TEXT = "What is the refund policy for [EMAIL]?"
COMPLETION_TEXT = "Refunds are possible within 30 days of purchase."
EXPERIMENT = "prompt-v2"
USERS = tuple(f"{n:x}" * 64 for n in (10, 11, 12, 13))  # 64 hex characters each
MINUTE_US = 60_000_000
#: model -> (provider, cost per call, ttft ms, latency ms)
MODELS = {
    "gpt-4o-mini": ("openai", 0.002, 300, 900),
    "claude-3-5-sonnet": ("anthropic", 0.015, 2500, 4000),  # breaks the 2 s TTFT objective
    "gpt-4o": ("openai", 0.01, 600, 1800),
}
ERRORS, REFUSALS, TRUNCATED = {7, 19, 33, 61, 88}, {10, 50, 90}, {11, 51, 91, 101}
EMPTY, TOOL_FAILURES = {12}, {0, 36}
UNPRICED, USAGE_MISSING = 115, 116


def _model(k: int) -> str:
    return ("gpt-4o-mini", "gpt-4o-mini", "gpt-4o-mini", "claude-3-5-sonnet", "gpt-4o")[k % 5]


def current_calls(now_us: int, project: str = "p1") -> list[LlmCallRow]:
    rows = []
    for k in range(120):
        model = _model(k)
        provider, cost, ttft, latency = MODELS[model]
        fields: dict[str, Any] = dict(
            start_time=now_us - (k * 10 + 5) * MINUTE_US, model=model, request_model=model, response_model=model,
            provider=provider, span_name=f"chat {model}", cost_usd=cost, price_version="test-1",
            ttft_ms=ttft + (k % 7) * 10, latency_ms=latency + (k % 11) * 20, decode_tps=80.0 + k % 9,
            feature="search" if k % 2 == 0 else "chat", prompt_template="answer" if k % 3 else "summarize",
            experiment=EXPERIMENT if k % 4 in (0, 1) else "", variant=("control", "treatment", "", "")[k % 4],
            user_hash=USERS[k % 4], status="error" if k in ERRORS else "ok",
            error_type="RateLimitError" if k in ERRORS else "", refusal=k in REFUSALS, truncated=k in TRUNCATED,
            empty_response=k in EMPTY, tool_calls=1 if k % 6 == 0 else 0,
            tool_call_failures=1 if k in TOOL_FAILURES else 0,
            finish_reason="length" if k in TRUNCATED else "stop", output_tokens=100 + k % 50,
        )
        if k == 0:
            fields.update(trace_id=TRACE_ID, span_id=LLM_SPAN_ID, parent_span_id="a" * 16)
        if k == UNPRICED:
            fields.update(model="mystery-model", provider="acme", cost_usd=0.0, unpriced=True, price_version="")
        if k == USAGE_MISSING:
            fields.update(cost_usd=0.0, usage_missing=True, output_tokens=0, input_tokens=0)
        rows.append(llm_call(project, **fields))
    return rows


def previous_calls(now_us: int, project: str = "p1") -> list[LlmCallRow]:
    rows = []
    for k in range(60):
        model = _model(k)
        provider, cost, ttft, latency = MODELS[model]
        rows.append(llm_call(
            project, start_time=now_us - 24 * 60 * MINUTE_US - (k * 20 + 5) * MINUTE_US, model=model,
            request_model=model, response_model=model, provider=provider, cost_usd=cost, price_version="test-1",
            ttft_ms=ttft, latency_ms=latency, feature="search", user_hash=USERS[0],
            status="error" if k == 3 else "ok", error_type="Timeout" if k == 3 else ""))
    return rows


def totals(rows: list[LlmCallRow]) -> dict[str, Any]:
    """Exact figures of ``rows`` (what the rollups must add up to)."""
    calls = len(rows)
    errors = sum(r.status == "error" for r in rows)
    return {"calls": calls, "errors": errors, "cost_usd": sum(r.cost_usd for r in rows),
            "refusals": sum(r.refusal for r in rows), "unpriced": sum(r.unpriced for r in rows),
            "usage_missing": sum(r.usage_missing for r in rows)}


def _insert(store: Store, table: str, rows: list[tuple], columns: tuple[str, ...]) -> None:
    store.insert_columns(table, [list(column) for column in zip(*rows)], columns)


def seed(store: Store, project: str = "p1") -> dict[str, list[LlmCallRow]]:
    """Insert everything; returns the call rows by period (times relative to now)."""
    now_us = int(time.time() * 1_000_000)
    current, previous = current_calls(now_us, project), previous_calls(now_us, project)
    _insert(store, "llm_calls", current + previous, LLM_CALL_COLUMNS)
    call = current[0]
    retrieval = (project, call.start_time - 250_000, call.start_time - 20_000, TRACE_ID, "a" * 16, "",
                 "support-bot", "retrieve documents", "internal", "retrieval", "ok", "", 230.0, {})
    tool = (project, call.end_time + 5_000, call.end_time + 85_000, TRACE_ID, "b" * 16, "a" * 16, "support-bot",
            "execute_tool get_weather", "internal", "execute_tool", "ok", "", 80.0, {})
    _insert(store, "spans", [retrieval, tool], SPAN_COLUMNS)
    _insert(store, "prompt_logs", [(project, call.start_time, TRACE_ID, LLM_SPAN_ID, call.model, "answer",
                                    PROMPT_TEXT, COMPLETION_TEXT, "inferwatch-1")], PROMPT_LOG_COLUMNS)
    now = datetime.now(UTC)
    feedback = []
    for n, up in enumerate([True] * 8 + [False] * 2):
        created = now - timedelta(hours=1 + n)
        values = dict(project_id=project, feedback_id=f"fb-{n}", created_at=created, updated_at=created,
                      trace_id=f"{n + 1:032x}", span_id=f"{n + 1:016x}", user_hash=USERS[0], kind="thumbs",
                      name="user_feedback", value=1.0 if up else -1.0, label="", comment="", source="api",
                      model="gpt-4o-mini", experiment="", variant="", prompt_template="answer", feature="search",
                      is_deleted=0)
        feedback.append(tuple(values[c] for c in FEEDBACK_COLUMNS))
    _insert(store, "feedback", feedback, FEEDBACK_COLUMNS)
    return {"current": current, "previous": previous}


FIRING_RULE = "ttft_p95_slo"
DRIFT_RULE = "drift:refusal_rate"


def seed_alerts(store: Store, project: str = "p1") -> None:
    """One firing TTFT alert (alert_state) and its history plus a refusal-drift finding (alert_events)."""
    now = datetime.now(UTC)
    since = now - timedelta(minutes=20)
    state_columns = ("project_id", "rule_id", "series_key", "state", "since", "last_value", "last_eval_at",
                     "updated_at", "incident_start", "dedup_key", "severity", "threshold", "labels", "channels")
    store.insert_columns("alert_state", [[v] for v in (
        project, FIRING_RULE, "model=claude-3-5-sonnet", "firing", since, 2550.0, now, now, since,
        "iw-ttft-claude", "warning", 2000.0, {"model": "claude-3-5-sonnet"}, ["slack"])], state_columns)
    event_columns = ("project_id", "rule_id", "event_time", "series_key", "state", "severity", "metric", "value",
                     "threshold", "window_s", "message", "labels", "channels")
    events = [
        (project, FIRING_RULE, since, "model=claude-3-5-sonnet", "firing", "warning", "ttft_ms_p95", 2550.0,
         2000.0, 300, "TTFT p95 2550 ms > 2000 ms for 5m", {"model": "claude-3-5-sonnet"}, ["slack"]),
        (project, DRIFT_RULE, now - timedelta(hours=2), "feature=search", "firing", "info", "refusal_rate", 0.05,
         0.01, 3600, "Refusal rate 5.0% vs baseline 1.0%", {"feature": "search"}, []),
    ]
    _insert(store, "alert_events", events, event_columns)
    notification_columns = ("project_id", "rule_id", "series_key", "dedup_key", "channel", "state", "event_time",
                            "sent_at", "ok", "attempts", "error")
    _insert(store, "notifications", [
        (project, FIRING_RULE, "model=claude-3-5-sonnet", "iw-ttft-claude", "slack", "firing", since, since,
         True, 1, ""),
        (project, FIRING_RULE, "model=claude-3-5-sonnet", "iw-ttft-claude", "pagerduty", "firing", since, since,
         False, 3, "HTTP 503 from events.pagerduty.com"),
    ], notification_columns)


def seed_experiment(store: Store, project: str = "p1") -> None:
    """The experiment's registry entry and one analysed window (tables of migration 0007 and ab_results), as the
    experiments job writes them: a keep-running verdict, cost per call with intervals, users per variant."""
    now = datetime.now(UTC)
    start, day_end = now - timedelta(days=1), now.replace(hour=23, minute=59, second=59, microsecond=0)
    store.insert_columns("experiments", [[v] for v in (
        project, EXPERIMENT, ["control", "treatment"], [0.5, 0.5], "control", "cost_per_call",
        ["error_rate"], start, None, 1000, 0.05, 0.05, True, "api", "shorter system prompt", now, now, 0)],
        ("project_id", "name", "variants", "weights", "control", "primary_metric", "guardrails", "start_time",
         "end_time", "planned_users", "mde", "alpha", "sequential", "source", "description", "created_at",
         "updated_at", "is_deleted"))
    store.insert_columns("ab_verdicts", [[v] for v in (
        project, EXPERIMENT, start.replace(microsecond=0), day_end, now, now, "keep_running", True, "",
        "cost_per_call", 4, 0.62, "minimum sample not reached (100 users per variant)", {})],
        ("project_id", "experiment", "window_start", "window_end", "computed_at", "data_until", "verdict",
         "trustworthy", "winner", "primary_metric", "users", "srm_p_value", "reason", "details"))
    rows = [("cost_per_call", "control", 2, 0.0061, 0.0049, 0.0073, math.nan, math.nan, "delta"),
            ("cost_per_call", "treatment", 2, 0.0062, 0.0050, 0.0074, 0.016, 0.4, "delta"),
            ("users", "control", 2, 0.5, math.nan, math.nan, math.nan, 0.62, "srm_chi2"),
            ("users", "treatment", 2, 0.5, math.nan, math.nan, math.nan, 0.62, "srm_chi2")]
    _insert(store, "ab_results", [
        (project, EXPERIMENT, metric, variant, start.replace(microsecond=0), day_end, now, n, value, low, high,
         "control", lift, p, method, {}) for metric, variant, n, value, low, high, lift, p, method in rows],
        ("project_id", "experiment", "metric", "variant", "window_start", "window_end", "computed_at", "n",
         "value", "ci_low", "ci_high", "control", "lift", "p_value", "method", "details"))
