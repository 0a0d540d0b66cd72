"""Where :func:`ingest.process_request` runs: worker processes, or one dedicated thread.

Decoding and normalising are pure Python and dominate ingest's CPU time, and part of the database insert holds
the GIL too, so in one process the GIL caps ingest near one core; with workers the collector process only moves
bytes, and every core works (``bench/ingest.py`` measures both). ``ingest_workers = 0`` keeps everything
in-process on a single dedicated thread (never the shared thread pool, where many concurrent normalisations
would fight the writer for the GIL).

Workers are started with ``spawn``: forking a process that has the embedded ClickHouse engine open is unsafe.
A worker that dies breaks the pool; the pool is rebuilt and the affected requests are answered 503 (retry).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import threading
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial

from .ingest import IngestResult, process_request

log = logging.getLogger(__name__)


class PoolUnavailable(RuntimeError):
    """The worker pool broke while handling a request; the request should be retried."""


def _warm() -> int:
    """Run once per worker at start so the first real request does not pay for imports."""
    import os

    from . import normalize  # noqa: F401  (import cost is the point)
    from .cost import ingest_pricer

    ingest_pricer.pricer_for(None)  # parse the bundled price table now, not on the first request

    return os.getpid()


class ByteBudget:
    """Admission control by request bytes: bounds the memory held by requests being processed or written.

    Counting bytes rather than requests keeps the bound meaningful whatever the batch size of the clients. A
    request larger than the whole budget is still admitted when nothing else is in flight.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def try_acquire(self, size: int) -> bool:
        with self._lock:
            if self.used and self.used + size > self.limit:
                return False
            self.used += size
            return True

    def release(self, size: int) -> None:
        with self._lock:
            self.used -= size


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

    def _new_executor(self) -> Executor:
        if self.workers <= 0:
            return ThreadPoolExecutor(1, thread_name_prefix="inferwatch-ingest")
        return ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))

    def start(self, timeout: float = 60.0) -> None:
        """Start every worker now and wait until each has imported the pipeline."""
        if self.workers > 0:
            futures = [self._executor.submit(_warm) for _ in range(self.workers)]
            for future in futures:
                future.result(timeout)

    async def process(self, body: bytes, content_type: str, content_encoding: str | None, project_id: str
                      ) -> IngestResult:
        """Decode, normalise and encode one request (raises ``OtlpDecodeError`` for unreadable bodies)."""
        job = partial(process_request, body, content_type, content_encoding, project_id, **self._options)
        executor = self._executor
        try:
            return await asyncio.wrap_future(executor.submit(job))
        except BrokenProcessPool as exc:
            self._replace(executor)
            raise PoolUnavailable("an ingest worker died; retry the request") from exc

    def _replace(self, broken: Executor) -> None:
        with self._lock:
            if self._executor is broken:
                log.error("ingest worker pool broke; starting a new one")
                self._executor = self._new_executor()
        broken.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers (pending jobs finish first)."""
        self._executor.shutdown(wait=True, cancel_futures=False)
