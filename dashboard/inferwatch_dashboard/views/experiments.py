"""Experiments: per experiment, the results job's verdict and SRM status, per-variant metrics with confidence
intervals and lifts, sample progress against the plan (``GET /api/v1/experiments/{name}``), and live per-variant
calls from the A/B rollup.

The live table needs only the query API, so an experiment can be watched before the results job has analysed
it (it registers and analyses experiments hourly) or on a collector without the experiments API.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from inferwatch_dashboard import charts, context, data, fmt, ui
from inferwatch_dashboard.api import ApiError, NotAvailable, NotFound
from inferwatch_dashboard.data import Scope

#: verdict -> how loudly to show it
VERDICT_STYLE = {"ship": st.success, "no_difference": st.info, "keep_running": st.info,
                 "srm_invalid": st.error, "guardrail_regression": st.error, "primary_regression": st.error}
RESULT_COLUMNS = ["metric", "variant", "n", "value", "ci_low", "ci_high", "lift", "p_value", "method"]


def choose(scope: Scope) -> tuple[str | None, dict[str, Any]]:
    """The experiment to show (the sidebar's, else a choice, the first one registered by hand by default) and its
    registry entry if the API has one."""
    try:
        registry = {str(e.get("name")): e for e in data.experiments(scope)}
    except NotAvailable:
        registry = {}
    except ApiError as error:
        ui.show_error(error, "Experiment registry")
        registry = {}
    # registered by hand first (the ones a team set up on purpose), then those registered automatically or only
    # seen in traffic; by name within each
    names = sorted(set(registry) | set(data.facets(scope).get("experiment", [])),
                   key=lambda n: (registry.get(n, {}).get("source") in (None, "auto"), n))
    if not names:
        st.info("No experiments in this range. Assign variants in your app with `inferwatch.experiment(name, "
                "variants)`; calls then carry the experiment and variant.", icon=":material/science:")
        return None, {}
    preset = scope.filter("experiment")
    name = st.selectbox("Experiment", names, index=names.index(preset) if preset in names else 0,
                        key="experiment_page")
    return name, registry.get(name, {})


def verdict(latest: dict[str, Any] | None, planned: int | None) -> None:
    """The verdict banner, SRM status and users against the plan."""
    if not latest:
        st.info("Not analysed yet: the experiments job analyses every experiment hourly.",
                icon=":material/schedule:")
        return
    text = str(latest.get("verdict") or "")
    show = VERDICT_STYLE.get(text, st.info)
    reason = latest.get("reason") or ""
    show(f"**Verdict: {text.replace('_', ' ')}**" + (f" — {reason}" if reason else ""))
    cols = st.columns(4)
    srm = latest.get("srm_p_value")
    cols[0].metric("SRM p-value", fmt.number(srm, 4) if srm is not None else fmt.NONE,
                   help="Sample ratio mismatch: a tiny p-value means the split differs from the weights")
    cols[1].metric("Trustworthy", {True: "yes", False: "no"}.get(latest.get("trustworthy"), fmt.NONE))
    cols[2].metric("Users", fmt.count(latest.get("users")), help="The unit of analysis (the randomisation unit)")
    cols[3].metric("Winner", latest.get("winner") or fmt.NONE)
    users = int(latest.get("users") or 0)
    if planned:
        st.progress(min(1.0, users / planned), text=f"Sample progress: {users:,} of {planned:,} users planned "
                                                    f"({fmt.pct(users / planned, 1)})")
    for warning in latest.get("warnings") or []:
        st.warning(warning)


def results(scope: Scope, rows: list[dict[str, Any]]) -> None:
    """Per-variant metrics with intervals, and each treatment's lift over the control."""
    frame = pd.DataFrame(rows)
    if frame.empty:
        return
    tested = frame[(frame["metric"] != "users") & (frame["method"] != "descriptive")]
    shares = frame[frame["metric"] == "users"]
    if not shares.empty:
        st.markdown("**Users per variant** (observed share; the SRM test compares it with the weights)")
        ui.table(shares.rename(columns={"n": "users", "value": "share"}), ["variant", "users", "share"])
    if tested.empty:
        return
    ui.table(tested, RESULT_COLUMNS)
    metrics = sorted(tested["metric"].astype(str).unique())
    metric = st.selectbox("Metric", metrics, key="experiment_metric")
    chosen = tested[tested["metric"].astype(str) == metric].dropna(subset=["value", "ci_low", "ci_high"])
    if not chosen.empty:
        ui.chart(charts.intervals(chosen, x="variant", y="value", low="ci_low", high="ci_high",
                                  title=f"{metric} by variant (confidence interval)", colors=scope.colors),
                 key="experiment-ci")
    lifts = tested.dropna(subset=["lift"])
    if not lifts.empty:
        lifts = lifts.assign(label=lifts["metric"].astype(str) + " · " + lifts["variant"].astype(str))
        ui.chart(charts.bars(lifts, "label", "lift", title="Relative lift over the control", y_format=".1%",
                             colors_by="variant", colors=scope.colors), key="experiment-lift")


def live(scope: Scope) -> None:
    """Per-variant calls, error and refusal rates, cost per call and latency, straight from the calls."""
    stats = data.stats(scope, "volume,latency", by="variant")
    frame = stats.frame
    if frame.empty or not frame["calls"].sum():
        ui.no_traffic(scope)
        return
    frame = frame.assign(error_rate=frame["errors"] / frame["calls"],
                         refusal_rate=frame["refusals"] / frame["calls"],
                         cost_per_call=frame["cost_usd"] / frame["calls"])
    st.dataframe(frame[["variant", "calls", "error_rate", "refusal_rate", "cost_per_call", "ttft_ms_p95",
                        "latency_ms_p95"]], hide_index=True, column_config={
        "error_rate": st.column_config.NumberColumn("error rate", format="percent"),
        "refusal_rate": st.column_config.NumberColumn("refusal rate", format="percent"),
        "cost_per_call": st.column_config.NumberColumn("cost / call", format="$%.5f")})
    total = int(frame["calls"].sum())
    for _, row in frame.iterrows():
        share = row["calls"] / total
        st.progress(min(1.0, share), text=f"{row['variant'] or '(none)'}: {int(row['calls']):,} calls "
                                          f"({fmt.pct(share, 1)} of the experiment's calls)")
    st.caption(f"Live from `{stats.source}`, per call; the verdict above is per user, from the results job.")


def main() -> None:
    scope = context.current()
    ui.header("Experiments", scope)
    with ui.section("Experiments"):
        name, entry = choose(scope)
        if name is None:
            return
        try:
            answer = data.experiment(scope, name)
        except NotFound:
            st.info(f"{name} is not registered yet: the experiments job registers an experiment the first hour it "
                    "sees its calls (or register it with POST /api/v1/experiments).", icon=":material/schedule:")
        except ApiError as error:
            ui.show_error(error, "Experiment results")
        else:
            definition = answer.get("experiment") or entry
            verdict(answer.get("latest"), definition.get("planned_users"))
            results(scope, answer.get("results") or [])
        st.subheader("Live per-variant calls")
        others = tuple(f for f in scope.filters if f[0] not in ("experiment", "variant"))
        live(replace(scope, filters=(*others, ("experiment", name))))


main()
