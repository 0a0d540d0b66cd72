"""The SDK against the real collector: both at defaults, on this machine, every call counted in ClickHouse.

Issue 29's SDK figure: 1,000 calls/s through the wrapped ``openai`` client and 5,000 calls/s through the manual
``llm_call`` API, 60 s each, 0 spans dropped, every call a row in ClickHouse once ``flush()`` returns. Earlier
benches (``sdk_overhead.py``, ``sdk_outage.py``) ran the SDK against a stand-in that answers at once; the real
collector answers a request once its rows are committed, which is what the exporter has to keep up with.

Setup: one ``inferwatch-server collector`` subprocess at its defaults (embedded chDB in a temporary data dir;
``migrate`` and one ``keys create`` per scenario and run before it starts, each key its own project with the
``ingest`` and ``read`` scopes). The SDK runs in this process with ``inferwatch.init(endpoint=..., api_key=...)``
and nothing else (its defaults: capture off, 4 requests in flight, batches 512 growing to 8,192 with the backlog,
queue 20,000 spans). Scenarios, each run in turn:

* ``openai``: a real ``openai.OpenAI`` client wrapped by ``inferwatch.wrap_openai``, non-streamed Chat
  Completions against ``examples/mock_llm.py`` served by uvicorn in a subprocess (``--llm server``, the default;
  real HTTP), on an in-process ``httpx.MockTransport`` (``--llm in-process``: what the client itself costs
  without a socket, as in ``sdk_overhead.py``), or ``sdk_overhead.py``'s stub ``Completions`` (``--llm stub``: the
  same wrapper, recorder, span and metrics path without the client's own work, for a machine where the client
  cannot make 1,000 calls/s), paced at ``--openai-rate`` (1,000) calls/s;
* ``manual``: ``with inferwatch.llm_call(model=..., provider=...) as call: call.usage(...)``, paced at
  ``--manual-rate`` (5,000) calls/s.

Pacing: 1 ms ticks, the calls due, then ``time.sleep`` (an app waiting on I/O between calls); the achieved rate is
printed (the client alone cannot go faster than the machine lets it). After ``--seconds`` (60): ``inferwatch.flush
(timeout=--flush-timeout)``, then ``stats()``, then the collector's ``/api/v1/calls/summary`` for the scenario's
project: the calls that are rows. Printed per run: calls made, exported, dropped by reason, left queued / in
flight, rows stored, the achieved rate, the flush's duration, the export requests made and the most in flight;
then the medians over ``--runs``. PASS when 0 dropped and rows == calls in every run. Never asserts.

    python bench/sdk_vs_collector.py                      # 60 s per scenario, 3 runs
    python bench/sdk_vs_collector.py --seconds 15 --runs 1
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
# --sdk-src DIR: another SDK tree (a baseline: `git archive <commit> sdk/src | tar -x -C /tmp/base`), read
# before the import below
SDK_SRC = next((sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--sdk-src"),
               str(ROOT / "sdk" / "src"))
sys.path.insert(0, SDK_SRC)
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

import inferwatch  # noqa: E402

SCENARIOS = ("openai", "manual")
MODEL = "gpt-4o-mini"
MESSAGES = [{"role": "user", "content": "Say hello in a few words."}]


def log(message: str) -> None:
    print(message, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_command() -> list[str]:
    exe = Path(sys.executable).parent / "inferwatch-server"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("inferwatch-server")
    return [found] if found else [sys.executable, "-m", "inferwatch_server"]


# --- the collector -----------------------------------------------------------------------------------------------
class Collector:
    """``inferwatch-server collector`` at its defaults on its own data dir; keys made before it starts."""

    def __init__(self, workdir: Path) -> None:
        self.data_dir = workdir / "data"
        self.log_path = workdir / "collector.log"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cli(self, *args: str) -> str:
        done = subprocess.run([*server_command(), "--data-dir", str(self.data_dir), *args], env=self.env,
                              capture_output=True, text=True, timeout=180)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({done.returncode}):\n"
                               f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return done.stdout

    def make_key(self, project: str) -> str:
        out = self.cli("keys", "create", "--project", project, "--scope", "ingest", "--scope", "read")
        key = out.strip().splitlines()[-1].strip()
        if not key.startswith("iwk_"):
            raise RuntimeError(f"unexpected `keys create` output: {out!r}")
        return key

    def start(self, timeout_s: float = 120.0) -> None:
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [*server_command(), "--data-dir", str(self.data_dir), "collector", "--host", "127.0.0.1",
             "--port", str(self.port), "--metrics-port", str(free_port())],
            env=self.env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the collector exited: {self.log_path.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(self.url + "/readyz", timeout=2, trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the collector was not ready in time")
            time.sleep(0.2)

    def calls(self, key: str, start: datetime, end: datetime) -> int:
        """Calls stored for the key's project between ``start`` and ``end`` (rows of ``llm_calls``)."""
        response = httpx.get(self.url + "/api/v1/calls/summary", timeout=60, trust_env=False,
                             params={"start": start.isoformat(), "end": end.isoformat()},
                             headers={"Authorization": f"Bearer {key}"})
        response.raise_for_status()
        return int(response.json()["calls"])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self._log is not None:
            self._log.close()


