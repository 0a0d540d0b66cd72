"""/metrics on inserts and parts: inserts per table and their sizes (writer), parts created and active (system.parts)."""

from __future__ import annotations

import re

from tests.helpers import payloads
from tests.helpers.keys import Keys
from tests.helpers.metrics import scrape


def value(text: str, series: str) -> float:
    """The value of one exact series (name and labels) in a Prometheus text; fails when it is missing."""
    match = re.search(rf"^{re.escape(series)} (\S+)$", text, re.MULTILINE)
    assert match, f"{series} missing from /metrics"
    return float(match.group(1))


def export(client, key: str, spans: int) -> None:
    response = client.post("/v1/traces", content=payloads.genai_batch(spans).SerializeToString(),
                           headers={"Content-Type": "application/x-protobuf", **Keys.header(key)})
    assert response.status_code == 200


def test_metrics_show_inserts_their_sizes_and_the_parts_per_table(client, keys):
    export(client, keys.ingest, 3)
    export(client, keys.ingest, 5)
    text = scrape(client)
    inserts = value(text, 'inferwatch_inserts_total{table="llm_calls"}')
    assert inserts == client.app.state.writer.stats.inserts.inserts["llm_calls"] >= 1
    assert value(text, 'inferwatch_insert_rows_count{table="llm_calls"}') == inserts
    assert value(text, 'inferwatch_insert_rows_sum{table="llm_calls"}') == 8
    assert value(text, 'inferwatch_insert_rows_bucket{table="llm_calls",le="10"}') == inserts  # 3 and 5 rows
    assert value(text, 'inferwatch_insert_rows_bucket{table="llm_calls",le="1"}') == 0
    assert value(text, 'inferwatch_insert_bytes_sum{table="llm_calls"}') > 0
    assert value(text, 'inferwatch_min_insert_interval_seconds') == 0.1
    # every insert made a part in llm_calls (one partition: today) and in each rollup its views feed
    assert value(text, 'inferwatch_parts_created_total{table="llm_calls"}') >= inserts
    assert value(text, 'inferwatch_parts_created_total{table="llm_calls_1m"}') >= inserts
    assert 1 <= value(text, 'inferwatch_active_parts_max_per_partition{table="llm_calls"}') \
        <= value(text, 'inferwatch_active_parts{table="llm_calls"}') <= inserts
    assert "# TYPE inferwatch_parts_created_total counter" in text


def test_parts_are_left_out_while_the_database_is_down_and_the_rest_answers(client, store, keys, monkeypatch):
    export(client, keys.ingest, 2)

    def down(*args, **kwargs):
        raise ConnectionRefusedError("[Errno 111] Connection refused")

    monkeypatch.setattr(store, "query", down)
    text = scrape(client)
    assert "inferwatch_active_parts" not in text and "inferwatch_parts_created_total" not in text
    assert value(text, 'inferwatch_inserts_total{table="llm_calls"}') >= 1
