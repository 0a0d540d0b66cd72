"""Group-commit writer: many requests' rows, one ClickHouse insert per table, acknowledged after commit.

Why: one insert costs 10-70 ms whatever its size (chDB ignores ``async_insert``; notes/storage-clickhouse.md
§3.1), so inserting per request caps ingest at a few thousand spans/s. Requests hand their rows to this writer
and wait; a single writer thread flushes once ``flush_rows`` rows are pending or the oldest has waited
``flush_interval_s``, then resolves every waiting request at once. Under load the next batch simply grows
(up to ``max_batch_rows``), so throughput rises with load instead of latency exploding.

Guarantees:
- a request is acknowledged only after its rows are in ClickHouse (its future resolves after the insert);
- each table insert of a batch carries ``insert_deduplication_token = <batch id>:<table>``, so retrying a batch
  after an ambiguous failure (insert done, reply lost) lands it once, rollups included;
- memory is bounded: beyond ``max_queue_rows`` pending rows, :meth:`submit` raises :class:`QueueFull` and the
  route answers 503 with Retry-After (OTLP exporters retry) instead of buffering without limit.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .native import EncodedRows
from .rows import TABLE_COLUMNS

log = logging.getLogger(__name__)

Batch = dict[str, EncodedRows]  # table -> Native blocks of one request
InsertFn = Callable[[str, bytes, Sequence[str], dict[str, Any]], None]  # (table, native, columns, settings)


class QueueFull(Exception):
    """The write queue is at its limit; the caller should answer 503 and ask for a retry later."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"write queue full; retry after {retry_after_s:.0f}s")
        self.retry_after_s = retry_after_s


class WriteFailed(Exception):
    """The batch could not be written after every retry; nothing of this request is acknowledged."""


@dataclass
class WriterStats:
    """Counters for /metrics and the bench (read without locking: ints are updated atomically)."""

    batches: int = 0
    rows_written: dict[str, int] = field(default_factory=lambda: {t: 0 for t in TABLE_COLUMNS})
    insert_failures: int = 0
    insert_retries: int = 0
    rejected_queue_full: int = 0
    last_batch_rows: int = 0
    last_insert_seconds: float = 0.0
    insert_seconds_total: float = 0.0


@dataclass
class _Pending:
    rows: Batch
    count: int
    enqueued: float
    future: Future


