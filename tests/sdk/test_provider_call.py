"""A provider integration's call (``llm_call.ProviderCall``): started on the caller's thread with only its clocks,
tags, parent and ids, its metrics and span made later (in the export thread, or here when the response is recorded
here). These tests pin down that what is exported is what it was when the span was made at the start: the parent
and trace state of the context the call *started* in, the tags of that moment, the response id remembered as the
span is made (feedback by it before then: tests/sdk/test_feedback.py), sampling (errors always kept), and a full
queue that keeps the metrics.

Real ``openai`` and ``anthropic`` clients against the mock server (``tests/helpers/mock_llm_fixtures.py``).
"""

from __future__ import annotations

import dataclasses
import random
import time
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

import inferwatch  # noqa: E402
from inferwatch import _guard, _responses  # noqa: E402
from inferwatch import semconv as sc  # noqa: E402
from inferwatch.telemetry.pipeline import ID_POOL_SIZE  # noqa: E402
from tests.helpers.mock_llm_rules import user  # noqa: E402
from tests.helpers.otel_exporters import KeepingMetricExporter, NullMetricExporter  # noqa: E402
from tests.helpers.sdk_recording import finished, start_sdk  # noqa: E402

MODEL = "gpt-4o-mini"
CLAUDE = "claude-haiku-4-5"


def start(**options: Any) -> InMemorySpanExporter:
    """The SDK started (:func:`start_sdk`, ``options`` overriding) with both providers instrumented."""
    exporter = start_sdk(schedule_delay_ms=20, **options).exporter
    assert inferwatch.instrument_openai() and inferwatch.instrument_anthropic()
    return exporter


def test_the_span_has_the_parent_and_tags_of_the_moment_the_call_started(openai_client: Any, anthropic_client: Any,
                                                                          stop_sdk: None) -> None:
    """The parent span and the tags are read when the request starts; the span is made later, when nothing of
    that context is current any more, and still carries them."""
    exporter = start()
    app = TracerProvider().get_tracer("app")
    state = trace.TraceState([("vendor", "x")])
    remote = trace.SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=trace.TraceFlags(1), trace_state=state)

    @inferwatch.observe(operation="retrieval")
    def answer() -> Any:
        with inferwatch.tags(feature="search", template_version="v7"):
            stream = openai_client.chat.completions.create(model=MODEL, messages=user("hi"), stream=True)
            anthropic_client.messages.create(model=CLAUDE, max_tokens=64, messages=user("hi"))
        return stream

    with trace.use_span(trace.NonRecordingSpan(remote)):
        with app.start_as_current_span("GET /answer") as request:
            stream = answer()
    with inferwatch.tags(feature="elsewhere"):
        chunks = list(stream)  # consumed, and so ended, outside the span and the tags it started in
    assert chunks
    spans = {s.name.rpartition(".")[2]: s for s in finished(exporter)}  # the function's name is qualified
    observed = spans["answer"]
    assert observed.parent.span_id == request.get_span_context().span_id
    for name in (f"chat {MODEL}", f"chat {CLAUDE}"):
        span = spans[name]
        assert span.kind is trace.SpanKind.CLIENT
        assert span.context.trace_id == 0xABC and span.context.trace_state == state
        assert span.parent.span_id == observed.context.span_id
        assert span.attributes[sc.FEATURE] == "search" and span.attributes[sc.PROMPT_VERSION] == "v7"
        assert span.start_time < span.end_time


def test_a_root_call_gets_fresh_ids_and_its_response_id_is_remembered_at_export(openai_client: Any,
                                                                               stop_sdk: None) -> None:
    """The response ids are remembered by the export thread, not on the app's (feedback sent before then is linked
    by its sender: tests/sdk/test_feedback.py)."""
    exporter = InMemorySpanExporter()
    inferwatch.init(exporter=exporter, metric_exporter=NullMetricExporter(), schedule_delay_ms=60_000)
    inferwatch.instrument_openai()
    first = openai_client.chat.completions.create(model=MODEL, messages=user("one"))
    second = openai_client.chat.completions.create(model=MODEL, messages=user("two"))
    assert exporter.get_finished_spans() == () and _responses.lookup(first.id) is None
    spans = {s.attributes[sc.GEN_AI_RESPONSE_ID]: s for s in finished(exporter)}
    known = [_responses.lookup(c.id) for c in (first, second)]
    for completion, ids in zip((first, second), known):
        span = spans[completion.id]
        assert span.parent is None
        assert ids == (f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}")
    assert known[0][0] != known[1][0]  # two root calls, two traces


