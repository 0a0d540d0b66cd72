"""The SDK's own spans (``telemetry.spans.LightSpan``): what they export, and that they behave as OTel spans.

An LLM call's span is built in the export thread from a snapshot of its metrics; these tests pin down that the
exported span is the one the OTel SDK's span used to be (name, kind, ids, parent, status, times, attributes), that
API calls on it (it is the current span inside ``with inferwatch.llm_call()``) are cleaned and bounded as the OTel
SDK does, and that nothing the app does to ``call.metrics`` after the call reaches the export thread.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import inferwatch
from inferwatch import _guard, _responses
from inferwatch import client as iw_client
from inferwatch import semconv as sc
from inferwatch.metrics import InferenceMetrics
from tests.helpers.otel_exporters import KeepingMetricExporter
from tests.helpers.sdk_recording import finished


def test_an_llm_span_is_what_the_otel_sdk_span_was(spans: InMemorySpanExporter) -> None:
    with inferwatch.tags(feature="search"), inferwatch.llm_call(model="gpt-4o", provider="openai") as call:
        call.usage(input_tokens=12, output_tokens=3)
        call.response(text="hi", finish_reason="stop", response_model="gpt-4o-2024", response_id="resp-1")
    (span,) = finished(spans)
    m = call.metrics
    assert span.name == "chat gpt-4o" and span.kind is trace.SpanKind.CLIENT
    assert span.status.status_code is trace.StatusCode.UNSET and span.parent is None
    assert f"{span.context.trace_id:032x}" == m.trace_id and f"{span.context.span_id:016x}" == m.span_id
    assert span.context.trace_flags.sampled and not span.context.is_remote
    assert (span.start_time, span.end_time) == (m.start_time_ns, m.end_time_ns)
    assert dict(span.attributes) == {sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_PROVIDER_NAME: "openai",
                                     sc.GEN_AI_REQUEST_MODEL: "gpt-4o", **m.span_attributes()}
    assert span.attributes[sc.FEATURE] == "search"
    pipeline_scope = iw_client.get_pipeline()._scope
    assert span.instrumentation_scope == pipeline_scope and span.instrumentation_scope.name == "inferwatch"
    assert span.resource.attributes["telemetry.distro.name"] == "inferwatch"
    assert _responses.lookup("resp-1") == (m.trace_id, m.span_id)


def test_an_error_and_a_nameless_model(spans: InMemorySpanExporter) -> None:
    with pytest.raises(TimeoutError), inferwatch.llm_call(provider="vllm"):
        raise TimeoutError
    with inferwatch.llm_call(provider="vllm") as call:
        call.response(response_model="served-model")
    failed, answered = finished(spans)
    assert failed.name == "chat" and failed.status.status_code is trace.StatusCode.ERROR
    assert failed.status.description == "TimeoutError" and failed.attributes[sc.ERROR_TYPE] == "TimeoutError"
    assert failed.attributes[sc.GEN_AI_REQUEST_MODEL] == ""  # as the span started with
    assert answered.name == "chat served-model"


def test_parents_and_children_across_tracer_providers(spans: InMemorySpanExporter) -> None:
    theirs = InMemorySpanExporter()
    app = TracerProvider()
    app.add_span_processor(SimpleSpanProcessor(theirs))
    tracer = app.get_tracer("app")
    state = trace.TraceState([("vendor", "x")])
    remote = trace.SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=trace.TraceFlags(1), trace_state=state)

    @inferwatch.observe(operation="retrieval")
    def step() -> None:
        with inferwatch.llm_call(model="m", provider="p"):
            with tracer.start_as_current_span("app work inside the call"):
                pass

    with trace.use_span(trace.NonRecordingSpan(remote)):
        with tracer.start_as_current_span("GET /search") as request:
            step()
    ours = {s.name.rpartition(".")[2]: s for s in finished(spans)}
    (inside,) = [s for s in theirs.get_finished_spans() if s.name == "app work inside the call"]
    llm, observed = ours["chat m"], ours["step"]
    assert {s.context.trace_id for s in (llm, observed, inside)} == {0xABC}
    assert observed.parent.span_id == request.get_span_context().span_id
    assert observed.kind is trace.SpanKind.INTERNAL
    assert observed.attributes[sc.GEN_AI_OPERATION_NAME] == "retrieval"
    assert llm.parent.span_id == observed.context.span_id
    assert inside.parent.span_id == llm.context.span_id  # made current by the with block
    assert llm.context.trace_state == state


def test_the_parent_is_read_with_any_runtime_context(spans: InMemorySpanExporter,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A span reads the current context straight from OTel's default runtime context (its ContextVar); with any
    other runtime context (``OTEL_PYTHON_CONTEXT``) it asks ``opentelemetry.context.get_current()``, and the
    parent is found either way."""
    from opentelemetry import context as otel_context

    from inferwatch.telemetry import spans as telemetry_spans

    runtime = otel_context._RUNTIME_CONTEXT  # type: ignore[attr-defined]
    assert telemetry_spans._CURRENT_CONTEXT is runtime._current_context
    with monkeypatch.context() as patched:
        patched.setattr(otel_context, "_RUNTIME_CONTEXT", object())
        assert telemetry_spans._current_context_var() is None
    tracer = TracerProvider().get_tracer("app")
    parents = []
    for var in (telemetry_spans._CURRENT_CONTEXT, None):
        monkeypatch.setattr(telemetry_spans, "_CURRENT_CONTEXT", var)
        with tracer.start_as_current_span("request") as request:
            with inferwatch.llm_call(model="m", provider="p"):
                pass
        parents.append(request.get_span_context().span_id)
    monkeypatch.undo()
    assert [s.parent.span_id for s in finished(spans)] == parents


