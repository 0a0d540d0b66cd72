"""One LLM call is one row, whatever emitted it: the pairing window (inferwatch_collector.pairing).

The spans here carry the attribute sets of the two emitters that double up in practice, as recorded in
tests/fixtures/conformance/: the ``anthropic`` client's own span (scope ``com.anthropic.sdk.python``, anthropic
2.x ``_tracing.py``) and OpenInference's Anthropic span (``openinference.instrumentation.anthropic``) around it.
The recorded fixtures themselves are replayed whole by test_conformance.py; these tests move the same shapes
across request boundaries, past the window, and through a restart.
"""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from inferwatch_collector.cost.ingest_pricer import pricer_for
from inferwatch_collector.pairing.held import HeldCall, to_held_row
from inferwatch_collector.pairing.match import CallView, group_calls
from inferwatch_collector.pairing.merge import merged_row
from inferwatch_collector.rows import HeldCallRow
from inferwatch_server.app import create_app
from tests.helpers import payloads as p
from tests.helpers.conformance import load, split_by_scope, trace_ids
from tests.helpers.factories import llm_call as llm_row
from tests.helpers.metrics import scrape

NATIVE = "com.anthropic.sdk.python"
OPENINFERENCE = "openinference.instrumentation.anthropic"
TRACELOOP = "opentelemetry.instrumentation.anthropic"


def native_span(trace_id: bytes, span_id: bytes, parent: bytes = b"", start: int = p.T0) -> p.Span:
    """The anthropic client's own span: cache writes and reads, the dated response model, a stop reason."""
    return p.make_span("anthropic.messages.create", {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.response.model": "claude-sonnet-4-5-20250929",
        "gen_ai.response.id": "msg_01XFDUDYJgAACzvnptvVoYEL", "gen_ai.usage.input_tokens": 1300,
        "gen_ai.usage.cache_read.input_tokens": 1000, "gen_ai.usage.cache_write.input_tokens": 200,
        "gen_ai.usage.output_tokens": 50, "anthropic.message.stop_reason": "end_turn",
    }, trace_id=trace_id, span_id=span_id, parent_span_id=parent, start=start + 2 * p.MS, duration_ms=996)


def openinference_span(trace_id: bytes, span_id: bytes, parent: bytes = b"", start: int = p.T0) -> p.Span:
    """OpenInference's LLM span: token counts with cache details, no response id, content."""
    return p.make_span("Messages", {
        "openinference.span.kind": "LLM", "llm.provider": "anthropic", "llm.system": "anthropic",
        "llm.model_name": "claude-sonnet-4-5-20250929", "llm.invocation_parameters": '{"model": "claude-sonnet-4-5"}',
        "llm.token_count.prompt": 1300, "llm.token_count.completion": 50,
        "llm.token_count.prompt_details.cache_read": 1000,
        "input.value": '{"messages": [{"role": "user", "content": "hi"}]}', "input.mime_type": "application/json",
        "output.value": "hello", "output.mime_type": "text/plain",
    }, trace_id=trace_id, span_id=span_id, parent_span_id=parent, start=start, duration_ms=1000)


def post(client: TestClient, key: str, scope: str, *spans: p.Span) -> None:
    response = client.post("/v1/traces", content=p.make_request(*spans, scope=scope).SerializeToString(),
                           headers={"Authorization": f"Bearer {key}", "Content-Type": "application/x-protobuf"})
    assert response.status_code == 200, response.text


def calls(store, trace_id: bytes) -> list[tuple]:
    return store.query(
        "SELECT span_id, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, request_model,"
        " response_model, response_id, finish_reason, round(cost_usd, 6), attributes['inferwatch.merged_span_ids']"
        " FROM inferwatch.llm_calls WHERE trace_id = {t:String}", {"t": trace_id.hex()}).result_rows


def absorbed(store, trace_id: bytes) -> list[tuple]:
    return store.query(
        "SELECT span_id, attributes['inferwatch.merged_into'] FROM inferwatch.spans WHERE trace_id = {t:String}",
        {"t": trace_id.hex()}).result_rows


def metric(client: TestClient, name: str) -> float:
    for line in scrape(client).splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


