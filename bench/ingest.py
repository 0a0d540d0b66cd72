"""Ingest benchmark: OTLP/HTTP spans into the collector on embedded chDB, end to end, against targets.

What it does, in one run (every subprocess is stopped on exit, everything binds 127.0.0.1 only):

1. Pre-builds every request before any timing: OTLP protobuf requests of 512 LLM-call spans from
   ``examples/traffic.py`` (unique trace/span ids in every span), without content and with ~1 KB of prompt
   content (PII included) that the collector must redact.
2. Creates keys with the CLI on a temp data dir, starts ``inferwatch-server collector`` on a free port and waits
   for ``/readyz``.
3. For scenario (a) no content and (b) with content, ``--reps`` times each: several sender threads post the
   requests (each honours 503 Retry-After) and the bench measures
   - acknowledged spans/s = spans / (first send -> last 200),
   - queryable spans/s = spans / (first send -> ``GET /api/v1/calls/summary`` counting them all),
   counting deltas of the summary on one collector (request bodies are all distinct, so no retry dedup).
4. Scenario (c) another library's spans, on a collector of its own (defaults): scenario (a)'s requests with the
   instrumentation scope renamed to ``openinference.instrumentation.openai`` (fresh ids, each rep moved apart in
   time), so every span takes the held path (``llm_calls_held``, kept in memory for ``pairing_window_s``, then
   settled). Acknowledged spans/s against (a)'s, queryable spans/s and the time from the last 200 to all rows
   queryable (both include the window), the collector's RSS peak against (a)'s, the held-calls gauge over time.
   A rep whose rows are not all queryable by the window + 90 s (+ 30 s with ``--quick``) ends the scenario.
5. Overload: a second collector with a small ``INFERWATCH_MAX_QUEUE_ROWS`` and ``INFERWATCH_MAX_INFLIGHT_BYTES``; many senders post without pauses
   (503s are not waited on) while the collector's RSS is sampled every 0.5 s.
6. The raw chDB insert ceiling, in this process after the collectors have stopped, on its own temp dir:
   ``normalize()`` the scenario (a) requests, then ``Store.insert_columns`` the pre-built ``llm_calls`` columns
   in batches of the collector's flush size on a migrated store (materialized views included).
7. A final table: targets, measurements, PASS/FAIL (no asserts; the exit code is 0 unless the bench itself
   could not run).

Run: ``.venv/bin/python bench/ingest.py`` (about 3-4 minutes on 2 cores) or ``--quick`` (about 1 minute).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: examples/ lives in the checkout
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import psutil  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue  # noqa: E402
from opentelemetry.proto.resource.v1.resource_pb2 import Resource  # noqa: E402
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans  # noqa: E402

from examples.traffic import TrafficModel, build_request  # noqa: E402

PROJECT = "bench"
MiB = 1024 * 1024

TARGET_QUERYABLE_NO_CONTENT = 20_000
TARGET_CEILING_SHARE = 0.40
TARGET_QUERYABLE_CONTENT = 5_000
# (c) another library's spans take the held path: the worker encodes each row to JSON for llm_calls_held (instead
# of writing llm_calls + its views) and hands it back to the main process, which keeps it for the window. That is
# one more encode and one more process hop per span, about what normalize itself costs, so at most ~30% of (a)'s
# acknowledged rate may go; more than that means the held path does work per request that it should not.
TARGET_HELD_ACK_SHARE = 0.70
# after the window, settling writes the rows as the direct path would (a second or two) plus one settle tick (1 s)
TARGET_HELD_SETTLE_SLACK_S = 5.0
THIRD_PARTY_SCOPE = "openinference.instrumentation.openai"


def log(message: str) -> None:
    print(message, flush=True)


# --------------------------------------------------------------------------------------------------------------
# Payloads
# --------------------------------------------------------------------------------------------------------------


def build_payloads(n_requests: int, spans_per_request: int, *, with_content: bool, seed: int,
                   templates: int = 8) -> list[bytes]:
    """``n_requests`` encoded requests of LLM-call spans only, every span with fresh random ids.

    A few requests are generated in full by the traffic model; the rest are copies of them with new trace and
    span ids, which costs ~1 ms per request instead of ~25 ms and keeps every span (and body) unique.
    """
    model = TrafficModel(seed=seed, embeddings=False)
    now_ns = time.time_ns()
    bases = [build_request(model, spans_per_request, with_content=with_content, now_ns=now_ns, spread_s=10,
                           app_spans=False) for _ in range(min(templates, n_requests))]
    randbytes = random.Random(seed ^ 0x5EED).randbytes
    out: list[bytes] = []
    for i in range(n_requests):
        request = ExportTraceServiceRequest()
        request.CopyFrom(bases[i % len(bases)])
        for span in request.resource_spans[0].scope_spans[0].spans:
            span.trace_id = randbytes(16)
            span.span_id = randbytes(8)
        out.append(request.SerializeToString())
    return out


def rescoped(payloads: Sequence[bytes], scope: str, *, seed: int, shift_ns: int) -> list[bytes]:
    """``payloads`` as another library would send them: scope ``scope``, fresh trace/span ids and response ids
    (provider ids are unique; the pairing code looks twins up by them), every time moved by ``shift_ns``.

    The shift keeps each rep's spans apart in time from every other rep's rows: the pairing window compares a held
    root span with the root rows near it in time, and in real traffic a later rep would have later timestamps.
    """
    from inferwatch import semconv as sc

    randbytes = random.Random(seed).randbytes
    out: list[bytes] = []
    for body in payloads:
        request = ExportTraceServiceRequest.FromString(body)
        scope_spans = request.resource_spans[0].scope_spans[0]
        scope_spans.scope.name = scope
        scope_spans.scope.version = "0.1.99"
        for span in scope_spans.spans:
            span.trace_id = randbytes(16)
            span.span_id = randbytes(8)
            span.start_time_unix_nano += shift_ns
            span.end_time_unix_nano += shift_ns
            for attr in span.attributes:
                if attr.key == sc.GEN_AI_RESPONSE_ID:
                    attr.value.string_value = span.span_id.hex()
        out.append(request.SerializeToString())
    return out


def unique_suffix(seq: int) -> bytes:
    """An empty ResourceSpans, encoded: appended to a request it makes the body unique (protobuf messages
    concatenate as a merge, so the request gains one span-less resource and nothing else)."""
    marker = ExportTraceServiceRequest(resource_spans=[ResourceSpans(resource=Resource(
        attributes=[KeyValue(key="bench.seq", value=AnyValue(int_value=seq))]))])
    return marker.SerializeToString()


def llm_calls_per_request(body: bytes) -> int | None:
    """How many ``llm_calls`` rows the collector's normaliser makes of one request (None if unavailable)."""
    try:
        from inferwatch_collector.normalize import normalize
    except ImportError:
        return None
    batch = normalize(ExportTraceServiceRequest.FromString(body), PROJECT, content_capture="redacted")
    return len(batch.llm_calls)


