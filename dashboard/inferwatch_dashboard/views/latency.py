"""Latency: TTFT and total latency percentiles over time by model with the TTFT objective drawn on, the
percentile spread as a heatmap, the per-model table, and decode speed.

Percentiles come from the rollups' t-digests; decode tokens/s ((output − 1) / (end − first token))
is only in the raw calls, so it is read for at most the window's last 24 hours (a (project, hour)-pruned scan).
"""

from __future__ import annotations

from datetime import timedelta

import streamlit as st

from inferwatch_dashboard import charts, context, data, fmt, timeaxis, timerange, ui
from inferwatch_dashboard.data import Scope
from inferwatch_dashboard.settings import DashboardSettings

LEVELS = ("p50", "p90", "p95", "p99")
DECODE_WINDOW = timedelta(hours=24)
TABLE_COLUMNS = ["model", "calls", "ttft_ms_p50", "ttft_ms_p95", "ttft_ms_p99", "latency_ms_p50", "latency_ms_p95",
                 "latency_ms_p99"]


def per_model(scope: Scope, slo_ms: float) -> bool:
    stats = data.stats(scope, "volume,latency", by="model")
    frame = stats.frame
    if frame.empty or not frame["calls"].sum():
        ui.no_traffic(scope)
        return False
    frame = frame.sort_values("calls", ascending=False)
    overall = data.stats(scope, "volume,latency").total()
    cols = st.columns(4)
    p95 = overall.get("ttft_ms_p95")
    cols[0].metric("TTFT p95", fmt.ms(p95), help=f"Objective: {fmt.ms(slo_ms)}")
    cols[1].metric("TTFT p50", fmt.ms(overall.get("ttft_ms_p50")))
    cols[2].metric("Latency p95", fmt.ms(overall.get("latency_ms_p95")))
    cols[3].metric("Latency p50", fmt.ms(overall.get("latency_ms_p50")))
    if p95 is not None and p95 > slo_ms:
        breaking = frame[frame["ttft_ms_p95"] > slo_ms]["model"].tolist()
        st.error(f"TTFT p95 is {fmt.ms(p95)}, above the {fmt.ms(slo_ms)} objective"
                 + (f" (models over it: {', '.join(breaking)})" if breaking else "") + ".",
                 icon=":material/timer_off:")
    st.dataframe(frame[[c for c in TABLE_COLUMNS if c in frame]], hide_index=True)
    return True


def over_time(scope: Scope, slo_ms: float, level: str) -> None:
    """Percentiles per bucket by model; a bucket without calls is a gap, not 0 ms (see timeaxis.GAP)."""
    bucket = timerange.bucket(scope.window)
    axis = timeaxis.axis(scope.window, bucket)
    frame = data.stats(scope, "volume,latency", by="model", bucket=bucket, top=10).frame
    frame = frame[frame["calls"] > 0] if "calls" in frame else frame
    ttft, total = f"ttft_ms_{level}", f"latency_ms_{level}"
    left, right = st.columns(2)
    with left:
        if charts.has_values(frame, ttft):
            ui.chart(charts.series(frame, ttft, axis=axis, missing=timeaxis.GAP, by="model",
                                   title=f"TTFT {level} per {bucket}", y_title="ms", slo=slo_ms,
                                   slo_label=f"SLO {fmt.ms(slo_ms)} (p95)", colors=scope.colors),
                     key="latency-ttft")
        else:
            ui.empty_chart("No time to first token in this range: only streamed calls have one "
                           "(`stream=True`). Widen the time range or stream a call.")
    with right:
        if charts.has_values(frame, total):
            ui.chart(charts.series(frame, total, axis=axis, missing=timeaxis.GAP, by="model",
                                   title=f"Total latency {level} per {bucket}", y_title="ms", colors=scope.colors),
                     key="latency-total")
        else:
            ui.empty_chart("No latency per bucket in this range: widen the time range.")
    spread = data.stats(scope, "volume,latency", bucket=bucket).frame
    if charts.has_values(spread, "latency_ms_p50"):
        ui.chart(charts.percentile_heatmap(spread, "latency_ms", axis=axis,
                                           title="Total latency percentiles (ms)"), key="latency-heatmap")


def decode_speed(scope: Scope) -> None:
    """Median and p95 decode tokens/s per model over the window's last 24 hours at most: only the raw calls have
    it, so the read is bounded whatever the range."""
    recent = scope.window
    if recent.length > DECODE_WINDOW:
        recent = timerange.Window(recent.end - DECODE_WINDOW, recent.end, "the last 24 hours")
        st.caption("Over the last 24 hours of the range (decode speed is read from the raw calls).")
    frame = data.stats(scope, "decode", by="model", window=recent).frame
    frame = frame.dropna(subset=["decode_tps_p50"]) if "decode_tps_p50" in frame else frame.iloc[0:0]
    if frame.empty:
        st.caption("No streamed calls with a measured decode speed in this range: only streamed calls "
                   "(`stream=True`) have one. Stream a call, or widen the time range.")
        return
    ui.chart(charts.bars(frame, "model", "decode_tps_p50", title="Decode speed, median (tokens/s)",
                         y_title="tokens/s", colors=scope.colors), key="latency-decode")
    st.dataframe(frame[["model", "calls", "decode_tps_p50", "decode_tps_p95"]], hide_index=True)


def main() -> None:
    scope = context.current()
    slo_ms = DashboardSettings().slo_ttft_ms
    ui.header("Latency", scope, f"Objective: TTFT p95 under {fmt.ms(slo_ms)}.")
    with ui.section("Latency by model"):
        if not per_model(scope, slo_ms):
            return
    level = st.radio("Percentile", LEVELS, index=2, horizontal=True, key="latency_level")
    with ui.section("Latency over time"):
        over_time(scope, slo_ms, level)
    st.subheader("Decode speed")
    with ui.section("Decode speed"):
        decode_speed(scope)


main()
