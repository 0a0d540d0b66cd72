"""Realistic OTLP trace payloads, one builder per instrumentation convention.

Each ``*_span`` builder returns a protobuf ``Span`` carrying the attribute set its instrumentation emits (names,
value types and shapes as those libraries send them), with deterministic ids and times so tests can assert
whole rows. :func:`make_request` wraps spans in an ``ExportTraceServiceRequest`` with a realistic resource;
:func:`to_otlp_json` turns one into OTLP/JSON the way a JSON exporter sends it (hex ids, camelCase keys, int64 as
strings); :func:`genai_batch` builds the 512-span batches the benchmark uses.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from datetime import datetime, timezone
from typing import Any, Iterable

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

_HOUR_NS = 3600 * 10**9
# Start of the previous hour, in ns: whole seconds (so times are exact in µs and ms) and recent, so rows written by
# integration tests are not dropped by the tables' retention TTLs.
T0 = (time.time_ns() // _HOUR_NS - 1) * _HOUR_NS
T0_US = T0 // 1000
MS = 1_000_000  # ns per ms


def iso(ns: int, *, tz: bool = True) -> str:
    """ISO 8601 text of a Unix time in ns (µs precision), as Langfuse sends timestamps."""
    seconds, rest = divmod(ns, 10**9)
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc).replace(microsecond=rest // 1000)
    return moment.isoformat() if tz else moment.replace(tzinfo=None).isoformat()

INTERNAL, SERVER, CLIENT = Span.SPAN_KIND_INTERNAL, Span.SPAN_KIND_SERVER, Span.SPAN_KIND_CLIENT
STATUS_UNSET, STATUS_OK, STATUS_ERROR = Status.STATUS_CODE_UNSET, Status.STATUS_CODE_OK, Status.STATUS_CODE_ERROR

_trace_numbers = itertools.count(0x4BF92F3577B34DA6A3CE929D0E0E4736)
_span_numbers = itertools.count(0x00F067AA0BA902B7)


def new_trace_id() -> bytes:
    return next(_trace_numbers).to_bytes(16, "big")


def new_span_id() -> bytes:
    return next(_span_numbers).to_bytes(8, "big")


# --- protobuf building blocks ------------------------------------------------------------------------------------
def any_value(value: Any) -> AnyValue:
    if value is None:
        return AnyValue()  # nothing set: receivers must cope
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, str):
        return AnyValue(string_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, (list, tuple)):
        return AnyValue(array_value=ArrayValue(values=[any_value(v) for v in value]))
    if isinstance(value, dict):
        return AnyValue(kvlist_value=KeyValueList(values=[kv(k, v) for k, v in value.items()]))
    raise TypeError(f"no AnyValue for {type(value).__name__}")


def kv(key: str, value: Any) -> KeyValue:
    return KeyValue(key=key, value=any_value(value))


def key_values(attributes: dict[str, Any]) -> list[KeyValue]:
    return [kv(k, v) for k, v in attributes.items()]


def event(name: str, time_ns: int, attributes: dict[str, Any] | None = None) -> Span.Event:
    return Span.Event(name=name, time_unix_nano=time_ns, attributes=key_values(attributes or {}))


def make_span(
    name: str,
    attributes: dict[str, Any],
    *,
    trace_id: bytes | None = None,
    span_id: bytes | None = None,
    parent_span_id: bytes = b"",
    start: int = T0,
    duration_ms: float = 1000.0,
    kind: int = CLIENT,
    status_code: int = STATUS_UNSET,
    status_message: str = "",
    events: Iterable[Span.Event] = (),
) -> Span:
    return Span(
        trace_id=trace_id if trace_id is not None else new_trace_id(),
        span_id=span_id if span_id is not None else new_span_id(),
        parent_span_id=parent_span_id,
        name=name,
        kind=kind,
        start_time_unix_nano=start,
        end_time_unix_nano=start + int(duration_ms * MS),
        attributes=key_values(attributes),
        events=list(events),
        status=Status(code=status_code, message=status_message),
    )


DEFAULT_RESOURCE = {
    "service.name": "support-bot",
    "service.version": "1.4.2",
    "deployment.environment.name": "production",
    "telemetry.sdk.language": "python",
    "telemetry.sdk.name": "opentelemetry",
    "telemetry.sdk.version": "1.45.2",
}


def make_request(
    *spans: Span,
    resource: dict[str, Any] | None = None,
    scope: str = "opentelemetry.instrumentation.openai_v2",
    scope_version: str = "2.3b0",
) -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=key_values(DEFAULT_RESOURCE if resource is None else resource)),
                scope_spans=[ScopeSpans(scope={"name": scope, "version": scope_version}, spans=list(spans))],
            )
        ]
    )


# --- OTLP/JSON ---------------------------------------------------------------------------------------------------
_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else _hex_ids(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def to_otlp_dict(request: ExportTraceServiceRequest, *, integer_enums: bool = True) -> dict[str, Any]:
    """OTLP/JSON as a dict: protobuf's JSON mapping (camelCase, int64 as strings) with hex trace/span ids."""
    return _hex_ids(MessageToDict(request, use_integers_for_enums=integer_enums))


