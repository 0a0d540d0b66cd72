"""The SDK's export pipeline: a private TracerProvider, a bounded queue and one export thread.

The caller's thread only appends to a deque (``LightSpan.end``/``end_call``, ``ProviderCall.end``, ``on_end``,
``record_metrics``): O(1), no I/O, no redaction, no serialization, never blocks, never raises (DESIGN §4 rules 1,
4, 7). The SDK's own spans are :class:`LightSpan`s: an LLM call hands over a snapshot of its metrics and the export
thread derives the span's attributes and the metric values from it (see the class for why); most provider
integration calls are queued as they are, and their metrics and span are made here (:class:`Recorded`). One daemon
thread does everything else: content handling (redaction by capture mode), the ``before_send`` hook, the size cap,
OTLP/HTTP protobuf export of spans to ``{endpoint}/v1/traces`` (encoded by :mod:`inferwatch._otlp`), aggregating
the GenAI histograms (:class:`_Histograms`) and exporting them to ``{endpoint}/v1/metrics`` every
``metrics_interval_s`` and on :meth:`Pipeline.flush`. Every drop is counted by reason (:data:`DROP_REASONS`); every
failure in here is guarded (:mod:`inferwatch._guard`).

The provider is private (never ``set_tracer_provider``), and the metrics never touch a global ``MeterProvider``,
so an app's own OpenTelemetry setup keeps working untouched and its spans never reach our collector (DESIGN §4
rule 3).

Content handling, in the export thread, for the attributes in :data:`CONTENT_ATTRIBUTES` (the recorder sets them
raw, truncated, only when capture is on):

* ``off``: stripped, whatever slipped in.
* ``redacted``: every PII/secret entity replaced (``inferwatch.redaction.DEFAULT_REDACTOR``).
* ``full``: secrets only scrubbed (the redactor's secret entities if it can filter, else a built-in scrub).

A span whose content was handled by the SDK's redactor is marked ``inferwatch.redacted=true`` (with the policy in
``inferwatch.redaction.policy``): a record of what the SDK did. The collector redacts the content it stores again
whatever the mark says (a mark set by the client cannot keep PII out; its ``content_capture`` is ``off`` or
``redacted``, never full text), so ``full`` sends the whole text, secrets scrubbed, and the collector stores it
redacted. If the redactor module is missing, a built-in minimal scrub (secrets, e-mails, long digit runs) is used
and ``redacted`` spans are *not* marked. A redactor that raises fails closed: the attribute is dropped, not sent
raw.

Disk buffer (optional, ``Options.disk_buffer_dir``; :mod:`inferwatch.disk_buffer`): with it, spans are encoded and
POSTed by the pipeline itself (one attempt per request, no sleeping retries in the export thread). A request that
fails transiently (connection refused or reset, timeout, 408/429/502/503/504) is written to the buffer; while the
buffer holds anything, new requests are appended behind it and the oldest are re-sent first, one probe per backoff
(1 s doubling to 30 s, or the collector's ``Retry-After``) and on every :meth:`Pipeline.flush`. A permanent refusal
(other 4xx/5xx) is dropped as ``export_failed``, never retried. Drops here: ``disk_buffer_full`` (oldest requests
evicted to stay under the size cap), ``disk_buffer_error`` (the write failed), ``disk_buffer_corrupt`` (a segment
failed its checksum). Without a disk buffer (the default) a request is retried as the stock OTLP exporter does
(:meth:`Pipeline._send_otlp`) and a failed request is dropped as ``export_failed``. The buffer covers spans;
metrics are periodic aggregates and are not buffered. A custom ``exporter=`` disables the disk buffer (it has no
bytes to keep).

Fork safety: in a forked child the queue, counters and metric state are reset and the export thread (and the
default exporters, whose HTTP sessions belong to the parent) are recreated lazily. An ``atexit`` drain flushes
every live pipeline with a short timeout.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import logging
import math
import os
import random
import re
import sys
import threading
import time
import weakref
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, NamedTuple, Protocol

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.metrics import Histogram
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    HistogramDataPoint,
    Metric,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.sdk.metrics.export import Histogram as HistogramData
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.sdk.util import BoundedList
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from . import _guard, _otlp
from . import semconv as sc
from .metrics import InferenceMetrics
from .options import Options

_log = logging.getLogger("inferwatch")

CONTENT_ATTRIBUTES: frozenset[str] = frozenset({
    sc.GEN_AI_INPUT_MESSAGES, sc.GEN_AI_OUTPUT_MESSAGES, sc.GEN_AI_SYSTEM_INSTRUCTIONS,
    sc.GEN_AI_PROMPT, sc.GEN_AI_COMPLETION,  # deprecated spellings, in case anything sets them on our spans
})
DROP_REASONS: tuple[str, ...] = ("queue_full", "too_large", "sampled", "export_failed", "before_send",
                                 "metrics_queue_full", "internal_error", "shutdown", "disk_buffer_full",
                                 "disk_buffer_error", "disk_buffer_corrupt")
RETRYABLE_STATUS = frozenset({408, 429, 502, 503, 504})
EXPORT_ATTEMPTS = 6  # per request without a disk buffer (as the stock OTLP exporter)
DISK_BACKOFF_MAX_S = 30.0

MAX_SPAN_BYTES = 1 << 20  # a span estimated above this is dropped as too_large
MAX_REQUEST_BYTES = 8 << 20  # one export request carries at most about this much (collector default limit: 16 MiB)
METRICS_INTERVAL_S = 30.0
ATEXIT_TIMEOUT_S = 2.0
PENDING_SCAN_LIMIT = 4096  # queued calls the feedback sender asks for response ids per batch (newest first)
ID_POOL_SIZE = 4096  # span id pairs drawn ahead (refilled at each wake-up when half are used: 2,048 calls per 0.5 s)
# GenAI semconv bucket advice (landscape notes §4)
DURATION_BUCKETS_S = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)

BeforeSend = Callable[[ReadableSpan], "ReadableSpan | None"]
OnCall = Callable[[InferenceMetrics], Any]
_Scrub = Callable[[str], str]


# --- built-in minimal scrub (used only when inferwatch.redaction is unavailable or cannot filter entities) ----
_SECRET_RULES = (
    ("ANTHROPIC_API_KEY", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("OPENAI_API_KEY", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("STRIPE_API_KEY", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("AWS_ACCESS_KEY_ID", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b"),
    ("GITHUB_TOKEN", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    ("SLACK_TOKEN", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    ("GOOGLE_API_KEY", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("HUGGINGFACE_TOKEN", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("JWT", r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}"),
    # the value after a credential-looking key or "Bearer"; the key itself is kept (group "keep")
    ("BEARER_TOKEN", r"(?P<keep>\b[Bb]earer\s+)[A-Za-z0-9\-._~+/]{15,}=*"),
    ("PASSWORD", r"(?P<keep>(?i:[A-Za-z0-9_]*(?:password|passwd|pwd|secret|api_?key|access_?key|token))"
                 r"[\"']?\s*[:=]\s*[\"']?)[^\s\"',;]{6,}"),
)
_PII_RULES = (
    ("EMAIL_ADDRESS", r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),
    ("NUMBER", r"(?<![\w+])\+?\d[\d ().-]{7,}\d(?!\w)"),  # phone / card / SSN-like runs of 9+ digits
)
_compiled: dict[bool, re.Pattern[str]] = {}


def _pattern(with_pii: bool) -> re.Pattern[str]:
    if with_pii not in _compiled:  # compiled on first use, in the export thread (importing stays cheap)
        rules = _SECRET_RULES + (_PII_RULES if with_pii else ())
        _compiled[with_pii] = re.compile("|".join(
            f"(?P<{name}__{i}>{rx.replace('(?P<keep>', f'(?P<keep{i}>')})" for i, (name, rx) in enumerate(rules)))
    return _compiled[with_pii]


def _replace(m: re.Match[str]) -> str:
    entity, _, index = (m.lastgroup or "SECRET__").partition("__")
    if entity == "NUMBER" and sum(ch.isdigit() for ch in m.group(0)) < 9:
        return m.group(0)  # dates, amounts, short numbers stay
    keep = m.groupdict().get(f"keep{index}") or ""
    return f"{keep}<{entity}>"


def fallback_scrub(text: str, *, pii: bool = False) -> str:
    """Minimal built-in scrub: secrets (and, with ``pii``, e-mail addresses and runs of 9+ digits)."""
    return _pattern(pii).sub(_replace, text)


def _fallback_redact(text: str) -> str:
    return fallback_scrub(text, pii=True)


FALLBACK_POLICY = "inferwatch-sdk-fallback/1"
FALLBACK_SECRETS_POLICY = "inferwatch-sdk-fallback-secrets/1"


# --- spans rebuilt in the export thread ---------------------------------------------------------------------
class _RebuiltSpan(ReadableSpan):
    """A finished span with new attributes/events; everything else (ids, times, status...) is the original's."""

    def __init__(self, original: ReadableSpan, attributes: Mapping[str, Any], events: Sequence[Event]) -> None:
        super().__init__(name=original.name, context=original.context, parent=original.parent,
                         resource=original.resource, attributes=attributes, events=events, links=original.links,
                         kind=original.kind, status=original.status, start_time=original.start_time,
                         end_time=original.end_time, instrumentation_scope=original.instrumentation_scope)
        self._dropped = (original.dropped_attributes, original.dropped_events, original.dropped_links)

    @property
    def dropped_attributes(self) -> int:
        return self._dropped[0]

    @property
    def dropped_events(self) -> int:
        return self._dropped[1]

    @property
    def dropped_links(self) -> int:
        return self._dropped[2]


