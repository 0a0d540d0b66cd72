"""``GET /api/v1/capacity/plan`` (``read`` scope): the self-host vs API plan for the key's project.

Values not given in the query come from the project's observed traffic (:func:`observed_traffic`, last 7 days
by default); the arithmetic is :mod:`inferwatch_collector.planner`. A bad value answers 422 naming the field.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query

from .. import planner
from ..deps import ReadPrincipal, StoreDep
from ..queries import QueryError, TimeRange
from ..store import Store

router = APIRouter(prefix="/api/v1/capacity", tags=["capacity"])

DEFAULT_WINDOW = timedelta(days=7)
_NOT_EMBEDDINGS = "operation NOT IN ('embeddings', 'embedding')"  # no decode: nothing to plan for


def observed_traffic(store: Store, project_id: str, rng: TimeRange, model: str | None = None
                     ) -> planner.ObservedTraffic:
    """The project's generative LLM traffic over ``rng`` (optionally one model), as the planner wants it.

    The peak comes from the 1-minute rollup (the busiest minute / 60: sub-minute bursts are what the plan's
    headroom absorbs); token percentiles and prices from the raw calls, whose primary key starts with
    (project, hour) so only the window is read. Error calls stay in: they arrive like any other request, and
    keeping them makes QPS × mean tokens the token rate actually produced.
    """
    params: dict[str, Any] = rng.params(project_id)
    model_clause = ""
    if model:
        model_clause = " AND model = {model:String}"
        params["model"] = model
    per_minute = store.query(
        f"""SELECT max(c) AS peak, sum(c) AS calls, min(minute) AS first, max(minute) AS last
            FROM (SELECT minute, sum(calls) AS c FROM llm_calls_1m
                  WHERE project_id = {{p:String}} AND minute >= toStartOfMinute(fromUnixTimestamp({{s:Int64}}))
                    AND minute < fromUnixTimestamp({{e:Int64}}) AND {_NOT_EMBEDDINGS}{model_clause}
                  GROUP BY minute)""",
        params,
    ).first_row
    raw = store.query(
        f"""SELECT count() AS n, sum(output_tokens) AS out_sum,
                quantile(0.95)(output_tokens) AS p95_out, quantile(0.95)(input_tokens) AS p95_in,
                quantile(0.95)(input_tokens + output_tokens) AS p95_ctx, sum(cost_usd) AS cost,
                sumIf(output_tokens, NOT unpriced AND NOT usage_missing AND NOT cache_hit) AS priced_out,
                countIf(unpriced) AS unpriced_calls
            FROM llm_calls
            WHERE project_id = {{p:String}} AND start_time >= toStartOfMinute(fromUnixTimestamp({{s:Int64}}))
              AND start_time < fromUnixTimestamp({{e:Int64}}) AND {_NOT_EMBEDDINGS}{model_clause}""",
        params,
    ).first_row
    peak, minute_calls, first, last = per_minute
    calls, output_tokens, p95_out, p95_in, p95_ctx, cost, priced_out, unpriced = raw
    observed_s = ((last - first).total_seconds() + 60) if minute_calls else 0
    price = cost / priced_out * 1e6 if priced_out else None
    return planner.ObservedTraffic(
        start=rng.start.isoformat(), end=rng.end.isoformat(), model=model, calls=int(calls),
        peak_qps=(peak or 0) / 60, mean_qps=minute_calls / observed_s if observed_s else 0.0,
        mean_output_tokens=output_tokens / calls if calls else 0.0,
        p95_output_tokens=_number(p95_out), p95_input_tokens=_number(p95_in), p95_context_tokens=_number(p95_ctx),
        cost_usd=float(cost or 0), unpriced_calls=int(unpriced), api_usd_per_1m_output=price,
    )


def _number(value: float | None) -> float:
    return float(value) if value is not None and math.isfinite(value) else 0.0


def _q(description: str, **kwargs: Any) -> Any:
    return Query(description=description, **kwargs)


Number = float | None
Precision = Literal["fp32", "fp16", "bf16", "int8", "int4"]


@router.get("/plan", summary="Self-host vs API capacity plan from a model's geometry and observed traffic")
def capacity_plan(
    principal: ReadPrincipal,
    store: StoreDep,
    model: Annotated[str, _q("Open model to self-host: a preset (llama-3-70b, mixtral-8x7b, ...), its HF id, "
                             "or a new name with every geometry field below", max_length=200)],
    gpu_mem_gib: Annotated[float, _q("Memory of one GPU, GiB")],
    gpu_hour_usd: Annotated[float, _q("Price of one GPU-hour, USD")],
    replica_tps: Annotated[float, _q("Aggregate decode tokens/s of one replica (measured at full batch)")],
    precision: Annotated[Precision, _q("Weight precision")] = "fp16",
    kv_precision: Annotated[Precision | None, _q("KV cache precision (default: weights', fp16 if quantised)")]
    = None,
    seq_tps: Annotated[Number, _q("Decode tokens/s one sequence sees (default 30)")] = None,
    qps: Annotated[Number, _q("Peak requests/s to size for (default: observed busiest minute)")] = None,
    mean_qps: Annotated[Number, _q("Mean requests/s the fleet is paid at (default: observed, or qps)")] = None,
    tokens: Annotated[Number, _q("Output tokens per request (default: observed mean)")] = None,
    context: Annotated[int | None, _q("Tokens a sequence holds, prompt + output (default: observed p95, "
                                      "else 4096)")] = None,
    api_usd_per_1m: Annotated[Number, _q("API cost per 1M output tokens (default: observed)")] = None,
    headroom: Annotated[float, _q("Capacity over the peak (1.2 = 20% spare)")] = planner.DEFAULT_HEADROOM,
    overhead: Annotated[float, _q("Weights memory factor (CUDA context, activations)")] = planner.DEFAULT_OVERHEAD,
    kv_reserve: Annotated[float, _q("Share of each GPU kept for the KV cache when choosing TP")]
    = planner.DEFAULT_KV_RESERVE,
    traffic_model: Annotated[str | None, _q("Only observe calls to this (API) model", max_length=200)] = None,
    start: Annotated[datetime | None, _q("Observation window start (default: end - 7 days)")] = None,
    end: Annotated[datetime | None, _q("Observation window end (default: now)")] = None,
    brief: Annotated[bool, _q("Also compute the product brief's (naive) plan and what it gets wrong")] = False,
    params: Annotated[int | None, _q("Geometry override: parameter count (all experts)")] = None,
    layers: Annotated[int | None, _q("Geometry override: num_hidden_layers")] = None,
    hidden: Annotated[int | None, _q("Geometry override: hidden_size")] = None,
    heads: Annotated[int | None, _q("Geometry override: num_attention_heads")] = None,
    kv_heads: Annotated[int | None, _q("Geometry override: num_key_value_heads")] = None,
    head_dim: Annotated[int | None, _q("Geometry override: head_dim")] = None,
    max_context: Annotated[int | None, _q("Geometry override: max_position_embeddings")] = None,
) -> dict[str, Any]:
    given = {"qps": qps, "mean_qps": mean_qps, "tokens": tokens, "context": context,
             "api_usd_per_1m": api_usd_per_1m}
    geometry = {"params": params, "layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv_heads,
                "head_dim": head_dim, "max_context": max_context}
    observed = None
    if planner.needs_observation(given):
        try:
            rng = TimeRange.parse(start, end, default=DEFAULT_WINDOW)
        except QueryError as exc:
            raise HTTPException(400, str(exc)) from exc
        observed = observed_traffic(store, principal.project_id, rng, traffic_model)
    try:
        chosen = planner.traffic(given, observed)
        inputs = planner.PlanInputs(
            model=planner.resolve_model(model, geometry), gpu_mem_gib=gpu_mem_gib, gpu_hour_usd=gpu_hour_usd,
            replica_tps=replica_tps, qps=chosen.qps, mean_qps=chosen.mean_qps, tokens=chosen.tokens,
            context=chosen.context, precision=precision, kv_precision=kv_precision, seq_tps=seq_tps,
            headroom=headroom, overhead=overhead, kv_reserve=kv_reserve, api_usd_per_1m=chosen.api_usd_per_1m,
        )
        return planner.report(inputs, chosen, observed, brief)
    except planner.PlanError as exc:
        raise HTTPException(422, str(exc)) from exc
    except (ArithmeticError, ValueError) as exc:  # a number no deployment has (overhead=1e300) overflows the plan
        numbers = {"gpu_mem_gib": gpu_mem_gib, "gpu_hour_usd": gpu_hour_usd, "replica_tps": replica_tps,
                   "seq_tps": seq_tps, "headroom": headroom, "overhead": overhead, "kv_reserve": kv_reserve,
                   **given, **geometry}
        extreme = [f"{name}={value!r}" for name, value in numbers.items()
                   if isinstance(value, (int, float)) and not 1e-9 <= abs(value) <= 1e12 and value != 0]
        raise HTTPException(422, "the plan cannot be computed with " + (", ".join(extreme) or "these inputs")
                            + ": a value is outside any real deployment") from exc
