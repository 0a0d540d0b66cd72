"""Overview: the headline numbers against the previous period, traffic and cost over time, what is firing.

Everything here reads the 1-minute/1-hour rollups (three stats requests and the alerts list), so it stays fast
on any range.
"""

from __future__ import annotations

import streamlit as st

from inferwatch_dashboard import charts, context, data, fmt, metrics, timeaxis, timerange, ui
from inferwatch_dashboard.data import Scope

NEED = "volume,flags,latency"
ROWS = (("Calls", "Cost", "Cost / successful call", "Error rate"), ("TTFT p50", "TTFT p95", "Refusal rate"))


def headline(scope: Scope) -> bool:
    """The metric row; False when the window has no calls (the rest of the page would be empty)."""
    now = data.stats(scope, NEED).total()
    if not now.get("calls"):
        ui.no_traffic(scope)
        return False
    before = data.stats(scope, NEED, window=scope.window.previous()).total()
    cards = {label: card for label, *card in metrics.headline(now, before)}
    note = f"Delta: against the {scope.window.previous().label}"
    for row in ROWS:
        for column, label in zip(st.columns(4), row):
            value, delta, colour = cards[label]
            column.metric(label, value, delta, delta_color=colour, help=note)
    unpriced, missing = int(now.get("unpriced") or 0), int(now.get("usage_missing") or 0)
    left, right = st.columns(2)
    left.metric("Unpriced calls", fmt.count(unpriced),
                help="Models absent from the price table: cost counted as $0")
    right.metric("Usage missing", fmt.count(missing), help="Calls whose token usage never arrived (not priced)")
    if unpriced or missing:
        st.warning(f"{unpriced:,} unpriced and {missing:,} usage-missing calls: their cost is not in the totals. "
                   "Add their models with `inferwatch-server prices import`, or enable usage on streams.")
    return True


def over_time(scope: Scope) -> None:
    """Calls and cost per bucket by model; a bucket without calls is 0 calls and $0 (see timeaxis.ZERO)."""
    bucket = timerange.bucket(scope.window)
    axis = timeaxis.axis(scope.window, bucket)
    frame = data.stats(scope, "volume", by="model", bucket=bucket, top=10).frame
    if not charts.has_values(frame, "calls"):
        ui.no_traffic(scope)
        return
    left, right = st.columns(2)
    with left:
        ui.chart(charts.series(frame, "calls", axis=axis, missing=timeaxis.ZERO, by="model", kind="bar",
                               title=f"Calls per {bucket}", y_title="calls", colors=scope.colors, whole=True),
                 key="overview-calls")
    with right:
        ui.chart(charts.series(frame, "cost_usd", axis=axis, missing=timeaxis.ZERO, by="model", kind="bar",
                               title=f"Cost per {bucket}", y_title="USD", y_format=charts.MONEY,
                               colors=scope.colors),
                 key="overview-cost")


def firing(scope: Scope) -> None:
    st.subheader("Firing alerts")
    alerts = data.alerts(scope, "current")
    active = alerts[alerts["state"].isin(["firing", "no_data"])] if "state" in alerts else alerts
    if active.empty:
        st.success("Nothing is firing.", icon=":material/check_circle:")
    else:
        ui.table(active, ["state", "severity", "rule_id", "series_key", "value", "threshold", "since"])


def main() -> None:
    scope = context.current()
    ui.header("Overview", scope)
    with ui.section("Headline metrics"):
        if not headline(scope):
            return
    with ui.section("Traffic over time"):
        over_time(scope)
    with ui.section("Firing alerts"):
        firing(scope)


main()
