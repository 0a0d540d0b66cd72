"""The ingest bench's original scenarios, at a fixed concurrency (``--senders``, default 32) on collector
defaults: (a) no content and (b) with content on one collector, (c) another library's spans (the held path) on a
collector of its own, then overload on a third (RSS bounded, 503s returned). Their figures are quoted in
``bench/README.md``; what they measure does not change. The verdict needs the raw chDB insert ceiling, measured
once by the caller for every scenario of the run."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import httpx

from ingest_clients import make_clients, send_all
from ingest_collector import Collector
from ingest_payloads import THIRD_PARTY_SCOPE, build_payloads, llm_calls_per_request, rescoped
from ingest_phases import CeilingResult, RepResult, Sampler, run_overload, run_reps
from ingest_report import MiB, TableLine, fmt_rate, log, median_min_max

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


@dataclass
class Classic:
    """What the original scenarios leave for the ceiling (its bodies) and for the verdict (:meth:`lines`)."""

    ceiling_bodies: list[bytes]
    content_bodies: list[bytes]
    lines: Callable[[CeilingResult], list[TableLine]]


def run_classic(args: argparse.Namespace, workdir: Path, collectors: list[Collector],
                opened: list[httpx.Client], *, flush_rows: int, pairing_window_s: float) -> Classic:
    """Scenarios (a), (b), (c) and overload, logged as they run; collectors and clients are appended to
    ``collectors``/``opened`` so the caller stops and closes them whatever happens."""
    n_a = args.requests or (40 if args.quick else 160)
    n_b = args.content_requests or (8 if args.quick else 40)
    overload_s = args.overload_seconds or (6.0 if args.quick else 20.0)
    held_timeout_s = pairing_window_s + (30.0 if args.quick else 90.0)
    spr = args.spans_per_request
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
    log(f"  {over.acks:,} requests acknowledged ({fmt_rate(over.acked_spans_per_s)} spans), "
        f"{over.rejected_503:,} answered 503, {over.failures} failed")
    over_collector.stop()

    def lines(ceiling: CeilingResult) -> list[TableLine]:
        qa = median_min_max([r.queryable_per_s for r in results["a"]])
        aa = median_min_max([r.acked_per_s for r in results["a"]])
        qb = median_min_max([r.queryable_per_s for r in results["b"]])
        ab = median_min_max([r.acked_per_s for r in results["b"]])
        share = qa[0] / ceiling.rows_per_s if ceiling.rows_per_s else 0.0
        ac = median_min_max([r.acked_per_s for r in results["c"]])
        ack_share = ac[0] / aa[0] if aa[0] else 0.0
        lag_a = median_min_max([r.ack_to_queryable_s for r in results["a"]])
        c_done = all(r.queryable_per_s for r in results["c"])
        if c_done:
            qc = median_min_max([r.queryable_per_s for r in results["c"]])
            lag_c = median_min_max([r.ack_to_queryable_s for r in results["c"]])
            qc_text = f"{qc[0]:,.0f} [{qc[1]:,.0f}–{qc[2]:,.0f}]"
            lag_c_text = f"{lag_c[0]:.1f} s [{lag_c[1]:.1f}–{lag_c[2]:.1f}]"
        else:
            stuck = next(r for r in results["c"] if not r.queryable_per_s)
            qc_text = lag_c_text = f"{stuck.queryable_calls:,}/{stuck.spans:,} after {held_timeout_s:.0f}s"
        settle_goal = pairing_window_s + TARGET_HELD_SETTLE_SLACK_S
        return [
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

    return Classic([b for run in a_runs for b in run], b_runs[0], lines)