# --- matching ---------------------------------------------------------------------------------------------------
def view(span_id: str, scope: str, *, parent: str = "", response_id: str = "", start: int = 0, end: int = 1000,
         model: str = "claude-sonnet-4-5", trace: str = "t1", provider: str = "anthropic",
         service: str = "svc") -> CallView:
    return CallView(span_id, parent, trace, response_id, provider, model, "", start, end, scope, service)


def ids(groups: list[list[CallView]]) -> list[set[str]]:
    return sorted(({v.span_id for v in group} for group in groups), key=sorted)


def test_nested_spans_of_two_scopes_are_one_request() -> None:
    groups = group_calls([view("outer", OPENINFERENCE), view("inner", NATIVE, parent="outer", start=5, end=990)])
    assert ids(groups) == [{"inner", "outer"}]


def test_parallel_calls_of_one_library_are_never_merged() -> None:
    # asyncio.gather of two identical calls under one parent: one scope, so two requests
    groups = group_calls([view("a", OPENINFERENCE, parent="root"), view("b", OPENINFERENCE, parent="root", start=3)])
    assert ids(groups) == [{"a"}, {"b"}]


def test_two_libraries_on_parallel_calls_pair_by_closest_time() -> None:
    held = [view("oi-1", OPENINFERENCE, parent="root", start=0, end=1000),
            view("oi-2", OPENINFERENCE, parent="root", start=400, end=1500),
            view("tl-1", TRACELOOP, parent="root", start=2, end=1001),
            view("tl-2", TRACELOOP, parent="root", start=401, end=1499)]
    assert ids(group_calls(held)) == [{"oi-1", "tl-1"}, {"oi-2", "tl-2"}]


def test_different_response_ids_are_different_requests_even_when_nested() -> None:
    held = [view("outer", OPENINFERENCE, response_id="msg_1"),
            view("inner", NATIVE, parent="outer", response_id="msg_2")]
    assert ids(group_calls(held)) == [{"inner"}, {"outer"}]


def test_a_generation_wrapping_two_calls_is_merged_with_neither() -> None:
    held = [view("generation", "langfuse-sdk"), view("c1", NATIVE, parent="generation", start=0, end=400),
            view("c2", NATIVE, parent="generation", start=500, end=900)]
    assert ids(group_calls(held)) == [{"c1"}, {"c2"}, {"generation"}]


def test_siblings_need_agreeing_models_and_providers() -> None:
    assert len(group_calls([view("a", OPENINFERENCE), view("b", TRACELOOP, model="claude-sonnet-4-5-20250929")])) == 1
    assert len(group_calls([view("a", OPENINFERENCE), view("b", TRACELOOP, model="claude-haiku-4-5")])) == 2
    assert len(group_calls([view("a", OPENINFERENCE), view("b", TRACELOOP, provider="openai")])) == 2


def test_roots_of_two_traces_pair_only_when_close_in_time_and_of_one_service() -> None:
    # OpenLLMetry's span of a failed Anthropic call is a root beside the client's own (recorded: provider_error)
    native = view("native", NATIVE, trace="t1", start=3_000, end=51_000)
    assert len(group_calls([native, view("tl", TRACELOOP, trace="t2", start=0, end=58_000)])) == 1
    assert len(group_calls([native, view("tl", TRACELOOP, trace="t2", start=0, end=400_000)])) == 2
    assert len(group_calls([native, view("tl", TRACELOOP, trace="t2", start=0, end=58_000, service="other")])) == 2
    assert len(group_calls([native, view("tl", TRACELOOP, trace="t2", parent="p", start=0, end=58_000)])) == 2


def test_merged_row_is_the_union_of_facts_and_priced_again() -> None:
    outer = llm_row(span_id="outer", request_model="claude-sonnet-4-5", response_model="", model="claude-sonnet-4-5",
                    provider="anthropic", input_tokens=1300, output_tokens=50, cache_read_tokens=1000,
                    cache_write_tokens=0, finish_reason="", response_id="", streamed=True, ttft_ms=0)
    inner = llm_row(span_id="inner", parent_span_id="outer", request_model="claude-sonnet-4-5",
                    response_model="claude-sonnet-4-5-20250929", model="claude-sonnet-4-5", provider="anthropic",
                    input_tokens=1300, output_tokens=50, cache_read_tokens=1000, cache_write_tokens=200,
                    finish_reason="end_turn", response_id="msg_1", streamed=False, ttft_ms=420)
    price = pricer_for(None)
    row = merged_row([outer, inner], price)
    assert (row.span_id, row.cache_write_tokens, row.finish_reason, row.response_id, row.response_model,
            row.streamed, row.ttft_ms) == ("outer", 200, "end_turn", "msg_1", "claude-sonnet-4-5-20250929", True, 420)
    # claude-sonnet-4-5: $3/M input, $0.30/M cache read, $3.75/M cache write, $15/M output
    expected = (100 * 3 + 1000 * 0.3 + 200 * 3.75 + 50 * 15) / 1e6
    assert row.cost_usd == pytest.approx(expected, abs=1e-9)
    assert row.attributes["inferwatch.merged_span_ids"] == "inner"


