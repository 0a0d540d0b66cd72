"""``inferwatch-server plan``: the self-host vs API capacity plan, printed readably or as JSON.

Values not given on the command line come, with ``--project``, from that project's observed traffic in the
embedded database (``--data-dir`` / ``INFERWATCH_DATA_DIR``) or ClickHouse server of the usual settings.
The arithmetic is :mod:`inferwatch_collector.planner`; :func:`register` adds the subcommand to a parser.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timedelta, timezone
from typing import Any

from inferwatch_collector import planner

from .common import open_migrated, settings_from

_GEOMETRY = ("params", "layers", "hidden", "heads", "kv_heads", "head_dim", "max_context")
_TRAFFIC = ("qps", "mean_qps", "tokens", "context", "api_usd_per_1m")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``plan`` to ``subparsers`` (from ``ArgumentParser.add_subparsers``) with :func:`cmd_plan` as handler."""
    p = subparsers.add_parser(
        "plan", help="self-host vs API capacity plan for an open model",
        description="Size a self-hosted fleet for a traffic profile and compare its cost with the API's. "
                    "Presets: " + ", ".join(planner.PRESETS) + ".")
    p.add_argument("--model", required=True, help="preset or Hugging Face id (e.g. llama-3-70b)")
    p.add_argument("--precision", choices=list(planner.BYTES_PER_PARAM), default=planner.DEFAULT_PRECISION)
    p.add_argument("--kv-precision", choices=list(planner.BYTES_PER_PARAM),
                   help="KV cache precision (default: the weights', fp16 for int8/int4)")
    p.add_argument("--gpu-mem-gib", type=float, required=True, help="memory of one GPU, GiB")
    p.add_argument("--gpu-hour-usd", type=float, required=True, help="price of one GPU-hour, USD")
    p.add_argument("--replica-tps", type=float, required=True,
                   help="aggregate decode tokens/s of one replica, measured at full batch")
    p.add_argument("--seq-tps", type=float, help="decode tokens/s one sequence sees (default 30)")
    p.add_argument("--qps", type=float, help="peak requests/s to size for (default: observed busiest minute)")
    p.add_argument("--mean-qps", type=float,
                   help="mean requests/s the fleet is paid at (default: observed, or qps)")
    p.add_argument("--tokens", type=float, help="output tokens per request (default: observed mean)")
    p.add_argument("--context", type=int, help="tokens a sequence holds, prompt + output (default: observed p95, "
                                               "else 4096)")
    p.add_argument("--api-usd-per-1m", type=float, help="API cost per 1M output tokens (default: observed)")
    p.add_argument("--headroom", type=float, default=planner.DEFAULT_HEADROOM, help="capacity over the peak")
    p.add_argument("--overhead", type=float, default=planner.DEFAULT_OVERHEAD, help="weights memory factor")
    p.add_argument("--kv-reserve", type=float, default=planner.DEFAULT_KV_RESERVE,
                   help="share of each GPU kept for the KV cache when choosing TP")
    geometry = p.add_argument_group("model geometry (overrides the preset; all of them for a model without one)")
    geometry.add_argument("--params", type=int, help="parameter count, every expert included")
    for name in _GEOMETRY[1:]:
        geometry.add_argument(f"--{name.replace('_', '-')}", type=int)
    p.add_argument("--project", help="read the values not given from this project's observed traffic")
    p.add_argument("--traffic-model", help="with --project: only calls to this (API) model")
    p.add_argument("--days", type=float, default=7.0, help="with --project: observation window, days back")
    p.add_argument("--brief", action="store_true", help="also show the product brief's (naive) way and its errors")
    p.add_argument("--json", action="store_true", help="print JSON (the API's answer) instead of text")
    p.set_defaults(func=cmd_plan)
    return p


