"""normalize() on what third-party instrumentations really send: the attribute names, value shapes and span events
each library emits, read from its source (library, version and source location named per test), to the expected
row: tokens by type, cost, finish reason, streamed, TTFT, provider, request/response model, status."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inferwatch_collector.conventions import infer_provider
from inferwatch_collector.cost.ingest_pricer import pricer_for
from inferwatch_collector.normalize import NormalizedBatch, normalize
from inferwatch_collector.otlp_decode import to_fast
from inferwatch_collector.rows import LlmCallRow

from tests.helpers import payloads as P

PRICE = pricer_for(None)  # the bundled price table


def run(*spans: Any, scope: str = "opentelemetry.instrumentation.openai_v2") -> NormalizedBatch:
    """normalize() on the fast input, priced; the standard message must give the identical batch."""
    request = P.make_request(*spans, scope=scope, scope_version="")
    batch = normalize(to_fast(request), "p1", price=PRICE)
    assert normalize(request, "p1", price=PRICE) == batch
    assert batch.rejected == 0, batch.errors
    return batch


def one_call(span: Any, *, scope: str = "opentelemetry.instrumentation.openai_v2") -> LlmCallRow:
    batch = run(span, scope=scope)
    assert batch.spans == []
    (row,) = batch.llm_calls
    return row


def tokens(row: LlmCallRow) -> tuple[int, int, int, int, int, int]:
    return (row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens,
            row.cache_write_1h_tokens, row.reasoning_tokens)  # fmt: skip


# One Anthropic response used across libraries: 2,000 uncached input tokens, 50,000 cache reads, 40,000 cache writes
# (30,000 of them with the 1-hour TTL), 4,000 output tokens of which 1,500 thinking. claude-haiku-4-5 per token:
# input 1e-6, cache read 1e-7, cache write 1.25e-6 (5 min) / 2e-6 (1 h), output 5e-6.
HAIKU = "claude-haiku-4-5"
HAIKU_DATED = "claude-haiku-4-5-20251001"
UNCACHED, CACHE_READ, CACHE_WRITE, CACHE_WRITE_1H, OUTPUT, THINKING = 2_000, 50_000, 40_000, 30_000, 4_000, 1_500
INPUT_ALL = UNCACHED + CACHE_READ + CACHE_WRITE  # 92,000
# 0.002 input + 0.005 reads + (10,000 × 1.25e-6 + 30,000 × 2e-6 = 0.0725) writes + 0.02 output
HAIKU_COST = 0.0995
HAIKU_COST_ALL_WRITES_5M = 0.077  # 40,000 × 1.25e-6 = 0.05 writes


# --- the anthropic client's own spans -----------------------------------------------------------------------------
def anthropic_client_span(*, stream: bool = False, stop_reason: str = "end_turn") -> Any:
    """anthropic 2.10.0 (pinned; same in 2.17): the call span ``anthropic.messages.create``. Names from
    ``anthropic/_tracing.py`` SPAN_ATTRIBUTES (request/response tables, ``stream`` → ``gen_ai.request.stream``),
    server_attributes and CLIENT_ATTRIBUTES; ``gen_ai.usage.input_tokens`` from
    ``anthropic/lib/_tracing/_response.py`` set_usage_sums = input + cache reads + cache writes; the TTFT of a
    stream from set_time_to_first_chunk (seconds)."""
    attributes: dict[str, Any] = {
        "server.address": "api.anthropic.com",
        "server.port": 443,
        "gen_ai.provider.name": "anthropic",
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": HAIKU,
        "gen_ai.request.max_tokens": 8192,
        "anthropic.thinking.type": "enabled",
        "anthropic.thinking.budget_tokens": 2048,
        "http.request.method": "POST",
        "url.scheme": "https",
        "url.path": "/v1/messages",
        "url.full": "https://api.anthropic.com/v1/messages",
        "http.response.status_code": 200,
        "anthropic.request.id": "req_011CUyq2",
        "gen_ai.response.id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "gen_ai.response.model": HAIKU_DATED,
        "gen_ai.usage.cache_write.input_tokens": CACHE_WRITE,
        "gen_ai.usage.cache_read.input_tokens": CACHE_READ,
        "anthropic.usage.cache_creation.ephemeral_5m_input_tokens": CACHE_WRITE - CACHE_WRITE_1H,
        "anthropic.usage.cache_creation.ephemeral_1h_input_tokens": CACHE_WRITE_1H,
        "anthropic.response.service_tier": "standard",
        "gen_ai.usage.output_tokens": OUTPUT,
        "gen_ai.usage.reasoning.output_tokens": THINKING,
        "anthropic.message.stop_reason": stop_reason,
        "gen_ai.usage.input_tokens": INPUT_ALL,
    }
    if stream:
        attributes["gen_ai.request.stream"] = True
        attributes["gen_ai.response.time_to_first_chunk"] = 0.6125
    return P.make_span("anthropic.messages.create", attributes, duration_ms=3000)


def test_anthropic_client_span_usage_cache_ttl_and_cost_to_the_cent() -> None:
    row = one_call(anthropic_client_span(), scope="com.anthropic.sdk.python")
    # gen_ai.usage.input_tokens already includes the cache: stored as is; thinking is part of the output tokens
    assert tokens(row) == (INPUT_ALL, OUTPUT, CACHE_READ, CACHE_WRITE, CACHE_WRITE_1H, THINKING)
    assert row.cost_usd == pytest.approx(HAIKU_COST, abs=1e-9)
    assert not row.unpriced and not row.usage_missing
    assert (row.provider, row.model, row.request_model, row.response_model) == (
        "anthropic", HAIKU, HAIKU, HAIKU_DATED,
    )  # fmt: skip
    assert (row.finish_reason, row.truncated, row.streamed, row.ttft_ms) == ("end_turn", False, False, 0)
    assert row.status == "ok" and row.response_id == "msg_01XFDUDYJgAACzvnptvVoYEL"
    for column_key in ("anthropic.message.stop_reason", "gen_ai.usage.cache_write.input_tokens",
                       "anthropic.usage.cache_creation.ephemeral_1h_input_tokens"):  # fmt: skip
        assert column_key not in row.attributes
    assert row.attributes["anthropic.request.id"] == "req_011CUyq2"


def test_anthropic_client_streamed_span_that_hit_max_tokens() -> None:
    row = one_call(anthropic_client_span(stream=True, stop_reason="max_tokens"), scope="com.anthropic.sdk.python")
    assert (row.streamed, row.ttft_ms, row.finish_reason, row.truncated) == (True, 613, "max_tokens", True)
    assert row.cost_usd == pytest.approx(HAIKU_COST, abs=1e-9)


# --- OpenLLMetry / Traceloop ------------------------------------------------------------------------------------
def openllmetry_openai_span(*, stream: bool, chunk_times_ms: tuple[float, ...] = ()) -> Any:
    """opentelemetry-instrumentation-openai 0.62.4 (OpenLLMetry) on a chat call: span ``openai.chat``
    (shared/chat_wrappers.py SPAN_NAME), ``gen_ai.is_streaming`` = ``kwargs.get("stream") or False``
    (shared/__init__.py:172, semconv-ai 0.5.1 SpanAttributes.GEN_AI_IS_STREAMING), one attribute-less
    ``gen_ai.content.completion.chunk`` event per streamed chunk (chat_wrappers.py:767, _process_item), no TTFT
    attribute (the first-token time goes to a histogram only)."""
    attributes = {
        "gen_ai.operation.name": "chat",
        "llm.request.type": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.openai.api_base": "https://api.openai.com/v1/",
        "gen_ai.is_streaming": stream,
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.id": "chatcmpl-Bx1",
        "gen_ai.usage.input_tokens": 20,
        "gen_ai.usage.output_tokens": 31,
        "gen_ai.usage.total_tokens": 51,
        "gen_ai.response.finish_reasons": ["stop"],
    }
    events = [P.event("gen_ai.content.completion.chunk", P.T0 + int(ms * P.MS)) for ms in chunk_times_ms]
    return P.make_span("openai.chat", attributes, duration_ms=1000, events=events)


def test_openllmetry_streamed_flag_and_ttft_from_the_first_chunk_event() -> None:
    streamed = one_call(openllmetry_openai_span(stream=True, chunk_times_ms=(240.4, 300.0, 900.0)),
                        scope="opentelemetry.instrumentation.openai.v1")  # fmt: skip
    assert (streamed.streamed, streamed.ttft_ms, streamed.finish_reason) == (True, 240, "stop")
    assert streamed.decode_tps == pytest.approx(30 / 0.7596, abs=0.001)  # (31 - 1) tokens after the first
    plain = one_call(openllmetry_openai_span(stream=False), scope="opentelemetry.instrumentation.openai.v1")
    assert (plain.streamed, plain.ttft_ms) == (False, 0)
    assert "gen_ai.is_streaming" not in plain.attributes


def test_openllmetry_chunk_events_after_dropped_events_give_no_ttft() -> None:
    """The OTel SDK keeps the newest 128 events: with some dropped, the first kept chunk is not the first token."""
    span = openllmetry_openai_span(stream=True, chunk_times_ms=(700.0, 710.0))
    span.dropped_events_count = 180
    row = one_call(span, scope="opentelemetry.instrumentation.openai.v1")
    assert (row.streamed, row.ttft_ms, row.decode_tps) == (True, 0, 0.0)


@pytest.mark.parametrize(
    ("scope", "provider", "sent", "stored", "truncated"),
    [
        ("opentelemetry.instrumentation.openai.v1", "openai", "tool_call", "tool_calls", False),
        ("opentelemetry.instrumentation.openai.v1", "openai", "length", "length", True),
        ("opentelemetry.instrumentation.openai.v1", "openai", "content_filter", "content_filter", False),
        ("opentelemetry.instrumentation.anthropic", "anthropic", "tool_call", "tool_use", False),
        ("opentelemetry.instrumentation.anthropic", "anthropic", "length", "max_tokens", True),
        ("opentelemetry.instrumentation.anthropic", "anthropic", "stop", "stop", False),  # end_turn/stop_sequence
        ("opentelemetry.instrumentation.openai_v2", "openai", "tool_call", "tool_call", False),  # another scope
    ],
)
def test_openllmetry_finish_reason_enum_back_to_the_provider_word(
    scope: str, provider: str, sent: str, stored: str, truncated: bool
) -> None:
    """opentelemetry-instrumentation-openai / -anthropic 0.62.4 (OpenLLMetry) write the OTel GenAI finish-reason
    enum into ``gen_ai.response.finish_reasons``: openai/shared/__init__.py OPENAI_FINISH_REASON_MAP (tool_calls,
    function_call → tool_call), anthropic/span_utils.py _FINISH_REASON_MAP (end_turn, stop_sequence → stop,
    tool_use → tool_call, max_tokens → length). Scopes from ``get_tracer(__name__)``. Stored as the provider's own
    word where that is unambiguous, as our SDK and the other libraries store it."""
    model = "gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5"
    span = P.make_span(f"{provider}.chat", {
        "gen_ai.provider.name": provider, "gen_ai.operation.name": "chat", "gen_ai.request.model": model,
        "gen_ai.response.model": model, "gen_ai.response.id": "resp-1",
        "gen_ai.response.finish_reasons": [sent],
        "gen_ai.usage.input_tokens": 61, "gen_ai.usage.output_tokens": 11, "gen_ai.usage.total_tokens": 72,
    })  # fmt: skip
    row = one_call(span, scope=scope)
    assert (row.finish_reason, row.truncated) == (stored, truncated)


# --- OpenInference ------------------------------------------------------------------------------------------------
def openinference_anthropic_span() -> Any:
    """openinference-instrumentation-anthropic 3.1.0: ``llm.model_name`` is set from the request, then overwritten
    by the response's (_wrappers.py:922-930, _stream.py:426); ``llm.request.model_name`` keeps the request's;
    ``llm.invocation_parameters`` has the model popped (_wrappers.py:246); ``llm.finish_reason`` = the raw
    stop_reason (_content.py:287); token counts with the cache inside the prompt count (_utils.py:32-58);
    conventions from openinference-semantic-conventions 0.1.42."""
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.provider": "anthropic",
        "llm.system": "anthropic",
        "llm.model_name": HAIKU_DATED,
        "llm.request.model_name": HAIKU,
        "llm.response.model_name": HAIKU_DATED,
        "llm.invocation_parameters": json.dumps({"max_tokens": 8192}),
        "llm.token_count.prompt": INPUT_ALL,
        "llm.token_count.completion": OUTPUT,
        "llm.token_count.prompt_details.cache_read": CACHE_READ,
        "llm.token_count.prompt_details.cache_write": CACHE_WRITE,
        "llm.token_count.completion_details.reasoning": THINKING,
        "llm.token_count.total": INPUT_ALL + OUTPUT,
        "llm.finish_reason": "end_turn",
    }
    return P.make_span("Messages", attributes, duration_ms=3000, kind=P.INTERNAL)


def test_openinference_anthropic_request_model_and_finish_reason() -> None:
    row = one_call(openinference_anthropic_span(), scope="openinference.instrumentation.anthropic")
    assert (row.model, row.request_model, row.response_model, row.provider) == (
        HAIKU, HAIKU, HAIKU_DATED, "anthropic",
    )  # fmt: skip
    assert row.finish_reason == "end_turn"
    # OpenInference records no TTL split of the writes: all priced at the 5-minute rate
    assert tokens(row) == (INPUT_ALL, OUTPUT, CACHE_READ, CACHE_WRITE, 0, THINKING)
    assert row.cost_usd == pytest.approx(HAIKU_COST_ALL_WRITES_5M, abs=1e-9)
    for column_key in ("llm.finish_reason", "llm.request.model_name", "llm.response.model_name"):
        assert column_key not in row.attributes


def test_openinference_anthropic_failed_call_has_no_response_model() -> None:
    """openinference-instrumentation-anthropic 3.1.0 on a provider error: ``llm.model_name`` still holds the
    request's name (_wrappers.py:922), no response overwrote it and no ``llm.response.model_name`` was set."""
    span = P.make_span("Messages", {
        "openinference.span.kind": "LLM", "llm.provider": "anthropic", "llm.system": "anthropic",
        "llm.model_name": HAIKU, "llm.request.model_name": HAIKU,
        "llm.invocation_parameters": json.dumps({"max_tokens": 8192}),
    }, kind=P.INTERNAL, status_code=P.STATUS_ERROR,
        events=[P.event("exception", P.T0 + 5 * P.MS, {"exception.type": "anthropic.InternalServerError"})])
    row = one_call(span, scope="openinference.instrumentation.anthropic")
    assert (row.request_model, row.response_model, row.status) == (HAIKU, "", "error")
    assert row.error_type == "anthropic.InternalServerError"


