"""normalize(): every convention to the expected row, usage and TTFT rules, content, validation, attributes."""

from __future__ import annotations

import inspect
import json
import math
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from inferwatch_collector import conventions
from inferwatch_collector.normalize import (
    DROPPED_ATTRIBUTES_KEY,
    MAX_ATTRIBUTE_CHARS,
    MAX_ATTRIBUTES,
    MAX_CONTENT_CHARS,
    MAX_TOKENS_PER_CALL,
    NormalizedBatch,
    normalize,
)
from inferwatch_collector.normalize import attributes as attribute_scan
from inferwatch_collector.normalize import span as span_module
from inferwatch_collector.normalize.scrubber import scrubber_for
from inferwatch import semconv as sc
from inferwatch_collector.otlp_decode import MalformedPayload, decode_traces, decode_traces_fast, to_fast
from inferwatch_collector.redaction import POLICY, RedactionResult
from inferwatch_collector.rows import LlmCallRow, PromptLogRow, SpanRow

from tests.helpers import payloads as P

TRACE_ID = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
SPAN_ID = bytes.fromhex("b7ad6b7169203331")
PARENT_ID = bytes.fromhex("00f067aa0ba902b7")

BASE_ATTRIBUTES = {  # resource attributes (minus service.name) and the scope, on every row
    "service.version": "1.4.2",
    "deployment.environment.name": "production",
    "telemetry.sdk.language": "python",
    "telemetry.sdk.name": "opentelemetry",
    "telemetry.sdk.version": "1.45.2",
    "otel.scope.name": "opentelemetry.instrumentation.openai_v2",
    "otel.scope.version": "2.3b0",
}


def run(*spans: Any, **kwargs: Any) -> NormalizedBatch:
    """normalize() on the fast input ingest uses. The standard message must give the identical batch (checked
    unless a custom redactor is passed: those count their calls)."""
    request = P.make_request(*spans)
    batch = normalize(to_fast(request), "p1", **kwargs)
    if "redactor" not in kwargs:
        assert normalize(request, "p1", **kwargs) == batch
    return batch


def one_call(span: Any, **kwargs: Any) -> LlmCallRow:
    batch = run(span, **kwargs)
    assert batch.rejected == 0, batch.errors
    assert batch.spans == []
    (row,) = batch.llm_calls
    return row


def fixed_ids(span: Any, parent: bytes = b"") -> Any:
    span.trace_id, span.span_id, span.parent_span_id = TRACE_ID, SPAN_ID, parent
    return span


def expected_call(span: Any, **fields: Any) -> LlmCallRow:
    """An LlmCallRow with the span's ids/times, empty defaults, and ``fields``."""
    defaults: dict[str, Any] = dict(
        project_id="p1", start_time=span.start_time_unix_nano // 1000, end_time=span.end_time_unix_nano // 1000,
        trace_id=span.trace_id.hex(), span_id=span.span_id.hex(), parent_span_id=span.parent_span_id.hex(),
        response_id="", service_name="support-bot", span_name=span.name, model="", request_model="",
        response_model="", provider="", operation="chat", input_tokens=0, output_tokens=0, cache_read_tokens=0,
        cache_write_tokens=0, reasoning_tokens=0, ttft_ms=0,
        latency_ms=round((span.end_time_unix_nano - span.start_time_unix_nano) / 1e6), decode_tps=0.0,
        finish_reason="", status="ok", error_type="", streamed=False, usage_missing=False, refusal=False,
        empty_response=False, truncated=False, tool_calls=0, tool_call_failures=0, response_chars=0, feature="",
        prompt_template="", prompt_version="", experiment="", variant="", user_hash="", cost_usd=0.0,
        price_version="", attributes=dict(BASE_ATTRIBUTES),
    )  # fmt: skip
    extra_attributes = fields.pop("extra_attributes", {})
    defaults.update(fields)
    defaults["attributes"] = {**defaults["attributes"], **extra_attributes}
    return LlmCallRow(**defaults)


# --- each convention → the expected row --------------------------------------------------------------------------
def test_otel_genai_current_names() -> None:
    span = fixed_ids(P.otel_genai_span(), parent=PARENT_ID)
    assert one_call(span) == expected_call(
        span,
        parent_span_id=PARENT_ID.hex(),
        response_id=P.OPENAI_CHAT_ID,
        model="gpt-4o-mini",
        request_model="gpt-4o-mini",
        response_model="gpt-4o-mini-2024-07-18",
        provider="openai",
        input_tokens=1200,
        output_tokens=151,
        cache_read_tokens=1024,
        ttft_ms=250,
        decode_tps=120.0,  # (151 - 1) tokens / (1.5 s - 0.25 s)
        finish_reason="stop",
        streamed=True,
        extra_attributes={
            "gen_ai.request.temperature": "0.2",
            "gen_ai.request.max_tokens": "512",
            "server.address": "api.openai.com",
            "server.port": "443",
        },
    )


def test_deprecated_and_current_genai_names_give_identical_rows() -> None:
    current = one_call(fixed_ids(P.otel_genai_span()))
    deprecated = one_call(fixed_ids(P.otel_genai_deprecated_span()))
    assert deprecated == current
    # deprecated provider spellings map to the current provider names too
    for old, new in (("az.ai.inference", "azure.ai.inference"), ("xai", "x_ai"), ("vertex_ai", "gcp.vertex_ai")):
        assert one_call(P.otel_genai_deprecated_span(**{"gen_ai.system": old})).provider == new


def test_inferwatch_sdk_span() -> None:
    span = fixed_ids(P.sdk_span())
    assert one_call(span) == expected_call(
        span,
        response_id="msg_01XFDUDYJgAACzvnptvVoYEL",
        model="claude-sonnet-4-5",
        request_model="claude-sonnet-4-5",
        response_model="claude-sonnet-4-5-20250929",
        provider="anthropic",
        input_tokens=5300,  # includes the 4000 + 1000 cache tokens (OTel convention, as the SDK reports)
        output_tokens=401,
        cache_read_tokens=4000,
        cache_write_tokens=1000,
        reasoning_tokens=120,
        ttft_ms=600,
        decode_tps=285.7,  # the SDK's own figure wins over the derived one
        finish_reason="end_turn",
        streamed=True,
        tool_calls=2,
        tool_call_failures=1,
        response_chars=1604,
        feature="search",
        prompt_template="answer",
        prompt_version="3",
        experiment="prompt-v3",
        variant="B",
        user_hash=P.SDK_USER_HASH,
        extra_attributes={"gen_ai.request.max_tokens": "1024"},
    )


def test_openinference_llm_span() -> None:
    span = fixed_ids(P.openinference_span())
    row = one_call(span)
    assert row == expected_call(
        span,
        model="gpt-4o",  # request model from llm.invocation_parameters
        request_model="gpt-4o",
        response_model="gpt-4o-2024-08-06",
        provider="openai",
        input_tokens=2000,
        output_tokens=300,
        cache_read_tokens=1500,
        reasoning_tokens=64,
        ttft_ms=400,  # "First Token Stream Event" at +400 ms
        decode_tps=115.0,  # 299 / 2.6 s
        streamed=True,
        extra_attributes={
            "llm.invocation_parameters": span.attributes[4].value.string_value,
            "input.mime_type": "application/json",
            "output.mime_type": "text/plain",
            "session.id": "sess-42",
        },
    )


