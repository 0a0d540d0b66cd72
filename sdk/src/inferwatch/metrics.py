"""InferenceMetrics: one record per LLM call (architecture §5), and the pure rules that derive its fields.

The same dataclass is filled by every way in (decorator, OpenAI and Anthropic wrappers, the manual API), is
readable by app code (``call.metrics``), and becomes the span's attributes. Tokens follow the OTel convention
whatever the provider reported: ``input_tokens`` includes cache reads and writes, ``output_tokens`` includes
reasoning tokens; ``cache_write_1h_tokens`` is the part of ``cache_write_tokens`` billed at the 1-hour rate.

A call answered from the application's own cache (``cache_hit``, see :meth:`inferwatch.LlmCall.cache_hit`) carries
the usage of the answer that was served: the collector prices it at $0 and records that cost as avoided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import semconv as sc

# Names not (yet) in semconv; semconv's own constant wins once it exists there.
CACHE_HIT_KINDS = frozenset({"exact", "semantic"})
TRUNCATION_REASONS = sc.TRUNCATION_REASONS
REFUSAL_REASONS = sc.REFUSAL_REASONS


@dataclass(slots=True)
class InferenceMetrics:
    """Everything measured about one LLM call. Times are ``time.time_ns()`` values."""

    operation: str = "chat"
    provider: str = ""
    request_model: str = ""
    response_model: str = ""
    response_id: str = ""
    trace_id: str = ""
    span_id: str = ""
    start_time_ns: int = 0
    first_token_time_ns: int | None = None
    end_time_ns: int = 0
    input_tokens: int | None = None  # None = the provider did not report usage
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0  # the part of cache_write_tokens written with a 1-hour TTL (Anthropic)
    reasoning_tokens: int = 0
    finish_reason: str = ""
    status: str = "ok"  # ok | error
    error_type: str = ""
    streamed: bool = False
    refusal: bool = False
    tool_calls: int = 0
    tool_call_failures: int = 0
    response_chars: int = 0
    feature: str = ""
    prompt_template: str = ""
    prompt_version: str = ""
    experiment: str = ""
    variant: str = ""
    user_hash: str = ""
    cache_hit: bool = False  # answered from the app's own cache: no provider call, the usage's cost was avoided
    cache_hit_kind: str = ""  # exact | semantic
    downgraded_from: str = ""  # the model asked for, when the budget guard routed the call to a cheaper one
    attributes: dict[str, Any] = field(default_factory=dict)

    def _snapshot(self) -> tuple[Any, ...]:
        """Every field, in order (``InferenceMetrics(*snapshot)`` is an equal copy; the attributes dict is copied):
        what an LLM call hands to the export thread when it ends, so later changes by the app cannot race it."""
        return (
            self.operation, self.provider, self.request_model, self.response_model, self.response_id,
            self.trace_id, self.span_id, self.start_time_ns, self.first_token_time_ns, self.end_time_ns,
            self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens,
            self.cache_write_1h_tokens, self.reasoning_tokens, self.finish_reason, self.status, self.error_type,
            self.streamed, self.refusal, self.tool_calls, self.tool_call_failures, self.response_chars,
            self.feature, self.prompt_template, self.prompt_version, self.experiment, self.variant,
            self.user_hash, self.cache_hit, self.cache_hit_kind, self.downgraded_from,
            dict(self.attributes) if self.attributes else {},
        )

    # --- derived ---
    @property
    def usage_missing(self) -> bool:
        """A successful call without usage is flagged, never priced as zero silently."""
        return self.status == "ok" and (self.input_tokens is None or self.output_tokens is None)

    @property
    def ttft_ms(self) -> float | None:
        if self.first_token_time_ns is None or not self.streamed:
            return None
        return (self.first_token_time_ns - self.start_time_ns) / 1e6

    @property
    def latency_ms(self) -> float:
        return max(0, self.end_time_ns - self.start_time_ns) / 1e6

    @property
    def decode_tokens_per_s(self) -> float | None:
        """(output − 1) / (end − first token): the decode speed, not output / total time (which hides TTFT)."""
        if self.first_token_time_ns is None or not self.output_tokens or self.output_tokens < 2:
            return None
        seconds = (self.end_time_ns - self.first_token_time_ns) / 1e9
        return (self.output_tokens - 1) / seconds if seconds > 0 else None

    @property
    def truncated(self) -> bool:
        return self.finish_reason in TRUNCATION_REASONS

    @property
    def empty_response(self) -> bool:
        return (self.status == "ok" and self.response_chars == 0 and self.tool_calls == 0
                and self.operation != "embeddings")

    @property
    def is_refusal(self) -> bool:
        return self.refusal or self.finish_reason in REFUSAL_REASONS

    def span_attributes(self) -> dict[str, Any]:
        """The span's attributes: OTel GenAI names where they exist, ``inferwatch.*`` otherwise.

        Runs for every call (in the export thread, on the call's snapshot), so the derived flags are inlined here
        (they are the properties above, written out) and optional values are tested one by one."""
        ok = self.status == "ok"
        finish = self.finish_reason
        inp, out = self.input_tokens, self.output_tokens
        first, streamed = self.first_token_time_ns, self.streamed
        attrs: dict[str, Any] = {
            sc.GEN_AI_OPERATION_NAME: self.operation,
            sc.GEN_AI_PROVIDER_NAME: self.provider,
            sc.STREAMED: streamed,
            sc.USAGE_MISSING: ok and (inp is None or out is None),
            sc.REFUSAL: self.refusal or finish in REFUSAL_REASONS,
            sc.EMPTY_RESPONSE: (ok and self.response_chars == 0 and self.tool_calls == 0
                                and self.operation != "embeddings"),
            sc.TRUNCATED: finish in TRUNCATION_REASONS,
            sc.TOOL_CALLS: self.tool_calls,
            sc.TOOL_CALL_FAILURES: self.tool_call_failures,
            sc.RESPONSE_CHARS: self.response_chars,
        }
        if self.request_model:
            attrs[sc.GEN_AI_REQUEST_MODEL] = self.request_model
        if self.response_model:
            attrs[sc.GEN_AI_RESPONSE_MODEL] = self.response_model
        if self.response_id:
            attrs[sc.GEN_AI_RESPONSE_ID] = self.response_id
        if self.error_type:
            attrs[sc.ERROR_TYPE] = self.error_type
        if self.feature:
            attrs[sc.FEATURE] = self.feature
        if self.prompt_template:
            attrs[sc.PROMPT_TEMPLATE] = self.prompt_template
        if self.prompt_version:
            attrs[sc.PROMPT_VERSION] = self.prompt_version
        if self.experiment:
            attrs[sc.EXPERIMENT] = self.experiment
        if self.variant:
            attrs[sc.VARIANT] = self.variant
        if self.user_hash:
            attrs[sc.USER_HASH] = self.user_hash
        if self.downgraded_from:
            attrs[sc.BUDGET_DOWNGRADED_FROM] = self.downgraded_from
        if finish:
            attrs[sc.GEN_AI_RESPONSE_FINISH_REASONS] = (finish,)
        if streamed:
            attrs[sc.GEN_AI_REQUEST_STREAM] = True
        if inp is not None:
            attrs[sc.GEN_AI_USAGE_INPUT_TOKENS] = inp
            attrs[sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = self.cache_read_tokens
            attrs[sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = self.cache_write_tokens
            if self.cache_write_1h_tokens:
                attrs[sc.CACHE_CREATION_1H_INPUT_TOKENS] = self.cache_write_1h_tokens
        if out is not None:
            attrs[sc.GEN_AI_USAGE_OUTPUT_TOKENS] = out
            attrs[sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] = self.reasoning_tokens
        if first is not None and streamed:
            attrs[sc.FIRST_TOKEN_TIME_UNIX_NANO] = first
            attrs[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = (first - self.start_time_ns) / 1e9
        if self.cache_hit:
            attrs[sc.CACHE_HIT] = True
            if self.cache_hit_kind:
                attrs[sc.CACHE_HIT_KIND] = self.cache_hit_kind
        if first is not None and out and out >= 2:  # decode_tokens_per_s, inlined
            seconds = (self.end_time_ns - first) / 1e9
            if seconds > 0:
                attrs[sc.DECODE_TOKENS_PER_SECOND] = round((out - 1) / seconds, 3)
        if self.attributes:
            for key, value in self.attributes.items():
                attrs.setdefault(key, value)
        return attrs


def normalise_openai_usage(prompt_tokens: int | None, completion_tokens: int | None, cached_tokens: int | None,
                           reasoning_tokens: int | None) -> dict[str, int | None]:
    """OpenAI counts cached tokens inside prompt tokens and reasoning inside completion tokens: already OTel."""
    return {"input_tokens": prompt_tokens, "output_tokens": completion_tokens,
            "cache_read_tokens": cached_tokens or 0, "cache_write_tokens": 0,
            "reasoning_tokens": reasoning_tokens or 0}


def normalise_anthropic_usage(input_tokens: int | None, output_tokens: int | None, cache_read: int | None,
                              cache_creation: int | None, cache_creation_5m: int | None = None,
                              cache_creation_1h: int | None = None) -> dict[str, int | None]:
    """Anthropic reports cache reads and writes on top of ``input_tokens``: add them (OTel: input includes).

    ``cache_creation_5m`` / ``cache_creation_1h`` are the ``usage.cache_creation`` breakdown by TTL; the 1-hour
    part is kept as ``cache_write_1h_tokens`` (a subset of ``cache_write_tokens``, never more than it). When the
    total is missing but the breakdown is there, the total is their sum."""
    one_hour = cache_creation_1h or 0
    if cache_creation is None and (cache_creation_5m or one_hour):
        cache_creation = (cache_creation_5m or 0) + one_hour
    cache_creation = cache_creation or 0
    total_input = None if input_tokens is None else input_tokens + (cache_read or 0) + cache_creation
    return {"input_tokens": total_input, "output_tokens": output_tokens, "cache_read_tokens": cache_read or 0,
            "cache_write_tokens": cache_creation, "cache_write_1h_tokens": min(one_hour, cache_creation),
            "reasoning_tokens": 0}
