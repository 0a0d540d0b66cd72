"""POST /v1/traces through the real app, writer and embedded ClickHouse."""

from __future__ import annotations

import gzip
import threading
import time

import pytest
from fastapi.testclient import TestClient
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from inferwatch_collector.app import create_app
from inferwatch_collector.rows import LLM_CALL_COLUMNS

from tests.helpers import payloads
from tests.helpers.keys import Keys
from tests.helpers.metrics import scrape

PROTOBUF = {"Content-Type": "application/x-protobuf"}
JSON = {"Content-Type": "application/json"}


def post(client: TestClient, body: bytes, key: str, headers: dict[str, str] = PROTOBUF):
    return client.post("/v1/traces", content=body, headers={**headers, **Keys.header(key)})


def count(store, table: str = "llm_calls") -> int:
    return store.query(f"SELECT count() FROM {table}").result_rows[0][0]


def rollup_calls(store, table: str = "llm_calls_1m") -> int:
    return store.query(f"SELECT sum(calls) FROM {table}").result_rows[0][0] or 0


def stored_calls(store) -> list[tuple]:
    cols = ", ".join(LLM_CALL_COLUMNS)
    return store.query(f"SELECT {cols} FROM llm_calls ORDER BY project_id").result_rows


def test_protobuf_span_becomes_a_typed_row(client, store, keys):
    request = payloads.make_request(payloads.otel_genai_span())
    response = post(client, request.SerializeToString(), keys.ingest)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-protobuf"
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 0
    row = dict(zip(LLM_CALL_COLUMNS, stored_calls(store)[0]))
    assert row["project_id"] == "p1" and row["model"] == "gpt-4o-mini" and row["provider"] == "openai"
    assert (row["input_tokens"], row["output_tokens"], row["cache_read_tokens"]) == (1200, 151, 1024)
    assert row["ttft_ms"] == 250 and row["latency_ms"] == 1500 and row["streamed"] is True
    assert rollup_calls(store, "llm_calls_1m") == 1 and rollup_calls(store, "llm_calls_1h") == 1


def test_protobuf_and_json_give_identical_rows(client, store, keys):
    request = payloads.make_request(payloads.sdk_span(), payloads.retrieval_span())
    assert post(client, request.SerializeToString(), keys.ingest).status_code == 200
    json_response = post(client, payloads.to_otlp_json(request), keys.other_project, JSON)
    assert json_response.status_code == 200, json_response.text
    assert json_response.headers["content-type"] == "application/json"
    rows = stored_calls(store)
    assert len(rows) == 2
    assert rows[0][1:] == rows[1][1:]  # everything but the project is the same
    spans = store.query("SELECT * EXCEPT (project_id, ingested_at) FROM spans ORDER BY project_id").result_rows
    assert len(spans) == 2 and spans[0] == spans[1]


def test_gzip_body_is_accepted(client, store, keys):
    body = gzip.compress(payloads.make_request(payloads.otel_genai_span()).SerializeToString())
    response = post(client, body, keys.ingest, {**PROTOBUF, "Content-Encoding": "gzip"})
    assert response.status_code == 200, response.text
    assert count(store) == 1


def test_request_retried_three_times_lands_once(client, store, keys):
    body = payloads.genai_batch(50).SerializeToString()
    for _ in range(4):  # the original and three retries, byte for byte
        assert post(client, body, keys.ingest).status_code == 200
    assert count(store) == 50
    for rollup in ("llm_calls_1m", "llm_calls_1h", "usage_1h", "ab_rollup_1h"):
        assert rollup_calls(store, rollup) == 50, rollup
    metrics = scrape(client)
    assert "inferwatch_duplicate_requests_total 3" in metrics


def test_some_bad_spans_give_partial_success_and_the_rest_land(client, store, keys):
    good = payloads.otel_genai_span()
    bad = payloads.otel_genai_span()
    bad.trace_id = b"\x01\x02"  # not 16 bytes
    response = post(client, payloads.make_request(good, bad).SerializeToString(), keys.ingest)
    assert response.status_code == 200
    partial = ExportTraceServiceResponse.FromString(response.content).partial_success
    assert partial.rejected_spans == 1 and "trace_id" in partial.error_message
    assert count(store) == 1


