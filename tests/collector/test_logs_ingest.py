"""POST /v1/logs through the real app, writer and embedded ClickHouse, with bodies from the real OTel logs SDK."""

from __future__ import annotations

import base64
import gzip

from fastapi.testclient import TestClient
from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

from inferwatch_collector.auth import langfuse_pair
from inferwatch_server.app import create_app

from tests.helpers import payloads
from tests.helpers.genai_logs import Emitter, record_events
from tests.helpers.keys import Keys
from tests.helpers.metrics import scrape

PROTOBUF = {"Content-Type": "application/x-protobuf"}
JSON = {"Content-Type": "application/json"}
EMAIL, PHONE = "jane.doe@example.com", "+1 415-555-2671"


def post(client: TestClient, body: bytes, key: str, headers: dict[str, str] = PROTOBUF):
    return client.post("/v1/logs", content=body, headers={**headers, **Keys.header(key)})


def conversation(emit: Emitter) -> None:
    """A chat call's events as opentelemetry-instrumentation-openai-v2 emits them with content capture on."""
    emit.event("gen_ai.system.message", {"content": "You are a support agent."})
    emit.event("gen_ai.user.message", {"content": f"I am {EMAIL}, call me on {PHONE}"})
    emit.event("gen_ai.choice", {"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": "We will call you back."}})
    emit.log("cache miss for the support prompt")


def prompt_rows(store) -> list[tuple]:
    return store.query("SELECT trace_id, span_id, prompt, completion FROM prompt_logs ORDER BY start_time"
                       ).result_rows


def metric(client: TestClient, line: str) -> int:
    for text in scrape(client).splitlines():
        if text.startswith(line + " "):
            return int(text.rsplit(" ", 1)[1])
    return 0


def test_genai_events_land_redacted_in_the_spans_prompt_log(client, store, keys):
    request, (trace_id, span_id) = record_events(conversation)
    response = post(client, request.SerializeToString(), keys.ingest)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-protobuf"
    assert ExportLogsServiceResponse.FromString(response.content).partial_success.rejected_log_records == 0
    ((trace, span, prompt, completion),) = prompt_rows(store)
    assert (trace, span) == (trace_id, span_id)
    assert EMAIL not in prompt and "<EMAIL_ADDRESS>" in prompt
    assert "415-555-2671" not in prompt and "<PHONE_NUMBER>" in prompt
    assert prompt.index("support agent") < prompt.index("<EMAIL_ADDRESS>")  # the events' order is kept
    assert "We will call you back." in completion and "stop" in completion
    assert metric(client, "inferwatch_log_records_received_total") == 4
    assert metric(client, "inferwatch_log_records_stored_total") == 3
    assert metric(client, 'inferwatch_log_records_dropped_total{reason="not_genai"}') == 1
    assert metric(client, 'inferwatch_finish_reason_patches_total{outcome="not_applied"}') == 1
    assert metric(client, 'inferwatch_redactions_total{entity="EMAIL_ADDRESS"}') == 1


def test_json_and_gzip_bodies_give_the_same_row(client, store, keys):
    request, ids = record_events(conversation)
    json_body = payloads.to_otlp_json(request)
    assert b'"traceId": "' + ids[0].encode() in json_body  # OTLP/JSON: hex ids
    response = post(client, json_body, keys.ingest, JSON)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json" and response.json() == {}
    response = post(client, gzip.compress(request.SerializeToString()), keys.other_project,
                    {**PROTOBUF, "Content-Encoding": "gzip"})
    assert response.status_code == 200, response.text
    rows = store.query("SELECT project_id, trace_id, prompt, completion FROM prompt_logs ORDER BY project_id"
                       ).result_rows
    assert [r[0] for r in rows] == ["p1", "p2"] and rows[0][1:] == rows[1][1:]


def test_legacy_event_name_attribute_and_operation_details_are_read(client, store, keys):
    def emit(e: Emitter) -> None:
        e.event("gen_ai.user.message", {"content": "legacy hello"}, legacy_name=True)
        e.event("gen_ai.client.inference.operation.details", None, {
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.input.messages": '[{"role":"user","parts":[{"type":"text","content":"details hello"}]}]',
            "gen_ai.output.messages": '[{"role":"assistant","parts":[{"type":"text","content":"hi"}],'
                                      '"finish_reason":"length"}]',
            "gen_ai.response.finish_reasons": ["length"]})

    request, _ = record_events(emit)
    assert post(client, request.SerializeToString(), keys.ingest).status_code == 200
    ((_, _, prompt, completion),) = prompt_rows(store)
    assert "legacy hello" in prompt and '"hi"' in completion
    assert store.query("SELECT model FROM prompt_logs").result_rows == [("gpt-4o-mini",)]


