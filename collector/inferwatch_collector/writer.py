"""Adaptive group-commit writer: many requests' rows, one ClickHouse insert per table, acknowledged after commit.

Why: an insert has a fixed cost of tens of milliseconds whatever its size (chDB ignores ``async_insert``), and
every insert makes a new part that ClickHouse must merge, so inserting per request caps ingest at a few thousand
spans/s and floods the merges. Requests hand their rows to this writer and wait; a single writer thread inserts
as soon as it is free, taking every request that arrived meanwhile (up to ``max_batch_rows``) as one batch, but
starts two inserts at least ``min_insert_interval_s`` apart. A request being decoded can be announced
(:meth:`announce`): while announced requests are on their way and fewer than ``flush_rows`` rows wait, the writer
waits for them, at most ``flush_interval_s`` after the oldest waiting request arrived, instead of inserting a small
batch and leaving them for the next insert. So a lone request is written at once (its acknowledgement waits for
its own insert, not for a timer), concurrent requests share one insert, under load the batches grow with the
insert time, and each table gets at most ``1 / min_insert_interval_s`` inserts per second whatever the load.

Guarantees:
- a request is acknowledged only after its rows are durable: in ClickHouse, or, with a spool attached
  (:mod:`spool`), in an fsync'd spool segment after the insert failed every retry. While any batch is spooled,
  new batches are spooled behind it (order kept), collected like a classic group commit (``flush_rows`` rows or
  ``flush_interval_s`` of waiting: an outage leaves few, large segments), and the writer thread replays the spool
  oldest first, backing off while the database keeps failing; a full spool makes the batch fail with
  :class:`QueueFull` (503);
- each table insert of a batch carries ``insert_deduplication_token = <batch id>:<table>``, so retrying a batch
  after an ambiguous failure (insert done, reply lost) lands it once, rollups included;
- inserts, replayed ones included, start at least ``min_insert_interval_s`` apart (except while stopping);
- memory is bounded: beyond ``max_queue_rows`` pending rows, :meth:`submit` raises :class:`QueueFull` and the
  route answers 503 with Retry-After (OTLP exporters retry) instead of buffering without limit.

``stop(drain=False)`` stops without writing what is queued (those requests fail, unacknowledged) and without
replaying: what a crash leaves behind, used by the fault-tolerance tests.
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

from .insert_stats import InsertStats
from .native import EncodedRows
from .rows import TABLE_COLUMNS
from .spool import Spool, SpoolFull, SpoolPart, dedup_token

log = logging.getLogger(__name__)

Batch = dict[str, EncodedRows]  # table -> Native blocks of one request
InsertFn = Callable[[str, bytes, Sequence[str], dict[str, Any]], None]  # (table, native, columns, settings)
SPOOL_FULL_RETRY_AFTER_S = 5.0  # a full spool means a long outage: exporters need not knock every second


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
    inserts: InsertStats = field(default_factory=InsertStats)  # per table: count, rows and bytes per insert


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
        min_insert_interval_s: float = 0.1,
        retries: int = 3,
        retry_backoff_s: float = 0.2,
    ) -> None:
        self._insert = insert
        self.flush_rows = flush_rows
        self.flush_interval_s = flush_interval_s
        self.max_batch_rows = max_batch_rows
        self.max_queue_rows = max_queue_rows
        self.min_insert_interval_s = min_insert_interval_s
        self.retries = retries
        self.retry_backoff_s = retry_backoff_s
        self.stats = WriterStats()
        self._queue: deque[_Pending] = deque()
        self._queued_rows = 0  # rows waiting (not yet taken by the thread)
        self._inflight_rows = 0  # rows in the insert being made now
        self._announced = 0  # requests being decoded whose rows will be submitted (see announce)
        self._cond = threading.Condition()
        self._stopping = False
        self._halt = False  # stop(drain=False): leave the queue and the spool as a crash would
        self._thread: threading.Thread | None = None
        self.spool: Spool | None = None
        self.replay_interval_s = 1.0
        self.max_replay_backoff_s = 30.0
        self.replay_budget_s = 0.5  # replay at most this long between two batches, so new ones keep moving
        self._next_replay = 0.0
        self._replay_backoff = 0.0
        self._next_insert_at = 0.0  # monotonic: the next insert starts no earlier (min_insert_interval_s)

    def attach_spool(self, spool: Spool | None, *, replay_interval_s: float = 1.0,
                     max_replay_backoff_s: float = 30.0) -> None:
        """Spool batches whose insert failed instead of failing their requests (before :meth:`start`).

        The writer owns the spool from now on and closes it in :meth:`stop`.
        """
        self.spool = spool
        self.replay_interval_s = replay_interval_s
        self.max_replay_backoff_s = max(max_replay_backoff_s, replay_interval_s)
        self._next_replay = 0.0  # segments left by an earlier run are replayed at once

    @property
    def pending_rows(self) -> int:
        """Rows accepted but not yet committed (queued + in flight)."""
        return self._queued_rows + self._inflight_rows

    def metric_lines(self) -> list[str]:
        """Prometheus lines of the spool (none without one), for /metrics."""
        return self.spool.metric_lines() if self.spool is not None else []

    def insert_metric_lines(self) -> list[str]:
        """Prometheus lines of the inserts per table (count, rows and bytes each) and their spacing."""
        return [
            "# TYPE inferwatch_min_insert_interval_seconds gauge",
            f"inferwatch_min_insert_interval_seconds {self.min_insert_interval_s:g}",
            *self.stats.inserts.metric_lines(),
        ]

    @property
    def alive(self) -> bool:
        """Whether the writer thread is running."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the writer thread (idempotent)."""
        if self.alive:
            return
        self._stopping = False
        self._halt = False
        self._thread = threading.Thread(target=self._run, name="inferwatch-writer", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0, *, drain: bool = True) -> None:
        """Flush what is queued, then stop; requests still queued after ``timeout`` fail.

        With a spool, batches that cannot be inserted are spooled, and spooled batches are replayed for at most
        a few seconds; the rest stays on disk for the next start. ``drain=False`` stops after the operation in
        progress, writing and replaying nothing more (queued requests fail, unacknowledged).
        """
        with self._cond:
            self._stopping = True
            self._halt = not drain
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.spool is not None and not self.alive:
            self.spool.close()
        with self._cond:
            leftovers = list(self._queue)
            self._queue.clear()
            self._queued_rows = 0
        for item in leftovers:
            if not item.future.done():
                item.future.set_exception(WriteFailed("collector shut down before the batch was written"))

    def announce(self) -> None:
        """A request's rows are on their way (it is being decoded): batch them with what waits now.

        Every announcement must end with ``submit(..., announced=True)`` or :meth:`withdraw`; one left open
        only delays batches, by at most ``flush_interval_s`` each."""
        with self._cond:
            self._announced += 1

    def withdraw(self) -> None:
        """An announced request will not be submitted (it failed or was shed)."""
        with self._cond:
            self._announced = max(0, self._announced - 1)
            if self._announced == 0:
                self._cond.notify_all()

    def submit(self, rows: Batch, *, announced: bool = False) -> Future:
        """Queue one request's rows; the future resolves when they are committed.

        ``announced``: this ends the request's :meth:`announce` (whatever happens here). An empty batch resolves
        at once. Raises :class:`QueueFull` when accepting it would exceed the bound (a single request larger
        than the bound is still accepted when nothing else is pending, so a legal maximum-size request can always
        make progress).
        """
        count = sum(part.rows for part in rows.values())
        future: Future = Future()
        with self._cond:
            if announced:  # in the same critical section as the append: the writer sees both or neither
                self._announced = max(0, self._announced - 1)
                self._cond.notify_all()
            if count:
                self._enqueue(rows, count, future)
        if not count:
            future.set_result(None)
        return future

    def _enqueue(self, rows: Batch, count: int, future: Future) -> None:
        """Append one request to the queue, or raise why it cannot be (the lock is held)."""
        if self._stopping or not self.alive:
            raise WriteFailed("writer is not running")
        spool = self.spool
        if spool is not None and spool.pending and spool.full:  # spooling, and no room: shed now
            spool.stats.rejected_full += 1
            self.stats.rejected_queue_full += 1
            raise QueueFull(retry_after_s=SPOOL_FULL_RETRY_AFTER_S)
        if self.pending_rows + count > self.max_queue_rows and self.pending_rows > 0:
            self.stats.rejected_queue_full += 1
            # a full queue drains in roughly (pending / recent throughput); one second is the floor
            raise QueueFull(retry_after_s=max(1.0, self.flush_interval_s))
        self._queue.append(_Pending(rows, count, time.monotonic(), future))
        self._queued_rows += count
        self._cond.notify_all()  # the writer re-checks whether a batch is due

    # --- writer thread ---
    def _replay_wait(self) -> float | None:
        """Seconds until the next replay is due; ``None`` when nothing is spooled."""
        if self.spool is None or not self.spool.pending:
            return None
        return max(0.0, self._next_replay - time.monotonic())

    def _batch_wait(self) -> float:
        """Seconds until the queued requests are taken as a batch (0: now); the lock is held, the queue is not
        empty. Live: once the last insert is ``min_insert_interval_s`` old and no announced request is still
        on its way, or ``flush_rows`` rows wait, or the oldest has waited ``flush_interval_s``. Spooling: once
        ``flush_rows`` rows wait or the oldest has waited ``flush_interval_s`` (a spooled batch costs a replayed
        insert later, so fewer and larger ones let the replay catch up). Stopping: at once."""
        if self._stopping:
            return 0.0
        now = time.monotonic()
        spacing = max(0.0, self._next_insert_at - now)
        spooling = self.spool is not None and self.spool.pending
        if self._queued_rows >= self.flush_rows or not (spooling or self._announced):
            return spacing
        return max(spacing, self._queue[0].enqueued + self.flush_interval_s - now)

    def _take_batch(self) -> list[_Pending] | None:
        """Wait until a batch is due and take whole requests up to ``max_batch_rows``.

        ``[]`` when a spool replay is due before a batch is ready; ``None`` when the thread should exit.
        """
        with self._cond:
            while True:
                if self._halt:
                    return None
                due = self._replay_wait()
                if self._queue:
                    wait = self._batch_wait()
                    if wait <= 0:
                        break
                    if due is not None and due <= 0:
                        return []
                    self._cond.wait(wait if due is None else min(wait, due))
                elif self._stopping:
                    return None
                elif due is not None:
                    if due <= 0:
                        return []
                    self._cond.wait(due)
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

    def _insert_slot(self, deadline: float | None = None) -> bool:
        """Wait until the next insert may start (``min_insert_interval_s`` after the last one began) and claim it.

        False, without claiming, when the writer halts first or the slot comes after ``deadline``."""
        with self._cond:
            while not self._stopping:
                wait = self._next_insert_at - time.monotonic()
                if wait <= 0:
                    break
                if self._halt or (deadline is not None and time.monotonic() + wait > deadline):
                    return False
                self._cond.wait(wait)
            self._next_insert_at = time.monotonic() + self.min_insert_interval_s
            return not self._halt

    def _run(self) -> None:
        while True:
            taken = self._take_batch()
            if taken is None:
                break
            if taken:
                self._commit(taken)
            if self._replay_wait() == 0.0:
                self._replay(self.replay_budget_s)
        if not self._halt and self.spool is not None and self.spool.pending:
            self._replay(5.0)  # a clean stop: one last bounded attempt; the rest waits on disk

    def _commit(self, taken: list[_Pending]) -> None:
        try:
            self._write(taken)
        except Exception as exc:  # never let the thread die: fail this batch, keep serving
            if isinstance(exc, QueueFull):  # the spool is full: 503, the exporter retries
                failure: Exception = exc
            else:
                log.error("writing a batch of %d requests failed: %s", len(taken), type(exc).__name__)
                self.stats.insert_failures += 1
                failure = WriteFailed(f"database write failed: {exc}")
            for item in taken:
                if not item.future.done():
                    item.future.set_exception(failure)
        else:
            for item in taken:
                if not item.future.done():
                    item.future.set_result(None)
        finally:
            with self._cond:
                self._inflight_rows = 0

    def _write(self, taken: list[_Pending]) -> None:
        """Insert the batch (one insert per table), or spool it: committed or durable when this returns."""
        batch_id = uuid.uuid4().hex
        started = time.perf_counter()
        parts: list[SpoolPart] = []
        for table, column_names in TABLE_COLUMNS.items():
            encoded = EncodedRows.join([item.rows[table] for item in taken if table in item.rows])
            if encoded.rows:
                parts.append(SpoolPart(table, tuple(column_names), encoded.data, encoded.rows))
        if self.spool is not None and self.spool.pending:  # older batches wait on disk: keep the order
            self._spool(batch_id, parts)
            return
        total = 0
        self._insert_slot()  # due already (see _batch_wait): this claims it
        try:
            for part in parts:
                settings = {"insert_deduplication_token": dedup_token(batch_id, part.table)}
                self._insert_with_retries(part.table, part.data, part.columns, settings)
                self.stats.rows_written[part.table] += part.rows
                self.stats.inserts.record(part.table, part.rows, len(part.data))
                total += part.rows
        except Exception as exc:
            if self.spool is None:
                raise
            # Every part is spooled, also those inserted already: their replay carries the same token and
            # lands nothing (as does a part whose insert landed but whose reply was lost).
            log.warning("insert failed after %d retries (%s); spooling the batch", self.retries,
                        type(exc).__name__)
            self.stats.insert_failures += 1
            self._spool(batch_id, parts)
            self._next_replay = time.monotonic() + self.replay_interval_s
            self._replay_backoff = self.replay_interval_s
            return
        elapsed = time.perf_counter() - started
        self.stats.batches += 1
        self.stats.last_batch_rows = total
        self.stats.last_insert_seconds = elapsed
        self.stats.insert_seconds_total += elapsed

    def _spool(self, batch_id: str, parts: list[SpoolPart]) -> None:
        assert self.spool is not None
        try:
            self.spool.append(batch_id, parts)
        except SpoolFull as exc:
            self.stats.rejected_queue_full += 1
            raise QueueFull(retry_after_s=SPOOL_FULL_RETRY_AFTER_S) from exc

    def _replay(self, budget_s: float) -> None:
        """Replay spooled batches oldest first for up to ``budget_s``; back off when the database still fails."""
        spool = self.spool
        if spool is None:
            return
        deadline = time.monotonic() + budget_s
        while time.monotonic() < deadline and not self._halt:
            record = spool.peek()
            if record is None:
                self._replay_backoff = 0.0
                return
            if not self._insert_slot(deadline):
                break
            started = time.perf_counter()
            try:
                for part in record.parts:
                    self._insert(part.table, part.data, part.columns,
                                 {"insert_deduplication_token": record.token(part.table)})
            except Exception as exc:
                spool.stats.replay_failures += 1
                self._replay_backoff = min(self.max_replay_backoff_s,
                                           max(self.replay_interval_s, self._replay_backoff * 2))
                self._next_replay = time.monotonic() + self._replay_backoff
                log.warning("replaying spooled batch %d failed (%s); %d batch(es) wait, next try in %.1f s",
                            record.seq, type(exc).__name__, spool.pending, self._replay_backoff)
                return
            spool.remove(record)
            for part in record.parts:
                self.stats.rows_written[part.table] += part.rows
                self.stats.inserts.record(part.table, part.rows, len(part.data))
            elapsed = time.perf_counter() - started
            self.stats.batches += 1
            self.stats.last_batch_rows = record.rows
            self.stats.last_insert_seconds = elapsed
            self.stats.insert_seconds_total += elapsed
            self._replay_backoff = 0.0
        self._next_replay = time.monotonic()  # budget used up: continue after the next batch

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
