"""Cost: spend over time by a chosen dimension, month to date against budgets with the forecast band, cache
savings, top movers, the cost report with its CSV, and what-if repricing.

The series reads the rollups (hourly ``usage_1h`` for features and templates, daily ``cost_1d`` for users on long
ranges); the report, budgets and what-if come from the collector's cost endpoints (``cost_1d``-backed).
"""

from __future__ import annotations

from calendar import monthrange
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import streamlit as st

from inferwatch_dashboard import charts, context, data, fmt, timeaxis, timerange, ui
from inferwatch_dashboard.data import Scope

#: label -> (stats dimension, cost report dimension)
DIMENSIONS = {"Model": ("model", "model"), "Feature": ("feature", "feature"),
              "Prompt template": ("prompt_template", "prompt_template"), "User (hashed)": ("user_hash", "user")}
BUDGET_COLUMNS = ["budget_id", "scope_type", "scope_value", "kind", "limit_usd", "spent_usd", "used_ratio",
                  "forecast_usd", "exceeded", "forecast_exceeds"]
REPORT_COLUMNS = ["key", "calls", "errors", "input_tokens", "output_tokens", "cost_usd", "previous_cost_usd",
                  "delta_usd", "cost_per_successful_call_usd", "cache_savings_usd", "unpriced", "usage_missing"]


def spend_over_time(scope: Scope, dimension: str) -> None:
    bucket = timerange.bucket(scope.window)
    if dimension == "user_hash" and scope.window.length > timedelta(hours=48):
        bucket = "day"  # per-user costs are kept per day (cost_1d); finer buckets would scan the raw calls
    stats = data.stats(scope, "volume", by=dimension, bucket=bucket, top=10)
    if stats.frame.empty or not stats.frame["calls"].sum():
        ui.no_traffic(scope)
        return
    frame = stats.frame
    if dimension == "user_hash":
        frame = frame.assign(user_hash=frame["user_hash"].map(lambda h: h[:12] or "(none)"))
    ui.chart(charts.series(frame, "cost_usd", axis=timeaxis.axis(scope.window, bucket), missing=timeaxis.ZERO,
                           by=dimension, kind="bar", title=f"Cost per {bucket}", y_title="USD",
                           y_format=charts.MONEY, colors=scope.colors), key="cost-series")
    totals = frame.groupby(dimension, as_index=False)[["calls", "cost_usd"]].sum()
    st.dataframe(totals.sort_values("cost_usd", ascending=False), hide_index=True,
                 column_config={"cost_usd": st.column_config.NumberColumn("cost (USD)", format="$%.4f")})
    st.caption(f"Top 10 by cost, the rest as (other) · per {bucket} · served from `{stats.source}`")


def month_to_date(scope: Scope, report: dict[str, Any]) -> None:
    """The whole project's spend this month against its monthly budget, with the report's forecast band (budgets
    and the forecast are per project, so the sidebar's filters do not apply here)."""
    now = datetime.now(UTC)
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    month_end = start + timedelta(days=monthrange(now.year, now.month)[1])
    month = timerange.Window(start, timerange.now_minute(now), "this month")
    daily = data.stats(replace(scope, filters=()), "volume", bucket="day", window=month).frame
    forecast = report.get("forecast") or {}
    budgets = [b for b in data.budgets(scope) if b.get("period") == "month"]
    project_budget = next((b for b in budgets if b.get("scope_type") == "project"), None)
    spent = float(forecast.get("spent_usd") or 0.0)
    cols = st.columns(3)
    cols[0].metric("Spent this month", fmt.money(spent))
    if forecast.get("month_end_usd") is not None:
        cols[1].metric("Forecast for the month", fmt.money(forecast["month_end_usd"]),
                       help=f"{fmt.money(forecast.get('low_usd'))} – {fmt.money(forecast.get('high_usd'))} "
                            f"({int(float(forecast.get('level') or 0.9) * 100)}% band)")
    else:
        cols[1].metric("Forecast for the month", fmt.NONE, help=str(forecast.get("method", "")))
    if project_budget:
        cols[2].metric("Monthly budget", fmt.money(project_budget["limit_usd"]),
                       f"{fmt.pct(project_budget.get('used_ratio'), 0)} used", delta_color="off")
    else:
        cols[2].metric("Monthly budget", "none", help="Create one with `inferwatch-server budgets create`")
    if charts.has_values(daily, "cost_usd"):
        limit = float(project_budget["limit_usd"]) if project_budget else None
        ui.chart(charts.budget_burn(daily, axis=timeaxis.axis(month, "day"), title="Month to date", limit=limit,
                                    forecast=forecast, month_end=month_end), key="cost-budget")
    else:
        ui.empty_chart("No spend yet this month: the month-to-date chart starts with the month's first priced "
                       "call.")
    if budgets:
        ui.table(pd.DataFrame(budgets), BUDGET_COLUMNS)


