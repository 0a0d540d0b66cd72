"""The SDK export pipeline against a real OTLP/HTTP receiver on 127.0.0.1 (a tiny http.server in a thread)."""

from __future__ import annotations

import logging
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from opentelemetry import metrics as otel_metrics
from opentelemetry import trace
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once

from inferwatch import _guard
from inferwatch import semconv as sc
from inferwatch.options import Options
from inferwatch.telemetry import pipeline as telemetry_pipeline
from inferwatch.telemetry.content import CONTENT_ATTRIBUTES, load_scrubbers
from inferwatch.telemetry.histograms import DURATION_BUCKETS_S, TOKEN_BUCKETS
from inferwatch.telemetry.pipeline import Pipeline
from inferwatch.transport import Transport
from tests.helpers.forked import in_child
from tests.helpers.otel_exporters import KeepingMetricExporter
from tests.helpers.otlp_receiver import Receiver
from tests.helpers.otlp_receiver import any_value as _any_value
from tests.helpers.pipelines import stop_all

EMAIL = "alice@example.com"
SECRET = "sk-proj-" + "A1b2C3d4" * 5
PROMPT = f"Contact {EMAIL} with key {SECRET} please"
STOCK_METRIC_LOGGER = "opentelemetry.exporter.otlp.proto.http.metric_exporter"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def posts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread that made each HTTP request of the SDK's transport."""
    threads: list[str] = []
    real = Transport._request

    def spy(self: Transport, *args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Transport, "_request", spy)
    return threads


# --- fixtures -------------------------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _fresh_guard_counters() -> Iterator[None]:
    _guard.reset()
    yield
    _guard.reset()


@pytest.fixture
def make_pipeline() -> Iterator[Callable[..., Pipeline]]:
    """Pipeline(Options(endpoint=..., fast settings, **overrides), **kwargs); all shut down after the test."""
    made: list[Pipeline] = []

    def make(endpoint: str = "http://127.0.0.1:9", *, pipeline_kwargs: dict[str, Any] | None = None,
             **overrides: Any) -> Pipeline:
        settings: dict[str, Any] = {"endpoint": endpoint, "api_key": "test-key", "service_name": "svc-under-test",
                                    "schedule_delay_ms": 20, "export_timeout_s": 1.0}
        settings.update(overrides)
        pipeline = Pipeline(Options(**settings), **(pipeline_kwargs or {}))
        made.append(pipeline)
        return pipeline

    yield make
    stop_all(made, timeout=1.0)


def _sdk_threads(names: list[str]) -> bool:
    """Whether every name is the export thread's or one of its senders' (never an app's thread)."""
    return all(name == "inferwatch-export" or name.startswith("inferwatch-export-send-") for name in names)


def _end_span(p: Pipeline, name: str = "chat gpt-4o", attributes: dict[str, Any] | None = None) -> None:
    span = p.tracer.start_span(name, kind=trace.SpanKind.CLIENT, attributes=attributes or {})
    span.end()


class _RecordingRedactor:
    """Stands in for inferwatch.redaction.DEFAULT_REDACTOR; notes which thread called it."""

    policy = "test-policy/1"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.threads: list[str] = []

    def redact(self, text: str) -> Any:
        self.threads.append(threading.current_thread().name)
        if self.fail:
            raise RuntimeError("redactor bug")
        return type("RedactionResult", (), {"text": text.replace(EMAIL, "<EMAIL_ADDRESS>")})()


# --- delivery -------------------------------------------------------------------------------------------------
def test_spans_arrive_as_otlp_protobuf_with_the_api_key(receiver: Receiver, make_pipeline: Any) -> None:
    p = make_pipeline(receiver.url)
    for i in range(3):
        _end_span(p, attributes={sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_REQUEST_MODEL: "gpt-4o",
                                 sc.GEN_AI_USAGE_INPUT_TOKENS: 10 + i})

    assert p.flush(5.0) is True
    assert p.stats()["exported"] == 3 and p.stats()["queued"] == 0
    requests = [(path, headers) for path, headers, _ in receiver.requests if path == "/v1/traces"]
    assert requests and all(h["authorization"] == "Bearer test-key" for _, h in requests)
    assert all(h["content-type"] == "application/x-protobuf" for _, h in requests)
    spans = receiver.spans()
    assert sorted(a[sc.GEN_AI_USAGE_INPUT_TOKENS] for _, a in spans) == [10, 11, 12]
    assert {s.name for s, _ in spans} == {"chat gpt-4o"}
    assert {s.kind for s, _ in spans} == {3}  # proto SPAN_KIND_CLIENT
    request = ExportTraceServiceRequest()
    request.ParseFromString(receiver.bodies("/v1/traces")[0])
    resource = {kv.key: _any_value(kv.value) for kv in request.resource_spans[0].resource.attributes}
    assert resource["service.name"] == "svc-under-test"


