"""A backtest that reads threshold and baseline rules a block of ticks at a time reports exactly what one that
reads each tick on its own reports: same incidents, events (values and messages) and notifications.

Values are compared to 9 significant digits: a float sum (cost) over the same rows in another order differs in
its last bits (81.60000000000004 against ...02); everything else (times, states, series, counts) exactly.

Real rows in chDB (the materialized views fill the rollups) with the packaged default rules over three hours
that hold an error burst, a TTFT blip, a refusal spike, a cost spike on a model with four days of history, a
gap and low-volume minutes; replayed with blocks that do and do not divide the range, so block boundaries and
the first and last windows of a block are all compared with the per-tick reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, is_dataclass
from typing import Any
from datetime import UTC, datetime, timedelta

import pytest

from inferwatch_alerts.backtest import BacktestReport, backtest
from inferwatch_alerts.observations import observe, observe_many
from inferwatch_alerts.rules import load_rules
from inferwatch_collector.store import Store

from tests.helpers.traffic import add_calls, lognormal
from tests.helpers.stores import built_store

MIN, HOUR, DAY = timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)
OFFSET = timedelta(seconds=60)  # the default evaluation offset
T0 = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - 6 * HOUR  # the replay's first window end
SPAN = 3 * HOUR


def build(store: Store) -> None:
    """Model a: 30 calls a minute with planted incidents, a gap and a low-volume stretch; model b: 4 days of
    history around the same hours, then 5x its volume for an hour; model c: a few calls a minute."""
    ttft = lognormal(600, 0.3, 10, 3)
    plan = [  # (from, minutes, per minute, overrides) for model a, from T0 - 30 min
        (-30, 60, 30, {}),
        (30, 12, 30, {"error_rate": 0.2}),
        (42, 28, 30, {}),
        (70, 15, 30, {"ttft_ms": f"3.5 * {ttft}"}),
        (85, 15, 30, {}),
        (100, 25, 30, {"refusal_rate": 0.15}),
        (125, 15, 30, {}),
        # 140-150: no calls at all
        (150, 5, 30, {}),
        (155, 20, 3, {"error_rate": 0.3, "refusal_rate": 0.3}),
        (175, 10, 30, {}),
    ]
    for i, (start, minutes, per_minute, changes) in enumerate(plan):
        base = {"error_rate": 0.003, "refusal_rate": 0.01, "ttft_ms": ttft}
        add_calls(store, T0 + start * MIN + 7 * timedelta(seconds=1), minutes, per_minute, model="a",
                  seed=10 + i, **{**base, **changes})
    for d in range(1, 5):
        add_calls(store, T0 - d * DAY - HOUR, 5 * 60, 40, model="b", seed=100 + d, cost_usd=0.01)
    add_calls(store, T0 - HOUR, 2 * 60, 40, model="b", seed=200, cost_usd=0.01)
    add_calls(store, T0 + HOUR, 60, 200, model="b", seed=201, cost_usd=0.01)
    add_calls(store, T0 + 2 * HOUR, 60, 40, model="b", seed=202, cost_usd=0.01)
    add_calls(store, T0 - HOUR, 4 * 60, 4, model="c", seed=300, error_rate=0.05)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with built_store(tmp_path_factory.mktemp("prefetch") / "data", build) as opened:
        yield opened


def same(value: Any) -> Any:
    """``value`` with every float to 9 significant digits (dataclasses as dicts), for comparing reads."""
    if is_dataclass(value) and not isinstance(value, type):
        return same(asdict(value))
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, dict):
        return {k: same(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [same(v) for v in value]
    return value


def replay(store: Store, block: int) -> BacktestReport:
    report = backtest(store, load_rules(), T0 + OFFSET, T0 + SPAN + OFFSET, block=block)
    assert report.failed == {}
    return report


@pytest.fixture(scope="module")
def per_tick(history: Store) -> BacktestReport:
    return replay(history, 0)


def test_the_data_fires_every_minute_rule(per_tick: BacktestReport) -> None:
    fired = {(i.rule_id, i.series_key) for i in per_tick.incidents()}
    assert {("error-rate-high", "model=a"), ("ttft-p95-high", "model=a"), ("refusal-rate-high", "model=a"),
            ("cost-per-hour-spike", "model=b")} <= fired
    assert per_tick.sent


@pytest.mark.parametrize("block", [60, 7, 1])
def test_a_prefetching_backtest_reports_exactly_what_a_per_tick_one_does(history: Store,
                                                                          per_tick: BacktestReport,
                                                                          block: int) -> None:
    prefetched = replay(history, block)
    assert prefetched.ticks == per_tick.ticks
    assert same(prefetched.to_json()) == same(per_tick.to_json())


def test_observe_many_matches_observe_at_every_end_including_gaps(history: Store) -> None:
    rules = [r for r in load_rules().rules if r.id in ("error-rate-high", "ttft-p95-high", "refusal-rate-high",
                                                       "cost-per-hour-spike")]
    ends = [T0 + i * MIN for i in range(130, 190)]  # across the gap and the low-volume minutes
    for rule in rules:
        many = observe_many(history, rule, ends)
        assert sorted(many) == ends
        for end in ends:
            assert same(many[end]) == same(observe(history, rule, end)), (rule.id, end)


def test_observe_many_matches_observe_for_hourly_proportion_drift(history: Store) -> None:
    # from the hourly rollup, the usage rollup (by feature) and the raw table (empty responses by feature)
    ids = ("refusal-rate-drift", "refusal-rate-drift-by-feature", "empty-response-drift-by-feature")
    ends = [T0 + i * HOUR for i in range(-2, 4)]
    seen = 0
    for rule in [r for r in load_rules().rules if r.id in ids]:
        many = observe_many(history, rule, ends)
        for end in ends:
            assert same(many[end]) == same(observe(history, rule, end)), (rule.id, end)
            seen += sum(1 for o in many[end].values() if o.observation.value is not None)
    assert seen > 0