_SCALARS = frozenset({bool, int, float})  # _value_bytes: 12


def _value_bytes(value: Any) -> int:
    if isinstance(value, str):
        return len(value) if value.isascii() else 4 * len(value)  # isascii() is O(1) in CPython
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if isinstance(value, (tuple, list)):
        return 8 + sum(_value_bytes(v) for v in value)
    return 12


def estimate_size(span: ReadableSpan) -> int:
    """Cheap upper-ish estimate of the span's encoded size, from string lengths."""
    size = 120 + len(span.name)
    for key, value in (span.attributes or {}).items():
        if type(value) is str and value.isascii():  # the common case, inline (this runs for every span)
            size += 8 + len(key) + len(value)
        elif type(value) in _SCALARS:
            size += 20 + len(key)
        else:
            size += 8 + len(key) + _value_bytes(value)
    for event in span.events or ():
        size += 24 + len(event.name)
        for key, value in (event.attributes or {}).items():
            size += 8 + len(key) + _value_bytes(value)
    size += 48 * len(span.links or ())
    return size


class _Scrubbers(NamedTuple):
    redact: _Scrub  # capture=redacted
    redact_policy: str
    marks_redacted: bool  # False for the built-in fallback: the collector should redact again
    secrets: _Scrub  # capture=full
    secrets_policy: str


class _Flush:
    """A marker in the span queue: set once every span queued before it was handled (and metrics sent)."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = threading.Event()


class _Histograms:
    """The three GenAI client histograms (explicit buckets, delta temporality), aggregated by the export thread.

    What the OTel metrics SDK's ``Histogram.record`` would aggregate, without its per-measurement cost (a
    ``Measurement`` object, the attributes cleaned and hashed through sorted tuples, locks: tens of microseconds
    per value, three or four values per LLM call). The export thread is the only one that records and collects,
    so nothing here is locked. Per metric, at most :data:`MAX_POINTS` attribute sets per interval; the rest go
    to one ``otel.metric.overflow=true`` point, as the OTel SDK's cardinality limit does.
    """

    MAX_POINTS = 2000
    OVERFLOW: tuple[tuple[str, Any], ...] = (("otel.metric.overflow", True),)
    SPECS: tuple[tuple[str, str, str, tuple[float, ...]], ...] = (  # name, unit, description, bucket bounds
        (sc.METRIC_OPERATION_DURATION, "s", "GenAI operation duration", DURATION_BUCKETS_S),
        (sc.METRIC_TOKEN_USAGE, "{token}", "Number of input and output tokens used", TOKEN_BUCKETS),
        (sc.METRIC_TIME_TO_FIRST_CHUNK, "s", "Time to receive the first chunk of a stream", DURATION_BUCKETS_S),
    )

    def __init__(self, resource: Resource, version: str) -> None:
        self.resource = resource
        self.scope = InstrumentationScope("inferwatch", version)
        self.start_ns = time.time_ns()
        # one dict per metric (SPECS order): attribute pairs -> [sum, min, max, bucket counts]
        self.points: tuple[dict[tuple[tuple[str, Any], ...], list[Any]], ...] = tuple({} for _ in self.SPECS)

    def record(self, metric: int, value: float, attributes: tuple[tuple[str, Any], ...]) -> None:
        points = self.points[metric]
        point = points.get(attributes)
        if point is None:
            if len(points) >= self.MAX_POINTS:
                attributes = self.OVERFLOW
                point = points.get(attributes)
            if point is None:
                point = points[attributes] = [0, math.inf, -math.inf, [0] * (len(self.SPECS[metric][3]) + 1)]
        point[0] += value
        if value < point[1]:
            point[1] = value
        if value > point[2]:
            point[2] = value
        point[3][bisect_left(self.SPECS[metric][3], value)] += 1

    def collect(self) -> MetricsData | None:
        """The delta since the last collection (None when nothing was recorded); starts a new interval."""
        start, now = self.start_ns, time.time_ns()
        self.start_ns = now
        metrics = []
        for (name, unit, description, bounds), points in zip(self.SPECS, self.points):
            if points:
                metrics.append(Metric(name=name, description=description, unit=unit, data=HistogramData(
                    data_points=[HistogramDataPoint(
                        attributes=dict(attributes), start_time_unix_nano=start, time_unix_nano=now,
                        count=sum(counts), sum=total, bucket_counts=tuple(counts), explicit_bounds=bounds,
                        min=low, max=high, **_NO_EXEMPLARS)
                        for attributes, (total, low, high, counts) in points.items()],
                    aggregation_temporality=AggregationTemporality.DELTA)))
                points.clear()
        if not metrics:
            return None
        return MetricsData(resource_metrics=[ResourceMetrics(
            resource=self.resource, schema_url=self.resource.schema_url,
            scope_metrics=[ScopeMetrics(scope=self.scope, metrics=metrics, schema_url=self.scope.schema_url)])])


_NO_EXEMPLARS: dict[str, Any] = (  # HistogramDataPoint.exemplars exists in newer OTel SDKs only
    {"exemplars": []} if "exemplars" in {f.name for f in dataclasses.fields(HistogramDataPoint)} else {})


class _QueueingProcessor(SpanProcessor):
    """``on_end`` appends to the pipeline's bounded deque; everything else happens in the export thread."""

    def __init__(self, pipeline: Pipeline) -> None:
        self._p = pipeline

    def on_end(self, span: ReadableSpan) -> None:
        self._p.enqueue(span)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._p.flush(timeout_millis / 1000)


# --- the SDK's own spans -----------------------------------------------------------------------------------------
_RANDOM_FLAG = int(getattr(trace.TraceFlags, "RANDOM_TRACE_ID", 0))  # W3C level 2 (newer OTel APIs)
_SAMPLED = trace.TraceFlags(trace.TraceFlags.SAMPLED)
_SAMPLED_RANDOM = trace.TraceFlags(trace.TraceFlags.SAMPLED | _RANDOM_FLAG)
_UNSET = trace.Status(trace.StatusCode.UNSET)


