"""Alert quality on realistic traffic (issue 30): simulated weeks through a real collector, the real backtest of
the alert rules at 1-minute steps, and a score against ground truth: per planted incident the detection delay
(or MISS), per week the false alerts by severity.

What it does:

1. Starts a real collector (``inferwatch-server migrate``, ``keys create`` per week, ``collector`` on a free
   port, temp data dir, its own scheduler off), one project per simulated week.
2. Writes each week through ``POST /v1/traces`` (:func:`examples.sim_backfill.backfill_scenario`; traffic from
   :mod:`examples.sim_scenario`, incidents from :mod:`examples.sim_incidents`). Every week is scored over the
   same 7 days (ending at today's UTC midnight); a warm week has ``--warmup-days`` (default 14) of ordinary
   history before them, a fresh-install week (``fresh-*``) none, and its first day is reported apart.
3. Stops the collector and runs :func:`inferwatch_alerts.backtest.backtest` with the packaged default rules
   (``--rules FILE`` for another file) over those days at 1-minute steps, all weeks' projects in one replay,
   and times it (target: under 5 minutes for 7 days).
4. Scores (:mod:`alert_quality_score`) and prints the tables, seeds and the command; ``--json FILE`` writes it
   all. Targets (issue 30): 0 critical and <= 1 warning per normal week, none in a fresh install's first day;
   each incident within its delay, blips never.

Weeks (``--weeks``, comma-separated): ``normal-0p2``, ``normal-1``, ``normal-10`` (ordinary weeks at 0.2, 1 and
10 calls/s mean), ``fresh-1`` (1 call/s from a fresh install), ``incidents-1`` (1 call/s with the incident
library). Ingest is the slow part (~10k calls/s on 2 shared cores): ``normal-10`` with 14 days of warm-up is
~18M calls (about half an hour here); ``--warmup normal-10=2`` shortens one week's warm-up. Quick look:
``--weeks incidents-1 --warmup-days 7``.

Run: ``.venv/bin/python bench/alert_quality.py [--weeks ...] [--seed 1] [--rules FILE] [--keep]``.

Trying rule variants: ``--keep`` keeps the written data and prints its data dir; ``--data-dir DIR --rules FILE``
then re-runs only the backtest and the score on it (minutes instead of the ingest's tens of minutes). Pass the
same ``--weeks``, ``--seed``, ``--days``, ``--warmup``/``--warmup-days`` and ``--week-end`` it was written with:
the planted incidents are recomputed from them, and a mismatch is reported when a week has no calls there.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, Path(__file__).resolve().parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from alert_quality_score import Fired, WeekScore, fired_from_backtest, format_delay, score_week  # noqa: E402
from examples.sim_backfill import backfill_scenario  # noqa: E402
from examples.sim_calls import expected_calls  # noqa: E402
from examples.sim_incidents import incident_library  # noqa: E402
from examples.sim_scenario import Scenario, midnight_days_ago  # noqa: E402
from inferwatch_alerts.backtest import BacktestReport, backtest  # noqa: E402
from inferwatch_alerts.rules import RuleSet, load_rules  # noqa: E402
from inferwatch_collector.settings import Settings  # noqa: E402
from inferwatch_collector.store import Store  # noqa: E402
from ingest_collector import Collector  # noqa: E402

BACKTEST_TARGET_S = 300.0
# name -> (mean calls/s, fresh install, incidents planted, seed offset)
WEEKS: dict[str, tuple[float, bool, bool, int]] = {
    "normal-0p2": (0.2, False, False, 1),
    "normal-1": (1.0, False, False, 2),
    "normal-10": (10.0, False, False, 3),
    "fresh-1": (1.0, True, False, 4),
    "incidents-1": (1.0, False, True, 5),
}


def plan_weeks(names: list[str], seed: int, days: int, warmup_days: float, warmups: dict[str, float],
               week_start: datetime) -> list[tuple[str, Scenario, bool, tuple]]:
    """Each week's scenario (warm-up included) and planted incidents; scored days start at ``week_start``."""
    out = []
    for name in names:
        rate, fresh, incidents, offset = WEEKS[name]
        warm = 0.0 if fresh else warmups.get(name, warmup_days)
        scenario = Scenario(week_start - timedelta(days=warm), warm + days, rate, seed=seed * 100 + offset)
        end = week_start + timedelta(days=days)
        planted = tuple(p for p in incident_library(week_start, days) if p.start < end) if incidents else ()
        out.append((name, scenario, fresh, planted))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/alert_quality.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--weeks", default=",".join(WEEKS), help=f"comma-separated, of {', '.join(WEEKS)}")
    parser.add_argument("--days", type=int, default=7, help="scored days per week (default 7)")
    parser.add_argument("--warmup-days", type=float, default=14.0, help="history before a warm week (default 14)")
    parser.add_argument("--warmup", action="append", default=[], metavar="WEEK=DAYS",
                        help="one week's warm-up instead (e.g. normal-10=2); repeatable")
    parser.add_argument("--week-end", default=None, metavar="YYYY-MM-DD",
                        help="the scored days end at this UTC midnight (default: today's); the same date and "
                             "seed give the same calls (within the rollups' 35-day retention of today)")
    parser.add_argument("--seed", type=int, default=1, help="base seed; week seed = 100*seed + its offset")
    parser.add_argument("--rules", default=None, help="rules file (default: the packaged default rules)")
    parser.add_argument("--parallel", type=int, default=8, help="requests in flight while writing (default 8)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes generating the calls (default 1; more where cores are free)")
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data dir and collector log")
    parser.add_argument("--data-dir", default=None, metavar="DIR",
                        help="backtest and score this data dir (printed by an earlier --keep run) instead of "
                             "writing new weeks; same --weeks/--seed/--days/--warmup/--week-end as that run")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.weeks.split(",") if n.strip()]
    unknown = [n for n in names if n not in WEEKS]
    if unknown:
        parser.error(f"unknown week(s) {', '.join(unknown)}; choose from {', '.join(WEEKS)}")
    warmups = {}
    for item in args.warmup:
        name, _, value = item.partition("=")
        if name not in WEEKS or not value:
            parser.error(f"--warmup {item!r}: expected WEEK=DAYS with WEEK one of {', '.join(WEEKS)}")
        warmups[name] = float(value)
    ruleset = load_rules(args.rules)  # fails before any work when the file is invalid
    if args.week_end:
        try:
            end_day = datetime.strptime(args.week_end, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            parser.error(f"--week-end {args.week_end!r}: expected YYYY-MM-DD")
        week_start = end_day - timedelta(days=args.days)
    else:
        week_start = midnight_days_ago(args.days)
    week_end = week_start + timedelta(days=args.days)
    weeks = plan_weeks(names, args.seed, args.days, args.warmup_days, warmups, week_start)

    print("command: " + " ".join([".venv/bin/python", "bench/alert_quality.py", *(argv or sys.argv[1:])]))
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; rules: "
          f"{args.rules or 'packaged default_rules.yaml'}; scored days {week_start:%Y-%m-%d %a} .. "
          f"{week_end:%Y-%m-%d %a} (UTC)")
    for name, sc, fresh, planted in weeks:
        print(f"  {name:<12} seed {sc.seed:<4} {sc.mean_rate:g} calls/s  warm-up {sc.days - args.days:g} d"
              f"{'  (fresh install)' if fresh else ''}  ~{expected_calls(sc):,.0f} calls"
              f"{f'  {len(planted)} planted' if planted else ''}")

    ingest: dict[str, tuple[int, float, int]] = {}
    if args.data_dir:
        data_dir = Path(args.data_dir)
        if not data_dir.is_dir():
            parser.error(f"--data-dir {args.data_dir!r}: not a collector data dir")
        ingest = stored_calls(data_dir, names)  # refuses a data dir without these weeks before the backtest
        report, backtest_s = run_backtest(data_dir, ruleset, names, week_start, week_end)
    else:
        workdir = Path(tempfile.mkdtemp(prefix="iw-alert-quality-"))
        collector = Collector(workdir, "collector", env={"INFERWATCH_COLLECTOR_SCHEDULER": "off",
                                                          "INFERWATCH_LOG_LEVEL": "WARNING"},
                              projects=tuple(names))
        try:
            collector.start()
            for name, sc, _fresh, planted in weeks:
                t = time.perf_counter()
                stats = backfill_scenario(collector.base, collector.keys[name], sc, planted,
                                          parallel=args.parallel, workers=args.workers, label=name)
                ingest[name] = (stats.calls_acked, time.perf_counter() - t, stats.dropped_calls + stats.failures)
            collector.stop()
            report, backtest_s = run_backtest(collector.data_dir, ruleset, names, week_start, week_end)
        finally:
            collector.stop()
            if args.keep:
                print(f"kept {workdir} (data dir for --data-dir: {collector.data_dir})")
            else:
                shutil.rmtree(workdir, ignore_errors=True)

    fired = fired_from_backtest(report.incidents(), {r.id: r.signal.name for r in ruleset.rules})
    scores = [score_week(name, fired.get(name, []), planted, week_start, week_end, fresh_install=fresh)
              for name, _sc, fresh, planted in weeks]
    print_tables(scores, weeks, ingest, backtest_s, report.ticks, report.failed, args.days)
    if args.json:
        Path(args.json).write_text(json.dumps(to_json(scores, weeks, ingest, backtest_s, args), indent=1))
    return 0


