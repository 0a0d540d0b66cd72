"""Self-host vs API capacity planner: pure arithmetic on a model's geometry and a traffic profile.

The model, per replica of ``tp`` GPUs:

* **Weights** take ``params × bytes/param × overhead`` (the overhead covers the CUDA context, activations and
  the serving stack's workspace), split evenly over the ``tp`` GPUs.
* **TP degree** is the smallest power of two (1, 2, 4, 8) that divides the attention heads and leaves at least
  ``kv_reserve`` of every GPU's memory free for the KV cache, with room for one sequence of ``context`` tokens.
* **KV cache** per token is ``2 (K and V) × layers × kv_heads × head_dim × bytes``. Grouped-query attention
  stores ``kv_heads`` heads, not ``heads``; the multi-head formula ``2 × layers × hidden × bytes`` overstates
  Llama-3-70B's cache 8× (64 heads vs 8 KV heads). Under TP the heads are sharded, so the whole replica's free
  memory holds the cache; when ``tp`` exceeds ``kv_heads`` each GPU keeps a replicated copy of one head.
* **Concurrency** is how many sequences of ``context`` tokens fit in that free memory.
* **Per-replica QPS** is bounded twice. A request decodes ``tokens`` at ``seq_tps`` (what one sequence sees),
  so it lasts ``tokens / seq_tps`` seconds and, by Little's law, ``concurrency`` slots serve
  ``concurrency × seq_tps / tokens`` requests/s. Independently, the replica's GPUs produce at most
  ``replica_tps`` tokens/s in total, i.e. ``replica_tps / tokens`` requests/s. The smaller bound wins: a
  replica reaches its aggregate throughput only if the KV cache holds a batch large enough to need it.
  Prefill is not modelled separately; measure ``replica_tps`` with realistic prompts so that it includes it.
* **Replicas** = ``ceil(qps × headroom / per-replica QPS)``; GPUs = replicas × tp.
* **Cost**: the fleet's $/hour over the output tokens it produces; at its capacity, at the demanded (peak)
  throughput, and at the mean load if known (a fleet sized for the peak is paid for around the clock).

:func:`brief_plan` reproduces the product brief's worked example the brief's (naive) way, and lists what it
gets wrong next to the corrected :func:`plan`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Mapping

GIB = 2**30
MIB = 2**20
KIB = 2**10
BYTES_PER_PARAM: dict[str, float] = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "int8": 1.0, "int4": 0.5}
TP_DEGREES = (1, 2, 4, 8)  # one node; beyond 8 GPUs a replica needs pipeline parallelism across nodes
DEFAULT_PRECISION = "fp16"
DEFAULT_CONTEXT = 4096
DEFAULT_HEADROOM = 1.2  # 20% spare capacity over the peak: bursts shorter than a minute, a replica down
DEFAULT_OVERHEAD = 1.2  # weights × 1.2: CUDA context, activations, allocator slack
DEFAULT_KV_RESERVE = 0.2  # at least a fifth of every GPU left for the KV cache
DEFAULT_SEQ_TPS = 30.0  # a typical interactive streaming speed per sequence; measure yours
Verdict = Literal["self-host", "api", "unknown"]


class PlanError(ValueError):
    """Inputs that cannot be planned; ``field`` names the input at fault and the message starts with it."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


