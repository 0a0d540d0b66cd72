"""Redaction benchmark: ``inferwatch.redaction`` against Presidio's AnalyzerEngine on the same labelled corpus,
and the collector's redaction path (which uses that same redactor).

What it does, in one process:

1. Builds the labelled corpus (``tests/helpers/redaction_corpus.py``: ~1 KB LLM prompts dense with planted
   PII/secrets and look-alikes) and Presidio's analyzer exactly as the agreement test does (blank English spaCy
   pipeline with a lower-case lemma, offline tldextract, our secret recognizers registered as Presidio pattern
   recognizers).
2. Agreement, per text: the same set of (entity, start, end) findings (``Redactor.analyze`` vs
   ``AnalyzerEngine.analyze``), the same replaced spans after conflict resolution, the same scores; and the
   planted entities found (recall).
3. Throughput: ``--reps`` rounds (default 5) over the corpus; within a round the contenders (Presidio's
   ``analyze``, our ``analyze``, our ``redact``, and the collector's ``inferwatch_collector.redaction.redact``)
   take turns on batches of 20 texts, so they share the machine's state (a busy shared machine slows all alike).
   Time is this process's CPU time (all are single-threaded, so on an idle machine it equals wall time).
   Texts/s are medians over rounds; the ratios are ours over Presidio's.
4. The collector's content path: ``normalize()`` (fast decoder input, ``content_capture="redacted"``) of OTLP
   requests whose LLM spans carry the ~1 KB prompt/completion content of ``examples/traffic.py`` (30 % with PII),
   as ``bench/ingest.py`` sends them: spans/s, next to the ingest target of 5,000 content spans/s end to end
   (a ceiling for one core: the end-to-end figure also pays HTTP, queueing and the inserts).
5. Targets: ``>= 10x Presidio's throughput at >= 99% finding agreement`` -> PASS/FAIL lines. No asserts: the exit
   code is 0 whatever the figures (1 only when Presidio is not installed).

Run: ``.venv/bin/python bench/redaction.py`` (about a minute on 2 cores; ``--n 100 --reps 3`` for a quick look).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "sdk" / "src"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from tests.helpers.redaction_corpus import Sample, corpus, presidio_reference  # noqa: E402

from inferwatch.redaction import Finding, Redactor, resolve_conflicts  # noqa: E402

TARGET_RATIO = 10.0
TARGET_AGREEMENT = 0.99
INGEST_CONTENT_TARGET = 5_000  # content spans/s, end to end (bench/ingest.py)


def agreement(samples: list[Sample], reference: Any, redactor: Redactor) -> dict[str, float]:
    raw = resolved = scores = 0
    planted = found = 0
    for sample in samples:
        ref = reference(sample.text)
        ours = redactor.analyze(sample.text)
        raw += {(r.entity_type, r.start, r.end) for r in ref} == {(f.entity_type, f.start, f.end) for f in ours}
        scores += ({(r.entity_type, r.start, r.end, round(r.score, 6)) for r in ref}
                   == {(f.entity_type, f.start, f.end, round(f.score, 6)) for f in ours})
        ref_findings = [Finding(r.entity_type, r.start, r.end, r.score) for r in ref]
        ref_resolved = resolve_conflicts(sample.text, ref_findings)
        our_resolved = redactor.resolve(sample.text, ours)
        resolved += ({(f.entity_type, f.start, f.end) for f in ref_resolved}
                     == {(f.entity_type, f.start, f.end) for f in our_resolved})
        for p in sample.planted:
            planted += 1
            found += any(f.entity_type == p.entity and f.start <= p.start and f.end >= p.end for f in our_resolved)
    n = len(samples)
    return {"raw": raw / n, "resolved": resolved / n, "scores": scores / n, "recall": found / max(1, planted)}


def rates(contenders: Sequence[Callable[[str], Any]], texts: list[str], batch: int = 20) -> list[float]:
    """Texts/s of each contender over ``texts``, taking turns on batches."""
    spent = [0.0] * len(contenders)
    for i in range(0, len(texts), batch):
        chunk = texts[i:i + batch]
        for k, fn in enumerate(contenders):
            start = time.process_time()
            for text in chunk:
                fn(text)
            spent[k] += time.process_time() - start
    return [len(texts) / s if s else float("inf") for s in spent]


def collector_content_rate(reps: int, seed: int) -> tuple[float, int] | None:
    """Median spans/s of the collector's ``normalize()`` on requests with ~1 KB content per LLM span, and the
    spans per round (None when the server distribution is not installed)."""
    try:
        from examples.traffic import TrafficModel, build_request
        from inferwatch_collector.normalize import normalize
        from inferwatch_collector.otlp_decode import decode_traces_fast
    except ImportError:
        return None
    model = TrafficModel(seed=seed, embeddings=False)
    bodies = [build_request(model, 256, with_content=True, app_spans=False).SerializeToString() for _ in range(4)]

    def one_round() -> tuple[int, float]:
        spans, spent = 0, 0.0
        for body in bodies:
            start = time.process_time()
            request = decode_traces_fast(body, "application/x-protobuf", None, len(body) + 1)
            batch = normalize(request, "bench", content_capture="redacted")
            spent += time.process_time() - start
            spans += len(batch.llm_calls) + len(batch.spans)
        return spans, spent

    one_round()  # warm-up
    results = [one_round() for _ in range(reps)]
    return statistics.median(s / t for s, t in results), results[0][0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=300, help="texts in the corpus (default 300)")
    parser.add_argument("--reps", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()

    try:
        reference = presidio_reference()
    except ImportError as exc:
        print(f"presidio-analyzer/spaCy not installed ({exc}); install the test extra", file=sys.stderr)
        return 1
    try:
        from inferwatch_collector.redaction import redact as collector_redact
    except ImportError:  # the SDK alone: no collector to measure
        collector_redact = None
    samples = corpus(args.n, args.seed)
    texts = [s.text for s in samples]
    redactor = Redactor()
    print(f"corpus: {len(texts)} texts, {sum(map(len, texts)) / len(texts):.0f} characters on average, "
          f"{sum(len(s.planted) for s in samples)} planted entities (seed {args.seed})")

    agree = agreement(samples, reference, redactor)
    print(f"agreement per text: findings {agree['raw']:.1%}, replaced spans {agree['resolved']:.1%}, "
          f"scores {agree['scores']:.1%}; planted entities found {agree['recall']:.1%}")

    contenders: list[Callable[[str], Any]] = [reference, redactor.analyze, redactor.redact]
    if collector_redact is not None:
        contenders.append(collector_redact)
    for text in texts[:20]:  # warm-up: compiled patterns, metadata, spaCy
        for fn in contenders:
            fn(text)
    rounds: list[list[float]] = []
    for rep in range(args.reps):
        rounds.append(rates(contenders, texts))
        line = "   ".join(f"{name} {rate:7.0f}" for name, rate in zip(
            ("presidio", "ours analyze", "ours redact", "collector redact"), rounds[-1]))
        print(f"  round {rep + 1} (texts/s): {line}")
    medians = [statistics.median(column) for column in zip(*rounds)]
    p, o, r = medians[:3]
    c = medians[3] if collector_redact is not None else None
    ratio, ratio_redact = o / p, r / p
    content = collector_content_rate(args.reps, args.seed)

    rows = [
        ("Presidio AnalyzerEngine texts/s (info)", "-", f"{p:,.0f}", ""),
        ("inferwatch analyze texts/s (info)", "-", f"{o:,.0f}", ""),
        ("inferwatch redact texts/s (info)", "-", f"{r:,.0f}", ""),
        ("collector redact texts/s (info)", "-", "n/a" if c is None else f"{c:,.0f}", ""),
        ("throughput, analyze vs Presidio", f">= {TARGET_RATIO:g}x", f"{ratio:.1f}x",
         "PASS" if ratio >= TARGET_RATIO else "FAIL"),
        ("throughput, redact vs Presidio analyze", f">= {TARGET_RATIO:g}x", f"{ratio_redact:.1f}x",
         "PASS" if ratio_redact >= TARGET_RATIO else "FAIL"),
        ("finding agreement (same set per text)", f">= {TARGET_AGREEMENT:.0%}", f"{agree['raw']:.1%}",
         "PASS" if agree["raw"] >= TARGET_AGREEMENT else "FAIL"),
        ("replaced-span agreement (info)", "-", f"{agree['resolved']:.1%}", ""),
        ("planted entities found (info)", "-", f"{agree['recall']:.1%}", ""),
        ("collector normalize, 1 KB content spans/s", f"({INGEST_CONTENT_TARGET:,} e2e)",
         "n/a" if content is None else f"{content[0]:,.0f}", ""),
    ]
    print()
    print(f"{'target':42s}{'goal':>12s}{'measured (median of ' + str(args.reps) + ')':>26s}  result")
    for name, goal, measured, result in rows:
        print(f"{name:42s}{goal:>12s}{measured:>26s}  {result}")
    if content is not None:
        print(f"\n(collector normalize: {content[1]} LLM spans per round, ~1 KB prompt/completion content each, "
              f"30% with PII; one core)")
    overall = ratio >= TARGET_RATIO and agree["raw"] >= TARGET_AGREEMENT
    print(f"\n>= {TARGET_RATIO:g}x Presidio's throughput at >= {TARGET_AGREEMENT:.0%} finding agreement: "
          f"{'PASS' if overall else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
