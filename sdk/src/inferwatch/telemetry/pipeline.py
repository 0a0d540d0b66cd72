"""The SDK's one export pipeline: a private TracerProvider, bounded queues and one export thread.

The caller's thread only appends to a deque (``LightSpan.end``/``end_call``, ``ProviderCall.end``, ``on_end``,
``record_metric_row``, ``submit_feedback``): O(1), no I/O, no redaction, no serialization, never blocks, never
raises (architecture §4 rules 1, 4, 7). One daemon thread does everything else, through one
:class:`~inferwatch.transport.Transport`, in stages:

* spans (:mod:`.span_export`): every ``schedule_delay_ms``, or at once when a batch is full; the encoded requests
  are posted by the sender threads (:mod:`.senders`, up to ``max_concurrent_exports`` in flight), and while the
  queue holds more than a batch per free sender the requests grow up to ``max_backlog_batch_size``
  (:meth:`Pipeline._batch_limit`);
* metrics (:mod:`.metric_export`): the GenAI histograms, every ``metrics_interval_s``;
* feedback (:mod:`.feedback_export`): as soon as it is queued.

Every drop is counted by reason (:data:`DROP_REASONS`); every failure in here is guarded
(:mod:`inferwatch._guard`).

:meth:`Pipeline.flush` puts a marker in the span queue; when the export thread reaches it and every request before
it was answered, every span queued before it has been handled, the disk backlog probed and the metrics sent; then
the feedback queued before it is sent, and the feedback waiting to be sent once more. The same flush runs for
every live pipeline at exit, so that feedback sent right before the exit reaches the collector after its call
does.

The provider is private (never ``set_tracer_provider``), and the metrics never touch a global ``MeterProvider``,
so an app's own OpenTelemetry setup keeps working and its spans never reach our collector (architecture §4
rule 3).

Fork safety: in a forked child the queues, counters and stages are reset and the export thread (with an HTTP
session of the child's own) is started again when first needed; the parent's queued items are the parent's.
"""

from __future__ import annotations

import atexit
import functools
import os
import random
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.metrics.export import MetricExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from .. import _guard
from ..metrics import InferenceMetrics
from ..options import Options
from ..transport import Transport, suppress_instrumentation
from . import feedback_export
from .feedback_export import FeedbackExport
from .histograms import MetricRow
from .metric_export import MetricExport
from .span_export import MAX_SPAN_BYTES, BeforeSend, SpanExport
from .spans import _SAMPLED, _SAMPLED_RANDOM, LightSpan, Recorded

DROP_REASONS: tuple[str, ...] = ("queue_full", "too_large", "sampled", "export_failed", "before_send",
                                 "metrics_queue_full", "internal_error", "shutdown", "disk_buffer_full",
                                 "disk_buffer_error", "disk_buffer_corrupt")
METRICS_INTERVAL_S = 30.0
ATEXIT_TIMEOUT_S = 2.0  # at exit: the spans and metrics within this, then the feedback within as long again
PENDING_SCAN_LIMIT = 4096  # queued calls asked for their response ids per feedback batch (newest first)
ID_POOL_SIZE = 4096  # span id pairs drawn ahead (refilled at a wake-up once half are used)
EXPORT_THREAD_NAME = "inferwatch-export"
ABORT_GRACE_S = 0.1  # at shutdown, for the requests whose retry wait was cut short to end and be counted

OnCall = Callable[[InferenceMetrics], Any]


class _Flush:
    """A marker in the span queue: ``spans_done`` once every span queued before it was handled and the metrics
    sent, ``done`` once the feedback queued before it was sent too."""

    __slots__ = ("deadline", "done", "feedback_upto", "spans_done")

    def __init__(self, timeout: float, feedback_upto: int) -> None:
        self.deadline = time.monotonic() + timeout  # for the waiting feedback's early send
        self.feedback_upto = feedback_upto
        self.spans_done = threading.Event()
        self.done = threading.Event()

    def release(self) -> None:
        self.spans_done.set()
        self.done.set()


