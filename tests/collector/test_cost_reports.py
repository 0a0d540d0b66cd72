"""Cost reports: totals equal the calls to the cent, figures by hand, movers, forecast, storage, job, API, CLI."""

from __future__ import annotations

import csv
import io
import json
import math
import random
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal

import pytest

from inferwatch_collector.cost.reports import (
    CSV_COLUMNS, DIMENSIONS, OTHER_KEY, Metrics, ReportError, breakdown_sql, cap_lines, compute_cost_report,
    forecast_month_end, load_cost_report, parse_day, period_bounds, run_cost_report_job, save_cost_report,
)
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.rows import LlmCallRow
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.cli import main

from tests.helpers.cost_data import at, insert, priced, random_calls
from tests.helpers.keys import Keys
from tests.helpers.factories import llm_call

DB = "inferwatch"
# Stored calls must be within llm_calls' 90-day retention (older parts are dropped), so dates are relative:
# LAST_MONTH is the 1st of the month before the current one.
LAST_MONTH = (datetime.now(UTC).date().replace(day=1) - timedelta(days=1)).replace(day=1)


def last_month(day: int) -> date:
    return LAST_MONTH.replace(day=day)


def cents(value: float | Decimal) -> Decimal:
    return Decimal(repr(value) if isinstance(value, float) else value).quantize(Decimal("0.01"), ROUND_HALF_EVEN)


# --------------------------------------------------------------------------------------------------- pure


def test_periods_compare_with_an_equally_long_period_before() -> None:
    day = period_bounds("day", date(2026, 3, 15))
    assert (day.start, day.end, day.previous_start, day.previous_end) == (
        date(2026, 3, 15), date(2026, 3, 15), date(2026, 3, 14), date(2026, 3, 14))
    month = period_bounds("month", date(2026, 3, 15))
    assert (month.start, month.end, month.days) == (date(2026, 3, 1), date(2026, 3, 15), 15)
    assert (month.previous_start, month.previous_end) == (date(2026, 2, 14), date(2026, 2, 28))
    assert period_bounds("month", date(2026, 3, 31)).previous_start == date(2026, 1, 29)
    with pytest.raises(ReportError, match="period must be one of day, month"):
        period_bounds("week", date(2026, 3, 1))
    with pytest.raises(ReportError, match="date must be a day as YYYY-MM-DD"):
        parse_day("15/03/2026", date(2026, 3, 20))
    with pytest.raises(ReportError, match="in the future"):
        parse_day("2026-03-21", date(2026, 3, 20))


def test_forecast_mean_and_t_interval_by_hand() -> None:
    # March: days 1-3 cost 10, 12, 14; report as of the 3rd, run on the 4th (all three days complete).
    daily = {date(2026, 3, 1): 10.0, date(2026, 3, 2): 12.0, date(2026, 3, 3): 14.0}
    f = forecast_month_end(daily, date(2026, 3, 3), datetime(2026, 3, 4, 1, tzinfo=UTC))
    # mean 12, sd 2, 28 days left: 36 + 12 x 28 = 372 ± t(0.95, 2) x 2 x sqrt(28 + 28²/3)
    half = 2.919986 * 2 * math.sqrt(28 + 28 * 28 / 3)
    assert (f.spent_usd, f.days_sampled, f.days_remaining, f.daily_mean_usd, f.daily_sd_usd) == (36, 3, 28, 12, 2)
    assert f.month_end_usd == pytest.approx(372)
    assert (f.low_usd, f.high_usd) == (pytest.approx(372 - half), pytest.approx(372 + half))
    assert f.days_in_month == 31 and f.month == "2026-03"


def test_forecast_starts_at_the_first_active_day_and_counts_the_rest_of_today() -> None:
    # First call on the 10th; days 10-11 complete (11th empty: counts as 0), the 12th is today, half over.
    daily = {date(2026, 4, 10): 8.0, date(2026, 4, 12): 3.0}
    f = forecast_month_end(daily, date(2026, 4, 12), datetime(2026, 4, 12, 12, tzinfo=UTC))
    assert f.days_sampled == 2 and f.daily_mean_usd == 4.0 and f.spent_usd == 11.0
    assert f.days_remaining == pytest.approx(18.5)  # 18 days after the 12th + half of the 12th
    assert f.month_end_usd == pytest.approx(11 + 4 * 18.5)
    assert f.low_usd >= f.spent_usd


