"""Backtest benchmark: the packaged default rules replayed at 1-minute steps (target: 7 days in under 5 minutes).

What it does:

1. Builds 15 days of calls ending at the last whole hour in a fresh temporary embedded database, with
   ``alerts_eval.build`` (the alert-evaluation bench's data: 4 projects x 12 models, lognormal latencies, 2%
   errors, 1% refusals, ...), by default 1,296,000 calls (one a second), so every drift detector has its
   history.
2. Replays :func:`inferwatch_alerts.backtest.backtest` with the default rules, minute by minute, over the last
   ``--hours`` hours (default 6: 360 evaluations, 6 of them with the hourly drift rules), ``--runs`` times, and
   reports the median seconds per evaluation and what a 7-day replay (10,080 evaluations) takes at that rate.
   ``--days 7`` replays the full week instead (minutes on 2 cores). ``--blocks 0,60`` (the default) times
   both ways of reading in the same run, interleaved: ``0`` reads every rule at every tick (as the scheduler
   does, and as the backtest did before block prefetch), ``60`` reads threshold and baseline rules an hour of
   ticks at a time (the backtest's default). Both replays must report the same incidents.
3. Prints PASS/FAIL against the target for the last block size.

To compare with another version of the alert code, run the same command with ``PYTHONPATH`` pointing at that
tree's ``alerts`` directory (e.g. ``git archive <commit> | tar -x -C /tmp/old``, then
``PYTHONPATH=/tmp/old/alerts .venv/bin/python bench/alerts_backtest.py``): the data is built the same way.

Benches print, never assert. Run: ``.venv/bin/python bench/alerts_backtest.py``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import inferwatch_alerts
from alerts_eval import build
from inferwatch_alerts.backtest import backtest
from inferwatch_alerts.rules import load_rules
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from timing import fmt, timed

TARGET_S = 300.0
WEEK_TICKS = 7 * 1440


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1_296_000, help="calls over 15 days (default: one a second)")
    parser.add_argument("--hours", type=float, default=6.0, help="hours replayed per run (default 6)")
    parser.add_argument("--days", type=float, default=0.0, help="replay this many days instead of --hours")
    parser.add_argument("--runs", type=int, default=3, help="timed runs (the median is reported)")
    parser.add_argument("--blocks", default="0,60", help="ticks read at once, comma-separated (0: per tick)")
    args = parser.parse_args()
    blocks = [int(b) for b in args.blocks.split(",")]

    tmp = Path(tempfile.mkdtemp(prefix="inferwatch-bench-backtest-"))
    store = Store.open(Settings(data_dir=tmp / "data", clickhouse_url=""))
    try:
        migrate(store, target_for(store.settings, store))
        end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        print(f"alert code: {Path(inferwatch_alerts.__file__).parent}")
        print(f"building {args.calls:,} calls over 15 days ending {end:%Y-%m-%d %H:%M} UTC")
        build(store, args.calls, 1_000_000, end)
        rules = load_rules()
        span = timedelta(days=args.days) if args.days else timedelta(hours=args.hours)
        start = end - span + timedelta(seconds=rules.evaluation_offset_s)
        stop = end - timedelta(minutes=1) + timedelta(seconds=rules.evaluation_offset_s)
        times: dict[int, list[float]] = {b: [] for b in blocks}
        reports = {}
        for _ in range(args.runs):  # interleaved, so load drifts affect both alike
            for b in blocks:
                run, reports[b] = timed(lambda b=b: backtest(store, rules, start, stop, step_s=60, block=b), 1)
                times[b] += run
        incidents = {b: [i.to_json() for i in r.incidents()] for b, r in reports.items()}
        same = all(v == incidents[blocks[0]] for v in incidents.values())
        report = reports[blocks[-1]]
        print(f"\nbacktest of {report.ticks} evaluations at 1-minute steps, default rules ({len(rules.rules)}), "
              f"{len(report.incidents())} incidents, failed rules: {report.failed or 'none'}, "
              f"same incidents for every block size: {same}")
        week = 0.0
        for b in blocks:
            per_tick = [t / report.ticks for t in times[b]]
            week = statistics.median(per_tick) * WEEK_TICKS
            label = "per tick (block 0)" if b == 0 else f"block {b}"
            print(f"  {label:<20} per run {fmt(times[b])}; per evaluation {statistics.median(per_tick) * 1000:.1f} "
                  f"ms [{min(per_tick) * 1000:.1f}-{max(per_tick) * 1000:.1f}]; 7 days (10,080 ticks): {week:.0f} s")
        verdict = "PASS" if week < TARGET_S else "FAIL"
        print(f"\n{verdict}: a 7-day backtest at 1-minute steps {week:.0f} s (target < {TARGET_S:.0f} s)")
        return 0
    finally:
        store.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