def test_traceloop_openai_span() -> None:
    span = fixed_ids(P.traceloop_openai_span())
    batch = run(span)
    (row,) = batch.llm_calls
    assert row == expected_call(
        span,
        response_id="chatcmpl-AtraceloopXYZ",
        model="gpt-4o",
        request_model="gpt-4o",
        response_model="gpt-4o-2024-08-06",
        provider="openai",  # "OpenAI" lower-cased
        input_tokens=1300,  # OpenAI-style: the 1024 cached tokens are already inside prompt_tokens
        output_tokens=30,
        cache_read_tokens=1024,
        finish_reason="length",  # from gen_ai.completion.0.finish_reason
        truncated=True,
        extra_attributes={
            "gen_ai.request.max_tokens": "30",
            "traceloop.workflow.name": "support_bot",
            "traceloop.entity.path": "answer_question",
            "traceloop.association.properties.tenant": "acme",
        },  # llm.headers (with a bearer key) and every gen_ai.prompt/completion.* key are gone
    )
    (log,) = batch.prompt_logs
    assert json.loads(log.prompt) == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Call me on <PHONE_NUMBER> about order 42"},
    ]
    assert json.loads(log.completion) == [
        {"role": "assistant", "content": "Sure, I will call <PHONE_NUMBER> about", "finish_reason": "length"}
    ]


def test_traceloop_anthropic_span_puts_cache_on_top_of_input() -> None:
    span = fixed_ids(P.traceloop_anthropic_span())
    assert one_call(span) == expected_call(
        span,
        response_id="msg_01Aq9w938a90dw8q",
        model="claude-3-5-sonnet-20241022",
        request_model="claude-3-5-sonnet-20241022",
        response_model="claude-3-5-sonnet-20241022",
        provider="anthropic",
        operation="text_completion",  # llm.request.type=completion
        input_tokens=1300,  # 100 uncached + 1000 cache reads + 200 cache writes
        output_tokens=50,
        cache_read_tokens=1000,
        cache_write_tokens=200,
        finish_reason="end_turn",
    )


def test_langfuse_generation() -> None:
    span = fixed_ids(P.langfuse_span())
    batch = run(span)
    (row,) = batch.llm_calls
    assert row == expected_call(
        span,
        model="claude-sonnet-4-5",
        response_model="claude-sonnet-4-5",  # Langfuse's integrations overwrite the requested name with this
        provider="anthropic",  # Langfuse names none: inferred from the model
        input_tokens=2800,  # Langfuse usage details are additive: 300 + 2000 cache reads + 500 cache writes
        output_tokens=120,
        cache_read_tokens=2000,
        cache_write_tokens=500,
        ttft_ms=450,  # completion_start_time - start
        decode_tps=119.0,  # 119 / (1.45 s - 0.45 s)
        streamed=True,  # a completion start time is only known for streams
        prompt_template="support",
        prompt_version="7",
        extra_attributes={
            "langfuse.observation.model.parameters": '{"temperature": 0, "max_tokens": 1024}',
            "langfuse.observation.metadata.route": "/chat",
            "langfuse.trace.name": "chat-turn",
            "langfuse.session.id": "sess-9",
            "langfuse.environment": "production",
        },
    )
    (log,) = batch.prompt_logs
    assert log.prompt == '[{"role": "user", "content": "call me at <PHONE_NUMBER>"}]'
    assert log.completion == '{"role": "assistant", "content": "Will do."}'  # unchanged: kept as it came
    assert (log.model, log.prompt_template) == ("claude-sonnet-4-5", "support")


def test_vercel_ai_sdk_inner_span_is_the_call_and_outer_span_is_not() -> None:
    inner, outer = fixed_ids(P.vercel_do_stream_span()), P.vercel_outer_span()
    batch = run(inner, outer)
    (row,) = batch.llm_calls
    assert row == expected_call(
        inner,
        response_id="chatcmpl-vercel1",
        model="gpt-4o-mini",
        request_model="gpt-4o-mini",
        response_model="gpt-4o-mini-2024-07-18",
        provider="openai",  # gen_ai.system "openai.chat"
        input_tokens=50,
        output_tokens=20,
        ttft_ms=313,  # 312.5 ms, rounded half up
        decode_tps=38.974,  # 19 / (0.8 s - 0.3125 s)
        finish_reason="stop",
        streamed=True,  # ai.operationId ends with doStream
        extra_attributes={
            "operation.name": "ai.streamText.doStream chat-fn",
            "ai.operationId": "ai.streamText.doStream",
            "ai.model.id": "gpt-4o-mini",
            "ai.model.provider": "openai.chat",
            "ai.telemetry.functionId": "chat-fn",
            "ai.settings.maxRetries": "2",
            "ai.response.msToFinish": "800.0",
        },
    )
    (span_row,) = batch.spans
    assert span_row.name == "ai.streamText" and span_row.operation == ""
    assert span_row.attributes["ai.usage.promptTokens"] == "50"  # usage stays visible on the outer span


def test_sentry_and_openlit_spans() -> None:
    sentry = one_call(P.sentry_span())
    assert (sentry.provider, sentry.model) == ("openai", "gpt-4o")
    assert (sentry.input_tokens, sentry.output_tokens) == (40, 12)
    assert (sentry.ttft_ms, sentry.streamed, sentry.decode_tps) == (500, True, 55.0)
    assert "sentry.op" in sentry.attributes and "gen_ai.usage.total_tokens" not in sentry.attributes
    openlit = one_call(P.openlit_span())
    assert (openlit.ttft_ms, openlit.streamed, openlit.finish_reason) == (125, True, "stop")
    assert (openlit.input_tokens, openlit.output_tokens) == (80, 41)
    assert openlit.attributes["gen_ai.usage.cost"] == "0.00062"  # not ours to trust, but kept for reference