def test_forecast_edges_complete_month_one_day_no_day() -> None:
    done = forecast_month_end({date(2026, 2, 3): 5.0}, date(2026, 2, 28), datetime(2026, 3, 5, tzinfo=UTC))
    assert (done.month_end_usd, done.low_usd, done.high_usd, done.days_remaining) == (5.0, 5.0, 5.0, 0)
    one = forecast_month_end({date(2026, 2, 1): 5.0}, date(2026, 2, 1), datetime(2026, 2, 2, tzinfo=UTC))
    assert one.month_end_usd == pytest.approx(5 + 5 * 27) and one.low_usd is None and one.high_usd is None
    none = forecast_month_end({date(2026, 2, 1): 5.0}, date(2026, 2, 1), datetime(2026, 2, 1, 6, tzinfo=UTC))
    assert none.month_end_usd is None and none.spent_usd == 5.0 and "no complete day" in none.method


# --------------------------------------------------------------------------------------------------- store


def test_report_totals_equal_the_sum_of_the_calls_to_the_cent(store: Store) -> None:
    rng = random.Random(7)
    month = [last_month(d) for d in range(1, 16)]
    before = [last_month(1) - timedelta(days=d) for d in range(1, 16)]  # the previous period: 15 days before
    rows = random_calls(rng, month, 600) + random_calls(rng, before, 200)
    rows += random_calls(rng, month, 50, project="p2")  # another project: never in p1's report
    insert(store, rows)
    now = datetime.combine(last_month(16), datetime.min.time(), UTC) + timedelta(hours=3)
    report = compute_cost_report(store, "p1", "month", last_month(15), by=tuple(DIMENSIONS), now=now)

    mine = [r for r in rows if r.project_id == "p1" and r.start_time >= at(last_month(1), 0)]
    sql_total = store.query(
        f"SELECT sum(cost_usd) FROM {DB}.llm_calls WHERE project_id = 'p1' AND start_time >= {{a:Date}} AND "
        "start_time < {b:Date}", {"a": last_month(1), "b": last_month(16)}).result_rows[0][0]
    python_total = sum(Decimal(repr(r.cost_usd)) for r in mine)
    assert cents(report.totals.cost_usd) == cents(sql_total) == cents(python_total)
    assert report.totals.calls == len(mine)
    assert report.totals.errors == sum(r.status == "error" for r in mine)
    assert report.totals.unpriced == sum(r.unpriced for r in mine) > 0
    assert report.totals.usage_missing == sum(r.usage_missing for r in mine) > 0
    assert report.totals.cache_hits == sum(r.cache_hit for r in mine) > 0
    assert cents(report.totals.cost_avoided_usd) == cents(sum(Decimal(repr(r.cost_avoided_usd)) for r in mine))
    assert cents(report.totals.cache_savings_usd) == cents(sum(Decimal(repr(r.cache_savings_usd)) for r in mine))
    for breakdown in report.breakdowns:  # every breakdown partitions the same calls
        summed = Metrics.total([line.metrics for line in breakdown.lines])
        assert summed.calls == report.totals.calls and cents(summed.cost_usd) == cents(report.totals.cost_usd)
    previous = [r for r in rows if r.project_id == "p1" and r.start_time < at(last_month(1), 0)]
    assert cents(report.previous_totals_cost_usd) == cents(sum(Decimal(repr(r.cost_usd)) for r in previous))
    by_model = {line.key: line for line in report.breakdown("model").lines}
    for model, line in by_model.items():
        want = sum(Decimal(repr(r.cost_usd)) for r in mine if r.model == model)
        assert cents(line.metrics.cost_usd) == cents(want)
    assert [(v.price_version, v.calls) for v in report.price_versions] == [("r1", len(mine))]
    assert report.forecast.spent_usd == pytest.approx(report.totals.cost_usd)
    assert report.forecast.days_sampled == 15 and not report.partial


def _costed(model: str, day: date, cost: float, **fields) -> LlmCallRow:
    return llm_call(start_time=at(day), model=model, cost_usd=cost, price_version="r1", **fields)