def open_store(data_dir: Path) -> Store:
    return Store.open(Settings(data_dir=data_dir, clickhouse_url="", cluster="", database="inferwatch",
                               migration_mode="auto"))


def run_backtest(data_dir: Path, ruleset: RuleSet, names: list[str], week_start: datetime, week_end: datetime
                 ) -> tuple[BacktestReport, float]:
    """The backtest of the scored days on ``data_dir`` (collector stopped), and its wall time in seconds."""
    store = open_store(data_dir)
    try:
        print(f"backtest {week_start:%Y-%m-%d} .. {week_end:%Y-%m-%d}, 1-minute steps, "
              f"{len(names)} project(s) ...", flush=True)
        t = time.perf_counter()
        report = backtest(store, ruleset, week_start, week_end, step_s=60, projects=names)
        return report, time.perf_counter() - t
    finally:
        store.close()


def stored_calls(data_dir: Path, names: list[str]) -> dict[str, tuple[int, float, int]]:
    """Per week the calls stored in ``data_dir`` (for the table of a ``--data-dir`` run: no ingest timed).
    A week with none was not written there: the options do not match the run that wrote it."""
    store = open_store(data_dir)
    try:
        rows = store.query("SELECT project_id, count() FROM llm_calls WHERE project_id IN {p:Array(String)} "
                           "GROUP BY project_id", {"p": names}).result_rows
    finally:
        store.close()
    counts = {str(p): int(n) for p, n in rows}
    missing = [n for n in names if not counts.get(n)]
    if missing:
        raise SystemExit(f"--data-dir: no calls stored for {', '.join(missing)}: pass the --weeks (and the other "
                         "options) of the run that wrote it")
    return {n: (counts[n], math.nan, 0) for n in names}