# --- usage normalisation -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        # (input, output, cache_read, cache_write, reasoning) after normalisation
        pytest.param({"gen_ai.provider.name": "openai", "gen_ai.usage.input_tokens": 1200,
                      "gen_ai.usage.output_tokens": 10, "gen_ai.usage.cache_read.input_tokens": 1024},
                     (1200, 10, 1024, 0, 0), id="otel-cache-included"),
        pytest.param({"gen_ai.provider.name": "anthropic", "gen_ai.usage.input_tokens": 100,
                      "gen_ai.usage.output_tokens": 10, "gen_ai.usage.cache_read.input_tokens": 1000},
                     (1100, 10, 1000, 0, 0), id="input-smaller-than-cache-proves-additive"),
        pytest.param({"gen_ai.system": "anthropic", "gen_ai.usage.prompt_tokens": 2000,
                      "gen_ai.usage.completion_tokens": 50, "gen_ai.usage.cache_read_input_tokens": 1000,
                      "gen_ai.usage.cache_creation_input_tokens": 200},
                     (3200, 50, 1000, 200, 0), id="legacy-anthropic-additive"),
        pytest.param({"gen_ai.system": "Anthropic", "gen_ai.usage.prompt_tokens": 1300,
                      "gen_ai.usage.completion_tokens": 50, "llm.usage.total_tokens": 1350,
                      "gen_ai.usage.cache_read_input_tokens": 1000,
                      "gen_ai.usage.cache_creation_input_tokens": 200},
                     (1300, 50, 1000, 200, 0), id="legacy-anthropic-total-says-included"),
        pytest.param({"gen_ai.system": "anthropic", "gen_ai.usage.prompt_tokens": 2000,
                      "gen_ai.usage.completion_tokens": 50, "llm.usage.total_tokens": 3250,
                      "gen_ai.usage.cache_read_input_tokens": 1000,
                      "gen_ai.usage.cache_creation_input_tokens": 200},
                     (3200, 50, 1000, 200, 0), id="legacy-anthropic-total-says-additive"),
        pytest.param({"gen_ai.system": "anthropic", "gen_ai.usage.prompt_tokens": 2000,
                      "gen_ai.usage.completion_tokens": 500, "gen_ai.usage.cache_read_input_tokens": 1000,
                      "gen_ai.usage.reasoning_tokens": 100},
                     (3000, 500, 1000, 0, 100), id="legacy-anthropic-cache-on-top-reasoning-included"),
        pytest.param({"gen_ai.system": "openai", "gen_ai.usage.prompt_tokens": 1300,
                      "gen_ai.usage.completion_tokens": 30, "gen_ai.usage.cache_read_input_tokens": 1024},
                     (1300, 30, 1024, 0, 0), id="legacy-openai-included"),
        pytest.param({"gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 100,
                      "gen_ai.usage.reasoning.output_tokens": 300},
                     (10, 400, 0, 0, 300), id="output-smaller-than-reasoning-proves-additive"),
        pytest.param({"gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 400,
                      "gen_ai.usage.reasoning.output_tokens": 300},
                     (10, 400, 0, 0, 300), id="reasoning-included"),
        pytest.param({"gen_ai.usage.input_tokens": 40, "gen_ai.usage.input_tokens.cached": 32,
                      "gen_ai.usage.output_tokens": 12, "gen_ai.usage.output_tokens.reasoning": 4},
                     (40, 12, 32, 0, 4), id="sentry-names"),
        pytest.param({"ai.usage.inputTokens": 500, "ai.usage.outputTokens": 60, "ai.usage.cachedInputTokens": 400,
                      "ai.usage.reasoningTokens": 20}, (500, 60, 400, 0, 20), id="vercel-names"),
        pytest.param({"langfuse.observation.usage_details": json.dumps(
                         {"prompt_tokens": 1300, "completion_tokens": 30, "total_tokens": 1330,
                          "prompt_tokens_details": {"cached_tokens": 1024}})},
                     (1300, 30, 1024, 0, 0), id="langfuse-openai-shaped-included"),
        pytest.param({"langfuse.observation.usage_details": json.dumps(
                         {"input": 10, "output": 20, "output_reasoning_tokens": 5, "input_audio_tokens": 3})},
                     (13, 25, 0, 0, 5), id="langfuse-native-additive"),
        pytest.param({"langfuse.observation.usage_details": json.dumps(
                         {"input": 1300, "output": 20, "input_cached_tokens": 1000, "total": 1320})},
                     (1300, 20, 1000, 0, 0), id="langfuse-total-says-included"),
    ],
)  # fmt: skip
def test_usage_is_normalised_to_the_otel_convention(attributes: dict[str, Any], expected: tuple) -> None:
    row = one_call(P.make_span("chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                                          **attributes}))  # fmt: skip
    assert (row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens,
            row.reasoning_tokens) == expected  # fmt: skip
    assert not row.usage_missing


def test_missing_usage_is_flagged_never_silently_zero() -> None:
    row = one_call(P.make_span("chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}))
    assert (row.usage_missing, row.input_tokens, row.output_tokens, row.empty_response) == (True, 0, 0, False)
    sdk_says = one_call(P.sdk_span(**{"inferwatch.usage_missing": True}))
    assert sdk_says.usage_missing
    embeddings = one_call(P.make_span("embeddings m", {
        "gen_ai.operation.name": "embeddings", "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 7,
    }))  # fmt: skip
    assert (embeddings.usage_missing, embeddings.empty_response) == (False, False)
    assert embeddings.operation == "embeddings"


def test_a_failed_call_without_usage_is_not_usage_missing() -> None:
    rate_limited = fixed_ids(P.make_span("chat m", {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "error.type": "openai.RateLimitError",
    }, duration_ms=120))  # fmt: skip
    assert one_call(rate_limited) == expected_call(
        rate_limited, model="m", request_model="m", status="error", error_type="openai.RateLimitError",
        usage_missing=False,  # there was no usage to report: nothing to price, nothing missing
    )  # fmt: skip
    bare = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    by_status = one_call(P.make_span("chat m", bare, status_code=P.STATUS_ERROR))
    by_level = one_call(P.make_span("chat m", {**bare, "langfuse.observation.level": "ERROR"}))
    assert [(r.status, r.usage_missing) for r in (by_status, by_level)] == [("error", False), ("error", False)]
    # an explicit flag and an unusable reported count still mark a failed call
    flagged = one_call(P.make_span("chat m", {**bare, "error.type": "timeout", "inferwatch.usage_missing": True}))
    absurd = one_call(P.make_span("chat m", {**bare, "error.type": "timeout", "gen_ai.usage.output_tokens": -5}))
    assert (flagged.usage_missing, absurd.usage_missing) == (True, True)
    # a successful call without counts is still missing usage
    assert one_call(P.make_span("chat m", bare)).usage_missing


@pytest.mark.parametrize("bad", [-5, MAX_TOKENS_PER_CALL + 1, "lots", 1.5e300, [1, 2]])
def test_absurd_token_counts_are_dropped_and_flagged_not_rejected(bad: Any) -> None:
    batch = run(P.otel_genai_span(**{"gen_ai.usage.output_tokens": bad}))
    assert batch.rejected == 0
    (row,) = batch.llm_calls
    assert (row.input_tokens, row.output_tokens, row.usage_missing) == (1200, 0, True)
    assert row.decode_tps == 0.0 and not row.empty_response
    (message,) = batch.errors
    assert message.startswith("span 0: gen_ai.usage.output_tokens=") and "usage marked missing" in message


def test_token_counts_sent_as_strings_or_doubles_are_read() -> None:
    row = one_call(P.otel_genai_span(**{"gen_ai.usage.input_tokens": "1200", "gen_ai.usage.output_tokens": 151.0}))
    assert (row.input_tokens, row.output_tokens, row.usage_missing) == (1200, 151, False)


# --- time to first token -----------------------------------------------------------------------------------------
TTFT_CASES = {
    "gen_ai.response.time_to_first_chunk": ({"gen_ai.response.time_to_first_chunk": 0.25}, []),
    "sentry time_to_first_token": ({"gen_ai.response.time_to_first_token": 0.25}, []),
    "openlit server.time_to_first_token": ({"gen_ai.server.time_to_first_token": 0.25}, []),
    "openinference event": ({}, [P.event("First Token Stream Event", P.T0 + 250 * P.MS)]),
    "vercel msToFirstChunk": ({"ai.response.msToFirstChunk": 250.4}, []),
    "vercel stream.msToFirstChunk": ({"ai.stream.msToFirstChunk": 249.6}, []),
    "vercel firstChunk event": ({}, [P.event("ai.stream.firstChunk", P.T0 + 250 * P.MS,
                                             {"ai.response.msToFirstChunk": 250.0})]),
    "langfuse completion_start_time": ({"langfuse.observation.completion_start_time":
                                        json.dumps(P.iso(P.T0 + 250 * P.MS).replace("+00:00", "Z"))}, []),
    "langfuse naive ISO time": ({"langfuse.observation.completion_start_time":
                                 P.iso(P.T0 + 250 * P.MS, tz=False)}, []),
    "inferwatch first_token.unix_nano": ({"inferwatch.first_token.unix_nano": P.T0 + 250 * P.MS}, []),
}  # fmt: skip


@pytest.mark.parametrize("case", TTFT_CASES)
def test_ttft_under_every_spelling(case: str) -> None:
    attributes, events = TTFT_CASES[case]
    base = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 51}  # fmt: skip
    row = one_call(P.make_span("chat m", {**base, **attributes}, duration_ms=1250, events=events))
    assert (row.ttft_ms, row.streamed) == (250, True)
    assert row.decode_tps == pytest.approx(50.0, abs=0.05)  # 50 tokens after the first, in about 1.0 s


def test_ttft_rounding_unknown_negative_and_not_streamed() -> None:
    def ttft(**attributes: Any) -> tuple[int, bool]:
        row = one_call(P.otel_genai_span(**attributes))
        return row.ttft_ms, row.streamed

    assert ttft(**{"gen_ai.response.time_to_first_chunk": 0.0001}) == (1, True)  # known: at least 1 ms
    assert ttft(**{"gen_ai.response.time_to_first_chunk": 0.0}) == (1, True)
    assert ttft(**{"gen_ai.response.time_to_first_chunk": -1.0}) == (0, True)  # nonsense: unknown
    assert ttft(**{"gen_ai.request.stream": False}) == (0, False)  # TTFT of a non-streamed call means nothing
    no_ttft = P.make_span("chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                                     "gen_ai.usage.output_tokens": 5})  # fmt: skip
    row = one_call(no_ttft)
    assert (row.ttft_ms, row.streamed, row.decode_tps) == (0, False, 0.0)
    # our SDK's absolute first-token time wins over other spellings
    both = P.otel_genai_span(**{"inferwatch.first_token.unix_nano": P.T0 + 700 * P.MS})
    assert one_call(both).ttft_ms == 700


# --- flags and status --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("attributes", "truncated", "refusal"),
    [
        ({"gen_ai.response.finish_reasons": ["length"]}, True, False),
        ({"gen_ai.response.finish_reasons": ["max_tokens"]}, True, False),
        ({"gen_ai.response.finish_reasons": ["MAX_TOKENS"]}, True, False),  # Gemini spelling
        ({"gen_ai.response.finish_reasons": '["max_output_tokens"]'}, True, False),  # JSON in a string
        ({"gen_ai.response.finish_reasons": ["model_context_window_exceeded"]}, True, False),  # Anthropic
        ({"gen_ai.response.finish_reasons": ["model_length"]}, True, False),  # vLLM
        ({"gen_ai.response.finish_reasons": ["length"], "inferwatch.truncated": False}, False, False),
        ({"gen_ai.response.finish_reasons": ["content_filter"]}, False, True),
        ({"gen_ai.response.finish_reasons": "content-filter"}, False, True),  # Vercel spelling
        ({"gen_ai.response.finish_reasons": ["refusal"]}, False, True),
        ({"gen_ai.response.finish_reasons": ["stop"], "inferwatch.refusal": True}, False, True),
        ({"gen_ai.response.finish_reasons": ["stop"], "inferwatch.truncated": True}, True, False),
    ],
)
def test_truncation_and_refusal_flags(attributes: dict[str, Any], truncated: bool, refusal: bool) -> None:
    row = one_call(P.otel_genai_span(**attributes))
    assert (row.truncated, row.refusal) == (truncated, refusal)


def test_empty_response_flag() -> None:
    assert one_call(P.otel_genai_span(**{"gen_ai.usage.output_tokens": 0})).empty_response
    assert not one_call(P.otel_genai_span(**{"gen_ai.usage.output_tokens": 0,
                                             "inferwatch.empty_response": False})).empty_response  # fmt: skip
    assert one_call(P.otel_genai_span(**{"inferwatch.empty_response": True})).empty_response
    errored = one_call(P.otel_genai_span(**{"gen_ai.usage.output_tokens": 0, "error.type": "timeout"}))
    assert not errored.empty_response  # an error is not an empty answer


def test_error_status_and_error_type() -> None:
    by_attribute = one_call(P.otel_genai_span(**{"error.type": "openai.RateLimitError"}))
    assert (by_attribute.status, by_attribute.error_type) == ("error", "openai.RateLimitError")
    span = P.otel_genai_span()
    span.status.code = P.STATUS_ERROR
    span.events.append(P.event("exception", P.T0 + 5 * P.MS, {"exception.type": "httpx.ReadTimeout",
                                                               "exception.message": "timed out"}))  # fmt: skip
    by_event = one_call(span)
    assert (by_event.status, by_event.error_type) == ("error", "httpx.ReadTimeout")
    bare = P.otel_genai_span()
    bare.status.code = P.STATUS_ERROR
    assert (one_call(bare).status, one_call(bare).error_type) == ("error", "_OTHER")
    langfuse = one_call(P.langfuse_span(**{"langfuse.observation.level": "ERROR"}))
    assert langfuse.status == "error"
    ok = one_call(P.otel_genai_span())
    ok_span = P.otel_genai_span()
    ok_span.status.code = P.STATUS_OK
    assert ok.status == one_call(ok_span).status == "ok"


def test_model_falls_back_to_the_response_model_and_service_name_defaults() -> None:
    span = P.make_span("chat", {"gen_ai.operation.name": "chat", "gen_ai.response.model": "gpt-4o-2024-08-06",
                                "gen_ai.usage.input_tokens": 1, "gen_ai.usage.output_tokens": 1})  # fmt: skip
    batch = normalize(P.make_request(span, resource={}), "p1")
    (row,) = batch.llm_calls
    assert (row.model, row.request_model, row.response_model) == ("gpt-4o-2024-08-06", "", "gpt-4o-2024-08-06")
    assert row.service_name == "unknown_service"


def test_decode_tps_needs_a_stream_and_more_than_one_token() -> None:
    one_token = one_call(P.otel_genai_span(**{"gen_ai.usage.output_tokens": 1}))
    assert one_token.decode_tps == 0.0 and one_token.ttft_ms == 250
    derived = one_call(P.otel_genai_span(**{"gen_ai.usage.output_tokens": 101}))
    assert derived.decode_tps == 80.0  # (101 - 1) / (1.5 - 0.25), not 101 / 1.5


# --- content -----------------------------------------------------------------------------------------------------
PII = ("alice@example.com", "555-010-0199", "123-45-6789", "078-05-1120", "bob@example.org", "jane@corp.example",
       "sk-proj-abcdefghijklmnopqrstuvwxyz012345")  # fmt: skip
CONTENT_KEYS = (
    "gen_ai.prompt", "gen_ai.completion", "gen_ai.input.messages", "gen_ai.output.messages",
    "gen_ai.system_instructions", "llm.input_messages", "llm.output_messages", "input.value", "output.value",
    "langfuse.observation.input", "langfuse.observation.output", "traceloop.entity.input",
    "traceloop.entity.output", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.request.messages",
    "gen_ai.response.text", "ai.prompt", "ai.response.text", "llm.headers", "http.request.header.authorization",
)  # fmt: skip


def all_conventions() -> list[Any]:
    return [P.otel_genai_span(), P.sdk_span(), P.openinference_span(), P.traceloop_openai_span(),
            P.traceloop_anthropic_span(), P.traceloop_workflow_span(), P.langfuse_span(),
            P.vercel_do_stream_span(), P.vercel_outer_span(), P.sentry_span(), P.openlit_span(),
            P.retrieval_span(), P.tool_span(), P.http_server_span()]  # fmt: skip


def _assert_no_content_in_attributes(batch: NormalizedBatch) -> None:
    for row in [*batch.llm_calls, *batch.spans]:
        for key, value in row.attributes.items():
            assert not key.startswith(CONTENT_KEYS), key
            assert not any(secret in value for secret in PII), (key, value)


def test_content_goes_to_prompt_logs_redacted_and_never_to_attributes() -> None:
    batch = run(*all_conventions())
    assert batch.rejected == 0
    assert len(batch.llm_calls) == 9 and len(batch.spans) == 5
    _assert_no_content_in_attributes(batch)
    by_span = {log.span_id: log for log in batch.prompt_logs}
    # one log per span that carried content, whatever its kind (LLM call, workflow, tool, outer Vercel span)
    assert len(batch.prompt_logs) == 9
    for log in batch.prompt_logs:
        assert log.project_id == "p1" and log.redaction == POLICY and log.start_time == P.T0_US
        assert not any(secret in log.prompt + log.completion for secret in PII), log
    tool = next(row for row in batch.spans if row.operation == "execute_tool")
    assert by_span[tool.span_id].prompt == '{"order_id": 42, "email": "<EMAIL_ADDRESS>"}'
    assert by_span[tool.span_id].completion == '{"status": "shipped"}'
    openinference = next(row for row in batch.llm_calls if row.span_name == "ChatCompletion")
    log = by_span[openinference.span_id]  # the flattened messages are preferred over the raw input.value
    assert json.loads(log.prompt) == [{"role": "system", "content": "You are a helpful support agent."},
                                      {"role": "user", "content": "My email is <EMAIL_ADDRESS>"}]  # fmt: skip
    openlit = next(row for row in batch.llm_calls if row.attributes.get("gen_ai.environment"))
    assert (by_span[openlit.span_id].prompt, by_span[openlit.span_id].completion) == (
        "user: my ssn is <US_SSN>", "I cannot store that.")  # span events gen_ai.content.*
    assert batch.redactions["EMAIL_ADDRESS"] >= 3 and batch.redactions["US_SSN"] == 2


def test_capture_off_drops_content() -> None:
    batch = run(*all_conventions(), content_capture="off")
    # what is still counted is not content: a span's status message, redacted and counted whatever the capture
    assert batch.prompt_logs == [] and batch.redactions == {"EMAIL_ADDRESS": 1}
    _assert_no_content_in_attributes(batch)
    with_capture = run(*all_conventions())
    assert [r.attributes for r in batch.llm_calls] == [r.attributes for r in with_capture.llm_calls]


def test_system_instructions_prepend_the_prompt_and_content_is_capped() -> None:
    long_text = "x" * (MAX_CONTENT_CHARS + 10_000)
    span = P.otel_genai_span(**{
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be brief. Mail ops@example.com"}]),
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]),
        "gen_ai.output.messages": long_text,
    })  # fmt: skip
    (log,) = run(span).prompt_logs
    assert log.prompt == (
        '[{"type": "text", "content": "Be brief. Mail <EMAIL_ADDRESS>"}]\n\n'
        '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]'
    )
    assert log.completion == "x" * MAX_CONTENT_CHARS
    assert log.model == "gpt-4o-mini"


def test_a_custom_redactor_is_used_and_named() -> None:
    class Shouting:
        policy = "test-upper/9"

        def __init__(self) -> None:
            self.calls = 0

        def redact(self, text: str) -> RedactionResult:
            self.calls += 1
            return RedactionResult(text.upper(), {"SHOUT": 1})

    redactor = Shouting()
    batch = run(P.sentry_span(), redactor=redactor)
    assert batch.prompt_logs == [
        PromptLogRow(project_id="p1", start_time=P.T0_US, trace_id=batch.llm_calls[0].trace_id,
                     span_id=batch.llm_calls[0].span_id, model="gpt-4o", prompt_template="",
                     prompt='[{"ROLE": "USER", "CONTENT": "PING"}]', completion='["PONG"]',
                     redaction="test-upper/9")
    ]  # fmt: skip
    # the same redactor redacts what the row keeps outside prompt logs: its name, its attribute values
    assert batch.llm_calls[0].span_name == "CHAT gpt-4o"  # (around its model name)
    assert all(value == value.upper() for key, value in batch.llm_calls[0].attributes.items()
               if not key.startswith("otel.scope."))  # the scope names the library: kept as sent
    assert redactor.calls > 2 and batch.redactions["SHOUT"] >= redactor.calls  # (repeated values: counted again)


def test_spans_without_content_write_no_prompt_log() -> None:
    assert run(P.otel_genai_span(), P.retrieval_span()).prompt_logs == []


# --- non-LLM spans -----------------------------------------------------------------------------------------------
def test_non_llm_spans_become_span_rows() -> None:
    retrieval = fixed_ids(P.retrieval_span(), parent=PARENT_ID)
    http = P.http_server_span()
    batch = run(retrieval, http, P.traceloop_workflow_span(), P.tool_span())
    assert batch.llm_calls == []
    assert batch.spans[0] == SpanRow(
        project_id="p1", start_time=P.T0_US, end_time=P.T0_US + 35_500, trace_id=TRACE_ID.hex(),
        span_id=SPAN_ID.hex(), parent_span_id=PARENT_ID.hex(), service_name="support-bot",
        name="retrieval kb-articles", kind="client", operation="retrieval", status="ok", status_message="",
        duration_ms=35.5,
        attributes={**BASE_ATTRIBUTES, "gen_ai.data_source.id": "kb-articles", "db.system.name": "qdrant",
                    "db.collection.name": "articles"},
    )  # fmt: skip
    http_row = batch.spans[1]
    assert (http_row.kind, http_row.status, http_row.operation) == ("server", "error", "")
    assert http_row.status_message == "upstream failed for <EMAIL_ADDRESS>"  # status messages are redacted
    assert "http.request.header.authorization" not in http_row.attributes
    assert http_row.attributes["http.response.status_code"] == "500"
    assert [row.operation for row in batch.spans[2:]] == ["invoke_workflow", "execute_tool"]
    assert batch.spans[3].status == "unset" and batch.spans[3].kind == "internal"


@pytest.mark.parametrize(
    ("attributes", "operation"),
    [
        ({"openinference.span.kind": "CHAIN"}, ""),
        ({"openinference.span.kind": "TOOL"}, "execute_tool"),
        ({"openinference.span.kind": "RETRIEVER"}, "retrieval"),
        ({"openinference.span.kind": "AGENT", "llm.model_name": "gpt-4o"}, "invoke_agent"),
        ({"langfuse.observation.type": "span"}, ""),
        ({"langfuse.observation.type": "tool"}, "execute_tool"),
        ({"traceloop.span.kind": "task"}, ""),
        ({"gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": "gpt-4o",
          "gen_ai.usage.input_tokens": 900}, "invoke_agent"),
    ],
)  # fmt: skip
def test_agent_chain_and_tool_spans_are_not_llm_calls(attributes: dict[str, Any], operation: str) -> None:
    batch = run(P.make_span("step", attributes, kind=P.INTERNAL))
    assert batch.llm_calls == []
    (row,) = batch.spans
    assert row.operation == operation
    if "gen_ai.usage.input_tokens" in attributes:  # column keys of LLM rows stay as attributes on a span
        assert row.attributes["gen_ai.usage.input_tokens"] == "900"
        assert row.attributes["gen_ai.request.model"] == "gpt-4o"
        assert "gen_ai.operation.name" not in row.attributes  # it is the operation column


def test_openinference_embedding_and_langfuse_embedding_are_calls() -> None:
    oi = one_call(P.make_span("embed", {"openinference.span.kind": "EMBEDDING", "llm.token_count.prompt": 12,
                                        "llm.model_name": "text-embedding-3-small"}))  # fmt: skip
    assert (oi.operation, oi.model, oi.input_tokens, oi.usage_missing) == (
        "embeddings", "text-embedding-3-small", 12, False)
    heuristic = one_call(P.make_span("embed batch", {"gen_ai.request.model": "text-embedding-3-small",
                                                     "gen_ai.usage.input_tokens": 3}))  # fmt: skip
    assert heuristic.operation == "embeddings"


# --- validation --------------------------------------------------------------------------------------------------
def _broken(field: str, value: Any) -> Any:
    span = P.otel_genai_span()
    setattr(span, field, value)
    return span


@pytest.mark.parametrize(
    ("span", "message"),
    [
        (_broken("trace_id", b"\x01" * 8), "trace_id must be 16 bytes, got 8"),
        (_broken("trace_id", bytes(16)), "trace_id must not be all zeros"),
        (_broken("span_id", b"\x01" * 16), "span_id must be 8 bytes, got 16"),
        (_broken("span_id", b""), "span_id must be 8 bytes, got 0"),
        (_broken("span_id", bytes(8)), "span_id must not be all zeros"),
        (_broken("parent_span_id", b"\x01" * 4), "parent_span_id must be empty or 8 bytes, got 4"),
        (_broken("start_time_unix_nano", 0), "start_time_unix_nano is missing"),
        (_broken("end_time_unix_nano", P.T0 - 1), "end_time_unix_nano is before start_time_unix_nano"),
    ],
)
def test_invalid_spans_are_rejected_one_by_one(span: Any, message: str) -> None:
    batch = run(P.retrieval_span(), span, P.otel_genai_span())
    assert batch.rejected == 1
    assert batch.errors == [f"span 1: {message}"]
    assert len(batch.llm_calls) == 1 and len(batch.spans) == 1


def _utc(ns: int) -> str:
    return datetime.fromtimestamp(ns // 10**9, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


DAY_NS = 86_400 * 10**9
HOUR_NS = 3600 * 10**9
Y2100_NS = 4_102_444_800 * 10**9  # 2100-01-01T00:00:00Z


@pytest.mark.parametrize(
    ("start", "message"),
    [
        (1, "start_time 1970-01-01T00:00:00Z is older than the 90-day retention"),
        (Y2100_NS, "start_time 2100-01-01T00:00:00Z is more than 1 hour in the future"),
    ],
)
def test_spans_outside_the_retention_window_are_rejected(start: int, message: str) -> None:
    span = P.otel_genai_span()
    span.start_time_unix_nano, span.end_time_unix_nano = start, start + 10**9
    batch = run(P.retrieval_span(), span, P.otel_genai_span())  # now = the current time
    assert batch.rejected == 1
    assert batch.errors == [f"span 1: {message}"]
    assert len(batch.llm_calls) == 1 and len(batch.spans) == 1


def test_the_retention_window_edges_and_its_parameters() -> None:
    now = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z

    def outcome(start: int, **kwargs: Any) -> str | None:
        span = P.otel_genai_span()
        span.start_time_unix_nano, span.end_time_unix_nano = start, start + 10**9
        batch = run(span, now_ns=now, **kwargs)
        assert batch.rejected + len(batch.llm_calls) == 1
        return batch.errors[0] if batch.errors else None

    assert outcome(now - 90 * DAY_NS) is None  # just inside: as old as the retention allows
    assert outcome(now - 90 * DAY_NS - 1) == (
        f"span 0: start_time {_utc(now - 90 * DAY_NS - 1)} is older than the 90-day retention")
    assert outcome(now + HOUR_NS) is None  # just inside: an hour of clock skew is tolerated
    assert outcome(now + HOUR_NS + 1) == (
        f"span 0: start_time {_utc(now + HOUR_NS)} is more than 1 hour in the future")
    assert outcome(now) is None and outcome(now - 30 * DAY_NS) is None
    # the retention comes from the caller (Settings.retention_days)
    assert outcome(now - 6 * DAY_NS, retention_days=7) is None
    assert outcome(now - 8 * DAY_NS, retention_days=7) == (
        f"span 0: start_time {_utc(now - 8 * DAY_NS)} is older than the 7-day retention")
    assert outcome(now - 400 * DAY_NS, retention_days=3650) is None
    with pytest.raises(ValueError, match="retention_days"):
        normalize(P.make_request(P.otel_genai_span()), "p1", retention_days=0)


def test_zero_parent_is_a_root_and_zero_duration_is_valid() -> None:
    span = fixed_ids(P.otel_genai_span(), parent=bytes(8))
    span.end_time_unix_nano = span.start_time_unix_nano
    row = one_call(span)
    assert row.parent_span_id == "" and row.latency_ms == 0 and row.decode_tps == 0.0


def test_a_span_that_breaks_the_normaliser_is_rejected_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    real = span_module.llm_call_row

    def flaky(facts: Any, *args: Any) -> Any:
        if facts.attrs.get("gen_ai.request.model") == "boom":
            raise RuntimeError("kaput")
        return real(facts, *args)

    monkeypatch.setattr(span_module, "llm_call_row", flaky)
    batch = run(P.otel_genai_span(), P.otel_genai_span(**{"gen_ai.request.model": "boom"}))
    assert batch.rejected == 1 and len(batch.llm_calls) == 1
    assert batch.errors == ["span 1: could not be normalised: RuntimeError: kaput"]


def test_odd_attribute_shapes_never_raise() -> None:
    odd = P.otel_genai_span(**{
        "gen_ai.response.finish_reasons": {"first": "stop"},
        "gen_ai.request.stream": "yes",
        "gen_ai.response.time_to_first_chunk": "soon",
        "inferwatch.tool_calls": -3,
        "inferwatch.first_token.unix_nano": "later",
        "langfuse.observation.usage_details": "not json",
        "gen_ai.response.model": ["a", "b"],
        "empty": [],
    })  # fmt: skip
    odd.attributes.add(key="unset")  # an AnyValue with nothing set
    row = one_call(odd)
    assert (row.streamed, row.ttft_ms, row.tool_calls) == (True, 0, 0)
    assert row.attributes["empty"] == "[]" and row.attributes["unset"] == ""


def test_counts_beyond_their_columns_are_capped_not_a_failed_insert() -> None:
    # Found by the numeric fuzz: 70,000 tool calls overflowed UInt16 and failed the held calls' insert.
    row = one_call(P.otel_genai_span(**{"inferwatch.tool_calls": 70_000, "inferwatch.tool_call_failures": 2**40,
                                        "inferwatch.response.chars": 2**63 - 1}))
    assert (row.tool_calls, row.tool_call_failures, row.response_chars) == (65_535, 65_535, 4_294_967_295)


_ANY_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats() | st.text(max_size=30)
    | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)  # fmt: skip
_KNOWN_KEYS = sorted(conventions.LLM_FIELDS | set(conventions.CONTENT_EXACT)) + [
    "gen_ai.operation.name", "gen_ai.prompt.0.content", "llm.input_messages.x.message.content",
]  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(_KNOWN_KEYS), _ANY_VALUES), max_size=12),
    st.integers(0, 2),
    st.sampled_from(["redacted", "off"]),
)
def test_any_values_under_known_keys_never_break_normalisation(
    pairs: list[tuple[str, Any]], status: int, capture: str
) -> None:
    span = P.make_span("chat m", {"gen_ai.request.model": "m"}, status_code=status)
    span.attributes.extend(P.kv(key, value) for key, value in pairs)
    batch = run(span, content_capture=capture)
    assert batch.rejected == 0, batch.errors
    assert len(batch.llm_calls) + len(batch.spans) == 1
    for row in [*batch.llm_calls, *batch.spans]:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in row.attributes.items())
    for row in batch.llm_calls:
        assert row.input_tokens >= 0 and row.output_tokens >= 0 and row.ttft_ms >= 0 and row.decode_tps >= 0