def test_movers_rank_by_absolute_change_and_include_vanished_keys(store: Store) -> None:
    day = last_month(10)
    before = day - timedelta(days=1)
    insert(store, [_costed("a", day, 10.0), _costed("a", before, 9.0), _costed("b", day, 1.0),
                   _costed("b", before, 6.0), _costed("c", day, 4.0), _costed("gone", before, 3.0),
                   _costed("gone", before, 0.0), _costed("same", day, 2.0), _costed("same", before, 2.0)])
    report = compute_cost_report(store, "p1", "day", day, by=["model"], movers=3, now=datetime.now(UTC))
    breakdown = report.breakdown("model")
    assert [line.key for line in breakdown.lines] == ["a", "c", "same", "b"]  # by cost; 'gone' has no calls now
    assert [(m.key, m.delta_usd, m.delta_pct) for m in breakdown.movers] == [
        ("b", -5.0, -5 / 6), ("c", 4.0, None), ("gone", -3.0, -1.0)]
    assert (report.totals.cost_usd, report.totals.calls) == (17.0, 4)
    assert (report.previous_totals_cost_usd, report.previous_totals_calls) == (20.0, 5)
    assert report.delta_pct == pytest.approx(-0.15)


def test_capped_lines_still_add_up_to_the_totals(store: Store) -> None:
    day = last_month(10)
    insert(store, [_costed("m", day, float(i), user_hash=f"u{i:02d}", status="error" if i == 1 else "ok")
                   for i in range(1, 11) for _ in range(i)])
    report = compute_cost_report(store, "p1", "day", day, by=["user", "project"], limit=4, now=datetime.now(UTC))
    users = report.breakdown("user")
    assert [line.key for line in users.lines] == ["u10", "u09", "u08", OTHER_KEY]
    other = users.lines[-1]
    assert other.keys == 7 and other.metrics.calls == sum(range(1, 8)) and users.keys_total == 10
    assert other.metrics.cost_usd == sum(i * i for i in range(1, 8)) and other.metrics.errors == 1
    assert other.price_versions == ("r1",)
    assert Metrics.total([line.metrics for line in users.lines]) == report.totals
    assert [line.key for line in report.breakdown("project").lines] == ["p1"]
    assert report.breakdown("project").lines[0].metrics == report.totals
    capped = cap_lines(users.lines, 2)  # what a stored report keeps: an earlier (other) folds in
    assert [line.key for line in capped] == ["u10", OTHER_KEY] and capped[1].keys == 9
    assert Metrics.total([line.metrics for line in capped]) == report.totals


def test_reports_read_the_cost_1d_projections(store: Store) -> None:
    """Migration 0003's projections serve the breakdowns (a model or user report reads a few rows per day)."""
    day = last_month(10)
    insert(store, [_costed("m", day, 1.0, user_hash="u1"), _costed("n", day - timedelta(days=1), 2.0)])
    params = {"p": "p1", "start": day, "previous_start": day - timedelta(days=1), "end": day, "limit": 10,
              "movers": 5}
    for dimension, projection in (("model", "by_dims"), ("feature", "by_dims"), ("user", "by_user")):
        plan = store.query("EXPLAIN projections = 1 " + breakdown_sql(store, dimension), params).result_rows
        assert f"ReadFromMergeTree ({projection})" in "\n".join(row[0] for row in plan), dimension
    report = compute_cost_report(store, "p1", "day", day, by=["user"], now=datetime.now(UTC))
    assert report.totals.cost_usd == 1.0 and report.previous_totals_cost_usd == 2.0


