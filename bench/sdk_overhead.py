"""Per-call overhead of the SDK on the real ``openai`` client, and span drops at 5,000 calls/s.

The client talks to an ``httpx.MockTransport`` that returns canned Chat Completions JSON / SSE bytes, so there is
no network and no server: what is left is the client's own work, and, on the instrumented client, the SDK's. Both
clients run in the same process, interleaved run by run, so machine noise hits both alike.

- Overhead: ``--calls`` calls per mode (non-streaming, streaming with ``include_usage``) on each client, in
  ``--runs`` interleaved runs; per run the mean per-call time of each client and their difference; reported: the
  median over runs. The SDK runs with ``capture="off"`` (the default), a span exporter that drops everything and a
  metrics exporter that does nothing, so the export thread's cost is in the measurement but no I/O is.
- Budget guard: the same non-streaming calls with ``inferwatch.budget_guard()`` on (its status, served by a local
  HTTP server, holds exceeded hard budgets of other features and users, so every call runs the full check and
  goes through) against the guard off, alternating run by run: the guard's added time per call.
- Drops: default settings, LLM calls recorded with ``inferwatch.llm_call`` (the path every integration drives;
  the openai client alone costs milliseconds per call and could not be paced at 5,000/s) paced at ``--rate`` per
  second for ``--seconds``, an exporter that takes ``--export-ms`` per batch (a collector round trip), then
  ``inferwatch.stats()["dropped"]``.

Targets: <= 50 µs median added per call; no drops at 5,000 calls/s. Prints a table with PASS/FAIL; never asserts.

    python bench/sdk_overhead.py            # 20k calls per mode
    python bench/sdk_overhead.py --quick    # 2k calls per mode
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sdk" / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.otel_exporters

import httpx  # noqa: E402
import openai  # noqa: E402
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult  # noqa: E402

import inferwatch  # noqa: E402
from inferwatch import budget  # noqa: E402
from tests.otel_exporters import NullMetricExporter  # noqa: E402

MODEL = "gpt-4o-mini"
TARGET_US = 50.0
TARGET_RATE = 5000.0
MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hello in 8 words."}]
WORDS = ["Hell", "o th", "ere,", " fri", "end ", "of m", "ine,", " hi."]


# --- canned responses -------------------------------------------------------------------------------------------
def _completion_json() -> bytes:
    return json.dumps({
        "id": "chatcmpl-bench", "object": "chat.completion", "created": 1_700_000_000,
        "model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": "".join(WORDS), "refusal": None}}],
        "usage": {"prompt_tokens": 21, "completion_tokens": 8, "total_tokens": 29,
                  "prompt_tokens_details": {"cached_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0}},
    }).encode()


def _sse() -> bytes:
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1_700_000_000,
            "model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_bench"}
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                    "finish_reason": None}]}]
    chunks += [{**base, "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}]} for w in WORDS]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    chunks.append({**base, "choices": [], "usage": {"prompt_tokens": 21, "completion_tokens": 8,
                                                    "total_tokens": 29}})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


COMPLETION, STREAM = _completion_json(), _sse()


def handler(request: httpx.Request) -> httpx.Response:
    if b'"stream":true' in request.content.replace(b" ", b""):
        return httpx.Response(200, content=STREAM, headers={"content-type": "text/event-stream"})
    return httpx.Response(200, content=COMPLETION, headers={"content-type": "application/json"})


def make_client() -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-bench", base_url="http://mock.invalid/v1", max_retries=0,
                         http_client=httpx.Client(transport=httpx.MockTransport(handler)))


# --- exporters ----------------------------------------------------------------------------------------------------
class NullSpanExporter(SpanExporter):
    """Drops every span; ``delay_s`` per batch stands for a collector round trip."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.spans = 0

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        self.spans += len(spans)
        if self.delay_s:
            time.sleep(self.delay_s)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True




def start_sdk(exporter: SpanExporter) -> None:
    inferwatch.init(exporter=exporter, endpoint="http://127.0.0.1:9", api_key="iwk_bench",
                    metric_exporter=NullMetricExporter())


# --- calls --------------------------------------------------------------------------------------------------------
def call_plain(client: openai.OpenAI) -> None:
    client.chat.completions.create(model=MODEL, messages=MESSAGES)