def _current_context_var() -> ContextVar[otel_context.Context] | None:
    """The ContextVar behind ``opentelemetry.context.get_current()`` when the runtime context is OTel's default
    (``contextvars``); None otherwise (another runtime context chosen through ``OTEL_PYTHON_CONTEXT``), and then
    the public call is used. Why: ``get_current()`` is two Python calls deep, and in a real app every frame on
    the caller's thread runs with cold caches (about 1 µs each, measured in situ on bench/sdk_overhead.py)."""
    runtime = getattr(otel_context, "_RUNTIME_CONTEXT", None)
    if type(runtime) is not ContextVarsRuntimeContext:
        return None
    var = getattr(runtime, "_current_context", None)
    return var if isinstance(var, ContextVar) else None


_CURRENT_CONTEXT = _current_context_var()

# the context key under which the OTel API keeps the current span (derived through the API, not hard-coded)
_SPAN_KEY = next(iter(trace.set_span_in_context(trace.INVALID_SPAN, otel_context.Context())))


def parent_of(current: Any) -> trace.SpanContext | None:
    """The span context a new span started under ``current`` (the context's span, or None) takes as its parent:
    None when there is no valid one (no span, a non-recording ``INVALID_SPAN``, or an object that is not a
    span)."""
    if current is None or not isinstance(current, trace.Span):
        return None
    parent = current.get_span_context()
    return parent if parent.is_valid else None


_PLAIN = frozenset({str, bool, int, float})


def _plain(attributes: Mapping[str, Any]) -> bool:
    """True when every value is a str, bool, int or float, or a tuple of str: valid as it is, nothing to clean."""
    plain = _PLAIN
    for value in attributes.values():
        if type(value) not in plain and not (type(value) is tuple and all(type(v) is str for v in value)):
            return False
    return True


class Recorded(Protocol):
    """What the caller's thread queues besides finished OTel SDK spans: a :class:`LightSpan`, or a provider call
    (:class:`inferwatch.llm_call.ProviderCall`) whose span is made from it in the export thread."""

    def readable(self) -> ReadableSpan: ...


class LightSpan(trace.Span):
    """A span of ours: a few fields while it runs, turned into a ``ReadableSpan`` by the export thread.

    Why: on the caller's thread the OTel SDK's ``start_span`` + ``set_attributes`` + ``end`` costs tens of
    microseconds per span (each attribute value cleaned through a chain of checks, locks, a ``ReadableSpan``
    copy), and in a real app it runs with cold CPU caches, between the provider client's own work, where every
    extra function and object touched costs far more than in a tight loop. So the caller's thread keeps only what
    cannot be known later (start and end times, ids, the parent and trace state of the current context, anything
    set through the span API) and everything else is built in the export thread, batch by batch:

    * an LLM call (:meth:`end_call`) hands over a snapshot of its :class:`~inferwatch.metrics.InferenceMetrics`
      (an integration's call: the metrics themselves, and a ``later`` that completes them from the facts it kept
      of the response); the export thread derives the span's name, attributes (``span_attributes()``), status
      and the metric values from it (:meth:`readable`);
    * values set through the API (``set_attribute(s)``, ``add_event``, ``record_exception``) are cleaned and
      bounded as the OTel SDK does (``BoundedAttributes``, the span limits of ``OTEL_SPAN_*_LIMIT`` /
      ``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT``); the attributes the SDK derives itself are taken as they are when
      every value is a plain str, bool, int, float or tuple of str (:func:`_plain`), else cleaned the same way.

    What is exported is what the SDK's span would have been: ids from the provider's id generator, the parent
    and trace state of the current (or given) context, the sampled flag (our provider samples everything;
    ``sample_rate`` is applied before a span is opened), kind, status, times, resource and instrumentation scope.
    It is a full API span for code that finds it current (``trace.get_current_span()`` inside
    ``with inferwatch.llm_call()``). After it ends it never changes.
    """

    __slots__ = ("_attributes", "_call", "_context", "_end", "_ended", "_events", "_flags", "_kind", "_name",
                 "_parent", "_pipeline", "_start", "_state", "_status", "span_id", "trace_id")

    def __init__(self, pipeline: Pipeline, name: str | None, kind: trace.SpanKind = trace.SpanKind.INTERNAL,
                 start_time: int | None = None, context: otel_context.Context | None = None) -> None:
        # trace.get_current_span(context), with four calls less (this runs on every LLM call)
        if context is None:
            context = otel_context.get_current() if _CURRENT_CONTEXT is None else _CURRENT_CONTEXT.get()
        current = context.get(_SPAN_KEY)
        parent = None if current is None else parent_of(current)  # a root span (the usual case): no call
        random_ids = pipeline._random_ids  # the default RandomIdGenerator, inlined: random bits, never 0
        trace_id = parent.trace_id if parent is not None else (
            (random_ids and random.getrandbits(128)) or pipeline._id_generator.generate_trace_id())
        span_id = (random_ids and random.getrandbits(64)) or pipeline._id_generator.generate_span_id()
        self._setup(pipeline, name, kind, time.time_ns() if start_time is None else start_time, parent, trace_id,
                    span_id)

    @classmethod
    def of_call(cls, pipeline: Pipeline, parent: trace.SpanContext | None, trace_id: int, span_id: int,
                start_time: int) -> LightSpan:
        """The span of a provider call whose parent and ids were taken on the caller's thread when it started
        (:class:`inferwatch.llm_call.ProviderCall`); made later, in whichever thread records the call."""
        span = cls.__new__(cls)
        span._setup(pipeline, None, trace.SpanKind.CLIENT, start_time, parent, trace_id, span_id)
        return span

    def _setup(self, pipeline: Pipeline, name: str | None, kind: trace.SpanKind, start_time: int,
               parent: trace.SpanContext | None, trace_id: int, span_id: int) -> None:
        self.trace_id, self.span_id = trace_id, span_id
        self._parent: trace.SpanContext | None = parent
        if parent is not None:
            self._state = parent.trace_state
            self._flags = _SAMPLED_RANDOM if parent.trace_flags & _RANDOM_FLAG else _SAMPLED
        else:
            self._state = None
            self._flags = pipeline._root_flags
        self._context: trace.SpanContext | None = None  # built when first asked for
        self._pipeline = pipeline
        self._name = name  # None: derived from the call (LLM calls)
        self._kind = kind
        self._start = start_time
        self._end = 0
        self._ended = False
        self._attributes: dict[str, Any] | None = None
        self._events: Any = None
        self._status = _UNSET
        self._call: tuple[Any, dict[str, Any] | None, Callable[[], None] | None] | None = None

    # --- opentelemetry.trace.Span ---
    def get_span_context(self) -> trace.SpanContext:
        ctx = self._context
        if ctx is None:
            ctx = self._context = trace.SpanContext(self.trace_id, self.span_id, False, self._flags, self._state)
        return ctx

    def is_recording(self) -> bool:
        return not self._ended

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        if self._ended or not attributes:
            return
        limit = self._pipeline._span_limits.max_span_attribute_length
        if self._attributes is None:
            self._attributes = {}
        self._attributes.update(BoundedAttributes(None, attributes, immutable=False, max_value_len=limit))

    def set_attribute(self, key: str, value: Any) -> None:
        self.set_attributes({key: value})

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None,
                  timestamp: int | None = None) -> None:
        if self._ended:
            return
        limits = self._pipeline._span_limits
        if self._events is None:
            self._events = BoundedList(limits.max_events)
        self._events.append(Event(name, BoundedAttributes(limits.max_event_attributes, attributes, immutable=True,
                                                          max_value_len=limits.max_attribute_length),
                                  time.time_ns() if timestamp is None else timestamp))

    def record_exception(self, exception: BaseException, attributes: Mapping[str, Any] | None = None,
                         timestamp: int | None = None, escaped: bool = False) -> None:
        import traceback

        module, qualname = type(exception).__module__, type(exception).__qualname__
        event: dict[str, Any] = {
            "exception.type": f"{module}.{qualname}" if module and module != "builtins" else qualname,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(type(exception), exception,
                                                                       exception.__traceback__)),
            "exception.escaped": str(escaped),
        }
        event.update(attributes or {})
        self.add_event("exception", event, timestamp)

    def set_status(self, status: trace.Status | trace.StatusCode, description: str | None = None) -> None:
        if self._ended or self._status.status_code is trace.StatusCode.OK:  # OK is final (OTel's rule)
            return
        if isinstance(status, trace.StatusCode):
            status = trace.Status(status, description)
        if isinstance(status, trace.Status) and status.status_code is not trace.StatusCode.UNSET:
            self._status = status

    def update_name(self, name: str) -> None:
        if not self._ended:
            self._name = name

    def end(self, end_time: int | None = None) -> None:
        """Finish and queue for export (once; later calls, and changes after it, are ignored)."""
        if self._ended:
            return
        self._end = time.time_ns() if end_time is None else end_time
        self._ended = True
        self._pipeline.enqueue(self)

    def end_call(self, snapshot: tuple[Any, ...] | InferenceMetrics, content: dict[str, Any] | None,
                 later: Callable[[], None] | None = None) -> None:
        """End an LLM call's span: ``snapshot`` is ``InferenceMetrics._snapshot()`` taken at its end, or the
        metrics object itself when the SDK's own integration owns it (nobody changes it after the end, so no
        copy is needed); ``content`` the captured prompt/completion attributes (capture on). ``later`` (owned
        metrics only) completes the metrics from the response objects the integration kept, in the export
        thread: parsing them is off the caller's thread (DESIGN §4 rule 7). Name, attributes, status and metric
        values are derived in the export thread."""
        if self._ended:
            return
        self.close_call(snapshot, content, later)
        if not self._pipeline.enqueue(self):  # dropped (queue full): the call's metrics are kept all the same
            self.record_metrics_only()

    def close_call(self, snapshot: tuple[Any, ...] | InferenceMetrics, content: dict[str, Any] | None,
                   later: Callable[[], None] | None = None) -> None:
        """:meth:`end_call` without queueing: for a call that is queued as a whole
        (:class:`inferwatch.llm_call.ProviderCall`), whose span is made when the export thread reads it."""
        self._call = (snapshot, content, later)
        self._end = snapshot.end_time_ns if type(snapshot) is InferenceMetrics else snapshot[_END_TIME]
        self._ended = True

    def record_metrics_only(self) -> None:
        """Record the ended call's metric values without its span (the span was dropped: queue full)."""
        self._pipeline.record_metric_row(_metric_row(self._call_metrics()))

    def _call_metrics(self) -> InferenceMetrics:
        """The call's metrics, completed by its ``later`` (run once: a span may be read again)."""
        snapshot, content, later = self._call  # type: ignore[misc]
        if type(snapshot) is not InferenceMetrics:
            return InferenceMetrics(*snapshot)
        if later is not None:
            self._call = (snapshot, content, None)
            try:
                later()
            except Exception as exc:  # noqa: BLE001 - the integration guards its own; the span still goes
                _guard.record_internal_error("telemetry.call.later", exc)
        return snapshot

    # --- export thread ---
    def readable(self) -> ReadableSpan:
        """The finished span as the exporters take it; an LLM call's metric values are recorded on the way."""
        p = self._pipeline
        attributes: Any = self._attributes
        name, status = self._name, self._status
        if self._call is not None:
            m = self._call_metrics()
            content = self._call[1]
            try:
                p._record_call_metrics(_metric_row(m))
            except Exception as exc:  # noqa: BLE001 - the span still goes
                _guard.record_internal_error("telemetry.metrics.record", exc)
            if m.response_model:
                name = f"{m.operation} {m.request_model or m.response_model}"
            elif name is None:
                name = f"{m.operation} {m.request_model}".strip()
            merged = {sc.GEN_AI_OPERATION_NAME: m.operation, sc.GEN_AI_PROVIDER_NAME: m.provider,
                      sc.GEN_AI_REQUEST_MODEL: m.request_model}  # what the span started with
            if attributes:
                merged.update(attributes)
            ours = m.span_attributes()
            if content:
                ours.update(content)
            if p._plain_ok and _plain(ours) and _plain(merged):
                merged.update(ours)
                attributes = merged
            else:
                attributes = BoundedAttributes(None, merged, immutable=False,
                                               max_value_len=p._span_limits.max_span_attribute_length)
                attributes.update(ours)
                attributes = dict(attributes)
            if m.status == "error" and status.status_code is not trace.StatusCode.OK:
                status = trace.Status(trace.StatusCode.ERROR, m.error_type)
            if p._on_call is not None:
                p._tell_app(m)
        if attributes and len(attributes) > p._span_limits.max_span_attributes:  # the oldest go, as OTel's do
            attributes = BoundedAttributes(p._span_limits.max_span_attributes, attributes)
        return ReadableSpan(
            name=name or "", context=self.get_span_context(), parent=self._parent, resource=p._resource,
            attributes=attributes, events=() if self._events is None else self._events, kind=self._kind,
            status=status, start_time=self._start, end_time=self._end, instrumentation_scope=p._scope)


