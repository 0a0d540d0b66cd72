"""The demo traffic's mix and its seeded random source: :class:`TrafficModel` produces :class:`LlmCall` values
(and the other spans of their traces) that :func:`examples.traffic_otlp.build_request` encodes.

The mix: seven models from four providers (one self-hosted), six features with their own prompt template,
token distribution and streaming share, a few hundred users hashed like the SDK hashes them (hex HMAC-SHA256
with a per-deployment key; here a fixed demo key), an A/B experiment on a share of users, cache reads, reasoning
tokens, lognormal TTFT with rare spikes, per-model decode speed, ~2% errors, refusals, empty and truncated
responses, tool calls with occasional failures, a stream that never reported usage now and then."""

from __future__ import annotations

import bisect
import hashlib
import hmac
import math
import random
from dataclasses import dataclass, field
from typing import Sequence

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from inferwatch import semconv as sc

from .traffic_content import build_content_pool

DEMO_USER_HASH_KEY = b"inferwatch-demo-user-hash-key"

_KIND_SERVER = Span.SpanKind.SPAN_KIND_SERVER
_KIND_CLIENT = Span.SpanKind.SPAN_KIND_CLIENT
_KIND_INTERNAL = Span.SpanKind.SPAN_KIND_INTERNAL
_MS = 1_000_000  # ns per ms


def hash_user(user_id: str, key: bytes = DEMO_USER_HASH_KEY) -> str:
    """The SDK's user pseudonym: hex HMAC-SHA256 of the user id under a per-deployment key."""
    return hmac.new(key, user_id.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class ModelSpec:
    """One model as the traffic uses it: identity, share of calls, speed."""

    name: str  # gen_ai.request.model
    provider: str  # gen_ai.provider.name
    response_model: str  # gen_ai.response.model (the dated snapshot the provider answers with)
    weight: float  # relative share of chat-like calls
    ttft_ms: float  # median time to first token (before any reasoning)
    tps: float  # median decode speed, output tokens/s
    operation: str = "chat"
    reasoning: bool = False  # emits reasoning tokens (counted in output tokens), before the first visible chunk
    reasoning_share: float = 1.0  # share of calls that reason (a thinking budget is set per call)
    caching: bool = True  # provider reports cache reads
    cache_writes: bool = False  # provider reports cache creation (Anthropic)


@dataclass(frozen=True)
class FeatureSpec:
    """One product feature (route) of the demo app."""

    name: str  # inferwatch.feature
    route: str  # the app span is "handle {route}"
    weight: float
    input_median: int  # lognormal medians; input is clamped to 200..4000, output to 50..800
    output_median: int
    template: str  # inferwatch.prompt.template
    versions: tuple[str, ...]  # prompt versions, oldest first; the newest gets most traffic
    stream_share: float
    retrieval_share: float = 0.0  # share of traces with a retrieval span before the call
    tool_share: float = 0.0  # share of calls that make tool calls
    calls_per_trace: tuple[int, int] = (1, 1)  # LLM calls in one trace (an agent loops)
    embeddings_share: float = 0.0  # share of traces that embed the query first
    in_experiment: bool = False


DEFAULT_MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("gpt-4o-mini", "openai", "gpt-4o-mini-2024-07-18", 0.28, 380, 110),
    ModelSpec("gpt-4o", "openai", "gpt-4o-2024-08-06", 0.14, 620, 75),
    ModelSpec("o4-mini", "openai", "o4-mini-2025-04-16", 0.05, 450, 150, reasoning=True),
    ModelSpec("claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5-20250929", 0.16, 950, 62, cache_writes=True),
    ModelSpec("claude-haiku-4-5", "anthropic", "claude-haiku-4-5-20251001", 0.12, 480, 125, cache_writes=True),
    ModelSpec("gemini-2.5-flash", "gcp.gemini", "gemini-2.5-flash", 0.15, 480, 160, operation="generate_content",
              reasoning=True, reasoning_share=0.3),
    ModelSpec("llama-3.1-70b", "vllm", "meta-llama/Llama-3.1-70B-Instruct", 0.10, 300, 34, caching=False),
)