def test_the_apps_otlp_env_settings_do_not_reach_our_collector(receiver: Receiver, make_pipeline: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-honeycomb-team=app-secret,authorization=Basic app")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-other-vendor=app-secret")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem")
    p = make_pipeline(receiver.url)
    _end_span(p)
    p.record_metrics(operation="chat", provider="x", request_model="m", response_model="m", duration_s=1.0,
                     input_tokens=1, output_tokens=1, ttfc_s=None, error_type=None)
    assert p.flush(5.0) is True

    assert {path for path, _, _ in receiver.requests} == {"/v1/traces", "/v1/metrics"}
    for _, headers, _ in receiver.requests:
        assert headers["authorization"] == "Bearer test-key"
        assert "x-honeycomb-team" not in headers and "x-other-vendor" not in headers


def test_flush_with_nothing_recorded_is_immediate_and_true(make_pipeline: Any, posts: list[str]) -> None:
    """It wakes the export thread (the schedule would wait a minute) and sends nothing."""
    p = make_pipeline(schedule_delay_ms=60_000)
    assert p.flush(30.0) is True
    assert posts == []


@pytest.mark.parametrize("collector", ["refused", "500", "503", "slow"])
def test_failing_collector_never_slows_or_breaks_the_app(collector: str, receiver: Receiver,
                                                          make_pipeline: Any, posts: list[str]) -> None:
    """Span ends only queue: no request is made on the app's thread, and they all return while the collector
    has not answered anything (it holds every request until the ends are done)."""
    endpoint = receiver.url
    receiver.hold = True
    if collector == "refused":
        endpoint = f"http://127.0.0.1:{_free_port()}"
    elif collector != "slow":  # slow: held beyond the export timeout
        receiver.status["/v1/traces"] = int(collector)
    p = make_pipeline(endpoint, max_queue_size=200, max_export_batch_size=100, export_timeout_s=0.3)
    spans = [p.tracer.start_span(f"chat m{i % 7}") for i in range(10_000)]

    for span in spans:
        span.end()  # the SDK's end() + our on_end

    assert receiver.answered == 0 and _sdk_threads(posts)
    if collector != "slow":
        receiver.release()
    assert p.flush(10.0) is True
    stats = p.stats()
    assert stats["dropped"]["queue_full"] > 0
    assert stats["dropped"]["export_failed"] > 0 and stats["export_failures"] > 0
    assert stats["exported"] == 0
    assert stats["dropped"]["queue_full"] + stats["dropped"]["export_failed"] == 10_000
    assert stats["internal_errors"] == {}
    assert posts and _sdk_threads(posts)


def test_a_500_is_not_retried_and_counts_each_span(receiver: Receiver, make_pipeline: Any) -> None:
    receiver.status["/v1/traces"] = 500
    p = make_pipeline(receiver.url)
    for _ in range(5):
        _end_span(p)
    assert p.flush(5.0) is True
    assert len(receiver.bodies("/v1/traces")) == 1
    assert p.stats()["dropped"]["export_failed"] == 5 and p.stats()["export_failures"] == 1


# --- content handling -----------------------------------------------------------------------------------------
def _content_attributes() -> dict[str, Any]:
    return {sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_INPUT_MESSAGES: PROMPT,
            sc.GEN_AI_OUTPUT_MESSAGES: f"Sure, mailing {EMAIL}", sc.GEN_AI_SYSTEM_INSTRUCTIONS: "be brief"}