@pytest.mark.parametrize(
    "body, headers, status, message",
    [
        (b"\xff\xff\xff garbage", PROTOBUF, 400, "invalid protobuf"),
        (b'{"resourceSpans": [{"scopeSpans": 5}]}', JSON, 400, "scopeSpans"),
        (b"{not json", JSON, 400, "invalid JSON"),
        (b"hello", {"Content-Type": "text/plain"}, 415, "content-type"),
        (b"not gzip", {**PROTOBUF, "Content-Encoding": "gzip"}, 400, "gzip"),
        (b"x", {**PROTOBUF, "Content-Encoding": "br"}, 415, "encoding"),
    ],
)
def test_malformed_requests_get_a_clear_4xx_and_write_nothing(client, store, keys, body, headers, status, message):
    response = post(client, body, keys.ingest, headers)
    assert response.status_code == status
    if response.headers["content-type"] == "application/x-protobuf":
        text = status_pb2.Status.FromString(response.content).message
    else:
        text = response.json()["message"]
    assert message.lower() in text.lower()
    assert count(store) == 0 and count(store, "spans") == 0


def test_auth_failures_write_nothing(client, store, keys):
    body = payloads.make_request(payloads.otel_genai_span()).SerializeToString()
    assert client.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 401
    assert post(client, body, "iwk_000000000000_" + "A" * 43).status_code == 401
    assert post(client, body, keys.read).status_code == 403  # read scope cannot ingest
    assert count(store) == 0


def test_key_in_the_alternative_header_works(client, store, keys):
    body = payloads.make_request(payloads.otel_genai_span()).SerializeToString()
    response = client.post("/v1/traces", content=body, headers={**PROTOBUF, "x-inferwatch-api-key": keys.ingest})
    assert response.status_code == 200


def test_body_over_the_limit_is_413(app_settings, store, keys):
    small = app_settings.model_copy(update={"max_body_bytes": 2048})
    body = payloads.genai_batch(40).SerializeToString()
    assert len(body) > 2048
    with TestClient(create_app(small, store=store)) as client:
        assert post(client, body, keys.ingest).status_code == 413
        bomb = gzip.compress(b"\0" * 10_000_000)  # small on the wire, huge inflated
        response = post(client, bomb, keys.ingest, {**PROTOBUF, "Content-Encoding": "gzip"})
        assert response.status_code == 413
    assert count(store) == 0


@pytest.fixture
def held_inserts(store, monkeypatch) -> threading.Event:
    """The collector's inserts wait until the returned event is set (10 s at most): a request stays in the
    writer (queued, in flight, holding its budget) for as long as a test needs."""
    gate = threading.Event()
    insert = store.insert_native

    def held(*args, **kwargs):
        gate.wait(10)
        return insert(*args, **kwargs)

    monkeypatch.setattr(store, "insert_native", held)
    return gate


def post_while_first_is_held(client, key: str, held, gate: threading.Event) -> tuple:
    """Post a first request from a thread, wait until ``held()`` says the collector holds it, post a second,
    then open ``gate`` (the held inserts) so the first completes.

    Returns ``(first_response, second_response)``.
    """
    results = {}
    first = threading.Thread(
        target=lambda: results.setdefault("first", post(client, payloads.genai_batch(5).SerializeToString(), key)))
    first.start()
    for _ in range(500):
        if held():
            break
        threading.Event().wait(0.01)
    second = post(client, payloads.genai_batch(5).SerializeToString(), key)
    gate.set()
    first.join(10)
    return results["first"], second


def test_full_write_queue_answers_503_with_retry_after(app_settings, store, keys, held_inserts):
    # One request fills the queue and waits for its (held) insert; the next one is shed, not buffered.
    small = app_settings.model_copy(update={"max_queue_rows": 5})
    with TestClient(create_app(small, store=store)) as client:
        writer = client.app.state.writer
        first, shed = post_while_first_is_held(client, keys.ingest, lambda: writer.pending_rows, held_inserts)
        assert shed.status_code == 503
        assert int(shed.headers["Retry-After"]) >= 1
        assert first.status_code == 200
        assert 'inferwatch_requests_rejected_total{reason="queue_full"} 1' in scrape(client)
    assert count(store) == 5  # only the accepted request