# --------------------------------------------------------------------------------------------------------------
# The collector subprocess
# --------------------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_command() -> list[str]:
    exe = Path(sys.executable).parent / "inferwatch-server"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("inferwatch-server")
    return [found] if found else [sys.executable, "-m", "inferwatch_server"]


class Collector:
    """One ``inferwatch-server collector`` on its own data dir and port; keys are made before it starts."""

    def __init__(self, workdir: Path, name: str, env: dict[str, str] | None = None) -> None:
        self.data_dir = workdir / name
        self.log_path = workdir / f"{name}.log"
        self.env = {k: v for k, v in os.environ.items() if k != "INFERWATCH_CLICKHOUSE_URL"}
        self.env.update(env or {})
        self.port = 0
        self.metrics_port = 0  # the internal /metrics listener
        self.key = ""
        self.proc: subprocess.Popen | None = None
        self._log_file = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _cli(self, *args: str, timeout: float = 120) -> str:
        cmd = [*server_command(), "--data-dir", str(self.data_dir), *args]
        done = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[-len(args) - 2:])} failed ({done.returncode}):\n"
                               f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return done.stdout

    def start(self, timeout: float = 90.0) -> None:
        t = time.perf_counter()
        self._cli("migrate")
        out = self._cli("keys", "create", "--project", PROJECT, "--scope", "ingest", "--scope", "read")
        self.key = out.strip().splitlines()[-1].strip()
        if not self.key.startswith("iwk_"):
            raise RuntimeError(f"unexpected `keys create` output: {out!r}")
        self.port, self.metrics_port = free_port(), free_port()
        self._log_file = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [*server_command(), "--data-dir", str(self.data_dir), "collector", "--host", "127.0.0.1",
             "--port", str(self.port), "--metrics-port", str(self.metrics_port)],
            env=self.env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=2, trust_env=False) as client:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the collector exited with {self.proc.returncode}:\n{self.log_tail()}")
                try:
                    if client.get(self.base + "/readyz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the collector was not ready after {timeout:.0f}s:\n{self.log_tail()}")
                time.sleep(0.1)
        log(f"  collector up on {self.base} in {time.perf_counter() - t:.1f}s (migrate + key + start), "
            f"data dir {self.data_dir}")

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def processes(self) -> list[psutil.Process]:
        if self.proc is None or self.proc.poll() is not None:
            return []
        try:
            root = psutil.Process(self.proc.pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def rss(self) -> int:
        total = 0
        for p in self.processes():
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def cpu_seconds(self) -> float:
        total = 0.0
        for p in self.processes():
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        return total

    def metrics(self) -> dict[str, float]:
        """The collector's Prometheus counters (name{labels} -> value); empty when unavailable."""
        try:
            text = httpx.get(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=10, trust_env=False).text
        except httpx.HTTPError:
            return {}
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                try:
                    out[name] = float(value)
                except ValueError:
                    pass
        return out

    def stop(self) -> None:
        """SIGINT (graceful: the writer flushes), then SIGKILL of our own child if it does not exit."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None


# --------------------------------------------------------------------------------------------------------------
# Senders
# --------------------------------------------------------------------------------------------------------------


@dataclass
class SendStats:
    requests: int = 0
    acks: int = 0
    rejected_503: int = 0
    failures: int = 0
    last_failure: str = ""
    first_send: float = 0.0
    last_ack: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _headers(key: str) -> dict[str, str]:
    return {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"}


def make_clients(n: int) -> list[httpx.Client]:
    """Keep-alive clients, one per sender thread, made once and reused across reps.

    ``verify=False`` only skips building an SSL context (about 30 ms of CPU per client; the URLs are plain
    http), ``trust_env=False`` keeps proxy settings from routing 127.0.0.1 elsewhere.
    """
    return [httpx.Client(timeout=httpx.Timeout(180.0, connect=10.0), verify=False, trust_env=False)
            for _ in range(n)]


def send_all(base: str, key: str, payloads: Sequence[bytes], clients: Sequence[httpx.Client], *,
             honour_retry_after: bool = True, stop_at: float | None = None,
             body_for: Callable[[int], bytes] | None = None) -> SendStats:
    """Post ``payloads`` (or, with ``stop_at``, ``body_for(i)`` until then) from one thread per client.

    Connections are warmed before the clock starts. Threads are the cheapest generator here: 512-span requests
    mean tens of requests per second, so the threads mostly wait on the collector.
    """
    url = base + "/v1/traces"
    headers = _headers(key)
    stats = SendStats()
    counter = itertools.count()
    barrier = threading.Barrier(len(clients) + 1)

    def worker(client: httpx.Client) -> None:
        try:
            client.get(base + "/healthz")
        except httpx.HTTPError:
            pass
        barrier.wait()
        while True:
            i = next(counter)
            if stop_at is None:
                if i >= len(payloads):
                    return
                body = payloads[i]
            else:
                if time.perf_counter() >= stop_at:
                    return
                body = body_for(i)
            while True:
                try:
                    response = client.post(url, content=body, headers=headers)
                    status = response.status_code
                except httpx.HTTPError as exc:
                    status, response = 0, None
                    with stats.lock:
                        stats.failures += 1
                        stats.last_failure = f"{type(exc).__name__}: {exc}"
                now = time.perf_counter()
                with stats.lock:
                    stats.requests += 1
                    if status == 200:
                        stats.acks += 1
                        stats.last_ack = max(stats.last_ack, now)
                    elif status in (429, 503):
                        stats.rejected_503 += 1
                    elif status:
                        stats.failures += 1
                        stats.last_failure = f"HTTP {status}: {response.text[:200]}"
                if status == 200 or (status not in (0, 429, 503)):
                    break
                if not honour_retry_after:
                    break  # overload mode: move on to the next body at once
                if stop_at is not None and now >= stop_at:
                    return
                retry_after = 1.0
                if response is not None:
                    try:
                        retry_after = float(response.headers.get("retry-after", "1"))
                    except ValueError:
                        pass
                time.sleep(retry_after)

    threads = [threading.Thread(target=worker, args=(c,), name=f"sender-{i}", daemon=True)
               for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    stats.first_send = time.perf_counter()
    for t in threads:
        t.join()
    return stats


def summary_calls(client: httpx.Client, base: str, key: str, window: tuple[str, str]) -> int:
    response = client.get(base + "/api/v1/calls/summary", params={"start": window[0], "end": window[1]},
                          headers={"Authorization": f"Bearer {key}"})
    response.raise_for_status()
    return int(response.json()["calls"])


# --------------------------------------------------------------------------------------------------------------
# Phases
# --------------------------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------------------------


def _fmt_rate(value: float) -> str:
    return f"{value:,.0f}/s"


def _median_min_max(values: Sequence[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def run_reps(title: str, collector: Collector, runs: Sequence[Sequence[bytes]], calls: int,
             clients: Sequence[httpx.Client], window: tuple[str, str], out: list[RepResult],
             queryable_timeout_s: float = 120.0) -> None:
    """One :func:`run_rep` per run, logged; stops after a rep whose rows never all became queryable (the
    collector is then still busy with them, so later reps would measure the backlog)."""
    for r, payloads in enumerate(runs):
        res = run_rep(collector, payloads, calls, clients, window, queryable_timeout_s)
        out.append(res)
        log(f"  {title} rep {r + 1}/{len(runs)}: {res.spans:,} spans  acked {_fmt_rate(res.acked_per_s)}"
            f"  queryable {_fmt_rate(res.queryable_per_s)}  (last ack {res.ack_s:.2f}s, queryable "
            f"{res.queryable_s:.2f}s)  503s {res.rejected_503}  CPU: collector "
            f"{res.collector_cores:.2f} cores, bench {res.bench_cores:.2f}")
        if not res.queryable_per_s and r + 1 < len(runs):
            log(f"  {title}: skipping the remaining {len(runs) - r - 1} reps")
            return


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/ingest.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller run (~30 s) for a quick look")
    parser.add_argument("--reps", type=int, default=3, help="repetitions per scenario (default 3)")
    parser.add_argument("--spans-per-request", type=int, default=512)
    parser.add_argument("--requests", type=int, default=None,
                        help="requests per rep without content (default 160; --quick 40)")
    parser.add_argument("--content-requests", type=int, default=None,
                        help="requests per rep with content (default 40; --quick 8)")
    parser.add_argument("--senders", type=int, default=32,
                        help="concurrent sender threads (default 32: enough 512-span requests in flight to fill "
                             "the collector's 10,000-row flush)")
    parser.add_argument("--overload-seconds", type=float, default=None, help="default 20 (--quick 6)")
    parser.add_argument("--overload-senders", type=int, default=48)
    parser.add_argument("--overload-queue-rows", type=int, default=20_000,
                        help="INFERWATCH_MAX_QUEUE_ROWS of the overload collector (default 20,000)")
    parser.add_argument("--overload-inflight-mib", type=int, default=8,
                        help="INFERWATCH_MAX_INFLIGHT_BYTES of the overload collector, MiB (default 8)")
    parser.add_argument("--ceiling-rows", type=int, default=None, help="default 100,000 (--quick 30,000)")
    parser.add_argument("--flush-rows", type=int, default=None,
                        help="ceiling batch size (default: the collector's flush_rows setting, 10,000)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--keep", action="store_true", help="keep the temp data dirs and collector logs")
    args = parser.parse_args(argv)

    n_a = args.requests or (40 if args.quick else 160)
    n_b = args.content_requests or (8 if args.quick else 40)
    overload_s = args.overload_seconds or (6.0 if args.quick else 20.0)
    ceiling_rows = args.ceiling_rows or (30_000 if args.quick else 100_000)
    try:
        from inferwatch_collector.settings import Settings

        defaults = Settings(clickhouse_url="")
        flush_rows, pairing_window_s = defaults.flush_rows, defaults.pairing_window_s
    except Exception:
        flush_rows, pairing_window_s = 10_000, 10.0
    if args.flush_rows is not None:
        flush_rows = args.flush_rows
    held_timeout_s = pairing_window_s + (30.0 if args.quick else 90.0)
    spr = args.spans_per_request

    from google.protobuf.internal import api_implementation

    log(f"inferwatch ingest bench — {os.cpu_count()} CPUs, protobuf backend {api_implementation.Type()}, "
        f"{args.senders} senders, {spr} spans/request, {args.reps} reps")
    workdir = Path(tempfile.mkdtemp(prefix="inferwatch-bench-"))
    collectors: list[Collector] = []
    opened: list[httpx.Client] = []
    started = time.perf_counter()
    try:
        # ---- payloads, before any timing ----
        t = time.perf_counter()
        window_start = datetime.now(timezone.utc) - timedelta(hours=1)
        a_runs = [build_payloads(n_a, spr, with_content=False, seed=args.seed + r) for r in range(args.reps)]
        b_runs = [build_payloads(n_b, spr, with_content=True, seed=args.seed + 100 + r) for r in range(args.reps)]
        warmup = build_payloads(4, spr, with_content=False, seed=args.seed + 200) + \
            build_payloads(2, spr, with_content=True, seed=args.seed + 201)
        overload_pool = build_payloads(32, spr, with_content=False, seed=args.seed + 300)
        c_runs = [rescoped(run, THIRD_PARTY_SCOPE, seed=args.seed + 400 + r, shift_ns=-(r + 1) * 120 * 10**9)
                  for r, run in enumerate(a_runs)]
        size_a = sum(map(len, a_runs[0])) / (n_a * spr)
        size_b = sum(map(len, b_runs[0])) / (n_b * spr)
        log(f"pre-built {args.reps} x {n_a} requests without content ({size_a:,.0f} B/span) and "
            f"{args.reps} x {n_b} with content ({size_b:,.0f} B/span), (a)'s again as another library's "
            f"in {time.perf_counter() - t:.1f}s")
        per_request = llm_calls_per_request(a_runs[0][0])
        if per_request is None:
            log("  (inferwatch_collector.normalize not importable: assuming every span is one LLM call)")
            per_request = spr
        elif per_request != spr:
            log(f"  ! normalize() makes {per_request} llm_calls rows of a {spr}-span request; counting those")
        content_per_request = llm_calls_per_request(b_runs[0][0]) or spr
        held_per_request = llm_calls_per_request(c_runs[0][0]) or spr

        # ---- scenarios on collector A ----
        log("\n[1] end-to-end ingest (collector defaults)")
        main_collector = Collector(workdir, "main")
        collectors.append(main_collector)
        main_collector.start()
        clients = make_clients(args.senders)
        opened.extend(clients)
        stats = send_all(main_collector.base, main_collector.key, warmup, clients[: len(warmup)])
        log(f"  warm-up: {stats.acks}/{len(warmup)} requests acknowledged")
        window_end = datetime.now(timezone.utc) + timedelta(hours=1)
        window = (window_start.isoformat(), window_end.isoformat())
        results: dict[str, list[RepResult]] = {"a": [], "b": [], "c": []}
        rss_a_idle = main_collector.rss()
        with Sampler(main_collector) as sampler_a:
            run_reps("(a) no content  ", main_collector, a_runs, per_request, clients, window, results["a"])
        run_reps("(b) with content", main_collector, b_runs, content_per_request, clients, window, results["b"])
        metrics = main_collector.metrics()
        batches = metrics.get("inferwatch_insert_batches_total", 0)
        if batches:
            rows = sum(v for k, v in metrics.items() if k.startswith("inferwatch_rows_written_total"))
            log(f"  collector writer: {batches:.0f} inserts, {rows / batches:,.0f} rows per insert on average, "
                f"{metrics.get('inferwatch_insert_seconds_total', 0):.1f}s inside inserts")
        main_collector.stop()

        # ---- (c) another library's spans, on a collector of its own ----
        log(f"\n[2] (c) another library's spans: scenario (a)'s requests as scope {THIRD_PARTY_SCOPE!r}, every "
            f"span held for the pairing window (default {pairing_window_s:g} s), its own collector")
        held_collector = Collector(workdir, "held")
        collectors.append(held_collector)
        held_collector.start()
        stats = send_all(held_collector.base, held_collector.key, warmup, clients[: len(warmup)])
        log(f"  warm-up (direct path): {stats.acks}/{len(warmup)} requests acknowledged")
        rss_c_idle = held_collector.rss()
        with Sampler(held_collector, held=True) as sampler_c:
            run_reps("(c) other scope ", held_collector, c_runs, held_per_request, clients, window, results["c"],
                     queryable_timeout_s=held_timeout_s)
        log(f"  RSS: (a) idle {rss_a_idle / MiB:,.0f} MiB -> peak {sampler_a.peak / MiB:,.0f} MiB; "
            f"(c) idle {rss_c_idle / MiB:,.0f} MiB -> peak {sampler_c.peak / MiB:,.0f} MiB")
        log(f"  held calls over time: {sampler_c.held_timeline() or '(no /metrics samples)'}")
        held_metrics = held_collector.metrics()
        log(f"  pairing: {held_metrics.get('inferwatch_pairing_settled_calls_total', 0):,.0f} calls settled, "
            f"{held_metrics.get('inferwatch_llm_spans_merged_total', 0):,.0f} spans merged (expected 0), "
            f"{held_metrics.get('inferwatch_pairing_settle_failures_total', 0):,.0f} settle failures, "
            f"{held_metrics.get('inferwatch_pairing_held_calls', 0):,.0f} still held")
        held_collector.stop()

        # ---- overload on collector B ----
        log(f"\n[3] overload: {args.overload_senders} senders, no pauses, INFERWATCH_MAX_QUEUE_ROWS="
            f"{args.overload_queue_rows:,}, INFERWATCH_MAX_INFLIGHT_BYTES={args.overload_inflight_mib} MiB, "
            f"{overload_s:.0f}s")
        over_env = {"INFERWATCH_MAX_QUEUE_ROWS": str(args.overload_queue_rows),
                    "INFERWATCH_MAX_INFLIGHT_BYTES": str(args.overload_inflight_mib * 1024 * 1024)}
        over_collector = Collector(workdir, "overload", over_env)
        collectors.append(over_collector)
        over_collector.start()
        clients = make_clients(args.overload_senders)
        opened.extend(clients)
        over = run_overload(over_collector, overload_pool, per_request, clients, overload_s,
                            args.overload_queue_rows)
        log(f"  RSS idle {over.rss_idle / MiB:,.0f} MiB, peak {over.rss_peak / MiB:,.0f} MiB (first half "
            f"{over.rss_peak_first_half / MiB:,.0f}, second half {over.rss_peak_second_half / MiB:,.0f}), "
            f"end of load "
            f"{over.rss_end_loaded / MiB:,.0f} MiB, after drain {over.rss_after_drain / MiB:,.0f} MiB")
        log(f"  {over.acks:,} requests acknowledged ({_fmt_rate(over.acked_spans_per_s)} spans), "
            f"{over.rejected_503:,} answered 503, {over.failures} failed")
        over_collector.stop()

        # ---- chDB insert ceiling, in this process ----
        log(f"\n[4] raw chDB insert ceiling: {ceiling_rows:,} llm_calls rows in batches of {flush_rows:,}, "
            "migrated store (materialized views run)")
        ceiling = run_ceiling(workdir, [b for run in a_runs for b in run], b_runs[0], ceiling_rows, flush_rows)
        log(f"  insert: {_fmt_rate(ceiling.rows_per_s)} rows; decode+normalize alone (one core, this process): "
            f"{_fmt_rate(ceiling.normalize_spans_per_s)} spans without content, "
            f"{_fmt_rate(ceiling.normalize_content_spans_per_s)} with content")

        # ---- verdict ----
        qa = _median_min_max([r.queryable_per_s for r in results["a"]])
        aa = _median_min_max([r.acked_per_s for r in results["a"]])
        qb = _median_min_max([r.queryable_per_s for r in results["b"]])
        ab = _median_min_max([r.acked_per_s for r in results["b"]])
        share = qa[0] / ceiling.rows_per_s if ceiling.rows_per_s else 0.0
        ac = _median_min_max([r.acked_per_s for r in results["c"]])
        ack_share = ac[0] / aa[0] if aa[0] else 0.0
        lag_a = _median_min_max([r.ack_to_queryable_s for r in results["a"]])
        c_done = all(r.queryable_per_s for r in results["c"])
        if c_done:
            qc = _median_min_max([r.queryable_per_s for r in results["c"]])
            lag_c = _median_min_max([r.ack_to_queryable_s for r in results["c"]])
            qc_text = f"{qc[0]:,.0f} [{qc[1]:,.0f}–{qc[2]:,.0f}]"
            lag_c_text = f"{lag_c[0]:.1f} s [{lag_c[1]:.1f}–{lag_c[2]:.1f}]"
        else:
            stuck = next(r for r in results["c"] if not r.queryable_per_s)
            qc_text = lag_c_text = f"{stuck.queryable_calls:,}/{stuck.spans:,} after {held_timeout_s:.0f}s"
        settle_goal = pairing_window_s + TARGET_HELD_SETTLE_SLACK_S
        lines = [
            ("acked spans/s, no content (info)", "-", f"{aa[0]:,.0f} [{aa[1]:,.0f}–{aa[2]:,.0f}]", None),
            ("queryable spans/s, no content", f">= {TARGET_QUERYABLE_NO_CONTENT:,}",
             f"{qa[0]:,.0f} [{qa[1]:,.0f}–{qa[2]:,.0f}]", qa[0] >= TARGET_QUERYABLE_NO_CONTENT),
            ("chDB insert ceiling rows/s (info)", "-", f"{ceiling.rows_per_s:,.0f}", None),
            ("end-to-end / ceiling", f">= {TARGET_CEILING_SHARE:.0%}", f"{share:.0%}",
             share >= TARGET_CEILING_SHARE),
            ("acked spans/s, with content (info)", "-", f"{ab[0]:,.0f} [{ab[1]:,.0f}–{ab[2]:,.0f}]", None),
            ("queryable spans/s, with content", f">= {TARGET_QUERYABLE_CONTENT:,}",
             f"{qb[0]:,.0f} [{qb[1]:,.0f}–{qb[2]:,.0f}]", qb[0] >= TARGET_QUERYABLE_CONTENT),
            ("overload: RSS bounded, 503s returned", "plateau, 503s > 0",
             f"{over.rss_idle / MiB:,.0f}->{over.rss_peak / MiB:,.0f}->{over.rss_after_drain / MiB:,.0f} MiB, "
             f"{over.rejected_503:,} x 503", over.bounded and over.rejected_503 > 0),
            ("(c) other library: acked spans/s (info)", "-", f"{ac[0]:,.0f} [{ac[1]:,.0f}–{ac[2]:,.0f}]", None),
            ("(c)/(a) acked spans/s", f">= {TARGET_HELD_ACK_SHARE:.0%}", f"{ack_share:.0%}",
             ack_share >= TARGET_HELD_ACK_SHARE),
            (f"(c) queryable spans/s, incl. {pairing_window_s:g}s window", "(info)", qc_text,
             None if c_done else False),
            ("(a) last 200 -> all queryable (info)", "-", f"{lag_a[0]:.1f} s [{lag_a[1]:.1f}–{lag_a[2]:.1f}]",
             None),
            ("(c) last 200 -> all queryable", f"<= {settle_goal:g} s", lag_c_text,
             c_done and lag_c[0] <= settle_goal),
            ("collector RSS peak, (a) vs (c) (info)", "-",
             f"{sampler_a.peak / MiB:,.0f} vs {sampler_c.peak / MiB:,.0f} MiB "
             f"({(sampler_c.peak - sampler_a.peak) / MiB:+,.0f})", None),
        ]
        log(f"\n{'=' * 110}\n{'target':<46}{'goal':<20}{'measured (median [min–max])':<36}result")
        log("-" * 110)
        for name, goal, measured, ok in lines:
            verdict = "" if ok is None else ("PASS" if ok else "FAIL")
            log(f"{name:<46}{goal:<20}{measured:<36}{verdict}")
        log("=" * 110)
        log(f"total bench time {time.perf_counter() - started:.0f}s"
            + (f"; data dirs and logs kept in {workdir}" if args.keep else ""))
        return 0
    except Exception as exc:
        log(f"\nbench failed: {type(exc).__name__}: {exc}")
        for c in collectors:
            log(f"--- {c.log_path.name} (tail) ---\n{c.log_tail()}")
        return 1
    finally:
        for c in collectors:
            c.stop()
        for client in opened:
            client.close()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