# --- through the collector --------------------------------------------------------------------------------------
def test_twins_in_two_requests_seconds_apart_become_one_row(unsettled_client, store, keys) -> None:
    trace, outer, inner = p.new_trace_id(), p.new_span_id(), p.new_span_id()
    post(unsettled_client, keys.ingest, NATIVE, native_span(trace, inner, parent=outer))  # the inner span ends first
    assert calls(store, trace) == []  # held: its twin may still come
    time.sleep(1.5)
    post(unsettled_client, keys.ingest, OPENINFERENCE, openinference_span(trace, outer))
    unsettled_client.app.state.call_pairing.settle_all()
    (row,) = calls(store, trace)
    expected_cost = round((100 * 3 + 1000 * 0.3 + 200 * 3.75 + 50 * 15) / 1e6, 6)
    assert row == (outer.hex(), 1300, 1000, 200, 50, "claude-sonnet-4-5", "claude-sonnet-4-5-20250929",
                   "msg_01XFDUDYJgAACzvnptvVoYEL", "end_turn", expected_cost, inner.hex())
    assert absorbed(store, trace) == [(inner.hex(), outer.hex())]  # still in the trace view
    assert metric(unsettled_client, "inferwatch_llm_spans_merged_total") == 1
    prompt_spans = store.query("SELECT span_id FROM inferwatch.prompt_logs WHERE trace_id = {t:String}",
                               {"t": trace.hex()}).result_rows
    assert prompt_spans == [(outer.hex(),)]


@pytest.mark.parametrize("slug", ["openinference-anthropic", "openllmetry-anthropic"])
@pytest.mark.parametrize("order", ["as recorded", "reversed"])
def test_recorded_twins_sent_apart_become_one_row(unsettled_client, store, keys, slug: str, order: str) -> None:
    # The real spans of one request (recorded: anthropic 2.17's own span + the library's), each scope in its own
    # OTLP request 1.5 s apart, as two batches of an exporter would arrive.
    fixture = load(slug, "cached_reasoning")
    bodies = split_by_scope(fixture, time.time_ns())
    assert len(bodies) == 2
    for body in bodies if order == "as recorded" else bodies[::-1]:
        response = unsettled_client.post("/v1/traces", content=body, headers={
            "Authorization": f"Bearer {keys.ingest}", "Content-Type": "application/x-protobuf"})
        assert response.status_code == 200
        time.sleep(1.5)
    unsettled_client.app.state.call_pairing.settle_all()
    rows = store.query(
        "SELECT cache_write_tokens, reasoning_tokens, finish_reason, round(cost_usd, 6) FROM inferwatch.llm_calls"
        " WHERE trace_id IN {t:Array(String)}", {"t": sorted(trace_ids(fixture))}).result_rows
    assert rows == [(64, 32, "end_turn", 0.001239)]  # tests/fixtures/conformance/*/cached_reasoning.expected.json


def test_a_twin_arriving_after_its_partner_settled_is_absorbed(unsettled_client, store, keys) -> None:
    trace, outer, inner = p.new_trace_id(), p.new_span_id(), p.new_span_id()
    post(unsettled_client, keys.ingest, NATIVE, native_span(trace, inner, parent=outer))
    unsettled_client.app.state.call_pairing.settle_all()
    assert [r[0] for r in calls(store, trace)] == [inner.hex()]
    post(unsettled_client, keys.ingest, OPENINFERENCE, openinference_span(trace, outer))  # an exporter's late retry
    unsettled_client.app.state.call_pairing.settle_all()
    assert [r[0] for r in calls(store, trace)] == [inner.hex()]
    assert absorbed(store, trace) == [(outer.hex(), inner.hex())]
    assert metric(unsettled_client, "inferwatch_llm_spans_merged_late_total") == 1