def test_content_is_redacted_into_prompt_logs_and_never_into_metrics(client, store, keys):
    prompt = '[{"role": "user", "parts": [{"type": "text", "content": "mail jane.doe@example.com key sk-proj-' \
             'abcdefghijklmnopqrstuvwxyz0123456789"}]}]'
    span = payloads.otel_genai_span(**{"gen_ai.input.messages": prompt})
    assert post(client, payloads.make_request(span).SerializeToString(), keys.ingest).status_code == 200
    everything = str(store.query("SELECT * FROM llm_calls").result_rows)
    assert "jane.doe" not in everything and "gen_ai.input.messages" not in everything
    logged = store.query("SELECT prompt FROM prompt_logs").result_rows[0][0]
    assert "<EMAIL_ADDRESS>" in logged and "jane.doe@example.com" not in logged
    assert "sk-proj-abcdef" not in logged


def test_capture_off_stores_no_content(app_settings, store, keys):
    off = app_settings.model_copy(update={"content_capture": "off"})
    span = payloads.otel_genai_span(**{"gen_ai.input.messages": '[{"role":"user","content":"hi"}]'})
    with TestClient(create_app(off, store=store)) as client:
        assert post(client, payloads.make_request(span).SerializeToString(), keys.ingest).status_code == 200
    assert count(store) == 1 and count(store, "prompt_logs") == 0


def test_a_key_only_writes_its_own_project(client, store, keys):
    assert post(client, payloads.genai_batch(3).SerializeToString(), keys.other_project).status_code == 200
    assert store.query("SELECT DISTINCT project_id FROM llm_calls").result_rows == [("p2",)]
    summary = client.get("/api/v1/calls/summary",
                         headers=Keys.header(keys.read))
    assert summary.json()["calls"] == 0


def test_worker_processes_give_the_same_rows_and_errors(app_settings, store, keys):
    """The production path: decoding and normalising in a spawned ingest worker process."""
    pooled = app_settings.model_copy(update={"ingest_workers": 1})
    request = payloads.make_request(payloads.sdk_span(), payloads.retrieval_span())
    with TestClient(create_app(pooled, store=store)) as client:
        assert client.app.state.ingest_pool.workers == 1
        assert post(client, request.SerializeToString(), keys.ingest).status_code == 200
        bad = post(client, b"\x0a\xff", keys.ingest)
        assert bad.status_code == 400 and "invalid protobuf" in status_pb2.Status.FromString(bad.content).message
    with TestClient(create_app(app_settings, store=store)) as client:  # in-process, other project
        assert post(client, request.SerializeToString(), keys.other_project).status_code == 200
    rows = stored_calls(store)
    assert len(rows) == 2 and rows[0][1:] == rows[1][1:]
    assert count(store, "spans") == 2


def test_inflight_byte_budget_sheds_load_before_decoding(app_settings, store, keys, held_inserts):
    # The first request holds the whole byte budget while it waits for its (held) insert; the second waits
    # inflight_wait_s for room, then is shed.
    tight = app_settings.model_copy(update={"max_inflight_bytes": 1024, "inflight_wait_s": 0.2,
                                            "inflight_project_share": 1.0})
    with TestClient(create_app(tight, store=store)) as client:
        budget = client.app.state.inflight
        first, shed = post_while_first_is_held(client, keys.ingest, lambda: budget.used, held_inserts)
        assert shed.status_code == 503 and shed.headers["Retry-After"] == "1"
        assert first.status_code == 200
        assert budget.used == 0  # released once committed
        metrics = scrape(client)
        assert 'inferwatch_requests_rejected_total{reason="inflight_full"} 1' in metrics
        assert 'inferwatch_inflight_rejections_total{route="traces",reason="budget_full"} 1' in metrics
    assert count(store) == 5