def test_a_choice_events_finish_reason_reaches_the_held_call(unsettled_client, store, keys):
    # opentelemetry-instrumentation-openai-v2 streams: the span carries no finish reason, the gen_ai.choice event
    # does; the span's row is held in the pairing window when the event arrives.
    request, (trace_id, span_id) = record_events(conversation)
    span = payloads.make_span("chat gpt-4o-mini", {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 6,
    }, trace_id=bytes.fromhex(trace_id), span_id=bytes.fromhex(span_id))
    response = unsettled_client.post("/v1/traces", content=payloads.make_request(span).SerializeToString(),
                                     headers={**PROTOBUF, **Keys.header(keys.ingest)})
    assert response.status_code == 200
    assert post(unsettled_client, request.SerializeToString(), keys.ingest).status_code == 200
    unsettled_client.app.state.call_pairing.settle_all()
    assert store.query("SELECT finish_reason FROM llm_calls WHERE span_id = {s:String}",
                       {"s": span_id}).result_rows == [("stop",)]
    assert metric(unsettled_client, 'inferwatch_finish_reason_patches_total{outcome="applied"}') == 1


def test_a_finish_reason_for_no_held_call_is_counted_not_applied(client, store, keys):
    request, _ = record_events(conversation)
    assert post(client, request.SerializeToString(), keys.ingest).status_code == 200
    assert metric(client, 'inferwatch_finish_reason_patches_total{outcome="not_applied"}') == 1


def test_ingest_auth_is_required(client, store, keys):
    body = record_events(conversation)[0].SerializeToString()
    response = client.post("/v1/logs", content=body, headers=PROTOBUF)
    assert response.status_code == 401
    assert "missing API key" in status_pb2.Status.FromString(response.content).message
    response = post(client, body, keys.read)
    assert response.status_code == 403
    assert "'ingest' scope" in status_pb2.Status.FromString(response.content).message
    public, secret = langfuse_pair(keys.ingest)
    basic = base64.b64encode(f"{public}:{secret}".encode()).decode()
    assert client.post("/v1/logs", content=body, headers={**PROTOBUF, "Authorization": f"Basic {basic}"}
                       ).status_code == 200
    assert len(prompt_rows(store)) == 1


def test_malformed_bodies_are_400_naming_the_problem(client, store, keys):
    response = post(client, b"\xff\xff\xff not protobuf", keys.ingest)
    assert response.status_code == 400
    assert "invalid protobuf" in status_pb2.Status.FromString(response.content).message
    bad_json = b'{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":"xyz"}]}]}]}'
    response = post(client, bad_json, keys.ingest, JSON)
    assert response.status_code == 400
    assert "resourceLogs[0].scopeLogs[0].logRecords[0].traceId" in response.json()["message"]
    response = post(client, b"{}", keys.ingest, {"Content-Type": "text/plain"})
    assert response.status_code == 415
    assert post(client, b"{}", keys.ingest, {**JSON, "Content-Encoding": "gzip"}).status_code == 400
    assert prompt_rows(store) == []


def test_content_capture_off_keeps_no_content_but_the_finish_reason(app_settings, store, keys):
    off = app_settings.model_copy(update={"content_capture": "off"})
    request, _ = record_events(conversation)
    with TestClient(create_app(off, store=store)) as client:
        assert post(client, request.SerializeToString(), keys.ingest).status_code == 200
        assert metric(client, 'inferwatch_log_records_dropped_total{reason="content_capture_off"}') == 3
        assert metric(client, 'inferwatch_finish_reason_patches_total{outcome="not_applied"}') == 1
    assert prompt_rows(store) == []


def test_a_spans_content_is_shown_once_whatever_carried_it(client, store, keys):
    """Content from the span itself and from its log events, split over two logs requests: one entry."""
    request, (trace_id, span_id) = record_events(conversation)
    span = payloads.otel_genai_span(**{"gen_ai.input.messages": '[{"role": "user", "content": "from the span"}]'})
    span.trace_id, span.span_id = bytes.fromhex(trace_id), bytes.fromhex(span_id)
    traces = client.post("/v1/traces", content=payloads.make_request(span).SerializeToString(),
                         headers={**PROTOBUF, **Keys.header(keys.ingest)})
    assert traces.status_code == 200
    records = request.resource_logs[0].scope_logs[0].log_records
    first, second = type(request)(), type(request)()
    first.CopyFrom(request)
    second.CopyFrom(request)
    del first.resource_logs[0].scope_logs[0].log_records[2:]  # system + user message
    del second.resource_logs[0].scope_logs[0].log_records[:2]  # the choice (and the plain log)
    assert len(records) == 4
    for part in (first, second):
        assert post(client, part.SerializeToString(), keys.ingest).status_code == 200
    assert len(prompt_rows(store)) == 3
    shown = client.get(f"/api/v1/dashboard/prompts/{trace_id}", headers=Keys.header(keys.prompts)).json()
    (entry,) = shown["prompts"]
    assert entry["span_id"] == span_id and entry["model"] == "gpt-4o-mini"
    assert "from the span" in entry["prompt"] and "<EMAIL_ADDRESS>" in entry["prompt"]
    assert entry["completion"].count("We will call you back.") == 1
