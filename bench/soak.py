"""Soak benchmark: steady OTLP ingest at 50% of the measured maximum, with a ClickHouse outage in the middle.

What it does (every subprocess is stopped on exit, everything binds 127.0.0.1 only, nothing is asserted):

1. Starts ``inferwatch-server collector`` on a temporary embedded (chDB) store, through a small wrapper (this file
   with ``--collector-child``) that injects the outage at the store boundary, like
   ``tests/collector/test_fault_tolerance.py`` does in-process: while a flag file exists, every
   ``Store.insert_native`` fails with "connection refused". Nothing in the collector is changed; its spool
   (on by default, beside the data directory) is what carries the outage.
2. Measures the maximum: unpaced senders for ``--max-seconds`` (acknowledged spans/s), unless ``--rate`` is given.
3. Sends for ``--minutes`` at 50% of it (open loop, paced), each request of ``--spans-per-request`` LLM-call spans
   with fresh ids (``examples/traffic.py``); a 503 is retried after its Retry-After, so every span is eventually
   acknowledged. The outage covers the middle fifth of the run (``--outage-share``).
4. Samples the collector's RSS (process tree) and its spool gauges every second.
5. After the run: waits for the spool to drain, stops the collector, opens its data directory in this process and
   counts ``llm_calls`` rows and distinct span ids.
6. Prints: spans sent vs acknowledged vs stored (and duplicates), RSS over time (and whether it stayed bounded),
   request latency p50/p99/max before/during/after the outage, 503s per phase, the spool's peak.

Run: ``.venv/bin/python bench/soak.py`` (10 minutes + about 1 minute of setup) or ``--minutes 2``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import queue
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

PHASES = ("before", "during", "after")


# --------------------------------------------------------------------------------------------------------------
# The collector child: the real CLI with an outage switch at the store boundary
# --------------------------------------------------------------------------------------------------------------


def collector_child(flag: str, argv: Sequence[str]) -> int:
    """``inferwatch-server <argv>`` with ``Store.insert_native`` failing while ``flag`` exists."""
    from inferwatch_collector import store as store_module

    original = store_module.Store.insert_native

    def insert_native(self, table, data, column_names, settings=None):  # type: ignore[no-untyped-def]
        if os.path.exists(flag):
            raise ConnectionRefusedError("[Errno 111] Connection refused (bench/soak.py outage)")
        return original(self, table, data, column_names, settings)

    store_module.Store.insert_native = insert_native  # type: ignore[method-assign]
    from inferwatch_server.cli import main as cli_main

    return int(cli_main(list(argv)) or 0)


# --------------------------------------------------------------------------------------------------------------
# The bench
# --------------------------------------------------------------------------------------------------------------


def log(message: str) -> None:
    print(message, flush=True)


def _make_collector_class():  # type: ignore[no-untyped-def]
    import ingest_collector  # bench/ingest.py's collector subprocess helpers

    class FaultyCollector(ingest_collector.Collector):
        """bench/ingest.py's collector, started through :func:`collector_child`."""

        def __init__(self, workdir: Path, name: str, flag: Path) -> None:
            super().__init__(workdir, name)
            self.flag = flag

        def start(self, timeout: float = 90.0) -> None:
            real = ingest_collector.server_command
            child = [sys.executable, str(Path(__file__).resolve()), "--collector-child", str(self.flag), "--"]
            ingest_collector.server_command = lambda: child  # migrate/keys/collector all go through the wrapper
            try:
                super().start(timeout)
            finally:
                ingest_collector.server_command = real

    return FaultyCollector


@dataclass
class Phase:
    latencies: list[float] = field(default_factory=list)  # seconds, POSTs answered 200
    rejected: int = 0  # 503/429 answers (retried)
    errors: int = 0  # transport errors / other statuses (retried)
    acked_spans: int = 0


@dataclass
class Run:
    phases: dict[str, Phase] = field(default_factory=lambda: {p: Phase() for p in PHASES})
    sent_spans: int = 0  # handed to a sender
    acked_spans: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    behind_max: int = 0  # most requests waiting for a sender (open-loop backlog)


