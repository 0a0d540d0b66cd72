"""The demo's history as a command: ``python -m examples.demo_history --url URL --key KEY`` backfills
:func:`examples.sim_backfill.backfill_history` (weeks of simulated traffic with planted incidents) into a
running collector through its OTLP ingest, progress lines on stderr, then prints one JSON line on stdout: the
scenario's span and the planted incidents (their ground truth and the signals that show them), which ``inferwatch-server up`` replays through
the alert rules.

A separate process (not a thread of the collector) so that generating and encoding the calls runs on another core
than the ingest that decodes them.
"""

from __future__ import annotations

import argparse
import json
import sys

from .sim_backfill import backfill_history
from .sim_incidents import SIGNAL_FAMILIES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the collector, e.g. http://127.0.0.1:4318")
    parser.add_argument("--key", required=True, help="an ingest key")
    parser.add_argument("--days", type=float, default=21.0)
    parser.add_argument("--rate", type=float, default=0.1, help="mean LLM calls/s over the history")
    parser.add_argument("--users", type=int, default=1000, help="distinct users")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    scenario, planted = backfill_history(args.url, args.key, days=args.days, mean_rate=args.rate, seed=args.seed,
                                         n_users=args.users)
    print(json.dumps({"start": scenario.start.isoformat(), "end": scenario.end.isoformat(),
                      "planted": [{**p.to_json(), "signals": sorted(SIGNAL_FAMILIES[p.family])}
                                  for p in planted]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