def savings_and_movers(report: dict[str, Any], dimension_label: str) -> None:
    totals = report.get("totals") or {}
    cols = st.columns(4)
    cols[0].metric("Provider cache savings", fmt.money(totals.get("cache_savings_usd")),
                   help="What prompt-cache reads saved against the full input price")
    cols[1].metric("App cache: cost avoided", fmt.money(totals.get("cost_avoided_usd")))
    cols[2].metric("Cache hit ratio", fmt.pct(totals.get("cache_hit_ratio"), 1))
    cols[3].metric("Total savings", fmt.money(totals.get("total_savings_usd")))
    breakdown = next(iter(report.get("breakdowns") or []), None)
    movers = pd.DataFrame(breakdown.get("movers", []) if breakdown else [])
    st.markdown(f"**Top movers by {dimension_label.lower()}** (against the previous period)")
    if movers.empty:
        st.caption("No change against the previous period.")
    else:
        ui.table(movers)


def report_table(scope: Scope, report: dict[str, Any], period: str, by: str) -> None:
    breakdown = next(iter(report.get("breakdowns") or []), None)
    lines = pd.DataFrame(breakdown["lines"] if breakdown else [])
    if lines.empty:
        st.caption("No costs in this period yet: the report covers the whole project for the month to date (or "
                   "today), whatever the sidebar's range. Priced calls show here as they arrive.")
    else:
        ui.table(lines, REPORT_COLUMNS)
    versions = ", ".join(v["price_version"] or "(unversioned)" for v in report.get("price_versions", []))
    st.caption(f"{report.get('start')} → {report.get('end')} · price versions: {versions or 'none'}")
    csv = data.cost_report_csv(scope, period, by)
    st.download_button("Download CSV", csv, file_name=f"inferwatch-costs-{scope.project}-{period}.csv",
                       mime="text/csv", icon=":material/download:", on_click="ignore")


def whatif_form(scope: Scope) -> None:
    """Move a share of some traffic to another model and see the month's cost under that mix."""
    with st.form("whatif"):
        cols = st.columns(4)
        field = cols[0].selectbox("Traffic of", ["model", "feature", "prompt_template", "provider", "(all)"])
        value = cols[1].text_input("equal to", placeholder="e.g. gpt-4o")
        share = cols[2].slider("Share moved", 0.0, 1.0, 0.5, 0.05)
        target = cols[3].text_input("to model", placeholder="e.g. gpt-4o-mini")
        period = st.radio("Period", ["month", "day"], horizontal=True, key="whatif_period")
        submitted = st.form_submit_button("Price this scenario")
    if submitted:
        if not target:
            st.warning("Name the model the traffic moves to.")
            return
        rule: dict[str, Any] = {"share": share, "to_model": target}
        if field != "(all)" and value:
            rule[field] = value
        st.session_state["whatif_result"] = data.whatif(scope, {"period": period, "mix": [rule]})
    result = st.session_state.get("whatif_result")
    if result:
        cols = st.columns(3)
        cols[0].metric("Baseline (current prices)", fmt.money(result["baseline_cost_usd"]))
        cols[1].metric("Scenario", fmt.money(result["scenario_cost_usd"]),
                       fmt.change(result["scenario_cost_usd"], result["baseline_cost_usd"]), delta_color="inverse")
        cols[2].metric("Difference", fmt.money(result["delta_usd"]))
        if result.get("models"):
            ui.table(pd.DataFrame(result["models"]))
        for note in result.get("notes", []):
            st.caption(note)


def main() -> None:
    scope = context.current()
    ui.header("Cost", scope)
    label = st.radio("Break down by", list(DIMENSIONS), horizontal=True, key="cost_by")
    dimension, report_by = DIMENSIONS[label]
    with ui.section("Cost over time"):
        spend_over_time(scope, dimension)
    st.subheader("Month to date")
    with ui.section("Month to date"):
        month_to_date(scope, data.cost_report(scope, "month", report_by))
    st.subheader("Cost report")
    period = st.radio("Period", ["month", "day"], format_func={"month": "Month to date", "day": "Today"}.get,
                      horizontal=True, key="cost_period")
    with ui.section("Cost report"):
        report = data.cost_report(scope, period, report_by)
        savings_and_movers(report, label)
        report_table(scope, report, period, report_by)
        st.caption("The report covers the whole project; the sidebar's filters apply to the chart above.")
    st.subheader("What if")
    with ui.section("What-if repricing"):
        whatif_form(scope)


main()