EMBEDDING_MODEL = ModelSpec("text-embedding-3-small", "openai", "text-embedding-3-small", 0.0, 0, 0,
                            operation="embeddings", caching=False)

DEFAULT_FEATURES: tuple[FeatureSpec, ...] = (
    FeatureSpec("search", "/search", 0.30, 1800, 260, "search-answer", ("v3", "v4"), 0.7, retrieval_share=0.9,
                embeddings_share=0.15, in_experiment=True),
    FeatureSpec("chat", "/chat", 0.28, 900, 320, "assistant-chat", ("v6", "v7"), 0.95, in_experiment=True),
    FeatureSpec("summarize", "/summarize", 0.14, 3000, 220, "doc-summary", ("v2",), 0.3),
    FeatureSpec("extract", "/extract", 0.12, 1300, 150, "invoice-extract", ("v4", "v5"), 0.0, tool_share=0.4),
    FeatureSpec("classify", "/classify", 0.08, 350, 60, "ticket-triage", ("v1",), 0.0),
    FeatureSpec("agent", "/agent", 0.08, 2500, 380, "support-agent", ("v11", "v12"), 0.5, retrieval_share=0.5,
                tool_share=0.6, calls_per_trace=(1, 4)),
)

ERROR_TYPES: tuple[tuple[str, float, tuple[float, float]], ...] = (
    # error.type, share of errors, latency range (ms)
    ("RateLimitError", 0.45, (40, 400)),
    ("APITimeoutError", 0.18, (20_000, 30_000)),
    ("InternalServerError", 0.15, (300, 3_000)),
    ("APIConnectionError", 0.10, (5, 150)),
    ("OverloadedError", 0.07, (200, 1_500)),
    ("BadRequestError", 0.05, (30, 200)),
)

_FINISH = {
    # provider -> (normal, truncated, tool calls)
    "openai": ("stop", "length", "tool_calls"),
    "anthropic": ("end_turn", "max_tokens", "tool_use"),
    "gcp.gemini": ("STOP", "MAX_TOKENS", "STOP"),
    "vllm": ("stop", "length", "tool_calls"),
}
_TOOLS = ("lookup_order", "search_kb", "get_weather", "create_ticket", "refund_payment")
_TOOL_FAILURES = ("ToolArgumentsError", "UnknownToolError", "ToolError")


@dataclass(slots=True)
class LlmCall:
    """One generated LLM call: the values its span carries (times in ns since the epoch, relative until placed)."""

    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    start_ns: int
    end_ns: int
    first_token_ns: int  # 0 when not streamed (TTFT unknown)
    model: ModelSpec
    feature: FeatureSpec
    operation: str
    prompt_version: str
    user_hash: str
    experiment: str
    variant: str
    input_tokens: int
    output_tokens: int  # includes reasoning
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    ttft_ms: float
    decode_tps: float
    streamed: bool
    usage_missing: bool
    finish_reason: str
    error_type: str  # '' when the call succeeded
    refusal: bool
    empty_response: bool
    truncated: bool
    tool_calls: int
    tool_call_failures: int
    response_chars: int
    content: int  # index into the content pool, -1 when none

    @property
    def latency_ms(self) -> float:
        return (self.end_ns - self.start_ns) / _MS

    @property
    def is_error(self) -> bool:
        return bool(self.error_type)


@dataclass(slots=True)
class SideSpan:
    """A non-LLM span of a trace (app, retrieval, tool)."""

    span_id: bytes
    parent_span_id: bytes
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attrs: list[KeyValue]
    error: str = ""