@pytest.mark.parametrize("capture", ["off", "redacted", "full"])
def test_capture_mode_decides_what_leaves_the_process(capture: str, receiver: Receiver,
                                                      make_pipeline: Any) -> None:
    p = make_pipeline(receiver.url, capture=capture)
    _end_span(p, attributes=_content_attributes())  # under capture=off this content "slipped in"
    assert p.flush(5.0) is True

    raw = b"".join(receiver.bodies("/v1/traces"))
    (span, attrs), = receiver.spans()
    assert SECRET.encode() not in raw  # secrets never leave, whatever the mode
    assert attrs[sc.GEN_AI_OPERATION_NAME] == "chat"
    if capture == "off":
        assert not CONTENT_ATTRIBUTES & attrs.keys()
        assert EMAIL.encode() not in raw and b"be brief" not in raw
        assert sc.REDACTED not in attrs
    elif capture == "redacted":
        assert EMAIL.encode() not in raw
        assert "Contact" in attrs[sc.GEN_AI_INPUT_MESSAGES] and attrs[sc.GEN_AI_SYSTEM_INSTRUCTIONS] == "be brief"
    else:
        assert EMAIL in attrs[sc.GEN_AI_INPUT_MESSAGES] and EMAIL in attrs[sc.GEN_AI_OUTPUT_MESSAGES]
        assert attrs[sc.REDACTED] is True  # the SDK scrubbed its secrets (the collector redacts again)


def test_redaction_runs_in_the_export_thread_and_marks_the_span(make_pipeline: Any) -> None:
    exporter, redactor = InMemorySpanExporter(), _RecordingRedactor()
    p = make_pipeline(capture="redacted", pipeline_kwargs={"exporter": exporter, "redactor": redactor})
    _end_span(p, attributes=_content_attributes())
    assert redactor.threads == []  # nothing on the caller's thread
    assert p.flush(5.0) is True

    assert redactor.threads and set(redactor.threads) == {"inferwatch-export"}
    (span,) = exporter.get_finished_spans()
    attrs = dict(span.attributes or {})
    assert attrs[sc.GEN_AI_INPUT_MESSAGES] == PROMPT.replace(EMAIL, "<EMAIL_ADDRESS>")
    assert attrs[sc.REDACTED] is True and attrs[sc.REDACTION_POLICY] == "test-policy/1"


def test_the_rebuilt_span_keeps_identity_times_events_and_status(make_pipeline: Any) -> None:
    exporter = InMemorySpanExporter()
    p = make_pipeline(capture="redacted", pipeline_kwargs={"exporter": exporter, "redactor": _RecordingRedactor()})
    span = p.tracer.start_span("chat m", kind=trace.SpanKind.CLIENT, attributes=_content_attributes())
    span.add_event("gen_ai.choice", {sc.GEN_AI_OUTPUT_MESSAGES: f"to {EMAIL}", "index": 0})
    span.set_status(trace.Status(trace.StatusCode.ERROR, "RateLimitError"))
    span.end()
    assert p.flush(5.0) is True

    (sent,) = exporter.get_finished_spans()
    original: Any = span
    assert sent is not original
    assert sent.context == original.context and sent.parent == original.parent
    assert (sent.start_time, sent.end_time, sent.kind, sent.name) == (original.start_time, original.end_time,
                                                                       trace.SpanKind.CLIENT, "chat m")
    assert sent.status.status_code is trace.StatusCode.ERROR and sent.resource is original.resource
    assert sent.instrumentation_scope == original.instrumentation_scope
    (event,) = sent.events
    assert event.attributes == {sc.GEN_AI_OUTPUT_MESSAGES: "to <EMAIL_ADDRESS>", "index": 0}
    assert event.timestamp == original.events[0].timestamp


def test_spans_without_content_are_sent_as_they_are(make_pipeline: Any) -> None:
    exporter = InMemorySpanExporter()
    p = make_pipeline(capture="redacted", pipeline_kwargs={"exporter": exporter})
    span = p.tracer.start_span("chat m", attributes={sc.GEN_AI_REQUEST_MODEL: "m"})
    span.end()
    assert p.flush(5.0) is True
    (sent,) = exporter.get_finished_spans()
    assert type(sent) is ReadableSpan and dict(sent.attributes or {}) == {sc.GEN_AI_REQUEST_MODEL: "m"}