def _metric_row(m: InferenceMetrics) -> tuple[Any, ...]:
    """The histogram values of one call (see :meth:`Pipeline.record_metrics`)."""
    ttft = m.ttft_ms
    served = not m.cache_hit  # a cache hit used no provider tokens: kept out of the token histogram
    return (m.operation, m.provider, m.request_model, m.response_model, m.latency_ms / 1000,
            m.input_tokens if served else None, m.output_tokens if served else None,
            None if ttft is None else ttft / 1000, m.error_type or None)


_END_TIME = [f.name for f in dataclasses.fields(InferenceMetrics)].index("end_time_ns")


class Pipeline:
    """Private providers + bounded queue + export thread. See the module docstring."""

    def __init__(self, options: Options, *, exporter: SpanExporter | None = None,
                 metric_exporter: MetricExporter | None = None, before_send: BeforeSend | None = None,
                 redactor: Any = None, max_span_bytes: int = MAX_SPAN_BYTES,
                 metrics_interval_s: float = METRICS_INTERVAL_S, on_call: OnCall | None = None) -> None:
        self.options = options
        self._capture = options.capture
        self._max_queue = options.max_queue_size
        self._batch_size = options.max_export_batch_size
        self._delay_s = max(options.schedule_delay_ms, 1) / 1000
        self._max_span_bytes = max_span_bytes
        self._metrics_interval_s = metrics_interval_s
        self._before_send = before_send
        self._on_call = on_call
        self._redactor_override = redactor
        self._given_exporter = exporter
        self._given_metric_exporter = metric_exporter
        self._closed = False
        self._reset_process_state()

        attributes: dict[str, Any] = {"telemetry.distro.name": "inferwatch"}
        if options.service_name and options.service_name != "unknown_service":
            attributes["service.name"] = options.service_name  # else OTEL_SERVICE_NAME / the OTel default apply
        self._version = str(getattr(sys.modules.get("inferwatch"), "__version__", ""))
        self._resource = Resource.create(attributes)
        self._span_limits = SpanLimits()  # OTEL_SPAN_*_LIMIT, read once, shared with the provider
        self._tracer_provider = TracerProvider(resource=self._resource, sampler=ALWAYS_ON, shutdown_on_exit=False,
                                               span_limits=self._span_limits)
        self._tracer_provider.add_span_processor(_QueueingProcessor(self))
        self.span = functools.partial(LightSpan, self)  # type: ignore[method-assign]  # span(), one call less
        self.tracer: trace.Tracer = self._tracer_provider.get_tracer("inferwatch", self._version)
        # for LightSpan: what the provider's tracer would stamp on a span
        self._scope = InstrumentationScope("inferwatch", self._version)
        self._id_generator = ids = self._tracer_provider.id_generator
        self._random_ids = type(ids) is RandomIdGenerator  # LightSpan draws the bits itself (a 0 asks ids)
        self._root_flags = _SAMPLED_RANDOM if getattr(ids, "is_trace_id_random", lambda: False)() else _SAMPLED
        self._plain_ok = self._span_limits.max_span_attribute_length is None  # else every string is cut to it

        _live.add(self)
        _register_process_hooks()
        self._start_worker()

    # --- state that belongs to one process (reset in a forked child) ----------------------------------------
    def _reset_process_state(self) -> None:
        self._queue: deque[Any] = deque()
        self._taken: list[Any] = []  # the batch the export thread is preparing (see pending_response_ids)
        self._metric_records: deque[tuple[Any, ...]] = deque()
        self._wake = threading.Event()
        self._abort = threading.Event()  # set by shutdown(): stops an export's retry wait
        self._counts_lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._dropped: dict[str, int] = dict.fromkeys(DROP_REASONS, 0)
        self._exported = 0
        self._export_failures = 0
        self._metric_export_failures = 0
        self._metrics_backoff_s = 0.0
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._worker_started = False
        # given exporters are kept; the default ones are (re)built lazily, in the export thread
        self._exporter: SpanExporter | None = self._given_exporter
        self._metric_exporter: MetricExporter | None = self._given_metric_exporter
        self._metrics: _Histograms | None = None
        self._scrubbers: _Scrubbers | None = None
        # disk buffer: opened lazily by the export thread ("off" | "pending" | "on" | "locked" | "error")
        self._disk: Any = None
        self._disk_state = "pending" if self.options.disk_buffer_dir and self._given_exporter is None else "off"
        self._disk_retry_at = 0.0
        self._disk_backoff_s = 0.0
        self._poster: Any = None
        # (trace id, span id) pairs drawn ahead by the export thread for ProviderCall (see _refill_ids), from a
        # generator of our own (seeded from os.urandom): drawing ahead from the app's global ``random`` would
        # consume its numbers at times no app can predict, and an app that seeds it for reproducible runs would
        # lose them. A forked child starts with a new generator and no pairs: it never reuses its parent's.
        self._id_random = random.Random()
        self._id_pool: list[tuple[int, int]] = []

    def _after_fork_in_child(self) -> None:
        # The parent's queued spans and aggregations are the parent's to send; its HTTP sessions and threads are
        # gone or shared. Only plain assignments here: the child is single-threaded until it starts one. The disk
        # buffer's directory stays the parent's (the child finds it locked and runs without one).
        disk = getattr(self, "_disk", None)
        if disk is not None:
            disk.abandon_after_fork()
        self._reset_process_state()

    def _start_worker(self) -> None:
        with self._start_lock:
            if self._worker_started or self._closed:
                return
            thread = threading.Thread(target=self._run, name=EXPORT_THREAD_NAME, daemon=True)
            thread.start()
            self._thread = thread
            self._worker_started = True

    # --- caller-thread API (O(1), never raises) ---------------------------------------------------------------
    def span(self, name: str | None, kind: trace.SpanKind = trace.SpanKind.INTERNAL, start_time: int | None = None,
             context: otel_context.Context | None = None) -> LightSpan:
        """Start one of the SDK's own spans (see :class:`LightSpan`); it is queued when it ends."""
        return LightSpan(self, name, kind, start_time, context)

    def enqueue(self, span: ReadableSpan | Recorded) -> bool:
        """Queue a finished span for the export thread; False when it was not (closed, or dropped and counted
        as ``queue_full``)."""
        try:
            if self._closed:
                return False
            if not self._worker_started:
                self._start_worker()
            queue = self._queue
            if len(queue) >= self._max_queue:
                self.count_drop("queue_full")
                return False
            queue.append(span)
            if len(queue) >= self._batch_size and not self._wake.is_set():
                self._wake.set()
            return True
        except Exception as exc:  # noqa: BLE001 - runs in span.end(): must never raise into the app
            _guard.record_internal_error("telemetry.on_end", exc)
            return False

    def record_metrics(self, *, operation: str, provider: str, request_model: str, response_model: str,
                       duration_s: float, input_tokens: int | None, output_tokens: int | None,
                       ttfc_s: float | None, error_type: str | None) -> None:
        """Queue one call's measurements; the export thread records them into the histograms."""
        self.record_metric_row((operation, provider, request_model, response_model, duration_s, input_tokens,
                                output_tokens, ttfc_s, error_type))

    def record_metric_row(self, row: tuple[Any, ...]) -> None:
        """:meth:`record_metrics` with its arguments as one tuple, in that order (the recorder's fast path)."""
        try:
            if self._closed:
                return
            if not self._worker_started:
                self._start_worker()
            records = self._metric_records
            if len(records) >= self._max_queue:
                self.count_drop("metrics_queue_full")
                return
            records.append(row)
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.record_metrics", exc)

    def _tell_app(self, m: InferenceMetrics) -> None:
        """Hand a copy of an LLM call's completed metrics to the app's ``on_call`` hook (export thread); a hook
        that raises is counted (``telemetry.on_call``), never propagated."""
        try:
            self._on_call(InferenceMetrics(*m._snapshot()))  # type: ignore[misc]
        except BaseException as exc:  # noqa: BLE001 - the app's hook (even sys.exit() there): the span still goes
            _guard.record_internal_error("telemetry.on_call", exc)

    def count_drop(self, reason: str, n: int = 1) -> None:
        with self._counts_lock:
            self._dropped[reason] = self._dropped.get(reason, 0) + n

    def stats(self) -> dict[str, Any]:
        with self._counts_lock:
            dropped = dict(self._dropped)
        disk = self._disk
        disk_stats: dict[str, Any] = {"state": self._disk_state, "dir": self.options.disk_buffer_dir}
        if disk is not None:
            disk_stats.update(pending_requests=len(disk), pending_spans=disk.pending_spans, bytes=disk.size_bytes,
                              max_bytes=disk.max_bytes)
        return {"queued": sum(1 for item in list(self._queue) if type(item) is not _Flush),
                "exported": self._exported, "dropped": dropped, "export_failures": self._export_failures,
                "metric_export_failures": self._metric_export_failures,
                "internal_errors": dict(_guard.internal_errors), "disk_buffer": disk_stats}

    def flush(self, timeout: float = 5.0) -> bool:
        """Export every span ended so far and the metrics; True when that finished within ``timeout`` s
        (exported or counted as dropped: a failing collector does not make this False)."""
        try:
            if self._closed:
                return True
            if self.on_export_thread():
                return False  # called from a hook inside the export thread: waiting would deadlock
            if not self._worker_started:
                self._start_worker()
            marker = _Flush()
            self._queue.append(marker)  # always, even when the queue is full
            self._wake.set()
            return marker.done.wait(max(timeout, 0.0))
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.flush", exc)
            return False

    def on_export_thread(self) -> bool:
        """Whether the caller runs in this pipeline's export thread (an app's hook there: ``before_send``,
        ``on_call``), where waiting for the export would wait for itself."""
        return threading.current_thread() is self._thread

    def shutdown(self, timeout: float = 5.0) -> None:
        """Flush, stop the export thread, close the exporters. Idempotent; never raises."""
        if self._closed:
            return
        try:
            deadline = time.monotonic() + max(timeout, 0.0)
            self.flush(timeout)
            self._closed = True
            self._stopping = True
            self._abort.set()
            self._wake.set()
            thread = self._thread
            if thread is not None and thread is not threading.current_thread():
                thread.join(max(deadline - time.monotonic(), 0.0))
            items = list(self._queue)
            self._queue.clear()
            for item in items:
                if type(item) is _Flush:
                    item.done.set()  # a concurrent flush() need not wait for a thread that has stopped
            if left := sum(1 for item in items if type(item) is not _Flush):
                self.count_drop("shutdown", left)
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.shutdown", exc)
        finally:
            self._closed = True
            _live.discard(self)
        for where, close in (("telemetry.shutdown.exporter", lambda: self._exporter and self._exporter.shutdown()),
                             ("telemetry.shutdown.poster", lambda: self._poster and self._poster.close()),
                             ("telemetry.shutdown.metric_exporter",
                              lambda: self._metric_exporter and self._metric_exporter.shutdown()),
                             ("telemetry.shutdown.tracer_provider", self._tracer_provider.shutdown)):
            with _guard.guard(where):
                close()

    # --- export thread ----------------------------------------------------------------------------------------
    def _run(self) -> None:
        # Everything this thread does is ours: keep instrumented HTTP clients from tracing our own exports.
        ctx = otel_context.set_value(otel_context._SUPPRESS_INSTRUMENTATION_KEY, True)
        otel_context.attach(otel_context.set_value(otel_context._SUPPRESS_HTTP_INSTRUMENTATION_KEY, True, ctx))
        next_metrics = time.monotonic() + self._metrics_interval_s
        with _guard.guard("telemetry.disk_buffer.open"):
            self._open_disk()
        with _guard.guard("telemetry.ids"):
            self._refill_ids()
        while True:
            self._wake.wait(min(self._delay_s, max(next_metrics - time.monotonic(), 0.0)))
            self._wake.clear()
            stopping = self._stopping
            with _guard.guard("telemetry.export_loop"):
                self._drain()
            with _guard.guard("telemetry.ids"):
                self._refill_ids()
            with _guard.guard("telemetry.disk_buffer.replay"):
                if self._disk is not None and not self._closed:
                    self._replay()
            with _guard.guard("telemetry.metrics"):
                self._fold_metric_records()
                if time.monotonic() >= next_metrics:
                    ok = self._export_metrics()
                    # a collector without /v1/metrics (404) is asked again less and less often, up to 10 min
                    self._metrics_backoff_s = 0.0 if ok else min(max(self._metrics_backoff_s * 2,
                                                                     self._metrics_interval_s), 600.0)
                    next_metrics = time.monotonic() + self._metrics_interval_s + self._metrics_backoff_s
            if stopping:
                with _guard.guard("telemetry.disk_buffer.close"):
                    if self._disk is not None:
                        self._disk.close()  # the segments stay for the next init() with this directory
                return

    def _refill_ids(self) -> None:
        """Draw span ids ahead for the provider calls (:class:`inferwatch.llm_call.ProviderCall` pops a pair).

        Why: the random generator's C code and state are code and data an app's own work never touches, so on
        the caller's thread, between the client's work, two draws cost ~34 cache misses and ~900 instructions
        per call (callgrind, ``bench/sdk_instructions.py --cold``); a list's pop costs next to nothing. Only for
        the default RandomIdGenerator (random bits, as it draws them, from our own generator); a custom one is
        asked on the caller's thread."""
        pool = self._id_pool
        missing = ID_POOL_SIZE - len(pool)
        if self._random_ids and missing > ID_POOL_SIZE // 2:
            draw = self._id_random.getrandbits
            pool.extend([(draw(128) or draw(128), draw(64) or draw(64)) for _ in range(missing)])

    def _drain(self) -> None:
        queue = self._queue
        while queue and not self._closed:  # after shutdown() gave up waiting, the rest is counted there
            batch: list[ReadableSpan | Recorded] = []
            self._taken = batch
            marker: _Flush | None = None
            while queue and len(batch) < self._batch_size:
                item = queue[0]  # in the batch before it leaves the queue: always in one of them for a reader
                if type(item) is _Flush:
                    queue.popleft()
                    marker = item
                    break
                batch.append(item)
                try:
                    queue.popleft()
                except IndexError:  # emptied by shutdown() meanwhile (it counted what it found)
                    break
            try:
                if batch:
                    self._export_spans(batch)
                if marker is not None:
                    with _guard.guard("telemetry.disk_buffer.replay"):
                        if self._disk is not None:
                            self._replay(force=True)  # flush(): one probe now, whatever the backoff
                    with _guard.guard("telemetry.metrics"):
                        self._fold_metric_records()
                        self._export_metrics()
            finally:
                self._taken = []
                if marker is not None:
                    marker.done.set()

    def pending_response_ids(self, wanted: set[str]) -> dict[str, tuple[int, int]]:
        """Response id -> (trace id, span id), for the ``wanted`` ids, of the ended calls whose spans are not out
        yet (queued, or in the batch being prepared) and whose response id can be told without recording them
        (:meth:`inferwatch.llm_call.ProviderCall.pending_ids`); any thread, a snapshot. For the feedback sender,
        which links feedback by a response id the export thread has not remembered yet.

        Read in this order, a call moving meanwhile is still seen: the queue first, then the batch (a call joins
        the batch before it leaves the queue); a batch is let go only after its calls' ids are remembered, so a
        call in neither is found by looking the id up again afterwards (:mod:`inferwatch._responses`). Asked
        newest first (feedback comes soon after its call; the newest of two calls with one id wins, as in
        ``_responses``), stopping when every wanted id is found or after :data:`PENDING_SCAN_LIMIT` calls: an id
        of another process is never found, and a full queue must not cost the sender's thread, holding the
        interpreter, more than a few ms per batch. A probe that fails is counted and skipped."""
        queued = [*self._queue]
        taken = self._taken[:]
        found: dict[str, tuple[int, int]] = {}
        looked, limit = 0, PENDING_SCAN_LIMIT
        for calls in (queued, taken):
            for call in reversed(calls):
                if looked >= limit or len(found) == len(wanted):
                    return found
                looked += 1
                probe = getattr(call, "pending_ids", None)
                if probe is None:
                    continue
                try:
                    ids = probe()
                except Exception as exc:  # noqa: BLE001 - an integration's bug: that call goes unlinked
                    _guard.record_internal_error("telemetry.pending_ids", exc)
                    continue
                if ids is not None and ids[0] in wanted and ids[0] not in found:
                    found[ids[0]] = (ids[1], ids[2])
        return found

    def _export_spans(self, batch: list[ReadableSpan | Recorded]) -> None:
        ready: list[tuple[ReadableSpan, int]] = []
        for span in batch:
            try:
                prepared = self._prepare(span if isinstance(span, ReadableSpan) else span.readable())
            except Exception as exc:  # noqa: BLE001 - a bug of ours drops the span, never the thread
                _guard.record_internal_error("telemetry.prepare", exc)
                self.count_drop("internal_error")
                continue
            if prepared is not None:
                ready.append(prepared)
        chunk: list[ReadableSpan] = []
        chunk_bytes = 0
        for span, size in ready:
            if chunk and chunk_bytes + size > MAX_REQUEST_BYTES:
                self._send(chunk)
                chunk, chunk_bytes = [], 0
            chunk.append(span)
            chunk_bytes += size
        if chunk:
            self._send(chunk)

    def _send(self, spans: list[ReadableSpan]) -> None:
        if self._disk is not None:
            self._send_buffered(spans)
            return
        exporter = self._exporter
        if exporter is None:
            self._send_otlp(spans)
            return
        ok = False
        try:
            ok = exporter.export(spans) is SpanExportResult.SUCCESS
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.export", exc)
        if ok:
            self._exported += len(spans)
        else:
            self._export_failures += 1
            self.count_drop("export_failed", len(spans))

    def _send_otlp(self, spans: list[ReadableSpan]) -> None:
        """The default span export: our encoder (:mod:`inferwatch._otlp`; the stock one costs several times more
        CPU per span), gzip, POST to ``{endpoint}/v1/traces``, with the stock OTLP exporter's retry rules: at most
        :data:`EXPORT_ATTEMPTS` attempts within ``export_timeout_s``, backing off 1, 2, 4... s (±20 %) or the
        collector's ``Retry-After``, after a refused or reset connection, a timeout, or 429/502/503/504; any
        other answer is final. A request that fails is dropped as ``export_failed``."""
        n = len(spans)
        try:
            payload = _otlp.encode_spans(spans)
        except Exception as exc:  # noqa: BLE001 - a bug of ours drops the batch, never the thread
            _guard.record_internal_error("telemetry.encode", exc)
            self.count_drop("internal_error", n)
            return
        timeout = self.options.export_timeout_s
        deadline = time.monotonic() + timeout
        for attempt in range(EXPORT_ATTEMPTS):
            outcome, retry_after = self._post(payload, timeout=max(deadline - time.monotonic(), 0.05),
                                              where="telemetry.export")
            if outcome == "ok":
                self._exported += n
                return
            if outcome == "fail":
                break
            wait = retry_after if retry_after is not None else 2 ** attempt * random.uniform(0.8, 1.2)
            if attempt + 1 == EXPORT_ATTEMPTS or wait > deadline - time.monotonic() or self._abort.wait(wait):
                break
        self._export_failures += 1
        self.count_drop("export_failed", n)
        if self._export_failures == 1:
            _log.warning("inferwatch: span export to %s/v1/traces failed; failures and dropped spans are counted "
                         "in inferwatch.stats()", self.options.endpoint.rstrip("/"))

    # --- disk buffer (export thread) -----------------------------------------------------------------------
    def _open_disk(self) -> None:
        if self._disk_state != "pending":
            return
        from .disk_buffer import DiskBuffer, DiskBufferLocked

        o = self.options
        try:
            self._disk = DiskBuffer(o.disk_buffer_dir, o.disk_buffer_max_bytes)
            self._disk_state = "on"
        except DiskBufferLocked:
            self._disk_state = "locked"
            _log.warning("inferwatch: disk buffer %s is used by another process; running without one",
                         o.disk_buffer_dir)
        except OSError as exc:
            self._disk_state = "error"
            _log.warning("inferwatch: disk buffer %s cannot be opened (%s); running without one",
                         o.disk_buffer_dir, exc)

    def _send_buffered(self, spans: list[ReadableSpan]) -> None:
        try:
            payload = _otlp.encode_spans(spans)
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.encode", exc)
            self.count_drop("internal_error", len(spans))
            return
        n = len(spans)
        if len(self._disk):  # a backlog: behind it, to keep the order
            self._spill(payload, n)
            self._replay()
            return
        outcome, retry_after = self._post(payload)
        if outcome == "ok":
            self._exported += n
            return
        self._export_failures += 1
        if outcome == "retry":
            self._spill(payload, n)
            self._back_off(retry_after)
        else:
            self.count_drop("export_failed", n)

    def _spill(self, payload: bytes, spans: int) -> None:
        try:
            dropped = self._disk.append(payload, spans)
        except OSError as exc:
            _guard.record_internal_error("telemetry.disk_buffer.write", exc)
            self.count_drop("disk_buffer_error", spans)
            return
        if dropped:
            self.count_drop("disk_buffer_full", dropped)

    def _back_off(self, retry_after: float | None) -> None:
        self._disk_backoff_s = min(max(self._disk_backoff_s * 2, 1.0), DISK_BACKOFF_MAX_S)
        wait = self._disk_backoff_s if retry_after is None else min(max(retry_after, 0.0), 600.0)
        self._disk_retry_at = time.monotonic() + wait

    def _replay(self, force: bool = False, max_requests: int = 16) -> None:
        """Re-send the oldest buffered requests, in order, while the collector takes them."""
        disk = self._disk
        if not len(disk) or (not force and time.monotonic() < self._disk_retry_at):
            return
        for _ in range(max_requests):
            if self._closed:
                return
            head = disk.peek()
            if head is None:
                return
            seg, payload = head
            if payload is None:
                disk.pop(corrupt=True)
                self.count_drop("disk_buffer_corrupt", seg.spans)
                continue
            outcome, retry_after = self._post(payload)
            if outcome == "retry":
                self._export_failures += 1
                self._back_off(retry_after)
                return
            disk.pop()
            if outcome == "ok":
                self._exported += seg.spans
                self._disk_backoff_s = 0.0
                self._disk_retry_at = 0.0
            else:  # refused for good (bad request, auth): retrying would never help
                self._export_failures += 1
                self.count_drop("export_failed", seg.spans)

    def _post(self, payload: bytes, timeout: float | None = None,
              where: str = "telemetry.disk_buffer.post") -> tuple[str, float | None]:
        """One POST of an encoded request: ("ok" | "retry" | "fail", Retry-After seconds or None)."""
        import gzip

        import requests

        o = self.options
        timeout = o.export_timeout_s if timeout is None else timeout
        if self._poster is None:
            self._poster = _own_headers_session(self._headers())
        # gzip level 1: on span batches as small as level 5-9 (~43 B per LLM span), and 2-3x less CPU
        try:
            response = self._poster.post(
                f"{o.endpoint.rstrip('/')}/v1/traces", data=gzip.compress(payload, 1),
                headers={"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
                timeout=(min(timeout, 5.0), timeout))
        except requests.RequestException:
            return "retry", None  # refused, reset, timed out: the collector is down or overloaded
        except Exception as exc:  # noqa: BLE001 - a bug of ours: keep the request, try again later
            _guard.record_internal_error(where, exc)
            return "retry", None
        status = response.status_code
        response.close()
        if 200 <= status < 300:
            return "ok", None
        if status in RETRYABLE_STATUS:
            retry_after = None
            try:
                retry_after = float(response.headers.get("Retry-After", ""))
            except ValueError:
                pass
            return "retry", retry_after
        return "fail", None

    def _prepare(self, span: ReadableSpan) -> tuple[ReadableSpan, int] | None:
        """Content handling, then ``before_send``, then the size cap; None when dropped (counted)."""
        span = self._handle_content(span)
        if self._before_send is not None:
            result: Any = None
            try:
                result = self._before_send(span)
                if result is not None and not isinstance(result, ReadableSpan):
                    raise TypeError("before_send must return a ReadableSpan or None")
            except Exception as exc:  # noqa: BLE001 - a failing hook drops the span (it may be a privacy filter)
                _guard.record_internal_error("telemetry.before_send", exc)
                result = None
            if result is None:
                self.count_drop("before_send")
                return None
            span = result
        size = estimate_size(span)
        if size > self._max_span_bytes:
            self.count_drop("too_large")
            return None
        return span, size

    def _handle_content(self, span: ReadableSpan) -> ReadableSpan:
        attributes = span.attributes or {}
        found = [key for key in CONTENT_ATTRIBUTES if key in attributes]
        events = span.events or ()
        in_events = any(ev.attributes and not CONTENT_ATTRIBUTES.isdisjoint(ev.attributes) for ev in events)
        if not found and not in_events:
            return span
        scrub: _Scrub | None = None
        policy, mark = "", False
        if self._capture != "off":
            if self._scrubbers is None:
                self._scrubbers = self._load_scrubbers()
            s = self._scrubbers
            if self._capture == "redacted":
                scrub, policy, mark = s.redact, s.redact_policy, s.marks_redacted
            else:  # full: the user chose to keep PII; secrets are scrubbed and the collector must not redact
                scrub, policy, mark = s.secrets, s.secrets_policy, True
        new_attributes = self._scrubbed(attributes, scrub)
        if in_events:
            events = tuple(Event(ev.name, self._scrubbed(ev.attributes or {}, scrub), ev.timestamp)
                           if ev.attributes and not CONTENT_ATTRIBUTES.isdisjoint(ev.attributes) else ev
                           for ev in events)
        if mark:
            new_attributes[sc.REDACTED] = True
            new_attributes[sc.REDACTION_POLICY] = policy
        return _RebuiltSpan(span, new_attributes, events)

    @staticmethod
    def _scrubbed(attributes: Mapping[str, Any], scrub: _Scrub | None) -> dict[str, Any]:
        out = dict(attributes)
        for key in CONTENT_ATTRIBUTES.intersection(out):
            value = out.pop(key)
            if scrub is None:
                continue  # capture off: stripped
            try:
                if isinstance(value, str):
                    out[key] = scrub(value)
                elif isinstance(value, (tuple, list)):
                    out[key] = tuple(scrub(v) if isinstance(v, str) else v for v in value)
                else:
                    out[key] = value  # numbers, booleans: no text to leak
            except Exception as exc:  # noqa: BLE001 - fail closed: the text is dropped, never sent raw
                _guard.record_internal_error("telemetry.redact", exc)
        return out

    def _load_scrubbers(self) -> _Scrubbers:
        """The scrub functions for the capture mode, from ``inferwatch.redaction`` when it exists."""
        redactor = self._redactor_override
        module: Any = None
        if redactor is None:
            try:
                from . import redaction as module  # type: ignore[no-redef]
            except ImportError:
                module = None
            except Exception as exc:  # noqa: BLE001 - a broken redaction module: fall back, but count it
                _guard.record_internal_error("telemetry.redaction_import", exc)
                module = None
            redactor = getattr(module, "DEFAULT_REDACTOR", None)
        if redactor is None:
            # not marked as redacted: the collector redacts these texts again with its full rules
            return _Scrubbers(_fallback_redact, FALLBACK_POLICY, False, fallback_scrub, FALLBACK_SECRETS_POLICY)
        policy = str(getattr(redactor, "policy", "") or type(redactor).__name__)

        def redact(text: str) -> str:
            return _text_of(redactor.redact(text))

        entities = getattr(redactor, "SECRET_ENTITIES", None) or getattr(module, "SECRET_ENTITIES", None)
        if entities and _accepts_entities(redactor.redact):
            only = frozenset(entities)

            def secrets(text: str) -> str:
                return _text_of(redactor.redact(text, entities=only))

            return _Scrubbers(redact, policy, True, secrets, f"{policy}:secrets")
        return _Scrubbers(redact, policy, True, fallback_scrub, FALLBACK_SECRETS_POLICY)

    def _default_metric_exporter(self) -> MetricExporter:
        _quiet_stock_metric_exporter()
        o = self.options
        session = _own_headers_session(self._headers())
        exporter = OTLPMetricExporter(endpoint=f"{o.endpoint.rstrip('/')}/v1/metrics", timeout=o.export_timeout_s,
                                      compression=Compression.Gzip, session=session,
                                      preferred_temporality={Histogram: AggregationTemporality.DELTA},
                                      meter_provider=NoOpMeterProvider())
        session.verify, session.cert = True, None
        return exporter

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.options.api_key}"} if self.options.api_key else {}

    # --- metrics (export thread) ------------------------------------------------------------------------------
    def _fold_metric_records(self) -> None:
        records = self._metric_records
        while records:
            self._record_call_metrics(records.popleft())

    def _record_call_metrics(self, row: tuple[Any, ...]) -> None:
        """Fold one call's values (a :meth:`record_metrics` row) into the histograms (export thread only)."""
        if self._metrics is None:
            self._metrics = _Histograms(self._resource, self._version)
        record = self._metrics.record
        try:
            op, provider, req_model, resp_model, duration, inp, out, ttfc, error = row
            attrs = [(sc.GEN_AI_OPERATION_NAME, op), (sc.GEN_AI_PROVIDER_NAME, provider)]
            if req_model:
                attrs.append((sc.GEN_AI_REQUEST_MODEL, req_model))
            if resp_model:
                attrs.append((sc.GEN_AI_RESPONSE_MODEL, resp_model))
            if not all(type(value) in _PLAIN for _, value in attrs):  # cleaned as the OTel SDK cleans them
                attrs = list(BoundedAttributes(None, dict(attrs)).items())
            if duration is not None and duration >= 0:
                record(0, duration, tuple(attrs + [(sc.ERROR_TYPE, error)]) if error else tuple(attrs))
            if inp is not None and inp >= 0:
                record(1, inp, tuple(attrs + [(sc.GEN_AI_TOKEN_TYPE, "input")]))
            if out is not None and out >= 0:
                record(1, out, tuple(attrs + [(sc.GEN_AI_TOKEN_TYPE, "output")]))
            if ttfc is not None and ttfc >= 0:
                record(2, ttfc, tuple(attrs))
        except Exception as exc:  # noqa: BLE001 - a bad value (a token count that is not a number) is skipped
            _guard.record_internal_error("telemetry.metrics.record", exc)

    def _export_metrics(self) -> bool:
        """Collect and send the delta since the last collection; True when sent or nothing to send."""
        if self._metrics is None:
            return True
        data = self._metrics.collect()
        if data is None:
            return True
        ok = False
        try:
            exporter = self._metric_exporter
            if exporter is None:
                exporter = self._metric_exporter = self._default_metric_exporter()
            ok = exporter.export(data, timeout_millis=self.options.export_timeout_s * 1000) \
                is MetricExportResult.SUCCESS
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.export_metrics", exc)
        if not ok:  # kept apart from span export_failures: a collector without /v1/metrics is common today
            self._metric_export_failures += 1
            if self._metric_export_failures == 1:
                _log.warning("inferwatch: metrics export to %s/v1/metrics failed; failures are counted in "
                             "inferwatch.stats()", self.options.endpoint.rstrip("/"))
        return ok


