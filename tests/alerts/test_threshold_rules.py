"""The default threshold rules on real rows in chDB: blips never page, a sustained burst pages within minutes, a
signal hovering at its threshold is one incident, and a restart in the middle of a quiet period carries on.

Calls are written into ``llm_calls`` (the materialized views fill the rollups, as for ingested calls) and the
rules are evaluated with :func:`~inferwatch_alerts.backtest.backtest` (memory) or :func:`evaluate` through
``alert_state``, exactly as the scheduler runs them. Each scenario is checked against a variant of the same rule
without the mechanism under test, so the data is shown to contain what the mechanism is there to stop.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from inferwatch_alerts.alert_state import DbBackend
from inferwatch_alerts.backtest import Incident, backtest
from inferwatch_alerts.evaluate import evaluate
from inferwatch_alerts.rules import RuleSet, Threshold, load_rules
from inferwatch_alerts.signals import SIGNALS, read_windows
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store

from tests.helpers.traffic import add_calls, lognormal

MIN = timedelta(minutes=1)
SEC = timedelta(seconds=1)
OFFSET = timedelta(seconds=60)  # the default evaluation offset: a window ending at E is evaluated at E + 60 s
T = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=3)


def only(rule_id: str, **changes: object) -> RuleSet:
    """The packaged defaults with just ``rule_id`` (optionally changed)."""
    ruleset = load_rules()
    rule = ruleset.rule(rule_id)
    assert rule is not None
    return replace(ruleset, rules=(replace(rule, **changes),))


def incidents(store: Store, ruleset: RuleSet, minutes: int) -> dict[str, list[Incident]]:
    """Incidents per series of a minute-by-minute replay of [T, T + minutes] (window ends)."""
    report = backtest(store, ruleset, T + OFFSET, T + minutes * MIN + OFFSET)
    assert report.failed == {}
    out: dict[str, list[Incident]] = {}
    for incident in report.incidents():
        out.setdefault(incident.series_key, []).append(incident)
    return out


def error_traffic(store: Store, model: str, segments: list[tuple[timedelta, timedelta, float]], seed: int) -> None:
    """One call a second for 90 minutes from T at 0.3% errors, except ``(start, length, rate)`` segments."""
    cursor, i = T, 0
    for start, length, rate in [*segments, (90 * MIN, timedelta(0), 0.0)]:
        if T + start > cursor:
            add_calls(store, cursor, (T + start - cursor) / MIN, 60, model=model, seed=seed * 100 + i,
                      error_rate=0.003)
            i += 1
        if length:
            add_calls(store, T + start, length / MIN, 60, model=model, seed=seed * 100 + i, error_rate=rate)
            i += 1
        cursor = T + start + length


def test_the_window_and_its_last_minutes_come_from_one_read(store: Store) -> None:
    for i in range(7):  # minute i of [T - 1m, T + 6m) holds i + 1 calls
        add_calls(store, T + (i - 1) * MIN, 1, i + 1, seed=i, model="m")
    start, end = int(T.timestamp()), int((T + 5 * MIN).timestamp())
    rows = read_windows(store, SIGNALS["error_rate"], ("project", "model"), [(start, end)], buckets=3)
    calls = {r.k: r.measures["calls"] for r in rows}
    # window [T, T + 5m): minutes 1..5 hold 2+3+4+5+6 calls; bucket 1 is its last minute, 3 the earliest read
    assert calls == {0: 20.0, 1: 6.0, 2: 5.0, 3: 4.0}
    # the same from the raw table (grouped by feature, which no minute rollup carries)
    rows = read_windows(store, SIGNALS["error_rate"], ("project", "feature"), [(start, end)], buckets=3)
    assert {r.k: r.measures["calls"] for r in rows} == calls


BURST_START, BURST = 20 * MIN, 20 * MIN


def test_error_blips_never_page_and_a_five_percent_burst_pages_within_ten_minutes(store: Store) -> None:
    error_traffic(store, "blip2m", [(20 * MIN + 30 * SEC, 2 * MIN, 0.2), (50 * MIN + 20 * SEC, 2 * MIN, 0.3)], 1)
    error_traffic(store, "blip90s", [(30 * MIN + 15 * SEC, 90 * SEC, 0.25)], 2)
    error_traffic(store, "burst", [(BURST_START, BURST, 0.05)], 3)
    error_traffic(store, "calm", [], 4)
    found = incidents(store, only("error-rate-high"), 90)
    assert list(found) == ["model=burst"]
    [burst] = found["model=burst"]
    paged = burst.fired_at + OFFSET  # the evaluation that fired it
    assert 5 * MIN <= paged - (T + BURST_START) <= 10 * MIN and burst.severity == "critical"
    # resolved once, after the burst has left the window's point rate and the 10-minute quiet period
    assert burst.resolved_at is not None
    assert 10 * MIN <= burst.resolved_at - (T + BURST_START + BURST) <= 25 * MIN

    # the blips were bad enough to page a rule without the sustain (the old `for: 5m`, same guarded window)
    unsustained = incidents(store, only("error-rate-high", sustain=None, for_s=300), 90)
    assert {"model=blip2m", "model=blip90s"} <= set(unsustained)


def test_a_ttft_blip_does_not_page_and_a_regression_does(store: Store) -> None:
    normal = lognormal(400, 0.3, 10, 1)
    add_calls(store, T, 90, 20, model="blip", seed=1, ttft_ms=normal)
    add_calls(store, T + 30 * MIN + 20 * SEC, 2, 20, model="blip", seed=2, ttft_ms=lognormal(4000, 0.2, 10, 2))
    add_calls(store, T, 30, 20, model="slow", seed=3, ttft_ms=normal)
    add_calls(store, T + 30 * MIN, 30, 20, model="slow", seed=4, ttft_ms=lognormal(3000, 0.2, 10, 4))
    add_calls(store, T + 60 * MIN, 30, 20, model="slow", seed=5, ttft_ms=normal)
    found = incidents(store, only("ttft-p95-high"), 90)
    assert list(found) == ["model=slow"]
    [slow] = found["model=slow"]
    assert slow.fired_at + OFFSET - (T + 30 * MIN) <= 7 * MIN and slow.resolved_at is not None
    assert {"model=blip", "model=slow"} <= set(incidents(store, only("ttft-p95-high", sustain=None), 90))


def hovering_ttft(store: Store) -> None:
    """``hover``: normal for 10 minutes, 3 s for 10, then 60 minutes alternating 6 minutes at a p95 of about
    2.6 s and 6 minutes at about 1.8 s (around the 2 s threshold, above the 1.6 s clear level), then normal."""
    add_calls(store, T, 10, 20, model="hover", seed=1, ttft_ms=lognormal(400, 0.3, 10, 1))
    add_calls(store, T + 10 * MIN, 10, 20, model="hover", seed=2, ttft_ms=lognormal(3000, 0.1, 10, 2))
    for i in range(10):
        median = 2200 if i % 2 == 0 else 1530  # p95 = median * exp(1.645 * 0.1)
        add_calls(store, T + (20 + 6 * i) * MIN, 6, 20, model="hover", seed=10 + i,
                  ttft_ms=lognormal(median, 0.1, 10, 10 + i))
    add_calls(store, T + 80 * MIN, 40, 20, model="hover", seed=3, ttft_ms=lognormal(400, 0.3, 10, 3))


def test_a_ttft_p95_hovering_at_its_threshold_is_one_incident(store: Store) -> None:
    hovering_ttft(store)
    [one] = incidents(store, only("ttft-p95-high"), 110)["model=hover"]
    assert T + 10 * MIN < one.fired_at <= T + 16 * MIN
    # resolved only after the hovering ended (T + 80m) and the value stayed at or below 1.6 s for 10 minutes
    assert one.resolved_at is not None and T + 90 * MIN <= one.resolved_at <= T + 97 * MIN
    # without the clear level and the quiet period, the same rule fires again at every swing above 2 s
    rule = load_rules().rule("ttft-p95-high")
    assert rule is not None and isinstance(rule.condition, Threshold)
    flapping = incidents(store, only("ttft-p95-high", condition=replace(rule.condition, clear=None),
                                     resolve_after_s=0), 110)["model=hover"]
    assert len(flapping) >= 4


def test_a_restart_in_the_middle_of_the_quiet_period_carries_on(store: Store, settings: Settings) -> None:
    hovering_ttft(store)
    ruleset = only("ttft-p95-high")
    [expected] = incidents(store, ruleset, 110)["model=hover"]
    assert expected.resolved_at is not None
    restart_at = expected.resolved_at - 4 * MIN  # six minutes into the ten-minute quiet period

    def run(s: Store, start: datetime, stop: datetime) -> list[tuple[datetime, str]]:
        events = []
        end = start
        while end <= stop:
            result = evaluate(s, ruleset, end + OFFSET, backend=DbBackend(s), projects=["p1"])
            events += [(e.event_time, e.state) for e in result.events]
            end += MIN
        return events

    before = run(store, T, restart_at)
    assert before == [(expected.fired_at, "firing")]
    [(state, clear_since)] = store.query("SELECT state, clear_since FROM alert_state FINAL WHERE project_id = "
                                         "'p1' AND rule_id = 'ttft-p95-high'").result_rows
    assert state == "firing" and clear_since.replace(tzinfo=UTC) == expected.resolved_at - 10 * MIN

    store.close()  # a new process: nothing in memory, the state in alert_state
    reopened = Store.open(settings)
    try:
        after = run(reopened, restart_at + MIN, T + 110 * MIN)
    finally:
        reopened.close()
    assert after == [(expected.resolved_at, "resolved")]


def test_a_p95_of_a_few_dozen_calls_does_not_page_on_its_slowest_calls(store: Store) -> None:
    """18 calls a minute with 2.5% of them slow (x5): the true p95 is ~1.8 s, but a 5-minute window of 90 calls
    shows its 5th slowest call as p95, often above 2 s. The confidence bound (the 9th slowest of 90) keeps it
    quiet; a real regression (every call x3.5) at the same volume still pages."""
    spiky = f"if({'(cityHash64(number, 77) % 1000) / 1000.'} < 0.025, 5, 1) * {lognormal(850, 0.35, 10, 7)}"
    add_calls(store, T, 90, 18, model="spiky", seed=7, ttft_ms=spiky)
    add_calls(store, T, 30, 18, model="slow", seed=8, ttft_ms=lognormal(850, 0.35, 10, 8))
    add_calls(store, T + 30 * MIN, 30, 18, model="slow", seed=9, ttft_ms=lognormal(850 * 3.5, 0.35, 10, 9))
    add_calls(store, T + 60 * MIN, 30, 18, model="slow", seed=10, ttft_ms=lognormal(850, 0.35, 10, 10))
    found = incidents(store, only("ttft-p95-high"), 90)
    assert list(found) == ["model=slow"]
    [slow] = found["model=slow"]
    assert 4 * MIN <= slow.fired_at + OFFSET - (T + 30 * MIN) <= 10 * MIN
    # without the bound, the spiky model's noisy p95 pages
    rule = load_rules().rule("ttft-p95-high")
    assert rule is not None and isinstance(rule.condition, Threshold)
    unguarded = incidents(store, only("ttft-p95-high", condition=replace(rule.condition, confidence=None)), 90)
    assert "model=spiky" in unguarded


def test_a_regression_that_takes_the_p95_just_past_two_seconds_pages_within_ten_minutes(store: Store) -> None:
    """Issue 30's TTFT regression: every call of a 380 ms model x3.5 (p95 ~2.4 s, 20% above the threshold) at
    25 streamed calls a minute. The bound reads the percentile at a lower rank (a 1-minute bucket's ~3rd slowest
    call, the window's ~11th), which such a regression moves as much as the p95: it pages within 10 minutes and
    resolves after. A model whose normal calls include 3% outliers at 5 s stays quiet."""
    add_calls(store, T, 30, 25, model="mini", seed=11, ttft_ms=lognormal(380, 0.35, 10, 11))
    add_calls(store, T + 30 * MIN, 30, 25, model="mini", seed=12, ttft_ms=lognormal(380 * 3.5, 0.35, 10, 12))
    add_calls(store, T + 60 * MIN, 30, 25, model="mini", seed=13, ttft_ms=lognormal(380, 0.35, 10, 13))
    outliers = f"if({'(cityHash64(number, 78) % 1000) / 1000.'} < 0.03, 5000, {lognormal(850, 0.35, 10, 14)})"
    add_calls(store, T, 90, 25, model="outliers", seed=14, ttft_ms=outliers)
    found = incidents(store, only("ttft-p95-high"), 90)
    assert list(found) == ["model=mini"]
    [mini] = found["model=mini"]
    assert 4 * MIN <= mini.fired_at + OFFSET - (T + 30 * MIN) <= 10 * MIN and mini.resolved_at is not None


def test_night_minutes_of_a_few_calls_are_not_slow_for_their_one_outlier(store: Store) -> None:
    """8 streamed calls a minute (a busy model at night) with 3% slow outliers (x3-8): the true p95 is ~1.5 s,
    but a minute's p95 is its slowest call and a 5-minute p95 of 40 its 2nd-3rd slowest. The bound's exact rank
    reads a minute's 2nd slowest call at 80% (a rank from a normal approximation, or a spread from the
    neighbouring quantiles, would read the outlier itself) and the window's 5th slowest: no page in 3 hours."""
    slow, factor = "(cityHash64(number, 79) % 1000) / 1000.", "3 + 5 * (cityHash64(number, 80) % 1000) / 1000."
    outliers = f"if({slow} < 0.03, {factor}, 1) * {lognormal(850, 0.35, 10, 15)}"
    add_calls(store, T, 180, 8, model="night", seed=15, ttft_ms=outliers)
    assert incidents(store, only("ttft-p95-high"), 180) == {}
    rule = load_rules().rule("ttft-p95-high")
    assert rule is not None and isinstance(rule.condition, Threshold)
    unguarded = only("ttft-p95-high", condition=replace(rule.condition, confidence=None))
    assert "model=night" in incidents(store, unguarded, 180)