def print_tables(scores: list[WeekScore], weeks: list, ingest: dict[str, tuple[int, float, int]],
                 backtest_s: float, ticks: int, failed: dict[str, int], days: int) -> None:
    print()
    print(f"{'week':<12} {'calls/s':>7} {'warm-up':>7} {'calls':>10} {'ingest/s':>8} {'lost':>5}  "
          f"{'false alerts: crit':>18} {'warn':>4} {'info':>4}  {'1st day':>7}  verdict")
    for score, (name, sc, fresh, _p) in zip(scores, weeks):
        calls, secs, lost = ingest[name]
        by = score.false_by_severity()
        first_day = str(len(score.first_day_false())) if fresh else "-"
        ok = by["critical"] == 0 and by["warning"] <= days / 7 and (not fresh or first_day == "0")
        rate = f"{calls / max(secs, 1e-9):,.0f}" if math.isfinite(secs) else "-"
        print(f"{name:<12} {sc.mean_rate:>7g} {sc.days - days:>5g} d {calls:>10,} {rate:>8} "
              f"{lost:>5}  {by['critical']:>18} {by['warning']:>4} {by['info']:>4}  {first_day:>7}  "
              f"{'PASS' if ok else 'FAIL'} (target: 0 critical, <= 1 warning/week)")
    for score in scores:
        if not score.detections:
            continue
        print(f"\nplanted in {score.name}:")
        print(f"  {'incident':<19} {'scope':<26} {'start (UTC)':<16} {'target':>8} {'delay':>9}  "
              f"{'verdict':<8} {'alerts':>6}  first alert")
        for d in score.detections:
            p = d.planted
            scope = f"model={p.model}" if p.model else f"feature={p.feature}"
            target = "never" if p.is_blip else format_delay(p.max_delay)
            first = d.first.describe() if d.first else ""
            print(f"  {p.name:<19} {scope:<26} {p.start:%a %d %H:%M}     {target:>8} {format_delay(d.delay):>9}  "
                  f"{d.verdict:<8} {len(d.matches):>6}  {first}")
    print("\nfalse alerts by rule and series (week: rule severity [series] count):")
    for score in scores:
        counts = Counter((f.rule_id, f.severity, ",".join(f"{k}={v}" for k, v in f.labels.items()) or "project")
                         for f in score.false_alerts)
        text = "\n    ".join(f"{r} {s} [{k}] {n}" for (r, s, k), n in counts.most_common()) or "none"
        print(f"  {score.name}:\n    {text}")
    if failed:
        print(f"\nrules that failed to evaluate (ticks): {failed}")
    verdict = "PASS" if backtest_s < BACKTEST_TARGET_S else "FAIL"
    print(f"\nbacktest: {days} days at 1-minute steps, {ticks} ticks, {len(scores)} project(s): "
          f"{backtest_s:.1f} s "
          f"({verdict}: target < {BACKTEST_TARGET_S:.0f} s)")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def to_json(scores: list[WeekScore], weeks: list, ingest: dict, backtest_s: float, args: argparse.Namespace
            ) -> dict[str, object]:
    def fired(f: Fired) -> dict[str, object]:
        return {"rule_id": f.rule_id, "signal": f.signal, "severity": f.severity, "labels": dict(f.labels),
                "fired_at": f.fired_at.isoformat(),
                "resolved_at": f.resolved_at.isoformat() if f.resolved_at else None}

    return {"backtest_s": backtest_s, "seed": args.seed, "rules": args.rules, "weeks": [
        {"name": s.name, "seed": sc.seed, "mean_rate": sc.mean_rate, "warmup_days": sc.days - args.days,
         "fresh_install": fresh, "calls": ingest[s.name][0], "ingest_s": _finite(ingest[s.name][1]),
         "false_by_severity": s.false_by_severity(), "first_day_false": len(s.first_day_false()),
         "false_alerts": [fired(f) for f in s.false_alerts],
         "detections": [{**d.planted.to_json(), "verdict": d.verdict,
                         "delay_s": None if d.delay is None else d.delay.total_seconds(),
                         "alerts": [fired(f) for f in d.matches]} for d in s.detections]}
        for s, (_n, sc, fresh, _p) in zip(scores, weeks)]}


if __name__ == "__main__":
    sys.exit(main())