def test_spans_outside_the_retention_window_are_rejected_by_name(client, store, keys):
    old = payloads.otel_genai_span()
    old.start_time_unix_nano, old.end_time_unix_nano = 1_000_000_000, 2_000_000_000  # 1970
    response = post(client, payloads.make_request(old, payloads.otel_genai_span()).SerializeToString(),
                    keys.ingest)
    partial = ExportTraceServiceResponse.FromString(response.content).partial_success
    assert response.status_code == 200 and partial.rejected_spans == 1
    assert "retention" in partial.error_message
    assert count(store) == 1


def metrics_request(points: int) -> bytes:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
    from opentelemetry.proto.metrics.v1.metrics_pb2 import Histogram, HistogramDataPoint, Metric

    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    scope.metrics.append(Metric(name="gen_ai.client.operation.duration", histogram=Histogram(
        data_points=[HistogramDataPoint(count=1, sum=0.5) for _ in range(points)])))
    return request.SerializeToString()


def test_otlp_metrics_are_accepted_counted_and_not_stored(client, store, keys):
    response = post_metrics(client, metrics_request(3), keys.ingest)
    assert response.status_code == 200, response.text
    json_body = b'{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": "x", "sum": {"dataPoints": [{}]}}]}]}]}'
    assert post_metrics(client, json_body, keys.ingest, JSON).status_code == 200
    assert "inferwatch_metric_points_received_total 4" in scrape(client)
    assert post_metrics(client, b"\xff\xff not protobuf", keys.ingest).status_code == 400
    assert post_metrics(client, metrics_request(1), keys.read).status_code == 403  # needs the ingest scope
    assert count(store) == 0


def post_metrics(client: TestClient, body: bytes, key: str, headers: dict[str, str] = PROTOBUF):
    return client.post("/v1/metrics", content=body, headers={**headers, **Keys.header(key)})


def test_metrics_show_redactions_jobs_and_notifier_deliveries(client, store, keys):
    from datetime import UTC, datetime, timedelta

    prompt = '[{"role": "user", "parts": [{"type": "text", "content": "mail me at jane.doe@example.com"}]}]'
    request = payloads.make_request(payloads.otel_genai_span(**{"gen_ai.input.messages": prompt}))
    assert post(client, request.SerializeToString(), keys.ingest).status_code == 200
    now = datetime.now(UTC)
    store.insert_columns("job_runs", [["budgets", "budgets"], ["r1", "r2"], [now - timedelta(seconds=3)] * 2,
                                      [now - timedelta(seconds=1)] * 2, ["success", "failure"]],
                         ["job", "run_id", "started_at", "ended_at", "outcome"])
    store.insert_columns("notifications", [["p1"] * 2, ["r"] * 2, ["s"] * 2, ["d"] * 2, ["pager"] * 2,
                                           ["firing"] * 2, [now] * 2, [now] * 2, [True, False], [1, 4], ["", "503"]],
                         ["project_id", "rule_id", "series_key", "dedup_key", "channel", "state", "event_time",
                          "sent_at", "ok", "attempts", "error"])
    text = scrape(client)
    assert 'inferwatch_redactions_total{entity="EMAIL_ADDRESS"} 1' in text
    assert 'inferwatch_job_failures_24h{job="budgets"} 1' in text
    assert 'inferwatch_job_last_duration_seconds{job="budgets"} 2.000' in text
    assert 'inferwatch_notifications_24h{channel="pager",outcome="failed"} 1' in text


def test_a_lone_export_is_acknowledged_once_inserted_not_when_a_timer_fires(app_settings, store, keys):
    # flush_interval_s is only the longest a batch may wait for requests still being decoded: a lone request
    # (announced while decoded, then submitted) is inserted and acknowledged at once
    patient = app_settings.model_copy(update={"flush_interval_s": 5.0})
    with TestClient(create_app(patient, store=store)) as client:
        started = time.monotonic()
        response = post(client, payloads.genai_batch(3).SerializeToString(), keys.ingest)
        elapsed = time.monotonic() - started
        assert client.app.state.writer._announced == 0
    assert response.status_code == 200 and count(store) == 3
    assert elapsed < 2.5, f"acknowledged after {elapsed:.2f}s: it waited for the flush timer"
