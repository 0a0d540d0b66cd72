"""Synthetic LLM traffic: realistic OTLP traces of LLM calls, built straight into protobuf, and a sender.

Used by ``make demo`` (until the SDK drives a real demo app) and by ``bench/ingest.py``. Two layers:

- pure builders: :class:`TrafficModel` (a seeded ``random.Random`` and the traffic mix) produces
  :class:`LlmCall` values and :func:`build_request` turns them into an ``ExportTraceServiceRequest`` with the
  OTel GenAI attributes (current names, from :mod:`inferwatch.semconv`) plus our ``inferwatch.*`` extras, exactly
  as the SDK will emit them: span name ``"{operation} {model}"``, kind CLIENT, under an app span
  (``handle /search``), sometimes after a retrieval span, tool spans after tool calls;
- a small sender: :func:`send` posts one request, :func:`run` posts at a steady rate of LLM calls per second,
  honouring ``503 Retry-After``, and prints progress. ``python -m examples.traffic --key KEY`` runs it.

The mix: seven models from four providers (one self-hosted), six features with their own prompt template,
token distribution and streaming share, a few hundred users hashed like the SDK hashes them (hex HMAC-SHA256
with a per-deployment key; here a fixed demo key), an A/B experiment on a share of users, cache reads, reasoning
tokens, lognormal TTFT with rare spikes, per-model decode speed, ~2% errors, refusals, empty and truncated
responses, tool calls with occasional failures, a stream that never reported usage now and then. With
``with_content`` each call carries ~1 KB of prompt/completion JSON, sometimes with PII (an e-mail, a phone
number, a card number, a secret) that the collector must redact: the spans are deliberately *not* marked as
coming from the inferwatch SDK (instrumentation scope ``inferwatch-demo-traffic``), so the collector treats
them as unredacted.
"""

from __future__ import annotations

import argparse
import bisect
import gzip as gzip_module
import hashlib
import hmac
import json
import math
import os
import random
import sys
import time
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable, Sequence

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from inferwatch import semconv as sc

__all__ = [
    "DEMO_USER_HASH_KEY",
    "DEFAULT_FEATURES",
    "DEFAULT_MODELS",
    "FeatureSpec",
    "LlmCall",
    "ModelSpec",
    "RunStats",
    "SendResult",
    "TrafficModel",
    "backfill",
    "build_request",
    "hash_user",
    "main",
    "run",
    "send",
    "traces_url",
]

DEMO_USER_HASH_KEY = b"inferwatch-demo-user-hash-key"
SCOPE_NAME = "inferwatch-demo-traffic"
SCOPE_VERSION = "0.1.0"

_KIND_SERVER = Span.SpanKind.SPAN_KIND_SERVER
_KIND_CLIENT = Span.SpanKind.SPAN_KIND_CLIENT
_KIND_INTERNAL = Span.SpanKind.SPAN_KIND_INTERNAL
_STATUS_OK = Status.StatusCode.STATUS_CODE_OK
_STATUS_ERROR = Status.StatusCode.STATUS_CODE_ERROR
_MS = 1_000_000  # ns per ms


def hash_user(user_id: str, key: bytes = DEMO_USER_HASH_KEY) -> str:
    """The SDK's user pseudonym: hex HMAC-SHA256 of the user id under a per-deployment key."""
    return hmac.new(key, user_id.encode(), hashlib.sha256).hexdigest()


