"""Ingest benchmark: OTLP/HTTP spans into the collector on embedded chDB, end to end, against targets.

Two sets of scenarios (``--scenario all``, the default, runs both; every subprocess is stopped on exit, everything
binds 127.0.0.1 only):

* ``classic`` (:mod:`ingest_classic`), the figures quoted in ``bench/README.md`` since issue 2: 32 senders post
  pre-built 512-span requests (a) without content, (b) with ~1 KB of content that the collector must redact,
  (c) as another library's spans (the held path, on a collector of its own); then overload on a collector with
  small queue and in-flight limits (RSS bounded, 503s returned).
* ``exporter`` (:mod:`ingest_exporter`), issue 29: the collector loaded as real OTel exporters load it. 1, 4 and
  32 closed-loop senders with exactly one 512-span request in flight each (a BatchSpanProcessor per app
  process), without content and with ~1 KB of prompt and ~0.5 KB of completion per span (plain prompts;
  ``--content-pii 0.3`` puts PII in 30 % of them, as the demo traffic does); and an open-loop sender
  offering 100 spans/s (50-span requests every 500 ms, our SDK's export schedule) for the acknowledgement latency
  of a quiet app. Each reports queryable spans/s, ack latency p50/p95/p99, collector CPU and RSS, medians of
  ``--runs``.

Both end with the raw chDB insert ceiling, measured in this process after the collectors have stopped (the same
rows through ``Store.insert_columns`` in batches of the collector's flush size on a migrated store), and a table of
targets, measurements and PASS/FAIL (no asserts; the exit code is 0 unless the bench itself could not run).
Request bodies: :mod:`ingest_payloads`; sender models: :mod:`ingest_clients`; the collector subprocess:
:mod:`ingest_collector`.

Run: ``.venv/bin/python bench/ingest.py`` (all), ``--scenario exporter`` (issue 29's must-show table) or
``--scenario classic``; ``--quick`` for a smaller run.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: examples/ lives in the checkout
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from ingest_classic import Classic, run_classic  # noqa: E402
from ingest_collector import Collector  # noqa: E402
from ingest_exporter import (ExporterResult, ExporterScenario, print_comparison, print_results,  # noqa: E402
                             run_exporter)
from ingest_payloads import THIRD_PARTY_SCOPE, build_payloads  # noqa: E402
from ingest_phases import CeilingResult, run_ceiling  # noqa: E402
from ingest_report import TableLine, fmt_ms, fmt_rate, log, print_table  # noqa: E402

# issue 29's must-show figures, exporter-shaped scenarios (queryable spans/s unless said otherwise)
TARGET_1_NO_CONTENT = 4_000
TARGET_1_CONTENT = 2_000
TARGET_PACED_P50_S = 0.150
TARGET_4_CONTENT = 5_000
TARGET_32_NO_CONTENT = 28_000
TARGET_32_CONTENT = 10_000
TARGET_32_CEILING_SHARE = 0.40


def _in_flight_list(text: str) -> list[int]:
    values = [int(v) for v in text.split(",") if v.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of positive integers, e.g. 1,4,32")
    return values


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError("a share between 0 and 1, e.g. 0.3")
    return value


def exporter_scenarios(args: argparse.Namespace) -> list[ExporterScenario]:
    """The scenario table: per requests-in-flight count, without and with content; then the paced sender."""
    out = []
    for n in args.exporter_in_flight:
        requests = args.exporter_requests or (max(4, 2 * n) if args.quick else max(16, 6 * n))
        for content in (False, True):
            out.append(ExporterScenario(f"{n} in flight, {'with' if content else 'no'} content", n, content,
                                        requests, args.spans_per_request))
    if args.paced_rate > 0:
        interval_s = args.paced_interval_ms / 1000
        spans = max(1, round(args.paced_rate * interval_s))
        seconds = args.paced_seconds or (6.0 if args.quick else 20.0)
        out.append(ExporterScenario(f"paced {args.paced_rate:g} spans/s, content", 0, True,
                                    max(2, round(seconds / interval_s)), spans, interval_s))
    return out


def exporter_lines(results: Sequence[ExporterResult], ceiling: CeilingResult, *, ceiling_line: bool = True
                   ) -> list[TableLine]:
    """Issue 29's targets, for the scenarios that ran (``ceiling_line``: with the ceiling itself, for
    information)."""
    by_key = {(r.scenario.in_flight, r.scenario.content): r for r in results if r.runs}

    def rate(n: int, content: bool, goal: int) -> list[TableLine]:
        r = by_key.get((n, content))
        if r is None:
            return []
        q = r.queryable_per_s
        return [(f"{r.scenario.name}: queryable spans/s", f">= {goal:,}", f"{q:,.0f}", q >= goal)]

    lines = rate(1, False, TARGET_1_NO_CONTENT) + rate(1, True, TARGET_1_CONTENT)
    paced = by_key.get((0, True))
    if paced is not None:
        p50 = paced.latency(50)
        lines.append((f"{paced.scenario.name}: ack p50", f"<= {TARGET_PACED_P50_S * 1000:.0f} ms", fmt_ms(p50),
                      p50 <= TARGET_PACED_P50_S))
    lines += rate(4, True, TARGET_4_CONTENT) + rate(32, False, TARGET_32_NO_CONTENT) + \
        rate(32, True, TARGET_32_CONTENT)
    if ceiling_line:
        lines.append(("chDB insert ceiling rows/s (info)", "-", f"{ceiling.rows_per_s:,.0f}", None))
    r32 = by_key.get((32, False))
    if r32 is not None and ceiling.rows_per_s:
        share = r32.queryable_per_s / ceiling.rows_per_s
        lines.append(("32 in flight, no content / ceiling", f">= {TARGET_32_CEILING_SHARE:.0%}", f"{share:.0%}",
                      share >= TARGET_32_CEILING_SHARE))
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/ingest.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=("all", "classic", "exporter"), default="all",
                        help="classic: (a)/(b)/(c)/overload at --senders; exporter: issue 29's exporter-shaped "
                             "scenarios; all: both (default). Each ends with the raw chDB insert ceiling.")
    parser.add_argument("--quick", action="store_true", help="smaller run for a quick look")
    parser.add_argument("--reps", "--runs", type=int, default=3, dest="reps",
                        help="repetitions per scenario, medians reported (default 3)")
    parser.add_argument("--spans-per-request", type=int, default=512)
    parser.add_argument("--requests", type=int, default=None,
                        help="classic: requests per rep without content (default 160; --quick 40)")
    parser.add_argument("--content-requests", type=int, default=None,
                        help="classic: requests per rep with content (default 40; --quick 8)")
    parser.add_argument("--senders", type=int, default=32,
                        help="classic: concurrent sender threads (default 32: enough 512-span requests in flight "
                             "to fill the collector's 10,000-row flush)")
    parser.add_argument("--exporter-in-flight", type=_in_flight_list, default=[1, 4, 32],
                        help="exporter: closed-loop sender counts, one request in flight each (default 1,4,32)")
    parser.add_argument("--exporter-requests", type=int, default=None,
                        help="exporter: requests per run of each scenario (default max(16, 6 x in flight); "
                             "--quick max(4, 2 x in flight))")
    parser.add_argument("--exporter-scope", choices=("ours", "other"), default="ours",
                        help="exporter: the spans' instrumentation scope: ours (inferwatch-*, written at once; "
                             f"default) or other ({THIRD_PARTY_SCOPE}: held for the pairing window)")
    parser.add_argument("--content-pii", type=_share, default=0.0, metavar="SHARE",
                        help="exporter scenarios: share of content samples whose prompt carries PII (default 0: "
                             "plain LLM calls, as the issue describes them; the demo traffic has 0.3)")
    parser.add_argument("--baseline-source", metavar="DIR",
                        help="exporter: also run every scenario on a collector running DIR's code (e.g. `git "
                             "archive <commit> | tar -x -C DIR`), interleaved with this checkout's, and print both "
                             "and their ratios")
    parser.add_argument("--paced-rate", type=float, default=100.0,
                        help="exporter: spans/s offered by the open-loop sender (default 100; 0: skip it)")
    parser.add_argument("--paced-interval-ms", type=float, default=500.0,
                        help="exporter: one request every this many ms (default 500, the SDK's schedule delay)")
    parser.add_argument("--paced-seconds", type=float, default=None, help="default 20 (--quick 6)")
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
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    ceiling_rows = args.ceiling_rows or (30_000 if args.quick else 100_000)
    try:
        from inferwatch_collector.settings import Settings

        defaults = Settings(clickhouse_url="")
        flush_rows, pairing_window_s = defaults.flush_rows, defaults.pairing_window_s
    except Exception:
        flush_rows, pairing_window_s = 10_000, 10.0
    if args.flush_rows is not None:
        flush_rows = args.flush_rows
    spr = args.spans_per_request

    from google.protobuf.internal import api_implementation

    log(f"inferwatch ingest bench — {os.cpu_count()} CPUs, protobuf backend {api_implementation.Type()}, "
        f"scenarios {args.scenario}, {spr} spans/request, {args.reps} reps; load average "
        f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    workdir = Path(tempfile.mkdtemp(prefix="inferwatch-bench-"))
    collectors: list[Collector] = []
    opened: list[httpx.Client] = []
    started = time.perf_counter()
    try:
        classic: Classic | None = None
        if args.scenario in ("all", "classic"):
            classic = run_classic(args, workdir, collectors, opened, flush_rows=flush_rows,
                                  pairing_window_s=pairing_window_s)
        exporter: dict[str, list[ExporterResult]] = {}
        if args.scenario in ("all", "exporter"):
            scenarios = exporter_scenarios(args)
            log(f"\n[E] exporter-shaped scenarios on one collector at defaults, scope {args.exporter_scope}, "
                f"content with PII in {args.content_pii:.0%} of prompts, {args.reps} runs each: "
                + "; ".join(f"{s.name} ({s.requests} x {s.spans_per_request} spans)" for s in scenarios))
            other = args.exporter_scope == "other"
            arms: dict[str, dict[str, str]] = {"this checkout": {}}
            if args.baseline_source:
                src = Path(args.baseline_source).resolve()
                arms[f"baseline {src}"] = {"PYTHONPATH": f"{src}/collector:{src}/server:{src}/sdk/src"}
            exporter = run_exporter(scenarios, args.reps, workdir, collectors, opened, seed=args.seed,
                                    scope=THIRD_PARTY_SCOPE if other else None, arms=arms,
                                    queryable_timeout_s=pairing_window_s + 90 if other else 120.0,
                                    pii_share=args.content_pii)

        log(f"\n[C] raw chDB insert ceiling: {ceiling_rows:,} llm_calls rows in batches of {flush_rows:,}, "
            "migrated store (materialized views run)")
        if classic is not None:
            bodies, content_bodies = classic.ceiling_bodies, classic.content_bodies
        else:
            bodies = build_payloads(math.ceil(ceiling_rows / spr), spr, with_content=False, seed=args.seed + 500)
            content_bodies = build_payloads(4, spr, with_content=True, seed=args.seed + 501)
        ceiling = run_ceiling(workdir, bodies, content_bodies, ceiling_rows, flush_rows)
        log(f"  insert: {fmt_rate(ceiling.rows_per_s)} rows; decode+normalize alone (one core, this process): "
            f"{fmt_rate(ceiling.normalize_spans_per_s)} spans without content, "
            f"{fmt_rate(ceiling.normalize_content_spans_per_s)} with content")

        for arm, results in exporter.items():
            if len(exporter) > 1:
                log(f"\n{arm}:")
            print_results(results)
        if len(exporter) > 1:
            print_comparison(exporter)
        mine = next(iter(exporter.values()), [])
        lines = (classic.lines(ceiling) if classic is not None else []) + \
            (exporter_lines(mine, ceiling, ceiling_line=classic is None) if mine else [])
        print_table(lines, width=116, name_width=52)
        log(f"total bench time {time.perf_counter() - started:.0f}s; load average now "
            f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}"
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
