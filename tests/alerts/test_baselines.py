"""Baseline-relative rules over real chDB rows: the seasonal cost baseline on a diurnal week (afternoon peaks at
~2x the daily mean never fire; a 5x spike of one model does, within 30 minutes, and yesterday's spike does not
move today's baseline), learning before enough history (a fresh install's first day fires nothing, where the
old daily average did), and a refusal spike confined to one feature found by the per-feature rule.

The traffic is generated in the database (tests/helpers/traffic.py); the rules are the packaged defaults.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from inferwatch_alerts.backtest import backtest
from inferwatch_alerts.observations import LEARNING, observe
from inferwatch_alerts.rules import BaselineSpec, Rule, RuleSet, load_rules
from inferwatch_alerts.signals import choose_source
from inferwatch_collector.store import Store

from tests.helpers.traffic import add_calls
from tests.helpers.stores import built_store

MIN = timedelta(minutes=1)
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
H = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - 2 * HOUR  # traffic ends here
S = H - 2 * HOUR  # today's spike: [S, S + 2h), at the daily peak
DAYS = 10


def diurnal_cost(start: datetime, per_minute: int, usd: float) -> str:
    """Cost per call following the day, with mean ``usd``: a peak of 2.15x the mean at S's time of day and a
    night at 0.29x (exp(cos), normalised by I0(1)). Cost per hour sees volume times cost per call, so this is
    a diurnal traffic curve."""
    t = f"(toInt64({int(start.timestamp())}) + intDiv(number * 60, {per_minute}))"
    return f"{usd} * exp(cos(2 * pi() * ({t} - {int(S.timestamp())}) / 86400)) / 1.2660658777520082"


def build(store: Store) -> None:
    start = H - DAYS * DAY
    minutes = DAYS * 1440
    for model, per_minute, usd, seed in (("big", 10, 0.004, 1), ("small", 2, 0.004, 2)):
        add_calls(store, start, minutes, per_minute, project="shop", model=model, seed=seed,
                  cost_usd=diurnal_cost(start, per_minute, usd), feature="search", refusal_rate=0.01)
    # a 'support' feature on the big model, 1% refusals ... until a prompt change: 12% for the last 2 hours
    add_calls(store, start, minutes - 120, 3, project="shop", model="big", seed=3, cost_usd=0.0,
              feature="support", refusal_rate=0.01)
    add_calls(store, S, 120, 3, project="shop", model="big", seed=4, cost_usd=0.0, feature="support",
              refusal_rate=0.12)
    # yesterday, the small model ran at 3x for two hours at this time (a bad previous day) ...
    add_calls(store, S - DAY, 120, 4, project="shop", model="small", seed=5,
              cost_usd=diurnal_cost(S - DAY, 4, 0.004))
    # ... and today at 5x
    add_calls(store, S, 120, 8, project="shop", model="small", seed=6, cost_usd=diurnal_cost(S, 8, 0.004))
    # a fresh install: its first day of the same diurnal traffic
    add_calls(store, H - DAY, 1440, 10, project="fresh", model="big", seed=7,
              cost_usd=diurnal_cost(H - DAY, 10, 0.004))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with built_store(tmp_path_factory.mktemp("baselines") / "data", build) as opened:
        yield opened


def rule(rule_id: str) -> Rule:
    found = load_rules().rule(rule_id)
    assert found is not None
    return found


def breaches(store: Store, r: Rule, ends: list[datetime], project: str = "shop") -> list[tuple[datetime, str]]:
    return [(end, key) for end in ends for (_, key), seen in observe(store, r, end, [project]).items()
            if seen.observation.breaching]


def every(start: datetime, stop: datetime, step: timedelta) -> list[datetime]:
    return [start + i * step for i in range(int((stop - start) / step))]


# ---------------------------------------------------------------------------------------- seasonal cost


def test_diurnal_peaks_never_fire_but_would_against_the_daily_mean(store: Store) -> None:
    cost = rule("cost-per-hour-spike")
    assert isinstance(cost.condition, BaselineSpec) and cost.condition.kind == "seasonal"
    # four ordinary days (the hours after yesterday's spike excluded: that spike is real), every 20 minutes
    ends = [t for t in every(S - 4 * DAY, S, 30 * MIN) if not S - DAY <= t < S - DAY + 2 * HOUR + 30 * MIN]
    assert breaches(store, cost, ends) == []
    # the brief's old rule (2x the trailing 24 h average) fires at every afternoon peak of the same traffic
    daily = replace(cost, condition=BaselineSpec("daily_average", 2.0, ">", 86400, min_value=0.25,
                                                 min_days=1))
    peaks = [S - d * DAY + 30 * MIN for d in (2, 3, 4)]
    assert len(breaches(store, daily, peaks)) >= 2


def test_a_spike_of_one_model_is_found_within_30_minutes(store: Store) -> None:
    cost = rule("cost-per-hour-spike")
    report = backtest(store, RuleSet(rules=(cost,)), S - 5 * MIN, S + 40 * MIN, projects=["shop"])
    fired = [(e.event_time, e.series_key) for e in report.events if e.state == "firing"]
    assert [k for _, k in fired] == ["model=small"]
    delay = fired[0][0] - S
    assert delay <= 30 * MIN, delay
    # the baseline is the same 30 minutes on earlier days: yesterday's 3x is one day of seven, outvoted
    seen = observe(store, cost, S + 30 * MIN, ["shop"])[("shop", "model=small")].observation
    normal = seen.value / 5 if seen.value else math.nan  # today runs at 5x
    assert seen.baseline is not None and abs(seen.baseline / normal - 1) < 0.15
    assert seen.details["baseline_windows"] == "7"


# ----------------------------------------------------------------------------------------------- learning


def test_a_fresh_install_learns_on_its_first_day_and_fires_nothing(store: Store) -> None:
    ends = every(H - DAY + HOUR, H + MIN, HOUR)
    for r in load_rules().rules:
        if r.condition.history_days == 0:
            continue
        for end in ends:
            for seen in observe(store, r, end, ["fresh"]).values():
                obs = seen.observation
                assert not obs.breaching, (r.id, end)
                if obs.value is not None and r.id == "cost-per-hour-spike":
                    assert obs.details[LEARNING] == "learning: has 0 of 3 days"
    # the old daily average (no learning) fired in the first hours: a day that is mostly empty averages low
    daily = replace(rule("cost-per-hour-spike"),
                    condition=BaselineSpec("daily_average", 2.0, ">", 86400, min_value=0.25, min_days=0))
    assert breaches(store, daily, ends[:12], "fresh") != []


def test_learning_counts_same_hour_days_and_says_so(store: Store) -> None:
    cost = rule("cost-per-hour-spike")
    three = replace(cost, condition=replace(cost.condition, min_days=3))
    # shop's small model at S - 8 days: one day of history before it (DAYS = 10)
    early = observe(store, three, H - (DAYS - 1) * DAY - HOUR, ["shop"])[("shop", "model=big")].observation
    assert early.breaching is None and early.value is not None
    assert early.details[LEARNING] == "learning: has 0 of 3 days"
    later = observe(store, three, H - (DAYS - 2) * DAY - HOUR, ["shop"])[("shop", "model=big")].observation
    assert later.details[LEARNING] == "learning: has 1 of 3 days"
    ready = observe(store, three, H - (DAYS - 4) * DAY - HOUR, ["shop"])[("shop", "model=big")].observation
    assert LEARNING not in ready.details and ready.breaching is False


# ----------------------------------------------------------------------------------------- per feature


def test_a_refusal_spike_in_one_feature_is_found_by_its_own_series(store: Store) -> None:
    by_feature = rule("refusal-rate-drift-by-feature")
    assert by_feature.group_by == ("project", "feature") and by_feature.min_requests >= 50
    hourly = [(int((S - HOUR).timestamp()), int(S.timestamp()))]
    assert choose_source(by_feature.signal, by_feature.group_by, hourly).name == "usage_1h"
    before = observe(store, by_feature, S, ["shop"])
    assert {k: o.observation.breaching for k, o in before.items()} == {
        ("shop", "feature=search"): False, ("shop", "feature=support"): False}
    after = observe(store, by_feature, S + HOUR, ["shop"])  # the first hourly evaluation after the change
    assert after[("shop", "feature=support")].observation.breaching is True
    assert after[("shop", "feature=search")].observation.breaching is False