def cmd_plan(args: argparse.Namespace) -> int:
    """Plan, print, return 0. Bad inputs raise :class:`planner.PlanError` (a ValueError naming the field)."""
    given = {name: getattr(args, name) for name in _TRAFFIC}
    observed = None
    if args.project and planner.needs_observation(given):
        observed = _observe(args)
    chosen = planner.traffic(given, observed)
    inputs = planner.PlanInputs(
        model=planner.resolve_model(args.model, {name: getattr(args, name) for name in _GEOMETRY}),
        gpu_mem_gib=args.gpu_mem_gib, gpu_hour_usd=args.gpu_hour_usd, replica_tps=args.replica_tps,
        qps=chosen.qps, mean_qps=chosen.mean_qps, tokens=chosen.tokens, context=chosen.context,
        precision=args.precision, kv_precision=args.kv_precision, seq_tps=args.seq_tps, headroom=args.headroom,
        overhead=args.overhead, kv_reserve=args.kv_reserve, api_usd_per_1m=chosen.api_usd_per_1m,
    )
    if args.json:
        print(json.dumps(planner.report(inputs, chosen, observed, args.brief), indent=2))
        return 0
    lines: list[str] = []
    if observed is not None:
        lines += [render_observed(observed, args.project), ""]
    if args.brief:
        lines += [render_brief(planner.brief_plan(inputs), inputs), "", "Corrected plan", ""]
    lines.append(render_plan(planner.plan(inputs), chosen.sources))
    lines += [f"note: {note}" for note in chosen.notes]
    print("\n".join(lines))
    return 0


def _observe(args: argparse.Namespace) -> planner.ObservedTraffic:
    from inferwatch_collector.queries import TimeRange
    from inferwatch_collector.routes.planner import observed_traffic

    if not args.days > 0:
        raise planner.PlanError("days", f"must be > 0, got {args.days}")
    store = open_migrated(settings_from(args))
    try:
        end = datetime.now(timezone.utc)
        rng = TimeRange.parse(end - timedelta(days=args.days), end)
        return observed_traffic(store, args.project, rng, args.traffic_model)
    finally:
        store.close()


# --- text rendering (pure) ------------------------------------------------------------------------------------
def render_observed(o: planner.ObservedTraffic, project: str) -> str:
    """What was observed, in two lines."""
    scope = f"project {project}" + (f", model {o.model}" if o.model else "")
    head = f"Observed ({scope}, {o.start[:16]} → {o.end[:16]} UTC): {o.calls:,} calls"
    if not o.calls:
        return head
    price = (f"API ${o.api_usd_per_1m_output:.2f}/1M output tokens" if o.api_usd_per_1m_output is not None
             else "API price unknown (calls unpriced)")
    unpriced = f", {o.unpriced_calls:,} unpriced" if o.unpriced_calls else ""
    return (f"{head}, peak {o.peak_qps:.3g} QPS, mean {o.mean_qps:.3g} QPS\n"
            f"  output tokens mean {o.mean_output_tokens:,.0f} (p95 {o.p95_output_tokens:,.0f}), p95 input "
            f"{o.p95_input_tokens:,.0f}, p95 context {o.p95_context_tokens:,.0f}; {price}{unpriced}")