def measure_max(base: str, key: str, spans_per_request: int, seconds: float, senders: int) -> float:
    from ingest_clients import make_clients, send_all
    from ingest_payloads import build_payloads

    pool = build_payloads(64, spans_per_request, with_content=False, seed=7)
    clients = make_clients(senders)
    try:
        stop_at = time.perf_counter() + seconds
        stats = send_all(base, key, pool, clients, honour_retry_after=True, stop_at=stop_at,
                                body_for=lambda i: _fresh_ids(pool[i % len(pool)], i))
    finally:
        for c in clients:
            c.close()
    elapsed = max(stats.last_ack - stats.first_send, 1e-9)
    return stats.acks * spans_per_request / elapsed


def run_soak(args: argparse.Namespace) -> int:
    import httpx
    from ingest_payloads import build_payloads

    workdir = Path(tempfile.mkdtemp(prefix="inferwatch-soak-"))
    flag = workdir / "OUTAGE"
    Faulty = _make_collector_class()
    collector = Faulty(workdir, "soak", flag)
    log(f"soak: workdir {workdir}")
    spr = args.spans_per_request
    try:
        if args.rate:
            rate = float(args.rate)
            log(f"[1] rate given: {rate:,.0f} spans/s")
        else:
            log(f"[1] measuring the maximum on a separate collector: {args.max_senders} unpaced senders for "
                f"{args.max_seconds:.0f}s, {spr} spans/request")
            probe = Faulty(workdir / "max", "max", workdir / "max" / "OUTAGE-unused")
            (workdir / "max").mkdir()
            try:
                probe.start()
                maximum = measure_max(probe.base, probe.key, spr, args.max_seconds, args.max_senders)
            finally:
                probe.stop()
            rate = maximum * args.share
            log(f"    maximum ~{maximum:,.0f} acknowledged spans/s -> soak at {args.share:.0%}: {rate:,.0f} spans/s")
        collector.start()
        base, key = collector.base, collector.key
        pool = build_payloads(256, spr, with_content=False, seed=11)

        duration = args.minutes * 60.0
        outage_start = duration * (1 - args.outage_share) / 2
        outage_end = outage_start + duration * args.outage_share
        log(f"[2] soak: {args.minutes:g} min at {rate:,.0f} spans/s ({rate / spr:,.1f} requests/s of {spr}), "
            f"ClickHouse outage from t={outage_start:.0f}s to t={outage_end:.0f}s")

        run = Run()
        work: queue.Queue[tuple[bytes, int, float] | None] = queue.Queue(maxsize=10_000)
        seq = itertools.count(1_000_000)
        t0 = time.perf_counter()
        stop = threading.Event()

        def phase_at(t: float) -> str:
            rel = t - t0
            return "before" if rel < outage_start else "during" if rel < outage_end else "after"

        def producer() -> None:
            """Open loop: one request every spr/rate seconds, whatever the senders are doing."""
            interval = spr / rate
            n = 0
            while not stop.is_set():
                due = t0 + n * interval
                now = time.perf_counter()
                if due - t0 >= duration:
                    break
                if due > now:
                    time.sleep(min(due - now, 0.05))
                    continue
                i = next(seq)
                body = pool[i % len(pool)]
                # fresh span ids for every request (the pool's are reused): rewrite them in place
                body = _fresh_ids(body, i)
                work.put((body, spr, due))
                with run.lock:
                    run.sent_spans += spr
                    run.behind_max = max(run.behind_max, work.qsize())
                n += 1
            for _ in range(args.senders):
                work.put(None)

        def sender() -> None:
            client = httpx.Client(timeout=httpx.Timeout(60.0, connect=10.0), verify=False, trust_env=False)
            headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"}
            try:
                while True:
                    item = work.get()
                    if item is None:
                        return
                    body, spans, _due = item
                    while True:
                        started = time.perf_counter()
                        try:
                            response = client.post(base + "/v1/traces", content=body, headers=headers)
                            status = response.status_code
                        except httpx.HTTPError:
                            status, response = 0, None
                        ended = time.perf_counter()
                        phase = run.phases[phase_at(started)]
                        with run.lock:
                            if status == 200:
                                phase.latencies.append(ended - started)
                                phase.acked_spans += spans
                                run.acked_spans += spans
                            elif status in (429, 503):
                                phase.rejected += 1
                            else:
                                phase.errors += 1
                        if status == 200:
                            break
                        retry_after = 1.0
                        if response is not None:
                            try:
                                retry_after = float(response.headers.get("retry-after", "1"))
                            except ValueError:
                                pass
                        time.sleep(min(retry_after, 5.0))
            finally:
                client.close()

        samples: list[tuple[float, str, int, float, float]] = []  # t, phase, rss, spool bytes, spool batches

        def sampler() -> None:
            while not stop.is_set():
                now = time.perf_counter()
                metrics = collector.metrics()
                samples.append((now - t0, phase_at(now), collector.rss(),
                                metrics.get("inferwatch_spool_bytes", 0.0),
                                metrics.get("inferwatch_spool_pending_batches", 0.0)))
                stop.wait(1.0)

        threads = [threading.Thread(target=producer, name="producer", daemon=True),
                   threading.Thread(target=sampler, name="sampler", daemon=True),
                   *[threading.Thread(target=sender, name=f"sender-{i}", daemon=True)
                     for i in range(args.senders)]]
        for t in threads:
            t.start()
        outage_on = outage_off = None
        while threads[0].is_alive() or any(t.is_alive() for t in threads[2:]):
            rel = time.perf_counter() - t0
            if outage_on is None and rel >= outage_start:
                flag.touch()
                outage_on = rel
                log(f"    t={rel:5.0f}s  outage ON  (inserts fail)")
            if outage_on is not None and outage_off is None and rel >= outage_end:
                flag.unlink()
                outage_off = rel
                log(f"    t={rel:5.0f}s  outage OFF")
            if int(rel) % 30 == 0:
                _progress(rel, run, samples)
            time.sleep(1.0 - (time.perf_counter() - t0) % 1.0)
        if flag.exists():
            flag.unlink()
        send_end = time.perf_counter() - t0
        log(f"    t={send_end:5.0f}s  sending done")

        drained_at = _wait_spool_drained(collector, timeout=args.drain_timeout)
        stop.set()
        threads[1].join(5)
        rss_end = collector.rss()
        collector.stop()
        stored, distinct = _count_rows(collector.data_dir)
        _report(args, rate, run, samples, outage_start, outage_end, send_end, drained_at, stored,
                distinct, rss_end)
        return 0
    finally:
        try:
            collector.stop()
        except Exception:  # noqa: BLE001
            pass
        if flag.exists():
            flag.unlink()
        if not args.keep:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)


