"""The export thread's own encoders and aggregation, checked against the OpenTelemetry SDK they replace.

* ``inferwatch._otlp.encode_spans`` must produce the very bytes of the stock ``encode_spans`` for any spans.
* ``telemetry.histograms.Histograms`` must export the data points a ``MeterProvider`` with the same histograms
  would.
* The default span export retries as the stock OTLP exporter does, and ``shutdown()`` cuts a retry wait short.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as stock_encode_spans
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.metrics import Histogram
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util import BoundedList
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from inferwatch import _guard, _otlp
from inferwatch import semconv as sc
from inferwatch.options import Options
from inferwatch.telemetry.histograms import Histograms, record_row
from inferwatch.telemetry.pipeline import Pipeline
from inferwatch.transport import OTLP_RETRY
from tests.helpers.otlp_receiver import Receiver, ScriptedStatus
from tests.helpers.pipelines import stop_all

VALUES: list[Any] = ["", "abc", "é€x" * 50, "x" * 300, True, False, 0, 1, -1, 127, 128, 300, 2**40, -(2**63),
                     2**63 - 1, 2**63, 1.5, -0.0, math.nan, math.inf, ("a", "bb"), ("stop",), [1, 2, 3],
                     [True, 1.5, "s"], b"\x00\xff", None, {"k": 1, "n": {"x": "y"}}, (), object()]
RESOURCES = [Resource.create({"service.name": "s"}), Resource({"a": 1}, schema_url="http://x"), Resource({})]
SCOPES = [InstrumentationScope("inferwatch", "0.1.0"), InstrumentationScope("app", "", "http://s", {"q": "w"}),
          None]


def _random_span(rnd: random.Random) -> ReadableSpan:
    def ctx() -> trace.SpanContext:
        state = trace.TraceState([("k", "v"), ("z", "1")]) if rnd.random() < 0.3 else None
        return trace.SpanContext(rnd.getrandbits(128) or 1, rnd.getrandbits(64) or 1, rnd.random() < 0.3,
                                 trace.TraceFlags(rnd.choice([0, 1, 3])), state)

    keys = [sc.GEN_AI_REQUEST_MODEL, sc.GEN_AI_INPUT_MESSAGES, sc.GEN_AI_RESPONSE_FINISH_REASONS, "a", "k.1"]
    attributes: Any = {rnd.choice(keys) + str(rnd.randint(0, 2)) * rnd.randint(0, 1): rnd.choice(VALUES)
                       for _ in range(rnd.randint(0, 12))}
    if rnd.random() < 0.2:
        attributes = BoundedAttributes(3, attributes)
    events: Any = [Event(rnd.choice(["e", ""]), {"a": rnd.choice(VALUES)}, rnd.choice([None, 5, 10**18]))
                   for _ in range(rnd.choice([0, 0, 1, 2]))]
    if rnd.random() < 0.2:
        bounded = BoundedList(1)
        bounded.extend(events)
        events = bounded
    links = [trace.Link(ctx(), {"a": rnd.choice(VALUES)}) for _ in range(rnd.choice([0, 0, 1]))]
    status = rnd.choice([trace.Status(trace.StatusCode.UNSET), trace.Status(trace.StatusCode.ERROR, "boom é"),
                         trace.Status(trace.StatusCode.OK)])
    return ReadableSpan(name=rnd.choice(["chat gpt-4o", "", "é" * 100]), context=ctx(),
                        parent=rnd.choice([None, ctx()]), resource=rnd.choice(RESOURCES), attributes=attributes,
                        events=events, links=links, kind=rnd.choice(list(trace.SpanKind)), status=status,
                        start_time=rnd.choice([None, 0, 1, 2**62]), end_time=rnd.choice([None, 7, 2**63]),
                        instrumentation_scope=rnd.choice(SCOPES))


@pytest.fixture
def quiet_encoders() -> Iterator[None]:
    """Both encoders log the values they leave out; VALUES has some on purpose."""
    import logging

    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


# --- spans -------------------------------------------------------------------------------------------------------
def test_span_encoding_is_byte_for_byte_the_stock_encoders(quiet_encoders: None) -> None:
    rnd = random.Random(20260821)
    _otlp._cache.clear()
    for _ in range(400):
        batch = [_random_span(rnd) for _ in range(rnd.randint(1, 6))]
        assert _otlp.encode_spans(batch) == stock_encode_spans(batch).SerializePartialToString()
    assert _otlp._cache  # pairs were cached along the way, and later batches still came out identical


def test_the_cache_keeps_fields_apart_and_never_holds_content() -> None:
    _otlp._cache.clear()
    ctx = trace.SpanContext(1, 2, False)
    span = ReadableSpan("s", ctx, attributes={"a": 1, sc.GEN_AI_INPUT_MESSAGES: "my prompt"},
                        events=[Event("e", {"a": 1}, 5)], resource=RESOURCES[2])
    for _ in range(2):  # the second time from the cache
        assert _otlp.encode_spans([span]) == stock_encode_spans([span]).SerializePartialToString()
    assert not any(key[1] == sc.GEN_AI_INPUT_MESSAGES for key in _otlp._cache)


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_otlp, "MAX_CACHED", 10)
    _otlp._cache.clear()
    span = ReadableSpan("s", trace.SpanContext(1, 2, False), attributes={f"k{i}": i for i in range(25)},
                        resource=RESOURCES[2])
    assert _otlp.encode_spans([span]) == stock_encode_spans([span]).SerializePartialToString()
    assert len(_otlp._cache) <= 10


# --- metrics -----------------------------------------------------------------------------------------------------
def _rows(rnd: random.Random, n: int) -> list[tuple[Any, ...]]:
    return [(rnd.choice(["chat", "embeddings"]), rnd.choice(["openai", "anthropic"]),
             rnd.choice(["", "gpt-4o", f"m{rnd.randint(0, 5)}"]), rnd.choice(["", "gpt-4o-2024"]),
             rnd.choice([None, -1.0, 0.0, 0.01, 0.5, rnd.random() * 100]), rnd.choice([None, 0, 5, 100, 70000]),
             rnd.choice([None, 0, 1, 300]), rnd.choice([None, 0.02, 0.2, rnd.random()]),
             rnd.choice([None, "", "RateLimitError"])) for _ in range(n)]


def _points(data: Any) -> dict[tuple[str, frozenset[Any]], tuple[Any, ...]]:
    out = {}
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            assert (sm.scope.name, sm.scope.version) == ("inferwatch", "9.9")
            for m in sm.metrics:
                assert m.data.aggregation_temporality is AggregationTemporality.DELTA
                for dp in m.data.data_points:
                    out[(m.name, m.unit, m.description, frozenset(dp.attributes.items()))] = (
                        dp.count, round(dp.sum, 9), tuple(dp.bucket_counts), tuple(dp.explicit_bounds), dp.min,
                        dp.max, dp.time_unix_nano > dp.start_time_unix_nano > 0)
    return out


def _with_the_otel_sdk(rows: list[tuple[Any, ...]]) -> Any:
    """The same measurements through a MeterProvider (what the pipeline used before its own histograms)."""
    reader = InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
    meter = MeterProvider(metric_readers=[reader], resource=Resource.create({})).get_meter("inferwatch", "9.9")
    instruments = [meter.create_histogram(name, unit=unit, description=description,
                                          explicit_bucket_boundaries_advisory=bounds)
                   for name, unit, description, bounds in Histograms.SPECS]
    for op, provider, req, resp, duration, inp, out, ttfc, error in rows:
        attrs = {sc.GEN_AI_OPERATION_NAME: op, sc.GEN_AI_PROVIDER_NAME: provider}
        if req:
            attrs[sc.GEN_AI_REQUEST_MODEL] = req
        if resp:
            attrs[sc.GEN_AI_RESPONSE_MODEL] = resp
        if duration is not None and duration >= 0:
            instruments[0].record(duration, {**attrs, sc.ERROR_TYPE: error} if error else attrs)
        if inp is not None and inp >= 0:
            instruments[1].record(inp, {**attrs, sc.GEN_AI_TOKEN_TYPE: "input"})
        if out is not None and out >= 0:
            instruments[1].record(out, {**attrs, sc.GEN_AI_TOKEN_TYPE: "output"})
        if ttfc is not None and ttfc >= 0:
            instruments[2].record(ttfc, attrs)
    return reader.get_metrics_data()


def test_histograms_export_what_the_otel_metrics_sdk_would() -> None:
    rows = _rows(random.Random(7), 3000)
    histograms = Histograms(Resource.create({}), "9.9")
    for row in rows:
        record_row(histograms, row)
    ours = _points(histograms.collect())
    assert ours == _points(_with_the_otel_sdk(rows)) and len(ours) > 100
    assert histograms.collect() is None  # delta: the interval started again, nothing in it


def test_histograms_cap_their_attribute_sets_as_otel_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Histograms, "MAX_POINTS", 3)
    histograms = Histograms(Resource.create({}), "1")
    for i in range(6):
        histograms.record(0, 0.5, ((sc.GEN_AI_REQUEST_MODEL, f"m{i}"),))
    (metric,) = histograms.collect().resource_metrics[0].scope_metrics[0].metrics
    points = {tuple(dp.attributes.items()): dp.count for dp in metric.data.data_points}
    assert len(points) == 4 and points[(("otel.metric.overflow", True),)] == 3


# --- the default span export: retries ----------------------------------------------------------------------------


@pytest.fixture
def pipeline_for() -> Iterator[Callable[..., Pipeline]]:
    made: list[Pipeline] = []

    def make(url: str, **overrides: Any) -> Pipeline:
        settings = {"endpoint": url, "api_key": "k", "schedule_delay_ms": 20, "export_timeout_s": 5.0, **overrides}
        made.append(Pipeline(Options(**settings)))
        return made[-1]

    yield make
    stop_all(made, timeout=1.0)
    _guard.reset()


def _one_span(p: Pipeline) -> None:
    p.span("chat m", trace.SpanKind.CLIENT).end()


def test_a_503_is_retried_and_the_batch_delivered(pipeline_for: Callable[..., Pipeline]) -> None:
    receiver = Receiver()
    try:
        receiver.status = ScriptedStatus([503])
        p = pipeline_for(receiver.url)
        _one_span(p)
        assert p.flush(10.0) is True
        stats = p.stats()
        assert len(receiver.bodies("/v1/traces")) == 2 and [s.name for s, _ in receiver.spans()] == ["chat m"] * 2
        assert stats["exported"] == 1 and stats["export_failures"] == 0 and sum(stats["dropped"].values()) == 0
    finally:
        receiver.close()


def test_shutdown_cuts_a_retry_wait_short(pipeline_for: Callable[..., Pipeline]) -> None:
    """A collector answering 503 to everything, and 60 s to retry: shutdown() stops the retries at once (the
    thread ends before its next attempt: fewer attempts than the retry rule's), and the spans are counted."""
    receiver = Receiver()
    try:
        receiver.status = ScriptedStatus([503] * 100)
        p = pipeline_for(receiver.url, export_timeout_s=60.0)
        _one_span(p)
        deadline = time.monotonic() + 5
        while not receiver.bodies("/v1/traces") and time.monotonic() < deadline:
            time.sleep(0.01)
        p.shutdown(0.5)
        p._thread.join(60.0)
        assert not p._thread.is_alive() and p.stats()["dropped"]["export_failed"] == 1
        assert len(receiver.bodies("/v1/traces")) < OTLP_RETRY.attempts
    finally:
        receiver.close()