def to_otlp_json(request: ExportTraceServiceRequest, *, integer_enums: bool = True) -> bytes:
    return json.dumps(to_otlp_dict(request, integer_enums=integer_enums)).encode()


# --- conventions -------------------------------------------------------------------------------------------------
OPENAI_CHAT_ID = "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT"


def otel_genai_span(**extra: Any) -> Span:
    """OTel GenAI semantic conventions, current names (v1.41: provider.name, cache/reasoning tokens, TTFC).

    A streamed OpenAI chat call with a prompt-cache hit, as opentelemetry-instrumentation-genai-openai emits it.
    """
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 512,
        "gen_ai.request.stream": True,
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.id": OPENAI_CHAT_ID,
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.input_tokens": 1200,
        "gen_ai.usage.output_tokens": 151,
        "gen_ai.usage.cache_read.input_tokens": 1024,
        "gen_ai.usage.reasoning.output_tokens": 0,
        "gen_ai.response.time_to_first_chunk": 0.25,
        "server.address": "api.openai.com",
        "server.port": 443,
    }
    attributes.update(extra)
    return make_span("chat gpt-4o-mini", attributes, duration_ms=1500, kind=CLIENT)


def otel_genai_deprecated_span(**extra: Any) -> Span:
    """The same call with the deprecated names older instrumentations still emit (gen_ai.system,
    gen_ai.usage.prompt_tokens/completion_tokens)."""
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 512,
        "gen_ai.request.stream": True,
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.id": OPENAI_CHAT_ID,
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.prompt_tokens": 1200,
        "gen_ai.usage.completion_tokens": 151,
        "gen_ai.usage.cache_read.input_tokens": 1024,
        "gen_ai.usage.reasoning.output_tokens": 0,
        "gen_ai.response.time_to_first_chunk": 0.25,
        "server.address": "api.openai.com",
        "server.port": 443,
    }
    attributes.update(extra)
    return make_span("chat gpt-4o-mini", attributes, duration_ms=1500, kind=CLIENT)


SDK_USER_HASH = "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"


def sdk_span(**extra: Any) -> Span:
    """What the inferwatch SDK emits: current GenAI names plus its inferwatch.* extras."""
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "gen_ai.request.max_tokens": 1024,
        "gen_ai.request.stream": True,
        "gen_ai.response.model": "claude-sonnet-4-5-20250929",
        "gen_ai.response.id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "gen_ai.response.finish_reasons": ["end_turn"],
        "gen_ai.usage.input_tokens": 5300,
        "gen_ai.usage.output_tokens": 401,
        "gen_ai.usage.cache_read.input_tokens": 4000,
        "gen_ai.usage.cache_creation.input_tokens": 1000,
        "gen_ai.usage.reasoning.output_tokens": 120,
        "inferwatch.feature": "search",
        "inferwatch.user.hash": SDK_USER_HASH,
        "inferwatch.prompt.template": "answer",
        "inferwatch.prompt.version": "3",
        "inferwatch.experiment": "prompt-v3",
        "inferwatch.variant": "B",
        "inferwatch.streamed": True,
        "inferwatch.first_token.unix_nano": T0 + 600 * MS,
        "inferwatch.tool_calls": 2,
        "inferwatch.tool_call_failures": 1,
        "inferwatch.response.chars": 1604,
        "inferwatch.decode.tokens_per_second": 285.7,
    }
    attributes.update(extra)
    return make_span("chat claude-sonnet-4-5", attributes, duration_ms=2000, kind=CLIENT)


