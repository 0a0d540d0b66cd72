"""Exporter-shaped ingest scenarios: the collector as real OTel exporters load it (issue 29).

An OTel SDK's BatchSpanProcessor has one export request in flight per process, so a fleet of N app processes is
N closed-loop senders, each with exactly one 512-span request in flight (:func:`run_closed`). A quiet app is an
open-loop sender at a fixed offered rate (:func:`run_paced`): what matters there is how long each export waits
for its acknowledgement, since an exporter's queue fills while it waits.

Each run reports queryable spans/s (spans / first send -> every row counted by ``GET /api/v1/calls/summary``),
acknowledgement latency percentiles (first attempt -> ``200``, retries included), the collector's CPU (cores, its
whole process tree: ingest workers included) and its RSS peak (sampled every 0.5 s).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Sequence

import httpx
import psutil

from ingest_clients import SendStats, make_clients, send_all, send_paced, summary_calls, wait_queryable
from ingest_collector import Collector
from ingest_payloads import exporter_payloads, llm_calls_per_request, rescoped
from ingest_phases import Sampler
from ingest_report import MiB, fmt_mmm, fmt_ms, log, median_min_max, percentile


@dataclass(frozen=True)
class ExporterScenario:
    """One exporter-shaped load: ``in_flight`` closed-loop senders (0: open loop, one request every
    ``interval_s``), ``requests`` bodies of ``spans_per_request`` spans per run."""

    name: str
    in_flight: int
    content: bool
    requests: int
    spans_per_request: int
    interval_s: float = 0.0

    @property
    def paced(self) -> bool:
        return self.in_flight == 0

    @property
    def offered_spans_per_s(self) -> float:
        return self.spans_per_request / self.interval_s if self.paced else 0.0


@dataclass
class ExporterRun:
    spans: int
    queryable_per_s: float  # 0 when the rows never all became queryable
    acked_per_s: float
    latencies: list[float]
    collector_cores: float
    bench_cores: float
    rss_peak: int
    rejected_503: int
    failures: int

    def latency(self, q: float) -> float:
        return percentile(self.latencies, q)


@dataclass
class ExporterResult:
    scenario: ExporterScenario
    runs: list[ExporterRun] = field(default_factory=list)

    def median(self, value: Callable[[ExporterRun], float]) -> float:
        values = [value(r) for r in self.runs]
        return median_min_max(values)[0] if values else 0.0

    @property
    def queryable_per_s(self) -> float:
        return self.median(lambda r: r.queryable_per_s)

    def latency(self, q: float) -> float:
        """Median over the runs of each run's ``q``-th latency percentile, seconds."""
        return self.median(lambda r: r.latency(q))


def _measure(collector: Collector, calls_per_request: int, n_requests: int, window: tuple[str, str],
             timeout_s: float,
             send: Callable[[], SendStats]) -> ExporterRun:
    calls = calls_per_request * n_requests
    poll = httpx.Client(timeout=30, verify=False, trust_env=False)
    try:
        baseline = summary_calls(poll, collector.base, collector.key, window)
        me = psutil.Process()
        cpu_bench0, cpu_coll0 = sum(me.cpu_times()[:2]), collector.cpu_seconds()
        with Sampler(collector) as sampler:
            wall0 = time.perf_counter()
            stats = send()
            queryable_at, seen = wait_queryable(poll, collector.base, collector.key, window, baseline + calls,
                                                timeout_s)
            wall = time.perf_counter() - wall0
        cpu_bench, cpu_coll = sum(me.cpu_times()[:2]) - cpu_bench0, collector.cpu_seconds() - cpu_coll0
    finally:
        poll.close()
    if not queryable_at:
        log(f"    ! only {seen - baseline} of {calls} calls queryable {timeout_s:.0f}s after the last ack")
    if stats.failures:
        log(f"    ! {stats.failures} failed requests; last: {stats.last_failure}")
    ack_s = stats.last_ack - stats.first_send
    return ExporterRun(
        spans=calls,
        queryable_per_s=calls / (queryable_at - stats.first_send) if queryable_at else 0.0,
        acked_per_s=stats.acks * calls_per_request / ack_s if stats.last_ack and ack_s > 0 else 0.0,
        latencies=stats.latencies, collector_cores=cpu_coll / wall, bench_cores=cpu_bench / wall,
        rss_peak=sampler.peak, rejected_503=stats.rejected_503, failures=stats.failures,
    )


def run_scenario(collector: Collector, scenario: ExporterScenario, payloads: Sequence[bytes],
                 calls_per_request: int, clients: Sequence[httpx.Client], window: tuple[str, str],
                 queryable_timeout_s: float = 120.0) -> ExporterRun:
    """One run of ``scenario``: send ``payloads`` as it says, then wait until every row is queryable."""
    if scenario.paced:
        def send() -> SendStats:
            return send_paced(collector.base, collector.key, payloads, scenario.interval_s)
    else:
        def send() -> SendStats:
            return send_all(collector.base, collector.key, payloads, clients[: scenario.in_flight])
    return _measure(collector, calls_per_request, len(payloads), window, queryable_timeout_s, send)


def describe(run: ExporterRun) -> str:
    return (f"{run.spans:,} spans  queryable {run.queryable_per_s:,.0f}/s  ack p50/p95/p99 "
            f"{fmt_ms(run.latency(50))} / {fmt_ms(run.latency(95))} / {fmt_ms(run.latency(99))}  "
            f"503s {run.rejected_503}  CPU: collector {run.collector_cores:.2f} cores, bench "
            f"{run.bench_cores:.2f}  RSS peak {run.rss_peak / MiB:,.0f} MiB")