def test_error_messages_are_capped() -> None:
    spans = [_broken("trace_id", b"") for _ in range(150)]
    batch = run(*spans)
    assert batch.rejected == 150
    assert len(batch.errors) == 101 and batch.errors[-1] == "... and 50 more"


def test_bad_content_capture_value_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="content_capture"):
        run(P.otel_genai_span(), content_capture="raw")


# --- attributes --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key",
    ["authorization", "http.request.header.authorization", "openai.api_key", "x-api-key", "db.password",
     "client_secret", "github.token", "hf_token", "x-auth-token", "oauth.access_token", "http.cookie",
     "llm.headers", "aws.credentials", "oauth.accessToken", "http.request.header.x-goog-api-key", "token"],
)  # fmt: skip
def test_secret_like_keys_are_dropped(key: str) -> None:
    row = one_call(P.otel_genai_span(**{key: "s3cr3t-value"}))
    assert key not in row.attributes


@pytest.mark.parametrize(
    "key",
    ["gen_ai.usage.input_tokens", "gen_ai.request.max_tokens", "llm.token_count.prompt",
     "gen_ai.server.time_to_first_token", "gen_ai.server.time_per_output_token", "tokenizer.name",
     "gen_ai.token.type", "app.public_key_id"],
)  # fmt: skip
def test_token_counters_and_timings_are_not_secrets(key: str) -> None:
    (row,) = run(P.make_span("step", {key: 5}, kind=P.INTERNAL)).spans
    assert row.attributes[key] == "5"