class _QueueingProcessor(SpanProcessor):
    """``on_end`` appends to the pipeline's bounded deque; everything else happens in the export thread."""

    def __init__(self, pipeline: Pipeline) -> None:
        self._p = pipeline

    def on_end(self, span: ReadableSpan) -> None:
        self._p.enqueue(span)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._p.flush(timeout_millis / 1000)


class Pipeline:
    """Private providers + bounded queues + the export thread and its stages. See the module docstring."""

    def __init__(self, options: Options, *, exporter: SpanExporter | None = None,
                 metric_exporter: MetricExporter | None = None, before_send: BeforeSend | None = None,
                 redactor: Any = None, max_span_bytes: int = MAX_SPAN_BYTES,
                 metrics_interval_s: float = METRICS_INTERVAL_S, on_call: OnCall | None = None) -> None:
        self.options = options
        self._max_queue = options.max_queue_size
        self._batch_size = options.max_export_batch_size
        self._max_batch = max(options.max_backlog_batch_size, self._batch_size)
        self._delay_s = max(options.schedule_delay_ms, 1) / 1000
        self._max_span_bytes = max_span_bytes
        self._metrics_interval_s = metrics_interval_s
        self._on_call = on_call
        self._closed = False

        attributes: dict[str, Any] = {"telemetry.distro.name": "inferwatch"}
        if options.service_name and options.service_name != "unknown_service":
            attributes["service.name"] = options.service_name  # else OTEL_SERVICE_NAME / the OTel default apply
        self._version = str(getattr(sys.modules.get("inferwatch"), "__version__", ""))
        self._resource = Resource.create(attributes)
        self._transport = Transport(options.endpoint, options.api_key, options.ca_file)
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
        self._reset_process_state(exporter, before_send, redactor, metric_exporter)

        _live.add(self)
        _register_process_hooks()
        self._start_worker()

    # --- state that belongs to one process (reset in a forked child) ----------------------------------------
    def _reset_process_state(self, exporter: SpanExporter | None, before_send: BeforeSend | None, redactor: Any,
                             metric_exporter: MetricExporter | None) -> None:
        self._queue: deque[Any] = deque()
        self._taken: list[Any] = []  # the batch the export thread is preparing (see pending_response_ids)
        self._metric_records: deque[MetricRow] = deque()
        self._wake = threading.Event()
        self._abort = threading.Event()  # set by shutdown(): stops a retry wait
        self._flush_asked = False
        self._last_flush: dict[str, Any] | None = None  # what the last flush() left (stats()["last_flush"])
        self._counts_lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._dropped: dict[str, int] = dict.fromkeys(DROP_REASONS, 0)
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._worker_started = False
        o = self.options
        self.span_export = SpanExport(o, exporter=exporter, before_send=before_send, redactor=redactor,
                                      max_span_bytes=self._max_span_bytes, transport=self._transport,
                                      count_drop=self.count_drop, abort=self._abort)
        self.metric_export = MetricExport(resource=self._resource, version=self._version, exporter=metric_exporter,
                                          transport=self._transport, timeout_s=o.export_timeout_s,
                                          interval_s=self._metrics_interval_s, abort=self._abort)
        self.feedback = FeedbackExport(o, transport=self._transport, pending_ids=self.pending_response_ids,
                                       abort=self._abort)
        # (trace id, span id) pairs drawn ahead by the export thread for ProviderCall (see _refill_ids), from a
        # generator of our own (seeded from os.urandom), so that an app that seeds ``random`` keeps its sequence.
        # A forked child starts with a new generator and no pairs: it never reuses its parent's.
        self._id_random = random.Random()
        self._id_pool: list[tuple[int, int]] = []

    def _after_fork_in_child(self) -> None:
        # Only plain assignments here: the child is single-threaded until it starts one. The disk buffer's
        # directory stays the parent's (the child finds it locked and runs without one).
        spans = self.span_export
        spans.abandon_after_fork()
        self._reset_process_state(spans.exporter, spans.before_send, spans.content.redactor,
                                  self.metric_export.exporter)

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

    def record_metric_row(self, row: MetricRow) -> None:
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

    def submit_feedback(self, item: dict[str, Any]) -> bool:
        """Queue one feedback item (:mod:`inferwatch.feedback`) for the export thread, which sends it at once;
        False when it was not (closed, or the feedback queue is full). Raises only when no thread can start (at
        interpreter exit)."""
        if self._closed:
            return False
        if not self._worker_started:
            self._start_worker()
        if not self.feedback.submit(item):
            return False
        self._wake.set()
        return True

    def count_drop(self, reason: str, n: int = 1) -> None:
        with self._counts_lock:
            self._dropped[reason] = self._dropped.get(reason, 0) + n

    def stats(self) -> dict[str, Any]:
        with self._counts_lock:
            dropped = dict(self._dropped)
        spans = self.span_export
        requests, in_flight = spans.in_flight()
        return {"queued": sum(1 for item in list(self._queue) if type(item) is not _Flush),
                "in_flight": in_flight, "in_flight_requests": requests,
                "last_flush": dict(self._last_flush) if self._last_flush else None,
                "exported": spans.exported, "dropped": dropped, "export_failures": spans.failures,
                "metric_export_failures": self.metric_export.failures,
                "internal_errors": dict(_guard.internal_errors), "disk_buffer": spans.disk_stats()}

    def flush(self, timeout: float = 5.0, feedback_timeout: float | None = None) -> bool:
        """Export every span ended so far, the metrics and the feedback queued so far; True when that finished
        within ``timeout`` s (exported or counted as dropped: a failing collector does not make this False).
        ``feedback_timeout`` (the exit's flush): the spans and metrics get ``timeout``, and the feedback this long
        more (also when the spans took longer, if there is feedback to send)."""
        try:
            if self._closed:
                return True
            if self.on_export_thread():
                return False  # called from a hook inside the export thread: waiting would deadlock
            if not self._worker_started:
                self._start_worker()
            timeout = max(timeout, 0.0)
            extra = 0.0 if feedback_timeout is None else max(feedback_timeout, 0.0)
            marker = _Flush(timeout + extra, self.feedback.submitted)
            self._queue.append(marker)  # always, even when the queue is full
            self._flush_asked = True
            self._wake.set()
            if feedback_timeout is None:
                return self._flushed(marker.done.wait(timeout))
            if not marker.spans_done.wait(timeout) and not (self.feedback.pending() or self.feedback.again):
                return self._flushed(False)  # no feedback waits behind the spans: no reason to wait longer
            return self._flushed(marker.done.wait(extra))
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.flush", exc)
            return False

    def _flushed(self, completed: bool) -> bool:
        """Note what the flush that ends here left (``stats()["last_flush"]``) and return ``completed``."""
        requests, spans = self.span_export.in_flight()
        queued = sum(1 for item in list(self._queue) if type(item) is not _Flush)
        self._last_flush = {"completed": completed, "queued": queued, "in_flight": spans,
                            "in_flight_requests": requests}
        return completed

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
            if self.span_export.senders is not None:
                self.span_export.senders.wake()  # a wait for a free sender or for the answers ends now
            thread = self._thread
            if thread is not None and thread is not threading.current_thread():
                thread.join(max(deadline - time.monotonic(), 0.0))
            items = list(self._queue)
            self._queue.clear()
            for item in items:
                if type(item) is _Flush:
                    item.release()  # a concurrent flush() need not wait for a thread that has stopped
            if left := sum(1 for item in items if type(item) is not _Flush):
                self.count_drop("shutdown", left)
            senders = self.span_export.senders
            if senders is not None:  # the retry waits were cut short: those requests end now, counted
                senders.wait_idle(max(deadline - time.monotonic(), ABORT_GRACE_S), stop_on_abort=False)
            if senders is not None and (left := senders.abandon()):
                self.count_drop("shutdown", left)  # in requests not answered yet: counted once, here
            if left := self.feedback.drop_queued():
                feedback_export.count("dropped", left, reason="shutdown")
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("telemetry.shutdown", exc)
        finally:
            self._closed = True
            _live.discard(self)
        for where, close in (("telemetry.shutdown.exporter", self.span_export.shutdown),
                             ("telemetry.shutdown.transport", self._transport.close),
                             ("telemetry.shutdown.metric_exporter", self.metric_export.shutdown),
                             ("telemetry.shutdown.tracer_provider", self._tracer_provider.shutdown)):
            with _guard.guard(where):
                close()

    def pending_response_ids(self, wanted: set[str]) -> dict[str, tuple[int, int]]:
        """Response id -> (trace id, span id), for the ``wanted`` ids, of the ended calls whose spans are not out
        yet (queued, or in the batch being prepared) and whose response id can be told without recording them
        (:meth:`inferwatch.llm_call.ProviderCall.pending_ids`); any thread, a snapshot.

        Read in this order, a call moving meanwhile is still seen: the queue first, then the batch (a call joins
        the batch before it leaves the queue); a batch is let go only after its calls' ids are remembered, so a
        call in neither is found by looking the id up again afterwards (:mod:`inferwatch._responses`). Asked
        newest first (the newest of two calls with one id wins, as in ``_responses``), stopping when every wanted
        id is found or after :data:`PENDING_SCAN_LIMIT` calls (an id of another process is never found). A probe
        that fails is counted and skipped."""
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

    # --- export thread ----------------------------------------------------------------------------------------
    def _run(self) -> None:
        with _guard.guard("telemetry.suppress_instrumentation"):
            suppress_instrumentation()  # everything this thread does is ours: never traced by the app's clients
        with _guard.guard("telemetry.disk_buffer.open"):
            self.span_export.open_disk()
        with _guard.guard("telemetry.ids"):
            self._refill_ids()
        next_drain = time.monotonic() + self._delay_s
        while True:
            due = self.feedback.next_due()
            wake_at = min(next_drain, self.metric_export.next_at, next_drain if due is None else due)
            self._wake.wait(max(wake_at - time.monotonic(), 0.0))
            self._wake.clear()
            stopping = self._stopping
            drain_all = stopping or self._flush_asked or time.monotonic() >= next_drain
            if drain_all:
                self._flush_asked = False
            if drain_all or len(self._queue) >= self._batch_size:
                with _guard.guard("telemetry.export_loop"):
                    self._drain(everything=drain_all)
                if drain_all:
                    next_drain = time.monotonic() + self._delay_s
            if not self._closed:
                with _guard.guard("feedback.resend"):
                    self.feedback.resend_due()
                with _guard.guard("feedback.send"):
                    self.feedback.send_queued()
            with _guard.guard("telemetry.ids"):
                self._refill_ids()
            with _guard.guard("telemetry.disk_buffer.replay"):
                if not self._closed:
                    self.span_export.replay()
            with _guard.guard("telemetry.metrics"):
                self._fold_metric_records()
                self.metric_export.export_if_due()
            if stopping:
                with _guard.guard("telemetry.disk_buffer.close"):
                    self.span_export.close()
                return

    def _refill_ids(self) -> None:
        """Draw span ids ahead for the provider calls (:class:`inferwatch.llm_call.ProviderCall` pops a pair): a
        list's pop on the caller's thread costs next to nothing, where drawing touches the random generator's
        code and state, cold in an app. Only for the default RandomIdGenerator (random bits, as it draws them,
        from our own generator); a custom one is asked on the caller's thread."""
        pool = self._id_pool
        missing = ID_POOL_SIZE - len(pool)
        if self._random_ids and missing > ID_POOL_SIZE // 2:
            draw = self._id_random.getrandbits
            pool.extend([(draw(128) or draw(128), draw(64) or draw(64)) for _ in range(missing)])

    def _batch_limit(self) -> int:
        """Spans to take for the next request: ``max_export_batch_size``, or when the queue holds more, the backlog
        shared among the free senders, up to ``max_backlog_batch_size``. Why: a backlog means the requests in
        flight take longer than the spans take to arrive; bigger requests cost the collector less per span (one
        decode, one part of its group commit), so the export catches up instead of falling further behind."""
        senders = self.span_export.senders
        if senders is None or self.span_export.disk is not None:
            return self._batch_size
        share = -(-len(self._queue) // max(senders.free(), 1))
        return min(max(self._batch_size, share), self._max_batch)

    def _drain(self, everything: bool = True) -> None:
        """Send the queued spans in requests: the full batches, and with ``everything`` (the schedule's wake-up, a
        flush, the stop) what was queued when it began too. Spans queued meanwhile wait for a full batch or the
        next wake-up: many tiny requests would cost the collector more than the wait costs."""
        queue = self._queue
        senders = self.span_export.senders if self.span_export.disk is None else None
        remaining = len(queue) if everything else 0
        while queue and not self._closed:  # after shutdown() gave up waiting, the rest is counted there
            if remaining <= 0 and len(queue) < self._batch_size:
                return
            if senders is not None and not senders.wait_free():
                return  # shutting down: shutdown() counts what is left
            limit = self._batch_limit()
            batch: list[ReadableSpan | Recorded] = []
            self._taken = batch
            marker: _Flush | None = None
            while queue and len(batch) < limit:
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
            remaining -= len(batch) + (marker is not None)
            try:
                if batch:
                    self.span_export.export(batch)
                self._taken = []
                if marker is not None:
                    self._at_flush(marker)
            finally:
                self._taken = []
                if marker is not None:
                    marker.release()

    def _at_flush(self, marker: _Flush) -> None:
        with _guard.guard("telemetry.flush.wait_sent"):
            self.span_export.wait_sent()  # every request before the marker answered: bounded by their deadline
        with _guard.guard("telemetry.disk_buffer.replay"):
            self.span_export.replay(force=True)  # one probe now, whatever the backoff
        with _guard.guard("telemetry.metrics"):
            self._fold_metric_records()
            self.metric_export.export()
        marker.spans_done.set()
        if self._closed:
            return
        with _guard.guard("feedback.flush"):
            # the spans are out: the collector knows this process's calls that the feedback names
            self.feedback.send_queued(upto=marker.feedback_upto, spans_out=True)
            self.feedback.resend_early(marker.deadline)

    def _fold_metric_records(self) -> None:
        records = self._metric_records
        while records:
            self.metric_export.record(records.popleft())

    def _record_call_metrics(self, row: MetricRow) -> None:
        """Fold one call's values into the histograms (export thread; :meth:`LightSpan.readable`)."""
        self.metric_export.record(row)

    def _tell_app(self, m: InferenceMetrics) -> None:
        """Hand a copy of an LLM call's completed metrics to the app's ``on_call`` hook (export thread); a hook
        that raises is counted (``telemetry.on_call``), never propagated."""
        try:
            self._on_call(InferenceMetrics(*m._snapshot()))  # type: ignore[misc]
        except BaseException as exc:  # noqa: BLE001 - the app's hook (even sys.exit() there): the span still goes
            _guard.record_internal_error("telemetry.on_call", exc)


# --- process hooks: registered once, act on every live pipeline ---------------------------------------------
_live: weakref.WeakSet[Pipeline] = weakref.WeakSet()
_hooks_registered = False
_hooks_lock = threading.Lock()


def drain_at_exit() -> None:
    """The process's exit: every live pipeline flushed, its spans and metrics within :data:`ATEXIT_TIMEOUT_S`
    (all pipelines together), then its feedback within as long again."""
    deadline = time.monotonic() + ATEXIT_TIMEOUT_S
    for pipeline in list(_live):
        with _guard.guard("telemetry.atexit"):
            pipeline.flush(max(deadline - time.monotonic(), 0.0), feedback_timeout=ATEXIT_TIMEOUT_S)


def _after_fork_in_child() -> None:
    feedback_export.after_fork_in_child()
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
    atexit.register(drain_at_exit)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)


def live_pipelines() -> Iterable[Pipeline]:
    """Pipelines not shut down yet (tests and diagnostics)."""
    return list(_live)
