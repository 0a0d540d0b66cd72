"""Query API: numbers from the rollups equal the raw rows; parameters are validated; projects are isolated."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from inferwatch_collector.rows import LLM_CALL_COLUMNS

from tests.helpers.keys import Keys
from tests.helpers.metrics import scrape
from tests.helpers.factories import llm_call

HOUR_US = 3_600_000_000


@pytest.fixture
def seeded(store):
    """Calls in two hours of the last day for project p1 (two models), plus noise in project p2."""
    base = (int(time.time()) // 3600 - 3) * HOUR_US  # three hours ago, on the hour
    rows = []
    for i in range(40):
        rows.append(llm_call("p1", start_time=base + i * 60_000_000, model="gpt-4o", provider="openai",
                             latency_ms=1000 + i * 10, ttft_ms=200 + i, cost_usd=0.01, input_tokens=100,
                             output_tokens=10, status="error" if i % 10 == 0 else "ok"))
    for i in range(20):
        rows.append(llm_call("p1", start_time=base + HOUR_US + i * 60_000_000, model="claude-haiku-4-5",
                             provider="anthropic", latency_ms=500, ttft_ms=0, streamed=False, cost_usd=0.002,
                             input_tokens=50, output_tokens=5, cache_read_tokens=20))
    for i in range(7):
        rows.append(llm_call("p2", start_time=base + i * 60_000_000, model="secret-model", cost_usd=5.0))
    columns = [list(c) for c in zip(*rows)]
    store.insert_columns("llm_calls", columns, LLM_CALL_COLUMNS)
    return base


def get(client, path, key, **params):
    return client.get(f"/api/v1{path}", params=params, headers=Keys.header(key))


def iso(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, timezone.utc).isoformat()


def test_summary_matches_the_raw_rows(client, keys, seeded):
    body = get(client, "/calls/summary", keys.read).json()
    assert body["calls"] == 60 and body["errors"] == 4
    assert body["error_rate"] == pytest.approx(4 / 60)
    assert body["input_tokens"] == 40 * 100 + 20 * 50 and body["cache_read_tokens"] == 20 * 20
    assert body["cost_usd"] == pytest.approx(40 * 0.01 + 20 * 0.002)
    only = get(client, "/calls/summary", keys.read, model="claude-haiku-4-5").json()
    assert only["calls"] == 20 and only["errors"] == 0


def test_long_ranges_use_the_hourly_rollup_with_the_same_totals(client, keys, seeded):
    start = datetime.now(timezone.utc) - timedelta(days=30)
    body = get(client, "/calls/summary", keys.read, start=start.isoformat()).json()
    assert body["calls"] == 60 and body["cost_usd"] == pytest.approx(0.44)


def test_timeseries_buckets(client, keys, seeded):
    rows = get(client, "/calls/timeseries", keys.read, start=iso(seeded), end=iso(seeded + 2 * HOUR_US),
               bucket="hour").json()
    assert [r["calls"] for r in rows] == [40, 20]
    assert rows[0]["t"] == iso(seeded) and rows[0]["errors"] == 4
    per_model = get(client, "/calls/timeseries", keys.read, start=iso(seeded), end=iso(seeded + 2 * HOUR_US),
                    bucket="hour", by_model=True).json()
    assert {(r["model"], r["calls"]) for r in per_model} == {("gpt-4o", 40), ("claude-haiku-4-5", 20)}
    rates = get(client, "/errors/rate", keys.read, start=iso(seeded), end=iso(seeded + HOUR_US),
                bucket="15m").json()
    assert [r["calls"] for r in rates] == [15, 15, 10] and rates[0]["error_rate"] == pytest.approx(2 / 15)


def test_latency_percentiles_per_model(client, keys, seeded):
    rows = {r["model"]: r for r in get(client, "/latency/percentiles", keys.read).json()}
    gpt = rows["gpt-4o"]
    exact_p50 = sorted(1000 + i * 10 for i in range(40))[20]
    assert gpt["latency_ms_p50"] == pytest.approx(exact_p50, rel=0.05)
    assert gpt["ttft_ms_p95"] == pytest.approx(238, rel=0.05)
    assert rows["claude-haiku-4-5"]["ttft_ms_p50"] is None  # never streamed: no TTFT, not 0
    assert rows["claude-haiku-4-5"]["latency_ms_p99"] == pytest.approx(500, rel=0.01)


def test_cost_by_model(client, keys, seeded):
    rows = get(client, "/cost/by-model", keys.read).json()
    assert [r["model"] for r in rows] == ["gpt-4o", "claude-haiku-4-5"]
    assert rows[0]["cost_usd"] == pytest.approx(0.4) and rows[1]["cache_read_tokens"] == 400


def test_trace_by_id_and_isolation(client, store, keys, seeded):
    trace_id = store.query("SELECT trace_id FROM llm_calls WHERE project_id = 'p1' LIMIT 1").result_rows[0][0]
    body = get(client, f"/traces/{trace_id}", keys.read).json()
    assert body["trace_id"] == trace_id and body["spans"][0]["type"] == "llm"
    other = store.query("SELECT trace_id FROM llm_calls WHERE project_id = 'p2' LIMIT 1").result_rows[0][0]
    assert get(client, f"/traces/{other}", keys.read).status_code == 404
    assert get(client, "/traces/not-hex", keys.read).status_code == 400


def test_other_projects_data_is_invisible(client, keys, seeded):
    mine = get(client, "/cost/by-model", keys.read).json()
    assert "secret-model" not in {r["model"] for r in mine}
    theirs = get(client, "/calls/summary", keys.other_project).json()
    assert theirs["calls"] == 7


@pytest.mark.parametrize(
    "path, params, status, word",
    [
        ("/calls/summary", {"start": "2026-01-02T00:00:00", "end": "2026-01-01T00:00:00"}, 400, "start"),
        ("/calls/summary", {"start": "2020-01-01T00:00:00", "end": "2026-01-01T00:00:00"}, 400, "range"),
        ("/calls/summary", {"start": "yesterday"}, 422, "start"),
        ("/calls/timeseries", {"bucket": "week"}, 422, "bucket"),
        ("/calls/timeseries", {"start": "2026-01-01T00:00:00", "end": "2026-01-10T00:00:00", "bucket": "minute"},
         400, "bucket"),
        ("/calls/summary", {"model": "m" * 500}, 422, "model"),
        ("/calls/summary", {"end": "0001-01-01T00:00:00Z"}, 400, "start"),  # no default start a day before it
        ("/calls/summary", {"start": "0001-01-01T00:00:00+05:00"}, 400, "UTC"),  # before year 1 in UTC
    ],
)
def test_bad_parameters_are_named(client, keys, path, params, status, word):
    response = get(client, path, keys.read, **params)
    assert response.status_code == status
    assert word in response.json()["error"]


def test_query_needs_read_scope(client, keys):
    assert get(client, "/calls/summary", keys.ingest).status_code == 403
    assert client.get("/api/v1/calls/summary").status_code == 401


def test_injection_strings_are_just_values(client, keys, seeded):
    for evil in ("' OR 1=1 --", "gpt-4o'); DROP TABLE llm_calls; --", "\\'"):
        response = get(client, "/calls/summary", keys.read, model=evil)
        assert response.status_code == 200 and response.json()["calls"] == 0
    assert get(client, "/calls/summary", keys.read).json()["calls"] == 60


def test_health_endpoints(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ready"}
    assert "inferwatch_write_queue_rows 0" in scrape(client)