def test_attribute_values_are_stringified_and_capped() -> None:
    many = {f"app.k{i:03d}": i for i in range(200)}
    span = P.make_span("step", {
        "app.flag": True, "app.ratio": 0.5, "app.blob": b"\x00\xff", "app.list": ["a", 1, True, 2.5],
        "app.map": {"x": 1, "y": ["z"]}, "app.long": "y" * (MAX_ATTRIBUTE_CHARS + 1), **many,
    }, kind=P.INTERNAL)  # fmt: skip
    (row,) = run(span).spans
    attributes = row.attributes
    assert (attributes["app.flag"], attributes["app.ratio"], attributes["app.blob"]) == ("true", "0.5", "00ff")
    assert attributes["app.list"] == '["a",1,true,2.5]'
    assert attributes["app.map"] == '{"x":1,"y":["z"]}'
    assert attributes["app.long"] == "y" * MAX_ATTRIBUTE_CHARS
    assert len(attributes) == MAX_ATTRIBUTES + 1  # + the count of what was dropped
    assert attributes[DROPPED_ATTRIBUTES_KEY] == str(206 - MAX_ATTRIBUTES + len(BASE_ATTRIBUTES))
    assert "otel.scope.name" not in attributes  # span attributes win the cap over resource/scope ones


def test_span_attributes_override_resource_attributes() -> None:
    (row,) = run(P.make_span("step", {"service.version": "from-span"}, kind=P.INTERNAL)).spans
    assert row.attributes["service.version"] == "from-span"
    assert "service.name" not in row.attributes and row.service_name == "support-bot"