EXPORT_THREAD_NAME = "inferwatch-export"
_STOCK_METRIC_LOGGER = "opentelemetry.exporter.otlp.proto.http.metric_exporter"


class _NotFromOurThread(logging.Filter):
    """Drops what the stock OTLP metric exporter logs on the SDK's export thread: every failed export and every
    retry (four lines every 30 s while the collector is down, bench/README.md's outage bench), where the span
    export warns once. The failures are counted (``stats()["metric_export_failures"]``) and warned once by the
    pipeline. Only our thread's records: the app's own OTel exporters log as before."""

    def filter(self, record: logging.LogRecord) -> bool:
        return threading.current_thread().name != EXPORT_THREAD_NAME


_quiet_filter = _NotFromOurThread()


def _quiet_stock_metric_exporter() -> None:
    logger = logging.getLogger(_STOCK_METRIC_LOGGER)
    if _quiet_filter not in logger.filters:
        logger.addFilter(_quiet_filter)


_PROTOCOL_HEADERS = frozenset({"content-type", "content-encoding", "user-agent"})


def _own_headers_session(own: Mapping[str, str]) -> Any:
    """A requests session that sends the OTLP protocol headers and ours only.

    The stock exporter merges ``OTEL_EXPORTER_OTLP_HEADERS`` into every request: those are the app's credentials
    for its own backend and must never reach our collector.
    """
    import requests

    class _Session(requests.Session):
        def request(self, method: Any, url: Any, *args: Any, headers: Any = None, **kwargs: Any) -> Any:
            kept = {k: v for k, v in (headers or {}).items() if k.lower() in _PROTOCOL_HEADERS}
            kept.update(own)
            return super().request(method, url, *args, headers=kept, **kwargs)

    return _Session()


