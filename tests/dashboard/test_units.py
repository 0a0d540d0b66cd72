"""The dashboard's pure parts: time windows, number formats, derived rates, colours and figures, the API client's
error messages, and how the dashboard process is launched. No Streamlit session, no collector."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import httpx
import pandas as pd
import pytest

from inferwatch_dashboard import api, charts, fmt, launch, metrics, timeaxis, timerange
from inferwatch_server.cli import main as cli_main

NOW = datetime(2026, 3, 10, 12, 34, 56, tzinfo=UTC)


# --- time windows ----------------------------------------------------------------------------------------------
def test_preset_windows_end_at_the_next_minute_so_answers_can_be_cached():
    win = timerange.window("24h", now=NOW)
    assert win.end == datetime(2026, 3, 10, 12, 35, tzinfo=UTC)
    assert win.length == timedelta(hours=24) and win.label == "Last 24 hours"
    assert timerange.window("24h", now=NOW + timedelta(seconds=3)) == win
    assert win.previous().end == win.start and win.previous().length == win.length
    assert win.before(7).start == win.start - timedelta(days=7)
    assert timerange.window("nonsense", now=NOW).label == "Last 24 hours"


def test_custom_dates_are_whole_utc_days_never_past_now():
    win = timerange.window("custom", now=NOW, first=date(2026, 3, 8), last=date(2026, 3, 1))
    assert (win.start, win.end) == (datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 9, tzinfo=UTC))
    today = timerange.window("custom", now=NOW, first=date(2026, 3, 10))
    assert today.end == timerange.now_minute(NOW)


@pytest.mark.parametrize(("choice", "bucket"), [("1h", "minute"), ("6h", "5m"), ("24h", "15m"), ("7d", "hour"),
                                                ("30d", "day"), ("90d", "day")])
def test_chart_buckets_follow_the_window(choice, bucket):
    win = timerange.window(choice, now=NOW)
    assert timerange.bucket(win) == bucket
    assert 30 <= len(timeaxis.axis(win, bucket).grid()) <= 200  # never 2,880 15-minute bars


# --- formats and rates -----------------------------------------------------------------------------------------
def test_formats_never_turn_missing_data_into_zero():
    assert [fmt.money(None), fmt.ms(float("nan")), fmt.pct(None), fmt.count(None)] == [fmt.NONE] * 4
    assert fmt.money(1234.5) == "$1,234.50" and fmt.money(0.0123) == "$0.0123" and fmt.money(0) == "$0.00"
    assert fmt.ms(350) == "350 ms" and fmt.ms(12_500) == "12.50 s"
    assert fmt.change(120, 60) == "+100.0%" and fmt.change(5, 0) is None
    assert fmt.points(0.025, 0.0) == "+2.50 pp" and fmt.ratio(1, 0) is None


def test_rates_have_their_own_denominators():
    row = {"calls": 100, "errors": 2, "refusals": 5, "empty_responses": 0, "truncated": 1, "tool_calls": 10,
           "tool_call_failures": 3, "output_tokens": 12_000}
    rates = metrics.of_row(row)
    assert rates["refusal_rate"] == 0.05 and rates["tool_failure_rate"] == 0.3
    assert rates["mean_output_tokens"] == 120
    assert metrics.of_row({**row, "tool_calls": 0})["tool_failure_rate"] is None
    frame = metrics.of_frame(pd.DataFrame([row, {**row, "calls": 0, "tool_calls": 0}]))
    assert frame["error_rate"].iloc[0] == 0.02 and pd.isna(frame["error_rate"].iloc[1])


def test_headline_deltas_compare_with_the_previous_period():
    now = {"calls": 200, "errors": 4, "cost_usd": 2.0, "refusals": 0, "ttft_ms_p50": 300.0, "ttft_ms_p95": None}
    before = {"calls": 100, "errors": 0, "cost_usd": 2.0, "refusals": 0, "ttft_ms_p50": 600.0,
              "ttft_ms_p95": 900.0}
    cards = {label: (value, delta) for label, value, delta, _ in metrics.headline(now, before)}
    assert cards["Calls"] == ("200", "+100.0%")
    assert cards["Cost / successful call"] == ("$0.0102", "-49.0%")
    assert cards["TTFT p50"] == ("300 ms", "-50.0%") and cards["TTFT p95"] == (fmt.NONE, None)
    assert cards["Error rate"] == ("2.00%", "+2.00 pp")


# --- colours and figures ---------------------------------------------------------------------------------------
def test_every_model_gets_its_own_colour_whatever_the_order():
    names = [f"model-{n}" for n in range(len(charts.PALETTE))]
    colours = charts.assign_colors(names)
    assert len(set(colours.values())) == len(names)
    assert charts.assign_colors(reversed(names)) == colours
    assert charts.color("(other)", colours) == charts.OTHER_COLOR
    assert charts.color("unseen-model") == charts.color("unseen-model")


def test_counts_fill_empty_buckets_with_zero_and_percentiles_leave_a_gap():
    win = timerange.Window(datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 4, tzinfo=UTC), "three days")
    axis = timeaxis.axis(win, "day")
    t1, t2 = pd.Timestamp("2026-03-01", tz="UTC"), pd.Timestamp("2026-03-03", tz="UTC")
    frame = pd.DataFrame({"t": [t1, t1, t2], "model": ["a", "b", "a"], "cost_usd": [1.0, 2.0, 3.0]})
    fig = charts.series(frame, "cost_usd", axis=axis, missing=timeaxis.ZERO, by="model", kind="area", title="c")
    assert list(next(trace for trace in fig.data if trace.name == "b").y) == [2.0, 0.0, 0.0]
    assert list(next(trace for trace in fig.data if trace.name == "a").y) == [1.0, 0.0, 3.0]
    line = charts.series(frame, "cost_usd", axis=axis, missing=timeaxis.GAP, by="model", title="ttft", slo=2000.0)
    assert [shape.y0 for shape in line.layout.shapes] == [2000.0]
    b = next(trace for trace in line.data if trace.name == "b")
    assert b.y[0] == 2.0 and pd.isna(b.y[1]) and pd.isna(b.y[2]) and b.connectgaps is False  # no invented zero
    assert b.mode == "lines+markers"  # a lone point is drawn


def test_the_axis_is_the_window_whatever_the_data_covers():
    win = timerange.window("24h", now=NOW)
    axis = timeaxis.axis(win, timerange.bucket(win))
    assert axis.start == pd.Timestamp("2026-03-09 12:30") and axis.end == pd.Timestamp("2026-03-10 12:35")
    assert len(axis.grid()) == 97 and axis.grid()[-1] == pd.Timestamp("2026-03-10 12:30")
    one = pd.DataFrame({"t": [pd.Timestamp("2026-03-10 09:30", tz="UTC")], "calls": [4]})
    bars = charts.series(one, "calls", axis=axis, missing=timeaxis.ZERO, kind="bar", title="calls")
    assert bars.layout.xaxis.range == ("2026-03-09T12:30:00", "2026-03-10T12:35:00")
    assert bars.layout.xaxis.autorange is False and bars.data[0].width == 900_000 * 0.9
    assert sum(bars.data[0].y) == 4 and len(bars.data[0].y) == 97


@pytest.mark.parametrize(("choice", "dtick", "tickformat"), [
    ("1h", 600_000, "%H:%M"), ("6h", 3_600_000, "%H:%M"), ("24h", 10_800_000, "%H:%M"),
    ("7d", 86_400_000, "%b %d"), ("30d", 7 * 86_400_000, "%b %d"), ("90d", 14 * 86_400_000, "%b %d")])
def test_ticks_step_at_round_intervals_labelled_for_the_grain(choice, dtick, tickformat):
    win = timerange.window(choice, now=NOW)
    ticks = timeaxis.axis(win, timerange.bucket(win)).ticks()
    assert (ticks["dtick"], ticks["tickformat"]) == (dtick, tickformat)
    assert win.length.total_seconds() * 1000 / ticks["dtick"] <= timeaxis.MAX_TICKS


def test_long_custom_ranges_tick_by_month_and_two_days_show_dates_with_times():
    year = timerange.Window(datetime(2025, 3, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC), "a year")
    assert timeaxis.axis(year, "day").ticks() == {"dtick": "M2", "tick0": "2000-01-01", "tickformat": "%b %d"}
    two = timerange.Window(datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC), "two days")
    assert timeaxis.axis(two, "15m").ticks()["tickformat"] == "%b %d %H:%M"


def test_trace_timeline_orders_spans_from_the_trace_start():
    spans = pd.DataFrame({"type": ["llm", "span"], "name": ["chat gpt-4o", "retrieve"], "span_id": ["b", "a"],
                          "start_us": [1_200_000, 1_000_000], "end_us": [2_000_000, 1_150_000]})
    fig = charts.trace_timeline(spans, title="trace")
    bars = {trace.name: trace for trace in fig.data}
    assert list(bars["span"].y) == ["1. retrieve"] and list(bars["span"].base) == [0.0]
    assert list(bars["LLM call"].base) == [200.0] and list(bars["LLM call"].x) == [800.0]


# --- the API client's errors -----------------------------------------------------------------------------------
def _client(status: int, body: object) -> api.ApiClient:
    return api.ApiClient("http://collector.test", transport=httpx.MockTransport(
        lambda request: httpx.Response(status, json=body)))


@pytest.mark.parametrize(("status", "body", "kind", "words"), [
    (401, {"error": "invalid API key"}, api.Unauthorized, "INFERWATCH_DASHBOARD_API_KEY"),
    (403, {"error": "this API key lacks the 'admin' scope"}, api.Unauthorized, "may not do this"),
    (404, {"error": "Not Found"}, api.NotAvailable, "not available from this collector yet"),
    (404, {"error": "no trace 4bf9 in this project"}, api.NotFound, "no trace 4bf9"),
    (422, {"error": "bucket: bad"}, api.BadRequest, "bucket: bad"),
    (500, {"error": "boom"}, api.ServerError, "failed on /api/v1/x (500): boom"),
])
def test_api_failures_become_sentences(status, body, kind, words):
    with pytest.raises(kind) as caught:
        _client(status, body).get_json("/api/v1/x", "key")
    assert words in str(caught.value)


def test_an_unreachable_collector_says_what_to_check():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = api.ApiClient("http://collector.test", transport=httpx.MockTransport(refuse))
    with pytest.raises(api.Unreachable, match="Is it running"):
        client.get_json("/api/v1/x", "key")


# --- launching -------------------------------------------------------------------------------------------------
def test_the_dashboard_runs_headless_without_error_details_and_the_key_stays_off_the_command_line():
    command = launch.command("127.0.0.1", 8601)
    assert command[1:4] == ["-m", "streamlit", "run"] and command[4].endswith("inferwatch_dashboard/app.py")
    assert {"--server.headless=true", "--client.showErrorDetails=none", "--server.port=8601",
            "--browser.gatherUsageStats=false"} <= set(command)
    env = launch.environment("http://127.0.0.1:4318", ["k1", "k2"], base={"PATH": "/bin"})
    assert env == {"PATH": "/bin", "INFERWATCH_DASHBOARD_API_URL": "http://127.0.0.1:4318",
                   "INFERWATCH_DASHBOARD_API_KEY": "k1,k2"}
    assert not any("k1" in part for part in command)


def test_a_taken_port_falls_back_to_a_free_one():
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        assert launch.pick_port("127.0.0.1", taken) != taken


def test_dashboard_command_needs_a_key(monkeypatch, capsys):
    monkeypatch.delenv("INFERWATCH_DASHBOARD_API_KEY", raising=False)
    assert cli_main(["dashboard", "--api", "http://127.0.0.1:9"]) == 2
    assert "--key" in capsys.readouterr().err
