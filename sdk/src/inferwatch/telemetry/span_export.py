"""The spans stage of the export pipeline (export thread): content handling, ``before_send`` and the size cap,
then requests of at most :data:`MAX_REQUEST_BYTES` to ``{endpoint}/v1/traces``.

Without a disk buffer (the default) a request is handed to the sender threads (:mod:`.senders`: up to
``max_concurrent_exports`` requests in flight), which post it through the transport's retry rule
(:data:`OTLP_RETRY`, within ``export_timeout_s``); a request that still fails is dropped as ``export_failed``. A
custom ``exporter=`` is called instead, once per request, in the export thread, one request at a time.

With a disk buffer (``Options.disk_buffer_dir``; :mod:`inferwatch.disk_buffer`) each request gets one attempt. A
request that fails transiently (connection refused or reset, timeout, 408/429/502/503/504) is written to the
buffer; while the buffer holds anything, new requests are appended behind it and the oldest are re-sent first,
one probe per backoff (1 s doubling to 30 s, or the collector's ``Retry-After``) and at every flush. A permanent
refusal is dropped as ``export_failed``. Drops: ``disk_buffer_full`` (oldest requests evicted to stay under the size cap),
``disk_buffer_error`` (the write failed), ``disk_buffer_corrupt`` (a segment failed its checksum). Metrics are
periodic aggregates and are not buffered.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from .. import _guard, _otlp
from ..disk_buffer import DiskBuffer, DiskBufferLocked
from ..options import Options
from ..transport import OTLP_RETRY, Answer, RetryPolicy, Transport
from .content import ContentFilter
from .senders import Senders

_log = logging.getLogger("inferwatch")

MAX_SPAN_BYTES = 1 << 20  # a span estimated above this is dropped as too_large
MAX_REQUEST_BYTES = 8 << 20  # one export request carries at most about this much (collector default limit: 16 MiB)
# the wait before the next probe of a collector that failed a buffered request (no jitter: one probe at a time)
DISK_RETRY = RetryPolicy(attempts=1, first_backoff_s=1.0, max_backoff_s=30.0,
                         retry_statuses=OTLP_RETRY.retry_statuses, jitter=0.0)
PATH = "/v1/traces"
CONTENT_TYPE = "application/x-protobuf"

BeforeSend = Callable[[ReadableSpan], "ReadableSpan | None"]
CountDrop = Callable[[str, int], None]


class SpanExport:
    """The spans of one process on their way out; ``exporter``, ``before_send`` and ``content.redactor`` are the
    ``init()`` hooks."""

    def __init__(self, options: Options, *, exporter: SpanExporter | None, before_send: BeforeSend | None,
                 redactor: Any, max_span_bytes: int, transport: Transport, count_drop: CountDrop,
                 abort: threading.Event) -> None:
        self.exporter = exporter
        self.before_send = before_send
        self.content = ContentFilter(options.capture, redactor)
        self.exported = 0
        self.failures = 0  # requests that failed
        self._counts = threading.Lock()  # the senders count from their threads
        self._options = options
        self._max_span_bytes = max_span_bytes
        self._transport = transport
        self._count_drop = count_drop
        self._abort = abort
        self.disk: DiskBuffer | None = None
        # "off" | "pending" (opened by the export thread) | "on" | "locked" | "error"
        self.disk_state = "pending" if options.disk_buffer_dir and exporter is None else "off"
        self._disk_failures = 0  # failed probes in a row
        self._disk_retry_at = 0.0
        # the sender threads, for the default OTLP export (a custom exporter is called in the export thread)
        self.senders: Senders | None = None
        if exporter is None:
            self.senders = Senders(options.max_concurrent_exports, path=PATH, content_type=CONTENT_TYPE,
                                   timeout_s=options.export_timeout_s, make_transport=transport.copy,
                                   on_done=self._done, abort=abort)

    # --- one batch ------------------------------------------------------------------------------------------
    def export(self, batch: list[Any]) -> None:
        """Prepare each span (an OTel SDK span, or a queued call's ``readable()``) and send them in requests."""
        ready: list[tuple[ReadableSpan, int]] = []
        for span in batch:
            try:
                prepared = self.prepare(span if isinstance(span, ReadableSpan) else span.readable())
            except Exception as exc:  # noqa: BLE001 - a bug of ours drops the span, never the thread
                _guard.record_internal_error("telemetry.prepare", exc)
                self._count_drop("internal_error", 1)
                continue
            if prepared is not None:
                ready.append(prepared)
        chunk: list[ReadableSpan] = []
        chunk_bytes = 0
        for span, size in ready:
            if chunk and chunk_bytes + size > MAX_REQUEST_BYTES:
                self.send(chunk)
                chunk, chunk_bytes = [], 0
            chunk.append(span)
            chunk_bytes += size
        if chunk:
            self.send(chunk)

    def prepare(self, span: ReadableSpan) -> tuple[ReadableSpan, int] | None:
        """Content handling, then ``before_send``, then the size cap; None when dropped (counted)."""
        span = self.content.apply(span)
        if self.before_send is not None:
            result: Any = None
            try:
                result = self.before_send(span)
                if result is not None and not isinstance(result, ReadableSpan):
                    raise TypeError("before_send must return a ReadableSpan or None")
            except Exception as exc:  # noqa: BLE001 - a failing hook drops the span (it may be a privacy filter)
                _guard.record_internal_error("telemetry.before_send", exc)
                result = None
            if result is None:
                self._count_drop("before_send", 1)
                return None
            span = result
        size = estimate_size(span)
        if size > self._max_span_bytes:
            self._count_drop("too_large", 1)
            return None
        return span, size

    def send(self, spans: list[ReadableSpan]) -> None:
        if self.exporter is not None:
            ok = False
            try:
                ok = self.exporter.export(spans) is SpanExportResult.SUCCESS
            except Exception as exc:  # noqa: BLE001
                _guard.record_internal_error("telemetry.export", exc)
            self._done(ok, len(spans))
            return
        try:
            payload = _otlp.encode_spans(spans)
        except Exception as exc:  # noqa: BLE001 - a bug of ours drops the batch, never the thread
            _guard.record_internal_error("telemetry.encode", exc)
            self._count_drop("internal_error", len(spans))
            return
        if self.disk is not None:
            self._send_buffered(payload, len(spans))
            return
        if self.senders is not None and not self.senders.submit(payload, len(spans)):
            self._count_drop("shutdown", len(spans))  # not taken: the pipeline is shutting down

    def wait_sent(self, timeout: float | None = None) -> bool:
        """Wait until every request handed to the senders was answered (the flush's wait); False on timeout or
        abort."""
        return self.senders is None or self.senders.wait_idle(timeout)

    def in_flight(self) -> tuple[int, int]:
        """(requests, spans) handed to the senders and not answered yet."""
        return (0, 0) if self.senders is None else self.senders.in_flight()

    def _done(self, ok: bool, n: int) -> None:
        with self._counts:
            if ok:
                self.exported += n
                return
            self.failures += 1
            first = self.failures == 1
        self._count_drop("export_failed", n)
        if first and self.exporter is None:
            _log.warning("inferwatch: span export to %s failed; failures and dropped spans are counted in "
                         "inferwatch.stats()", self._transport.url(PATH))

    # --- disk buffer ----------------------------------------------------------------------------------------
    def open_disk(self) -> None:
        if self.disk_state != "pending":
            return
        o = self._options
        try:
            self.disk = DiskBuffer(o.disk_buffer_dir, o.disk_buffer_max_bytes)
            self.disk_state = "on"
        except DiskBufferLocked:
            self.disk_state = "locked"
            _log.warning("inferwatch: disk buffer %s is used by another process; running without one",
                         o.disk_buffer_dir)
        except OSError as exc:
            self.disk_state = "error"
            _log.warning("inferwatch: disk buffer %s cannot be opened (%s); running without one",
                         o.disk_buffer_dir, exc)

    def disk_stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = {"state": self.disk_state, "dir": self._options.disk_buffer_dir}
        disk = self.disk
        if disk is not None:
            stats.update(pending_requests=len(disk), pending_spans=disk.pending_spans, bytes=disk.size_bytes,
                         max_bytes=disk.max_bytes)
        return stats

    def _send_buffered(self, payload: bytes, n: int) -> None:
        if len(self.disk):  # type: ignore[arg-type] - a backlog: behind it, to keep the order
            self._spill(payload, n)
            self.replay()
            return
        answer = self._post(payload)
        if answer.ok:
            self.exported += n
            return
        self.failures += 1
        if OTLP_RETRY.retryable(answer.status):
            self._spill(payload, n)
            self._back_off(answer)
        else:
            self._count_drop("export_failed", n)

    def _spill(self, payload: bytes, spans: int) -> None:
        try:
            dropped = self.disk.append(payload, spans)  # type: ignore[union-attr]
        except OSError as exc:
            _guard.record_internal_error("telemetry.disk_buffer.write", exc)
            self._count_drop("disk_buffer_error", spans)
            return
        if dropped:
            self._count_drop("disk_buffer_full", dropped)

    def _back_off(self, answer: Answer) -> None:
        self._disk_retry_at = time.monotonic() + DISK_RETRY.wait(self._disk_failures, answer)
        self._disk_failures += 1

    def replay(self, force: bool = False, max_requests: int = 16) -> None:
        """Re-send the oldest buffered requests, in order, while the collector takes them (``force``: now,
        whatever the backoff)."""
        disk = self.disk
        if disk is None or not len(disk) or (not force and time.monotonic() < self._disk_retry_at):
            return
        for _ in range(max_requests):
            if self._abort.is_set():
                return
            head = disk.peek()
            if head is None:
                return
            seg, payload = head
            if payload is None:
                disk.pop(corrupt=True)
                self._count_drop("disk_buffer_corrupt", seg.spans)
                continue
            answer = self._post(payload)
            if not answer.ok and OTLP_RETRY.retryable(answer.status):
                self.failures += 1
                self._back_off(answer)
                return
            disk.pop()
            if answer.ok:
                self.exported += seg.spans
                self._disk_failures = 0
                self._disk_retry_at = 0.0
            else:  # refused for good (bad request, auth): retrying would never help
                self.failures += 1
                self._count_drop("export_failed", seg.spans)

    def _post(self, payload: bytes) -> Answer:
        return self._transport.post(PATH, payload, CONTENT_TYPE, timeout_s=self._options.export_timeout_s,
                                      compress=True)

    def close(self) -> None:
        """Close the disk buffer (its segments stay for the next ``init()`` with this directory); the senders stop
        once the requests they hold are done."""
        if self.senders is not None:
            self.senders.close()
        if self.disk is not None:
            self.disk.close()

    def abandon_after_fork(self) -> None:
        """In a forked child: let go of the parent's disk buffer without touching its files."""
        if self.disk is not None:
            self.disk.abandon_after_fork()

    def shutdown(self) -> None:
        if self.exporter is not None:
            self.exporter.shutdown()


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