def _text_of(result: Any) -> str:
    return result if isinstance(result, str) else result.text


def _accepts_entities(fn: Callable[..., Any]) -> bool:
    import inspect

    try:
        return "entities" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


# --- process hooks: registered once, act on every live pipeline ---------------------------------------------
_live: weakref.WeakSet[Pipeline] = weakref.WeakSet()
_hooks_registered = False
_hooks_lock = threading.Lock()


def _drain_at_exit() -> None:
    """The process's exit: every live pipeline's spans within :data:`ATEXIT_TIMEOUT_S`, then the feedback queued
    (its own time: :data:`inferwatch.feedback.ATEXIT_TIMEOUT_S`), in that order so that feedback sent right
    before the exit reaches the collector after its call does."""
    deadline = time.monotonic() + ATEXIT_TIMEOUT_S
    for pipeline in list(_live):
        with _guard.guard("telemetry.atexit"):
            pipeline.flush(max(deadline - time.monotonic(), 0.0))
    with _guard.guard("telemetry.atexit.feedback"):
        from .feedback import flush_at_exit  # (the module: ``inferwatch.feedback`` is also the function's name)

        flush_at_exit()


def _after_fork_in_child() -> None:
    for pipeline in list(_live):
        try:
            pipeline._after_fork_in_child()
        except Exception:  # noqa: BLE001, S110 - never break the child
            pass


def _register_process_hooks() -> None:
    global _hooks_registered
    with _hooks_lock:
        if _hooks_registered:
            return
        _hooks_registered = True
    atexit.register(_drain_at_exit)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)


def live_pipelines() -> Iterable[Pipeline]:
    """Pipelines not shut down yet (tests and diagnostics)."""
    return list(_live)