@dataclass
class TrafficModel:
    """The traffic mix and its random source; every rate is a probability per LLM call unless said otherwise."""

    seed: int | None = None
    models: tuple[ModelSpec, ...] = DEFAULT_MODELS
    features: tuple[FeatureSpec, ...] = DEFAULT_FEATURES
    n_users: int = 400
    user_hash_key: bytes = DEMO_USER_HASH_KEY
    service_name: str = "demo-app"
    environment: str = "demo"
    error_rate: float = 0.02
    refusal_rate: float = 0.015
    empty_rate: float = 0.005
    truncation_rate: float = 0.02
    usage_missing_rate: float = 0.004  # share of streamed calls whose stream never reported usage
    cache_share: float = 0.35  # share of calls (on caching providers) with cache reads
    cache_write_share: float = 0.08
    tool_failure_rate: float = 0.07  # per tool call
    ttft_sigma: float = 0.35
    ttft_spike_rate: float = 0.01
    ttft_factor: float = 1.0  # multiplies every TTFT (the simulator's regressions and creeps)
    output_factor: float = 1.0  # multiplies the output length before clamping (a length collapse)
    experiment: str = "concise-answers"
    variants: tuple[str, ...] = ("control", "concise")
    experiment_share: float = 0.4  # share of users enrolled (features with in_experiment only)
    pii_share: float = 0.3  # share of content samples that contain PII
    embeddings: bool = True  # search traces sometimes embed the query (an extra LLM call)
    rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self._model_cw = _cumulative([m.weight for m in self.models])
        self._feature_cw = _cumulative([f.weight for f in self.features])
        users = [f"user-{i:04d}" for i in range(self.n_users)]
        self.user_hashes: list[str] = [hash_user(u, self.user_hash_key) for u in users]
        self._user_cw = _cumulative([1.0 / (i + 1) ** 0.8 for i in range(self.n_users)])  # Zipf-like
        self._assignment: list[tuple[str, str]] = []
        for h in self.user_hashes:  # deterministic: the same user always sees the same variant
            bucket = int(h[:8], 16)
            if (bucket % 1000) / 1000 < self.experiment_share:
                self._assignment.append((self.experiment, self.variants[(bucket >> 12) % len(self.variants)]))
            else:
                self._assignment.append(("", ""))
        self._error_cw = _cumulative([e[1] for e in ERROR_TYPES])
        self._content: list[tuple[str, str, str]] | None = None
        self._kv: dict[tuple[str, type, object], KeyValue] = {}

    # --- random helpers ---
    def _pick(self, cw: list[float]) -> int:
        return bisect.bisect_right(cw, self.rng.random() * cw[-1])

    def _lognormal(self, median: float, sigma: float) -> float:
        return median * math.exp(self.rng.gauss(0.0, sigma))

    def _id(self, n: int) -> bytes:
        value = self.rng.getrandbits(8 * n)
        return (value or 1).to_bytes(n, "big")

    # --- one call ---
    def next_call(self, feature: FeatureSpec | None = None, model: ModelSpec | None = None, *,
                  trace_id: bytes = b"", parent_span_id: bytes = b"", user: int | None = None,
                  with_content: bool = False) -> LlmCall:
        """One LLM call starting at t=0 (relative ns); :func:`build_request` places it in time."""
        rng = self.rng
        if feature is None:
            feature = self.features[self._pick(self._feature_cw)]
        if model is None:
            model = self.models[self._pick(self._model_cw)]
        if user is None:
            user = self._pick(self._user_cw)
        experiment, variant = self._assignment[user] if feature.in_experiment else ("", "")
        if variant:
            version = feature.versions[-1] if variant != self.variants[0] else feature.versions[0]
        elif len(feature.versions) > 1 and rng.random() < 0.2:
            version = feature.versions[-2]
        else:
            version = feature.versions[-1]
        finish_normal, finish_length, finish_tools = _FINISH.get(model.provider, _FINISH["openai"])
        operation = model.operation
        streamed = operation != "embeddings" and rng.random() < feature.stream_share

        input_tokens = int(min(4000, max(200, self._lognormal(feature.input_median, 0.55))))
        if operation == "embeddings":
            input_tokens = int(min(400, max(8, self._lognormal(40, 0.6))))
        cache_read = cache_write = 0
        if model.caching and input_tokens >= 1024 and rng.random() < self.cache_share:
            cache_read = int(input_tokens * rng.uniform(0.3, 0.9)) // 128 * 128
        if model.cache_writes and rng.random() < self.cache_write_share:
            cache_write = int((input_tokens - cache_read) * rng.uniform(0.2, 0.6))

        error_type = ""
        refusal = empty = truncated = usage_missing = False
        tool_calls = tool_failures = 0
        reasoning = 0
        finish = finish_normal
        roll = rng.random()
        if roll < self.error_rate:
            error_type = ERROR_TYPES[self._pick(self._error_cw)][0]
        elif operation == "embeddings":
            pass
        elif roll < self.error_rate + self.refusal_rate:
            refusal = True
        elif roll < self.error_rate + self.refusal_rate + self.empty_rate:
            empty = True
        elif roll < self.error_rate + self.refusal_rate + self.empty_rate + self.truncation_rate:
            truncated = True
            finish = finish_length

        # output (includes reasoning), clamped to 50..800
        if operation == "embeddings" or error_type or empty:
            output = 0
        elif refusal:
            output = rng.randint(12, 60)
        elif truncated:
            output = rng.choice((256, 512, 800))
        else:
            median = feature.output_median * (1.4 if model.reasoning else 1.0) * self.output_factor
            if variant and variant != self.variants[0]:
                median *= 0.75  # the concise prompt really is shorter
            output = int(min(800, max(50 * min(1.0, self.output_factor), self._lognormal(median, 0.6))))
        if model.reasoning and output >= 50 and not refusal and rng.random() < model.reasoning_share:
            reasoning = int(output * rng.uniform(0.2, 0.5))
        answered = not (error_type or refusal or empty)
        if answered and feature.tool_share and rng.random() < feature.tool_share:
            tool_calls = rng.choice((1, 1, 1, 2, 2, 3))
            tool_failures = sum(rng.random() < self.tool_failure_rate for _ in range(tool_calls))
            if not truncated:
                finish = finish_tools

        # timing
        tps = model.tps * math.exp(rng.gauss(0.0, 0.15)) if model.tps else 0.0
        ttft_ms = 0.0
        if error_type:
            lo, hi = next(e[2] for e in ERROR_TYPES if e[0] == error_type)
            latency_ms = rng.uniform(lo, hi)
            decode_tps = 0.0
        elif operation == "embeddings":
            latency_ms = self._lognormal(90, 0.4)
            decode_tps = 0.0
        else:
            ttft_ms = self._lognormal(model.ttft_ms, self.ttft_sigma) * self.ttft_factor
            if rng.random() < self.ttft_spike_rate:
                ttft_ms *= rng.uniform(3.0, 8.0)
            ttft_ms += reasoning / tps * 1000.0  # reasoning happens before the first visible chunk
            decode_ms = max(0, output - reasoning - 1) / tps * 1000.0
            latency_ms = ttft_ms + decode_ms
            decode_tps = tps if output - reasoning > 1 else 0.0
        end_ns = int(latency_ms * _MS)
        first_token_ns = int(ttft_ms * _MS) if streamed and ttft_ms else 0
        if streamed and not error_type and rng.random() < self.usage_missing_rate:
            usage_missing = True
        visible = output - reasoning
        response_chars = int(visible * rng.uniform(3.2, 4.4)) if visible > 0 else 0
        content = -1
        if with_content and operation != "embeddings":
            content = rng.randrange(len(self.content_pool()))
        return LlmCall(
            trace_id=trace_id or self._id(16), span_id=self._id(8), parent_span_id=parent_span_id,
            start_ns=0, end_ns=max(end_ns, _MS), first_token_ns=first_token_ns, model=model, feature=feature,
            operation=operation, prompt_version=version, user_hash=self.user_hashes[user], experiment=experiment,
            variant=variant, input_tokens=input_tokens, output_tokens=output, cache_read_tokens=cache_read,
            cache_write_tokens=cache_write, reasoning_tokens=reasoning, ttft_ms=ttft_ms if streamed else 0.0,
            decode_tps=decode_tps if streamed else 0.0, streamed=streamed, usage_missing=usage_missing,
            finish_reason="" if error_type else finish, error_type=error_type, refusal=refusal,
            empty_response=empty, truncated=truncated, tool_calls=tool_calls, tool_call_failures=tool_failures,
            response_chars=response_chars, content=content,
        )

    # --- one trace ---
    def next_trace(self, max_llm_calls: int, *, with_content: bool, app_spans: bool
                   ) -> tuple[list[LlmCall], list[SideSpan]]:
        """One request of the demo app: LLM calls (at most ``max_llm_calls``) and its other spans.

        Times are relative to the trace start. Without ``app_spans`` only the LLM calls are produced (roots of
        their own traces), which is what the ingest bench wants: every span is an LLM call.
        """
        rng = self.rng
        feature = self.features[self._pick(self._feature_cw)]
        user = self._pick(self._user_cw)
        trace_id = self._id(16)
        root_id = self._id(8) if app_spans else b""
        calls: list[LlmCall] = []
        sides: list[SideSpan] = []
        t = int(rng.uniform(1, 6) * _MS)  # app work before the first call
        if self.embeddings and feature.embeddings_share and rng.random() < feature.embeddings_share:
            call = self.next_call(feature, EMBEDDING_MODEL, trace_id=trace_id, parent_span_id=root_id, user=user)
            shift_call(call, t)
            calls.append(call)
            t = call.end_ns + int(rng.uniform(0.2, 1) * _MS)
        if app_spans and feature.retrieval_share and rng.random() < feature.retrieval_share:
            dur = int(self._lognormal(45, 0.5) * _MS)
            sides.append(SideSpan(self._id(8), root_id, "retrieval docs-index", _KIND_CLIENT, t, t + dur, [
                self.kv(sc.GEN_AI_OPERATION_NAME, "retrieval"),
                self.kv("gen_ai.data_source.id", "docs-index"),
                self.kv("db.system.name", "qdrant"),
            ]))
            t += dur + int(rng.uniform(0.2, 2) * _MS)
        for _ in range(rng.randint(*feature.calls_per_trace)):
            if len(calls) >= max_llm_calls:
                break
            call = self.next_call(feature, trace_id=trace_id, parent_span_id=root_id, user=user,
                                  with_content=with_content)
            shift_call(call, t)
            calls.append(call)
            t = call.end_ns + int(rng.uniform(0.1, 1.5) * _MS)
            if call.is_error:
                break
            if app_spans:
                for i in range(call.tool_calls):
                    failed = i < call.tool_call_failures
                    tool = _TOOLS[self.rng.randrange(len(_TOOLS))]
                    dur = int(self._lognormal(30, 0.8) * _MS)
                    sides.append(SideSpan(
                        self._id(8), root_id, f"execute_tool {tool}", _KIND_INTERNAL, t, t + dur, [
                            self.kv(sc.GEN_AI_OPERATION_NAME, "execute_tool"),
                            self.kv("gen_ai.tool.name", tool),
                        ], error=_TOOL_FAILURES[self.rng.randrange(3)] if failed else ""))
                    t += dur
            if not call.tool_calls:
                break  # no tool result to feed back: the loop ends
        calls = calls[:max_llm_calls]
        if app_spans:
            end = t + int(rng.uniform(0.5, 8) * _MS)
            failed = next((c.error_type for c in calls if c.is_error), "")
            sides.insert(0, SideSpan(root_id, b"", f"handle {feature.route}", _KIND_SERVER, 0, end, [
                self.kv("http.request.method", "POST"),
                self.kv("http.route", feature.route),
                self.kv(sc.FEATURE, feature.name),
            ], error=failed))
        return calls, sides

    # --- cached attribute values ---
    def kv(self, key: str, value: object) -> KeyValue:
        """A cached ``KeyValue`` for a repeated (key, value) pair (appending copies it, so sharing is safe)."""
        cache_key = (key, type(value), value)  # True == 1: keep bools and ints apart
        cached = self._kv.get(cache_key)
        if cached is None:
            cached = _make_kv(key, value)
            self._kv[cache_key] = cached
        return cached

    def content_pool(self) -> list[tuple[str, str, str]]:
        if self._content is None:
            self._content = build_content_pool(random.Random(0 if self.seed is None else self.seed + 1),
                                                self.pii_share)
        return self._content


def shift_call(call: LlmCall, offset: int) -> None:
    call.start_ns += offset
    call.end_ns += offset
    if call.first_token_ns:
        call.first_token_ns += offset


def _cumulative(weights: Sequence[float]) -> list[float]:
    out, total = [], 0.0
    for w in weights:
        total += w
        out.append(total)
    return out


def _make_kv(key: str, value: object) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    if isinstance(value, tuple):
        return KeyValue(key=key, value=AnyValue(array_value=ArrayValue(
            values=[AnyValue(string_value=str(v)) for v in value])))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))
