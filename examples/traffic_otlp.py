"""The demo traffic as OTLP: :func:`build_request` encodes :class:`~examples.traffic_model.TrafficModel`'s calls
into an ``ExportTraceServiceRequest``.

Spans carry the OTel GenAI attributes (current names, from :mod:`inferwatch.semconv`) plus our ``inferwatch.*``
extras, as the SDK emits them: span name ``"{operation} {model}"``, kind CLIENT, under an app span
(``handle /search``), sometimes after a retrieval span, tool spans after tool calls. The instrumentation scope is
``inferwatch-demo-traffic``, not the SDK's, so the collector treats any content as unredacted."""

from __future__ import annotations

import time

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from inferwatch import semconv as sc

from .traffic_model import LlmCall, TrafficModel, shift_call

SCOPE_NAME = "inferwatch-demo-traffic"
SCOPE_VERSION = "0.1.0"

_KIND_CLIENT = Span.SpanKind.SPAN_KIND_CLIENT
_STATUS_OK = Status.StatusCode.STATUS_CODE_OK
_STATUS_ERROR = Status.StatusCode.STATUS_CODE_ERROR


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
    request, spans = _new_request(model)
    content_pool = model.content_pool() if with_content else None
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
            shift_call(call, offset)
            _encode_call(model, spans.add(), call, content_pool)
        if calls_out is not None:
            calls_out.extend(calls)
        remaining -= len(calls)
    return request


def encode_calls(model: TrafficModel, calls: list[LlmCall], *, with_content: bool = False
                 ) -> ExportTraceServiceRequest:
    """An OTLP trace export of ``calls`` as they are (already placed in time), one span each, no app spans.

    For generators that make their own calls (the alert-quality simulator): the span encoding is the demo's.
    """
    request, spans = _new_request(model)
    content_pool = model.content_pool() if with_content else None
    for call in calls:
        _encode_call(model, spans.add(), call, content_pool)
    return request


def _new_request(model: TrafficModel):
    """An empty export with the demo's resource and scope; returns it and its span list to fill."""
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
    return request, ss.spans


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