# --------------------------------------------------------------------------------------------------------------
# The mix
# --------------------------------------------------------------------------------------------------------------


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
class _Side:
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
            median = feature.output_median * (1.4 if model.reasoning else 1.0)
            if variant and variant != self.variants[0]:
                median *= 0.75  # the concise prompt really is shorter
            output = int(min(800, max(50, self._lognormal(median, 0.6))))
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
            ttft_ms = self._lognormal(model.ttft_ms, self.ttft_sigma)
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
            content = rng.randrange(len(self._content_pool()))
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
                   ) -> tuple[list[LlmCall], list[_Side]]:
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
        sides: list[_Side] = []
        t = int(rng.uniform(1, 6) * _MS)  # app work before the first call
        if self.embeddings and feature.embeddings_share and rng.random() < feature.embeddings_share:
            call = self.next_call(feature, EMBEDDING_MODEL, trace_id=trace_id, parent_span_id=root_id, user=user)
            _shift(call, t)
            calls.append(call)
            t = call.end_ns + int(rng.uniform(0.2, 1) * _MS)
        if app_spans and feature.retrieval_share and rng.random() < feature.retrieval_share:
            dur = int(self._lognormal(45, 0.5) * _MS)
            sides.append(_Side(self._id(8), root_id, "retrieval docs-index", _KIND_CLIENT, t, t + dur, [
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
            _shift(call, t)
            calls.append(call)
            t = call.end_ns + int(rng.uniform(0.1, 1.5) * _MS)
            if call.is_error:
                break
            if app_spans:
                for i in range(call.tool_calls):
                    failed = i < call.tool_call_failures
                    tool = _TOOLS[self.rng.randrange(len(_TOOLS))]
                    dur = int(self._lognormal(30, 0.8) * _MS)
                    sides.append(_Side(self._id(8), root_id, f"execute_tool {tool}", _KIND_INTERNAL, t, t + dur, [
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
            sides.insert(0, _Side(root_id, b"", f"handle {feature.route}", _KIND_SERVER, 0, end, [
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

    def _content_pool(self) -> list[tuple[str, str, str]]:
        if self._content is None:
            self._content = _build_content_pool(random.Random(0 if self.seed is None else self.seed + 1),
                                                self.pii_share)
        return self._content


def _shift(call: LlmCall, offset: int) -> None:
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


# --------------------------------------------------------------------------------------------------------------
# Content (prompt/completion text, ~1 KB per call, PII in a share of samples)
# --------------------------------------------------------------------------------------------------------------

_NAMES = ("Dana Whitfield", "Marcus Oyelaran", "Priya Raman", "Tomás Ferreira", "Hannah Kowalski", "Kenji Mori")
_PII = (
    lambda r, n: f"you can email me at {n.split()[0].lower()}.{n.split()[1].lower()}@fastmail.com",
    lambda r, n: f"call me back on +1 (415) 555-{r.randint(100, 199):04d}",
    lambda r, n: f"my phone is 020 7946 {r.randint(0, 999):04d}",
    lambda r, n: "the card on file is 4111 1111 1111 1111, exp 09/28",
    lambda r, n: f"my SSN is 536-{r.randint(10, 89)}-{r.randint(1000, 8999)} if you need it",
    lambda r, n: f"I connected from 203.0.113.{r.randint(2, 250)}",
    lambda r, n: "here is our key sk-proj-" + "".join(r.choice("abcdefghijkmnopqrstuvwxyzABCDEFGH0123456789")
                                                     for _ in range(40)),
)
_ASKS = (
    "Which of our plans includes priority support, and how do I upgrade from the starter tier without losing "
    "the dashboards we already built?",
    "Summarize the attached quarterly report in five bullet points, focusing on churn, expansion revenue and "
    "the hiring plan for the support organisation.",
    "Extract the invoice number, the due date, the total amount and the VAT id from the document below and "
    "answer in JSON.",
    "My last order arrived damaged and the replacement has not shipped yet; what are my options for a refund "
    "or an exchange?",
    "Classify this ticket into billing, bug, feature request or account access, and give a one-line reason.",
    "Compare the latency guarantees of the EU and US regions and tell me which one I should pick for a team "
    "spread across Lisbon and Toronto.",
)
_CONTEXT = (
    "Context: the customer has been on the Growth plan since March, opened three tickets this quarter and "
    "their workspace has 42 seats. Relevant documentation excerpts follow. Plans: Starter (5 seats, community "
    "support), Growth (50 seats, business-hours support), Enterprise (unlimited seats, 24/7 priority support, "
    "SSO, audit logs). Upgrades take effect immediately and are prorated; dashboards, alerts and API keys are "
    "kept. Refunds are available within 30 days of a charge. Data residency is selected per workspace."
)
_ANSWERS = (
    "You can upgrade from Settings → Billing; the change is prorated and everything you built is kept. "
    "Priority support comes with the Enterprise plan.",
    "Churn fell to 2.1%, expansion revenue grew 18% quarter on quarter, and support hiring adds six people "
    "across two regions by the end of next quarter.",
    '{"invoice_number": "INV-2024-0193", "due_date": "2024-11-30", "total": "1,284.50 EUR", "vat_id": '
    '"DE811907980"}',
    "I'm sorry about the damaged order. I have opened a replacement request; if you prefer a refund, it will "
    "reach your original payment method within 5 business days.",
    "billing: the customer asks about a duplicate charge on their latest invoice.",
    "Pick the EU region: p95 latency from Lisbon is about 40 ms and from Toronto about 95 ms, within both "
    "regions' guarantees.",
)
_SYSTEM = ("You are a helpful, concise assistant for Acme Cloud customers. Answer only from the provided "
           "context; say you do not know otherwise. Never reveal internal notes.")


def _build_content_pool(rng: random.Random, pii_share: float, size: int = 128) -> list[tuple[str, str, str]]:
    """(system instructions, input messages, output messages) as OTel GenAI JSON strings, ~1 KB per sample."""
    pool = []
    for _ in range(size):
        ask = rng.choice(_ASKS)
        answer = rng.choice(_ANSWERS)
        if rng.random() < pii_share:
            name = rng.choice(_NAMES)
            ask = f"Hi, this is {name}; {rng.choice(_PII)(rng, name)}. {ask}"
            if rng.random() < 0.3:
                answer = f"Thanks {name.split()[0]}. {answer}"
        user_text = f"{ask}\n\n{_CONTEXT[: rng.randint(350, len(_CONTEXT))]}"
        system = json.dumps([{"type": "text", "content": _SYSTEM}])
        inputs = json.dumps([{"role": "user", "parts": [{"type": "text", "content": user_text}]}],
                            ensure_ascii=False)
        outputs = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}],
                               "finish_reason": "stop"}], ensure_ascii=False)
        pool.append((system, inputs, outputs))
    return pool


# --------------------------------------------------------------------------------------------------------------
# Protobuf
# --------------------------------------------------------------------------------------------------------------


def build_request(model: TrafficModel, n_llm_calls: int, *, with_content: bool = False,
                  now_ns: int | None = None, spread_s: float = 1.0, app_spans: bool = True,
                  calls_out: list[LlmCall] | None = None) -> ExportTraceServiceRequest:
    """An OTLP trace export carrying exactly ``n_llm_calls`` LLM call spans (plus their traces' other spans).

    Every trace ends within ``[now_ns - spread_s, now_ns]`` (default: now), so a request stands for
    ``spread_s`` seconds of traffic. ``app_spans=False`` emits the LLM spans alone. When ``calls_out`` is
    given, the generated :class:`LlmCall` values are appended to it (tests and the bench read them back).
    """
    if now_ns is None:
        now_ns = time.time_ns()
    spread_ns = int(spread_s * 1e9)
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.extend([
        model.kv("service.name", model.service_name),
        model.kv("service.version", "1.8.2"),
        model.kv("deployment.environment.name", model.environment),
    ])
    ss = rs.scope_spans.add()
    ss.scope.name = SCOPE_NAME
    ss.scope.version = SCOPE_VERSION
    spans = ss.spans
    content_pool = model._content_pool() if with_content else None
    rng = model.rng
    remaining = n_llm_calls
    while remaining > 0:
        calls, sides = model.next_trace(remaining, with_content=with_content, app_spans=app_spans)
        trace_end = max([c.end_ns for c in calls] + [s.end_ns for s in sides])
        offset = now_ns - int(rng.random() * spread_ns) - trace_end
        trace_id = calls[0].trace_id
        for side in sides:
            span = spans.add()
            span.trace_id = trace_id
            span.span_id = side.span_id
            if side.parent_span_id:
                span.parent_span_id = side.parent_span_id
            span.name = side.name
            span.kind = side.kind
            span.start_time_unix_nano = side.start_ns + offset
            span.end_time_unix_nano = side.end_ns + offset
            span.attributes.extend(side.attrs)
            if side.error:
                span.attributes.append(model.kv(sc.ERROR_TYPE, side.error))
                span.status.code = _STATUS_ERROR
                span.status.message = side.error
        for call in calls:
            _shift(call, offset)
            _encode_call(model, spans.add(), call, content_pool)
        if calls_out is not None:
            calls_out.extend(calls)
        remaining -= len(calls)
    return request


def _encode_call(model: TrafficModel, span: Span, call: LlmCall,
                 content_pool: list[tuple[str, str, str]] | None) -> None:
    kv = model.kv
    m = call.model
    span.trace_id = call.trace_id
    span.span_id = call.span_id
    if call.parent_span_id:
        span.parent_span_id = call.parent_span_id
    span.name = f"{call.operation} {m.name}"
    span.kind = _KIND_CLIENT
    span.start_time_unix_nano = call.start_ns
    span.end_time_unix_nano = call.end_ns
    attrs = span.attributes
    attrs.extend((
        kv(sc.GEN_AI_OPERATION_NAME, call.operation),
        kv(sc.GEN_AI_PROVIDER_NAME, m.provider),
        kv(sc.GEN_AI_REQUEST_MODEL, m.name),
        kv(sc.FEATURE, call.feature.name),
        kv(sc.PROMPT_TEMPLATE, call.feature.template),
        kv(sc.PROMPT_VERSION, call.prompt_version),
        kv(sc.USER_HASH, call.user_hash),
        kv(sc.STREAMED, call.streamed),
        kv(sc.GEN_AI_REQUEST_STREAM, call.streamed),
    ))
    if call.experiment:
        attrs.extend((kv(sc.EXPERIMENT, call.experiment), kv(sc.VARIANT, call.variant)))
    content = content_pool[call.content] if content_pool is not None and call.content >= 0 else None
    if content is not None:  # the prompt is recorded even when the call fails; the completion only on success
        a = attrs.add()
        a.key = sc.GEN_AI_SYSTEM_INSTRUCTIONS
        a.value.string_value = content[0]
        a = attrs.add()
        a.key = sc.GEN_AI_INPUT_MESSAGES
        a.value.string_value = content[1]
    if call.error_type:
        attrs.append(kv(sc.ERROR_TYPE, call.error_type))
        span.status.code = _STATUS_ERROR
        span.status.message = f"{call.error_type}: the provider call failed"
        return
    span.status.code = _STATUS_OK
    attrs.extend((
        kv(sc.GEN_AI_RESPONSE_MODEL, m.response_model),
        kv(sc.GEN_AI_RESPONSE_FINISH_REASONS, (call.finish_reason,)),
    ))
    a = attrs.add()
    a.key = sc.GEN_AI_RESPONSE_ID
    a.value.string_value = call.span_id.hex()  # unique per call, like a provider's response id
    if call.usage_missing:
        attrs.append(kv(sc.USAGE_MISSING, True))
    else:
        a = attrs.add()
        a.key = sc.GEN_AI_USAGE_INPUT_TOKENS
        a.value.int_value = call.input_tokens
        a = attrs.add()
        a.key = sc.GEN_AI_USAGE_OUTPUT_TOKENS
        a.value.int_value = call.output_tokens
        if call.cache_read_tokens:
            a = attrs.add()
            a.key = sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS
            a.value.int_value = call.cache_read_tokens
        if call.cache_write_tokens:
            a = attrs.add()
            a.key = sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS
            a.value.int_value = call.cache_write_tokens
        if call.reasoning_tokens:
            a = attrs.add()
            a.key = sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS
            a.value.int_value = call.reasoning_tokens
    if call.first_token_ns:
        a = attrs.add()
        a.key = sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK
        a.value.double_value = (call.first_token_ns - call.start_ns) / 1e9
        a = attrs.add()
        a.key = sc.FIRST_TOKEN_TIME_UNIX_NANO
        a.value.int_value = call.first_token_ns
        if call.decode_tps:
            a = attrs.add()
            a.key = sc.DECODE_TOKENS_PER_SECOND
            a.value.double_value = round(call.decode_tps, 2)
    if call.operation != "embeddings":
        a = attrs.add()
        a.key = sc.RESPONSE_CHARS
        a.value.int_value = call.response_chars
    if call.refusal:
        attrs.append(kv(sc.REFUSAL, True))
    if call.empty_response:
        attrs.append(kv(sc.EMPTY_RESPONSE, True))
    if call.truncated:
        attrs.append(kv(sc.TRUNCATED, True))
    if call.tool_calls:
        attrs.append(kv(sc.TOOL_CALLS, call.tool_calls))
        if call.tool_call_failures:
            attrs.append(kv(sc.TOOL_CALL_FAILURES, call.tool_call_failures))
    if content is not None:
        a = attrs.add()
        a.key = sc.GEN_AI_OUTPUT_MESSAGES
        a.value.string_value = content[2]


# --------------------------------------------------------------------------------------------------------------
# Sending
# --------------------------------------------------------------------------------------------------------------


def traces_url(url: str) -> str:
    """``http://host:4318`` -> ``http://host:4318/v1/traces`` (a full ``.../v1/traces`` URL is kept)."""
    url = url.rstrip("/")
    return url if url.endswith("/v1/traces") else url + "/v1/traces"


@dataclass
class SendResult:
    """Outcome of one POST."""

    status: int  # HTTP status, 0 when the connection failed
    retry_after_s: float = 0.0
    error: str = ""


def _retry_after(value: str | None, default: float = 1.0) -> float:
    if not value:
        return default
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return default


def send(client, url: str, key: str, body: bytes, *, gzip: bool = False, timeout: float = 60.0) -> SendResult:
    """POST one encoded ``ExportTraceServiceRequest`` (``client`` is an ``httpx.Client``)."""
    headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"}
    if gzip:
        body = gzip_module.compress(body, 1)
        headers["Content-Encoding"] = "gzip"
    try:
        response = client.post(url, content=body, headers=headers, timeout=timeout)
    except Exception as exc:  # connection refused/reset, timeout: the caller counts and retries
        return SendResult(0, 1.0, f"{type(exc).__name__}: {exc}")
    if response.status_code in (429, 503):
        return SendResult(response.status_code, _retry_after(response.headers.get("retry-after")))
    if response.status_code >= 400:
        return SendResult(response.status_code, 0.0, response.text[:200])
    return SendResult(response.status_code)


@dataclass
class RunStats:
    """Counters of :func:`run` (and :func:`backfill`)."""

    calls_generated: int = 0
    calls_acked: int = 0
    requests: int = 0
    acks: int = 0
    rejected_503: int = 0
    failures: int = 0  # connection errors and 4xx/5xx other than 429/503
    dropped_calls: int = 0  # given up after a backlog built up or a 4xx
    last_error: str = ""
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        elapsed = max(1e-9, time.monotonic() - self.started)
        text = (f"[traffic] {elapsed:7.1f}s  calls sent={self.calls_generated} acked={self.calls_acked} "
                f"({self.calls_acked / elapsed:.1f}/s)  requests={self.requests} 503s={self.rejected_503} "
                f"failures={self.failures} dropped={self.dropped_calls}")
        if self.last_error:
            text += f"  last error: {self.last_error}"
        return text


def _post_until_acked(client, url: str, key: str, body: bytes, n_calls: int, stats: RunStats, *,
                      gzip: bool, give_up_at: float, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Post one request, retrying 429/503 (after Retry-After) and connection errors until ``give_up_at``."""
    while True:
        stats.requests += 1
        result = send(client, url, key, body, gzip=gzip)
        if 200 <= result.status < 300:
            stats.acks += 1
            stats.calls_acked += n_calls
            return True
        if result.status in (429, 503):
            stats.rejected_503 += 1
        else:
            stats.failures += 1
            stats.last_error = f"HTTP {result.status} {result.error}".strip()
            if 400 <= result.status < 500:
                stats.dropped_calls += n_calls  # not retryable: bad key, bad payload
                return False
        wait = result.retry_after_s or 1.0
        if time.monotonic() + wait > give_up_at:
            stats.dropped_calls += n_calls
            return False
        sleep(wait)


class _Poster:
    """Posts request bodies from a few threads, so generation never waits for an ack.

    The collector acknowledges a request only after its group commit (up to its flush interval, ~1 s), so one
    request at a time would throttle the sender. At most ``2 * parallel`` posts are pending; :meth:`submit`
    blocks beyond that (backpressure). Counters are merged into ``stats`` on the caller's thread.
    """

    def __init__(self, url: str, key: str, stats: RunStats, *, parallel: int, gzip: bool, give_up_s: float):
        import httpx

        self.url, self.key, self.stats = url, key, stats
        self.parallel, self.gzip, self.give_up_s = parallel, gzip, give_up_s
        self.client = httpx.Client(limits=httpx.Limits(max_connections=parallel))
        self.pool = ThreadPoolExecutor(parallel, thread_name_prefix="traffic-post")
        self.pending: set[Future] = set()

    def submit(self, body: bytes, n_calls: int) -> None:
        self.stats.calls_generated += n_calls
        while len(self.pending) >= 2 * self.parallel:
            self._reap(FIRST_COMPLETED)
        self.pending.add(self.pool.submit(self._post, body, n_calls))

    def poll(self) -> None:
        """Merge the counters of finished posts."""
        if self.pending:
            self._reap(None, timeout=0)

    def close(self, wait_for_pending: bool = True) -> None:
        if wait_for_pending and self.pending:
            self._reap(ALL_COMPLETED)
        self.pool.shutdown(wait=wait_for_pending, cancel_futures=True)
        self.client.close()

    def _post(self, body: bytes, n_calls: int) -> RunStats:
        local = RunStats()
        _post_until_acked(self.client, self.url, self.key, body, n_calls, local, gzip=self.gzip,
                          give_up_at=time.monotonic() + self.give_up_s)
        return local

    def _reap(self, return_when: str | None, timeout: float | None = None) -> None:
        done, self.pending = wait(self.pending, timeout=timeout, return_when=return_when or FIRST_COMPLETED)
        for future in done:
            if future.cancelled():
                continue
            local = future.result()
            st = self.stats
            st.calls_acked += local.calls_acked
            st.requests += local.requests
            st.acks += local.acks
            st.rejected_503 += local.rejected_503
            st.failures += local.failures
            st.dropped_calls += local.dropped_calls
            st.last_error = local.last_error or st.last_error


def run(url: str, key: str, rate_per_s: float = 20.0, duration_s: float | None = None, with_content: bool = False,
        batch_size: int | None = None, progress: bool = True, *, model: TrafficModel | None = None,
        gzip: bool = False, progress_every_s: float = 5.0, max_backlog_s: float = 30.0, parallel: int = 4
        ) -> RunStats:
    """Post about ``rate_per_s`` LLM calls per second (in batches) until ``duration_s`` or Ctrl-C.

    A batch is sent about once a second (``batch_size`` defaults to one second of calls, at most 512, like an
    SDK's batch span processor); after a stall the next batch catches up (up to 512 calls). 503/429 are retried
    after their Retry-After; calls not acknowledged within ``max_backlog_s`` are dropped (and counted) rather
    than piling up while the collector is unavailable.
    """
    if rate_per_s <= 0:
        raise ValueError("rate_per_s must be positive")
    model = model or TrafficModel()
    batch = batch_size or max(1, min(512, math.ceil(rate_per_s)))
    stats = RunStats()
    poster = _Poster(traces_url(url), key, stats, parallel=parallel, gzip=gzip, give_up_s=max_backlog_s)
    start = time.monotonic()
    next_progress = start + progress_every_s
    interrupted = False
    try:
        while duration_s is None or time.monotonic() - start < duration_s:
            now = time.monotonic()
            due = int((now - start) * rate_per_s) - stats.calls_generated
            if due > rate_per_s * max_backlog_s:  # we fell far behind (a long stall): skip ahead
                skipped = due - int(rate_per_s * max_backlog_s)
                stats.calls_generated += skipped
                stats.dropped_calls += skipped
                due -= skipped
            if due >= batch:
                n = min(due, max(batch, 512))
                body = build_request(model, n, with_content=with_content, spread_s=n / rate_per_s)
                poster.submit(body.SerializeToString(), n)
            else:
                time.sleep(min(max((batch - due) / rate_per_s, 0.01), 1.0))
            poster.poll()
            if progress and time.monotonic() >= next_progress:
                print(stats.line(), file=sys.stderr, flush=True)
                next_progress += progress_every_s
    except KeyboardInterrupt:
        interrupted = True
    finally:
        poster.close(wait_for_pending=not interrupted)
    if progress:
        print(stats.line(), file=sys.stderr, flush=True)
    return stats


def backfill(url: str, key: str, hours: float, rate_per_s: float = 0.5, *, model: TrafficModel | None = None,
             with_content: bool = False, batch_size: int = 512, progress: bool = True, gzip: bool = False,
             parallel: int = 8) -> RunStats:
    """Send ``hours`` of history ending now, at a daily-cycle rate averaging ``rate_per_s`` calls/s.

    Dashboards and drift baselines need past data; this posts it as fast as the collector takes it.
    """
    model = model or TrafficModel()
    stats = RunStats()
    poster = _Poster(traces_url(url), key, stats, parallel=parallel, gzip=gzip, give_up_s=120.0)
    end_ns = time.time_ns()
    t_ns = end_ns - int(hours * 3600e9)
    last_print = time.monotonic()
    try:
        while t_ns < end_ns:
            hour = (t_ns // 3_600_000_000_000) % 24
            rate = max(0.01, rate_per_s * (1.0 + 0.6 * math.sin((hour - 9) / 24 * 2 * math.pi)))  # daily cycle
            window_end = min(end_ns, t_ns + int(batch_size / rate * 1e9))
            n = max(1, int((window_end - t_ns) / 1e9 * rate))
            body = build_request(model, n, with_content=with_content, now_ns=window_end,
                                 spread_s=(window_end - t_ns) / 1e9)
            poster.submit(body.SerializeToString(), n)
            t_ns = window_end
            poster.poll()
            if progress and time.monotonic() - last_print > 5:
                print(stats.line(), file=sys.stderr, flush=True)
                last_print = time.monotonic()
    finally:
        poster.close()
    if progress:
        print(stats.line() + "  (backfill done)", file=sys.stderr, flush=True)
    return stats


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.traffic",
        description="Send synthetic LLM-call traces (OTLP/HTTP protobuf) to an inferwatch collector.",
    )
    parser.add_argument("--url", default=os.environ.get("INFERWATCH_URL", "http://127.0.0.1:4318"),
                        help="collector base URL (default: $INFERWATCH_URL or http://127.0.0.1:4318)")
    parser.add_argument("--key", default=os.environ.get("INFERWATCH_API_KEY"),
                        help="ingest API key (default: $INFERWATCH_API_KEY)")
    parser.add_argument("--rate", type=float, default=20.0, help="LLM calls per second (default 20)")
    parser.add_argument("--duration", type=float, default=None, help="seconds to run (default: until Ctrl-C)")
    parser.add_argument("--batch-size", type=int, default=None, help="calls per request (default: 1 s worth)")
    parser.add_argument("--content", action="store_true",
                        help="attach ~1 KB of prompt/completion text per call (sometimes with PII)")
    parser.add_argument("--backfill-hours", type=float, default=0.0,
                        help="first send this many hours of history (at --backfill-rate calls/s)")
    parser.add_argument("--backfill-rate", type=float, default=0.5, help="average calls/s of the history")
    parser.add_argument("--error-rate", type=float, default=0.02, help="share of calls that fail (default 0.02)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    parser.add_argument("--gzip", action="store_true", help="gzip request bodies")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    if not args.key:
        parser.error("an ingest key is needed: --key iwk_... or INFERWATCH_API_KEY "
                     "(create one with `inferwatch-server keys create --project demo --scope ingest`)")
    model = TrafficModel(seed=args.seed, error_rate=args.error_rate)
    if args.backfill_hours > 0:
        backfill(args.url, args.key, args.backfill_hours, args.backfill_rate, model=model,
                 with_content=args.content, progress=not args.quiet, gzip=args.gzip)
    if args.rate > 0 and (args.duration is None or args.duration > 0):
        stats = run(args.url, args.key, args.rate, args.duration, args.content, args.batch_size,
                    not args.quiet, model=model, gzip=args.gzip)
        if stats.acks == 0 and stats.requests > 0:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
