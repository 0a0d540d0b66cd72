"""The collector's dashboard API (``routes/dashboard.py``) against the seeded store: every table the planner may
choose gives the same answer as the raw calls, filters and scoping hold, prompts need their scope.

The collector's own app (no alerting routes) serves the dashboard's seeded traffic on 127.0.0.1, once for the
module (the database stays open meanwhile, so these tests open no other store)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from inferwatch_collector.app import create_app
from inferwatch_collector.queries import TimeRange
from inferwatch_collector.routes.dashboard import choose_source, plan_totals
from inferwatch_dashboard import timerange
from tests.helpers import seed
from tests.helpers.live_collector import Collector, seeded_collector

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collector]:
    with seeded_collector(tmp_path_factory.mktemp("dashboard-api") / "data", create_app) as running:
        yield running


def get(collector: Collector, path: str, key: str | None = None, expect: int = 200, **params: Any) -> Any:
    response = httpx.get(f"{collector.url}/api/v1/dashboard/{path}", params=params, timeout=30,
                         headers={"Authorization": f"Bearer {key or collector.key}"})
    assert response.status_code == expect, response.text[:500]
    return response.json()


def window(days: float) -> dict[str, str]:
    end = datetime.now(UTC)
    return {"start": (end - timedelta(days=days)).isoformat(), "end": end.isoformat()}


@pytest.mark.parametrize(("dims", "groups", "days", "bucket", "table"), [
    ({"model"}, {"volume", "latency"}, 1, 300, "llm_calls_1m"),
    ({"model"}, {"volume", "latency"}, 7, 3600, "llm_calls_1h"),
    ({"model"}, {"volume", "flags", "latency"}, 30, 86400, "llm_calls_1d"),
    ({"feature"}, {"volume", "flags", "latency"}, 30, 86400, "llm_calls_1d"),  # a feature filter needs no scan
    ({"feature"}, {"volume"}, 1, 3600, "usage_1h"),
    ({"feature"}, {"flags"}, 7, 3600, "llm_calls"),  # usage_1h keeps no flags, and hourly buckets need hours
    ({"experiment", "variant"}, {"volume", "latency"}, 7, 3600, "ab_rollup_1h"),
    ({"variant"}, {"volume"}, 7, 3600, "llm_calls"),  # without an experiment ab_rollup_1h misses calls
    ({"user_hash"}, {"volume", "cache"}, 90, 86400, "cost_1d"),
    ({"user_hash"}, {"volume"}, 7, 3600, "llm_calls"),
    ({"model"}, {"decode"}, 7, 86400, "llm_calls"),
    ({"model"}, {"volume"}, 7, 300, "llm_calls"),  # a 5-minute bucket finer than any rollup allowed here
])
def test_a_series_reads_the_cheapest_table_whose_grain_divides_its_bucket(dims, groups, days, bucket, table):
    rng = TimeRange(NOW - timedelta(days=days), NOW)
    assert choose_source(dims, groups, rng, bucket, now=NOW).table == table


def tables(tiles: list[tuple[Any, TimeRange]]) -> list[str]:
    return [source.table for source, _ in tiles]


@pytest.mark.parametrize(("dims", "groups", "start", "want"), [
    # NOW is on the hour: whole days in the middle, whole hours at the edges.
    (set(), {"volume", "latency"}, NOW - timedelta(days=30), ["llm_calls_1h", "llm_calls_1d", "llm_calls_1h"]),
    ({"model"}, {"volume"}, NOW - timedelta(hours=3, minutes=20), ["llm_calls_1m", "llm_calls_1h"]),
    # No hourly or minute table has a feature's flags: the edges of the days are read raw.
    ({"feature"}, {"volume", "flags"}, NOW - timedelta(days=30), ["llm_calls", "llm_calls_1d", "llm_calls"]),
    ({"feature"}, {"volume"}, NOW - timedelta(days=2, seconds=30),
     ["llm_calls", "usage_1h", "llm_calls_1d", "usage_1h"]),
    ({"user_hash"}, {"volume"}, NOW - timedelta(days=7), ["llm_calls", "cost_1d", "llm_calls"]),
    ({"model"}, {"decode"}, NOW - timedelta(days=30), ["llm_calls"]),
    ({"model"}, {"volume"}, NOW - timedelta(minutes=30), ["llm_calls_1m"]),
])
def test_totals_are_tiled_from_the_coarsest_tables_that_answer(dims, groups, start, want):
    tiles = plan_totals(dims, groups, TimeRange(start, NOW), now=NOW)
    assert tables(tiles) == want
    assert tiles[0][1].start == start and tiles[-1][1].end == NOW
    for (_, left), (_, right) in zip(tiles, tiles[1:]):
        assert left.end == right.start  # contiguous, no overlap
    for source, tile in tiles:
        if source.grain_s:
            assert tile.start.timestamp() % source.grain_s == 0 == tile.end.timestamp() % source.grain_s


def test_minute_tiles_stay_within_the_minute_rollups_retention():
    start = NOW - timedelta(days=60, minutes=30)
    tiles = plan_totals({"model"}, {"volume"}, TimeRange(start, NOW), now=NOW)
    assert tables(tiles) == ["llm_calls", "llm_calls_1h", "llm_calls_1d", "llm_calls_1h"]


def test_totals_match_the_seeded_calls(collector: Collector):
    exact = seed.totals(collector.rows["current"])
    window = timerange.window("24h")
    answer = get(collector, "stats", need="volume,flags,latency", **window.params())
    # whole hours, and the minutes at both ends; in the first minute of an hour both ends are on the hour
    assert answer["source"] == ("llm_calls_1h" if window.end.minute == 0 else "llm_calls_1m+llm_calls_1h")
    row = answer["rows"][0]
    assert (row["calls"], row["errors"], row["refusals"]) == (exact["calls"], exact["errors"], exact["refusals"])
    assert row["cost_usd"] == pytest.approx(exact["cost_usd"], abs=1e-9)
    assert row["ttft_ms_p50"] < 2000 < row["ttft_ms_p99"]


def test_every_table_agrees_with_the_raw_calls(collector: Collector):
    """The same week by model from the rollups (days, hours, minutes, seconds) and (need=decode forces it) from
    the raw calls."""
    params = window(7)
    rollup = get(collector, "stats", need="volume", by="model", **params)
    raw = get(collector, "stats", need="volume,decode", by="model", **params)
    assert set(rollup["source"].split("+")) == {"llm_calls_1d", "llm_calls_1h", "llm_calls_1m", "llm_calls"}
    assert raw["source"] == "llm_calls"
    pick = lambda answer: {r["model"]: (r["calls"], round(r["cost_usd"], 9)) for r in answer["rows"]}  # noqa: E731
    assert pick(rollup) == pick(raw)
    search = sum(r.feature == "search" for r in collector.rows["current"] + collector.rows["previous"])
    usage = get(collector, "stats", need="volume", feature="search", bucket="day", **params)
    assert usage["source"] == "llm_calls_1d" and sum(r["calls"] for r in usage["rows"]) == search
    by_user = get(collector, "stats", need="volume,cache", by="user_hash", **window(60))
    assert "cost_1d" in by_user["source"].split("+")
    assert sum(r["calls"] for r in by_user["rows"]) == sum(len(rows) for rows in collector.rows.values())


def test_tiled_top_values_are_ranked_over_every_tile(collector: Collector):
    """A model whose only call lies in a small edge tile (minutes or seconds) still gets its own row: the top N
    are ranked over the whole range, not over the largest tile (which once folded it into '(other)')."""
    [call] = [r for r in collector.rows["current"] if r.model == "mystery-model"]
    at = datetime.fromtimestamp(call.start_time / 1e6, UTC)
    hour = at.replace(minute=0, second=0, microsecond=0)
    if at - hour < timedelta(minutes=58):  # the call in the tail after the last whole hour
        start, end = hour - timedelta(hours=3), at + timedelta(seconds=61)
    else:  # the call in the head before the first whole hour
        start, end = at - timedelta(seconds=61), hour + timedelta(hours=4)
    params = {"start": start.isoformat(), "end": end.isoformat()}
    tiled = get(collector, "stats", need="volume", by="model", **params)
    raw = get(collector, "stats", need="volume,decode", by="model", **params)
    assert "llm_calls_1h" in tiled["source"].split("+") and raw["source"] == "llm_calls"
    pick = lambda answer: {r["model"]: r["calls"] for r in answer["rows"]}  # noqa: E731
    assert pick(tiled) == pick(raw)
    assert pick(tiled)["mystery-model"] == 1 and "(other)" not in pick(tiled)


def test_tiled_totals_with_a_feature_filter_equal_the_raw_calls(collector: Collector):
    """30 days of one feature's flags and latency, per model: whole days from llm_calls_1d and the edges from
    the raw calls give the same counts as the raw calls alone, and percentiles within t-digest error."""
    end = datetime.now(UTC).replace(microsecond=0)
    params = {"start": (end - timedelta(days=30, seconds=17)).isoformat(), "end": end.isoformat()}
    tiled = get(collector, "stats", need="volume,flags,latency", feature="search", by="model", **params)
    raw = get(collector, "stats", need="volume,flags,latency,decode", feature="search", by="model", **params)
    assert "llm_calls_1d" in tiled["source"].split("+") and raw["source"] == "llm_calls"
    counts = ("calls", "errors", "refusals", "truncated", "empty_responses", "unpriced", "usage_missing")
    pick = lambda answer: {r["model"]: tuple(r[c] for c in counts) + (round(r["cost_usd"], 9),)  # noqa: E731
                           for r in answer["rows"]}
    assert pick(tiled) == pick(raw)
    search = [r for r in collector.rows["current"] + collector.rows["previous"] if r.feature == "search"]
    assert sum(r["calls"] for r in tiled["rows"]) == len(search)
    for mine, theirs in zip(tiled["rows"], raw["rows"], strict=True):
        for measure in ("latency_ms_p50", "ttft_ms_p95"):
            assert mine[measure] == pytest.approx(theirs[measure], rel=0.05), (mine["model"], measure)


def test_series_by_dimension_keeps_the_top_values_and_folds_the_rest(collector: Collector):
    answer = get(collector, "stats", need="volume", by="model", top=1, **timerange.window("24h").params())
    calls = {r["model"]: r["calls"] for r in answer["rows"]}
    assert set(calls) == {"claude-3-5-sonnet", "(other)"}  # the most expensive model, then everything else
    assert sum(calls.values()) == len(collector.rows["current"])
    series = get(collector, "stats", need="volume", by="model", bucket="hour", **timerange.window("24h").params())
    assert sum(r["calls"] for r in series["rows"]) == len(collector.rows["current"])
    assert all(r["t"].endswith("+00:00") for r in series["rows"])


def test_experiment_variants_and_facets(collector: Collector):
    params = timerange.window("24h").params()
    variants = get(collector, "stats", need="volume,latency", experiment=seed.EXPERIMENT, by="variant", **params)
    got = {r["variant"]: r["calls"] for r in variants["rows"]}
    assert got == {v: sum(r.variant == v and r.experiment == seed.EXPERIMENT for r in collector.rows["current"])
                   for v in ("control", "treatment")}
    facets = get(collector, "facets", **params)
    assert facets["model"] == sorted({*seed.MODELS, "mystery-model"})
    assert facets["provider"] == ["acme", "anthropic", "openai"]
    assert facets["feature"] == ["chat", "search"] and facets["prompt_template"] == ["answer", "summarize"]
    assert facets["experiment"] == [seed.EXPERIMENT]
    assert facets["variants"] == {seed.EXPERIMENT: ["control", "treatment"]}


def test_a_key_sees_only_its_project(collector: Collector):
    params = timerange.window("24h").params()
    assert get(collector, "stats", key=collector.empty_key, **params)["rows"][0]["calls"] == 0
    assert get(collector, "calls", key=collector.empty_key, **params)["calls"] == []
    assert get(collector, "calls", key=collector.empty_key, trace_id=seed.TRACE_ID)["calls"] == []
    assert get(collector, "whoami", key=collector.empty_key)["project_id"] == "p-empty"
    assert get(collector, "notifications", key=collector.empty_key, **params)["notifications"] == []
    log = get(collector, "notifications", **params)["notifications"]
    assert sorted((n["channel"], n["ok"]) for n in log) == [("pagerduty", False), ("slack", True)]


def test_call_search_filters(collector: Collector):
    params = timerange.window("24h").params()
    rows = collector.rows["current"]
    assert len(get(collector, "calls", flag="truncated", **params)["calls"]) == len(seed.TRUNCATED)
    errors = get(collector, "calls", status="error", **params)["calls"]
    assert len(errors) == len(seed.ERRORS) and {c["error_type"] for c in errors} == {"RateLimitError"}
    slow = get(collector, "calls", min_latency_ms=4000, **params)["calls"]
    assert len(slow) == sum(r.latency_ms >= 4000 for r in rows) and all(c["latency_ms"] >= 4000 for c in slow)
    user = get(collector, "calls", user_hash=seed.USERS[1], limit=500, **params)["calls"]
    assert len(user) == sum(r.user_hash == seed.USERS[1] for r in rows)
    newest = get(collector, "calls", limit=5, **params)
    assert newest["more"] and len(newest["calls"]) == 5
    assert [c["start_time"] for c in newest["calls"]] == sorted((c["start_time"] for c in newest["calls"]),
                                                                reverse=True)
    by_trace = get(collector, "calls", trace_id=seed.TRACE_ID.upper())["calls"]
    assert [c["span_id"] for c in by_trace] == [seed.LLM_SPAN_ID]
    assert "32 hexadecimal" in get(collector, "calls", trace_id="xyz", expect=400)["error"]


def test_prompt_text_needs_the_prompts_scope(collector: Collector):
    text = get(collector, f"prompts/{seed.TRACE_ID}")["prompts"]
    assert [(p["prompt"], p["completion"]) for p in text] == [(seed.PROMPT_TEXT, seed.COMPLETION_TEXT)]
    denied = get(collector, f"prompts/{seed.TRACE_ID}", key=collector.read_only_key, expect=403)
    assert "prompts:read" in denied["error"]


def test_feedback_and_parameter_errors(collector: Collector):
    params = timerange.window("24h").params()
    total = get(collector, "feedback", **params)["rows"][0]
    assert (total["thumbs_up"], total["thumbs_down"]) == (8, 2)
    assert "need: unknown" in get(collector, "stats", need="volume,bogus", expect=400)["error"]
    assert "bucket" in get(collector, "stats", bucket="minute", expect=400, **window(7))["error"]
    presets = get(collector, "capacity/presets")
    assert "llama-3-70b" in {p["name"] for p in presets["presets"]}
