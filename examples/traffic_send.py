"""Sending the demo traffic to a collector: :func:`send` posts one OTLP request, :func:`run` posts at a steady
rate of LLM calls per second, :func:`backfill` posts hours of history; 429/503 are retried after Retry-After."""

from __future__ import annotations

import gzip as gzip_module
import math
import sys
import time
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable

from .traffic_model import TrafficModel
from .traffic_otlp import build_request


def traces_url(url: str) -> str:
    """``http://host:4318`` -> ``http://host:4318/v1/traces`` (a full ``.../v1/traces`` URL is kept)."""
    url = url.rstrip("/")
    return url if url.endswith("/v1/traces") else url + "/v1/traces"


@dataclass
class SendResult:
    """Outcome of one POST."""

    status: int  # HTTP status, 0 when the connection failed
    retry_after_s: float = 0.0
    error: str = ""


def _retry_after(value: str | None, default: float = 1.0) -> float:
    if not value:
        return default
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return default


def send(client, url: str, key: str, body: bytes, *, gzip: bool = False, timeout: float = 60.0) -> SendResult:
    """POST one encoded ``ExportTraceServiceRequest`` (``client`` is an ``httpx.Client``)."""
    headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"}
    if gzip:
        body = gzip_module.compress(body, 1)
        headers["Content-Encoding"] = "gzip"
    try:
        response = client.post(url, content=body, headers=headers, timeout=timeout)
    except Exception as exc:  # connection refused/reset, timeout: the caller counts and retries
        return SendResult(0, 1.0, f"{type(exc).__name__}: {exc}")
    if response.status_code in (429, 503):
        return SendResult(response.status_code, _retry_after(response.headers.get("retry-after")))
    if response.status_code >= 400:
        return SendResult(response.status_code, 0.0, response.text[:200])
    return SendResult(response.status_code)


@dataclass
class RunStats:
    """Counters of :func:`run` (and :func:`backfill`)."""

    calls_generated: int = 0
    calls_acked: int = 0
    requests: int = 0
    acks: int = 0
    rejected_503: int = 0
    failures: int = 0  # connection errors and 4xx/5xx other than 429/503
    dropped_calls: int = 0  # given up after a backlog built up or a 4xx
    last_error: str = ""
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        elapsed = max(1e-9, time.monotonic() - self.started)
        text = (f"[traffic] {elapsed:7.1f}s  calls sent={self.calls_generated} acked={self.calls_acked} "
                f"({self.calls_acked / elapsed:.1f}/s)  requests={self.requests} 503s={self.rejected_503} "
                f"failures={self.failures} dropped={self.dropped_calls}")
        if self.last_error:
            text += f"  last error: {self.last_error}"
        return text


