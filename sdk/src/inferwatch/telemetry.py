"""The SDK's export pipeline: private Tracer/MeterProviders, a bounded queue and one export thread.

The caller's thread only appends to a deque (``on_end``, ``record_metrics``): O(1), no I/O, no redaction, no
serialization, never blocks, never raises (DESIGN §4 rules 1, 4, 7). One daemon thread does everything else:
content handling (redaction by capture mode), the ``before_send`` hook, the size cap, OTLP/HTTP protobuf export of
spans to ``{endpoint}/v1/traces``, folding the metric records into histograms and exporting them to
``{endpoint}/v1/metrics`` every ``metrics_interval_s`` and on :meth:`Pipeline.flush`. Every drop is counted by
reason (:data:`DROP_REASONS`); every failure in here is guarded (:mod:`inferwatch._guard`).

The providers are private (never ``set_tracer_provider``/``set_meter_provider``), so an app's own OpenTelemetry
setup keeps working untouched and its spans never reach our collector (DESIGN §4 rule 3).

Content handling, in the export thread, for the attributes in :data:`CONTENT_ATTRIBUTES` (the recorder sets them
raw, truncated, only when capture is on):

* ``off``: stripped, whatever slipped in.
* ``redacted``: every PII/secret entity replaced (``inferwatch.redaction.DEFAULT_REDACTOR``).
* ``full``: secrets only scrubbed (the redactor's secret entities if it can filter, else a built-in scrub).

A span whose content was handled by the SDK's redactor is marked ``inferwatch.redacted=true`` (with the policy in
``inferwatch.redaction.policy``) so the collector does not redact it again. If the redactor module is missing, a
built-in minimal scrub (secrets, e-mails, long digit runs) is used and ``redacted`` spans are *not* marked, so the
collector still redacts them fully. A redactor that raises fails closed: the attribute is dropped, not sent raw.

Disk buffer (optional, ``Options.disk_buffer_dir``; :mod:`inferwatch.disk_buffer`): with it, spans are encoded and
POSTed by the pipeline itself (one attempt per request, no sleeping retries in the export thread). A request that
fails transiently (connection refused or reset, timeout, 408/429/502/503/504) is written to the buffer; while the
buffer holds anything, new requests are appended behind it and the oldest are re-sent first, one probe per backoff
(1 s doubling to 30 s, or the collector's ``Retry-After``) and on every :meth:`Pipeline.flush`. A permanent refusal
(other 4xx/5xx) is dropped as ``export_failed``, never retried. Drops here: ``disk_buffer_full`` (oldest requests
evicted to stay under the size cap), ``disk_buffer_error`` (the write failed), ``disk_buffer_corrupt`` (a segment
failed its checksum). Without a disk buffer (the default) the stock OTLP exporter and its own retries are used and
a failed request is dropped as ``export_failed``. The buffer covers spans; metrics are periodic aggregates and are not
buffered. A custom ``exporter=`` disables the disk buffer (it has no bytes to keep).

Fork safety: in a forked child the queue, counters and metric state are reset and the export thread (and the
default exporters, whose HTTP sessions belong to the parent) are recreated lazily. An ``atexit`` drain flushes
every live pipeline with a short timeout.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    MetricExporter,
    MetricExportResult,
    MetricReader,
    MetricsData,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from . import _guard
from . import semconv as sc
from .options import Options

_log = logging.getLogger("inferwatch")

# TODO(semconv): move these three names into semconv.py (owned elsewhere); the collector needs REDACTED.
REDACTED = "inferwatch.redacted"  # bool: the SDK handled the content attributes (the collector skips redaction)
REDACTION_POLICY = "inferwatch.redaction.policy"  # which rules did it
GEN_AI_TOKEN_TYPE = "gen_ai.token.type"  # metric attribute of gen_ai.client.token.usage: input | output

CONTENT_ATTRIBUTES: frozenset[str] = frozenset({
    sc.GEN_AI_INPUT_MESSAGES, sc.GEN_AI_OUTPUT_MESSAGES, sc.GEN_AI_SYSTEM_INSTRUCTIONS,
    sc.GEN_AI_PROMPT, sc.GEN_AI_COMPLETION,  # deprecated spellings, in case anything sets them on our spans
})
DROP_REASONS: tuple[str, ...] = ("queue_full", "too_large", "sampled", "export_failed", "before_send",
                                 "metrics_queue_full", "internal_error", "shutdown", "disk_buffer_full",
                                 "disk_buffer_error", "disk_buffer_corrupt")
RETRYABLE_STATUS = frozenset({408, 429, 502, 503, 504})
DISK_BACKOFF_MAX_S = 30.0

MAX_SPAN_BYTES = 1 << 20  # a span estimated above this is dropped as too_large
MAX_REQUEST_BYTES = 8 << 20  # one export request carries at most about this much (collector default limit: 16 MiB)
METRICS_INTERVAL_S = 30.0
ATEXIT_TIMEOUT_S = 2.0
# GenAI semconv bucket advice (landscape notes §4)
DURATION_BUCKETS_S = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)

BeforeSend = Callable[[ReadableSpan], "ReadableSpan | None"]
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


class _PullReader(MetricReader):
    """Collected by the export thread only (no thread of its own, so nothing to fix up after a fork)."""

    def __init__(self) -> None:
        super().__init__(preferred_temporality={Histogram: AggregationTemporality.DELTA})
        self.collected: MetricsData | None = None

    def _receive_metrics(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> None:
        self.collected = metrics_data

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.collected = None


class _Metrics:
    def __init__(self, resource: Resource, version: str) -> None:
        self.reader = _PullReader()
        self.provider = MeterProvider(metric_readers=[self.reader], resource=resource, shutdown_on_exit=False,
                                      exemplar_filter=AlwaysOffExemplarFilter())
        meter = self.provider.get_meter("inferwatch", version)
        self.duration = meter.create_histogram(
            sc.METRIC_OPERATION_DURATION, unit="s", description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS_S)
        self.tokens = meter.create_histogram(
            sc.METRIC_TOKEN_USAGE, unit="{token}", description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS)
        self.ttfc = meter.create_histogram(
            sc.METRIC_TIME_TO_FIRST_CHUNK, unit="s", description="Time to receive the first chunk of a stream",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS_S)


def _has_points(data: MetricsData) -> bool:
    return any(m.data.data_points for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics)


class _QueueingProcessor(SpanProcessor):
    """``on_end`` appends to the pipeline's bounded deque; everything else happens in the export thread."""

    def __init__(self, pipeline: Pipeline) -> None:
        self._p = pipeline

    def on_end(self, span: ReadableSpan) -> None:
        p = self._p
        try:
            if p._closed:
                return
            if not p._worker_started:
                p._start_worker()
            queue = p._queue
            if len(queue) >= p._max_queue:
                p.count_drop("queue_full")
                return
            queue.append(span)
            if len(queue) >= p._batch_size and not p._wake.is_set():
                p._wake.set()
        except Exception as exc:  # noqa: BLE001 - on_end must never raise into the app
            _guard.record_internal_error("telemetry.on_end", exc)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._p.flush(timeout_millis / 1000)