def openinference_span(**extra: Any) -> Span:
    """OpenInference (Arize Phoenix), as openinference-instrumentation-openai emits a streamed chat call:
    flattened messages, JSON invocation parameters, and the "First Token Stream Event"."""
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-2024-08-06",
        "llm.provider": "openai",
        "llm.system": "openai",
        "llm.invocation_parameters": json.dumps(
            {"model": "gpt-4o", "temperature": 0.1, "stream": True, "stream_options": {"include_usage": True}}
        ),
        "input.value": json.dumps(
            {"messages": [{"role": "user", "content": "My email is alice@example.com"}], "model": "gpt-4o"}
        ),
        "input.mime_type": "application/json",
        "output.value": "Thanks, I will write to alice@example.com.",
        "output.mime_type": "text/plain",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "You are a helpful support agent.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "My email is alice@example.com",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Thanks, I will write to alice@example.com.",
        "llm.token_count.prompt": 2000,
        "llm.token_count.completion": 300,
        "llm.token_count.total": 2300,
        "llm.token_count.prompt_details.cache_read": 1500,
        "llm.token_count.completion_details.reasoning": 64,
        "session.id": "sess-42",
    }
    attributes.update(extra)
    return make_span(
        "ChatCompletion",
        attributes,
        duration_ms=3000,
        kind=INTERNAL,
        status_code=STATUS_OK,
        events=[event("First Token Stream Event", T0 + 400 * MS)],
    )


def traceloop_openai_span(**extra: Any) -> Span:
    """OpenLLMetry/Traceloop legacy attributes for a non-streamed OpenAI chat call that hit max_tokens.
    OpenAI reports cached tokens inside prompt_tokens."""
    attributes = {
        "llm.request.type": "chat",
        "gen_ai.system": "OpenAI",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.request.max_tokens": 30,
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.response.id": "chatcmpl-AtraceloopXYZ",
        "llm.is_streaming": False,
        "llm.usage.total_tokens": 1330,
        "gen_ai.usage.prompt_tokens": 1300,
        "gen_ai.usage.completion_tokens": 30,
        "gen_ai.usage.cache_read_input_tokens": 1024,
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "You are terse.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": "Call me on 555-010-0199 about order 42",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "Sure, I will call 555-010-0199 about",
        "gen_ai.completion.0.finish_reason": "length",
        "llm.headers": "{'Authorization': 'Bearer sk-proj-abcdefghijklmnopqrstuvwxyz012345'}",
        "traceloop.workflow.name": "support_bot",
        "traceloop.entity.path": "answer_question",
        "traceloop.association.properties.tenant": "acme",
    }
    attributes.update(extra)
    return make_span("openai.chat", attributes, duration_ms=900, kind=CLIENT)


def traceloop_anthropic_span(**extra: Any) -> Span:
    """Legacy Traceloop names with Anthropic-style usage: cache reads and writes on top of input tokens."""
    attributes = {
        "llm.request.type": "completion",
        "gen_ai.system": "Anthropic",
        "gen_ai.request.model": "claude-3-5-sonnet-20241022",
        "gen_ai.response.model": "claude-3-5-sonnet-20241022",
        "gen_ai.response.id": "msg_01Aq9w938a90dw8q",
        "gen_ai.usage.prompt_tokens": 100,
        "gen_ai.usage.completion_tokens": 50,
        "gen_ai.usage.cache_read_input_tokens": 1000,
        "gen_ai.usage.cache_creation_input_tokens": 200,
        "llm.response.stop_reason": "end_turn",
    }
    attributes.update(extra)
    return make_span("anthropic.chat", attributes, duration_ms=1200, kind=CLIENT)


def traceloop_workflow_span(**extra: Any) -> Span:
    """A Traceloop @workflow decorator span: not an LLM call; its entity input/output are content."""
    attributes = {
        "traceloop.span.kind": "workflow",
        "traceloop.workflow.name": "support_bot",
        "traceloop.entity.name": "support_bot",
        "traceloop.entity.input": json.dumps({"args": ["ssn 123-45-6789"], "kwargs": {}}),
        "traceloop.entity.output": json.dumps("done"),
    }
    attributes.update(extra)
    return make_span("support_bot.workflow", attributes, duration_ms=2500, kind=INTERNAL)