def test_the_current_llm_span_takes_api_calls_cleaned_and_ours_win(spans: InMemorySpanExporter) -> None:
    with inferwatch.llm_call(model="m", provider="p"):
        current = trace.get_current_span()
        assert current.is_recording()
        current.set_attribute("app.step", "rerank")
        current.set_attributes({"app.ids": [1, 2], "app.bad": object(), sc.GEN_AI_PROVIDER_NAME: "spoofed"})
        current.add_event("retry", {"attempt": 2})
        current.record_exception(ValueError("boom"))
        current.set_status(trace.StatusCode.OK)
    assert not current.is_recording()
    current.set_attribute("late", 1)  # after the end: ignored
    (span,) = finished(spans)
    assert span.attributes["app.step"] == "rerank" and span.attributes["app.ids"] == (1, 2)
    assert span.attributes["app.bad"] == _otel_cleaned({"app.bad": object()})["app.bad"]  # what OTel makes of it
    assert "late" not in span.attributes
    assert span.attributes[sc.GEN_AI_PROVIDER_NAME] == "p"  # the SDK's own attributes are set last
    assert [e.name for e in span.events] == ["retry", "exception"]
    assert span.events[1].attributes["exception.type"] == "ValueError"
    assert span.status.status_code is trace.StatusCode.OK


def _otel_cleaned(attributes: dict[str, Any]) -> dict[str, Any]:
    """What the OTel SDK's span keeps of these attributes (this SDK version's rules for odd values)."""
    return dict(BoundedAttributes(None, attributes, immutable=False))


def test_free_form_attributes_are_cleaned_as_otel_does(spans: InMemorySpanExporter) -> None:
    attributes = {"team": "search", "weights": [0.5, 0.5], "none": None, "object": object(), "n": 3}
    with inferwatch.llm_call(model="m", provider="p", attributes=attributes):
        pass
    (span,) = finished(spans)
    assert {k: span.attributes[k] for k in attributes if k in span.attributes} == _otel_cleaned(attributes)
    assert span.attributes["weights"] == (0.5, 0.5)