def render_plan(p: planner.Plan, sources: dict[str, str] | None = None) -> str:
    """The corrected plan, one concern per line, with where each traffic value came from."""
    src = sources or {}

    def tag(name: str) -> str:
        return f" ({src[name]})" if name in src and src[name] != "unknown" else ""

    g = p.geometry
    mean = f", mean {p.mean_qps:g} QPS{tag('mean_qps')}" if p.mean_qps != p.qps else ""
    api = (f"API ${p.api_usd_per_1m:.2f}/1M{tag('api_usd_per_1m')}" if p.api_usd_per_1m is not None
           else "API price unknown")
    binding = {"throughput": ("", "  <- binding"), "concurrency": ("  <- binding", "")}[p.bound]
    return "\n".join((
        f"{g.name}: {g.params / 1e9:.2f}B params, {g.layers} layers, {g.heads} heads / {g.kv_heads} KV heads × "
        f"{g.head_dim}, {p.precision} on {p.gpu_mem_gib:g} GiB GPUs",
        f"traffic      {p.qps:g} QPS peak{tag('qps')}{mean} × {p.tokens:g} output tokens{tag('tokens')} = "
        f"{p.demanded_tps:,.0f} tok/s; context {p.context} tokens{tag('context')}",
        f"weights      {p.weights_gib:.1f} GiB (× {p.overhead:g} overhead) → TP {p.tp}: "
        f"{p.weights_gib_per_gpu:.1f} GiB/GPU, KV headroom {p.kv_headroom_gib_per_gpu:.1f} GiB/GPU "
        f"({p.kv_headroom_gib:.1f} GiB per replica)",
        f"KV cache     {planner.format_bytes(p.kv_bytes_per_token)}/token ({p.kv_precision}, GQA); "
        f"the MHA formula says {planner.format_bytes(p.kv_bytes_per_token_mha)} "
        f"({p.mha_overstatement:g}× too much)",
        f"             {p.kv_gib_per_sequence:.3g} GiB per {p.context}-token sequence → {p.max_concurrency:,} "
        f"concurrent sequences per replica",
        f"per replica  by concurrency: {p.max_concurrency:,} × {p.seq_tps:g} tok/s ÷ {p.tokens:g} tokens = "
        f"{p.replica_qps_by_concurrency:.3g} QPS ({p.latency_s:.3g} s per request){binding[0]}",
        f"             by throughput:  {p.replica_tps:,.0f} tok/s ÷ {p.tokens:g} tokens = "
        f"{p.replica_qps_by_throughput:.3g} QPS{binding[1]}",
        f"fleet        {p.replicas_before_headroom} replicas before headroom; × {p.headroom:g} → {p.replicas} "
        f"replicas = {p.gpus} GPUs (${p.fleet_hour_usd:,.2f}/h), {p.fleet_capacity_tps:,.0f} tok/s",
        f"cost         self-hosted ${p.self_host_usd_per_1m_at_capacity:.2f}/1M output tokens at capacity, "
        f"${p.self_host_usd_per_1m_at_demand:.2f}/1M at the peak"
        + (f", ${p.self_host_usd_per_1m_at_mean:.2f}/1M at the mean" if p.mean_qps != p.qps else "")
        + f"; {api}",
        f"→ {p.recommendation}",
    ))


def render_brief(b: planner.BriefPlan, inputs: planner.PlanInputs) -> str:
    """The brief's numbers, computed its way, then what is wrong with them."""
    m = inputs.model
    return "\n".join((
        "The product brief's way (naive)",
        f"weights      {m.nominal_params / 1e9:g}B × {planner.BYTES_PER_PARAM[inputs.precision]:g} B × "
        f"{inputs.overhead:g} → TP {b.tp}: {b.weights_gib_per_gpu:.1f} GiB/GPU, KV headroom "
        f"{b.kv_headroom_gib_per_gpu:.1f} GiB/GPU",
        f"KV cache     MHA {planner.format_bytes(b.kv_bytes_per_token_mha)}/token → "
        f"{b.kv_gib_per_sequence_mha:.3g} GiB per {inputs.context}-token sequence → {b.max_concurrency} "
        "concurrent",
        f"per replica  {b.max_concurrency} ÷ {b.latency_s:.3g} s ({inputs.tokens:g} tokens at "
        f"{inputs.replica_tps:,.0f} tok/s) = {b.replica_qps:.3g} QPS",
        f"fleet        ceil({inputs.qps:g} × {inputs.headroom:g} ÷ {b.replica_qps:.3g}) = {b.replicas} "
        f"replicas = {b.gpus} GPUs → ${b.usd_per_1m:.2f}/1M output tokens",
        f"check        claims {b.claimed_tps:,.0f} tok/s, delivers {b.deliverable_tps:,.0f} tok/s, "
        f"{b.demanded_tps:,.0f} tok/s demanded",
        "What it gets wrong",
        *(f"  - {mistake}" for mistake in b.mistakes),
    ))
