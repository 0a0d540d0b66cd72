"""Every time-series chart against every shape of data it must draw well, read from the chart's Plotly spec.

Each shape is a project of real call rows in the collector's chDB (tests.helpers.chart_shapes): one bucket, sparse
buckets, gaps, a single model, 30 days at hourly grain, and no traffic at all. For each page with time series
(Overview, Cost, Latency, Quality) the spec must show a mark that draws a lone bucket (bars a bucket wide, lines
with markers), an x axis fixed to the selected range (not the data's extent), round ticks labelled for the grain,
every bucket of the range on the grid, and empty buckets as zeros (calls, cost) or as gaps (latency, quality).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Any

import pandas as pd
import pytest

from inferwatch_dashboard import timeaxis, timerange
from tests.helpers.chart_shapes import Shape
from tests.helpers.dashboard_app import app, chart_specs, goto, texts, values
from tests.helpers.live_collector import Collector

#: page -> charts with zero-filled buckets, charts with gaps ({b}: the bucket's name, {l}: the percentile level)
CHARTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "overview": (("Calls per {b}", "Cost per {b}"), ()),
    "cost": (("Cost per {b}",), ()),
    "latency": ((), ("TTFT p95 per {b}", "Total latency p95 per {b}")),
    "quality": ((), ("Error rate per {b}", "Refusal rate per {b}", "Response length (output tokens) per {b}")),
}
BY_MODEL = {"Calls per {b}", "Cost per {b}", "TTFT p95 per {b}", "Total latency p95 per {b}"}
RANGES = {"30 days": ("Last 30 days", "30d")}


def _specs(at: Any) -> dict[str, dict[str, Any]]:
    return {spec["layout"]["title"]["text"]: spec for spec in chart_specs(at)}


def _axis(spec: dict[str, Any], choice: str) -> timeaxis.TimeAxis:
    """The axis the chart must have: the preset window ending where the chart's range ends (the app's "now"),
    which must be the current minute."""
    end = pd.Timestamp(spec["layout"]["xaxis"]["range"][1])
    assert abs(end - pd.Timestamp.now("UTC").tz_localize(None)) < pd.Timedelta(minutes=3)
    length = timerange.PRESETS[choice][1]
    win = timerange.Window(end.to_pydatetime() - length, end.to_pydatetime(), "")
    return timeaxis.axis(win, timerange.bucket(win))


def _buckets(shape: Shape, step: timedelta) -> dict[str, set[str]]:
    """Bucket starts (as the spec writes them) holding calls, per model."""
    out: dict[str, set[str]] = defaultdict(set)
    for row in shape.rows:
        start = pd.Timestamp(row.start_time, unit="us").floor(step)
        out[row.model].add(start.isoformat())
    return out


def _times(trace: dict[str, Any]) -> list[pd.Timestamp]:
    return [pd.Timestamp(t) for t in values(trace, "x")]


def _points(trace: dict[str, Any]) -> dict[str, Any]:
    """Bucket start (ISO, seconds) -> value."""
    return {t.isoformat(): y for t, y in zip(_times(trace), values(trace, "y"))}


def _check_axis(spec: dict[str, Any], axis: timeaxis.TimeAxis) -> None:
    x = spec["layout"]["xaxis"]
    assert x["range"] == [axis.start.isoformat(), axis.end.isoformat()] and x["autorange"] is False
    assert {k: x[k] for k in ("dtick", "tick0", "tickformat")} == axis.ticks()
    grid = list(axis.grid())
    for trace in spec["data"]:
        assert _times(trace) == grid, trace.get("name")  # every bucket of the range, in order


def _check_marks(spec: dict[str, Any], axis: timeaxis.TimeAxis, kind: str) -> None:
    for trace in spec["data"]:
        if kind == "bar":
            assert trace["type"] == "bar" and trace["width"] == axis.step.total_seconds() * 1000 * 0.9
        else:
            assert trace["type"] == "scatter" and trace["mode"] == "lines+markers"
            assert trace["connectgaps"] is False


def _run(collector: Collector, monkeypatch: pytest.MonkeyPatch, key: str, page: str, name: str) -> Any:
    query = {"range": RANGES[name][0]} if name in RANGES else {}
    at = app(monkeypatch, collector.url, key, **query)
    assert not at.exception, [e.value for e in at.exception]
    return at if page == "overview" else goto(at, page)


@pytest.mark.parametrize("page", list(CHARTS))
@pytest.mark.parametrize("name", ["one-bucket", "sparse", "gaps", "single-model", "30 days"])
def test_time_series_read_well_for_every_shape(collector: Collector, shapes: dict[str, Shape], monkeypatch,
                                               page: str, name: str):
    shape = shapes[name]
    at = _run(collector, monkeypatch, shape.key, page, name)
    specs = _specs(at)
    choice = RANGES.get(name, ("", "24h"))[1]
    axis = _axis(next(iter(specs.values())), choice)
    bucket = axis.bucket
    assert bucket == ("day" if name == "30 days" else "15m")
    expected = _buckets(shape, axis.step)
    everywhere = set().union(*expected.values())
    zero_charts, gap_charts = CHARTS[page]
    for template in zero_charts + gap_charts:
        title = template.format(b=bucket)
        assert title in specs, (title, list(specs))
        spec = specs[title]
        _check_axis(spec, axis)
        _check_marks(spec, axis, "bar" if template in zero_charts else "line")  # counts and sums: bars
        if template in BY_MODEL:
            assert {t["name"] for t in spec["data"]} == shape.models and spec["layout"]["showlegend"] is True
        if template in zero_charts:
            totals: dict[str, float] = defaultdict(float)
            for trace in spec["data"]:
                for t, y in _points(trace).items():
                    assert y is not None, (title, t)  # an empty bucket is 0 calls / $0, never a hole
                    totals[t] += y
            assert {t for t, y in totals.items() if y > 0} == everywhere, title
            if title.startswith("Calls"):
                assert sum(totals.values()) == len(shape.rows)
        else:
            for trace in spec["data"]:
                drawn = {t for t, y in _points(trace).items() if y is not None}
                assert drawn == (expected[trace["name"]] if template in BY_MODEL else everywhere), title
    if page == "latency":
        heat = specs["Total latency percentiles (ms)"]
        assert _times(heat["data"][0]) == list(axis.grid())
        p50 = dict(zip((t.isoformat() for t in _times(heat["data"][0])), values(heat["data"][0], "z")[0]))
        assert {t for t, z in p50.items() if z is not None} == everywhere  # blank cells where nothing ran
    if page == "quality":
        assert "Tool-call failures: nothing to measure in this range (no tool calls)" in texts(at)


def test_one_bucket_is_drawn_a_bucket_wide_on_the_whole_range(collector: Collector, shapes: dict[str, Shape],
                                                               monkeypatch):
    """The case of a fresh install: minutes of traffic still show as one readable bar on a 24-hour axis whose
    ticks are times of day, three hours apart (not 02:14:59.999 … 02:15:00.0005)."""
    at = _run(collector, monkeypatch, shapes["one-bucket"].key, "overview", "one-bucket")
    calls = _specs(at)["Calls per 15m"]
    x = calls["layout"]["xaxis"]
    span = pd.Timestamp(x["range"][1]) - pd.Timestamp(x["range"][0])
    assert timedelta(hours=24) <= span < timedelta(hours=24, minutes=15)
    assert (x["tickformat"], x["dtick"]) == ("%H:%M", 3 * 3_600_000)
    assert calls["layout"]["barmode"] == "stack"
    assert (calls["layout"]["yaxis"]["dtick"], calls["layout"]["yaxis"]["tickformat"]) == (1, ",d")  # 4 calls
    assert all(trace["width"] == 810_000 for trace in calls["data"])
    cost = _specs(at)["Cost per 15m"]
    assert {trace["type"] for trace in cost["data"]} == {"bar"} and cost["layout"]["barmode"] == "stack"
    assert cost["layout"]["yaxis"]["tickformat"] == "$,.3~r"  # $0.007 is not labelled $0.01


@pytest.mark.parametrize("page", list(CHARTS))
def test_no_traffic_says_what_to_do_instead_of_drawing_empty_charts(collector: Collector, monkeypatch, page: str):
    at = _run(collector, monkeypatch, collector.empty_key, page, "empty")
    assert not at.get("plotly_chart"), page
    shown = texts(at)
    assert "No traffic yet in this time range" in shown, page
    assert "`make demo`" in shown and f'inferwatch.init(endpoint="{collector.url}"' in shown, page
    assert "widen the time range" in shown, page


def test_a_filter_that_matches_nothing_says_to_clear_it(collector: Collector, shapes: dict[str, Shape],
                                                        monkeypatch):
    at = app(monkeypatch, collector.url, shapes["single-model"].key, model="gpt-4o")
    assert not at.get("plotly_chart")
    assert "with these filters" in texts(at) and "clear a filter" in texts(at)


def test_the_window_not_the_data_sets_the_axis_and_ticks_are_never_sub_second(collector: Collector,
                                                                              shapes: dict[str, Shape],
                                                                              monkeypatch):
    """The same traffic on every preset range: the axis spans the range, ticks step by whole minutes."""
    for choice, (label, _) in timerange.PRESETS.items():
        at = app(monkeypatch, collector.url, shapes["gaps"].key, range=label)
        spec = next(s for s in chart_specs(at) if s["layout"]["title"]["text"].startswith("Calls per"))
        x = spec["layout"]["xaxis"]
        span = pd.Timestamp(x["range"][1]) - pd.Timestamp(x["range"][0])
        assert timerange.PRESETS[choice][1] <= span <= timerange.PRESETS[choice][1] + timedelta(days=1), choice
        assert isinstance(x["dtick"], int) and x["dtick"] % 60_000 == 0, choice
        assert "%S" not in x["tickformat"] and "%L" not in x["tickformat"], choice
        assert len(values(spec["data"][0], "x")) <= 200, choice


def test_month_to_date_runs_over_the_whole_month_a_point_a_day(collector: Collector, shapes: dict[str, Shape],
                                                               monkeypatch):
    at = _run(collector, monkeypatch, shapes["sparse"].key, "cost", "sparse")
    burn = _specs(at)["Month to date"]
    today = pd.Timestamp.now("UTC").tz_localize(None).floor("D")
    first = today.replace(day=1)
    following = first + pd.offsets.MonthBegin(1)
    x = burn["layout"]["xaxis"]
    assert x["range"][0] == first.isoformat() and x["range"][1] == following.isoformat()
    assert (x["dtick"], x["tickformat"]) == (7 * 86_400_000, "%b %d")
    spent = next(trace for trace in burn["data"] if trace["name"] == "spent")
    assert _times(spent) == list(pd.date_range(first, today, freq="D"))
    cumulative = values(spent, "y")
    assert None not in cumulative and cumulative == sorted(cumulative)  # a day without calls adds $0
    assert spent["mode"] == "lines+markers"