def test_the_span_attribute_limit_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "20")
    exporter = InMemorySpanExporter()
    inferwatch.init(exporter=exporter, schedule_delay_ms=20, metric_exporter=KeepingMetricExporter())
    try:
        with inferwatch.llm_call(model="m", provider="p", attributes={f"app.k{i}": i for i in range(40)}):
            pass
        (span,) = finished(exporter)
    finally:
        inferwatch.shutdown()
    assert len(span.attributes) == 20 and span.dropped_attributes > 0


def test_changes_to_call_metrics_after_the_call_do_not_reach_the_span(spans: InMemorySpanExporter) -> None:
    with inferwatch.llm_call(model="m", provider="p", attributes={"app.k": "v"}) as call:
        call.usage(input_tokens=5, output_tokens=1)
    call.metrics.input_tokens = 999
    call.metrics.attributes["app.k"] = "changed"
    call.usage(input_tokens=1000, output_tokens=1000)
    (span,) = finished(spans)
    assert span.attributes[sc.GEN_AI_USAGE_INPUT_TOKENS] == 5 and span.attributes["app.k"] == "v"


def test_the_metrics_snapshot_carries_every_field() -> None:
    values: dict[str, Any] = {}
    for i, f in enumerate(dataclasses.fields(InferenceMetrics)):
        kind = str(f.type)
        values[f.name] = (True if "bool" in kind else {"k": i} if "dict" in kind else i if "int" in kind
                          else float(i) if "float" in kind else f"v{i}")
    m = InferenceMetrics(**values)
    snapshot = m._snapshot()
    assert len(snapshot) == len(dataclasses.fields(InferenceMetrics))
    assert InferenceMetrics(*snapshot) == m and snapshot[-1] is not m.attributes


def test_a_failing_attribute_build_drops_the_span_but_keeps_the_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    exporter, metrics = InMemorySpanExporter(), KeepingMetricExporter()
    inferwatch.init(exporter=exporter, schedule_delay_ms=20, metric_exporter=metrics)
    try:
        monkeypatch.setattr(InferenceMetrics, "span_attributes", lambda self: 1 / 0)
        with inferwatch.llm_call(model="m", provider="p") as call:
            call.usage(input_tokens=5, output_tokens=1)
        assert inferwatch.flush(5)
        stats = inferwatch.stats()
    finally:
        inferwatch.shutdown()
    assert exporter.get_finished_spans() == ()
    assert stats["dropped"]["internal_error"] == 1 and stats["internal_errors"] == {"telemetry.prepare": 1}
    names = {m.name for batch in metrics.batches for rm in batch.resource_metrics for sm in rm.scope_metrics
             for m in sm.metrics}
    assert names == {sc.METRIC_OPERATION_DURATION, sc.METRIC_TOKEN_USAGE}


def test_a_full_queue_keeps_the_calls_metrics() -> None:
    exporter, metrics = InMemorySpanExporter(), KeepingMetricExporter()
    inferwatch.init(exporter=exporter, metric_exporter=metrics, max_queue_size=3, max_export_batch_size=1000,
                    schedule_delay_ms=60_000)  # the thread sleeps: 3 spans queued, the other 2 calls dropped
    try:
        for _ in range(5):
            with inferwatch.llm_call(model="m", provider="p") as call:
                call.usage(input_tokens=5, output_tokens=1)
        assert inferwatch.flush(5)
        stats = inferwatch.stats()
    finally:
        inferwatch.shutdown()
    assert stats["dropped"]["queue_full"] == 2 and len(exporter.get_finished_spans()) == 3
    counts = [dp.count for batch in metrics.batches for rm in batch.resource_metrics for sm in rm.scope_metrics
              for m in sm.metrics if m.name == sc.METRIC_OPERATION_DURATION for dp in m.data.data_points]
    assert sum(counts) == 5


