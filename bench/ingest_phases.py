"""The ingest bench's original phases: scenario reps at a fixed concurrency (acked and queryable spans/s),
overload (RSS bounded, 503s returned) and the raw chDB insert ceiling (``Store.insert_columns`` in this
process, large batches, a migrated store so the materialized views run as in the collector)."""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import httpx
import psutil

from ingest_clients import send_all, summary_calls
from ingest_collector import Collector
from ingest_payloads import PROJECT, unique_suffix
from ingest_report import MiB, fmt_rate, log


@dataclass
class RepResult:
    spans: int
    acked_per_s: float
    queryable_per_s: float  # 0 when the rows never became queryable
    ack_s: float
    queryable_s: float
    rejected_503: int
    failures: int
    collector_cores: float
    bench_cores: float
    queryable_calls: int = 0  # of ``spans``, how many were queryable when the poll ended

    @property
    def ack_to_queryable_s(self) -> float:
        """From the last 200 to every row queryable (inf when they never were)."""
        return self.queryable_s - self.ack_s


class Sampler:
    """The collector's RSS every 0.5 s (and, with ``held``, its held-calls gauge every ~1 s) on a thread."""

    def __init__(self, collector: Collector, held: bool = False) -> None:
        self.collector = collector
        self.held = held
        self.rss: list[tuple[float, int]] = []
        self.held_calls: list[tuple[float, float]] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self.start = 0.0

    def _run(self) -> None:
        n = 0
        while not self._done.is_set():
            self.rss.append((time.perf_counter(), self.collector.rss()))
            if self.held and n % 2 == 0:
                value = self.collector.metrics().get("inferwatch_pairing_held_calls")
                if value is not None:
                    self.held_calls.append((time.perf_counter(), value))
            n += 1
            self._done.wait(0.5)

    def __enter__(self) -> "Sampler":
        self.start = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    @property
    def peak(self) -> int:
        return max((rss for _, rss in self.rss), default=0)

    def held_timeline(self, every_s: float = 5.0) -> str:
        """``t:held`` pairs about every ``every_s`` seconds, t from the sampler's start."""
        out, next_t = [], 0.0
        for t, value in self.held_calls:
            if t - self.start >= next_t:
                out.append(f"{t - self.start:.0f}s:{value:,.0f}")
                next_t = t - self.start + every_s
        return "  ".join(out)


def run_rep(collector: Collector, payloads: Sequence[bytes], calls_per_request: int,
            clients: Sequence[httpx.Client], window: tuple[str, str], queryable_timeout_s: float = 120.0
            ) -> RepResult:
    poll = httpx.Client(timeout=30, verify=False, trust_env=False)
    try:
        baseline = summary_calls(poll, collector.base, collector.key, window)
        target = baseline + calls_per_request * len(payloads)
        me = psutil.Process()
        cpu_bench0 = sum(me.cpu_times()[:2])
        cpu_coll0 = collector.cpu_seconds()
        wall0 = time.perf_counter()
        stats = send_all(collector.base, collector.key, payloads, clients)
        # a 200 means committed, so nothing can be queryable before the last ack: poll from then on, tightly
        queryable_at = 0.0
        deadline = time.perf_counter() + queryable_timeout_s
        seen = baseline
        while time.perf_counter() < deadline:
            seen = summary_calls(poll, collector.base, collector.key, window)
            if seen >= target:
                queryable_at = time.perf_counter()
                break
            time.sleep(0.05)
        wall = time.perf_counter() - wall0
        cpu_bench = sum(me.cpu_times()[:2]) - cpu_bench0
        cpu_coll = collector.cpu_seconds() - cpu_coll0
    finally:
        poll.close()
    spans = calls_per_request * len(payloads)
    ack_s = (stats.last_ack - stats.first_send) if stats.last_ack else float("inf")
    q_s = (queryable_at - stats.first_send) if queryable_at else float("inf")
    if not queryable_at:
        log(f"    ! only {seen - baseline} of {spans} calls queryable after {queryable_timeout_s:.0f}s")
    if stats.failures:
        log(f"    ! {stats.failures} failed requests; last: {stats.last_failure}")
    return RepResult(
        spans=spans,
        acked_per_s=(stats.acks * calls_per_request) / ack_s if stats.last_ack else 0.0,
        queryable_per_s=spans / q_s if queryable_at else 0.0,
        ack_s=ack_s, queryable_s=q_s, rejected_503=stats.rejected_503, failures=stats.failures,
        collector_cores=cpu_coll / wall, bench_cores=cpu_bench / wall, queryable_calls=seen - baseline,
    )


@dataclass
class OverloadResult:
    seconds: float
    rss_idle: int
    rss_peak: int
    rss_peak_first_half: int
    rss_peak_second_half: int
    rss_end_loaded: int
    rss_after_drain: int
    rejected_503: int
    acks: int
    failures: int
    acked_spans_per_s: float
    queue_rows_limit: int

    @property
    def bounded(self) -> bool:
        """No sustained growth: the second half's peak stays within 20% (or 64 MiB) of the first half's."""
        limit = max(self.rss_peak_first_half * 1.2, self.rss_peak_first_half + 64 * MiB)
        return self.rss_peak_second_half <= limit