def _post_until_acked(client, url: str, key: str, body: bytes, n_calls: int, stats: RunStats, *,
                      gzip: bool, give_up_at: float, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Post one request, retrying 429/503 (after Retry-After) and connection errors until ``give_up_at``."""
    while True:
        stats.requests += 1
        result = send(client, url, key, body, gzip=gzip)
        if 200 <= result.status < 300:
            stats.acks += 1
            stats.calls_acked += n_calls
            return True
        if result.status in (429, 503):
            stats.rejected_503 += 1
        else:
            stats.failures += 1
            stats.last_error = f"HTTP {result.status} {result.error}".strip()
            if 400 <= result.status < 500:
                stats.dropped_calls += n_calls  # not retryable: bad key, bad payload
                return False
        wait = result.retry_after_s or 1.0
        if time.monotonic() + wait > give_up_at:
            stats.dropped_calls += n_calls
            return False
        sleep(wait)


class _Poster:
    """Posts request bodies from a few threads, so generation never waits for an ack.

    The collector acknowledges a request only after its group commit (up to its flush interval, ~1 s), so one
    request at a time would throttle the sender. At most ``2 * parallel`` posts are pending; :meth:`submit`
    blocks beyond that (backpressure). Counters are merged into ``stats`` on the caller's thread.
    """

    def __init__(self, url: str, key: str, stats: RunStats, *, parallel: int, gzip: bool, give_up_s: float):
        import httpx

        self.url, self.key, self.stats = url, key, stats
        self.parallel, self.gzip, self.give_up_s = parallel, gzip, give_up_s
        self.client = httpx.Client(limits=httpx.Limits(max_connections=parallel))
        self.pool = ThreadPoolExecutor(parallel, thread_name_prefix="traffic-post")
        self.pending: set[Future] = set()

    def submit(self, body: bytes, n_calls: int) -> None:
        self.stats.calls_generated += n_calls
        while len(self.pending) >= 2 * self.parallel:
            self._reap(FIRST_COMPLETED)
        self.pending.add(self.pool.submit(self._post, body, n_calls))

    def poll(self) -> None:
        """Merge the counters of finished posts."""
        if self.pending:
            self._reap(None, timeout=0)

    def close(self, wait_for_pending: bool = True) -> None:
        if wait_for_pending and self.pending:
            self._reap(ALL_COMPLETED)
        self.pool.shutdown(wait=wait_for_pending, cancel_futures=True)
        self.client.close()

    def _post(self, body: bytes, n_calls: int) -> RunStats:
        local = RunStats()
        _post_until_acked(self.client, self.url, self.key, body, n_calls, local, gzip=self.gzip,
                          give_up_at=time.monotonic() + self.give_up_s)
        return local

    def _reap(self, return_when: str | None, timeout: float | None = None) -> None:
        done, self.pending = wait(self.pending, timeout=timeout, return_when=return_when or FIRST_COMPLETED)
        for future in done:
            if future.cancelled():
                continue
            local = future.result()
            st = self.stats
            st.calls_acked += local.calls_acked
            st.requests += local.requests
            st.acks += local.acks
            st.rejected_503 += local.rejected_503
            st.failures += local.failures
            st.dropped_calls += local.dropped_calls
            st.last_error = local.last_error or st.last_error


def run(url: str, key: str, rate_per_s: float = 20.0, duration_s: float | None = None, with_content: bool = False,
        batch_size: int | None = None, progress: bool = True, *, model: TrafficModel | None = None,
        gzip: bool = False, progress_every_s: float = 5.0, max_backlog_s: float = 30.0, parallel: int = 4
        ) -> RunStats:
    """Post about ``rate_per_s`` LLM calls per second (in batches) until ``duration_s`` or Ctrl-C.

    A batch is sent about once a second (``batch_size`` defaults to one second of calls, at most 512, like an
    SDK's batch span processor); after a stall the next batch catches up (up to 512 calls). 503/429 are retried
    after their Retry-After; calls not acknowledged within ``max_backlog_s`` are dropped (and counted) rather
    than piling up while the collector is unavailable.
    """
    if rate_per_s <= 0:
        raise ValueError("rate_per_s must be positive")
    model = model or TrafficModel()
    batch = batch_size or max(1, min(512, math.ceil(rate_per_s)))
    stats = RunStats()
    poster = _Poster(traces_url(url), key, stats, parallel=parallel, gzip=gzip, give_up_s=max_backlog_s)
    start = time.monotonic()
    next_progress = start + progress_every_s
    interrupted = False
    try:
        while duration_s is None or time.monotonic() - start < duration_s:
            now = time.monotonic()
            due = int((now - start) * rate_per_s) - stats.calls_generated
            if due > rate_per_s * max_backlog_s:  # we fell far behind (a long stall): skip ahead
                skipped = due - int(rate_per_s * max_backlog_s)
                stats.calls_generated += skipped
                stats.dropped_calls += skipped
                due -= skipped
            if due >= batch:
                n = min(due, max(batch, 512))
                body = build_request(model, n, with_content=with_content, spread_s=n / rate_per_s)
                poster.submit(body.SerializeToString(), n)
            else:
                time.sleep(min(max((batch - due) / rate_per_s, 0.01), 1.0))
            poster.poll()
            if progress and time.monotonic() >= next_progress:
                print(stats.line(), file=sys.stderr, flush=True)
                next_progress += progress_every_s
    except KeyboardInterrupt:
        interrupted = True
    finally:
        poster.close(wait_for_pending=not interrupted)
    if progress:
        print(stats.line(), file=sys.stderr, flush=True)
    return stats


def backfill(url: str, key: str, hours: float, rate_per_s: float = 0.5, *, model: TrafficModel | None = None,
             with_content: bool = False, batch_size: int = 512, progress: bool = True, gzip: bool = False,
             parallel: int = 8) -> RunStats:
    """Send ``hours`` of history ending now, at a daily-cycle rate averaging ``rate_per_s`` calls/s.

    Dashboards and drift baselines need past data; this posts it as fast as the collector takes it.
    """
    model = model or TrafficModel()
    stats = RunStats()
    poster = _Poster(traces_url(url), key, stats, parallel=parallel, gzip=gzip, give_up_s=120.0)
    end_ns = time.time_ns()
    t_ns = end_ns - int(hours * 3600e9)
    last_print = time.monotonic()
    try:
        while t_ns < end_ns:
            hour = (t_ns // 3_600_000_000_000) % 24
            rate = max(0.01, rate_per_s * (1.0 + 0.6 * math.sin((hour - 9) / 24 * 2 * math.pi)))  # daily cycle
            window_end = min(end_ns, t_ns + int(batch_size / rate * 1e9))
            n = max(1, int((window_end - t_ns) / 1e9 * rate))
            body = build_request(model, n, with_content=with_content, now_ns=window_end,
                                 spread_s=(window_end - t_ns) / 1e9)
            poster.submit(body.SerializeToString(), n)
            t_ns = window_end
            poster.poll()
            if progress and time.monotonic() - last_print > 5:
                print(stats.line(), file=sys.stderr, flush=True)
                last_print = time.monotonic()
    finally:
        poster.close()
    if progress:
        print(stats.line() + "  (backfill done)", file=sys.stderr, flush=True)
    return stats
