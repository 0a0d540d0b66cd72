"""Conformance with real third-party emitters: what each instrumentation library really sent (recorded by
tests/conformance/record.py, fixtures in tests/fixtures/conformance) lands as exactly one ``llm_calls`` row per
provider request, with the hand-checked tokens, cost, TTFT, finish reason, streamed flag, status, provider,
models and prompt-log placement of ``<scenario>.expected.json``.

Each recording is posted to the full app as the library posted it (its path, encoding and compression; timestamps
moved to now), then :func:`~tests.helpers.conformance.settle` lets the collector finish merging the spans of one
request, and the rows of the recording's traces are compared with the expected ones in start-time order. Every
difference is reported at once, so one run tells the whole story of a library.
"""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from inferwatch_collector import auth

from tests.helpers.conformance import expected, fixtures, hex_id, load, requests_of, settle, spans_of, trace_ids
from tests.helpers.keys import Keys

LANGFUSE_PATH = "/api/public/otel/v1/traces"
SYSTEM_PROMPT = "You are a terse assistant."  # the system prompt of the non-cached scenarios (emit.py)
APP_SPAN = "handle_request"  # the app's own span around the call in the parent_span scenario (emit.py)
ROW_FIELDS = ("parent_span_id", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
              "cost_usd", "ttft_ms", "finish_reason", "streamed", "status", "provider", "request_model",
              "response_model", "span_id", "trace_id", "start_time")
EXACT = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
         "finish_reason", "streamed", "status", "provider", "request_model", "response_model")
COST_TOLERANCE_USD = 1e-9  # far inside "to the cent": every cost here is a few tenths of a cent at most

CASES = fixtures()


def _auth_header(path: str, ingest_key: str) -> str:
    """Bearer for OTLP paths; for Langfuse's path, Basic with the key's Langfuse-style pair."""
    if path != LANGFUSE_PATH:
        return f"Bearer {ingest_key}"
    public, secret = auth.langfuse_pair(ingest_key)
    return "Basic " + base64.b64encode(f"{public}:{secret}".encode()).decode()


def _post_all(client: TestClient, fixture: dict[str, Any], ingest_key: str) -> list[str]:
    problems = []
    for path, headers, body in requests_of(fixture, time.time_ns()):
        headers = {**headers, "Authorization": _auth_header(path, ingest_key)}
        response = client.post(path, content=body, headers=headers)
        if response.status_code != 200:
            problems.append(f"POST {path} answered {response.status_code}: {response.text[:200]}")
    return problems


def _rows(store: Any, traces: set[str]) -> list[dict[str, Any]]:
    result = store.query(f"SELECT {', '.join(ROW_FIELDS)} FROM llm_calls WHERE trace_id IN {{t:Array(String)}} "
                         "ORDER BY start_time, span_id", parameters={"t": sorted(traces)})
    return [dict(zip(ROW_FIELDS, row)) for row in result.result_rows]


def _prompt_logs(store: Any, traces: set[str]) -> list[tuple[str, str, str]]:
    result = store.query("SELECT span_id, prompt, completion FROM prompt_logs WHERE trace_id IN {t:Array(String)} "
                         "ORDER BY start_time, span_id", parameters={"t": sorted(traces)})
    return [tuple(row) for row in result.result_rows]


def _row_problems(index: int, row: dict[str, Any], want: dict[str, Any]) -> list[str]:
    problems = []
    for field in EXACT:
        if row[field] != want[field]:
            problems.append(f"row {index}: {field} = {row[field]!r}, expected {want[field]!r}")
    if abs(row["cost_usd"] - want["cost_usd"]) > COST_TOLERANCE_USD:
        problems.append(f"row {index}: cost_usd = {row['cost_usd']:.10f}, expected {want['cost_usd']:.10f}")
    if (row["ttft_ms"] > 0) != want["ttft_ms_present"]:
        problems.append(f"row {index}: ttft_ms = {row['ttft_ms']}, expected "
                        f"{'a TTFT' if want['ttft_ms_present'] else 'none'}")
    return problems


@pytest.mark.parametrize(("slug", "scenario"), CASES, ids=[f"{slug}/{scenario}" for slug, scenario in CASES])
def test_recorded_library_lands_one_right_row_per_provider_request(unsettled_client: TestClient, store: Any,
                                                                   keys: Keys, slug: str, scenario: str) -> None:
    client = unsettled_client  # every request of the recording arrives inside one pairing window, as it did live
    fixture = load(slug, scenario)
    wanted = expected(slug, scenario)
    assert len(wanted) == fixture["provider_requests"], "the expected file must have one entry per request"

    problems = _post_all(client, fixture, keys.ingest)
    settle(client.app)
    traces = trace_ids(fixture)
    rows = _rows(store, traces)
    if len(rows) != fixture["provider_requests"]:
        problems.append(f"{len(rows)} llm_calls rows for {fixture['provider_requests']} provider request(s): "
                        + "; ".join(f"span {r['span_id']} model {r['request_model'] or r['response_model']!r}"
                                    for r in rows))
    for index, (row, want) in enumerate(zip(rows, wanted)):
        problems.extend(_row_problems(index, row, want))
    app_spans = {hex_id(span["span_id"]) for span in spans_of(fixture) if span["name"] == APP_SPAN}
    for index, row in enumerate(rows):  # the call hangs under the app's span, or is a root without one
        if row["parent_span_id"] not in (app_spans or {""}):
            problems.append(f"row {index}: parent_span_id = {row['parent_span_id']!r}, expected "
                            f"{sorted(app_spans) or 'none'}")

    calls = {row["span_id"] for row in rows}  # an app span's own input (a Langfuse @observe) is not the call's
    logs = [log for log in _prompt_logs(store, traces) if log[0] in calls]
    with_content = sum(1 for want in wanted if want["has_prompt_log"])
    if len(logs) != with_content:
        problems.append(f"{len(logs)} prompt_logs rows of the calls, expected {with_content} (one per call with "
                        "content)")
    for span_id, prompt, _ in logs:
        if prompt.count(SYSTEM_PROMPT) > 1:
            problems.append(f"prompt log of span {span_id} holds the system prompt {prompt.count(SYSTEM_PROMPT)} "
                            "times")

    assert not problems, f"{slug} {fixture['version']} / {scenario}:\n  " + "\n  ".join(problems)
