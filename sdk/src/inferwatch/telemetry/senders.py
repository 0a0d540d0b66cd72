"""Span export requests in flight at once: up to ``max_concurrent_exports`` sender threads, each with its own HTTP
connection, post the requests the export thread has encoded.

Why: a collector acknowledges a request once its rows are durable, which takes it a group commit (ours: up to
its ``flush_interval_s``, 1 s by default); one request at a time caps an exporter at one batch per round trip,
however idle the collector. A few requests in flight, and batches that grow with the backlog
(:meth:`inferwatch.telemetry.pipeline.Pipeline`), keep up with it at a bounded cost: at most ``n`` requests (and
their encoded bodies) are held at once.

Rules:

* :meth:`Senders.submit` waits while all ``n`` senders are busy, and while a pause is on (below); the export thread
  is the only caller, so the wait is where the backlog builds up in the span queue, bounded by its size.
* Each request goes through the transport's retry rule (:data:`inferwatch.transport.OTLP_RETRY`), byte for byte
  the same body on every attempt (the collector recognises a retried request by its bytes and writes it once:
  ``ingest_dedup``). Spans are never sent in two different requests.
* A transient answer pauses new requests for as long as the retry rule waits (the collector's ``Retry-After`` on
  a 429/503, else the doubling backoff): the wait is the collector's request to this client, not to one request.
  Waits are on a condition or an event, never polling.
* ``on_done(ok, spans)`` is called on the sender's thread before the request stops counting as in flight, so that
  :meth:`wait_idle` returning means every request handed over so far was answered and counted; after
  :meth:`abandon` (shutdown gave up waiting) nothing more is counted.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import NamedTuple

from .. import _guard
from ..transport import OTLP_RETRY, Transport

SENDER_THREAD_NAME = "inferwatch-export-send"

OnDone = Callable[[bool, int], None]
MakeTransport = Callable[[], Transport]


class _Job(NamedTuple):
    payload: bytes
    spans: int


class Senders:
    """``n`` sender threads (started on the first request) posting to ``path`` through a transport each."""

    def __init__(self, n: int, *, path: str, content_type: str, timeout_s: float, make_transport: MakeTransport,
                 on_done: OnDone, abort: threading.Event) -> None:
        self.n = max(int(n), 1)
        self._path, self._content_type, self._timeout_s = path, content_type, timeout_s
        self._make_transport = make_transport
        self._on_done = on_done
        self._abort = abort
        self._cond = threading.Condition()
        self._jobs: deque[_Job] = deque()
        self._busy = 0  # requests handed over and not answered yet (waiting for a sender or being sent)
        self._busy_spans = 0
        self._pause_until = 0.0  # monotonic; no new request starts before it
        self._threads: list[threading.Thread] = []
        self._transports: list[Transport] = []
        self._closed = False
        self._abandoned = False  # shutdown() counted what was in flight: later answers are not counted again
        self._report = threading.Lock()  # an answer is counted entirely before or after abandon()
        self.requests = 0  # handed over so far
        self.most_in_flight = 0  # the most requests in flight at once so far

    # --- the export thread ---------------------------------------------------------------------------------------
    def in_flight(self) -> tuple[int, int]:
        """(requests, spans) handed over and not answered yet."""
        with self._cond:
            return self._busy, self._busy_spans

    def free(self) -> int:
        """Senders without a request."""
        with self._cond:
            return self.n - self._busy

    def wait_free(self) -> bool:
        """Wait until a sender is free and no pause is on; False when aborted (shutdown) or closed."""
        with self._cond:
            while not (self._abort.is_set() or self._closed):
                now = time.monotonic()
                if now < self._pause_until:
                    self._cond.wait(self._pause_until - now)
                elif self._busy >= self.n:
                    self._cond.wait()
                else:
                    return True
            return False

    def submit(self, payload: bytes, spans: int) -> bool:
        """Hand one encoded request to a sender, once one is free (see :meth:`wait_free`); False when it was not
        taken (aborted or closed): the caller counts its spans."""
        if not self.wait_free():
            return False
        with self._cond:
            if not self._threads:
                self._start()
            self._jobs.append(_Job(payload, spans))
            self._busy += 1
            self._busy_spans += spans
            self.requests += 1
            self.most_in_flight = max(self.most_in_flight, self._busy)
            self._cond.notify_all()
        return True

    def wait_idle(self, timeout: float | None = None, *, stop_on_abort: bool = True) -> bool:
        """Wait until every request handed over was answered (and counted); False on timeout, or on abort unless
        ``stop_on_abort`` is False (shutdown: the aborted retries end at once and are counted). Each request ends
        within the export timeout and its retries' deadline, so the wait is bounded."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._busy:
                if stop_on_abort and self._abort.is_set():
                    return False
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def wake(self) -> None:
        """Let every wait re-check the abort event (after ``abort`` was set)."""
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        """Stop the senders once the requests handed over are done (they end within their deadline; a sender in
        the middle of one finishes it), and close their connections as they go."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def abandon(self) -> int:
        """Give up on the requests still in flight (shutdown: the process may end before they are answered);
        returns their spans, for the caller to count as dropped. Their answers, if any come, are not counted."""
        with self._report, self._cond:
            self._abandoned = True
            return self._busy_spans

    def threads(self) -> list[threading.Thread]:
        return list(self._threads)

    # --- the sender threads --------------------------------------------------------------------------------------
    def _start(self) -> None:
        for i in range(self.n):
            transport = self._make_transport()
            thread = threading.Thread(target=self._run, args=(transport,), name=f"{SENDER_THREAD_NAME}-{i + 1}",
                                      daemon=True)
            self._transports.append(transport)
            self._threads.append(thread)
            thread.start()

    def _pause(self, wait_s: float) -> None:
        with self._cond:
            self._pause_until = max(self._pause_until, time.monotonic() + wait_s)

    def _run(self, transport: Transport) -> None:
        from ..transport import suppress_instrumentation

        with _guard.guard("telemetry.suppress_instrumentation"):
            suppress_instrumentation()  # our requests are never traced by an app's instrumented HTTP client
        try:
            while True:
                with self._cond:
                    while not self._jobs and not self._closed:
                        self._cond.wait()
                    if not self._jobs:
                        return
                    job = self._jobs.popleft()
                ok = False
                try:
                    answer = transport.send(self._path, job.payload, self._content_type, OTLP_RETRY,
                                            timeout_s=self._timeout_s, deadline_s=self._timeout_s, compress=True,
                                            abort=self._abort, on_wait=self._pause)
                    ok = answer.ok
                except Exception as exc:  # noqa: BLE001 - a bug of ours fails the request, never the thread
                    _guard.record_internal_error("telemetry.send", exc)
                with self._report, _guard.guard("telemetry.send.done"):
                    if not self._abandoned:
                        self._on_done(ok, job.spans)
                with self._cond:
                    self._busy -= 1
                    self._busy_spans -= job.spans
                    self._cond.notify_all()
        finally:
            with _guard.guard("telemetry.send.close"):
                transport.close()
