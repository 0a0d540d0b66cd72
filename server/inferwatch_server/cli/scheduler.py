"""``inferwatch-server scheduler``: the scheduled jobs (budgets, alert rules, cost reports, retention, A/B
results) in the foreground, or ``--once JOB`` run now.

The production way to run the jobs: one process beside N collectors on a ClickHouse server (a lease row keeps a
second one idle). On the embedded database the collector runs them itself (``INFERWATCH_COLLECTOR_SCHEDULER``).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from datetime import UTC, datetime
from typing import Any

from .common import open_migrated, settings_from


def register(sub: Any) -> None:
    """Add ``scheduler`` to the ``inferwatch-server`` parser."""
    sched = sub.add_parser(
        "scheduler", help="run the scheduled jobs (budget alerts, cost reports) in the foreground",
        description="Runs until interrupted. With a ClickHouse server run exactly one; on the embedded database "
                    "the collector already runs these jobs (INFERWATCH_COLLECTOR_SCHEDULER).")
    sched.add_argument("--budget-interval", type=float, default=60.0,
                       help="seconds between budget evaluations (default 60)")
    sched.add_argument("--once", metavar="JOB", help="run this one job now, print its run, and exit")
    sched.set_defaults(func=cmd_scheduler)


def cmd_scheduler(args: argparse.Namespace) -> int:
    from inferwatch_alerts.scheduler import Scheduler, default_jobs

    if args.budget_interval <= 0:
        print("error: --budget-interval must be positive", file=sys.stderr)
        return 2
    settings = settings_from(args)
    store = open_migrated(settings)
    try:
        scheduler = Scheduler(store, default_jobs(budget_interval_s=args.budget_interval))
        if args.once:
            if args.once not in scheduler.jobs:
                print(f"error: unknown job {args.once!r}; jobs: {', '.join(scheduler.jobs)}", file=sys.stderr)
                return 2
            run = scheduler.run_now(args.once)
            took = (run.ended_at - run.started_at).total_seconds() if run.ended_at else 0.0
            print(f"{run.job} {run.outcome} in {took:.3f} s" + (f": {run.error}" if run.error else ""))
            for key, value in run.details.items():
                print(f"  {key}: {value}")
            return 0 if run.ok else 1
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        where = f"embedded chDB at {settings.data_dir}" if settings.embedded else settings.clickhouse_url
        print(f"inferwatch scheduler on {where} (started {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC); "
              f"jobs: {', '.join(scheduler.jobs)}. Ctrl-C stops it.", flush=True)
        scheduler.start()
        try:
            stop.wait()
        finally:
            scheduler.shutdown()
        return 0
    finally:
        store.close()