def _fresh_ids(body: bytes, i: int) -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest.FromString(body)
    rnd = os.urandom
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                span.trace_id = rnd(16)
                span.span_id = rnd(8)
    return request.SerializeToString()


def _progress(rel: float, run: Run, samples: list) -> None:
    with run.lock:
        sent, acked = run.sent_spans, run.acked_spans
    rss = samples[-1][2] / 2**20 if samples else 0.0
    spool = samples[-1][3] / 2**20 if samples else 0.0
    log(f"    t={rel:5.0f}s  sent {sent:>10,}  acked {acked:>10,}  collector RSS {rss:6.0f} MiB  "
        f"spool {spool:6.1f} MiB")


def _wait_spool_drained(collector, timeout: float) -> float | None:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        m = collector.metrics()
        if m and m.get("inferwatch_spool_pending_batches", 0.0) == 0:
            return time.perf_counter() - start
        time.sleep(0.5)
    return None


def _count_rows(data_dir: Path) -> tuple[int, int]:
    """count() and uniqExact(span_id) of llm_calls, read in this process after the collector stopped."""
    from inferwatch_collector.settings import Settings
    from inferwatch_collector.store import Store

    store = Store.open(Settings(data_dir=data_dir, clickhouse_url="", cluster="", database="inferwatch"))
    try:
        rows = store.query("SELECT count(), uniqExact(span_id) FROM llm_calls").result_rows
        return int(rows[0][0]), int(rows[0][1])
    finally:
        store.close()


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _report(args, rate, run, samples, outage_start, outage_end, send_end, drained_at, stored,  # type: ignore[no-untyped-def]
            distinct, rss_end) -> None:
    log("\n=== soak result ===")
    log(f"rate: {rate:,.0f} spans/s for {args.minutes:g} min; outage {outage_start:.0f}s..{outage_end:.0f}s; "
        f"sending took {send_end:.0f}s; spool drained "
        + (f"{drained_at:.1f}s after the last send" if drained_at is not None else "NOT within the timeout"))
    log(f"spans sent      {run.sent_spans:>12,}")
    log(f"spans acked     {run.acked_spans:>12,}")
    log(f"spans stored    {stored:>12,}   (llm_calls rows, counted in the data directory after the collector stopped)")
    log(f"distinct stored {distinct:>12,}   duplicates: {stored - distinct:,}")
    verdict = "sent = stored" if run.sent_spans == stored == distinct else "MISMATCH"
    log(f"  -> {verdict}")
    log("\nrequest latency (POST /v1/traces answered 200), by phase:")
    log(f"  {'phase':<8}{'requests':>10}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}{'503s':>8}{'errors':>8}")
    for name in PHASES:
        ph = run.phases[name]
        lat = [v * 1000 for v in ph.latencies]
        log(f"  {name:<8}{len(lat):>10,}{_pct(lat, 0.5):>10.1f}{_pct(lat, 0.99):>10.1f}"
            f"{(max(lat) if lat else float('nan')):>10.1f}{ph.rejected:>8,}{ph.errors:>8,}")
    log(f"  open-loop backlog peak: {run.behind_max} requests waiting for a sender")
    log("\ncollector RSS (process tree), MiB:")
    by_phase: dict[str, list[float]] = defaultdict(list)
    for _t, phase, rss, _sb, _sp in samples:
        by_phase[phase].append(rss / 2**20)
    for name in PHASES:
        v = by_phase.get(name) or [float("nan")]
        log(f"  {name:<8} min {min(v):7.0f}  median {statistics.median(v):7.0f}  max {max(v):7.0f}")
    if samples:
        step = max(1, len(samples) // 12)
        line = "  over time: " + "  ".join(f"{t:.0f}s:{rss / 2**20:.0f}" for t, _p, rss, _sb, _sp in samples[::step])
        log(line)
        first_after = [s[2] for s in samples if s[1] == "after"]
        before = [s[2] for s in samples if s[1] == "before"]
        if before and first_after:
            growth = (max(first_after) - max(before)) / max(before)
            log(f"  peak after the outage vs peak before: {growth:+.1%}  (end of run: {rss_end / 2**20:.0f} MiB)")
        spool_peak = max(s[3] for s in samples) / 2**20
        batches_peak = max(s[4] for s in samples)
        log(f"  spool peak: {spool_peak:.1f} MiB, {batches_peak:.0f} batches")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--collector-child"]:
        flag, rest = argv[1], argv[2:]
        if rest[:1] == ["--"]:
            rest = rest[1:]
        return collector_child(flag, rest)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="soak duration (default 10)")
    parser.add_argument("--rate", type=float, default=0.0, help="spans/s; default: 50%% of a measured maximum")
    parser.add_argument("--share", type=float, default=0.5, help="share of the maximum to soak at (default 0.5)")
    parser.add_argument("--max-seconds", type=float, default=15.0, help="length of the maximum measurement")
    parser.add_argument("--max-senders", type=int, default=32, help="unpaced senders when measuring the maximum")
    parser.add_argument("--senders", type=int, default=64,
                        help="sender threads during the soak (a request waits for its rows to be durable, about "
                        "the writer's flush interval, so the open loop needs rate x latency / spans-per-request)")
    parser.add_argument("--spans-per-request", type=int, default=512, help="spans per request (the SDK's batch)")
    parser.add_argument("--outage-share", type=float, default=0.2, help="outage length as a share of the run")
    parser.add_argument("--drain-timeout", type=float, default=300.0, help="seconds to wait for the spool to drain")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    return run_soak(args)


if __name__ == "__main__":
    sys.exit(main())