# --- protobuf and JSON give identical rows -----------------------------------------------------------------------
def test_protobuf_and_otlp_json_give_identical_rows() -> None:
    request = P.make_request(*all_conventions())
    from_protobuf = normalize(decode_traces(request.SerializeToString(), "application/x-protobuf", None, 1 << 24),
                              "p1")  # fmt: skip
    from_json = normalize(decode_traces(P.to_otlp_json(request), "application/json", None, 1 << 24), "p1")
    assert from_json == from_protobuf
    assert len(from_json.llm_calls) == 9 and len(from_json.prompt_logs) == 9


HAND_WRITTEN_JSON = b"""{
  "resourceSpans": [{
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "checkout"}}]},
    "scopeSpans": [{
      "scope": {"name": "opentelemetry.instrumentation.openai_v2"},
      "spans": [{
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "parentSpanId": "00f067aa0ba902b7",
        "name": "chat gpt-4o",
        "kind": 3,
        "startTimeUnixNano": "1767225600000000000",
        "endTimeUnixNano": "1767225602000000000",
        "attributes": [
          {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
          {"key": "gen_ai.provider.name", "value": {"stringValue": "openai"}},
          {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
          {"key": "gen_ai.request.stream", "value": {"boolValue": true}},
          {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "812"}},
          {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "201"}},
          {"key": "gen_ai.response.time_to_first_chunk", "value": {"doubleValue": 0.4}},
          {"key": "gen_ai.response.finish_reasons",
           "value": {"arrayValue": {"values": [{"stringValue": "stop"}]}}},
          {"key": "gen_ai.input.messages",
           "value": {"stringValue": "[{\\"role\\":\\"user\\",\\"content\\":\\"I am carol@example.net\\"}]"}}
        ],
        "status": {"code": 1}
      }]
    }]
  }]
}"""


