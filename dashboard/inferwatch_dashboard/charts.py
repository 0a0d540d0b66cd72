"""Figures: DataFrame in, Plotly figure out. Pure (no Streamlit, no I/O), so each is testable on its own.

A model (or feature, variant...) gets the same colour on every chart: the page passes the palette the sidebar
assigned to every name the project has (:func:`assign_colors`: each name takes the palette slot of a stable hash
of its name, or the next free one, so two models never share a colour). A name outside that palette falls back
to its hash slot.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from datetime import datetime

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from .timeaxis import GAP, ZERO, TimeAxis, naive

PALETTE: tuple[str, ...] = (*qualitative.Plotly, *qualitative.Safe)
OTHER = "(other)"
OTHER_COLOR = "#9e9e9e"
SLO_COLOR = "#d62728"
#: Dollar ticks to three significant digits: cents would label every tick of a $0.007 bucket "$0.01".
MONEY = "$,.3~r"
MAX_WHOLE_TICKS = 8
_LAYOUT = dict(margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.15), hovermode="x unified")
Colors = Mapping[str, str]


def _slot(name: str) -> int:
    return zlib.crc32(name.encode()) % len(PALETTE)


def color(name: str, colors: Colors | None = None) -> str:
    """The colour of a series name: from ``colors`` if it has one, else its hash slot; grey for "(other)"."""
    if name in (OTHER, ""):
        return OTHER_COLOR
    return (colors or {}).get(name) or PALETTE[_slot(name)]


def assign_colors(names: Iterable[str]) -> dict[str, str]:
    """Distinct colours for up to ``len(PALETTE)`` names; the same set of names always gets the same colours."""
    taken: dict[int, str] = {}
    out: dict[str, str] = {}
    for name in sorted({n for n in names if n and n != OTHER}):
        slot = _slot(name)
        for step in range(len(PALETTE)):
            candidate = (slot + step) % len(PALETTE)
            if candidate not in taken:
                break
        else:  # more names than colours: share the hash slot
            candidate = slot
        taken.setdefault(candidate, name)
        out[name] = PALETTE[candidate]
    return out


def _figure(title: str, y_title: str = "", y_format: str | None = None) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=title, yaxis_title=y_title, **_LAYOUT)
    if y_format:
        fig.update_yaxes(tickformat=y_format)
    return fig


def _marker_size(points: int) -> int:
    return 7 if points <= 60 else 5 if points <= 200 else 3


def series(frame: pd.DataFrame, y: str, *, axis: TimeAxis, missing: str, by: str | None = None, title: str,
           y_title: str = "", kind: str = "line", y_format: str | None = None, slo: float | None = None,
           slo_label: str = "SLO", colors: Colors | None = None, whole: bool = False) -> go.Figure:
    """One trace per ``by`` value over every bucket of ``axis``; ``kind`` line, area (stacked) or bar (stacked).

    Empty buckets are 0 or gaps as ``missing`` says (:data:`~.timeaxis.ZERO` for counts and sums,
    :data:`~.timeaxis.GAP` for percentiles and rates). Lines and areas carry a marker on every point and bars span
    their bucket, so a lone bucket is visible; the x axis is the window, whatever the data covers. ``whole``
    (counts): no fractional ticks when the tallest bucket is small (4 calls are not ticked 0.5, 1.5...).
    """
    fig = _figure(title, y_title, y_format)
    frame = axis.complete(frame, y, by=by, missing=missing)
    step_ms = axis.step.total_seconds() * 1000
    size = _marker_size(len(axis.grid()))
    groups = frame.groupby(by, sort=True) if by else [("all", frame)]
    for name, rows in groups:
        rows = rows.sort_values("t")
        name = str(name)
        shade = color(name, colors) if by else PALETTE[0]
        style = dict(name=name, x=rows["t"], y=rows[y], marker_color=shade)
        if kind == "bar":
            fig.add_trace(go.Bar(**style, width=step_ms * 0.9, offset=step_ms * 0.05))
        else:
            fig.add_trace(go.Scatter(**style, mode="lines+markers", line=dict(color=shade), marker=dict(size=size),
                                     connectgaps=False, stackgroup="one" if kind == "area" else None))
    if kind == "bar":
        fig.update_layout(barmode="stack")
    if by:
        fig.update_layout(showlegend=True)  # a single model still says which one it is
    fig.update_xaxes(**axis.layout())
    fig.update_yaxes(rangemode="tozero")
    if whole and frame.groupby("t")[y].sum().max() <= MAX_WHOLE_TICKS:
        fig.update_yaxes(dtick=1, tickformat=",d")
    if slo is not None:
        fig.add_hline(y=slo, line=dict(color=SLO_COLOR, dash="dash"), annotation_text=slo_label,
                      annotation_position="top left")
    return fig


def has_values(frame: pd.DataFrame, y: str) -> bool:
    """Whether ``frame`` has a value of ``y`` to draw (what decides between a chart and its empty state)."""
    return y in frame and bool(frame[y].notna().any())


def bars(frame: pd.DataFrame, x: str, y: str, *, title: str, y_title: str = "", y_format: str | None = None,
         colors_by: str | None = None, colors: Colors | None = None) -> go.Figure:
    """One bar per row of ``frame``, coloured by ``colors_by`` (default: ``x``)."""
    fig = _figure(title, y_title, y_format)
    names = frame[colors_by or x].astype(str)
    fig.add_trace(go.Bar(x=frame[x].astype(str), y=frame[y], marker_color=[color(n, colors) for n in names],
                         showlegend=False))
    fig.update_layout(hovermode="closest")
    return fig


def percentile_heatmap(frame: pd.DataFrame, prefix: str, *, axis: TimeAxis, title: str,
                       levels: Iterable[int] = (50, 90, 95, 99)) -> go.Figure:
    """Latency distribution over time: a row per percentile, a column per bucket of ``axis`` (blank where the
    bucket had no calls), colour = milliseconds."""
    levels = [level for level in levels if f"{prefix}_p{level}" in frame]
    columns = [axis.complete(frame, f"{prefix}_p{level}", by=None, missing=GAP) for level in levels]
    fig = _figure(title)
    fig.add_trace(go.Heatmap(x=axis.grid(), y=[f"p{level}" for level in levels],
                             z=[column.iloc[:, 1].tolist() for column in columns],
                             colorscale="YlOrRd", colorbar=dict(title="ms"),
                             hovertemplate="%{x}<br>%{y}: %{z:.0f} ms<extra></extra>"))
    fig.update_layout(hovermode="closest")
    fig.update_xaxes(**axis.layout())
    return fig


def trace_timeline(spans: pd.DataFrame, *, title: str) -> go.Figure:
    """A trace's spans as bars on a millisecond axis from the trace's start (retrieval → inference → tools)."""
    spans = spans.sort_values(["start_us", "span_id"]).reset_index(drop=True)
    origin = spans["start_us"].min()
    labels = [f"{i + 1}. {name}" for i, name in enumerate(spans["name"].astype(str))]
    fig = _figure(title, "")
    for kind, rows in spans.groupby("type", sort=True):
        fig.add_trace(go.Bar(
            name="LLM call" if kind == "llm" else "span", orientation="h",
            y=[labels[i] for i in rows.index], x=(rows["end_us"] - rows["start_us"]) / 1000,
            base=(rows["start_us"] - origin) / 1000, marker_color=PALETTE[0] if kind == "llm" else PALETTE[2],
            hovertemplate="%{y}<br>start +%{base:.0f} ms, %{x:.0f} ms<extra></extra>"))
    fig.update_yaxes(autorange="reversed", categoryorder="array", categoryarray=labels)
    fig.update_xaxes(title="ms from the trace's start")
    fig.update_layout(hovermode="closest", barmode="overlay", height=max(220, 60 + 34 * len(spans)))
    return fig


def rate_vs_baseline(frame: pd.DataFrame, y: str, *, axis: TimeAxis, title: str, baseline: float | None,
                     y_format: str = ".1%") -> go.Figure:
    """A rate over time (a gap where a bucket had nothing to divide by) with its baseline as a dashed line (what
    "normal" was before this window)."""
    fig = series(frame, y, axis=axis, missing=GAP, title=title, y_format=y_format)
    if baseline is not None:
        fig.add_hline(y=baseline, line=dict(color="#555", dash="dot"), annotation_text="baseline",
                      annotation_position="top left")
    return fig


def intervals(frame: pd.DataFrame, *, x: str, y: str, low: str, high: str, title: str, y_format: str | None = None,
              colors: Colors | None = None) -> go.Figure:
    """Point estimates with confidence intervals, one per row (variants of an experiment)."""
    fig = _figure(title, y_format=y_format)
    for _, row in frame.iterrows():
        name = str(row[x])
        fig.add_trace(go.Scatter(
            x=[name], y=[row[y]], mode="markers", name=name, marker=dict(size=12, color=color(name, colors)),
            error_y=dict(type="data", symmetric=False, array=[row[high] - row[y]],
                         arrayminus=[row[y] - row[low]])))
    fig.update_layout(hovermode="closest")
    return fig


def budget_burn(daily: pd.DataFrame, *, axis: TimeAxis, title: str, limit: float | None,
                forecast: Mapping[str, object] | None, month_end: datetime | None) -> go.Figure:
    """Month-to-date spend (cumulative over every day of ``axis``, a day without calls adding 0), the budget line,
    and the forecast band to the month's end; the x axis runs to the month's end."""
    fig = _figure(title, "USD", MONEY)
    rows = axis.complete(daily, "cost_usd", by=None, missing=ZERO)
    cumulative = rows["cost_usd"].cumsum()
    fig.add_trace(go.Scatter(x=rows["t"], y=cumulative, mode="lines+markers", name="spent",
                             line=dict(color=PALETTE[0])))
    month_end = naive(month_end) if month_end is not None else None
    shown = TimeAxis(axis.start, month_end if month_end is not None else axis.end, axis.bucket)
    fig.update_xaxes(**shown.layout())
    if forecast and month_end is not None and forecast.get("month_end_usd") is not None and len(rows):
        last_t, last_v = rows["t"].iloc[-1], float(cumulative.iloc[-1])
        for key, name, dash in (("high_usd", "forecast high", "dot"), ("month_end_usd", "forecast", "dash"),
                                ("low_usd", "forecast low", "dot")):
            value = forecast.get(key)
            if value is not None:
                fig.add_trace(go.Scatter(x=[last_t, month_end], y=[last_v, float(value)], mode="lines", name=name,
                                         line=dict(color=PALETTE[1], dash=dash),
                                         fill="tonexty" if key == "low_usd" else None))
    if limit is not None:
        fig.add_hline(y=limit, line=dict(color=SLO_COLOR, dash="dash"), annotation_text="budget",
                      annotation_position="top left")
    return fig


def cost_comparison(self_host: float | None, api: float | None, *, title: str) -> go.Figure:
    """Self-hosted vs API cost per 1M output tokens."""
    fig = _figure(title, "USD per 1M output tokens", "$,.2f")
    names, values = ["self-hosted", "API"], [self_host, api]
    fig.add_trace(go.Bar(x=names, y=values, marker_color=[PALETTE[2], PALETTE[0]], showlegend=False,
                         text=[f"${v:,.2f}" if v is not None else "n/a" for v in values], textposition="auto"))
    fig.update_layout(hovermode="closest")
    return fig
