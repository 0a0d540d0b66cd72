"""Where :func:`ingest.process_request` runs: worker processes, or one dedicated thread.

Decoding and normalising are pure Python and dominate ingest's CPU time, and part of the database insert holds
the GIL too, so in one process the GIL caps ingest near one core; with workers the collector process only moves
bytes, and every core works (``bench/ingest.py`` measures both). ``ingest_workers = 0`` keeps everything
in-process on a single dedicated thread (never the shared thread pool, where many concurrent normalisations
would fight the writer for the GIL).

Every route that decodes a body runs its decoding here (:meth:`IngestPool.run`): with workers, a parser that holds
the GIL for a whole large body (orjson, upb) holds another process's, so the event loop keeps answering.
Jobs reach the executor through per-project lanes: at most one job per worker runs or is queued in the executor,
and a free lane goes to the next project in turn, so a flooding project's queue never stands in front of
another project's request.

Workers are started with ``spawn``: forking a process that has the embedded ClickHouse engine open is unsafe.
A spawned worker imports only what its jobs name: :mod:`.ingest_worker` (signals, priority, warm-up) and the
pipeline, not this module (asyncio) nor the app. Workers ignore Ctrl-C: :meth:`IngestPool.close` stops them.
A worker that dies breaks the pool; the pool is rebuilt and the affected requests are answered 503 (retry).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import threading
from collections import deque
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Callable, TypeVar

from .ingest import IngestResult, process_request
from .ingest_worker import WORKER_NICENESS, start_worker, warm  # noqa: F401  (WORKER_NICENESS re-exported)

log = logging.getLogger(__name__)
T = TypeVar("T")


class PoolUnavailable(RuntimeError):
    """The worker pool broke while handling a request; the request should be retried."""


class FairLanes:
    """``lanes`` slots handed out round-robin by project (event-loop only): a free slot goes to the next project
    that waits, so every project waits for at most one job of each other project."""

    def __init__(self, lanes: int) -> None:
        self.free = lanes
        self._queues: dict[str, deque[asyncio.Future]] = {}
        self._turn: deque[str] = deque()

    async def acquire(self, project: str) -> None:
        if self.free > 0 and not self._turn:
            self.free -= 1
            return
        future = asyncio.get_running_loop().create_future()
        if project not in self._queues:
            self._queues[project] = deque()
            self._turn.append(project)
        self._queues[project].append(future)
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self.release()  # handed a slot while being cancelled: pass it on
            else:
                self._drop(project, future)
            raise

    def release(self) -> None:
        while self._turn:
            project = self._turn.popleft()
            queue = self._queues[project]
            future = queue.popleft()
            if queue:
                self._turn.append(project)
            else:
                del self._queues[project]
            if not future.done():
                future.set_result(None)
                return
        self.free += 1

    def _drop(self, project: str, future: asyncio.Future) -> None:
        queue = self._queues.get(project)
        if queue is not None and future in queue:
            queue.remove(future)
            if not queue:
                del self._queues[project]
                self._turn.remove(project)


class IngestPool:
    """Runs :func:`process_request` off the event loop and, with ``workers > 0``, off this process."""

    def __init__(self, workers: int, *, max_bytes: int, content_capture: str, retention_days: int = 90,
                 prices_file: str | None = None, hold_calls: bool = True,
                 user_hash_key: bytes | None = None) -> None:
        self.workers = workers
        self._options = {"max_bytes": max_bytes, "content_capture": content_capture,
                         "retention_days": retention_days, "prices_file": prices_file, "hold_calls": hold_calls,
                         "user_hash_key": user_hash_key}
        self._lock = threading.Lock()
        self._executor = self._new_executor()
        self._lanes = FairLanes(max(1, workers))

    def _new_executor(self) -> Executor:
        if self.workers <= 0:
            return ThreadPoolExecutor(1, thread_name_prefix="inferwatch-ingest")
        return ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=start_worker)

    def start(self, timeout: float = 60.0) -> None:
        """Start every worker now and wait until each has imported the pipeline."""
        if self.workers > 0:
            futures = [self._executor.submit(warm) for _ in range(self.workers)]
            for future in futures:
                future.result(timeout)

    async def process(self, body: bytes, content_type: str, content_encoding: str | None, project_id: str,
                      max_bytes: int | None = None) -> IngestResult:
        """Decode, normalise and encode one request (raises ``OtlpDecodeError`` for unreadable bodies), inflating
        at most ``max_bytes`` (default: the pool's limit)."""
        options = dict(self._options)
        if max_bytes is not None:
            options["max_bytes"] = min(max_bytes, options["max_bytes"])
        return await self.run(project_id, partial(process_request, body, content_type, content_encoding,
                                                  project_id, **options))

    async def run(self, project_id: str, job: Callable[[], T]) -> T:
        """``job()`` in the pool, in ``project_id``'s turn; ``job`` must pickle (a module-level function or a
        ``partial`` of one) and raise only exceptions that pickle. Raises :class:`PoolUnavailable` when a worker
        died."""
        await self._lanes.acquire(project_id)
        try:
            executor = self._executor
            try:
                return await asyncio.wrap_future(executor.submit(job))
            except BrokenProcessPool as exc:
                self._replace(executor)
                raise PoolUnavailable("an ingest worker died; retry the request") from exc
        finally:
            self._lanes.release()

    def _replace(self, broken: Executor) -> None:
        with self._lock:
            if self._executor is broken:
                log.error("ingest worker pool broke; starting a new one")
                self._executor = self._new_executor()
        broken.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers (pending jobs finish first)."""
        self._executor.shutdown(wait=True, cancel_futures=False)
        if self.workers > 0:
            log.info("ingest workers stopped (%d)", self.workers)
