"""Capacity: the self-host vs API planner (``GET /api/v1/capacity/plan``) fed by this project's observed traffic in
the chosen window, with the model preset, GPU and prices editable, and the brief's naive plan beside it on request.

Fields left at 0 take the observed value (peak QPS of the busiest minute, mean output tokens, the API price
actually paid per 1M output tokens); the page says which numbers were observed and which were given.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from inferwatch_dashboard import charts, context, data, fmt, ui
from inferwatch_dashboard.api import BadRequest
from inferwatch_dashboard.data import Scope

PRECISIONS = ("fp16", "bf16", "fp32", "int8", "int4")
DEFAULT_MODEL = "llama-3-70b"


def inputs(scope: Scope) -> dict[str, Any]:
    """The planner's inputs from the form (the brief's worked example by default)."""
    presets = [p["name"] for p in data.capacity_presets(scope).get("presets", [])] or [DEFAULT_MODEL]
    cols = st.columns(4)
    model = cols[0].selectbox("Open model", presets, index=presets.index(DEFAULT_MODEL) if DEFAULT_MODEL in presets
                              else 0, key="cap_model")
    precision = cols[1].selectbox("Precision", PRECISIONS, key="cap_precision")
    gpu_mem = cols[2].number_input("GPU memory (GiB)", 8.0, 1024.0, 80.0, 8.0, key="cap_gpu_mem")
    gpu_hour = cols[3].number_input("GPU-hour price (USD)", 0.01, 1000.0, 3.50, 0.25, key="cap_gpu_hour")
    cols = st.columns(4)
    replica_tps = cols[0].number_input("Replica decode tokens/s", 1.0, 1e6, 2500.0, 100.0, key="cap_replica_tps",
                                       help="Aggregate decode tokens/s of one replica at full batch (measure it)")
    qps = cols[1].number_input("Peak QPS (0: observed)", 0.0, 1e6, 0.0, 1.0, key="cap_qps")
    tokens = cols[2].number_input("Output tokens / request (0: observed)", 0.0, 1e6, 0.0, 50.0, key="cap_tokens")
    api = cols[3].number_input("API USD per 1M output (0: observed)", 0.0, 1e4, 0.0, 0.5, key="cap_api")
    headroom = st.slider("Headroom over the peak", 1.0, 2.0, 1.2, 0.05, key="cap_headroom")
    brief = st.checkbox("Also show the product brief's back-of-envelope plan and what it gets wrong",
                        key="cap_brief")
    params: dict[str, Any] = {"model": model, "precision": precision, "gpu_mem_gib": gpu_mem,
                              "gpu_hour_usd": gpu_hour, "replica_tps": replica_tps, "headroom": headroom,
                              "brief": str(brief).lower()}
    for name, value in (("qps", qps), ("tokens", tokens), ("api_usd_per_1m", api)):
        if value:
            params[name] = value
    if scope.filter("model"):
        params["traffic_model"] = scope.filter("model")
    return params


def show_plan(answer: dict[str, Any]) -> None:
    plan = answer["plan"]
    verdict = plan.get("verdict")
    (st.success if verdict == "self-host" else st.info if verdict == "api" else st.warning)(plan["recommendation"])
    cols = st.columns(6)
    cols[0].metric("Tensor parallel", f"TP {plan['tp']}")
    cols[1].metric("Replicas", plan["replicas"])
    cols[2].metric("GPUs", plan["gpus"])
    cols[3].metric("KV headroom / GPU", f"{plan['kv_headroom_gib_per_gpu']:.1f} GiB")
    cols[4].metric("Max concurrency", fmt.count(plan["max_concurrency"]), help=f"bound by {plan['bound']}")
    cols[5].metric("Fleet cost", f"{fmt.money(plan['fleet_hour_usd'])}/h")
    left, right = st.columns(2)
    with left:
        ui.chart(charts.cost_comparison(plan.get("self_host_usd_per_1m_at_mean"), plan.get("api_usd_per_1m"),
                                        title="Cost per 1M output tokens at your mean traffic"),
                 key="capacity-cost")
    with right:
        rows = [("self-hosted at full capacity", plan.get("self_host_usd_per_1m_at_capacity")),
                ("self-hosted at your peak", plan.get("self_host_usd_per_1m_at_demand")),
                ("self-hosted at your mean", plan.get("self_host_usd_per_1m_at_mean")),
                ("API (observed or given)", plan.get("api_usd_per_1m"))]
        st.dataframe(pd.DataFrame({"USD per 1M output tokens": [fmt.money(v) for _, v in rows]},
                                  index=[name for name, _ in rows]))
        st.caption(f"KV cache: {fmt.count(plan['kv_bytes_per_token'])} bytes/token with grouped-query attention "
                   f"(the multi-head formula says {fmt.count(plan['kv_bytes_per_token_mha'])}, "
                   f"{plan['mha_overstatement']:g}× too much).")


def show_traffic(answer: dict[str, Any]) -> None:
    observed, sources = answer.get("observed"), answer.get("sources", {})
    if observed:
        cols = st.columns(4)
        cols[0].metric("Observed calls", fmt.count(observed["calls"]))
        cols[1].metric("Peak QPS (busiest minute)", fmt.number(observed["peak_qps"], 3))
        cols[2].metric("Mean output tokens", fmt.number(observed["mean_output_tokens"]))
        cols[3].metric("API USD / 1M output", fmt.money(observed.get("api_usd_per_1m_output")))
    if sources:
        st.caption("Inputs: " + ", ".join(f"{name} {source}" for name, source in sources.items()))
    for note in answer.get("notes", []):
        st.caption(note)


def show_brief(answer: dict[str, Any]) -> None:
    naive = answer.get("brief")
    if not naive:
        return
    st.subheader("The brief's plan")
    cols = st.columns(4)
    cols[0].metric("Replicas (brief)", naive["replicas"])
    cols[1].metric("Claimed tokens/s", fmt.count(naive["claimed_tps"]))
    cols[2].metric("Deliverable tokens/s", fmt.count(naive["deliverable_tps"]))
    cols[3].metric("Demanded tokens/s", fmt.count(naive["demanded_tps"]))
    for mistake in naive.get("mistakes", []):
        st.markdown(f"- {mistake}")


def main() -> None:
    scope = context.current()
    ui.header("Capacity", scope, "Self-hosting an open model vs staying on the API, sized from your traffic.")
    with ui.section("Capacity plan"):
        params = inputs(scope)
        try:
            answer = data.capacity_plan(scope, params)
        except BadRequest as error:
            if "qps" in params and "tokens" in params:
                raise
            st.info(f"No traffic to size from in this range ({error}). Widen the time range, or enter the "
                    "peak QPS and output tokens per request above.", icon=":material/info:")
            return
        show_traffic(answer)
        show_plan(answer)
        show_brief(answer)


main()