@pytest.mark.parametrize("capture", ["off", "redacted", "full"])
def test_names_values_events_and_status_are_redacted_unless_capture_is_full(make_pipeline: Any,
                                                                             capture: str) -> None:
    exporter = InMemorySpanExporter()
    p = make_pipeline(capture=capture, pipeline_kwargs={"exporter": exporter})
    user_hash = "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"
    span = p.tracer.start_span(f"GET /users/{EMAIL}/profile", attributes={
        "db.statement": "SELECT * FROM users WHERE ssn = '219-09-9999'", "app.key": SECRET,
        "app.tags": ("vip", f"mail {EMAIL}"), "gen_ai.request.model": "anthropic.claude-3-haiku-20240307-v1:0",
        sc.USER_HASH: user_hash, "app.count": 3})  # fmt: skip
    span.record_exception(ValueError(f"no user {EMAIL} at https://example.com/u"))
    span.set_status(trace.StatusCode.ERROR, f"failed for {EMAIL}")
    span.end()
    assert p.flush(5.0) is True
    (sent,) = exporter.get_finished_spans()
    attributes = dict(sent.attributes or {})
    (event,) = sent.events
    if capture == "full":  # the user chose to send PII: only content is handled
        assert sent.name == f"GET /users/{EMAIL}/profile" and attributes["app.key"] == SECRET
        return
    assert sent.name == "GET /users/<EMAIL_ADDRESS>/profile"
    assert attributes["db.statement"] == "SELECT * FROM users WHERE ssn = '<US_SSN>'"
    assert attributes["app.key"] == "<OPENAI_API_KEY>" and attributes["app.tags"] == ("vip", "mail <EMAIL_ADDRESS>")
    assert attributes["gen_ai.request.model"] == "anthropic.claude-3-haiku-20240307-v1:0"  # no URL in values
    assert attributes[sc.USER_HASH] == user_hash and attributes["app.count"] == 3  # kept as they are
    assert event.attributes["exception.message"] == "no user <EMAIL_ADDRESS> at <URL>"  # free text: every entity
    assert EMAIL not in event.attributes["exception.stacktrace"]
    assert sent.status.description == "failed for <EMAIL_ADDRESS>"


def test_model_names_are_sent_as_they_are(make_pipeline: Any) -> None:
    exporter = InMemorySpanExporter()
    p = make_pipeline(capture="redacted", pipeline_kwargs={"exporter": exporter})
    model = "claude-haiku-4-5-20251001"  # the phone recognizer reads 4-5-20251001 as a number
    _end_span(p, f"chat {model} for {EMAIL}", {sc.GEN_AI_REQUEST_MODEL: model, sc.GEN_AI_RESPONSE_MODEL: model,
                                               "app.model": model})
    assert p.flush(5.0) is True
    (sent,) = exporter.get_finished_spans()
    assert sent.name == f"chat {model} for <EMAIL_ADDRESS>"
    assert sent.attributes[sc.GEN_AI_REQUEST_MODEL] == sent.attributes[sc.GEN_AI_RESPONSE_MODEL] == model
    assert sent.attributes["app.model"] == "claude-haiku-<PHONE_NUMBER>"  # any other key: redacted


def test_a_span_with_nothing_to_redact_is_sent_as_it_is(make_pipeline: Any) -> None:
    exporter = InMemorySpanExporter()
    p = make_pipeline(capture="off", pipeline_kwargs={"exporter": exporter})
    _end_span(p, attributes={sc.GEN_AI_REQUEST_MODEL: "gpt-4o", "n": 2})
    _end_span(p, attributes={sc.GEN_AI_REQUEST_MODEL: "gpt-4o", "n": 2})  # the second from the memo
    assert p.flush(5.0) is True
    spans = exporter.get_finished_spans()
    assert len(spans) == 2 and all(type(span) is ReadableSpan and span.name == "chat gpt-4o" for span in spans)


