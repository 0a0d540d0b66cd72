"""Writing a simulated scenario to a collector through the normal OTLP ingest (``POST /v1/traces``), as fast as
it takes it: :func:`backfill_scenario`.

The calls come from :class:`~examples.sim_calls.CallGenerator` minute by minute, are encoded ``batch_size`` at a
time by :func:`~examples.traffic_otlp.encode_calls` (no prompt/completion content unless ``with_content``) and
posted by ``parallel`` threads (the collector acknowledges after its group commit, so one request at a time
would idle it); 429/503 are retried after Retry-After. A progress line goes to stderr every few seconds.

Throughput on 2 shared cores is ~10-13k calls/s for generating and encoding alone (measured: bench/README.md,
issue 30), so three weeks at 1 call/s (~1.8M calls) take a few minutes; the demo backfills less.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from datetime import UTC, datetime, timedelta

from .sim_calls import CallGenerator, expected_calls
from .sim_incidents import Planted, incident_library
from .sim_scenario import Scenario, midnight_days_ago
from .traffic_model import LlmCall
from .traffic_otlp import encode_calls
from .traffic_send import RunStats, _Poster, traces_url


CHUNK = timedelta(hours=1)  # the unit of work: one hour of simulated calls, encoded into request bodies


def encode_span(scenario: Scenario, planted: Sequence[Planted], start: datetime, end: datetime, *,
                batch_size: int = 1000, with_content: bool = False) -> list[tuple[bytes, int]]:
    """The request bodies (serialized ``ExportTraceServiceRequest``, number of calls) for the calls starting in
    ``[start, end)``; pure and reproducible (the same bodies' calls for the same arguments, whatever the split)."""
    generator = CallGenerator(scenario, planted, with_content=with_content)
    out: list[tuple[bytes, int]] = []
    buffer: list[LlmCall] = []
    for minute in generator.minutes(start, end):
        buffer += generator.minute(minute)
        if len(buffer) >= batch_size:
            out.append((encode_calls(generator.model, buffer, with_content=with_content).SerializeToString(),
                        len(buffer)))
            buffer = []
    if buffer:
        out.append((encode_calls(generator.model, buffer, with_content=with_content).SerializeToString(),
                    len(buffer)))
    return out


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers; Ctrl-C prints no traceback


def _chunks(begin: datetime, finish: datetime) -> Iterator[tuple[datetime, datetime]]:
    t = begin
    while t < finish:
        yield t, min(finish, t + CHUNK)
        t += CHUNK


def backfill_scenario(url: str, key: str, scenario: Scenario, planted: Sequence[Planted] = (), *,
                      start: datetime | None = None, end: datetime | None = None, batch_size: int = 1000,
                      parallel: int = 8, workers: int = 1, with_content: bool = False, gzip: bool = False,
                      progress: bool = True, label: str = "sim", progress_every_s: float = 5.0) -> RunStats:
    """Post the calls of ``scenario`` (with ``planted`` applied) between ``start`` and ``end`` (default: all of
    it) to the collector at ``url`` with ingest ``key``; returns the counters (``calls_acked``,
    ``dropped_calls``, ``failures``). Requests that the collector refuses with a 4xx are counted, not retried.

    ``parallel`` requests are in flight at a time. ``workers`` > 1 generates and encodes hours of calls in that
    many processes (generation is the bottleneck on one core: ~13k calls/s); the bodies are posted in time order.
    The processes are spawned, so a script calling this with ``workers`` > 1 needs the usual multiprocessing
    ``if __name__ == "__main__":`` guard (a spawned process imports the main module).
    """
    stats = RunStats()
    poster = _Poster(traces_url(url), key, stats, parallel=parallel, gzip=gzip, give_up_s=120.0)
    begin, finish = start or scenario.start, end or scenario.end
    expected = max(1.0, expected_calls(scenario) * (finish - begin) / (scenario.end - scenario.start))
    days = (finish - begin).total_seconds() / 86400
    next_print = time.monotonic() + progress_every_s
    interrupted = False
    pool = None
    try:
        chunks = _chunks(begin, finish)
        args = dict(batch_size=batch_size, with_content=with_content)
        if workers > 1:
            pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_ignore_sigint)
            pending: deque[tuple[datetime, Future]] = deque()

            def results() -> Iterator[tuple[datetime, list[tuple[bytes, int]]]]:
                for a, b in chunks:
                    pending.append((a, pool.submit(encode_span, scenario, planted, a, b, **args)))
                    if len(pending) >= 2 * workers:
                        at, future = pending.popleft()
                        yield at, future.result()
                while pending:
                    at, future = pending.popleft()
                    yield at, future.result()
            produced = results()
        else:
            produced = ((a, encode_span(scenario, planted, a, b, **args)) for a, b in chunks)
        for at, bodies in produced:
            for body, n in bodies:
                poster.submit(body, n)
            poster.poll()
            if progress and time.monotonic() >= next_print:
                print(f"[{label}] {(at - begin) / (finish - begin):4.0%} of {days:.1f} days "
                      f"(~{expected:,.0f} calls)  " + stats.line().removeprefix("[traffic] "),
                      file=sys.stderr, flush=True)
                next_print += progress_every_s
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=not interrupted, cancel_futures=True)
        poster.close(wait_for_pending=not interrupted)
    if progress:
        print(f"[{label}] done: " + stats.line().removeprefix("[traffic] "), file=sys.stderr, flush=True)
    return stats


def backfill_history(url: str, key: str, *, days: float = 21, mean_rate: float = 0.5, seed: int = 1,
                     incidents: bool = True, workers: int = 1, parallel: int = 8, with_content: bool = False,
                     progress: bool = True, now: datetime | None = None, n_users: int = 400
                     ) -> tuple[Scenario, tuple[Planted, ...]]:
    """``days`` of realistic history ending ``now`` (default: the current time), averaging ``mean_rate`` calls/s,
    with issue 30's incident library planted in the last whole week before today (when ``incidents``); the
    demo's backfill; ``n_users`` distinct users. Returns the scenario and the planted incidents (their ground truth)."""
    now = now or datetime.now(UTC)
    scenario = Scenario(now - timedelta(days=days), days, mean_rate, seed=seed, n_users=n_users)
    planted: tuple[Planted, ...] = ()
    if incidents and days >= 8:
        week = midnight_days_ago(7, now)
        planted = tuple(p for p in incident_library(week) if p.start >= scenario.start)
    stats = backfill_scenario(url, key, scenario, planted, workers=workers, parallel=parallel,
                              with_content=with_content, progress=progress, label="history")
    if stats.dropped_calls or stats.failures:
        raise RuntimeError(f"the history backfill lost {stats.dropped_calls} calls: {stats.last_error}")
    return scenario, planted