def test_openinference_openai_finish_reason() -> None:
    """openinference-instrumentation-openai 0.1.66: ``llm.finish_reason`` of the first choice
    (_response_attributes_extractor.py:184-187); the request model only in ``llm.invocation_parameters``."""
    span = P.make_span("ChatCompletion", {
        "openinference.span.kind": "LLM", "llm.provider": "openai", "llm.system": "openai",
        "llm.model_name": "gpt-4o-mini-2024-07-18",
        "llm.invocation_parameters": json.dumps({"model": "gpt-4o-mini", "max_tokens": 16}),
        "llm.token_count.prompt": 12, "llm.token_count.completion": 16, "llm.token_count.total": 28,
        "llm.finish_reason": "length",
    }, kind=P.INTERNAL)  # fmt: skip
    row = one_call(span, scope="openinference.instrumentation.openai")
    assert (row.request_model, row.response_model, row.finish_reason, row.truncated) == (
        "gpt-4o-mini", "gpt-4o-mini-2024-07-18", "length", True,
    )  # fmt: skip


# --- Langfuse -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("finish_reason_value", "version"),
    [("stop", "3.15.0"), ('"stop"', "5.2.0")],
    ids=["v3-plain", "v5-json-encoded"],
)
def test_langfuse_openai_generation(finish_reason_value: str, version: str) -> None:
    """langfuse ``openai`` integration (3.15.0 and 5.2.0, langfuse/openai.py): ``model.name`` starts as the
    request's and ``generation.update(model=...)`` overwrites it with the response's (_wrap, _finalize_stream_response);
    a stream's finish reason goes to metadata (``{"finish_reason": ...}`` flattened by
    _client/attributes.py _flatten_and_serialize_metadata: as is in v3, JSON-encoded in v5); usage details are
    OpenAI's usage dict (_parse_usage); no provider attribute at all."""
    span = P.make_span("OpenAI-generation", {
        "langfuse.observation.type": "generation",
        "langfuse.observation.model.name": "gpt-4o-mini-2024-07-18",
        "langfuse.observation.model.parameters": json.dumps(
            {"temperature": 1, "max_tokens": "Infinity", "top_p": 1, "frequency_penalty": 0, "presence_penalty": 0}),
        "langfuse.observation.usage_details": json.dumps({
            "prompt_tokens": 1300, "completion_tokens": 31, "total_tokens": 1331,
            "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}}),
        "langfuse.observation.completion_start_time": json.dumps(P.iso(P.T0 + 350 * P.MS)),
        "langfuse.observation.metadata.finish_reason": finish_reason_value,
        "langfuse.version": version,
    }, duration_ms=1000, kind=P.INTERNAL)  # fmt: skip
    row = one_call(span, scope="langfuse-sdk")
    assert (row.provider, row.model, row.request_model, row.response_model) == (
        "openai", "gpt-4o-mini-2024-07-18", "", "gpt-4o-mini-2024-07-18",
    )  # fmt: skip
    assert (row.finish_reason, row.streamed, row.ttft_ms) == ("stop", True, 350)
    assert tokens(row) == (1300, 31, 1024, 0, 0, 0)
    # gpt-4o-mini-2024-07-18: 276 × 1.5e-7 + 1024 × 7.5e-8 + 31 × 6e-7
    assert row.cost_usd == pytest.approx(276 * 1.5e-7 + 1024 * 7.5e-8 + 31 * 6e-7, abs=1e-12)
    assert "langfuse.observation.metadata.finish_reason" not in row.attributes


@pytest.mark.parametrize("status_code", [P.STATUS_ERROR, P.STATUS_UNSET], ids=["status-error", "level-only"])
def test_langfuse_openai_failed_generation_names_the_request_model(status_code: int) -> None:
    """langfuse 5.2.0 ``openai`` integration on a provider error (langfuse/openai.py _wrap, ``except`` branch):
    ``generation.update(status_message=str(ex), level="ERROR", model=kwargs.get("model"), cost_details=0s)``, so
    ``model.name`` holds the *requested* name; the OTel span status is ERROR too (a level alone also counts)."""
    span = P.make_span("OpenAI-generation", {
        "langfuse.observation.type": "generation",
        "langfuse.observation.model.parameters": json.dumps(
            {"temperature": 1, "max_tokens": "Infinity", "top_p": 1, "frequency_penalty": 0, "presence_penalty": 0}),
        "langfuse.observation.level": "ERROR",
        "langfuse.observation.status_message": "Error code: 500 - The server had an error",
        "langfuse.observation.model.name": "gpt-4o-mini",
        "langfuse.observation.cost_details": json.dumps({"input": 0, "output": 0, "total": 0}),
    }, duration_ms=100, kind=P.INTERNAL, status_code=status_code)  # fmt: skip
    row = one_call(span, scope="langfuse-sdk")
    assert (row.provider, row.model, row.request_model, row.response_model) == (
        "openai", "gpt-4o-mini", "gpt-4o-mini", "",
    )  # fmt: skip
    assert (row.status, row.error_type, row.usage_missing, row.cost_usd) == ("error", "_OTHER", False, 0.0)
    assert "langfuse.observation.model.name" not in row.attributes


# --- OpenLIT ------------------------------------------------------------------------------------------------------
def test_openlit_failed_anthropic_call_is_an_llm_call_with_status_error() -> None:
    """openlit 1.45.0, instrumentation/anthropic/anthropic.py: tracer ``trace.get_tracer(__name__)`` (scope
    ``openlit.instrumentation.anthropic``, no version), span ``chat {request_model}`` of kind CLIENT (line 128);
    non-streamed, ``wrapped()`` raises inside ``start_as_current_span`` (line 155), which records the exception
    event and the ERROR status; every gen_ai.* attribute is set only in process_chat_response, after the response.
    Streamed (line 132-138), __helpers.handle_exception also sets ``error.type``."""
    plain = P.make_span("chat claude-haiku-4-5", {}, duration_ms=120, status_code=P.STATUS_ERROR,
                        status_message="InternalServerError: Error code: 500",
                        events=[P.event("exception", P.T0 + 119 * P.MS, {
                            "exception.type": "InternalServerError",
                            "exception.message": "Error code: 500 - {'type': 'error'}",
                            "exception.stacktrace": "Traceback ...", "exception.escaped": "False"})])  # fmt: skip
    streamed = P.make_span("chat claude-haiku-4-5", {"error.type": "InternalServerError"}, duration_ms=90,
                           status_code=P.STATUS_ERROR,
                           events=[P.event("exception", P.T0 + 89 * P.MS,
                                           {"exception.type": "InternalServerError"})])  # fmt: skip
    for span in (plain, streamed):
        row = one_call(span, scope="openlit.instrumentation.anthropic")
        assert (row.status, row.error_type, row.operation) == ("error", "InternalServerError", "chat")
        assert (row.model, row.request_model, row.provider) == (HAIKU, HAIKU, "anthropic")
        assert not row.usage_missing and row.cost_usd == 0.0


@pytest.mark.parametrize(
    ("name", "scope", "kind"),
    [
        ("chat claude-haiku-4-5", "my_app.handlers", P.CLIENT),  # not OpenLIT's scope
        ("chat claude-haiku-4-5", "openlit.instrumentation.anthropic", P.INTERNAL),  # not a client call
        ("invoke_agent triage", "openlit.instrumentation.crewai", P.CLIENT),  # not an inference operation
        ("chat", "openlit.instrumentation.anthropic", P.CLIENT),  # no model
        ("chat with the user", "openlit.instrumentation.anthropic", P.CLIENT),  # not "{operation} {model}"
    ],
)
def test_the_openlit_failed_call_rule_is_narrow(name: str, scope: str, kind: int) -> None:
    batch = run(P.make_span(name, {}, kind=kind, status_code=P.STATUS_ERROR), scope=scope)
    assert batch.llm_calls == [] and len(batch.spans) == 1


def test_openlit_anthropic_usage_puts_the_cache_on_top_of_input() -> None:
    """openlit 1.45.0 instrumentation/anthropic/utils.py: ``gen_ai.usage.input_tokens`` = Anthropic's own
    ``input_tokens`` (line 501/893, "exclusive of cache read / creation tokens"), next to the current OTel cache
    names; ``telemetry.sdk.name`` = ``openlit`` on the span (__helpers.common_span_attributes). The uncached input
    is larger than the cache here, so the counts alone cannot tell."""
    span = P.make_span("chat claude-haiku-4-5", {
        "telemetry.sdk.name": "openlit", "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
        "server.address": "api.anthropic.com", "server.port": 443, "gen_ai.request.model": HAIKU,
        "gen_ai.response.model": HAIKU_DATED, "gen_ai.request.stream": False,
        "gen_ai.server.time_to_first_token": 2.9, "gen_ai.response.finish_reasons": ["end_turn"],
        "gen_ai.usage.input_tokens": 12_000, "gen_ai.usage.output_tokens": 400,
        "gen_ai.client.token.usage": 12_400, "gen_ai.usage.cost": 0.0173,
        "gen_ai.usage.cache_read.input_tokens": 8_000, "gen_ai.usage.cache_creation.input_tokens": 2_000,
    }, duration_ms=3000)  # fmt: skip
    row = one_call(span, scope="openlit.instrumentation.anthropic")
    assert tokens(row) == (22_000, 400, 8_000, 2_000, 0, 0)
    # 12,000 × 1e-6 + 8,000 × 1e-7 + 2,000 × 1.25e-6 + 400 × 5e-6
    assert row.cost_usd == pytest.approx(0.0173, abs=1e-9)
    assert (row.streamed, row.ttft_ms, row.finish_reason) == (False, 0, "end_turn")
    # the same counts from another library's span (current OTel names) stay "included"
    other = one_call(P.make_span("chat", {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": HAIKU,
        "gen_ai.usage.input_tokens": 12_000, "gen_ai.usage.output_tokens": 400,
        "gen_ai.usage.cache_read.input_tokens": 8_000, "gen_ai.usage.cache_creation.input_tokens": 2_000,
    }))  # fmt: skip
    assert tokens(other) == (12_000, 400, 8_000, 2_000, 0, 0)


# --- provider inference -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("model", "server_address", "provider"),
    [
        ("gpt-4o-mini-2024-07-18", "", "openai"),
        ("o3-mini", "", "openai"),
        ("o1", "", "openai"),
        ("o4-mini-2025-04-16", "", "openai"),
        ("text-embedding-3-small", "", "openai"),
        ("claude-haiku-4-5-20251001", "", "anthropic"),
        ("gemini-2.5-flash", "", "gcp.gemini"),
        ("models/gemini-2.0-flash", "", "gcp.gemini"),
        ("mistral-large-latest", "", "mistral_ai"),
        ("ministral-8b-latest", "", "mistral_ai"),
        ("command-r-plus", "", "cohere"),
        ("grok-3", "", "x_ai"),
        ("deepseek-chat", "", "deepseek"),
        ("anthropic.claude-3-5-haiku-20241022-v1:0", "", "aws.bedrock"),
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", "", "aws.bedrock"),
        ("GPT-4o", "", "openai"),
        ("llama-3.3-70b-versatile", "api.groq.com", "groq"),  # the host that served the call wins
        ("gpt-4o", "my-resource.openai.azure.com", "azure.ai.openai"),
        ("claude-3-5-haiku", "bedrock-runtime.us-east-1.amazonaws.com", "aws.bedrock"),
        ("", "api.anthropic.com", "anthropic"),
        ("", "generativelanguage.googleapis.com", "gcp.gemini"),
        ("gemini-2.5-pro", "us-central1-aiplatform.googleapis.com", "gcp.vertex_ai"),
        ("text-embedding-004", "", ""),  # Google's, not OpenAI's
        ("o1x", "", ""),
        ("openai/gpt-4o", "", ""),  # a gateway's name (OpenRouter): it serves many providers
        ("llama3", "localhost", ""),
        ("", "", ""),
    ],
)
def test_infer_provider(model: str, server_address: str, provider: str) -> None:
    assert infer_provider(model, server_address) == provider


def test_a_span_without_provider_gets_the_inferred_one_and_a_named_one_wins() -> None:
    span = P.make_span("chat", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                                "server.address": "api.openai.com", "gen_ai.usage.input_tokens": 5,
                                "gen_ai.usage.output_tokens": 1})  # fmt: skip
    assert one_call(span).provider == "openai"
    named = P.make_span("chat", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                                 "gen_ai.provider.name": "azure.ai.openai", "gen_ai.usage.input_tokens": 5,
                                 "gen_ai.usage.output_tokens": 1})  # fmt: skip
    assert one_call(named).provider == "azure.ai.openai"
