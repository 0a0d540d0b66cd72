"""Quality: refusal, empty, truncated, tool-failure, error and thumbs-down rates and response length over time,
each against its baseline (the days before this window), and the drift findings the alerting jobs raised.

The rates are counts from the rollups (raw calls only when a feature/template filter asks for flags no rollup
keeps); the baseline is the same query over the preceding days, so "normal" is this project's own normal.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from inferwatch_dashboard import charts, context, data, fmt, metrics, timeaxis, timerange, ui
from inferwatch_dashboard.data import Scope

NEED = "volume,flags"
BASELINES = (1, 7, 14, 28)
#: words that mark an alert as a quality/drift finding (rule ids, signals, metrics)
DRIFT_WORDS = ("drift", "refusal", "empty", "truncat", "tool", "thumbs", "length", "creep")


def rate_cards(now: dict[str, float | None], base: dict[str, float | None]) -> None:
    cols = st.columns(len(metrics.RATES) + 1)
    for col, (name, (label, _, _)) in zip(cols, metrics.RATES.items()):
        col.metric(label, fmt.pct(now[name]), fmt.points(now[name], base[name]), delta_color="inverse",
                   help=f"Baseline: {fmt.pct(base[name])}")
    length = metrics.LENGTH[0]
    cols[-1].metric("Output tokens / call", fmt.number(now[length]), fmt.change(now[length], base[length]),
                    delta_color="off", help=f"Baseline: {fmt.number(base[length])}")


def over_time(scope: Scope, base: dict[str, float | None]) -> None:
    bucket = timerange.bucket(scope.window)
    axis = timeaxis.axis(scope.window, bucket)
    frame = metrics.of_frame(data.stats(scope, NEED, bucket=bucket).frame)
    names = [*metrics.RATES, metrics.LENGTH[0]]
    for left_name, right_name in zip(names[0::2], [*names[1::2], None]):
        left, right = st.columns(2)
        for col, name in ((left, left_name), (right, right_name)):
            if name is None:
                continue
            label = metrics.RATES[name][0] if name in metrics.RATES else metrics.LENGTH[1]
            y_format = ",.0f" if name == metrics.LENGTH[0] else ".1%"
            with col:
                if charts.has_values(frame, name):
                    ui.chart(charts.rate_vs_baseline(frame, name, axis=axis, title=f"{label} per {bucket}",
                                                     baseline=base[name], y_format=y_format),
                             key=f"quality-{name}")
                else:
                    ui.empty_chart(f"{label}: nothing to measure in this range"
                                   + (" (no tool calls)" if name == "tool_failure_rate" else "")
                                   + ". Widen the time range.")


def thumbs(scope: Scope, days: int) -> None:
    bucket = timerange.bucket(scope.window)
    frame = data.feedback(scope, bucket=bucket)
    total = data.feedback(scope)
    baseline = data.feedback(scope, window=scope.window.before(days))
    now = metrics.thumbs(total).iloc[0] if not total.empty else None
    if now is None or not now["votes"]:
        st.caption("No thumbs feedback in this range (send it with `inferwatch.feedback()` or "
                   "POST /api/v1/feedback).")
        return
    base = metrics.thumbs(baseline).iloc[0] if not baseline.empty else None
    base_rate = base[metrics.THUMBS_DOWN[0]] if base is not None and base["votes"] else None
    st.metric("Thumbs-down rate", fmt.pct(now[metrics.THUMBS_DOWN[0]]),
              fmt.points(now[metrics.THUMBS_DOWN[0]], base_rate), delta_color="inverse",
              help=f"{int(now['thumbs_down'])} of {int(now['votes'])} votes; baseline {fmt.pct(base_rate)}")
    ui.chart(charts.rate_vs_baseline(metrics.thumbs(frame), metrics.THUMBS_DOWN[0],
                                     axis=timeaxis.axis(scope.window, bucket),
                                     title=f"Thumbs-down rate per {bucket}",
                                     baseline=None if pd.isna(base_rate) else base_rate), key="quality-thumbs")


def drift_findings(scope: Scope) -> None:
    events = data.alerts(scope, "history")
    if events.empty:
        st.success("No quality or drift findings in this range.", icon=":material/check_circle:")
        return
    described = [c for c in ("rule_id", "signal", "metric", "message") if c in events]
    text = events[described].fillna("").astype(str).agg(" ".join, axis=1).str.lower()
    findings = events[text.str.contains("|".join(DRIFT_WORDS), regex=True)]
    if findings.empty:
        st.success("No quality or drift findings in this range.", icon=":material/check_circle:")
    else:
        ui.table(findings, ["time", "state", "severity", "rule_id", "series_key", "signal", "value", "threshold",
                            "message"])


def main() -> None:
    scope = context.current()
    ui.header("Quality", scope)
    days = st.radio("Baseline", BASELINES, index=1, format_func=lambda d: f"{d} day{'s' if d > 1 else ''} before",
                    horizontal=True, key="quality_baseline")
    with ui.section("Quality rates"):
        now = data.stats(scope, NEED).total()
        if not now.get("calls"):
            ui.no_traffic(scope)
            return
        base_row = data.stats(scope, NEED, window=scope.window.before(days)).total()
        base = metrics.of_row(base_row)
        rate_cards(metrics.of_row(now), base)
        if not base_row.get("calls"):
            st.caption(f"No calls in the {days} days before this range: no baseline to compare with yet.")
        over_time(scope, base)
    st.subheader("User feedback")
    with ui.section("Feedback"):
        thumbs(scope, days)
    st.subheader("Drift findings")
    with ui.section("Drift findings"):
        drift_findings(scope)


main()