def test_hand_written_otlp_json_matches_the_protobuf_equivalent() -> None:
    span = P.make_span(
        "chat gpt-4o",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.request.stream": True,
            "gen_ai.usage.input_tokens": 812,
            "gen_ai.usage.output_tokens": 201,
            "gen_ai.response.time_to_first_chunk": 0.4,
            "gen_ai.response.finish_reasons": ["stop"],
            "gen_ai.input.messages": '[{"role":"user","content":"I am carol@example.net"}]',
        },
        trace_id=TRACE_ID, span_id=SPAN_ID, parent_span_id=PARENT_ID, start=1_767_225_600_000_000_000,
        duration_ms=2000, status_code=P.STATUS_OK,
    )  # fmt: skip
    request = P.make_request(
        span, resource={"service.name": "checkout"}, scope="opentelemetry.instrumentation.openai_v2",
        scope_version="",
    )  # fmt: skip
    now_ns = 1_767_225_600_000_000_000 + 3600 * 10**9  # the fixed timestamps are inside the retention window
    from_json = normalize(decode_traces(HAND_WRITTEN_JSON, "application/json", None, 1 << 20), "p1", now_ns=now_ns)
    assert from_json == normalize(request, "p1", now_ns=now_ns)
    (row,) = from_json.llm_calls
    assert (row.service_name, row.input_tokens, row.output_tokens, row.ttft_ms, row.decode_tps) == (
        "checkout", 812, 201, 400, 125.0)
    assert row.attributes == {"otel.scope.name": "opentelemetry.instrumentation.openai_v2"}
    (log,) = from_json.prompt_logs
    assert "<EMAIL_ADDRESS>" in log.prompt and "carol" not in log.prompt


def test_empty_request() -> None:
    assert normalize(ExportTraceServiceRequest(), "p1") == NormalizedBatch([], [], [], 0, [], {})


# --- the fast decoder gives the same rows as the standard one ----------------------------------------------------
PROTOBUF = "application/x-protobuf"
BUILDERS = sorted(  # every convention's payload builder, including any added later
    name for name, value in vars(P).items()
    if name.endswith("_span") and name != "make_span" and inspect.isfunction(value)
)


def same_rows(request: ExportTraceServiceRequest, **kwargs: Any) -> NormalizedBatch:
    """Rows of one request through the wire and each decoder; asserts they are identical."""
    body = request.SerializeToString()
    fast = normalize(decode_traces_fast(body, PROTOBUF, None, 1 << 26), "p1", **kwargs)
    standard = normalize(decode_traces(body, PROTOBUF, None, 1 << 26), "p1", **kwargs)
    assert fast == standard
    return fast


@pytest.mark.parametrize("capture", ["redacted", "off"])
@pytest.mark.parametrize("builder", BUILDERS)
def test_fast_and_standard_decoders_give_identical_rows_for_every_convention(builder: str, capture: str) -> None:
    assert len(BUILDERS) >= 15
    batch = same_rows(P.make_request(getattr(P, builder)()), content_capture=capture)
    assert batch.rejected == 0 and len(batch.llm_calls) + len(batch.spans) == 1


def test_fast_and_standard_decoders_give_identical_rows_for_benchmark_batches() -> None:
    assert len(same_rows(P.genai_batch(16)).llm_calls) == 16
    assert len(same_rows(P.genai_batch(16, content_chars=1000)).prompt_logs) == 16


EVERY_KIND: dict[str, Any] = {
    "app.text": "plain", "app.empty": "", "app.int": 42, "app.negative": -7, "app.max": 2**63 - 1,
    "app.min": -(2**63), "app.double": 2.5, "app.nan": math.nan, "app.inf": -math.inf, "app.true": True,
    "app.false": False, "app.bytes": b"\x00\xff", "app.no_bytes": b"", "app.array": ["a", 1, [True, None, 2.5]],
    "app.empty_array": [], "app.kvlist": {"x": 1, "y": {"z": b"\x01", "w": [None]}}, "app.empty_kvlist": {},
    "app.unset": None, "app.unicode": "héllo → 世界 🚀", "app.long": "é" * (MAX_ATTRIBUTE_CHARS + 10),
    "app.medium": "x" * 300,  # longer than the memo keeps
}  # fmt: skip


def test_every_value_kind_in_span_event_and_resource_attributes() -> None:
    events = [
        P.event("exception", P.T0 + 1, {"exception.type": ["not", "a", "string"], **EVERY_KIND}),
        P.event("exception", P.T0 + 2, {"exception.type": "second"}),
        P.event("gen_ai.content.prompt", P.T0 + 3, {"gen_ai.prompt": {"role": "user", "content": "hi"}}),
        P.event("gen_ai.content.completion", P.T0 + 4, {"gen_ai.completion": ["a", 1]}),
        P.event("ai.stream.firstChunk", P.T0 + 5, {"ai.response.msToFirstChunk": "12.5"}),
        P.event("First Token Stream Event", P.T0 + 6, EVERY_KIND),
        P.event("something.else", P.T0 + 7, EVERY_KIND),
    ]
    llm = P.make_span("chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", **EVERY_KIND},
                      events=events, status_code=P.STATUS_ERROR)  # fmt: skip
    other = P.make_span("step", dict(EVERY_KIND), kind=P.INTERNAL, events=events)
    resource = {**P.DEFAULT_RESOURCE, **{f"res.{k}": v for k, v in EVERY_KIND.items()}, "service.name": 7}
    for capture in ("redacted", "off"):
        batch = same_rows(P.make_request(llm, other, resource=resource), content_capture=capture)
        assert batch.rejected == 0, batch.errors
        (call,), (span,) = batch.llm_calls, batch.spans
        assert call.error_type == '["not","a","string"]' and call.service_name == "7"
        assert span.attributes["app.kvlist"] == '{"x":1,"y":{"z":"01","w":[null]}}'
        assert span.attributes["res.app.bytes"] == "00ff" and span.attributes["app.unset"] == ""