def _finite(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PlanError(name, f"must be a finite number, got {value!r}")


def _positive(name: str, value: float) -> None:
    _finite(name, value)
    if value <= 0:
        raise PlanError(name, f"must be > 0, got {value}")


def _at_least(name: str, value: float, low: float) -> None:
    _finite(name, value)
    if value < low:
        raise PlanError(name, f"must be >= {low:g}, got {value}")


@dataclass(frozen=True)
class ModelGeometry:
    """What the planner needs of a model, in the names of its Hugging Face ``config.json``.

    ``params`` is the exact count (every expert of a mixture-of-experts model must sit in memory);
    ``nominal_params`` is the size in its name, which is what back-of-envelope plans (the brief) use.
    """

    name: str
    params: int
    nominal_params: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    max_context: int

    def __post_init__(self) -> None:
        for name in ("params", "nominal_params", "layers", "hidden", "heads", "kv_heads", "head_dim",
                     "max_context"):
            _positive(name, getattr(self, name))
        if self.heads % self.kv_heads:
            raise PlanError("kv_heads", f"must divide heads ({self.heads}), got {self.kv_heads}")


# Parameter counts are the sums of the tensors their config.json describes (they match the model cards).
PRESETS: dict[str, ModelGeometry] = {
    m.name: m
    for m in (
        ModelGeometry("llama-3-8b", 8_030_261_248, 8e9, 32, 4096, 32, 8, 128, 8192),
        ModelGeometry("llama-3-70b", 70_553_706_496, 70e9, 80, 8192, 64, 8, 128, 8192),
        ModelGeometry("llama-3.1-8b", 8_030_261_248, 8e9, 32, 4096, 32, 8, 128, 131_072),
        ModelGeometry("llama-3.1-70b", 70_553_706_496, 70e9, 80, 8192, 64, 8, 128, 131_072),
        ModelGeometry("llama-3.1-405b", 405_853_388_800, 405e9, 126, 16384, 128, 8, 128, 131_072),
        ModelGeometry("mistral-7b", 7_248_023_552, 7e9, 32, 4096, 32, 8, 128, 32_768),
        ModelGeometry("mixtral-8x7b", 46_702_792_704, 46.7e9, 32, 4096, 32, 8, 128, 32_768),
        ModelGeometry("qwen2.5-7b", 7_615_616_512, 7e9, 28, 3584, 28, 4, 128, 32_768),
        ModelGeometry("qwen2.5-72b", 72_706_203_648, 72e9, 80, 8192, 64, 8, 128, 32_768),
        ModelGeometry("gemma-2-9b", 9_241_705_984, 9e9, 42, 3584, 16, 8, 256, 8192),
        ModelGeometry("gemma-2-27b", 27_227_128_320, 27e9, 46, 4608, 32, 16, 128, 8192),
    )
}
_SUFFIXES = ("-instruct", "-chat", "-hf", "-it", "-v0.1", "-v0.2", "-v0.3")


def preset(name: str) -> ModelGeometry:
    """The preset for ``name``, also found by its Hugging Face id or an instruct variant.

    ``meta-llama/Meta-Llama-3-70B-Instruct`` → ``llama-3-70b``: users paste the id from the model card.
    """
    key = name.strip().lower().rsplit("/", 1)[-1].removeprefix("meta-")
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            if key.endswith(suffix):
                key, changed = key.removesuffix(suffix), True
    if key not in PRESETS:
        raise PlanError("model", f"unknown model {name!r}; presets: {', '.join(PRESETS)} (or give its geometry)")
    return PRESETS[key]


def resolve_model(name: str, overrides: Mapping[str, Any] | None = None) -> ModelGeometry:
    """A preset with some geometry fields replaced, or a custom model when every field is given."""
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    fields = [f for f in ModelGeometry.__dataclass_fields__ if f != "name"]
    unknown = set(given) - set(fields)
    if unknown:
        raise PlanError(sorted(unknown)[0], "is not a model geometry field")
    try:
        base = asdict(preset(name))
    except PlanError:
        missing = [f for f in fields if f not in given and f != "nominal_params"]
        if not given or missing:
            raise
        base = {"name": name, "nominal_params": given["params"]}
    return ModelGeometry(**{**base, **given})


@dataclass(frozen=True)
class PlanInputs:
    """Everything a plan depends on; validated on construction (a :class:`PlanError` names the bad field).

    ``qps`` is the peak to size for; ``mean_qps`` (default: the peak) is the load the fleet is paid at.
    ``tokens`` is output tokens per request; ``context`` the tokens a sequence holds (prompt + output).
    ``api_usd_per_1m`` is what the same traffic costs on the API per million output tokens (None: unknown).
    ``kv_precision`` defaults to the weights' precision, or fp16 for int8/int4 weights (quantised weights
    usually keep a 16-bit KV cache).
    """

    model: ModelGeometry
    gpu_mem_gib: float
    gpu_hour_usd: float
    replica_tps: float
    qps: float
    tokens: float
    context: int = DEFAULT_CONTEXT
    precision: str = DEFAULT_PRECISION
    kv_precision: str | None = None
    seq_tps: float | None = None
    headroom: float = DEFAULT_HEADROOM
    overhead: float = DEFAULT_OVERHEAD
    kv_reserve: float = DEFAULT_KV_RESERVE
    api_usd_per_1m: float | None = None
    mean_qps: float | None = None

    def __post_init__(self) -> None:
        for name in ("precision", "kv_precision"):
            value = getattr(self, name)
            if value is not None and value not in BYTES_PER_PARAM:
                raise PlanError(name, f"must be one of {', '.join(BYTES_PER_PARAM)}, got {value!r}")
        for name in ("gpu_mem_gib", "gpu_hour_usd", "replica_tps", "qps", "tokens", "context"):
            _positive(name, getattr(self, name))
        for name in ("seq_tps", "mean_qps", "api_usd_per_1m"):
            if getattr(self, name) is not None:
                _positive(name, getattr(self, name))
        if int(self.context) != self.context:
            raise PlanError("context", f"must be a whole number of tokens, got {self.context}")
        if self.context > self.model.max_context:
            raise PlanError("context", f"{self.context} tokens exceed {self.model.name}'s "
                                       f"{self.model.max_context}-token context window")
        _at_least("headroom", self.headroom, 1.0)
        _at_least("overhead", self.overhead, 1.0)
        _finite("kv_reserve", self.kv_reserve)
        if not 0 <= self.kv_reserve < 1:
            raise PlanError("kv_reserve", f"must be a fraction in [0, 1), got {self.kv_reserve}")
        if self.seq_tps is not None and self.seq_tps > self.replica_tps:
            raise PlanError("seq_tps", f"one sequence ({self.seq_tps} tok/s) cannot decode faster than its "
                                       f"whole replica (replica_tps {self.replica_tps} tok/s)")
        if self.mean_qps is not None and self.mean_qps > self.qps:
            raise PlanError("mean_qps", f"the mean ({self.mean_qps}) cannot exceed the peak qps ({self.qps})")

    @property
    def decode_tps(self) -> float:
        """Per-sequence decode speed: ``seq_tps``, else 30 tok/s (never more than the whole replica)."""
        return self.seq_tps if self.seq_tps is not None else min(DEFAULT_SEQ_TPS, self.replica_tps)

    @property
    def kv_dtype(self) -> str:
        """The KV cache's precision: ``kv_precision``, else the weights', else fp16 under quantised weights."""
        if self.kv_precision is not None:
            return self.kv_precision
        return self.precision if BYTES_PER_PARAM[self.precision] >= 2 else "fp16"

    @property
    def kv_bytes(self) -> float:
        return BYTES_PER_PARAM[self.kv_dtype]


@dataclass(frozen=True)
class Plan:
    """A planned fleet; JSON-serialisable through :meth:`to_dict`. Memory in GiB, money in USD."""

    geometry: ModelGeometry
    precision: str
    kv_precision: str
    gpu_mem_gib: float
    tp: int
    overhead: float
    weights_gib: float
    weights_gib_per_gpu: float
    kv_headroom_gib_per_gpu: float
    kv_headroom_gib: float
    kv_bytes_per_token: int
    kv_bytes_per_token_mha: int
    mha_overstatement: float
    context: int
    kv_gib_per_sequence: float
    max_concurrency: int
    seq_tps: float
    latency_s: float
    replica_tps: float
    replica_qps_by_concurrency: float
    replica_qps_by_throughput: float
    replica_qps: float
    bound: Literal["concurrency", "throughput"]
    qps: float
    mean_qps: float
    tokens: float
    demanded_tps: float
    replicas_before_headroom: int
    headroom: float
    replicas: int
    gpus: int
    fleet_capacity_tps: float
    gpu_hour_usd: float
    fleet_hour_usd: float
    self_host_usd_per_1m_at_capacity: float
    self_host_usd_per_1m_at_demand: float
    self_host_usd_per_1m_at_mean: float
    api_usd_per_1m: float | None
    verdict: Verdict
    recommendation: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BriefPlan:
    """The brief's naive plan, the corrected :class:`Plan` for the same inputs, and what the brief got wrong."""

    tp: int
    weights_gib_per_gpu: float
    kv_headroom_gib_per_gpu: float
    kv_bytes_per_token_mha: int
    kv_gib_per_sequence_mha: float
    max_concurrency: int
    latency_s: float
    replica_qps: float
    replicas: int
    gpus: int
    usd_per_1m: float
    claimed_tps: float
    deliverable_tps: float
    demanded_tps: float
    mistakes: tuple[str, ...]
    corrected: Plan

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def kv_bytes_per_token(model: ModelGeometry, bytes_per_value: float, tp: int = 1) -> int:
    """GQA-aware KV cache bytes per token for a whole replica (heads replicated when ``tp > kv_heads``)."""
    return int(2 * model.layers * max(model.kv_heads, tp) * model.head_dim * bytes_per_value)


def kv_bytes_per_token_mha(model: ModelGeometry, bytes_per_value: float) -> int:
    """The multi-head formula ``2 × layers × hidden × bytes``: right only when every head has its own K/V."""
    return int(2 * model.layers * model.hidden * bytes_per_value)


def weights_bytes(params: float, precision: str, overhead: float) -> float:
    """Weight memory with the overhead factor applied."""
    return params * BYTES_PER_PARAM[precision] * overhead


def plan(inputs: PlanInputs) -> Plan:
    """The corrected plan (see the module docstring for the model)."""
    m = inputs.model
    gpu_bytes = inputs.gpu_mem_gib * GIB
    weights = weights_bytes(m.params, inputs.precision, inputs.overhead)
    fitting = _weight_fitting_tps(m, weights, gpu_bytes, inputs.kv_reserve)
    if not fitting:
        _raise_does_not_fit(inputs, weights)

    def sequence_bytes(tp: int) -> float:
        return kv_bytes_per_token(m, inputs.kv_bytes, tp) * inputs.context

    tp = next((t for t in fitting if t * gpu_bytes - weights >= sequence_bytes(t)), None)
    if tp is None:
        t = fitting[-1]
        raise PlanError("context", f"one sequence of {inputs.context} tokens needs "
                                   f"{sequence_bytes(t) / GIB:.1f} GiB of KV cache; even at TP {t} only "
                                   f"{(t * gpu_bytes - weights) / GIB:.1f} GiB is left after the weights")
    headroom_bytes = tp * gpu_bytes - weights
    concurrency = int(headroom_bytes // sequence_bytes(tp))
    latency = inputs.tokens / inputs.decode_tps
    by_concurrency = concurrency / latency
    by_throughput = inputs.replica_tps / inputs.tokens
    replica_qps = min(by_concurrency, by_throughput)
    replicas = math.ceil(inputs.qps * inputs.headroom / replica_qps)
    gpus = replicas * tp
    fleet_hour = gpus * inputs.gpu_hour_usd
    capacity_tps = replicas * replica_qps * inputs.tokens
    demanded_tps = inputs.qps * inputs.tokens
    mean_qps = inputs.mean_qps if inputs.mean_qps is not None else inputs.qps
    at_mean = _usd_per_1m(fleet_hour, mean_qps * inputs.tokens)
    verdict, sentence = _recommend(inputs, replicas, tp, gpus, fleet_hour, at_mean, mean_qps)
    kv_token = kv_bytes_per_token(m, inputs.kv_bytes)
    kv_mha = kv_bytes_per_token_mha(m, inputs.kv_bytes)
    return Plan(
        geometry=m, precision=inputs.precision, kv_precision=inputs.kv_dtype, gpu_mem_gib=inputs.gpu_mem_gib,
        tp=tp,
        overhead=inputs.overhead, weights_gib=weights / GIB, weights_gib_per_gpu=weights / tp / GIB,
        kv_headroom_gib_per_gpu=headroom_bytes / tp / GIB, kv_headroom_gib=headroom_bytes / GIB,
        kv_bytes_per_token=kv_token, kv_bytes_per_token_mha=kv_mha, mha_overstatement=kv_mha / kv_token,
        context=int(inputs.context), kv_gib_per_sequence=sequence_bytes(tp) / GIB, max_concurrency=concurrency,
        seq_tps=inputs.decode_tps, latency_s=latency, replica_tps=inputs.replica_tps,
        replica_qps_by_concurrency=by_concurrency, replica_qps_by_throughput=by_throughput,
        replica_qps=replica_qps, bound="concurrency" if by_concurrency < by_throughput else "throughput",
        qps=inputs.qps, mean_qps=mean_qps, tokens=inputs.tokens, demanded_tps=demanded_tps,
        replicas_before_headroom=math.ceil(inputs.qps / replica_qps), headroom=inputs.headroom,
        replicas=replicas, gpus=gpus, fleet_capacity_tps=capacity_tps, gpu_hour_usd=inputs.gpu_hour_usd,
        fleet_hour_usd=fleet_hour, self_host_usd_per_1m_at_capacity=_usd_per_1m(fleet_hour, capacity_tps),
        self_host_usd_per_1m_at_demand=_usd_per_1m(fleet_hour, demanded_tps), self_host_usd_per_1m_at_mean=at_mean,
        api_usd_per_1m=inputs.api_usd_per_1m, verdict=verdict, recommendation=sentence,
    )


def brief_plan(inputs: PlanInputs) -> BriefPlan:
    """The product brief's method, reproduced step by step, with the corrected plan beside it.

    For the brief's example (Llama-3-70B fp16, 80 GB GPUs read as 80 GiB, overhead 1.2, headroom 1.2):

    * weights: 70e9 nominal params × 2 B × 1.2 = 156.46 GiB; TP 2 leaves 1.8 GiB per GPU (under the 20%
      reserve), so TP 4: 39.116 GiB per GPU, and 80 − 39.116 = 40.884 GiB of KV headroom per GPU;
    * KV by the MHA formula: 2 × 80 layers × 8192 hidden × 2 B = 2.5 MiB per token, 10 GiB per 4096-token
      sequence; one GPU's headroom is taken as the replica's, so floor(40.884 / 10) = 4 sequences;
    * latency: 400 tokens at 2,500 tok/s (the replica's aggregate, taken as each sequence's speed) = 0.16 s,
      so 4 / 0.16 = 25 QPS per replica, with no aggregate-throughput bound;
    * replicas: ceil(50 × 1.2 / 25) = ceil(2.4) = 3, i.e. 12 GPUs at $3.50 = $42/h;
    * cost: $42 / (3 × 2,500 tok/s × 3600 s = 27M tokens) = $1.556 per 1M output tokens.

    Three replicas claim 75 QPS × 400 = 30,000 tok/s but can produce 3 × 2,500 = 7,500 tok/s, less than the
    20,000 tok/s demanded: the fleet is under-sized 2.7× before any headroom.
    """
    m = inputs.model
    gpu_bytes = inputs.gpu_mem_gib * GIB
    weights = weights_bytes(m.nominal_params, inputs.precision, inputs.overhead)
    fitting = _weight_fitting_tps(m, weights, gpu_bytes, inputs.kv_reserve)
    if not fitting:
        _raise_does_not_fit(inputs, weights)
    tp = fitting[0]
    headroom_per_gpu = gpu_bytes - weights / tp
    mha = kv_bytes_per_token_mha(m, BYTES_PER_PARAM[inputs.precision])
    concurrency = int(headroom_per_gpu // (mha * inputs.context))
    if concurrency == 0:
        raise PlanError("context", f"by the brief's method not one {inputs.context}-token sequence fits in "
                                   f"{headroom_per_gpu / GIB:.1f} GiB")
    latency = inputs.tokens / inputs.replica_tps
    replica_qps = concurrency / latency
    replicas = math.ceil(inputs.qps * inputs.headroom / replica_qps)
    fleet_hour = replicas * tp * inputs.gpu_hour_usd
    deliverable = replicas * inputs.replica_tps
    corrected = plan(inputs)
    demanded = inputs.qps * inputs.tokens
    naive_gib, real_gib = round(weights / tp / GIB, 1), round(corrected.weights_gib_per_gpu, 1)
    mistakes = (
        f"throughput: {replicas} replicas × {inputs.replica_tps:,.0f} tok/s = {deliverable:,.0f} tok/s, but "
        f"{inputs.qps:g} QPS × {inputs.tokens:g} tokens = {demanded:,.0f} tok/s is demanded; the brief bounds "
        f"a replica by concurrency alone, taking its aggregate {inputs.replica_tps:,.0f} tok/s as every "
        f"sequence's speed ({latency:.2f} s per request), so it claims "
        f"{replicas * replica_qps * inputs.tokens:,.0f} tok/s. At {corrected.replica_qps:g} QPS per replica "
        f"the traffic needs {corrected.replicas_before_headroom} replicas before headroom, "
        f"{corrected.replicas} with it.",
        f"KV cache: the MHA formula ({format_bytes(mha)}/token) overstates {m.name}'s grouped-query cache "
        f"({m.kv_heads} KV heads: {format_bytes(corrected.kv_bytes_per_token)}/token) "
        f"{corrected.mha_overstatement:g}×, and one GPU's headroom is counted for a replica of {tp}: the "
        f"replica holds {corrected.max_concurrency} sequences of {inputs.context} tokens, not {concurrency}.",
        *([f"weights: {m.nominal_params / 1e9:g}B is the name, the model has {m.params / 1e9:.2f}B parameters "
           f"({real_gib} GiB per GPU at TP {corrected.tp}, not {naive_gib})."] if naive_gib != real_gib else []),
        f"cost: ${_usd_per_1m(fleet_hour, deliverable):.2f}/1M is what {replicas} replicas cost running flat out "
        f"at {deliverable:,.0f} tok/s; the {corrected.gpus}-GPU fleet that serves {demanded:,.0f} tok/s costs "
        f"${corrected.self_host_usd_per_1m_at_demand:.2f}/1M at that load.",
    )
    return BriefPlan(
        tp=tp, weights_gib_per_gpu=weights / tp / GIB, kv_headroom_gib_per_gpu=headroom_per_gpu / GIB,
        kv_bytes_per_token_mha=mha, kv_gib_per_sequence_mha=mha * inputs.context / GIB,
        max_concurrency=concurrency, latency_s=latency, replica_qps=replica_qps, replicas=replicas,
        gpus=replicas * tp, usd_per_1m=_usd_per_1m(fleet_hour, deliverable),
        claimed_tps=replicas * replica_qps * inputs.tokens, deliverable_tps=deliverable, demanded_tps=demanded,
        mistakes=mistakes, corrected=corrected,
    )


def brief_example() -> PlanInputs:
    """The product brief's worked example as planner inputs."""
    return PlanInputs(model=PRESETS["llama-3-70b"], precision="fp16", gpu_mem_gib=80, gpu_hour_usd=3.5,
                      replica_tps=2500, qps=50, tokens=400, context=4096, api_usd_per_1m=3.0)


# --- observed traffic -> inputs ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ObservedTraffic:
    """A project's LLM traffic over a window, as read from ``llm_calls`` (see ``routes.planner``).

    ``peak_qps`` is the busiest minute's calls / 60; ``mean_qps`` spreads all calls over the minutes from the
    first to the last call. ``api_usd_per_1m_output`` is cost paid per million output tokens of the priced
    calls (input, cache and reasoning costs included), None when no call was priced.
    """

    start: str
    end: str
    model: str | None
    calls: int
    peak_qps: float
    mean_qps: float
    mean_output_tokens: float
    p95_output_tokens: float
    p95_input_tokens: float
    p95_context_tokens: float
    cost_usd: float
    unpriced_calls: int
    api_usd_per_1m_output: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Traffic:
    """The traffic a plan is made for, with where each value came from (given, observed or default)."""

    qps: float
    mean_qps: float | None
    tokens: float
    context: int
    api_usd_per_1m: float | None
    sources: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def needs_observation(given: Mapping[str, float | None]) -> bool:
    """Whether :func:`traffic` would take anything from observed traffic (``mean_qps`` follows ``qps``)."""
    return any(given.get(name) is None for name in ("qps", "tokens", "context", "api_usd_per_1m"))


def traffic(given: Mapping[str, float | None], observed: ObservedTraffic | None) -> Traffic:
    """The plan's traffic: given values win, the rest come from observed traffic.

    ``mean_qps`` is observed only together with ``qps`` (a given target peak says nothing about the mean).
    A missing value with nothing observed is an error naming it, except ``context`` (default 4096) and the
    API price (then unknown, and said so).
    """
    sources: dict[str, str] = {}
    notes: list[str] = []
    seen = observed is not None and observed.calls > 0
    if observed is not None and not seen:
        notes.append(f"no calls observed between {observed.start} and {observed.end}"
                     + (f" for model {observed.model}" if observed.model else ""))

    def pick(name: str, value_of_observed: float | None, default: float | None = None, required: bool = True
             ) -> float | None:
        if given.get(name) is not None:
            sources[name] = "given"
            return given[name]
        if seen and value_of_observed is not None:
            sources[name] = "observed"
            return value_of_observed
        if default is not None:
            sources[name] = "default"
            return default
        if required:
            raise PlanError(name, "not given, and no traffic observed to take it from")
        sources[name] = "unknown"
        return None

    qps = pick("qps", observed.peak_qps if observed else None)
    mean_qps = pick("mean_qps", observed.mean_qps if observed and sources["qps"] == "observed" else None,
                    required=False)
    tokens = pick("tokens", observed.mean_output_tokens if observed else None)
    if sources["tokens"] == "observed" and not tokens:
        raise PlanError("tokens", "the observed calls have no output tokens; give tokens")
    context = pick("context", math.ceil(observed.p95_context_tokens) if observed else None, DEFAULT_CONTEXT)
    api = pick("api_usd_per_1m", observed.api_usd_per_1m_output if observed else None, required=False)
    if seen and given.get("api_usd_per_1m") is None:
        if observed.api_usd_per_1m_output is None:
            notes.append(f"the API price is unknown: all {observed.calls} observed calls are unpriced (cost 0), "
                         "so they cannot be compared with self-hosting; give api_usd_per_1m")
        elif observed.unpriced_calls:
            notes.append(f"{observed.unpriced_calls} of {observed.calls} observed calls are unpriced (cost 0); "
                         "the API price is taken from the priced ones")
    return Traffic(qps=float(qps), mean_qps=mean_qps, tokens=float(tokens), context=int(context),
                   api_usd_per_1m=api, sources=sources, notes=tuple(notes))


def report(inputs: PlanInputs, chosen: Traffic, observed: ObservedTraffic | None, brief: bool = False
           ) -> dict[str, Any]:
    """The JSON answer of the API and ``plan --json``: the plan, optionally the brief's, and the traffic used."""
    result: dict[str, Any] = {"plan": plan(inputs).to_dict()}
    if brief:
        naive = brief_plan(inputs).to_dict()
        naive.pop("corrected")
        result["brief"] = naive
    result.update(observed=observed.to_dict() if observed else None, sources=dict(chosen.sources),
                  notes=list(chosen.notes))
    return result


# --- helpers ---------------------------------------------------------------------------------------------------
def _weight_fitting_tps(model: ModelGeometry, weights: float, gpu_bytes: float, kv_reserve: float) -> list[int]:
    """TP degrees (ascending) that split the heads evenly and leave ``kv_reserve`` of each GPU free."""
    return [tp for tp in TP_DEGREES
            if model.heads % tp == 0 and weights / tp <= (1 - kv_reserve) * gpu_bytes]


def _raise_does_not_fit(inputs: PlanInputs, weights: float) -> None:
    top = max(tp for tp in TP_DEGREES if inputs.model.heads % tp == 0)
    need = weights / top / (1 - inputs.kv_reserve) / GIB
    raise PlanError("model", (
        f"{inputs.model.name} does not fit even at TP {top}: its {inputs.precision} weights take "
        f"{weights / GIB:.1f} GiB (× {inputs.overhead:g} overhead), {weights / top / GIB:.1f} GiB per GPU, more "
        f"than {1 - inputs.kv_reserve:.0%} of {inputs.gpu_mem_gib:g} GiB; use a smaller precision or GPUs "
        f"with at least {math.ceil(need)} GiB"))


def _usd_per_1m(usd_per_hour: float, tokens_per_s: float) -> float:
    return usd_per_hour / (tokens_per_s * 3600) * 1e6


def format_bytes(n: float) -> str:
    """``327680`` → ``320 KiB``: binary units, as memory is sold and allocated."""
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n:g} B"


def _recommend(inputs: PlanInputs, replicas: int, tp: int, gpus: int, fleet_hour: float, at_mean: float,
               mean_qps: float) -> tuple[Verdict, str]:
    plural = "s" if replicas > 1 else ""
    fleet = f"{replicas} replica{plural} × TP {tp} ({gpus} GPU{'s' if gpus > 1 else ''}, ${fleet_hour:,.2f}/h)"
    load = (f"{inputs.qps:g} QPS × {inputs.tokens:g} tokens" if mean_qps == inputs.qps
            else f"a mean of {mean_qps:g} QPS (peak {inputs.qps:g}) × {inputs.tokens:g} tokens")
    api = inputs.api_usd_per_1m
    if api is None:
        return "unknown", (f"No recommendation: the API price of this traffic is unknown; self-hosting it on "
                           f"{fleet} costs ${at_mean:.2f}/1M output tokens at {load}.")
    if at_mean < api:
        return "self-host", (f"Self-host: {fleet} serve{'' if plural else 's'} {load} for "
                             f"${at_mean:.2f}/1M output tokens vs ${api:.2f}/1M on the API "
                             f"({1 - at_mean / api:.0%} less).")
    return "api", (f"Stay on the API: at {load}, {fleet} would cost ${at_mean:.2f}/1M output tokens vs "
                   f"${api:.2f}/1M on the API ({at_mean / api:.1f}× as much).")