def test_response_ids_are_remembered_within_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    _responses.clear()
    monkeypatch.setattr(_responses, "MAX_REMEMBERED", 3)
    for i in range(7):  # two generations of 3: r0-r2 are forgotten as r3-r5 fill the newer one
        _responses.remember(f"r{i}", i, i + 100)
    assert [_responses.lookup(f"r{i}") is not None for i in range(7)] == [False] * 3 + [True] * 4
    assert _responses.lookup("r6") == (f"{6:032x}", f"{106:016x}")
    assert _responses.lookup("r3") == (f"{3:032x}", f"{103:016x}")
    _responses.remember("r3", 30, 130)  # remembered again: the newest trace wins
    assert _responses.lookup("r3") == (f"{30:032x}", f"{130:016x}")
    _responses.clear()
    assert _responses.lookup("r6") is None


def test_the_manual_api_records_first_token_refusal_and_tool_calls(spans: InMemorySpanExporter) -> None:
    """Everything ``with inferwatch.llm_call()`` offers reaches the metrics the app reads and the exported span:
    the first token's clock (TTFT, streamed, decode speed from it), a refusal, tool calls and their failures."""
    import time

    with inferwatch.llm_call(model="llama-3.1-8b", provider="vllm") as call:
        time.sleep(0.01)
        call.first_token()
        first = call.metrics.first_token_time_ns
        call.first_token()  # only the first counts
        time.sleep(0.01)
        call.usage(input_tokens=20, output_tokens=11)
        call.response(text="I can't help with that.", finish_reason="stop", refusal=True, tool_calls=3)
        call.tool_call_failed()
        call.tool_call_failed(count=1)
        call.tool_call_failed(count="two")  # type: ignore[arg-type]  # the app's mistake: counted, never raised
    m = call.metrics
    assert first is not None and m.first_token_time_ns == first and m.streamed
    assert 10 <= m.ttft_ms < 5_000
    assert m.decode_tokens_per_s == pytest.approx(10 / ((m.end_time_ns - first) / 1e9))
    assert (m.refusal, m.tool_calls, m.tool_call_failures, m.response_chars) == (True, 3, 2, 23)
    assert _guard.internal_errors.get("llm_call.tool_call_failed") == 1
    (span,) = finished(spans)
    attributes = span.attributes
    assert attributes[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] == pytest.approx(m.ttft_ms / 1000)
    assert attributes[sc.FIRST_TOKEN_TIME_UNIX_NANO] == first and attributes[sc.STREAMED] is True
    assert (attributes[sc.REFUSAL], attributes[sc.TOOL_CALLS], attributes[sc.TOOL_CALL_FAILURES]) == (True, 3, 2)
    assert attributes[sc.DECODE_TOKENS_PER_SECOND] == pytest.approx(m.decode_tokens_per_s)


def test_init_again_keeps_the_running_configuration() -> None:
    """``init()`` is idempotent: a second call (a library and the app both calling it) returns the running
    configuration and changes nothing, not even the exporter; after ``shutdown()`` a new one takes effect."""
    first_exporter, second_exporter = InMemorySpanExporter(), InMemorySpanExporter()
    first = inferwatch.init(exporter=first_exporter, service_name="first", capture="off", schedule_delay_ms=20,
                            metric_exporter=KeepingMetricExporter())
    pipeline = iw_client.get_pipeline()
    try:
        again = inferwatch.init(exporter=second_exporter, service_name="second", capture="full")
        assert again is first and (again.service_name, again.capture) == ("first", "off")
        assert iw_client.get_pipeline() is pipeline
        with inferwatch.llm_call(model="m", provider="p"):
            pass
        assert len(finished(first_exporter)) == 1 and second_exporter.get_finished_spans() == ()
    finally:
        inferwatch.shutdown()
    try:
        assert inferwatch.init(exporter=second_exporter, service_name="second",
                               metric_exporter=KeepingMetricExporter()).service_name == "second"
        assert iw_client.get_pipeline() is not pipeline
    finally:
        inferwatch.shutdown()