def print_results(results: Sequence[ExporterResult]) -> None:
    """The per-scenario table: medians [min–max] of the runs."""
    w = (32, 28, 34, 26)
    log(f"\n{'exporter-shaped scenario':<{w[0]}}{'queryable spans/s':<{w[1]}}{'ack p50 / p95 / p99':<{w[2]}}"
        f"{'collector CPU, cores':<{w[3]}}collector RSS peak, MiB")
    log("-" * (sum(w) + 26))
    for result in results:
        runs = result.runs
        lat = " / ".join(fmt_ms(result.latency(q)) for q in (50, 95, 99))
        log(f"{result.scenario.name:<{w[0]}}{fmt_mmm([r.queryable_per_s for r in runs]):<{w[1]}}{lat:<{w[2]}}"
            f"{fmt_mmm([r.collector_cores for r in runs], '.2f'):<{w[3]}}"
            f"{fmt_mmm([r.rss_peak / MiB for r in runs])}")
    log("(medians of the runs [min–max]; latency: median of each run's percentile)")


def run_exporter(scenarios: Sequence[ExporterScenario], runs: int, workdir: Path, collectors: list[Collector],
                 opened: list[httpx.Client], *, seed: int, scope: str | None = None,
                 queryable_timeout_s: float = 120.0, arms: dict[str, dict[str, str]] | None = None,
                 pii_share: float | None = None) -> dict[str, list[ExporterResult]]:
    """Every scenario ``runs`` times on a collector at defaults per arm (name -> extra environment, e.g. a
    ``PYTHONPATH`` to another checkout's code; default: this checkout only), results by arm.

    Run by run: the runs of a scenario spread over the whole bench, so drift on a shared machine lands in the
    min–max, not in one scenario; with several arms, each run's bodies go to every arm in turn (the order
    alternating run by run), so arms are compared on the same bodies at the same time. Each run's bodies are
    built just before it, outside its clock, and dropped after; with ``scope``, as that library's spans (see
    :func:`ingest_payloads.rescoped`: they take the held path, queryable after the pairing window); with
    ``pii_share``, that share of the content samples carries PII in its prompt (default: the demo traffic's)."""
    arms = arms or {"this checkout": {}}
    clients = make_clients(max([s.in_flight for s in scenarios] + [1]))
    opened.extend(clients)
    window = ((datetime.now(timezone.utc) - timedelta(hours=2)).isoformat(),
              (datetime.now(timezone.utc) + timedelta(hours=12)).isoformat())
    warmup = exporter_payloads(4, 512, with_content=False, seed=seed + 900) + \
        exporter_payloads(2, 512, with_content=True, seed=seed + 901, pii_share=pii_share)
    running: dict[str, Collector] = {}
    for k, (arm, env) in enumerate(arms.items()):
        collector = Collector(workdir, "exporter" if k == 0 else f"exporter-arm{k}", env)
        collectors.append(collector)
        collector.start()
        running[arm] = collector
        stats = send_all(collector.base, collector.key, warmup, clients[: len(warmup)])
        log(f"  {arm}: warm-up {stats.acks}/{len(warmup)} requests acknowledged; collector RSS idle after "
            f"warm-up {collector.rss() / MiB:,.0f} MiB")
    results = {arm: [ExporterResult(s) for s in scenarios] for arm in arms}
    for r in range(runs):
        for i, scenario in enumerate(scenarios):
            t = time.perf_counter()
            payloads = exporter_payloads(scenario.requests, scenario.spans_per_request,
                                         with_content=scenario.content, seed=seed + 1000 * (r + 1) + i,
                                         pii_share=pii_share)
            if scope:
                payloads = rescoped(payloads, scope, seed=seed + 7 * r + i, shift_ns=0)
            calls = llm_calls_per_request(payloads[0]) or scenario.spans_per_request
            built_s = time.perf_counter() - t
            order = list(running.items())
            for arm, collector in (order if r % 2 == 0 else order[::-1]):
                run = run_scenario(collector, scenario, payloads, calls, clients, window, queryable_timeout_s)
                results[arm][i].runs.append(run)
                label = f"{arm}: " if len(arms) > 1 else ""
                log(f"  {label}{scenario.name:<30} run {r + 1}/{runs}: {describe(run)}  (built in {built_s:.1f}s)")
            del payloads
    for arm, collector in running.items():
        metrics = collector.metrics()
        batches = metrics.get("inferwatch_insert_batches_total", 0)
        if batches:
            rows = sum(v for k, v in metrics.items() if k.startswith("inferwatch_rows_written_total"))
            log(f"  {arm}: collector writer: {batches:.0f} inserts, {rows / batches:,.0f} rows per insert on "
                f"average, {metrics.get('inferwatch_insert_seconds_total', 0):.1f}s inside inserts")
        collector.stop()
    return results


def print_comparison(results: dict[str, list[ExporterResult]]) -> None:
    """First arm against each other arm, scenario by scenario: queryable spans/s and ack p50, medians."""
    (name, mine), *others = results.items()
    for other, theirs in others:
        log(f"\n{name} vs {other} (medians of the runs)")
        log(f"{'exporter-shaped scenario':<32}{'queryable spans/s':<34}{'ack p50':<30}")
        for a, b in zip(mine, theirs):
            qa, qb = a.queryable_per_s, b.queryable_per_s
            pa, pb = a.latency(50), b.latency(50)
            log(f"{a.scenario.name:<32}{f'{qa:,.0f} vs {qb:,.0f} ({qa / qb if qb else 0:.2f}x)':<34}"
                f"{f'{fmt_ms(pa)} vs {fmt_ms(pb)} ({pa / pb if pb else 0:.2f}x)':<30}")
