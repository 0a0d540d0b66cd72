"""The cost rule on a diurnal week: the old daily-average rule against the seasonal one, on the same traffic.

Builds a throwaway chDB with ten days of traffic for one project and three models (10, 4 and 2 calls a minute),
cost following the day (a peak of 2.15x the daily mean in the afternoon, a night at 0.29x) with a day-to-day
variation of 10%, and one planted spike: the small model at 5x its volume for 2 hours on the afternoon of
day 9. Then backtests, with the real evaluator and no notifier:

* the normal week (days 3-9, the spike's day cut at the spike): firing incidents of each rule;
* the fresh install's first day (day 0): firing incidents;
* the spike: the delay from its start to the first firing of each rule.

Usage (from the repository root)::

    .venv/bin/python bench/cost_baseline.py               # --step 5m: ~5 min on 2 loaded cores
    .venv/bin/python bench/cost_baseline.py --step 1      # minute steps, as the scheduler runs (slower)

The old rule is the packaged one before issue 30: ``daily_average``, factor 2, 1 h window, for 15m, per project.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for folder in (ROOT, ROOT / "alerts", ROOT / "collector"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from inferwatch_alerts.backtest import BacktestReport, backtest  # noqa: E402
from inferwatch_alerts.rules import RuleSet, load_rules, parse_rules  # noqa: E402
from inferwatch_collector.migrations import migrate, target_for  # noqa: E402
from inferwatch_collector.settings import Settings  # noqa: E402
from inferwatch_collector.store import Store  # noqa: E402

from tests.helpers.traffic import add_calls, per_day  # noqa: E402

OLD_RULE = """\
version: 1
rules:
  - id: cost-per-hour-spike-old
    signal: cost_per_hour
    group_by: [project]
    window: 1h
    for: 15m
    min_requests: 50
    baseline: {kind: daily_average, factor: 2, lookback: 24h, min_value: 0.10, min_days: 0}
    severity: warning
"""
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
MODELS = (("big", 10, 1), ("mid", 4, 2), ("small", 2, 3))


def diurnal(start: datetime, per_minute: int, usd: float, peak: datetime, salt: int) -> str:
    t = f"(toInt64({int(start.timestamp())}) + intDiv(number * 60, {per_minute}))"
    return (f"{usd} * exp(cos(2 * pi() * ({t} - {int(peak.timestamp())}) / 86400)) / 1.2660658777520082"
            f" * {per_day(0.10, salt)}")


def build(store: Store, day0: datetime, spike: datetime) -> None:
    for model, per_minute, salt in MODELS:
        add_calls(store, day0, 10 * 1440, per_minute, project="bench", model=model, seed=salt,
                  cost_usd=diurnal(day0, per_minute, 0.003, spike, salt))
    add_calls(store, spike, 120, 8, project="bench", model="small", seed=9,
              cost_usd=diurnal(spike, 8, 0.003, spike, 3))


def fired(report: BacktestReport) -> list[tuple[datetime, str, str]]:
    return [(e.event_time, e.rule_id, e.series_key) for e in report.events if e.state == "firing"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--step", type=int, default=5, help="backtest step in minutes (default 5)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    day0 = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - 11 * DAY
    spike = day0 + 9 * DAY + 14 * HOUR  # 14:00 on day 9, the daily peak
    new = load_rules().rule("cost-per-hour-spike")
    assert new is not None
    rules = RuleSet(rules=(*parse_rules(OLD_RULE).rules, new))
    with tempfile.TemporaryDirectory(prefix="cost-bench-") as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", clickhouse_url="", cluster="", database="inferwatch",
                            migration_mode="auto")
        store = Store.open(settings)
        try:
            migrate(store, target_for(settings, store))
            build(store, day0, spike)
            step = args.step * 60
            week = backtest(store, rules, day0 + 3 * DAY, spike, step_s=step)
            first = backtest(store, rules, day0, day0 + DAY, step_s=step)
            hit = backtest(store, rules, spike - 10 * timedelta(minutes=1), spike + 90 * timedelta(minutes=1))
        finally:
            store.close()
    print(f"cost rule, one project, 3 models, diurnal peak 2.15x the daily mean, 10% day-to-day; "
          f"backtest step {args.step}m (spike: 1m)")
    print(f"{'rule':<26} {'normal week fires':>18} {'first day fires':>16} {'spike delay':>12}")
    ok = True
    for rule_id in ("cost-per-hour-spike-old", "cost-per-hour-spike"):
        normal = [f for f in fired(week) if f[1] == rule_id]
        fresh = [f for f in fired(first) if f[1] == rule_id]
        caught = [f for f in fired(hit) if f[1] == rule_id]
        delay = f"{(caught[0][0] - spike).total_seconds() / 60:.0f} min" if caught else "missed"
        print(f"{rule_id:<26} {len(normal):>18} {len(fresh):>16} {delay:>12}")
        if rule_id == "cost-per-hour-spike":
            ok = not normal and not fresh and bool(caught) and caught[0][0] - spike <= 30 * timedelta(minutes=1)
    print(f"target (new rule): 0 fires on the normal week and the first day, spike within 30 min: "
          f"{'PASS' if ok else 'FAIL'} ({time.perf_counter() - started:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