def langfuse_span(**extra: Any) -> Span:
    """A Langfuse (OTel-based SDK v3) generation: JSON usage details with Langfuse's additive keys, the
    completion start time as a JSON-quoted ISO string, JSON input/output."""
    attributes = {
        "langfuse.observation.type": "generation",
        "langfuse.observation.model.name": "claude-sonnet-4-5",
        "langfuse.observation.model.parameters": json.dumps({"temperature": 0, "max_tokens": 1024}),
        "langfuse.observation.usage_details": json.dumps(
            {"input": 300, "output": 120, "cache_read_input_tokens": 2000, "input_cache_creation": 500}
        ),
        "langfuse.observation.completion_start_time": json.dumps(iso(T0 + 450 * MS)),
        "langfuse.observation.input": json.dumps([{"role": "user", "content": "call me at 555-010-0199"}]),
        "langfuse.observation.output": json.dumps({"role": "assistant", "content": "Will do."}),
        "langfuse.observation.metadata.route": "/chat",
        "langfuse.observation.prompt.name": "support",
        "langfuse.observation.prompt.version": 7,
        "langfuse.trace.name": "chat-turn",
        "langfuse.session.id": "sess-9",
        "langfuse.environment": "production",
    }
    attributes.update(extra)
    return make_span("anthropic-generation", attributes, duration_ms=1450, kind=INTERNAL)


def vercel_do_stream_span(**extra: Any) -> Span:
    """Vercel AI SDK ``ai.streamText.doStream``: ai.* attributes plus the gen_ai.* subset it adds."""
    attributes = {
        "operation.name": "ai.streamText.doStream chat-fn",
        "ai.operationId": "ai.streamText.doStream",
        "ai.model.id": "gpt-4o-mini",
        "ai.model.provider": "openai.chat",
        "ai.telemetry.functionId": "chat-fn",
        "ai.settings.maxRetries": 2,
        "ai.prompt.messages": json.dumps([{"role": "user", "content": [{"type": "text", "text": "hello"}]}]),
        "ai.response.text": "Hi! How can I help?",
        "ai.response.finishReason": "stop",
        "ai.response.msToFirstChunk": 312.5,
        "ai.response.msToFinish": 800.0,
        "ai.response.id": "chatcmpl-vercel1",
        "ai.response.model": "gpt-4o-mini-2024-07-18",
        "ai.usage.promptTokens": 50,
        "ai.usage.completionTokens": 20,
        "gen_ai.system": "openai.chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.id": "chatcmpl-vercel1",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.input_tokens": 50,
        "gen_ai.usage.output_tokens": 20,
    }
    attributes.update(extra)
    return make_span(
        "ai.streamText.doStream",
        attributes,
        duration_ms=800,
        kind=CLIENT,
        events=[event("ai.stream.firstChunk", T0 + 312 * MS, {"ai.response.msToFirstChunk": 312.5})],
    )


def vercel_outer_span(**extra: Any) -> Span:
    """Vercel's outer ``ai.streamText`` span: usage again, but no gen_ai.* model: must not count as a call."""
    attributes = {
        "operation.name": "ai.streamText chat-fn",
        "ai.operationId": "ai.streamText",
        "ai.model.id": "gpt-4o-mini",
        "ai.model.provider": "openai.chat",
        "ai.prompt": json.dumps({"prompt": "hello"}),
        "ai.response.text": "Hi! How can I help?",
        "ai.usage.promptTokens": 50,
        "ai.usage.completionTokens": 20,
    }
    attributes.update(extra)
    return make_span("ai.streamText", attributes, duration_ms=850, kind=INTERNAL)


def sentry_span(**extra: Any) -> Span:
    """Sentry's AI monitoring spans (OpenAI integration): TTFT as gen_ai.response.time_to_first_token."""
    attributes = {
        "sentry.op": "gen_ai.chat",
        "sentry.origin": "auto.ai.openai",
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.response.streaming": True,
        "gen_ai.response.time_to_first_token": 0.5,
        "gen_ai.usage.input_tokens": 40,
        "gen_ai.usage.input_tokens.cached": 0,
        "gen_ai.usage.output_tokens": 12,
        "gen_ai.usage.output_tokens.reasoning": 0,
        "gen_ai.usage.total_tokens": 52,
        "gen_ai.request.messages": json.dumps([{"role": "user", "content": "ping"}]),
        "gen_ai.response.text": json.dumps(["pong"]),
    }
    attributes.update(extra)
    return make_span("chat gpt-4o", attributes, duration_ms=700, kind=CLIENT)


