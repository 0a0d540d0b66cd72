"""Hostile bodies: small gzip requests that inflate to ~15 MiB of JSON, on every body-decoding route, against a
real collector process; its memory, its ``/healthz`` latency, and another project's latency meanwhile.

Scenarios (each on a fresh ``inferwatch-server collector`` with its default settings unless ``--env`` says
otherwise; everything binds 127.0.0.1; the data directories are temporary):

1. **flood**: ``--per-route`` (10) bodies on each of ``/v1/metrics``, ``/v1/traces``, ``/v1/logs`` and
   ``/api/v1/feedback``, all at once, one project. Printed: the collector's RSS growth (process tree, peak minus
   idle, sampled every 50 ms), ``/healthz`` latency p50/p99/max (polled every 20 ms throughout), the answers.
2. **fairness**: project A posts 6 such bodies to ``/v1/traces``; 0.5 s later project B posts one small
   protobuf trace request. Printed: B's answer and its latency (the issue measured 14.6 s).

``--source DIR`` runs the collector from another checkout (``git archive 8ddbb12 | tar -x -C DIR``) for the
before figure; this process stays on the current one.

Run: ``.venv/bin/python bench/hostile_bodies.py`` (about a minute) and, for the before figure,
``.venv/bin/python bench/hostile_bodies.py --source /tmp/before``. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from tests.helpers import payloads  # noqa: E402
from tests.helpers.collector_process import collector_process  # noqa: E402
from tests.helpers.hostile_bodies import ROUTES, Flood, Probe, hostile_body  # noqa: E402

MIB = 1024 * 1024


def _env(args: argparse.Namespace) -> dict[str, str]:
    env = dict(pair.split("=", 1) for pair in args.env)
    if args.source:
        src = Path(args.source).resolve()
        env["PYTHONPATH"] = f"{src}/collector:{src}/server:{src}/sdk/src"
    return env


def _ms(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000 if ordered else float("nan")


def flood(args: argparse.Namespace, workdir: Path) -> None:
    bodies = [(route, hostile_body(route, args.mib, salt)) for route in ROUTES for salt in range(args.per_route)]
    sizes = ", ".join(f"{route} {len(body) // 1024} KiB" for route, body in bodies[::args.per_route])
    print(f"flood: {len(bodies)} gzip bodies inflating to ~{args.mib} MiB each ({sizes})")
    with collector_process(workdir / "flood" / "data", env=_env(args)) as collector:
        time.sleep(1.0)
        probe = Probe(collector.url, collector.pid)
        idle = probe.tree_rss()
        started = time.perf_counter()
        with Flood(collector.url, collector.keys["p1"], bodies, timeout_s=120) as sender, probe:
            statuses = sender.send()
        took = time.perf_counter() - started
    by_route = {route: Counter(statuses[i * args.per_route:(i + 1) * args.per_route]) for i, route in
                enumerate(ROUTES)}
    print(f"  RSS idle {idle / MIB:.0f} MiB, peak growth {(max(probe.rss) - idle) / MIB:.0f} MiB")
    print(f"  /healthz over {len(probe.latencies_s)} polls: p50 {_ms(probe.latencies_s, 0.5):.0f} ms, "
          f"p99 {_ms(probe.latencies_s, 0.99):.0f} ms, max {max(probe.latencies_s) * 1000:.0f} ms")
    print(f"  answers in {took:.1f} s: " + "; ".join(f"{route} {dict(sorted(c.items()))}"
                                                   for route, c in by_route.items()))


def fairness(args: argparse.Namespace, workdir: Path) -> None:
    bodies = [("/v1/traces", hostile_body("/v1/traces", args.mib, salt)) for salt in range(6)]
    small = payloads.make_request(payloads.otel_genai_span()).SerializeToString()
    print(f"fairness: project A posts 6 x /v1/traces bodies inflating to ~{args.mib} MiB; B posts one small "
          "request 0.5 s later")
    with collector_process(workdir / "fair" / "data", env=_env(args)) as collector:
        with Flood(collector.url, collector.keys["p1"], bodies, timeout_s=120) as sender:
            result: dict[str, list[int]] = {}
            started_a = time.perf_counter()
            thread = threading.Thread(target=lambda: result.setdefault("a", sender.send()))
            thread.start()
            time.sleep(0.5)
            started = time.perf_counter()
            answer = httpx.post(collector.url + "/v1/traces", content=small, timeout=60, trust_env=False,
                                headers={"Authorization": f"Bearer {collector.keys['p2']}",
                                         "Content-Type": "application/x-protobuf"})
            b_latency = time.perf_counter() - started
            thread.join(180)
            a_took = time.perf_counter() - started_a
    print(f"  B: {answer.status_code} in {b_latency:.2f} s; A's answers {dict(Counter(result.get('a', [])))} "
          f"after {a_took:.1f} s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-route", type=int, default=10)
    parser.add_argument("--mib", type=float, default=15.0, help="decompressed size of each body")
    parser.add_argument("--source", help="checkout whose collector code the collector runs (before figure)")
    parser.add_argument("--env", action="append", default=[], help="INFERWATCH_X=value for the collector")
    parser.add_argument("--only", choices=("flood", "fairness"))
    args = parser.parse_args(argv)
    print(f"collector code: {args.source or ROOT}; settings: {args.env or 'defaults'}")
    with tempfile.TemporaryDirectory(prefix="iw-hostile-") as tmp:
        if args.only in (None, "flood"):
            flood(args, Path(tmp))
        if args.only in (None, "fairness"):
            fairness(args, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