def test_calls_take_ids_drawn_ahead_and_draw_their_own_when_none_are_left(openai_client: Any,
                                                                          stop_sdk: None) -> None:
    """The export thread draws (trace id, span id) pairs ahead; a call pops one, and draws its own when the pool
    is empty (a burst between two wake-ups): both kinds of ids are fresh and valid."""
    exporter = InMemorySpanExporter()
    inferwatch.init(exporter=exporter, metric_exporter=NullMetricExporter(), schedule_delay_ms=60_000)
    inferwatch.instrument_openai()
    pipeline = inferwatch.client.get_pipeline()
    for _ in range(500):  # filled as the export thread starts
        if pipeline._id_pool:
            break
        time.sleep(0.01)
    pool = pipeline._id_pool
    assert len(pool) == ID_POOL_SIZE
    ahead = pool[-1]
    from_pool = openai_client.chat.completions.create(model=MODEL, messages=user("pool"))
    assert len(pool) == ID_POOL_SIZE - 1
    pool.clear()
    drawn = openai_client.chat.completions.create(model=MODEL, messages=user("drawn"))
    assert pool == []  # none taken, none put back: the call drew its own
    spans = {s.attributes[sc.GEN_AI_RESPONSE_ID]: s for s in finished(exporter)}
    assert (spans[from_pool.id].context.trace_id, spans[from_pool.id].context.span_id) == ahead
    own = spans[drawn.id].context
    assert own.is_valid and (own.trace_id, own.span_id) != ahead and (own.trace_id, own.span_id) not in pool


def test_drawing_ids_ahead_leaves_the_apps_random_numbers_alone(openai_client: Any, stop_sdk: None) -> None:
    """The export thread draws ids ahead from a generator of its own: an app that seeds ``random`` for
    reproducible runs gets the same numbers with the SDK running as without it."""
    random.seed(1234)
    expected = [random.random() for _ in range(5)]
    random.seed(1234)
    inferwatch.init(exporter=InMemorySpanExporter(), metric_exporter=NullMetricExporter(), schedule_delay_ms=60_000)
    pipeline = inferwatch.client.get_pipeline()
    for _ in range(500):  # the pool is drawn as the export thread starts
        if pipeline._id_pool:
            break
        time.sleep(0.01)
    assert pipeline._id_pool
    assert [random.random() for _ in range(5)] == expected


def test_sampled_out_calls_are_counted_and_errors_are_kept(openai_client: Any, anthropic_client: Any,
                                                          stop_sdk: None) -> None:
    exporter = start(sample_rate=0.0)
    openai_client.chat.completions.create(model=MODEL, messages=user("fine"))
    list(openai_client.chat.completions.create(model=MODEL, messages=user("fine"), stream=True))
    anthropic_client.messages.create(model=CLAUDE, max_tokens=64, messages=user("fine"))
    with pytest.raises(openai.RateLimitError):
        openai_client.chat.completions.create(model=MODEL, messages=user("no [error:429]"))
    with pytest.raises(openai.APIError):
        list(openai_client.chat.completions.create(model=MODEL, messages=user("x [stream-error]"), stream=True))
    spans = finished(exporter)
    assert inferwatch.stats()["dropped"]["sampled"] == 3
    assert sorted(s.attributes[sc.ERROR_TYPE] for s in spans) == ["APIError", "RateLimitError"]
    assert all(s.status.status_code is StatusCode.ERROR and s.parent is None for s in spans)


def test_calls_dropped_by_a_full_queue_keep_their_metrics(openai_client: Any, stop_sdk: None) -> None:
    metrics = KeepingMetricExporter()
    exporter = InMemorySpanExporter()
    inferwatch.init(exporter=exporter, metric_exporter=metrics, max_queue_size=3, max_export_batch_size=1000,
                    schedule_delay_ms=60_000)  # the thread sleeps: 3 calls queued, the other 2 dropped
    inferwatch.instrument_openai()
    for i in range(5):
        openai_client.chat.completions.create(model=MODEL, messages=user(f"call {i}"))
    assert inferwatch.stats()["dropped"]["queue_full"] == 2
    assert len(finished(exporter)) == 3
    counts: dict[str, int] = {}
    for batch in metrics.batches:  # delta batches: summed
        for m in (m for rm in batch.resource_metrics for sm in rm.scope_metrics for m in sm.metrics):
            counts[m.name] = counts.get(m.name, 0) + sum(dp.count for dp in m.data.data_points)
    assert counts[sc.METRIC_OPERATION_DURATION] == 5
    assert counts[sc.METRIC_TOKEN_USAGE] == 10  # input and output of every call, the dropped ones included


