"""Capacity planner maths: the brief's example its way and corrected, GQA KV sizes, fleet properties, errors."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from inferwatch_collector import planner
from inferwatch_collector.planner import (
    GIB,
    KIB,
    MIB,
    PRESETS,
    ObservedTraffic,
    PlanError,
    PlanInputs,
    brief_example,
    brief_plan,
    kv_bytes_per_token,
    kv_bytes_per_token_mha,
    plan,
    preset,
    resolve_model,
    traffic,
)

from tests.helpers.cli import run_cli

LLAMA_70B = PRESETS["llama-3-70b"]


def inputs(**overrides) -> PlanInputs:
    return dataclasses.replace(brief_example(), **overrides)


# --- the product brief's worked example ----------------------------------------------------------------------
def test_brief_example_computed_the_brief_way():
    b = brief_plan(brief_example())
    # 70e9 nominal params × 2 B (fp16) × 1.2 overhead / 4 GPUs / 2^30; "80 GB" read as 80 GiB.
    assert b.weights_gib_per_gpu == pytest.approx(70e9 * 2 * 1.2 / 4 / GIB)
    assert b.tp == 4 and round(b.weights_gib_per_gpu, 1) == 39.1
    assert round(b.kv_headroom_gib_per_gpu, 1) == 40.9
    # MHA: 2 × 80 layers × 8192 hidden × 2 B = 2.5 MiB/token; 10 GiB per 4096-token sequence; 40.88 // 10 = 4.
    assert b.kv_bytes_per_token_mha == 2.5 * MIB and b.kv_gib_per_sequence_mha == 10
    assert b.max_concurrency == 4
    # 400 tokens at 2,500 tok/s = 0.16 s; 4 / 0.16 = 25 QPS; ceil(50 × 1.2 / 25) = 3 replicas of 4 GPUs.
    assert b.latency_s == pytest.approx(0.16) and b.replica_qps == pytest.approx(25)
    assert b.replicas == 3 and b.gpus == 12
    # $42/h over 3 × 2,500 tok/s × 3600 s = 27M tokens/h.
    assert b.usd_per_1m == pytest.approx(42 / 27) and round(b.usd_per_1m, 2) == 1.56


def test_brief_example_cannot_serve_its_traffic_and_the_correction_can():
    b = brief_plan(brief_example())
    assert b.demanded_tps == 50 * 400 == 20_000
    assert b.deliverable_tps == 3 * 2500 == 7500 < b.demanded_tps
    assert b.claimed_tps == pytest.approx(30_000)  # what 3 × 25 QPS × 400 tokens would need
    assert "7,500 tok/s" in b.mistakes[0] and "20,000 tok/s" in b.mistakes[0]
    c = b.corrected
    assert c.bound == "throughput" and c.replica_qps == pytest.approx(2500 / 400)
    assert c.replicas_before_headroom == 8 and c.replicas == 10 and c.gpus == 40
    assert c.fleet_capacity_tps >= c.demanded_tps
    assert c.tp == 4 and round(c.weights_gib_per_gpu, 1) == 39.4  # 70.55B real params
    assert c.max_concurrency == 129  # (4 × 80 − 157.70) GiB // 1.25 GiB
    assert c.self_host_usd_per_1m_at_demand == pytest.approx(140 / 72)
    assert c.verdict == "self-host" and "$1.94/1M" in c.recommendation and "$3.00/1M" in c.recommendation


# --- KV cache --------------------------------------------------------------------------------------------------
def test_llama_3_70b_kv_cache_gqa_vs_mha():
    assert (LLAMA_70B.layers, LLAMA_70B.kv_heads, LLAMA_70B.head_dim, LLAMA_70B.hidden) == (80, 8, 128, 8192)
    assert kv_bytes_per_token(LLAMA_70B, 2) == 2 * 80 * 8 * 128 * 2 == 320 * KIB
    assert kv_bytes_per_token_mha(LLAMA_70B, 2) == 2 * 80 * 8192 * 2 == 2.5 * MIB
    p = plan(inputs(precision="bf16"))
    assert p.kv_bytes_per_token == 320 * KIB and p.kv_bytes_per_token_mha == 2.5 * MIB
    assert p.mha_overstatement == 8
    assert p.kv_gib_per_sequence == pytest.approx(320 * KIB * 4096 / GIB)


def test_kv_heads_are_replicated_when_tp_exceeds_them():
    m = resolve_model("tiny", {"params": 10**9, "layers": 10, "hidden": 1024, "heads": 8, "kv_heads": 2,
                               "head_dim": 128, "max_context": 4096})
    assert kv_bytes_per_token(m, 2, tp=8) == 4 * kv_bytes_per_token(m, 2, tp=1)


def test_quantised_weights_keep_a_16_bit_kv_cache_unless_told():
    p = plan(inputs(precision="int4"))
    assert p.kv_precision == "fp16" and p.kv_bytes_per_token == 320 * KIB
    assert p.weights_gib == pytest.approx(LLAMA_70B.params * 0.5 * 1.2 / GIB) and p.tp == 1
    assert plan(inputs(precision="int4", kv_precision="int8")).kv_bytes_per_token == 160 * KIB


def test_tp_grows_until_one_sequence_fits():
    m = PRESETS["llama-3.1-70b"]  # 157.7 GiB of weights: TP 2 leaves 2.3 GiB, one 131k sequence needs 40 GiB
    p = plan(inputs(model=m, kv_reserve=0, context=131_072))
    assert p.tp == 4 and p.kv_gib_per_sequence == 40 and p.max_concurrency == 4


def test_concurrency_can_be_the_binding_bound():
    p = plan(inputs(model=PRESETS["llama-3-8b"], gpu_mem_gib=24, replica_tps=3000, seq_tps=20, tokens=500,
                    context=8192, qps=1.1))
    assert p.tp == 1 and p.max_concurrency == 6  # (24 − 17.95) GiB // 1 GiB
    assert p.bound == "concurrency" and p.replica_qps == pytest.approx(6 * 20 / 500)
    assert p.replicas == 6  # ceil(1.1 × 1.2 / 0.24) = ceil(5.5)


# --- the fleet always covers the demand ---------------------------------------------------------------------
@st.composite
def plan_inputs(draw) -> PlanInputs:
    model = draw(st.sampled_from(list(PRESETS.values())))
    replica_tps = draw(st.floats(50, 50_000))
    return PlanInputs(
        model=model,
        precision=draw(st.sampled_from(list(planner.BYTES_PER_PARAM))),
        gpu_mem_gib=draw(st.sampled_from([16, 24, 40, 48, 80, 96, 141, 192])),
        gpu_hour_usd=draw(st.floats(0.1, 20)),
        replica_tps=replica_tps,
        seq_tps=draw(st.none() | st.floats(1, replica_tps)),
        qps=draw(st.floats(0.001, 5000)),
        tokens=draw(st.floats(1, 8000)),
        context=draw(st.integers(1, model.max_context)),
        headroom=draw(st.floats(1, 3)),
        overhead=draw(st.floats(1, 1.5)),
        kv_reserve=draw(st.floats(0, 0.9)),
        api_usd_per_1m=draw(st.none() | st.floats(0.01, 100)),
    )


@settings(max_examples=300, deadline=None)
@given(plan_inputs())
def test_recommended_fleet_covers_the_demand_within_its_limits(i: PlanInputs):
    try:
        p = plan(i)
    except PlanError as exc:  # honest refusals only: the weights or one sequence do not fit on 8 GPUs
        assert exc.field in ("model", "context")
        assume(False)
    rel = 1 + 1e-9
    # token throughput: the fleet produces at least QPS × tokens (× headroom), and no fewer replicas would do
    assert p.fleet_capacity_tps * rel >= i.qps * i.tokens * i.headroom
    assert (p.replicas - 1) * p.replica_qps < i.qps * i.headroom * rel
    assert p.gpus == p.replicas * p.tp and p.tp in planner.TP_DEGREES
    # each replica at the peak: within its aggregate decode throughput ...
    per_replica = i.qps / p.replicas
    assert per_replica * i.tokens <= i.replica_tps * rel
    # ... and, by Little's law, never more sequences in flight than its KV cache holds
    assert per_replica * p.latency_s <= p.max_concurrency * rel
    assert p.max_concurrency >= 1
    assert p.max_concurrency * p.kv_gib_per_sequence <= p.kv_headroom_gib * rel
    assert p.weights_gib_per_gpu <= (1 - i.kv_reserve) * i.gpu_mem_gib * rel
    json.dumps(p.to_dict())


# --- errors name the field ------------------------------------------------------------------------------------
def test_a_model_that_does_not_fit_at_tp_8_says_so():
    with pytest.raises(PlanError, match="does not fit even at TP 8") as err:
        plan(inputs(model=PRESETS["llama-3.1-405b"], precision="fp16"))
    assert err.value.field == "model" and "907" in str(err.value) and str(err.value).startswith("model: ")


def test_a_context_no_tp_can_hold_says_so():
    with pytest.raises(PlanError, match="even at TP 8") as err:
        plan(inputs(model=PRESETS["llama-3.1-405b"], gpu_mem_gib=114, kv_reserve=0, context=131_072))
    assert err.value.field == "context"


@pytest.mark.parametrize(("field", "value"), [
    ("qps", 0), ("qps", -5), ("tokens", 0), ("gpu_mem_gib", -80), ("gpu_hour_usd", 0), ("replica_tps", 0),
    ("context", 0), ("seq_tps", -1), ("mean_qps", 0), ("api_usd_per_1m", -3), ("qps", float("nan")),
    ("tokens", float("inf")), ("headroom", 0.9), ("overhead", 0.5), ("kv_reserve", 1), ("kv_reserve", -0.1),
    ("precision", "fp8"), ("kv_precision", "int2"), ("context", 9000), ("context", 4096.5),
    ("seq_tps", 3000), ("mean_qps", 60),
])
def test_impossible_inputs_raise_value_errors_naming_the_field(field, value):
    with pytest.raises(ValueError) as err:
        inputs(**{field: value})
    assert err.value.field == field and str(err.value).startswith(f"{field}: ")


def test_presets_resolve_from_hugging_face_ids():
    assert preset("meta-llama/Meta-Llama-3-70B-Instruct") is LLAMA_70B
    assert preset("mistralai/Mistral-7B-Instruct-v0.3").name == "mistral-7b"
    assert preset("google/gemma-2-27b-it").name == "gemma-2-27b"
    assert preset("Qwen/Qwen2.5-72B-Instruct").name == "qwen2.5-72b"
    assert preset("Mixtral-8x7B-Instruct-v0.1").params == 46_702_792_704
    with pytest.raises(PlanError, match="llama-3-70b") as err:
        preset("gpt-4o")
    assert err.value.field == "model"


def test_geometry_overrides_and_custom_models():
    assert resolve_model("llama-3-70b", {"max_context": 131_072, "layers": None}).max_context == 131_072
    with pytest.raises(PlanError) as err:
        resolve_model("my-model", {"params": 10**9, "layers": 10})
    assert err.value.field == "model"
    with pytest.raises(PlanError) as err:
        resolve_model("llama-3-70b", {"kv_heads": 7})
    assert err.value.field == "kv_heads"


# --- recommendation -----------------------------------------------------------------------------------------
def test_the_api_wins_when_the_fleet_idles():
    p = plan(inputs(mean_qps=5))  # sized for 50 QPS, paid around the clock, used at a tenth
    assert p.self_host_usd_per_1m_at_mean == pytest.approx(140 / (5 * 400 * 3600 / 1e6))
    assert p.verdict == "api" and p.recommendation.startswith("Stay on the API")
    unknown = plan(inputs(api_usd_per_1m=None))
    assert unknown.verdict == "unknown" and "unknown" in unknown.recommendation


# --- observed traffic → inputs --------------------------------------------------------------------------------
def observed(**overrides) -> ObservedTraffic:
    fields = dict(start="s", end="e", model=None, calls=1000, peak_qps=12.5, mean_qps=3.0,
                  mean_output_tokens=350.0, p95_output_tokens=900.0, p95_input_tokens=2000.0,
                  p95_context_tokens=2700.4, cost_usd=4.2, unpriced_calls=0, api_usd_per_1m_output=12.0)
    fields.update(overrides)
    return ObservedTraffic(**fields)


def test_given_values_win_and_the_rest_are_observed():
    t = traffic({"qps": None, "tokens": 400}, observed())
    assert (t.qps, t.mean_qps, t.tokens, t.context, t.api_usd_per_1m) == (12.5, 3.0, 400, 2701, 12.0)
    assert t.sources == {"qps": "observed", "mean_qps": "observed", "tokens": "given", "context": "observed",
                         "api_usd_per_1m": "observed"}
    target = traffic({"qps": 50}, observed())  # a target peak: the observed mean says nothing about it
    assert target.mean_qps is None


def test_unpriced_traffic_is_reported_not_priced_at_zero():
    t = traffic({}, observed(api_usd_per_1m_output=None, unpriced_calls=1000, cost_usd=0.0))
    assert t.api_usd_per_1m is None and "unpriced" in t.notes[0]
    partly = traffic({}, observed(unpriced_calls=10))
    assert partly.api_usd_per_1m == 12.0 and "10 of 1000" in partly.notes[0]


def test_missing_values_without_traffic_name_the_field():
    with pytest.raises(PlanError) as err:
        traffic({"tokens": 400}, None)
    assert err.value.field == "qps"
    with pytest.raises(PlanError) as err:
        traffic({}, observed(calls=0))
    assert err.value.field == "qps"
    t = traffic({"qps": 1, "tokens": 10}, None)
    assert t.context == planner.DEFAULT_CONTEXT and t.sources["context"] == "default"


# --- CLI without a database ------------------------------------------------------------------------------------
BRIEF_ARGS = ("plan", "--model", "llama-3-70b", "--gpu-mem-gib", "80", "--gpu-hour-usd", "3.5", "--replica-tps",
              "2500", "--qps", "50", "--tokens", "400", "--context", "4096", "--precision", "fp16",
              "--api-usd-per-1m", "3")


def test_cli_prints_the_brief_and_the_corrected_plan(capsys):
    assert run_cli(*BRIEF_ARGS, "--brief") == 0
    out = capsys.readouterr().out
    for text in ("TP 4: 39.1 GiB/GPU, KV headroom 40.9 GiB/GPU", "→ 4 concurrent", "= 3 replicas = 12 GPUs",
                 "$1.56/1M", "delivers 7,500 tok/s, 20,000 tok/s demanded", "8 replicas before headroom",
                 "10 replicas = 40 GPUs", "320 KiB/token", "Self-host:"):
        assert text in out


def test_cli_json_is_the_api_answer(capsys):
    assert run_cli(*BRIEF_ARGS, "--brief", "--json") == 0
    body = json.loads(capsys.readouterr().out)
    assert body["brief"]["replicas"] == 3 and body["plan"]["replicas"] == 10 and body["observed"] is None
    assert body["sources"]["qps"] == "given"


def test_cli_refuses_missing_traffic_naming_the_flag():
    with pytest.raises(PlanError) as err:
        run_cli("plan", "--model", "llama-3-70b", "--gpu-mem-gib", "80", "--gpu-hour-usd", "3.5",
                "--replica-tps", "2500", "--tokens", "400")
    assert err.value.field == "qps"