def test_a_key_sent_twice_keeps_its_first_position_and_its_last_value() -> None:
    span = P.make_span("step", {"gen_ai.operation.name": "execute_tool", "app.first": 1, "app.k": "one",
                                "app.middle": 2}, kind=P.INTERNAL)  # fmt: skip
    span.attributes.extend([P.kv("app.k", "two"), P.kv("gen_ai.request.model", "a"),
                            P.kv("gen_ai.request.model", "b")])  # fmt: skip
    llm = P.otel_genai_span()
    llm.attributes.extend([P.kv("gen_ai.usage.output_tokens", 7), P.kv("app.k", 1), P.kv("app.k", [2])])
    batch = same_rows(P.make_request(span, llm))
    attributes = batch.spans[0].attributes
    assert [k for k in attributes if k.startswith(("app.", "gen_ai."))] == [
        "app.first", "app.k", "app.middle", "gen_ai.request.model"]
    assert (attributes["app.k"], attributes["gen_ai.request.model"]) == ("two", "b")
    (call,) = batch.llm_calls
    assert (call.output_tokens, call.attributes["app.k"]) == (7, "[2]")


_EVENT_NAMES = st.sampled_from(
    ["exception", "First Token Stream Event", "ai.stream.firstChunk", "gen_ai.content.prompt",
     "gen_ai.content.completion", "log"]
)  # fmt: skip
_EVENT_KEYS = st.sampled_from(
    ["exception.type", "ai.response.msToFirstChunk", "gen_ai.prompt", "gen_ai.completion", "message"]
)
_ANY_KEYS = st.one_of(
    st.sampled_from(
        [*_KNOWN_KEYS, "app.k", "authorization", "llm.tools.0.name", "service.name", "gen_ai.tool.definitions"]
    ),
    st.text(max_size=12),
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pairs=st.lists(st.tuples(_ANY_KEYS, _ANY_VALUES), max_size=16),
    resource=st.lists(st.tuples(_ANY_KEYS, _ANY_VALUES), max_size=5),
    events=st.lists(
        st.tuples(_EVENT_NAMES, st.lists(st.tuples(_EVENT_KEYS, _ANY_VALUES), max_size=3)), max_size=3
    ),
    status=st.integers(0, 2),
    capture=st.sampled_from(["redacted", "off"]),
)
def test_random_attribute_sets_give_identical_rows_from_both_decoders(
    pairs: list[tuple[str, Any]], resource: list[tuple[str, Any]], events: list[tuple[str, list[tuple[str, Any]]]],
    status: int, capture: str,
) -> None:  # fmt: skip
    span = P.make_span("chat m", {}, status_code=status)
    span.attributes.extend(P.kv(key, value) for key, value in pairs)  # duplicates included, in order
    for i, (name, event_pairs) in enumerate(events):
        event = span.events.add(name=name, time_unix_nano=P.T0 + i)
        event.attributes.extend(P.kv(key, value) for key, value in event_pairs)
    request = P.make_request(span, resource={})
    request.resource_spans[0].resource.attributes.extend(P.kv(key, value) for key, value in resource)
    batch = same_rows(request, content_capture=capture)
    assert batch.rejected == 0, batch.errors


# --- fast input: what only it can meet ---------------------------------------------------------------------------
BAD_KEY_VALUE = b"\x0a\x02\xff\xfe"  # a KeyValue whose key is not UTF-8


def test_fast_input_rejects_a_span_with_an_invalid_attribute_alone() -> None:
    request = to_fast(P.make_request(P.retrieval_span(), P.otel_genai_span(), P.openlit_span()))
    spans = request.resource_spans[0].scope_spans[0].spans
    spans[0].attributes.append(BAD_KEY_VALUE)
    spans[2].events[0].attributes.append(b"\x0a\x05ab")  # truncated: length 5, 2 bytes follow
    batch = normalize(request, "p1")
    assert batch.rejected == 2 and len(batch.llm_calls) == 1
    assert batch.errors == [
        "span 0: attribute is not a valid OTLP KeyValue (bad protobuf or a string that is not UTF-8)",
        "span 2: attribute is not a valid OTLP KeyValue (bad protobuf or a string that is not UTF-8)",
    ]
    # the standard decoder refuses the whole request instead (upb validates every string when parsing)
    with pytest.raises(MalformedPayload):
        decode_traces(request.SerializeToString(), PROTOBUF, None, 1 << 20)


def test_fast_input_with_an_invalid_resource_attribute_rejects_that_resource_only() -> None:
    request = to_fast(P.make_request(P.retrieval_span(), P.otel_genai_span()))
    request.MergeFrom(to_fast(P.make_request(P.tool_span())))  # a second resource, intact
    request.resource_spans[0].resource.attributes.append(BAD_KEY_VALUE)
    batch = normalize(request, "p1")
    assert batch.rejected == 2 and [row.operation for row in batch.spans] == ["execute_tool"]
    assert batch.errors == [
        f"span {i}: resource attribute is not a valid OTLP KeyValue (bad protobuf or a string that is not UTF-8)"
        for i in (0, 1)
    ]


def test_the_attribute_memo_is_bounded_and_never_changes_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    standard = P.make_request(*all_conventions(), P.make_span("step", EVERY_KIND, kind=P.INTERNAL))
    reference = normalize(standard, "p1")
    request = to_fast(standard)
    memo = scrubber_for().entries  # the default redactor's and hasher's, which normalize() uses
    memo.clear()
    assert normalize(request, "p1") == reference  # cold
    assert normalize(request, "p1") == reference  # warm: memoised values (lists, dicts) were not mutated
    assert 0 < len(memo) and all(len(raw) <= 256 for raw in memo)
    monkeypatch.setattr(attribute_scan, "_KV_CACHE_LIMIT", 5)
    memo.clear()
    for _ in range(2):
        assert normalize(request, "p1") == reference
        assert len(memo) <= 5  # cleared when full, refilled
    monkeypatch.setattr(attribute_scan, "_KV_CACHE_MAX_BYTES", 0)
    memo.clear()
    assert normalize(request, "p1") == reference and not memo


def test_inline_first_spellings_are_the_tables_first_entries() -> None:
    # llm_call_row and usage_columns read the first spelling of each column inline and the rest through the tables
    cv = conventions
    firsts = [
        (cv.PROVIDER_KEYS, sc.GEN_AI_PROVIDER_NAME), (cv.REQUEST_MODEL_KEYS, sc.GEN_AI_REQUEST_MODEL),
        (cv.RESPONSE_MODEL_KEYS, sc.GEN_AI_RESPONSE_MODEL), (cv.RESPONSE_ID_KEYS, sc.GEN_AI_RESPONSE_ID),
        (cv.PROMPT_TEMPLATE_KEYS, sc.PROMPT_TEMPLATE), (cv.PROMPT_VERSION_KEYS, sc.PROMPT_VERSION),
        (cv.STREAM_KEYS, sc.STREAMED), (cv.FINISH_REASON_KEYS, sc.GEN_AI_RESPONSE_FINISH_REASONS),
        (cv.INPUT_KEYS, sc.GEN_AI_USAGE_INPUT_TOKENS), (cv.OUTPUT_KEYS, sc.GEN_AI_USAGE_OUTPUT_TOKENS),
        (cv.TOTAL_KEYS, cv.GEN_AI_USAGE_TOTAL_TOKENS),
        (cv.REASONING_KEYS, sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS),
        (cv.CACHE_READ_KEYS, sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS),
        (cv.CACHE_WRITE_KEYS, sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS),
    ]  # fmt: skip
    for keys, first in firsts:
        assert keys[0] == first