class Pipeline:
    """Private providers + bounded queue + export thread. See the module docstring."""

    def __init__(self, options: Options, *, exporter: SpanExporter | None = None,
                 metric_exporter: MetricExporter | None = None, before_send: BeforeSend | None = None,
                 redactor: Any = None, max_span_bytes: int = MAX_SPAN_BYTES,
                 metrics_interval_s: float = METRICS_INTERVAL_S) -> None:
        self.options = options
        self._capture = options.capture
        self._max_queue = options.max_queue_size
        self._batch_size = options.max_export_batch_size
        self._delay_s = max(options.schedule_delay_ms, 1) / 1000
        self._max_span_bytes = max_span_bytes
        self._metrics_interval_s = metrics_interval_s
        self._before_send = before_send
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
        self._tracer_provider = TracerProvider(resource=self._resource, sampler=ALWAYS_ON, shutdown_on_exit=False)
        self._tracer_provider.add_span_processor(_QueueingProcessor(self))
        self.tracer: trace.Tracer = self._tracer_provider.get_tracer("inferwatch", self._version)

        _live.add(self)
        _register_process_hooks()
        self._start_worker()

    # --- state that belongs to one process (reset in a forked child) ----------------------------------------
    def _reset_process_state(self) -> None:
        self._queue: deque[Any] = deque()
        self._metric_records: deque[tuple[Any, ...]] = deque()
        self._wake = threading.Event()
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
        self._metrics: _Metrics | None = None
        self._scrubbers: _Scrubbers | None = None
        # disk buffer: opened lazily by the export thread ("off" | "pending" | "on" | "locked" | "error")
        self._disk: Any = None
        self._disk_state = "pending" if self.options.disk_buffer_dir and self._given_exporter is None else "off"
        self._disk_retry_at = 0.0
        self._disk_backoff_s = 0.0
        self._poster: Any = None

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
            thread = threading.Thread(target=self._run, name="inferwatch-export", daemon=True)
            thread.start()
            self._thread = thread
            self._worker_started = True

    # --- caller-thread API (O(1), never raises) ---------------------------------------------------------------
    def record_metrics(self, *, operation: str, provider: str, request_model: str, response_model: str,
                       duration_s: float, input_tokens: int | None, output_tokens: int | None,
                       ttfc_s: float | None, error_type: str | None) -> None:
        """Queue one call's measurements; the export thread records them into the histograms."""
        try:
            if self._closed:
                return
            if not self._worker_started:
                self._start_worker()
            records = self._metric_records
            if len(records) >= self._max_queue:
                self.count_drop("metrics_queue_full")
                return
            records.append((operation, provider, request_model, response_model, duration_s, input_tokens,
                            output_tokens, ttfc_s, error_type))
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.record_metrics", exc)

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
            if threading.current_thread() is self._thread:
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

    def shutdown(self, timeout: float = 5.0) -> None:
        """Flush, stop the export thread, close the exporters. Idempotent; never raises."""
        if self._closed:
            return
        try:
            deadline = time.monotonic() + max(timeout, 0.0)
            self.flush(timeout)
            self._closed = True
            self._stopping = True
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
                             ("telemetry.shutdown.metric_exporter",
                              lambda: self._metric_exporter and self._metric_exporter.shutdown()),
                             ("telemetry.shutdown.tracer_provider", self._tracer_provider.shutdown),
                             ("telemetry.shutdown.meter_provider",
                              lambda: self._metrics and self._metrics.provider.shutdown())):
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
        while True:
            self._wake.wait(min(self._delay_s, max(next_metrics - time.monotonic(), 0.0)))
            self._wake.clear()
            stopping = self._stopping
            with _guard.guard("telemetry.export_loop"):
                self._drain()
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

    def _drain(self) -> None:
        queue = self._queue
        while queue and not self._closed:  # after shutdown() gave up waiting, the rest is counted there
            batch: list[ReadableSpan] = []
            marker: _Flush | None = None
            while queue and len(batch) < self._batch_size:
                item = queue.popleft()
                if type(item) is _Flush:
                    marker = item
                    break
                batch.append(item)
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
                if marker is not None:
                    marker.done.set()

    def _export_spans(self, batch: list[ReadableSpan]) -> None:
        ready: list[tuple[ReadableSpan, int]] = []
        for span in batch:
            try:
                prepared = self._prepare(span)
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
        ok = False
        try:
            exporter = self._exporter
            if exporter is None:
                exporter = self._exporter = self._default_span_exporter()
            ok = exporter.export(spans) is SpanExportResult.SUCCESS
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.export", exc)
        if ok:
            self._exported += len(spans)
        else:
            self._export_failures += 1
            self.count_drop("export_failed", len(spans))

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
            payload = encode_spans(spans).SerializePartialToString()
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

    def _post(self, payload: bytes) -> tuple[str, float | None]:
        """One POST of an encoded request: ("ok" | "retry" | "fail", Retry-After seconds or None)."""
        import gzip

        import requests

        o = self.options
        if self._poster is None:
            self._poster = _own_headers_session(self._headers())
        try:
            response = self._poster.post(
                f"{o.endpoint.rstrip('/')}/v1/traces", data=gzip.compress(payload, 5),
                headers={"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
                timeout=(min(o.export_timeout_s, 5.0), o.export_timeout_s))
        except requests.RequestException:
            return "retry", None  # refused, reset, timed out: the collector is down or overloaded
        except Exception as exc:  # noqa: BLE001 - a bug of ours: keep the request, try again later
            _guard.record_internal_error("telemetry.disk_buffer.post", exc)
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
            new_attributes[REDACTED] = True
            new_attributes[REDACTION_POLICY] = policy
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

    def _default_span_exporter(self) -> SpanExporter:
        o = self.options
        session = _own_headers_session(self._headers())
        exporter = OTLPSpanExporter(endpoint=f"{o.endpoint.rstrip('/')}/v1/traces", timeout=o.export_timeout_s,
                                    compression=Compression.Gzip, session=session,
                                    max_request_size=2 * MAX_REQUEST_BYTES, meter_provider=NoOpMeterProvider())
        session.verify, session.cert = True, None  # OTEL_EXPORTER_OTLP_CERTIFICATE etc. are the app's, not ours
        return exporter

    def _default_metric_exporter(self) -> MetricExporter:
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
        if not records:
            return
        if self._metrics is None:
            self._metrics = _Metrics(self._resource, self._version)
        m = self._metrics
        while records:
            op, provider, req_model, resp_model, duration, inp, out, ttfc, error = records.popleft()
            attrs: dict[str, Any] = {sc.GEN_AI_OPERATION_NAME: op, sc.GEN_AI_PROVIDER_NAME: provider}
            if req_model:
                attrs[sc.GEN_AI_REQUEST_MODEL] = req_model
            if resp_model:
                attrs[sc.GEN_AI_RESPONSE_MODEL] = resp_model
            if duration is not None and duration >= 0:
                m.duration.record(duration, {**attrs, sc.ERROR_TYPE: error} if error else attrs)
            if inp is not None and inp >= 0:
                m.tokens.record(inp, {**attrs, GEN_AI_TOKEN_TYPE: "input"})
            if out is not None and out >= 0:
                m.tokens.record(out, {**attrs, GEN_AI_TOKEN_TYPE: "output"})
            if ttfc is not None and ttfc >= 0:
                m.ttfc.record(ttfc, attrs)

    def _export_metrics(self) -> bool:
        """Collect and send the delta since the last collection; True when sent or nothing to send."""
        if self._metrics is None:
            return True
        reader = self._metrics.reader
        reader.collect(timeout_millis=self.options.export_timeout_s * 1000)
        data, reader.collected = reader.collected, None
        if data is None or not _has_points(data):
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
        return ok


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
    deadline = time.monotonic() + ATEXIT_TIMEOUT_S
    for pipeline in list(_live):
        with _guard.guard("telemetry.atexit"):
            pipeline.flush(max(deadline - time.monotonic(), 0.0))


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