def test_a_call_recorded_on_the_callers_thread_ends_once(openai_client: Any, stop_sdk: None) -> None:
    """With capture on the response's text is taken before the call ends, so its metrics and span are made on
    the caller's thread; the span is still exported once, with the content and the parent of its start."""
    exporter = start(capture="full")
    app = TracerProvider().get_tracer("app")
    with app.start_as_current_span("request") as request:
        stream = openai_client.chat.completions.create(model=MODEL, messages=user("hello"), stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    stream.close()  # after the end: nothing more is recorded
    (span,) = finished(exporter)
    assert span.parent.span_id == request.get_span_context().span_id
    assert text and text in span.attributes[sc.GEN_AI_OUTPUT_MESSAGES]
    assert span.attributes[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0


def test_the_app_reads_every_calls_metrics_through_on_call(openai_client: Any, anthropic_client: Any,
                                                          stop_sdk: None) -> None:
    """``init(on_call=...)`` hands the app each recorded call's complete InferenceMetrics, whichever way it was
    made, in the export thread: the same values as its exported span. A hook that raises is counted; the span
    still goes."""
    import threading

    seen: list[tuple[Any, str]] = []

    def on_call(metrics: Any) -> None:
        seen.append((metrics, threading.current_thread().name))
        if metrics.request_model == "raises-in-hook":
            raise RuntimeError("the app's hook")

    exporter = start(on_call=on_call)
    with inferwatch.tags(feature="search"):
        stream = openai_client.chat.completions.create(model=MODEL, messages=user("hi [tokens:5]"), stream=True,
                                                       stream_options={"include_usage": True})
        for _ in stream:
            pass
        openai_client.chat.completions.create(model=MODEL, messages=user("hello [tokens:4]"))
        anthropic_client.messages.create(model=CLAUDE, max_tokens=50, messages=user("hey [tokens:3]"))
        with inferwatch.llm_call(model="raises-in-hook", provider="vllm") as call:
            call.usage(input_tokens=2, output_tokens=1)
    assert inferwatch.flush(5)
    spans = {span.context.span_id: span for span in exporter.get_finished_spans()}
    assert len(seen) == 4 == len(spans)
    assert {thread for _, thread in seen} == {"inferwatch-export"}
    for metrics, _ in seen:
        span = spans[int(metrics.span_id, 16)]
        assert f"{span.context.trace_id:032x}" == metrics.trace_id and metrics.feature == "search"
        assert span.attributes[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == metrics.output_tokens
        assert span.attributes[sc.GEN_AI_USAGE_INPUT_TOKENS] == metrics.input_tokens
    by_model = {m.request_model: m for m, _ in seen}
    assert by_model[MODEL].provider == "openai" and by_model[CLAUDE].provider == "anthropic"
    streamed = next(m for m, _ in seen if m.streamed)
    assert streamed.output_tokens == 5 and streamed.ttft_ms is not None and streamed.response_id
    assert _guard.internal_errors.get("telemetry.on_call") == 1


def test_on_call_gets_a_copy_never_on_the_apps_thread_and_may_flush(openai_client: Any, stop_sdk: None,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """What the hook changes is its own copy; calls dropped from a full queue (recorded on the app's thread) are
    not given to it; a hook that flushes (feedback queued: the flush would wait for the export thread, which runs
    the hook) returns at once instead of stalling the export; even ``sys.exit()`` in the hook is only counted."""
    import threading

    threads: list[str] = []
    flushed: list[bool] = []

    def on_call(metrics: Any) -> None:
        threads.append(threading.current_thread().name)
        metrics.output_tokens = 999_999
        metrics.attributes["changed"] = True
        if metrics.request_model == "flushes":  # waiting here would hang the export thread past the test's timeout
            flushed.append(inferwatch.flush(600))
        if metrics.request_model == "exits":
            raise SystemExit(3)

    from inferwatch.telemetry import feedback_export

    monkeypatch.setattr(feedback_export, "RETRY", dataclasses.replace(feedback_export.RETRY, attempts=3,
                                                                      max_backoff_s=0.5))
    exporter = InMemorySpanExporter()
    inferwatch.init(exporter=exporter, metric_exporter=NullMetricExporter(), on_call=on_call, max_queue_size=1,
                    schedule_delay_ms=60_000, endpoint="http://127.0.0.1:9")
    inferwatch.wrap_openai(openai_client)
    with inferwatch.llm_call(model="flushes", provider="vllm") as call:
        call.usage(input_tokens=2, output_tokens=1)
    openai_client.chat.completions.create(model=MODEL, messages=user("dropped [tokens:2]"))  # the queue is full
    inferwatch.feedback(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", thumbs_up=True)  # queued, unreachable
    assert inferwatch.flush(5) is not None
    with inferwatch.llm_call(model="exits", provider="vllm") as call:
        call.usage(input_tokens=2, output_tokens=1)
    assert inferwatch.flush(5)
    assert inferwatch.stats()["dropped"]["queue_full"] == 1
    assert threads == ["inferwatch-export", "inferwatch-export"]  # not the dropped call, not the app's thread
    assert flushed == [False]  # returned at once, nothing waited for
    spans = exporter.get_finished_spans()
    assert [s.attributes[sc.GEN_AI_USAGE_OUTPUT_TOKENS] for s in spans] == [1, 1]
    assert not any("changed" in s.attributes for s in spans)
    assert _guard.internal_errors.get("telemetry.on_call") == 1