def test_the_scrubbers_are_the_redaction_packages() -> None:
    """capture=redacted replaces PII and secrets, capture=full secrets only: both with the recognizers of
    ``inferwatch.redaction``, also for a custom redactor that cannot narrow itself to secrets."""
    text = (f"mail {EMAIL}, key {SECRET}, Authorization: Bearer abcdefghijklmnopqrstu, password=hunter22, "
            "call +1 415 555 2671 on 2024-01-02 about 3 items")
    secrets_only = (f"mail {EMAIL}, key <OPENAI_API_KEY>, Authorization: Bearer <BEARER_TOKEN>, "
                    "password=<PASSWORD>, call +1 415 555 2671 on 2024-01-02 about 3 items")
    scrubbers = load_scrubbers()
    assert scrubbers.redact(text) == (
        "mail <EMAIL_ADDRESS>, key <OPENAI_API_KEY>, Authorization: Bearer <BEARER_TOKEN>, password=<PASSWORD>, "
        "call <PHONE_NUMBER> on 2024-01-02 about 3 items")
    assert scrubbers.secrets(text) == secrets_only
    assert scrubbers.redact_policy == "inferwatch-redact/4"
    assert scrubbers.secrets_policy == "inferwatch-redact/4:secrets"
    custom = load_scrubbers(UpperRedactor())
    assert custom.redact("abc") == "ABC" and custom.redact_policy == "upper-test"
    assert custom.secrets(text) == secrets_only


def test_content_is_dropped_when_the_redaction_package_cannot_load(make_pipeline: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "inferwatch.redaction", None)  # its import now fails
    exporter = InMemorySpanExporter()
    p = make_pipeline(capture="full", pipeline_kwargs={"exporter": exporter})
    _end_span(p, attributes=_content_attributes())
    assert p.flush(5.0) is True
    (span,) = exporter.get_finished_spans()
    assert not CONTENT_ATTRIBUTES & dict(span.attributes or {}).keys() and sc.REDACTED not in span.attributes
    assert p.stats()["internal_errors"]["telemetry.redaction_import"] == 1


# --- failures inside the pipeline never reach the app ---------------------------------------------------------
def test_a_raising_redactor_fails_closed(make_pipeline: Any) -> None:
    exporter = InMemorySpanExporter()
    p = make_pipeline(capture="redacted",
                      pipeline_kwargs={"exporter": exporter, "redactor": _RecordingRedactor(fail=True)})
    _end_span(p, attributes=_content_attributes())
    assert p.flush(5.0) is True

    (span,) = exporter.get_finished_spans()  # the span still goes, without its text
    assert not CONTENT_ATTRIBUTES & dict(span.attributes or {}).keys()
    assert span.name == ""  # names and values too: dropped, never sent raw
    assert {key: value for key, value in span.attributes.items() if value not in ("", True)} == {
        sc.GEN_AI_OPERATION_NAME: "chat", sc.REDACTION_POLICY: "test-policy/1"}  # names of things are kept
    assert p.stats()["internal_errors"]["telemetry.redact"] > 3


class _RaisingExporter(SpanExporter):
    def export(self, spans: Any) -> SpanExportResult:
        raise ConnectionError("exporter bug")


def test_a_raising_exporter_is_counted(make_pipeline: Any) -> None:
    p = make_pipeline(pipeline_kwargs={"exporter": _RaisingExporter()})
    for _ in range(4):
        _end_span(p)
    assert p.flush(5.0) is True
    stats = p.stats()
    assert stats["dropped"]["export_failed"] == 4 and stats["internal_errors"]["telemetry.export"] == 1


def test_before_send_can_keep_drop_or_fail(make_pipeline: Any) -> None:
    def hook(span: ReadableSpan) -> ReadableSpan | None:
        if span.name == "boom":
            raise ValueError("hook bug")
        return None if span.name == "private" else span

    exporter = InMemorySpanExporter()
    p = make_pipeline(pipeline_kwargs={"exporter": exporter, "before_send": hook})
    for name in ("keep", "private", "boom", "keep"):
        _end_span(p, name)
    assert p.flush(5.0) is True

    assert [s.name for s in exporter.get_finished_spans()] == ["keep", "keep"]
    stats = p.stats()
    assert stats["dropped"]["before_send"] == 2 and stats["internal_errors"]["telemetry.before_send"] == 1


def test_on_end_never_raises(make_pipeline: Any) -> None:
    p = make_pipeline(pipeline_kwargs={"exporter": InMemorySpanExporter()})
    queue, p._queue = p._queue, None  # type: ignore[assignment] - simulate a bug of ours
    _end_span(p)  # must not raise
    assert _guard.internal_errors["telemetry.on_end"] == 1
    p._queue = queue


