"""The app's OpenAI calls while the collector is down, failing, throttling, hanging or slow, for minutes.

Issue 3: "collector down, slow or returning 500 for minutes: the app's latency is unaffected and drops are
counted". The tests show it for seconds (tests/sdk/test_telemetry.py, test_disk_buffer.py); this runs each
collector state for ``--seconds`` (default 120) against the SDK with default settings, while the app makes real
``openai`` client calls on ``bench/sdk_overhead.py``'s mock transport, paced at ``--rate`` steps/s (each step one
non-streamed and one streamed call with the SDK, and the same two without it, in a drawn order: the pairs of
``sdk_overhead``; each step begins with an untimed call without the SDK, which takes the cold caches the pause
left: timed, that penalty fell on whichever arm was drawn first and spread the differences over two modes). The
collector states, each a stand-in collector in its own process (or none):

* ``healthy``: answers 200 after 5 ms (the reference);
* ``refused``: nothing listens on the port (a collector that is down);
* ``500``: answers 500 at once (a broken collector: not retried, the batch is dropped);
* ``503``: answers 503 with ``Retry-After: 1`` (an overloaded one: retried within the export timeout);
* ``hanging``: accepts the connection and never answers (each export attempt waits for its timeout, 10 s);
* ``slow``: answers 200 after 2 s (the export thread falls behind; the queue fills).

Printed per state: the added µs per call (median of the pairs' differences with its 95 % CI, non-streamed and
streamed), for each 30 s slice too (latency that grows as the outage goes on would show there); the p99 and the
slowest call of each arm; what happened to the recorded spans (exported, dropped by reason, still queued: their
sum must equal the calls recorded, nothing lost silently); the process's resident memory growth over the state
(the queue is bounded at 32,768 spans); the export thread's share of a core.

Targets: in every state <= 50 µs median added per call (issue 3's overhead target), p99 added <= 1 ms (no call
waits on the collector), every recorded span accounted for, resident memory growth <= 100 MiB. Prints a table
with PASS/FAIL; never asserts.

    python bench/sdk_outage.py                 # 120 s per state, about 13 minutes
    python bench/sdk_outage.py --seconds 20    # a quicker look (indicative)
"""

from __future__ import annotations

import argparse
import math
import random
import socket
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sdk_overhead as bench  # noqa: E402  (puts sdk/src on the path too)

import inferwatch  # noqa: E402
from inferwatch import client as iw_client  # noqa: E402

STATES = ("healthy", "refused", "500", "503", "hanging", "slow")
TARGET_MEDIAN_US = 50.0
TARGET_P99_US = 1000.0
TARGET_RSS_MIB = 100.0
SLICE_S = 30.0
WARM_PAIRS = 100  # per mode, before the timed steps (their spans are counted too: the pipeline is fresh)


# --- the stand-in collector --------------------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = "healthy"

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.state == "hanging":
            time.sleep(3600)  # never answers; the SDK's attempt times out
            return
        if self.state in ("healthy", "slow"):
            time.sleep(0.005 if self.state == "healthy" else 2.0)
            status, headers = 200, {}
        elif self.state == "503":
            status, headers = 503, {"Retry-After": "1"}
        else:
            status, headers = 500, {}
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True


def serve(state: str) -> None:
    """Run the stand-in collector in this (sub)process: prints its port, serves until killed."""
    _Handler.state = state
    server = _Server(("127.0.0.1", 0), _Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


class Collector:
    """A stand-in collector in its own process, or for ``refused`` a port nothing listens on."""

    def __init__(self, state: str) -> None:
        self.proc: subprocess.Popen[str] | None = None
        if state == "refused":
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]  # closed again: connections to it are refused
        else:
            self.proc = subprocess.Popen([sys.executable, __file__, "--serve", state], stdout=subprocess.PIPE,
                                         text=True)
            port = int(self.proc.stdout.readline())  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)


# --- one state ---------------------------------------------------------------------------------------------------
def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return math.nan


def run_state(state: str, seconds: float, rate: float, seed: int) -> dict[str, Any]:
    """``seconds`` of paced steps with the collector in ``state``: what the app saw, what became of the spans."""
    collector = Collector(state)
    try:
        inferwatch.init(endpoint=collector.url, api_key="iwk_bench")  # default settings otherwise
        pipeline = iw_client.get_pipeline()
        client = inferwatch.wrap_openai(bench.make_client())
        toggle = bench.Toggle(client)
        for fn in (bench.call_plain, bench.call_stream):
            bench.paired(fn, client, toggle, WARM_PAIRS)  # warm both arms
        rss0, cpu0 = rss_mib(), bench.export_cpu_s(pipeline)
        draw = random.Random(f"{seed}:{state}").getrandbits
        clock = time.perf_counter_ns
        rows: list[tuple[float, str, int, int]] = []  # (seconds in, mode, ns with the SDK, ns without)
        t0 = time.perf_counter()
        step = 0
        while (now := time.perf_counter() - t0) < seconds:
            toggle.set(False)
            bench.call_plain(client)  # untimed: the first call after the pause pays for the cold caches alone
            for mode, fn in (("non-streaming", bench.call_plain), ("streaming", bench.call_stream)):
                took = {}
                for arm in ((True, False) if draw(1) else (False, True)):
                    toggle.set(arm)
                    start = clock()
                    fn(client)
                    took[arm] = clock() - start
                rows.append((now, mode, took[True], took[False]))
            step += 1
            wait = step / rate - (time.perf_counter() - t0)
            if wait > 0:
                time.sleep(wait)
        elapsed = time.perf_counter() - t0
        toggle.set(True)
        export_share = (bench.export_cpu_s(pipeline) - cpu0) / elapsed
        rss_growth = rss_mib() - rss0
        queued_end = inferwatch.stats()["queued"]
        inferwatch.shutdown(30)  # what is still queued after 30 s is counted as dropped (shutdown)
        if pipeline._thread is not None:
            pipeline._thread.join(30)  # an export attempt in flight (10 s at most) ends and is counted
        after = pipeline.stats()
    finally:
        inferwatch.shutdown()
        collector.stop()
    dropped = {reason: n for reason, n in after["dropped"].items() if n}
    return {"rows": rows, "elapsed": elapsed,
            "recorded": len(rows) + 2 * WARM_PAIRS,  # one call with the SDK per row, and the warm-up's
            "accounted": after["exported"] + sum(dropped.values()) + after["queued"],
            "exported": after["exported"], "dropped": dropped, "queued_end": queued_end, "rss_growth": rss_growth,
            "export_share": export_share}