def openlit_span(**extra: Any) -> Span:
    """OpenLIT: TTFT as the gen_ai.server.time_to_first_token span attribute, content in span events."""
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.request.is_stream": True,
        "gen_ai.server.time_to_first_token": 0.125,
        "gen_ai.server.tbt": 0.01,
        "gen_ai.usage.input_tokens": 80,
        "gen_ai.usage.output_tokens": 41,
        "gen_ai.usage.total_tokens": 121,
        "gen_ai.usage.cost": 0.00062,
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.environment": "default",
        "gen_ai.application_name": "support-bot",
    }
    attributes.update(extra)
    return make_span(
        "chat gpt-4o",
        attributes,
        duration_ms=525,
        kind=CLIENT,
        events=[
            event("gen_ai.content.prompt", T0 + 1 * MS, {"gen_ai.prompt": "user: my ssn is 078-05-1120"}),
            event("gen_ai.content.completion", T0 + 520 * MS, {"gen_ai.completion": "I cannot store that."}),
        ],
    )


def retrieval_span(**extra: Any) -> Span:
    attributes = {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": "kb-articles",
        "db.system.name": "qdrant",
        "db.collection.name": "articles",
    }
    attributes.update(extra)
    return make_span("retrieval kb-articles", attributes, duration_ms=35.5, kind=CLIENT, status_code=STATUS_OK)


def tool_span(**extra: Any) -> Span:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup_order",
        "gen_ai.tool.call.id": "call_mszuSIzqtI65i1wAUOE8w5H4",
        "gen_ai.tool.call.arguments": json.dumps({"order_id": 42, "email": "bob@example.org"}),
        "gen_ai.tool.call.result": json.dumps({"status": "shipped"}),
    }
    attributes.update(extra)
    return make_span("execute_tool lookup_order", attributes, duration_ms=12.25, kind=INTERNAL)


def http_server_span(**extra: Any) -> Span:
    attributes = {
        "http.request.method": "POST",
        "url.path": "/chat",
        "http.route": "/chat",
        "http.response.status_code": 500,
        "http.request.header.authorization": ["Bearer sk-proj-abcdefghijklmnopqrstuvwxyz012345"],
        "user_agent.original": "curl/8.5.0",
    }
    attributes.update(extra)
    return make_span(
        "POST /chat",
        attributes,
        duration_ms=2100,
        kind=SERVER,
        status_code=STATUS_ERROR,
        status_message="upstream failed for jane@corp.example",
    )


# --- benchmark batches -------------------------------------------------------------------------------------------
_PII_PROMPT = (
    "Hi, I'm Jane. Reach me at jane.roe@corp.example.org or (555) 010-0199. My SSN is 078-05-1120 and my card "
    "4111 1111 1111 1111 expired. "
)
_FILLER = (
    "Please summarise the attached quarterly report, focusing on revenue growth, churn, and the main risks "
    "the board should know about before the next planning cycle. "
)


def _content(chars: int) -> tuple[str, str]:
    prompt = _PII_PROMPT
    while len(prompt) < chars * 0.6:
        prompt += _FILLER
    completion = "Summary: revenue grew 12% while churn fell. Contact jane.roe@corp.example.org. "
    while len(completion) < chars * 0.4:
        completion += "The main risks are supplier concentration and FX exposure. "
    prompt_json = json.dumps([{"role": "user", "parts": [{"type": "text", "content": prompt}]}])
    completion_json = json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": completion}], "finish_reason": "stop"}]
    )
    return prompt_json, completion_json


def genai_batch(n: int = 512, content_chars: int = 0) -> ExportTraceServiceRequest:
    """``n`` GenAI chat spans as the inferwatch SDK sends them (current names + inferwatch.* extras), optionally
    with about ``content_chars`` characters of prompt+completion (with PII) per span."""
    content = _content(content_chars) if content_chars else None
    spans = []
    for i in range(n):
        start = T0 + i * 10 * MS
        extra: dict[str, Any] = {
            "inferwatch.feature": ("search", "chat", "summarise")[i % 3],
            "inferwatch.first_token.unix_nano": start + 600 * MS,
        }
        if content is not None:
            extra["gen_ai.input.messages"], extra["gen_ai.output.messages"] = content
        span = sdk_span(**extra)
        span.start_time_unix_nano = start
        span.end_time_unix_nano = start + 2000 * MS
        spans.append(span)
    return make_request(*spans, scope="inferwatch", scope_version="0.1.0")