def test_line_figures_by_hand(store: Store) -> None:
    day = last_month(4)
    rows = [
        # gpt-4o: 1,000 input of which 400 cached, 200 output: 600 x 2.5 + 400 x 1.25 + 200 x 10 = $0.004 (µ$ 4000)
        priced(llm_call(start_time=at(day), model="gpt-4o", input_tokens=1_000, cache_read_tokens=400,
                        output_tokens=200)),
        # same usage, failed
        priced(llm_call(start_time=at(day), model="gpt-4o", input_tokens=1_000, cache_read_tokens=400,
                        output_tokens=200, status="error")),
        # answered from the app's cache: costs nothing, avoided $0.004
        priced(llm_call(start_time=at(day), model="gpt-4o", input_tokens=1_000, cache_read_tokens=400,
                        output_tokens=200, cache_hit=True)),
        priced(llm_call(start_time=at(day), model="mystery-7b", input_tokens=10, output_tokens=10)),
        priced(llm_call(start_time=at(day), model="gpt-4o", input_tokens=0, output_tokens=0,
                        usage_missing=True)),
        priced(llm_call(start_time=at(day - timedelta(days=1)), model="gpt-4o", input_tokens=1_000,
                        output_tokens=0)),  # previous day: $0.0025
    ]
    insert(store, rows)
    report = compute_cost_report(store, "p1", "day", day, by=["model"], now=datetime.now(UTC))
    lines = {line.key: line for line in report.breakdown("model").lines}
    gpt = lines["gpt-4o"].metrics
    assert (gpt.calls, gpt.errors, gpt.successful_calls, gpt.cache_hits, gpt.usage_missing) == (4, 1, 3, 1, 1)
    assert gpt.cost_usd == pytest.approx(0.008)
    assert gpt.cost_per_successful_call_usd == pytest.approx(0.008 / 3)
    assert gpt.cache_hit_ratio == pytest.approx(1_200 / 3_000)
    assert gpt.cache_savings_usd == pytest.approx(2 * 400 * 1.25e-6)  # the app-cache hit saved no prompt cache
    assert gpt.cost_avoided_usd == pytest.approx(0.004)
    assert lines["gpt-4o"].previous_cost_usd == pytest.approx(0.0025)
    assert lines["gpt-4o"].delta_usd == pytest.approx(0.0055)
    assert lines["mystery-7b"].metrics.unpriced == 1 and lines["mystery-7b"].metrics.cost_usd == 0


def test_save_replaces_and_stores_typed_rows_and_the_report(store: Store) -> None:
    day = date(2026, 6, 10)
    rows = random_calls(random.Random(3), [day - timedelta(days=i) for i in range(3)], 120)
    insert(store, rows)
    now = datetime(2026, 6, 11, 2, tzinfo=UTC)
    report = compute_cost_report(store, "p1", "month", day, by=tuple(DIMENSIONS), now=now)
    written = save_cost_report(store, report)
    again = compute_cost_report(store, "p1", "month", day, by=tuple(DIMENSIONS), now=now + timedelta(hours=1))
    assert save_cost_report(store, again) == written
    stored = store.query(f"SELECT source, provider, model, calls, cost_usd, details FROM {DB}.cost_reports FINAL "
                         "WHERE project_id = 'p1' AND period_type = 'month' AND period_start = '2026-06-01'"
                         ).result_rows
    assert len(stored) == written  # replaced, not doubled
    typed = [r for r in stored if r[0] == "computed"]
    assert sum(r[3] for r in typed) == report.totals.calls
    assert cents(sum(r[4] for r in typed)) == cents(report.totals.cost_usd)
    assert {(r[1], r[2]) for r in typed} == {(r.provider, r.model) for r in rows}
    assert all(int(r[5]["unpriced"]) == (r[4] == 0) * r[3] for r in typed if r[2] == "mystery-7b")
    loaded = load_cost_report(store, "p1", "month", date(2026, 6, 1))
    assert loaded["generated_at"] == again.generated_at.isoformat()
    assert loaded["totals"]["calls"] == report.totals.calls
    assert {b["dimension"] for b in loaded["breakdowns"]} == set(DIMENSIONS)
    assert load_cost_report(store, "p1", "day", date(2026, 6, 1)) is None


def test_daily_job_stores_yesterday_and_month_to_date_for_every_active_project(store: Store) -> None:
    yesterday = date(2026, 7, 1)
    insert(store, random_calls(random.Random(5), [yesterday], 40)
           + random_calls(random.Random(6), [date(2026, 6, 30)], 10, project="p2"))
    result = run_cost_report_job(store, datetime(2026, 7, 2, 0, 10, tzinfo=UTC))
    assert result.day == yesterday and result.failed == ()
    assert sorted((p, k) for p, k, _ in result.saved) == [("p1", "day"), ("p1", "month"), ("p2", "day"),
                                                          ("p2", "month")]
    assert load_cost_report(store, "p1", "day", yesterday)["totals"]["calls"] == 40
    p2 = load_cost_report(store, "p2", "month", date(2026, 7, 1))
    assert p2["totals"]["calls"] == 0 and p2["previous"]["calls"] == 10  # active last period: shown as a mover
    run_cost_report_job(store, datetime(2026, 7, 2, 5, tzinfo=UTC))
    count = store.query(f"SELECT count() FROM {DB}.cost_reports FINAL WHERE source = 'report'").result_rows[0][0]
    assert count == 4