def test_our_sdks_row_absorbs_the_anthropic_clients_own_span(unsettled_client, store, keys) -> None:
    # An app with our SDK (its own private TracerProvider) and a global TracerProvider exporting to us, inside a
    # request span: anthropic 2.x adds its own span for the same call beside ours. Ours is written at once,
    # theirs is held, then counted in ours.
    trace, app_span = p.new_trace_id(), p.new_span_id()
    ours = p.sdk_span(**{"gen_ai.usage.input_tokens": 1300})
    ours.trace_id, ours.parent_span_id = trace, app_span
    post(unsettled_client, keys.ingest, "inferwatch", ours)
    theirs = native_span(trace, p.new_span_id(), parent=app_span)
    post(unsettled_client, keys.ingest, NATIVE, theirs)
    unsettled_client.app.state.call_pairing.settle_all()
    assert [row[0] for row in calls(store, trace)] == [ours.span_id.hex()]
    assert absorbed(store, trace) == [(theirs.span_id.hex(), ours.span_id.hex())]


def test_held_rows_appear_after_the_window_on_their_own(app_settings, store, keys) -> None:
    app = create_app(app_settings.model_copy(update={"pairing_window_s": 0.3}), store=store)
    trace = p.new_trace_id()
    with TestClient(app) as client:
        post(client, keys.ingest, NATIVE, native_span(trace, p.new_span_id()))
        deadline = time.monotonic() + 10
        while metric(client, "inferwatch_pairing_held_calls") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert metric(client, "inferwatch_pairing_held_calls") == 0
        assert len(calls(store, trace)) == 1


def test_shutdown_settles_what_is_held(app_settings, store, keys) -> None:
    trace = p.new_trace_id()
    with TestClient(create_app(app_settings.model_copy(update={"pairing_window_s": 300}), store=store)) as client:
        post(client, keys.ingest, NATIVE, native_span(trace, p.new_span_id()))
        assert calls(store, trace) == []
    assert len(calls(store, trace)) == 1


def test_a_restart_settles_what_was_held_when_the_collector_died(app_settings, store, keys) -> None:
    # A collector killed inside the window leaves its held rows only in llm_calls_held.
    lost = llm_row(project_id="p1", trace_id="ab" * 16, span_id="cd" * 8, attributes={"otel.scope.name": NATIVE})
    settled = llm_row(project_id="p1", trace_id="ab" * 16, span_id="ef" * 8, attributes={"otel.scope.name": NATIVE},
                      start_time=lost.start_time + 5_000_000)
    store.insert_columns("llm_calls", list(zip(settled)), list(settled._fields))
    held = [to_held_row(HeldCall(row), int(time.time() * 1000)) for row in (lost, settled)]
    store.insert_columns("llm_calls_held", [list(c) for c in zip(*held)], list(HeldCallRow._fields))
    with TestClient(create_app(app_settings, store=store)) as client:
        assert metric(client, "inferwatch_pairing_recovered_calls_total") == 1  # the settled one is not held again
        client.app.state.call_pairing.settle_all()
    spans = store.query("SELECT span_id FROM inferwatch.llm_calls WHERE trace_id = {t:String} ORDER BY span_id",
                        {"t": "ab" * 16}).result_rows
    assert spans == [("cd" * 8,), ("ef" * 8,)]


def test_a_backlog_is_settled_in_batches(unsettled_client, store, keys, monkeypatch) -> None:
    monkeypatch.setattr("inferwatch_collector.pairing.service.SETTLE_BATCH", 3)
    traces = [p.new_trace_id() for _ in range(7)]
    post(unsettled_client, keys.ingest, NATIVE, *(native_span(trace, p.new_span_id()) for trace in traces))
    assert unsettled_client.app.state.call_pairing.settle_all() == 7
    assert sum(len(calls(store, trace)) for trace in traces) == 7
    assert metric(unsettled_client, "inferwatch_pairing_held_calls") == 0


def test_window_zero_writes_every_row_at_once(app_settings, store, keys) -> None:
    trace, outer, inner = p.new_trace_id(), p.new_span_id(), p.new_span_id()
    with TestClient(create_app(app_settings.model_copy(update={"pairing_window_s": 0}), store=store)) as client:
        post(client, keys.ingest, NATIVE, native_span(trace, inner, parent=outer))
        assert len(calls(store, trace)) == 1
