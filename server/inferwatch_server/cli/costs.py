"""``inferwatch-server costs recompute``: re-price stored calls after a price change.

The work is :mod:`inferwatch_collector.cost.recompute`; this module parses and prints.
"""

from __future__ import annotations

import argparse
from datetime import UTC, date, datetime, timedelta
from typing import Any

from .common import open_store, settings_from


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected a day as YYYY-MM-DD, got {text!r}") from exc


def register(subparsers: Any) -> None:
    """Add ``costs`` to the ``inferwatch-server`` parser."""
    costs = subparsers.add_parser("costs", help="re-price stored calls after a price change")
    costs_sub = costs.add_subparsers(dest="costs_command", required=True)
    recompute = costs_sub.add_parser(
        "recompute", help="re-price a project's calls over whole past UTC days and rebuild the cost rollups",
        description="Applies the current price table (bundled + --prices-file or INFERWATCH_PRICES_FILE) to "
                    "every call of the range and rebuilds the rollups that hold cost. Idempotent. Only days that "
                    "are over (before today, UTC) and still within the retention of llm_calls.")
    recompute.add_argument("--project", required=True, help="project id")
    recompute.add_argument("--from", dest="start", type=_day, required=True, help="first day (YYYY-MM-DD)")
    recompute.add_argument("--to", dest="end", type=_day,
                           help="last day, inclusive (default: yesterday, UTC)")
    recompute.add_argument("--prices-file", help="user price file laid over the bundled table")
    recompute.set_defaults(func=cmd_recompute)


def cmd_recompute(args: argparse.Namespace) -> int:
    from inferwatch_collector.cost.price_table import load_table
    from inferwatch_collector.cost.recompute import recompute_costs
    from inferwatch_collector.migrations import target_for

    settings = settings_from(args)
    prices_file = args.prices_file or settings.prices_file
    table = load_table(prices_file)
    today = datetime.now(UTC).date()
    last = args.end or today - timedelta(days=1)
    store = open_store(settings)
    try:
        target = None if settings.embedded else target_for(settings, store)  # sharded: mutate the _local tables
        result = recompute_costs(store, table, args.project, args.start, last + timedelta(days=1),
                                 retention_days=settings.retention_days, today=today, progress=print,
                                 target=target)
    finally:
        store.close()
    print(f"re-priced {result.calls:,} calls of project {result.project_id} from {result.start} to {last} "
          f"with prices {result.price_version}")
    if result.unpriced_models:
        print(f"unpriced (no price in the table; cost 0, flagged): {', '.join(result.unpriced_models)}")
    return 0