# --- report ------------------------------------------------------------------------------------------------------
def _p(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(int(q * len(s)), len(s) - 1)]


def summarise(result: dict[str, Any], mode: str) -> dict[str, Any]:
    rows = [r for r in result["rows"] if r[1] == mode]
    diffs = [(on - off) / 1000 for _, _, on, off in rows]
    on, off = [r[2] / 1000 for r in rows], [r[3] / 1000 for r in rows]
    slices: list[tuple[float, float]] = []
    start = 0.0
    while start < result["elapsed"]:
        part = [(a - b) / 1000 for t, _, a, b in rows if start <= t < start + SLICE_S]
        if len(part) >= 20:
            slices.append((start, bench.median_ci(part)[0]))
        start += SLICE_S
    return {"median": bench.median_ci(diffs), "p99_on": _p(on, 0.99), "p99_off": _p(off, 0.99),
            "max_on": max(on), "max_off": max(off), "slices": slices, "calls": len(rows)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=120.0, help="per collector state (default 120)")
    ap.add_argument("--rate", type=float, default=100.0,
                    help="steps per second (each: a non-streamed and a streamed call with and without the SDK)")
    ap.add_argument("--states", default=",".join(STATES), help=f"comma-separated, of {', '.join(STATES)}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--serve", choices=STATES, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.serve)
        return 0
    states = [s for s in args.states.split(",") if s]
    unknown = set(states) - set(STATES)
    if unknown:
        ap.error(f"unknown states: {', '.join(sorted(unknown))}")
    print(f"openai {bench.openai.__version__}, inferwatch {inferwatch.__version__}, Python "
          f"{sys.version.split()[0]}; {args.seconds:.0f} s per collector state at {args.rate:.0f} steps/s "
          f"(each step: a non-streamed and a streamed call with the SDK and without)")
    verdicts: list[tuple[str, str, str, bool]] = []
    started = time.perf_counter()
    for state in states:
        result = run_state(state, args.seconds, args.rate, args.seed)
        print(f"  {state}: {result['recorded']} calls recorded ({2 * WARM_PAIRS} of them warming up) in "
              f"{result['elapsed']:.0f} s; spans exported "
              f"{result['exported']}, dropped {result['dropped'] or 0}, queued at the end "
              f"{result['queued_end']}; accounted {result['accounted']} of {result['recorded']}; resident memory "
              f"{result['rss_growth']:+.1f} MiB; export thread {result['export_share']:.1%} of a core", flush=True)
        worst_median, worst_p99 = 0.0, 0.0
        for mode in ("non-streaming", "streaming"):
            s = summarise(result, mode)
            med, lo, hi = s["median"]
            p99_added = s["p99_on"] - s["p99_off"]
            slices = ", ".join(f"{m:.1f}" for _, m in s["slices"])
            print(f"    {mode:13} added {med:6.1f} µs (95% CI {lo:.1f} to {hi:.1f}); per {SLICE_S:.0f} s: {slices}"
                  f"; p99 {s['p99_on']:.0f} vs {s['p99_off']:.0f} µs bare (added {p99_added:+.0f}); slowest "
                  f"{s['max_on']:.0f} vs {s['max_off']:.0f} µs", flush=True)
            worst_median, worst_p99 = max(worst_median, med), max(worst_p99, p99_added)
        verdicts += [
            (f"{state}: median added per call (worst mode)", f"{worst_median:.1f} µs",
             f"<= {TARGET_MEDIAN_US:.0f} µs", worst_median <= TARGET_MEDIAN_US),
            (f"{state}: p99 added per call (worst mode)", f"{worst_p99:+.0f} µs", f"<= {TARGET_P99_US:.0f} µs",
             worst_p99 <= TARGET_P99_US),
            (f"{state}: spans accounted for", f"{result['accounted']} of {result['recorded']}", "all",
             result["accounted"] == result["recorded"]),
            (f"{state}: resident memory growth", f"{result['rss_growth']:+.1f} MiB",
             f"<= {TARGET_RSS_MIB:.0f} MiB", result["rss_growth"] <= TARGET_RSS_MIB),
        ]
    print(f"  total {time.perf_counter() - started:.0f} s")
    bench.print_verdicts(verdicts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
