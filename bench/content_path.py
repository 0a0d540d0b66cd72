"""Content-path benchmark: what one ingest worker spends per exporter-shaped span with content, this checkout
against another checkout's code, and the redactor alone on the same texts.

What ``bench/ingest.py --scenario exporter`` is bound by with content on 2 cores is the worker's CPU: decode,
normalise, redact (prompt and completion of every span), price and encode (``ingest.process_request``). This
measures exactly that, on one core, without HTTP or the database, so two revisions can be compared on a shared
machine with little noise:

* bodies: ``bench/ingest_payloads.exporter_payloads`` (512 LLM-call spans per request, ~1 KB prompt and ~0.5 KB
  completion per span, the demo traffic's content pool, PII in part of it), built once;
* arms: this checkout, and with ``--baseline-source DIR`` the code of ``DIR`` (``git archive <commit> | tar -x -C
  DIR``), each in its own subprocess (``PYTHONPATH`` to its ``collector``, ``server`` and ``sdk/src``), run
  alternately ``--rounds`` times, so a busy moment of the machine hits both;
* per arm and round: spans/s of ``process_request`` (process CPU time, after a warm-up pass), µs per text of
  ``DEFAULT_REDACTOR.redact`` over the content texts of the same bodies, and the best of 5 passes over the texts
  without findings and over those with findings (the two halves of the redactor's time, the least noisy figure).

Prints medians (min-max) per arm and the ratio of medians. No asserts. Run:
``.venv/bin/python bench/content_path.py --baseline-source /tmp/base [--rounds 5] [--requests 8]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(requests: int, seed: int) -> dict[str, float]:
    """One round in this process: spans/s of process_request, µs per content text of redact()."""
    sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]
    from ingest_payloads import exporter_payloads

    import inferwatch_collector.normalize.content as content
    from inferwatch.redaction import DEFAULT_REDACTOR
    from inferwatch_collector.ingest import process_request

    bodies = exporter_payloads(requests, 512, with_content=True, seed=seed)
    texts: list[str] = []
    original = content._redact_capped

    def keep(redactor, text, totals):  # type: ignore[no-untyped-def]
        texts.append(text)
        return original(redactor, text, totals)

    def run() -> int:
        spans = 0
        for body in bodies:
            result = process_request(body, "application/x-protobuf", None, "bench", max_bytes=len(body) + 1,
                                     content_capture="redacted", retention_days=30)
            spans += result.accepted
        return spans

    content._redact_capped = keep
    run()  # warm-up (fills the attribute memo, as a running worker has), and collects the texts
    content._redact_capped = original
    start = time.process_time()
    spans = run()
    spans_per_s = spans / (time.process_time() - start)
    start = time.process_time()
    for text in texts:
        DEFAULT_REDACTOR.redact(text)
    us_per_text = (time.process_time() - start) * 1e6 / len(texts)
    plain = [t for t in texts if DEFAULT_REDACTOR.redact(t).text == t]
    found = [t for t in texts if DEFAULT_REDACTOR.redact(t).text != t]
    redact = DEFAULT_REDACTOR.redact
    return {"spans_per_s": spans_per_s, "us_per_text": us_per_text,
            "us_plain": _best_us(redact, plain), "us_found": _best_us(redact, found)}


def _best_us(redact: Callable[[str], object], texts: list[str], repeats: int = 5) -> float:
    """µs per text of ``redact`` over ``texts``: the best of ``repeats`` passes, the one least disturbed by the
    other processes on the machine."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for text in texts:
            redact(text)
        best = min(best, time.process_time() - start)
    return best * 1e6 / max(1, len(texts))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-source", metavar="DIR", help="another checkout's code to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=8, help="512-span requests per round (default 8)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a subprocess: one round
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.requests, args.seed)))
        return 0
    arms = {"this checkout": {}}
    if args.baseline_source:
        src = Path(args.baseline_source).resolve()
        arms[f"baseline {src}"] = {"PYTHONPATH": f"{src}/collector:{src}/server:{src}/sdk/src"}
    print(f"content path, {args.requests} x 512 spans with content, {args.rounds} rounds; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results: dict[str, list[dict[str, float]]] = {arm: [] for arm in arms}
    for _ in range(args.rounds):
        for arm, env in arms.items():
            out = subprocess.run([sys.executable, __file__, "--one", "--requests", str(args.requests),
                                  "--seed", str(args.seed)], env={**os.environ, **env}, cwd=ROOT,
                                 capture_output=True, text=True, check=True)
            results[arm].append(json.loads(out.stdout.strip().splitlines()[-1]))
    medians = {}
    for arm, rounds in results.items():
        spans = [r["spans_per_s"] for r in rounds]
        texts = [r["us_per_text"] for r in rounds]
        plain = statistics.median(r["us_plain"] for r in rounds)
        found = statistics.median(r["us_found"] for r in rounds)
        medians[arm] = (statistics.median(spans), statistics.median(texts), plain, found)
        print(f"  {arm:40s} process_request {medians[arm][0]:7,.0f} spans/s [{min(spans):,.0f}-{max(spans):,.0f}]"
              f"   redact {medians[arm][1]:6.1f} us/text [{min(texts):.1f}-{max(texts):.1f}]"
              f"   best of 5: {plain:.1f} us without findings, {found:.1f} with")
    if len(medians) == 2:
        (new_spans, new_text, new_plain, new_found), (old_spans, old_text, old_plain, old_found) = medians.values()
        print(f"  ratio (this / baseline): process_request {new_spans / old_spans:.2f}x, "
              f"redact {old_text / new_text:.2f}x (without findings {old_plain / new_plain:.2f}x, "
              f"with {old_found / new_found:.2f}x)")
    print(f"  load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