def test_too_large_spans_are_dropped(make_pipeline: Any) -> None:
    exporter = InMemorySpanExporter()
    p = make_pipeline(pipeline_kwargs={"exporter": exporter, "max_span_bytes": 10_000})
    _end_span(p, "big", {"inferwatch.prompt.template": "x" * 20_000})
    _end_span(p, "small", {"inferwatch.prompt.template": "x" * 100})
    assert p.flush(5.0) is True
    assert [s.name for s in exporter.get_finished_spans()] == ["small"]
    assert p.stats()["dropped"]["too_large"] == 1


def test_count_drop_and_stats_shape(make_pipeline: Any) -> None:
    p = make_pipeline(pipeline_kwargs={"exporter": InMemorySpanExporter()})
    p.count_drop("sampled", 3)
    p.count_drop("sampled")
    stats = p.stats()
    assert stats["dropped"]["sampled"] == 4
    assert {"queued", "exported", "dropped", "export_failures", "internal_errors"} <= stats.keys()
    assert set(telemetry_pipeline.DROP_REASONS) <= stats["dropped"].keys()


# --- private providers ----------------------------------------------------------------------------------------
@pytest.fixture
def fresh_otel_globals(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let this test set the global tracer provider once (restored afterwards)."""
    monkeypatch.setattr(trace, "_TRACER_PROVIDER_SET_ONCE", Once())
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)


def test_the_apps_global_tracer_provider_is_untouched(fresh_otel_globals: None, make_pipeline: Any) -> None:
    global_meter_provider = otel_metrics.get_meter_provider()
    ours = InMemorySpanExporter()
    p = make_pipeline(pipeline_kwargs={"exporter": ours})
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)  # we did not install ours

    theirs = InMemorySpanExporter()
    app_provider = TracerProvider()
    app_provider.add_span_processor(SimpleSpanProcessor(theirs))
    trace.set_tracer_provider(app_provider)
    with trace.get_tracer("app").start_as_current_span("GET /search") as app_span:
        _end_span(p, "chat gpt-4o")
    assert p.flush(5.0) is True

    assert trace.get_tracer_provider() is app_provider
    assert otel_metrics.get_meter_provider() is global_meter_provider
    assert [s.name for s in theirs.get_finished_spans()] == ["GET /search"]
    assert [s.name for s in ours.get_finished_spans()] == ["chat gpt-4o"]
    (llm_span,) = ours.get_finished_spans()
    assert llm_span.context.trace_id == app_span.get_span_context().trace_id  # same trace, separate pipelines


# --- metrics --------------------------------------------------------------------------------------------------
def _record_two_calls(p: Pipeline) -> None:
    p.record_metrics(operation="chat", provider="openai", request_model="gpt-4o", response_model="gpt-4o-2024",
                     duration_s=1.2, input_tokens=120, output_tokens=30, ttfc_s=0.25, error_type=None)
    p.record_metrics(operation="chat", provider="openai", request_model="gpt-4o", response_model="",
                     duration_s=0.1, input_tokens=None, output_tokens=None, ttfc_s=None,
                     error_type="RateLimitError")


def test_metrics_reach_v1_metrics_with_semconv_names_and_buckets(receiver: Receiver, make_pipeline: Any) -> None:
    p = make_pipeline(receiver.url)
    _record_two_calls(p)
    assert p.flush(5.0) is True

    (body,) = receiver.bodies("/v1/metrics")
    (headers,) = [h for path, h, _ in receiver.requests if path == "/v1/metrics"]
    assert headers["authorization"] == "Bearer test-key"
    request = ExportMetricsServiceRequest()
    request.ParseFromString(body)
    found = {m.name: m for rm in request.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert set(found) == {sc.METRIC_OPERATION_DURATION, sc.METRIC_TOKEN_USAGE, sc.METRIC_TIME_TO_FIRST_CHUNK}
    duration = found[sc.METRIC_OPERATION_DURATION]
    assert duration.unit == "s" and found[sc.METRIC_TOKEN_USAGE].unit == "{token}"
    assert list(duration.histogram.data_points[0].explicit_bounds) == list(DURATION_BUCKETS_S)
    assert sum(dp.count for dp in duration.histogram.data_points) == 2
    errors = [dp for dp in duration.histogram.data_points
              if any(kv.key == sc.ERROR_TYPE for kv in dp.attributes)]
    assert len(errors) == 1
    token_types = sorted(_any_value(kv.value) for dp in found[sc.METRIC_TOKEN_USAGE].histogram.data_points
                         for kv in dp.attributes if kv.key == sc.GEN_AI_TOKEN_TYPE)
    assert token_types == ["input", "output"]
    assert list(found[sc.METRIC_TOKEN_USAGE].histogram.data_points[0].explicit_bounds) == \
        [float(b) for b in TOKEN_BUCKETS]


def test_a_collector_without_v1_metrics_only_counts_failures(receiver: Receiver, make_pipeline: Any) -> None:
    receiver.status["/v1/metrics"] = 404
    p = make_pipeline(receiver.url)
    _record_two_calls(p)
    _end_span(p)
    assert p.flush(5.0) is True
    stats = p.stats()
    assert stats["exported"] == 1 and stats["export_failures"] == 0 and stats["metric_export_failures"] == 1
    assert stats["internal_errors"] == {}


def test_a_failing_metrics_export_is_warned_once_not_at_every_retry(make_pipeline: Any, caplog: Any) -> None:
    """The stock OTLP metric exporter logs every failure and retry; from the SDK's export thread those records are
    dropped and the pipeline warns once (an app's own exporters, on other threads, still log)."""
    caplog.set_level(logging.INFO)
    p = make_pipeline("http://127.0.0.1:9", export_timeout_s=1.5)  # nothing listens: refused, retried
    for _ in range(2):
        _record_two_calls(p)
        p.flush(10.0)
    assert p.stats()["metric_export_failures"] == 2
    stock = [r for r in caplog.records if r.name == STOCK_METRIC_LOGGER]
    ours = [r for r in caplog.records if r.name == "inferwatch" and "metrics export" in r.getMessage()]
    assert stock == [] and len(ours) == 1
    logging.getLogger(STOCK_METRIC_LOGGER).warning("the app's own exporter")  # another thread's
    assert [r.getMessage() for r in caplog.records if r.name == STOCK_METRIC_LOGGER] == [
        "the app's own exporter"]


# --- lifecycle ------------------------------------------------------------------------------------------------
def test_shutdown_is_idempotent_and_leaves_an_inert_pipeline(receiver: Receiver, make_pipeline: Any) -> None:
    p = make_pipeline(receiver.url)
    _end_span(p)
    p.shutdown(2.0)
    p.shutdown(2.0)
    assert len(receiver.spans()) == 1
    assert not (p._thread and p._thread.is_alive())
    _end_span(p)  # after shutdown: ignored, no error
    p.record_metrics(operation="chat", provider="x", request_model="m", response_model="m", duration_s=1.0,
                     input_tokens=1, output_tokens=1, ttfc_s=None, error_type=None)
    assert p.flush(1.0) is True
    assert p not in telemetry_pipeline.live_pipelines()


def test_flush_and_shutdown_keep_their_timeouts_with_a_hanging_collector(receiver: Receiver,
                                                                        make_pipeline: Any) -> None:
    """The collector holds every request: flush() says it did not finish instead of blocking, and shutdown()
    returns, counting what it leaves, while the export thread is still inside the unanswered request."""
    receiver.hold = True
    p = make_pipeline(receiver.url, export_timeout_s=60.0, max_export_batch_size=100)
    for _ in range(1000):
        _end_span(p)

    assert p.flush(0.2) is False  # still exporting: says so instead of blocking
    p.shutdown(0.5)
    assert receiver.answered == 0
    assert any(t.is_alive() for t in p.span_export.senders.threads())  # still inside the unanswered requests
    assert p.stats()["dropped"]["shutdown"] > 0
    receiver.release()


def test_atexit_drain_delivers_what_is_queued(receiver: Receiver, make_pipeline: Any) -> None:
    p = make_pipeline(receiver.url, schedule_delay_ms=60_000)  # the thread would not wake on its own
    _end_span(p, "queued at exit")
    telemetry_pipeline.drain_at_exit()
    assert [s.name for s, _ in receiver.spans()] == ["queued at exit"]


def test_a_flush_from_inside_the_export_thread_does_not_deadlock(make_pipeline: Any) -> None:
    results: list[bool] = []
    holder: list[Pipeline] = []

    def hook(span: ReadableSpan) -> ReadableSpan:
        results.append(holder[0].flush(3600.0))
        return span

    p = make_pipeline(pipeline_kwargs={"exporter": InMemorySpanExporter(), "before_send": hook})
    holder.append(p)
    _end_span(p)
    assert p.flush(60.0) is True  # the inner flush returned at once: a waiting one would hold the thread 1 h
    assert results == [False]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="os.fork semantics tested on Linux")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # Python >= 3.12
def test_a_forked_child_exports_its_own_spans_only(receiver: Receiver, make_pipeline: Any) -> None:
    p = make_pipeline(receiver.url, schedule_delay_ms=60_000, max_export_batch_size=1000)
    _end_span(p, "parent-span")
    assert p.stats()["queued"] == 1
    p.count_drop("sampled")
    for _ in range(500):  # the span ids drawn ahead by the parent's export thread
        if p._id_pool:
            break
        time.sleep(0.01)
    parent_ids = set(p._id_pool)
    assert parent_ids
    def child_work() -> dict[str, Any]:
        ids_at_fork = len(p._id_pool)
        before = p.stats()
        _end_span(p, "child-span")
        p.record_metrics(operation="chat", provider="x", request_model="m", response_model="m",
                         duration_s=0.5, input_tokens=1, output_tokens=1, ttfc_s=None, error_type=None)
        flushed = p.flush(5.0)
        after = p.stats()
        reused = len(set(p._id_pool) & parent_ids)  # the child's own export thread has drawn its own
        return {"before": before, "flushed": flushed, "after": after, "ids_at_fork": ids_at_fork,
                "ids": len(p._id_pool), "reused": reused}

    child = in_child(child_work, timeout_s=15)

    assert child["before"]["queued"] == 0 and child["before"]["dropped"]["sampled"] == 0  # reset in the child
    assert child["ids_at_fork"] == 0 and child["ids"] > 0 and child["reused"] == 0  # never the parent's ids
    assert child["flushed"] is True and child["after"]["exported"] == 1
    assert p.flush(5.0) is True and p.stats()["exported"] == 1  # the parent is unaffected
    assert sorted(s.name for s, _ in receiver.spans()) == ["child-span", "parent-span"]
    assert len(receiver.bodies("/v1/metrics")) == 1  # the child's; the parent recorded none





class UpperRedactor:
    policy = "upper-test"

    def redact(self, text: str) -> SimpleNamespace:
        return SimpleNamespace(text=text.upper())


def test_init_takes_the_hooks_and_exporters_publicly():
    """before_send, a custom redactor and a metric exporter are init() arguments, not private attributes."""
    import inferwatch

    seen: list[str] = []

    def before_send(span):
        seen.append(span.name)
        return None if span.name.lower().startswith("drop") else span

    exporter, metrics = InMemorySpanExporter(), KeepingMetricExporter()
    inferwatch.shutdown()
    inferwatch.init(endpoint="http://127.0.0.1:9", api_key="k", exporter=exporter, capture="redacted",
                    before_send=before_send, redactor=UpperRedactor(), metric_exporter=metrics)
    try:
        with inferwatch.llm_call(model="m", provider="p") as call:
            call.content(input="secret words")
            call.usage(input_tokens=1, output_tokens=1)
        with inferwatch.llm_call(model="m", provider="p", operation="drop") as call:
            call.usage(input_tokens=1, output_tokens=1)
        assert inferwatch.flush(5)
        (span,) = exporter.get_finished_spans()
        assert len(seen) == 2 and span.name == seen[0] == "CHAT m"  # the name went through the redactor too,
        # around its model name
        assert "SECRET WORDS" in str(span.attributes.get("gen_ai.input.messages"))
        assert inferwatch.stats()["dropped"].get("before_send") == 1
        assert metrics.batches  # the metric path used the given exporter
    finally:
        inferwatch.shutdown()