def test_bad_parameters_name_the_parameter(store: Store) -> None:
    now = datetime(2026, 3, 5, tzinfo=UTC)
    with pytest.raises(ReportError, match="by must be one of"):
        compute_cost_report(store, "p1", "day", date(2026, 3, 4), by=["colour"], now=now)
    with pytest.raises(ReportError, match="in the future"):
        compute_cost_report(store, "p1", "day", date(2026, 3, 6), now=now)
    with pytest.raises(ReportError, match="limit must be at least 1"):
        compute_cost_report(store, "p1", "day", date(2026, 3, 4), now=now, limit=0)


# --------------------------------------------------------------------------------------------------- API, CLI


def test_report_api_json_and_csv_are_scoped_to_the_key_project(client, store: Store, keys: Keys) -> None:
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    rows = [priced(llm_call(start_time=at(yesterday), model="gpt-4o", feature=f)) for f in ("a", "b", "b")]
    insert(store, rows + [priced(llm_call("p2", start_time=at(yesterday), model="gpt-4o"))])
    auth = Keys.header(keys.read)
    params = {"period": "day", "date": yesterday.isoformat(), "by": "feature,model"}
    body = client.get("/api/v1/costs/report", params=params, headers=auth).json()
    assert body["totals"]["calls"] == 3 and body["project_id"] == "p1"
    assert cents(body["totals"]["cost_usd"]) == cents(sum(Decimal(repr(r.cost_usd)) for r in rows))
    assert [b["dimension"] for b in body["breakdowns"]] == ["feature", "model"]
    assert [(line["key"], line["calls"]) for line in body["breakdowns"][0]["lines"]] == [("b", 2), ("a", 1)]
    assert body["price_versions"][0]["price_version"] == "r1" and "forecast" in body

    response = client.get("/api/v1/costs/report.csv", params=params, headers=auth)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    table = list(csv.DictReader(io.StringIO(response.text)))
    assert tuple(table[0]) == CSV_COLUMNS
    assert [(r["dimension"], r["key"], r["calls"]) for r in table] == [
        ("total", "p1", "3"), ("feature", "b", "2"), ("feature", "a", "1"), ("model", "gpt-4o", "3")]

    assert client.get("/api/v1/costs/report", params=params).status_code == 401
    other = client.get("/api/v1/costs/report", params=params, headers=Keys.header(keys.other_project)).json()
    assert other["totals"]["calls"] == 1


@pytest.mark.parametrize("params, message", [
    ({"period": "week"}, "period must be one of day, month"),
    ({"by": "colour"}, "by must be one of"),
    ({"date": "2026-13-01"}, "date must be a day as YYYY-MM-DD"),
    ({"date": "2999-01-01"}, "in the future"),
    ({"limit": "0"}, "limit must be a whole number"),
    ({"limit": "many"}, "limit must be a whole number"),
])
def test_report_api_answers_400_naming_the_parameter(client, keys: Keys, params: dict, message: str) -> None:
    response = client.get("/api/v1/costs/report", params=params, headers=Keys.header(keys.read))
    assert response.status_code == 400 and message in response.json()["error"]


def test_report_cli_prints_exports_and_saves(tmp_path, capsys) -> None:
    data = tmp_path / "data"
    settings = Settings(data_dir=data, clickhouse_url="")
    store = Store.open(settings)
    day = datetime.now(UTC).date() - timedelta(days=1)
    try:
        migrate(store, target_for(settings, store))
        insert(store, [priced(llm_call("shop", start_time=at(day), model="gpt-4o")),
                       priced(llm_call("shop", start_time=at(day), model="mystery-7b"))])
    finally:
        store.close()
    args = ["--data-dir", str(data), "report", "--project", "shop", "--period", "day", "--date", day.isoformat()]
    assert main([*args, "--by", "model", "--by", "feature", "--save"]) == 0
    text = capsys.readouterr().out
    assert "Cost report: project shop, day" in text and "By model (2 keys)" in text and "By feature" in text
    assert "Unpriced calls: 1" in text and "Price versions: r1" in text
    assert main([*args, "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["dimension"] == "total" and rows[0]["unpriced"] == "1"
    assert main(["--data-dir", str(data), "report", "--project", "shop", "--date", "soon"]) == 2
    assert "--date must be a day" in capsys.readouterr().err
    store = Store.open(settings)
    try:
        saved = load_cost_report(store, "shop", "day", day)
        assert saved["totals"]["calls"] == 2 and len(saved["breakdowns"]) == len(DIMENSIONS)
    finally:
        store.close()
    assert json.dumps(saved)
