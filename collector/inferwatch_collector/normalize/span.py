"""One OTLP span → one row (:class:`LlmCallRow` or :class:`SpanRow`), plus a PromptLogRow when it has content.

Validation: trace_id must be 16 non-zero bytes, span_id 8 non-zero bytes, parent_span_id empty or 8 bytes, start
time set and end >= start, and the start inside the window the tables keep: not older than ``retention_days``
(ClickHouse's TTL would drop the row right after the insert) and not more than MAX_FUTURE_SECONDS ahead of now
(it would pollute future buckets), and a duration of at most MAX_DURATION_NS (49 days: ``latency_ms`` is UInt32;
an end at 2^64 ns would fail the insert of the whole batch). Otherwise the span is rejected with a message naming
the reason.

A span is an LLM call by the first rule that applies:

1. ``gen_ai.operation.name`` present: LLM iff it is an inference operation (``chat``, ``text_completion``,
   ``generate_content``, ``embeddings``, ...). ``execute_tool``, ``invoke_agent``, ``retrieval`` ... are spans.
2. OpenInference ``openinference.span.kind`` present: LLM iff ``LLM`` or ``EMBEDDING``.
3. Langfuse ``langfuse.observation.type`` present: LLM iff ``generation`` or ``embedding``.
4. OpenLLMetry/Traceloop ``llm.request.type`` present (``chat``/``completion``/``embedding``/``rerank``): LLM.
5. Traceloop ``traceloop.span.kind`` present (workflow/task/agent/tool): not LLM.
6. ``gen_ai.request.model`` or ``gen_ai.response.model`` set: LLM (older GenAI and Vercel AI SDK
   ``ai.*.doGenerate``/``doStream`` spans; Vercel's outer ``ai.generateText`` span has no ``gen_ai.*`` model and
   stays a span, so a call is never counted twice).
7. OpenLIT's failed call: a CLIENT span of an ``openlit.instrumentation.*`` scope named ``{operation} {model}``
   with an inference operation (``chat claude-3-5-haiku-latest``). OpenLIT sets every ``gen_ai.*`` attribute only
   after the response, so a provider error leaves just this name, the ERROR status and the exception event. Its
   model becomes the request model (``gen_ai.request.model`` in ``attrs``).
8. Otherwise: not LLM.

Time to first token from span events: OpenInference's "First Token Stream Event"; Vercel's ``ai.stream.firstChunk``
(its ``msToFirstChunk``); the first of OpenLLMetry's ``gen_ai.content.completion.chunk`` events (one per streamed
chunk, older ``llm.content.completion.chunk``), unless the span dropped events: the OTel SDK keeps the newest events
past its limit (128), so the first one kept is then not the first chunk.

Another span's ``operation`` is ``gen_ai.operation.name``, or its OpenInference/Langfuse/Traceloop kind mapped to
one (TOOL → ``execute_tool``, RETRIEVER → ``retrieval``, AGENT → ``invoke_agent``, workflow →
``invoke_workflow``). Its name (its model name excepted), operation and ``status_message`` go through the batch's
redactor, like every attribute value (:mod:`.attributes`): names and error texts can quote user input.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from inferwatch import semconv as sc

from ..conventions import (
    ANY_MODEL_KEYS, CONTENT_EVENTS, EXCEPTION_TYPE, INFERENCE_OPERATIONS, LF_LLM_TYPES, LF_SPAN_OPERATION, LF_TYPE,
    MS_TO_FIRST_CHUNK_KEYS, OI_LLM_KINDS, OI_SPAN_KIND, OI_SPAN_OPERATION, OPENINFERENCE_FIRST_TOKEN_EVENT,
    OPENLIT_SCOPE_PREFIX, OTEL_SCOPE_NAME, REQUEST_TYPE_OPERATION, TRACELOOP_CHUNK_EVENTS, TRACELOOP_REQUEST_TYPE,
    TRACELOOP_SPAN_KIND, TRACELOOP_SPAN_OPERATION, VERCEL_FIRST_CHUNK_EVENT,
)  # fmt: skip
from ..rows import SpanRow
from .attributes import add_column_keys, with_scope
from .batch import Batch
from .content import Found, prompt_log_row
from .facts import SpanFacts
from .limits import MAX_ATTRIBUTES, MAX_DURATION_NS, MAX_FUTURE_SECONDS
from .llm_call import llm_call_row
from .values import as_float, as_str, first, first_str

_new_row = tuple.__new__  # NamedTuple rows from a tuple in column order, without a Python-level call
_ZERO_TRACE_ID = bytes(16)
_ZERO_SPAN_ID = bytes(8)
_SPAN_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")
_CLIENT = 3
_STATUS = ("unset", "ok", "error")
#: What a span's events say: (exception type, first-token time in ns, content found so far plus the events')
_Events = tuple["str | None", "int | None", "Found | None"]


def convert(span: Any, index: int, service: str, scope_attrs: dict[str, str], batch: Batch) -> str | None:
    """Add the span's rows to ``batch``; returns why it was rejected, or None. ``scope_attrs``: the resource and
    scope share of its attributes map."""
    trace_bytes = span.trace_id
    span_bytes = span.span_id
    parent = span.parent_span_id
    start_ns = span.start_time_unix_nano
    end_ns = span.end_time_unix_nano
    if (
        len(trace_bytes) != 16 or len(span_bytes) != 8 or (parent and len(parent) != 8) or start_ns == 0
        or end_ns < start_ns or start_ns < batch.oldest_ns or start_ns > batch.newest_ns
        or end_ns - start_ns > MAX_DURATION_NS or trace_bytes == _ZERO_TRACE_ID or span_bytes == _ZERO_SPAN_ID
    ):  # fmt: skip
        return _invalid_span(trace_bytes, span_bytes, parent, start_ns, end_ns, batch)

    attrs, attributes, found = batch.scan(span.attributes, batch.capture)
    operation = attrs.get(sc.GEN_AI_OPERATION_NAME)
    if type(operation) is str:  # rule 1, the usual case
        is_llm = operation in INFERENCE_OPERATIONS
    else:
        is_llm, operation = _classify(attrs, span, scope_attrs)
    if not is_llm:
        add_column_keys(attrs, attributes, batch.scrubber, batch.redactions)
    exception_type = first_token_ns = None
    if span.events:
        exception_type, first_token_ns, found = _read_events(span, start_ns, found, batch)
    if scope_attrs and len(attributes) + len(scope_attrs) <= MAX_ATTRIBUTES:  # the usual case of with_scope
        merged = scope_attrs.copy()
        merged.update(attributes)
        attributes = merged
    else:
        attributes = with_scope(attributes, scope_attrs)
    facts = SpanFacts(
        index, span, attrs, attributes, operation, service, trace_bytes.hex(),
        span_bytes.hex(), parent.hex() if parent and parent != _ZERO_SPAN_ID else "", start_ns, end_ns,
        exception_type, first_token_ns,
    )  # fmt: skip

    if is_llm:
        row = llm_call_row(facts, batch)
        batch.llm_calls.append(row)
    else:
        batch.spans.append(_span_row(facts, batch))
    if found:
        if is_llm:
            model, template = row.model, row.prompt_template
        else:
            model = first_str(attrs.get, ANY_MODEL_KEYS)
            template = as_str(attrs.get(sc.PROMPT_TEMPLATE))
        log = prompt_log_row(facts, found, model, template, batch)
        if log is not None:
            batch.prompt_logs.append(log)
    return None


def _classify(attrs: dict[str, Any], span: Any, scope_attrs: dict[str, str]) -> tuple[bool, str]:
    """(is an LLM call, operation): the rules of the module docstring, in order. Rule 7 adds the model it reads
    from the span name to ``attrs``."""
    get = attrs.get
    operation = get(sc.GEN_AI_OPERATION_NAME)
    if operation is not None:
        if type(operation) is not str:
            operation = as_str(operation)
        return operation in INFERENCE_OPERATIONS, operation
    if (oi_kind := get(OI_SPAN_KIND)) is not None:
        oi_kind = as_str(oi_kind).upper()
        operation = OI_LLM_KINDS.get(oi_kind)
        if operation is not None:
            return True, operation
        return False, OI_SPAN_OPERATION.get(oi_kind, "")
    if (lf_type := get(LF_TYPE)) is not None:
        lf_type = as_str(lf_type).lower()
        operation = LF_LLM_TYPES.get(lf_type)
        if operation is not None:
            return True, operation
        return False, LF_SPAN_OPERATION.get(lf_type, "")
    if (request_type := get(TRACELOOP_REQUEST_TYPE)) is not None:
        request_type = as_str(request_type).lower()
        return True, REQUEST_TYPE_OPERATION.get(request_type, request_type)
    if (tl_kind := get(TRACELOOP_SPAN_KIND)) is not None:
        return False, TRACELOOP_SPAN_OPERATION.get(as_str(tl_kind).lower(), "")
    if get(sc.GEN_AI_REQUEST_MODEL) is not None or get(sc.GEN_AI_RESPONSE_MODEL) is not None:
        return True, "embeddings" if "embed" in span.name.lower() else "chat"
    if span.kind == _CLIENT and scope_attrs.get(OTEL_SCOPE_NAME, "").startswith(OPENLIT_SCOPE_PREFIX):
        operation, _, model = span.name.partition(" ")
        if operation in INFERENCE_OPERATIONS and model and " " not in model:
            attrs[sc.GEN_AI_REQUEST_MODEL] = model
            return True, operation
    return False, ""


def _read_events(span: Any, start_ns: int, found: Found | None, batch: Batch) -> _Events:
    """(exception.type of the first exception event, first-token time from an event, ``found`` plus the content
    events' text when content is captured)."""
    read = batch.read
    capture = batch.capture
    exception_type = None
    first_token_ns = None
    for event in span.events:
        name = event.name
        if name == "exception":
            if exception_type is None:
                exception_type = as_str(read(event.attributes).get(EXCEPTION_TYPE)) or None
        elif name == OPENINFERENCE_FIRST_TOKEN_EVENT:
            if first_token_ns is None:
                first_token_ns = event.time_unix_nano
        elif name in TRACELOOP_CHUNK_EVENTS:
            if first_token_ns is None and not span.dropped_events_count:
                first_token_ns = event.time_unix_nano
        elif name == VERCEL_FIRST_CHUNK_EVENT:
            event_attrs = read(event.attributes)
            ms = as_float(first(event_attrs, MS_TO_FIRST_CHUNK_KEYS))
            if ms is not None and first_token_ns is None:
                first_token_ns = start_ns + int(ms * 1e6 + 0.5)
        elif name in CONTENT_EVENTS and capture:
            attr_name, code = CONTENT_EVENTS[name]
            text = read(event.attributes).get(attr_name)
            if text is not None:
                if found is None:
                    found = {}
                found.setdefault(code, []).append((attr_name, text))
    return exception_type, first_token_ns, found


def _span_row(facts: SpanFacts, batch: Batch) -> SpanRow:
    span = facts.span
    code = span.status.code
    message = span.status.message
    if message:
        message = batch.scrubber.free_text(message, batch.redactions)
    start_ns = facts.start_ns
    end_ns = facts.end_ns
    model = first_str(facts.attrs.get, ANY_MODEL_KEYS)
    name, operation = batch.texts((span.name, facts.operation), keep=(model,) if model else ())
    return _new_row(
        SpanRow,
        (
            batch.project_id,  # project_id
            start_ns // 1000,  # start_time
            end_ns // 1000,  # end_time
            facts.trace_id,  # trace_id
            facts.span_id,  # span_id
            facts.parent_span_id,  # parent_span_id
            facts.service,  # service_name
            name,  # name
            _SPAN_KINDS[span.kind] if 0 <= span.kind < len(_SPAN_KINDS) else "unspecified",  # kind
            operation,  # operation
            _STATUS[code] if 0 <= code < 3 else "unset",  # status
            message,  # status_message
            (end_ns - start_ns) / 1e6,  # duration_ms
            facts.attributes,  # attributes
        ),
    )


def _invalid_span(trace_id: bytes, span_id: bytes, parent: bytes, start_ns: int, end_ns: int,
                  batch: Batch) -> str | None:  # fmt: skip
    """Why a span cannot become a row, or None."""
    if len(trace_id) != 16:
        return f"trace_id must be 16 bytes, got {len(trace_id)}"
    if trace_id == _ZERO_TRACE_ID:
        return "trace_id must not be all zeros"
    if len(span_id) != 8:
        return f"span_id must be 8 bytes, got {len(span_id)}"
    if span_id == _ZERO_SPAN_ID:
        return "span_id must not be all zeros"
    if parent and len(parent) != 8:
        return f"parent_span_id must be empty or 8 bytes, got {len(parent)}"
    if start_ns == 0:
        return "start_time_unix_nano is missing"
    if end_ns < start_ns:
        return "end_time_unix_nano is before start_time_unix_nano"
    if start_ns < batch.oldest_ns:
        return f"start_time {_utc_text(start_ns)} is older than the {batch.retention_days}-day retention"
    if start_ns > batch.newest_ns:
        return f"start_time {_utc_text(start_ns)} is more than {_duration_text(MAX_FUTURE_SECONDS)} in the future"
    if end_ns - start_ns > MAX_DURATION_NS:
        return (f"end_time {_utc_text(end_ns)} is more than {MAX_DURATION_NS // 86_400_000_000_000} days after "
                "start_time, longer than any duration stored")
    return None


def _utc_text(ns: int) -> str:
    try:
        return datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):  # pragma: no cover - fixed64 ns always fit a datetime
        return f"{ns} ns"


def _duration_text(seconds: int) -> str:
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return f"{hours} hour" if hours == 1 else f"{hours} hours"
    return f"{seconds} s"
