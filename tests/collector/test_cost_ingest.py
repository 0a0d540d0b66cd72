"""Cost at ingest: OTLP spans in, priced rows out (bundled table, a user price file, flags, app-side cache hits)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from inferwatch_collector.app import create_app
from inferwatch_collector.cost.price_table import PriceFileError, bundled_table

from tests.helpers import payloads
from tests.helpers.keys import Keys

PROTOBUF = {"Content-Type": "application/x-protobuf"}
COLUMNS = ("model", "cost_usd", "cost_input_usd", "cost_cache_read_usd", "cost_cache_write_usd", "cost_output_usd",
           "cost_reasoning_usd", "cache_savings_usd", "unpriced", "usage_missing", "cache_hit", "cost_avoided_usd",
           "cache_write_1h_tokens", "price_version")


def send(client: TestClient, key: str, *spans) -> None:
    body = payloads.make_request(*spans).SerializeToString()
    response = client.post("/v1/traces", content=body, headers={**PROTOBUF, **Keys.header(key)})
    assert response.status_code == 200, response.text


def rows(store) -> list[dict]:
    found = store.query(f"SELECT {', '.join(COLUMNS)} FROM llm_calls ORDER BY start_time, model").result_rows
    return [dict(zip(COLUMNS, row)) for row in found]


def test_a_call_is_priced_from_the_bundled_table(client, store, keys):
    send(client, keys.ingest, payloads.otel_genai_span())  # gpt-4o-mini: 1,200 in (1,024 cached), 151 out
    (row,) = rows(store)
    # $0.15/M uncached, $0.075/M cached, $0.60/M out: 176 × 0.15e-6 + 1,024 × 0.075e-6 + 151 × 0.6e-6
    assert row["cost_input_usd"] == 0.0000264 and row["cost_cache_read_usd"] == 0.0000768
    assert row["cost_output_usd"] == 0.0000906 and row["cost_usd"] == 0.0001938
    assert row["cache_savings_usd"] == 0.0000768  # 1,024 × (0.15 − 0.075)/M
    assert row["price_version"] == bundled_table().version and not row["unpriced"]
    hourly = store.query("SELECT sum(cost_usd), sum(unpriced) FROM llm_calls_1h").result_rows
    assert hourly == [(0.0001938, 0)]


def test_unknown_model_and_missing_usage_are_flagged_not_silently_zero(client, store, keys):
    no_usage = payloads.otel_genai_span(**{"gen_ai.request.model": "gpt-4o"})
    for name in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens",
                 "gen_ai.usage.reasoning.output_tokens"):
        del_attribute(no_usage, name)
    send(client, keys.ingest, payloads.otel_genai_span(**{"gen_ai.request.model": "acme-llm-9000"}), no_usage)
    by_model = {row["model"]: row for row in rows(store)}
    assert by_model["acme-llm-9000"]["unpriced"] and by_model["acme-llm-9000"]["cost_usd"] == 0.0
    assert by_model["gpt-4o"]["usage_missing"] and not by_model["gpt-4o"]["unpriced"]
    assert by_model["gpt-4o"]["cost_usd"] == 0.0
    counted = store.query("SELECT sum(unpriced), sum(usage_missing), sum(calls) FROM cost_1d").result_rows
    assert counted == [(1, 1, 2)]


def del_attribute(span, key: str) -> None:
    kept = [kv for kv in span.attributes if kv.key != key]
    del span.attributes[:]
    span.attributes.extend(kept)


def test_app_cache_hit_costs_nothing_and_records_what_it_avoided(client, store, keys):
    send(client, keys.ingest, payloads.otel_genai_span(**{"inferwatch.cache_hit": True}))
    (row,) = rows(store)
    assert row["cache_hit"] and row["cost_usd"] == 0.0 and row["cost_input_usd"] == 0.0
    assert row["cost_avoided_usd"] == 0.0001938
    assert store.query("SELECT sum(cache_hits), sum(cost_avoided_usd) FROM cost_1d").result_rows == [(1, 0.0001938)]


def test_one_hour_cache_writes_are_priced_at_their_rate(client, store, keys):
    # claude-sonnet-4-5 via our SDK's span: 5,300 in = 300 uncached + 4,000 read + 1,000 written (400 for 1 h)
    send(client, keys.ingest, payloads.sdk_span(**{"inferwatch.usage.cache_creation_1h.input_tokens": 400}))
    (row,) = rows(store)
    price = bundled_table().lookup("claude-sonnet-4-5")
    write_5m, write_1h = price.fields["cache_creation_input_token_cost"], price.fields[
        "cache_creation_input_token_cost_above_1hr"]
    assert row["cache_write_1h_tokens"] == 400
    assert row["cost_cache_write_usd"] == pytest.approx(float(600 * write_5m + 400 * write_1h), abs=1e-15)


def write_prices(path: Path, input_rate: float) -> None:
    path.write_text(json.dumps({"models": {"gpt-4o-mini": {
        "input_cost_per_token": input_rate, "output_cost_per_token": 1e-06, "litellm_provider": "openai",
        "mode": "chat"}}}))


def test_user_price_file_overrides_and_is_reloaded_when_it_changes(app_settings, store, keys, tmp_path):
    prices = tmp_path / "prices.json"
    write_prices(prices, 1e-06)
    settings = app_settings.model_copy(update={"prices_file": prices})
    with TestClient(create_app(settings, store=store)) as client:
        send(client, keys.ingest, payloads.otel_genai_span(**{"inferwatch.feature": "1-before"}))
        write_prices(prices, 2e-06)
        stat = prices.stat()
        os.utime(prices, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a later mtime, surely
        send(client, keys.ingest, payloads.otel_genai_span(**{"inferwatch.feature": "2-after"}))
    found = store.query("SELECT cost_usd, price_version FROM llm_calls ORDER BY feature").result_rows
    first, second = ({"cost_usd": cost, "price_version": version} for cost, version in found)
    # no cache rate in the user entry: cached reads cost the input rate (never free), so input = 1,200 tokens
    assert first["cost_usd"] == 0.001351 and second["cost_usd"] == 0.002551  # 1,200 × rate + 151 × $1/M
    assert first["price_version"].startswith(bundled_table().version + "+")
    assert first["price_version"] != second["price_version"]


def test_a_bad_price_file_stops_the_start_with_its_reason(app_settings, store, keys, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"gpt-4o-mini": {"input_cost_per_token": -1}}}))
    settings = app_settings.model_copy(update={"prices_file": prices})
    with pytest.raises(PriceFileError, match="gpt-4o-mini"):
        with TestClient(create_app(settings, store=store)):
            pass