def call_stream(client: openai.OpenAI) -> None:
    for _ in client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True,
                                            stream_options={"include_usage": True}):
        pass


def per_call_us(fn: Any, client: openai.OpenAI, n: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(n):
        fn(client)
    return (time.perf_counter_ns() - t0) / n / 1000


def overhead(fn: Any, bare: openai.OpenAI, wrapped: openai.OpenAI, calls: int, runs: int) -> dict[str, float]:
    n = max(calls // runs, 1)
    for _ in range(min(200, n)):  # warm both paths (imports, caches, the export thread)
        fn(bare)
        fn(wrapped)
    bare_us, sdk_us, diffs = [], [], []
    for i in range(runs):
        gc.collect()
        order = (bare, wrapped) if i % 2 == 0 else (wrapped, bare)  # alternate who goes first
        times = {id(c): per_call_us(fn, c, n) for c in order}
        b, s = times[id(bare)], times[id(wrapped)]
        bare_us.append(b)
        sdk_us.append(s)
        diffs.append(s - b)
    return {"bare_us": statistics.median(bare_us), "sdk_us": statistics.median(sdk_us),
            "added_us": statistics.median(diffs), "ratio": statistics.median(sdk_us) / statistics.median(bare_us),
            "spread_us": (max(diffs) - min(diffs)) if len(diffs) > 1 else 0.0}


class _StatusHandler(BaseHTTPRequestHandler):
    """Serves a budget status with hard budgets exceeded for scopes the bench's calls are not in."""

    body = json.dumps({"generated_at": "2026-01-01T00:00:00Z", "budgets": [
        {"budget_id": f"b{i}", "scope_type": scope, "scope_value": f"other-{i}", "period": "month", "kind": "hard",
         "limit_usd": 10.0, "spent_usd": 12.0, "used_ratio": 1.2, "exceeded": True, "forecast_exceeds": True}
        for i, scope in enumerate(["feature"] * 20 + ["user"] * 20)]}).encode()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


def guard_overhead(calls: int, runs: int) -> dict[str, float]:
    """What the budget guard adds per call: the check every wrapped call runs before the provider call
    (``budget.enforce_request``), timed with a loaded status (budgets exceeded for other scopes: the full check,
    the call proceeds) against the guard off (the check returns at once), alternating run by run."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StatusHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    guard = budget.make_guard(endpoint=f"http://127.0.0.1:{server.server_address[1]}", api_key="iwk_bench",
                              refresh_s=3600)
    request = {"model": MODEL, "messages": MESSAGES}

    def check_us(n: int) -> float:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            budget.enforce_request(request)
        return (time.perf_counter_ns() - t0) / n / 1000

    on_us, off_us = [], []
    try:
        budget.install(guard)
        deadline = time.monotonic() + 10
        while guard.stats()["refreshes_ok"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        loaded = guard.stats()
        with inferwatch.tags(feature="checkout", user_id="bench-user"):
            for _ in range(runs):
                on_us.append(check_us(calls))
                active, budget._active = budget._active, None  # the guard off, its snapshot kept
                off_us.append(check_us(calls))
                budget._active = active
        blocked = guard.stats()["calls_blocked"]
    finally:
        budget.stop()
        server.shutdown()
        server.server_close()
    return {"on_us": statistics.median(on_us), "off_us": statistics.median(off_us),
            "added_us": statistics.median(on_us) - statistics.median(off_us), "budgets": loaded["budgets"],
            "blocked": blocked}


def record_call() -> None:
    """One LLM call's recording without the client's own ~ms of work (which alone caps a core far below
    5,000 calls/s): the same span, metrics and queue path a provider integration drives."""
    with inferwatch.llm_call(model=MODEL, provider="openai") as call:
        call.usage(input_tokens=21, output_tokens=8)
        call.response(text="Hello there, friend of mine, hi.", finish_reason="stop")


def paced(rate: float, seconds: float, export_ms: float) -> dict[str, Any]:
    """Default settings, ``rate`` calls/s for ``seconds``; the drops and the rate achieved."""
    exporter = NullSpanExporter(export_ms / 1000)
    start_sdk(exporter)
    try:
        total = int(rate * seconds)
        interval = 1.0 / rate
        t0 = time.perf_counter()
        for i in range(total):
            due = t0 + i * interval
            while (now := time.perf_counter()) < due:
                if due - now > 0.002:
                    time.sleep(due - now - 0.001)
            record_call()
        elapsed = time.perf_counter() - t0
        inferwatch.flush(30)
        st = inferwatch.stats()
    finally:
        inferwatch.shutdown()
    return {"calls": total, "achieved_rate": total / elapsed, "dropped": sum(st["dropped"].values()),
            "drops_by_reason": {k: v for k, v in st["dropped"].items() if v}, "exported": exporter.spans}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2k calls per mode, 1 s of pacing")
    ap.add_argument("--calls", type=int, help="calls per mode and client (default 20000, --quick 2000)")
    ap.add_argument("--runs", type=int, default=7, help="interleaved runs; the median is reported")
    ap.add_argument("--rate", type=float, default=TARGET_RATE, help="calls/s for the drop test")
    ap.add_argument("--seconds", type=float, help="length of the drop test (default 4, --quick 1)")
    ap.add_argument("--export-ms", type=float, default=5.0, help="simulated export round trip per batch")
    args = ap.parse_args(argv)
    calls = args.calls or (2000 if args.quick else 20_000)
    seconds = args.seconds or (1.0 if args.quick else 4.0)

    print(f"openai {openai.__version__}, inferwatch {inferwatch.__version__}, Python {sys.version.split()[0]}; "
          f"{calls} calls per mode and client in {args.runs} runs")
    exporter = NullSpanExporter()
    start_sdk(exporter)
    try:
        bare, wrapped = make_client(), inferwatch.wrap_openai(make_client())
        results = {"non-streaming": overhead(call_plain, bare, wrapped, calls, args.runs),
                   "streaming": overhead(call_stream, bare, wrapped, calls, args.runs)}
        guard = guard_overhead(calls * 10, args.runs)
        inferwatch.flush(30)
        stats = inferwatch.stats()
    finally:
        inferwatch.shutdown()
    print(f"  spans exported {exporter.spans}, dropped {sum(stats['dropped'].values())}, "
          f"internal errors {sum(stats['internal_errors'].values())}")
    for mode, r in results.items():
        print(f"  {mode:14} bare {r['bare_us']:8.1f} µs/call   with SDK {r['sdk_us']:8.1f} µs/call   "
              f"added {r['added_us']:6.1f} µs (median of {args.runs}; spread {r['spread_us']:.1f})   "
              f"ratio {r['ratio']:.2f}x")

    print(f"  budget guard check ({guard['budgets']} exceeded budgets of other scopes loaded, {guard['blocked']} "
          f"calls blocked): {guard['off_us']:.2f} µs/call off, {guard['on_us']:.2f} on, "
          f"added {guard['added_us']:.2f} µs")

    drops = paced(args.rate, seconds, args.export_ms)
    print(f"  paced: {drops['calls']} calls at {drops['achieved_rate']:.0f}/s (asked {args.rate:.0f}/s), "
          f"exporter {args.export_ms:g} ms/batch: dropped {drops['dropped']} {drops['drops_by_reason'] or ''}, "
          f"exported {drops['exported']}")

    rows = [(f"added per call, {mode}", f"{r['added_us']:.1f} µs", f"<= {TARGET_US:g} µs",
             r["added_us"] <= TARGET_US) for mode, r in results.items()]
    with_guard = results["non-streaming"]["added_us"] + guard["added_us"]
    rows.append(("added per call, non-streaming + budget guard",
                 f"{with_guard:.1f} µs (guard {guard['added_us']:.2f})", f"<= {TARGET_US:g} µs",
                 with_guard <= TARGET_US))
    rate_ok = drops["achieved_rate"] >= 0.95 * args.rate
    rows.append((f"spans dropped at {args.rate:.0f} calls/s", f"{drops['dropped']} of {drops['calls']}"
                 + ("" if rate_ok else f" (only {drops['achieved_rate']:.0f}/s reached)"), "0",
                 drops["dropped"] == 0 and rate_ok))
    width = max(len(r[0]) for r in rows)
    print(f"\n{'metric':{width}}  {'measured':>24}  {'target':>10}  result")
    for name, measured, target, ok in rows:
        print(f"{name:{width}}  {measured:>24}  {target:>10}  {'PASS' if ok else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