def run_overload(collector: Collector, pool: Sequence[bytes], calls_per_request: int,
                 clients: Sequence[httpx.Client],
                 seconds: float, queue_rows: int) -> OverloadResult:
    rss_idle = collector.rss()
    samples: list[tuple[float, int]] = []
    done = threading.Event()

    def sampler() -> None:
        while not done.is_set():
            samples.append((time.perf_counter(), collector.rss()))
            done.wait(0.5)

    def body_for(i: int) -> bytes:
        # a pool of bodies, each send made distinct (else the collector's retry dedup would answer from memory)
        return pool[i % len(pool)] + unique_suffix(i)

    sampling = threading.Thread(target=sampler, name="rss-sampler", daemon=True)
    sampling.start()
    start = time.perf_counter()
    stats = send_all(collector.base, collector.key, pool, clients, honour_retry_after=False,
                     stop_at=start + seconds, body_for=body_for)
    end_loaded = collector.rss()
    loaded_s = time.perf_counter() - start
    time.sleep(3.0)  # let the writer drain what it accepted
    done.set()
    sampling.join()
    after = collector.rss()
    loaded = [rss for t, rss in samples if t <= start + loaded_s] or [rss_idle]
    half = max(1, len(loaded) // 2)
    return OverloadResult(
        seconds=loaded_s, rss_idle=rss_idle, rss_peak=max([end_loaded, *(rss for _, rss in samples)]),
        rss_peak_first_half=max(loaded[:half]), rss_peak_second_half=max([*loaded[half:], end_loaded]),
        rss_end_loaded=end_loaded, rss_after_drain=after, rejected_503=stats.rejected_503, acks=stats.acks,
        failures=stats.failures, acked_spans_per_s=stats.acks * calls_per_request / loaded_s,
        queue_rows_limit=queue_rows,
    )


@dataclass
class CeilingResult:
    rows: int
    batch_rows: int
    rows_per_s: float
    normalize_spans_per_s: float
    normalize_content_spans_per_s: float


def run_ceiling(workdir: Path, payloads: Sequence[bytes], content_payloads: Sequence[bytes], rows_wanted: int,
                batch_rows: int) -> CeilingResult:
    """chDB insert ceiling in this process: normalise, pre-build columns, then time only the inserts."""
    from inferwatch_collector.migrations import migrate, target_for
    from inferwatch_collector.normalize import normalize
    from inferwatch_collector.otlp_decode import decode_traces_fast
    from inferwatch_collector.rows import LLM_CALL_COLUMNS
    from inferwatch_collector.settings import Settings
    from inferwatch_collector.store import Store

    rows: list = []
    spans = 0
    t = time.perf_counter()
    for body in itertools.cycle(payloads):
        # The collector's own path: the fast decoder feeding normalize() (timed together).
        request = decode_traces_fast(body, "application/x-protobuf", None, len(body) + 1)
        batch = normalize(request, PROJECT, content_capture="redacted")
        rows.extend(batch.llm_calls)
        spans += len(batch.llm_calls) + len(batch.spans) + batch.rejected
        if len(rows) >= rows_wanted:
            break
    normalize_rate = spans / (time.perf_counter() - t)
    content_spans = 0
    t = time.perf_counter()
    for body in content_payloads[:4]:
        request = decode_traces_fast(body, "application/x-protobuf", None, len(body) + 1)
        batch = normalize(request, PROJECT, content_capture="redacted")
        content_spans += len(batch.llm_calls) + len(batch.spans) + batch.rejected
    normalize_content_rate = content_spans / (time.perf_counter() - t) if content_spans else 0.0

    rows = rows[:rows_wanted]
    batches = [[list(col) for col in zip(*rows[i:i + batch_rows])] for i in range(0, len(rows), batch_rows)]
    settings = Settings(data_dir=workdir / "ceiling", clickhouse_url="")
    store = Store.open(settings)
    try:
        migrate(store, target_for(store.settings, store))
        warm = [col[:100] for col in batches[0]]  # first insert pays one-off costs; not timed
        store.insert_columns("llm_calls", warm, LLM_CALL_COLUMNS, {"insert_deduplication_token": "warm"})
        t = time.perf_counter()
        for columns in batches:
            store.insert_columns("llm_calls", columns, LLM_CALL_COLUMNS,
                                 {"insert_deduplication_token": uuid.uuid4().hex})
        elapsed = time.perf_counter() - t
    finally:
        store.close()
    return CeilingResult(rows=len(rows), batch_rows=batch_rows, rows_per_s=len(rows) / elapsed,
                         normalize_spans_per_s=normalize_rate,
                         normalize_content_spans_per_s=normalize_content_rate)



def run_reps(title: str, collector: Collector, runs: Sequence[Sequence[bytes]], calls: int,
             clients: Sequence[httpx.Client], window: tuple[str, str], out: list[RepResult],
             queryable_timeout_s: float = 120.0) -> None:
    """One :func:`run_rep` per run, logged; stops after a rep whose rows never all became queryable (the
    collector is then still busy with them, so later reps would measure the backlog)."""
    for r, payloads in enumerate(runs):
        res = run_rep(collector, payloads, calls, clients, window, queryable_timeout_s)
        out.append(res)
        log(f"  {title} rep {r + 1}/{len(runs)}: {res.spans:,} spans  acked {fmt_rate(res.acked_per_s)}"
            f"  queryable {fmt_rate(res.queryable_per_s)}  (last ack {res.ack_s:.2f}s, queryable "
            f"{res.queryable_s:.2f}s)  503s {res.rejected_503}  CPU: collector "
            f"{res.collector_cores:.2f} cores, bench {res.bench_cores:.2f}")
        if not res.queryable_per_s and r + 1 < len(runs):
            log(f"  {title}: skipping the remaining {len(runs) - r - 1} reps")
            return