class BatchWriter:
    """Owns the writer thread; :meth:`submit` from any thread, await the returned future."""

    def __init__(
        self,
        insert: InsertFn,
        *,
        flush_rows: int = 10_000,
        flush_interval_s: float = 1.0,
        max_batch_rows: int = 100_000,
        max_queue_rows: int = 200_000,
        retries: int = 3,
        retry_backoff_s: float = 0.2,
    ) -> None:
        self._insert = insert
        self.flush_rows = flush_rows
        self.flush_interval_s = flush_interval_s
        self.max_batch_rows = max_batch_rows
        self.max_queue_rows = max_queue_rows
        self.retries = retries
        self.retry_backoff_s = retry_backoff_s
        self.stats = WriterStats()
        self._queue: deque[_Pending] = deque()
        self._queued_rows = 0  # rows waiting (not yet taken by the thread)
        self._inflight_rows = 0  # rows in the insert being made now
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None

    @property
    def pending_rows(self) -> int:
        """Rows accepted but not yet committed (queued + in flight)."""
        return self._queued_rows + self._inflight_rows

    @property
    def alive(self) -> bool:
        """Whether the writer thread is running."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the writer thread (idempotent)."""
        if self.alive:
            return
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="inferwatch-writer", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Flush what is queued, then stop; requests still queued after ``timeout`` fail."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        with self._cond:
            leftovers = list(self._queue)
            self._queue.clear()
            self._queued_rows = 0
        for item in leftovers:
            if not item.future.done():
                item.future.set_exception(WriteFailed("collector shut down before the batch was written"))

    def submit(self, rows: Batch) -> Future:
        """Queue one request's rows; the future resolves when they are committed.

        An empty batch resolves at once. Raises :class:`QueueFull` when accepting it would exceed the bound
        (a single request larger than the bound is still accepted when nothing else is pending, so a legal
        maximum-size request can always make progress).
        """
        count = sum(part.rows for part in rows.values())
        future: Future = Future()
        if count == 0:
            future.set_result(None)
            return future
        with self._cond:
            if self._stopping or not self.alive:
                raise WriteFailed("writer is not running")
            if self.pending_rows + count > self.max_queue_rows and self.pending_rows > 0:
                self.stats.rejected_queue_full += 1
                # a full queue drains in roughly (pending / recent throughput); one second is the floor
                raise QueueFull(retry_after_s=max(1.0, self.flush_interval_s))
            was_empty = not self._queue
            self._queue.append(_Pending(rows, count, time.monotonic(), future))
            self._queued_rows += count
            if was_empty or self._queued_rows >= self.flush_rows:  # start the age clock, or flush now
                self._cond.notify_all()
        return future

    # --- writer thread ---
    def _take_batch(self) -> list[_Pending]:
        """Wait for a flush condition and take whole requests up to ``max_batch_rows``."""
        with self._cond:
            while True:
                if self._queue:
                    age = time.monotonic() - self._queue[0].enqueued
                    if self._queued_rows >= self.flush_rows or age >= self.flush_interval_s or self._stopping:
                        break
                    self._cond.wait(self.flush_interval_s - age)
                elif self._stopping:
                    return []
                else:
                    self._cond.wait()
            taken: list[_Pending] = []
            rows = 0
            while self._queue and (not taken or rows + self._queue[0].count <= self.max_batch_rows):
                item = self._queue.popleft()
                taken.append(item)
                rows += item.count
            self._queued_rows -= rows
            self._inflight_rows = rows
            return taken

    def _run(self) -> None:
        while True:
            taken = self._take_batch()
            if not taken:
                return
            try:
                self._write(taken)
            except Exception as exc:  # never let the thread die: fail this batch, keep serving
                log.error("writing a batch of %d requests failed: %s", len(taken), type(exc).__name__)
                self.stats.insert_failures += 1
                for item in taken:
                    if not item.future.done():
                        item.future.set_exception(WriteFailed(f"database write failed: {exc}"))
            else:
                for item in taken:
                    if not item.future.done():
                        item.future.set_result(None)
            finally:
                with self._cond:
                    self._inflight_rows = 0

    def _write(self, taken: list[_Pending]) -> None:
        batch_id = uuid.uuid4().hex
        started = time.perf_counter()
        total = 0
        for table, column_names in TABLE_COLUMNS.items():
            encoded = EncodedRows.join([item.rows[table] for item in taken if table in item.rows])
            if not encoded.rows:
                continue
            settings = {"insert_deduplication_token": f"{batch_id}:{table}"}
            self._insert_with_retries(table, encoded.data, column_names, settings)
            self.stats.rows_written[table] += encoded.rows
            total += encoded.rows
        elapsed = time.perf_counter() - started
        self.stats.batches += 1
        self.stats.last_batch_rows = total
        self.stats.last_insert_seconds = elapsed
        self.stats.insert_seconds_total += elapsed

    def _insert_with_retries(self, table: str, data: bytes, column_names: Sequence[str],
                             settings: dict[str, Any]) -> None:
        attempt = 0
        while True:
            try:
                self._insert(table, data, column_names, settings)
                return
            except Exception as exc:
                if attempt >= self.retries:
                    raise
                attempt += 1
                self.stats.insert_retries += 1
                log.warning("insert into %s failed (%s); retry %d/%d with the same dedup token",
                            table, type(exc).__name__, attempt, self.retries)
                time.sleep(self.retry_backoff_s * (2 ** (attempt - 1)))