# --- the app's calls ---------------------------------------------------------------------------------------------
class MockLLM:
    """``examples/mock_llm.py`` in a subprocess (real HTTP), or None for the in-process transport."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.proc: subprocess.Popen[bytes] | None = None
        self.base_url = ""
        if mode == "server":
            port = free_port()
            self.proc = subprocess.Popen([sys.executable, "-m", "examples.mock_llm", "--host", "127.0.0.1",
                                          "--port", str(port), "--latency", "none"], cwd=ROOT,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.base_url = f"http://127.0.0.1:{port}/v1"
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(self.base_url + "/models", headers={"Authorization": "Bearer k"}, timeout=1,
                              trust_env=False)
                    break
                except httpx.HTTPError:
                    if time.monotonic() > deadline or self.proc.poll() is not None:
                        raise RuntimeError("the mock LLM server did not start") from None
                    time.sleep(0.1)

    def client(self) -> Any:
        import openai

        if self.mode == "server":
            return openai.OpenAI(base_url=self.base_url, api_key="sk-bench", max_retries=0,
                                 http_client=httpx.Client(trust_env=False))
        sys.path.insert(0, str(ROOT / "bench"))
        import sdk_overhead

        return sdk_overhead.StubClient() if self.mode == "stub" else sdk_overhead.make_client()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)


def openai_call(client: Any) -> Callable[[], None]:
    def call() -> None:
        client.chat.completions.create(model=MODEL, messages=MESSAGES)

    return call


def manual_call() -> None:
    with inferwatch.llm_call(model=MODEL, provider="openai") as call:
        call.usage(input_tokens=21, output_tokens=8)


def paced(call: Callable[[], None], rate: float, seconds: float) -> tuple[int, float, int]:
    """Calls at ``rate``/s for ``seconds`` (1 ms ticks); (calls made, seconds taken, calls that raised)."""
    made = failed = 0
    start = time.perf_counter()
    end = start + seconds
    while True:
        now = time.perf_counter()
        if now >= end:
            break
        due = int((now - start) * rate) - made
        for _ in range(min(due, 100)):  # a client slower than the rate falls behind; the rate printed says so
            try:
                call()
            except Exception:  # noqa: BLE001 - counted: the bench measures the SDK, not the mock
                failed += 1
            made += 1
        time.sleep(0.001)
    return made, time.perf_counter() - start, failed


# --- one run -----------------------------------------------------------------------------------------------------
@dataclass
class RunResult:
    scenario: str
    calls: int
    seconds: float
    failed_calls: int
    exported: int
    dropped: dict[str, int]
    queued: int
    in_flight: int
    rows: int
    flush_s: float
    flushed: bool
    requests: int
    most_in_flight: int
    load: tuple[float, float, float] = field(default_factory=os.getloadavg)

    @property
    def dropped_total(self) -> int:
        """Spans dropped (``metrics_queue_full`` counts call rows for the histograms, not spans)."""
        return sum(v for k, v in self.dropped.items() if not k.startswith("metrics_"))

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    @property
    def ok(self) -> bool:
        return self.dropped_total == 0 and self.rows == self.calls and self.failed_calls == 0


def run_one(scenario: str, collector: Collector, key: str, llm: MockLLM, rate: float, seconds: float,
            flush_timeout: float) -> RunResult:
    inferwatch.init(endpoint=collector.url, api_key=key, service_name=f"bench-{scenario}")
    try:
        if scenario == "openai":
            client = inferwatch.wrap_openai(llm.client())
            call = openai_call(client)
        else:
            call = manual_call
        call()  # warm: the first call imports and builds what later calls reuse (its span counts too)
        window_start = datetime.now(timezone.utc) - timedelta(minutes=5)
        made, took, failed = paced(call, rate, seconds)
        made += 1
        t = time.perf_counter()
        flushed = inferwatch.flush(timeout=flush_timeout)
        flush_s = time.perf_counter() - t
        stats = inferwatch.stats()
        senders = getattr(inferwatch.client.get_pipeline().span_export, "senders", None)  # None: an older SDK
        rows = collector.calls(key, window_start, datetime.now(timezone.utc) + timedelta(minutes=5))
        dropped = {k: v for k, v in stats["dropped"].items() if v}
        return RunResult(scenario, made, took, failed, stats["exported"], dropped, stats["queued"],
                         stats.get("in_flight", 0), rows, flush_s, flushed, senders.requests if senders else 0,
                         senders.most_in_flight if senders else 0)
    finally:
        inferwatch.shutdown()


def show(r: RunResult) -> None:
    log(f"  {r.scenario:7s} calls {r.calls:,} ({r.rate:,.0f}/s, {r.failed_calls} failed) | exported "
        f"{r.exported:,} | spans dropped {r.dropped_total:,} {r.dropped or ''} | left queued {r.queued:,}, "
        f"in flight {r.in_flight:,} | rows {r.rows:,} | flush {r.flush_s:.2f}s "
        f"({'done' if r.flushed else 'TIMED OUT'}) | "
        f"{r.requests:,} requests, at most {r.most_in_flight} in flight | load {r.load[0]:.2f} "
        f"{'PASS' if r.ok else 'FAIL'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--openai-rate", type=float, default=1000.0)
    parser.add_argument("--manual-rate", type=float, default=5000.0)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--llm", choices=("server", "in-process", "stub"), default="server")
    parser.add_argument("--flush-timeout", type=float, default=60.0)
    parser.add_argument("--sdk-src", default=SDK_SRC, help="the SDK tree to import (default: this checkout's)")
    args = parser.parse_args(argv)
    scenarios = [s for s in args.scenarios.split(",") if s]
    workdir = Path(tempfile.mkdtemp(prefix="iw-sdk-vs-collector-"))
    collector = Collector(workdir)
    llm = MockLLM(args.llm) if "openai" in scenarios else MockLLM("none")
    results: list[RunResult] = []
    try:
        log(f"load average {os.getloadavg()[0]:.2f}; SDK from {inferwatch.__file__}; collector in {workdir}")
        collector.cli("migrate")
        keys = {(s, i): collector.make_key(f"bench_{s}_{i}") for s in scenarios for i in range(args.runs)}
        collector.start()
        log(f"collector up on {collector.url} (defaults); {args.seconds:.0f} s per scenario, {args.runs} run(s), "
            f"llm {args.llm}")
        for i in range(args.runs):
            for scenario in scenarios:
                rate = args.openai_rate if scenario == "openai" else args.manual_rate
                result = run_one(scenario, collector, keys[(scenario, i)], llm, rate, args.seconds,
                                 args.flush_timeout)
                results.append(result)
                show(result)
    finally:
        llm.stop()
        collector.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    log("\nmedians:")
    for scenario in scenarios:
        rs = [r for r in results if r.scenario == scenario]
        if not rs:
            continue
        med = statistics.median
        log(f"  {scenario:7s} {len(rs)} run(s): {med(r.rate for r in rs):,.0f} calls/s achieved, calls "
            f"{med(r.calls for r in rs):,.0f}, dropped {med(r.dropped_total for r in rs):,.0f}, rows "
            f"{med(r.rows for r in rs):,.0f}, flush {med(r.flush_s for r in rs):.2f}s, load "
            f"{med(r.load[0] for r in rs):.2f}: {'PASS' if all(r.ok for r in rs) else 'FAIL'} "
            f"(0 dropped and every call a row in every run)")
    return 0


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    sys.exit(main())
