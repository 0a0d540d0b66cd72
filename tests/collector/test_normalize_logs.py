"""normalize_logs (pure): GenAI log events → prompt-log rows and finish reasons, every record counted; and the
prompt view that shows a span's content once."""

from __future__ import annotations

import time

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from inferwatch_collector.normalize.logs import normalize_logs
from inferwatch_collector.prompt_view import one_per_span

from tests.helpers.genai_logs import Emitter, record_events


def tool_round(emit: Emitter) -> None:
    emit.event("gen_ai.user.message", {"content": "weather in Paris?"})
    emit.event("gen_ai.assistant.message", {"tool_calls": [{"id": "call_1", "type": "function",
                                                             "function": {"name": "weather"}}]})
    emit.event("gen_ai.tool.message", {"content": "18C", "id": "call_1"})
    emit.event("gen_ai.choice", {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant"}})
    emit.event("gen_ai.user.message", {})  # an emitter with content capture off sends no content


def test_events_of_one_span_make_one_row_and_every_record_is_counted():
    request, ids = record_events(tool_round)
    result = normalize_logs(request, "p1")
    (row,) = result.prompt_logs
    assert (row.project_id, row.trace_id, row.span_id) == ("p1", *ids)
    assert '"role":"tool"' in row.prompt and '"tool_calls"' in row.prompt and "18C" in row.prompt
    assert row.completion == ""  # the choice named a finish reason but carried no content
    assert result.finish_reasons == {ids: "tool_calls"}
    assert (result.received, result.stored, result.rejected) == (5, 3, 0)
    assert result.dropped == {"no_content": 2}


def test_events_outside_a_span_cannot_be_joined_and_plain_logs_are_dropped():
    def emit(e: Emitter) -> None:
        e.event("gen_ai.user.message", {"content": "hi"})
        e.log("GET /health 200")

    result = normalize_logs(record_events(emit, in_span=False)[0], "p1")
    assert result.prompt_logs == [] and result.dropped == {"no_span": 1, "not_genai": 1}


def test_bad_ids_and_old_records_are_rejected_alone():
    request, ids = record_events(lambda e: [e.event("gen_ai.user.message", {"content": f"m{i}"}) for i in range(3)])
    records = request.resource_logs[0].scope_logs[0].log_records
    records[0].span_id = b"\x01\x02"
    records[1].time_unix_nano = time.time_ns() - 30 * 86_400 * 10**9
    result = normalize_logs(request, "p1", retention_days=14)
    assert result.rejected == 2 and len(result.errors) == 2
    assert "span_id must be 8 bytes, got 2" in result.errors[0] and "retention" in result.errors[1]
    (row,) = result.prompt_logs
    assert "m2" in row.prompt and "m0" not in row.prompt and "m1" not in row.prompt


def test_capture_off_keeps_finish_reasons_only():
    request, ids = record_events(tool_round)
    result = normalize_logs(request, "p1", content_capture="off")
    assert result.prompt_logs == [] and result.finish_reasons == {ids: "tool_calls"}
    assert result.dropped == {"content_capture_off": 5} and result.stored == 0


def test_an_empty_request_gives_nothing():
    result = normalize_logs(ExportLogsServiceRequest(), "p1")
    assert (result.prompt_logs, result.received, result.dropped) == ([], 0, {})


def row(span: str, prompt: str = "", completion: str = "", model: str = "") -> dict:
    return {"span_id": span, "model": model, "prompt_template": "", "prompt": prompt, "completion": completion,
            "redaction": "v1"}


def test_prompt_view_merges_a_spans_rows_once_and_complete():
    rows = [row("a", prompt='[{"role": "user", "content": "hi"}]'),
            row("b", prompt="other span"),
            row("a", prompt='[{"content":"hi","role":"user"}]', model="gpt-4o"),  # same messages, re-rendered
            row("a", completion="hello"),
            row("a", prompt="more context")]
    merged = one_per_span(rows)
    assert [m["span_id"] for m in merged] == ["a", "b"]
    assert merged[0]["prompt"] == '[{"role": "user", "content": "hi"}]\n\nmore context'
    assert merged[0]["completion"] == "hello" and merged[0]["model"] == "gpt-4o"
    assert merged[0]["redaction"] == "v1"
    assert one_per_span([row("a", prompt="abc"), row("a", prompt="xabcx")])[0]["prompt"] == "xabcx"
