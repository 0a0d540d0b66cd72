"""Synthetic LLM traffic: realistic OTLP traces of LLM calls, built straight into protobuf, and a sender.

``inferwatch-server demo`` runs it (``python -m examples.traffic --key KEY``); the benches use its builders for
realistic, varied spans. Two layers:

- pure builders: :class:`TrafficModel` (a seeded ``random.Random`` and the traffic mix, in
  :mod:`examples.traffic_model`) produces :class:`LlmCall` values and :func:`build_request`
  (:mod:`examples.traffic_otlp`) turns them into an ``ExportTraceServiceRequest``; with ``with_content`` each
  call carries ~1 KB of prompt/completion JSON, sometimes with PII (:mod:`examples.traffic_content`);
- a small sender (:mod:`examples.traffic_send`): :func:`send` posts one request, :func:`run` posts at a steady
  rate of LLM calls per second, honouring ``503 Retry-After``, and prints progress; :func:`backfill` sends
  history.

This module is the command line and the names its users import.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

if not __package__:  # run as a file (python examples/traffic.py): import the examples package from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.traffic_model import (  # noqa: E402
    DEFAULT_FEATURES, DEFAULT_MODELS, DEMO_USER_HASH_KEY, FeatureSpec, LlmCall, ModelSpec, TrafficModel, hash_user,
)
from examples.traffic_otlp import build_request  # noqa: E402
from examples.traffic_send import RunStats, SendResult, backfill, run, send, traces_url  # noqa: E402

__all__ = [
    "DEMO_USER_HASH_KEY",
    "DEFAULT_FEATURES",
    "DEFAULT_MODELS",
    "FeatureSpec",
    "LlmCall",
    "ModelSpec",
    "RunStats",
    "SendResult",
    "TrafficModel",
    "backfill",
    "build_request",
    "hash_user",
    "main",
    "run",
    "send",
    "traces_url",
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.traffic",
        description="Send synthetic LLM-call traces (OTLP/HTTP protobuf) to an inferwatch collector.",
    )
    parser.add_argument("--url", default=os.environ.get("INFERWATCH_URL", "http://127.0.0.1:4318"),
                        help="collector base URL (default: $INFERWATCH_URL or http://127.0.0.1:4318)")
    parser.add_argument("--key", default=os.environ.get("INFERWATCH_API_KEY"),
                        help="ingest API key (default: $INFERWATCH_API_KEY)")
    parser.add_argument("--rate", type=float, default=20.0, help="LLM calls per second (default 20)")
    parser.add_argument("--duration", type=float, default=None, help="seconds to run (default: until Ctrl-C)")
    parser.add_argument("--batch-size", type=int, default=None, help="calls per request (default: 1 s worth)")
    parser.add_argument("--content", action="store_true",
                        help="attach ~1 KB of prompt/completion text per call (sometimes with PII)")
    parser.add_argument("--backfill-hours", type=float, default=0.0,
                        help="first send this many hours of history (at --backfill-rate calls/s)")
    parser.add_argument("--backfill-rate", type=float, default=0.5, help="average calls/s of the history")
    parser.add_argument("--error-rate", type=float, default=0.02, help="share of calls that fail (default 0.02)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    parser.add_argument("--gzip", action="store_true", help="gzip request bodies")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    if not args.key:
        parser.error("an ingest key is needed: --key iwk_... or INFERWATCH_API_KEY "
                     "(create one with `inferwatch-server keys create --project demo --scope ingest`)")
    model = TrafficModel(seed=args.seed, error_rate=args.error_rate)
    if args.backfill_hours > 0:
        backfill(args.url, args.key, args.backfill_hours, args.backfill_rate, model=model,
                 with_content=args.content, progress=not args.quiet, gzip=args.gzip)
    if args.rate > 0 and (args.duration is None or args.duration > 0):
        stats = run(args.url, args.key, args.rate, args.duration, args.content, args.batch_size,
                    not args.quiet, model=model, gzip=args.gzip)
        if stats.acks == 0 and stats.requests > 0:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
