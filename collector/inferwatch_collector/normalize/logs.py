"""OTLP log records → prompt logs and finish reasons: the GenAI events joined to their span.

The OTel GenAI conventions (and OpenLIT, and the contrib instrumentations with content capture on) send prompts and
completions as log records, not span attributes. A record's event name is its ``event_name`` field, or the older
``event.name`` attribute. Read here:

* ``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message``: one
  input message each; the body is a map (``{"content": ..., "role": ..., "tool_calls": ...}``), the role defaults to
  the event's;
* ``gen_ai.choice``: one output message (``{"index", "finish_reason", "message": {...}}``) and a finish reason;
* ``gen_ai.client.inference.operation.details``: the whole call, as attributes ``gen_ai.input.messages``,
  ``gen_ai.output.messages``, ``gen_ai.system_instructions`` (read like the same attributes on a span) and
  ``gen_ai.response.finish_reasons``.

The events of one span (same ``trace_id``/``span_id``) in one request become one :class:`PromptLogRow`, built and
redacted by the span path's own code (:func:`.content.content_row`): input messages as ``gen_ai.input.messages``,
choices as ``gen_ai.output.messages``. Finish reasons are returned per ``(trace_id hex, span_id hex)`` for whoever
can patch the span's LLM call (redacted like every text stored outside prompt logs). Nothing else of a record is
stored: its other attributes and its body are read, never kept. Every record is counted: other records (not
``gen_ai.*`` events) are dropped (``not_genai``), GenAI events without a span id cannot be joined (``no_span``),
content with capture off is dropped (``content_capture_off``), events without content (an emitter with capture off)
give nothing (``no_content``).
A record with ids of the wrong length, or a time outside the retention window, is rejected (``rejected``, with a
message). Pure: no I/O, never raises for a bad record.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from ..conventions import CONTENT_EXACT
from ..otlp_decode import any_value_to_python
from ..redaction import DEFAULT_REDACTOR, Redactor
from ..rows import PromptLogRow
from .attributes import scan_standard
from .scrubber import Scrubber, scrubber_for
from .batch import Errors
from .content import Found, content_row
from .limits import DEFAULT_RETENTION_DAYS, MAX_FUTURE_SECONDS
from .values import as_str, finish_reason

#: Message events → the role of their message when the body names none.
MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
GENAI_EVENTS = frozenset({*MESSAGE_EVENTS, CHOICE_EVENT, DETAILS_EVENT})
EVENT_NAME_ATTRIBUTE = "event.name"  # where the event name was before LogRecord.event_name

_INPUT = CONTENT_EXACT["gen_ai.input.messages"]
_OUTPUT = CONTENT_EXACT["gen_ai.output.messages"]
_MODEL_KEYS = ("gen_ai.request.model", "gen_ai.response.model")
_ZERO_TRACE, _ZERO_SPAN = bytes(16), bytes(8)

#: (trace_id hex, span_id hex) → finish reason
FinishReasons = dict[tuple[str, str], str]


@dataclass(slots=True)
class NormalizedLogs:
    """What one logs request gave: prompt-log rows (one per span), finish reasons, and counts of every record.

    ``received`` = ``stored`` + ``rejected`` + the sum of ``dropped``; ``stored`` counts records whose content is in
    ``prompt_logs``. ``errors`` explains the rejections."""

    prompt_logs: list[PromptLogRow]
    finish_reasons: FinishReasons
    received: int
    stored: int
    rejected: int
    dropped: dict[str, int]
    errors: list[str]
    redactions: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class _SpanContent:
    """The GenAI events of one span, gathered."""

    start_ns: int
    inputs: list[Any] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)
    found: Found = field(default_factory=dict)  # from operation-details attributes
    model: str = ""
    records: int = 0  # records with content


def normalize_logs(
    request: ExportLogsServiceRequest,
    project_id: str,
    *,
    content_capture: str = "redacted",
    redactor: Redactor = DEFAULT_REDACTOR,
    retention_days: int = DEFAULT_RETENTION_DAYS,
    now_ns: int | None = None,
) -> NormalizedLogs:
    """Turn one OTLP logs request into prompt-log rows and finish reasons (see the module docstring).

    ``content_capture``: ``"redacted"`` stores redacted content, ``"off"`` drops it (finish reasons are kept: they
    are not content). Records timed more than ``retention_days`` before ``now_ns`` or more than
    :data:`.limits.MAX_FUTURE_SECONDS` after it are rejected; a record without a time gets ``now_ns``."""
    if content_capture not in ("off", "redacted"):
        raise ValueError(f"content_capture must be 'off' or 'redacted', not {content_capture!r}")
    capture = content_capture == "redacted"
    now = time.time_ns() if now_ns is None else now_ns
    oldest, newest = now - retention_days * 86_400 * 10**9, now + MAX_FUTURE_SECONDS * 10**9
    spans: dict[tuple[str, str], _SpanContent] = {}
    reasons: FinishReasons = {}
    dropped: Counter[str] = Counter()
    errors = Errors()
    scrubber = scrubber_for(redactor)
    received = rejected = 0
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                index = received
                received += 1
                name = record.event_name or _event_name_attribute(record)
                if name not in GENAI_EVENTS:
                    dropped["not_genai"] += 1
                    continue
                trace_id, span_id = bytes(record.trace_id), bytes(record.span_id)
                if trace_id in (b"", _ZERO_TRACE) or span_id in (b"", _ZERO_SPAN):
                    dropped["no_span"] += 1
                    continue
                ts = record.time_unix_nano or record.observed_time_unix_nano or now
                problem = _problem(trace_id, span_id, ts, oldest, newest)
                if problem is not None:
                    rejected += 1
                    errors.add(f"log record {index}: {problem}")
                    continue
                key = (trace_id.hex(), span_id.hex())
                try:
                    had_content = _read_event(name, record, key, spans, reasons, ts, capture, scrubber)
                except Exception as exc:  # an input we did not foresee: lose the record, not the request
                    rejected += 1
                    errors.add(f"log record {index}: could not be read: {type(exc).__name__}: {exc}")
                    continue
                if not had_content:
                    dropped["content_capture_off" if not capture else "no_content"] += 1
    redactions: dict[str, int] = {}
    reasons = {key: scrubber.text(reason, redactions) for key, reason in reasons.items()}  # they patch llm_calls
    rows, stored = [], 0
    for (trace_hex, span_hex), content in spans.items():
        row = content_row(_found(content), project_id, content.start_ns, trace_hex, span_hex, content.model, "",
                          redactor, redactions)
        if row is None:  # content that redacts/renders to nothing
            dropped["no_content"] += content.records
            continue
        rows.append(row)
        stored += content.records
    return NormalizedLogs(rows, reasons, received, stored, rejected, dict(dropped), errors.finish(), redactions)


def _event_name_attribute(record: Any) -> str:
    for kv in record.attributes:
        if kv.key == EVENT_NAME_ATTRIBUTE:
            return kv.value.string_value
    return ""


def _problem(trace_id: bytes, span_id: bytes, ts: int, oldest: int, newest: int) -> str | None:
    if len(trace_id) != 16:
        return f"trace_id must be 16 bytes, got {len(trace_id)}"
    if len(span_id) != 8:
        return f"span_id must be 8 bytes, got {len(span_id)}"
    if ts < oldest:
        return "time_unix_nano is older than the prompt retention window"
    if ts > newest:
        return "time_unix_nano is too far in the future"
    return None


def _read_event(name: str, record: Any, key: tuple[str, str], spans: dict[tuple[str, str], _SpanContent],
                reasons: FinishReasons, ts: int, capture: bool, scrubber: Scrubber) -> bool:
    """Gather one GenAI event into its span's content and finish reason; True when it carried content that was
    kept."""
    attrs, _, found = scan_standard(record.attributes, capture, scrubber)
    body = any_value_to_python(record.body)
    if name == CHOICE_EVENT:
        reason = finish_reason(body.get("finish_reason")) if isinstance(body, dict) else ""
        if reason:
            reasons.setdefault(key, reason)
        message = _choice_message(body)
        inputs, outputs = [], [message] if message else []
    elif name == DETAILS_EVENT:
        reason = finish_reason(attrs.get("gen_ai.response.finish_reasons")) or _output_reason(attrs)
        if reason:
            reasons.setdefault(key, reason)
        inputs, outputs = [], []
    else:
        message = _input_message(MESSAGE_EVENTS[name], body)
        inputs, outputs = [message] if message else [], []
    if not capture or not (inputs or outputs or found):
        return False
    content = spans.get(key)
    if content is None:
        content = spans[key] = _SpanContent(ts)
    content.start_ns = min(content.start_ns, ts)
    content.inputs.extend(inputs)
    content.outputs.extend(outputs)
    for code, items in (found or {}).items():
        content.found.setdefault(code, []).extend(items)
    content.model = content.model or next((as_str(attrs[k]) for k in _MODEL_KEYS if attrs.get(k)), "")
    content.records += 1
    return True


def _input_message(role: str, body: Any) -> dict[str, Any] | None:
    """An input message from a message event's body, or None when it carries no content."""
    if isinstance(body, str):
        return {"role": role, "content": body} if body else None
    if not isinstance(body, dict) or not any(v not in (None, "", [], {}) for k, v in body.items() if k != "role"):
        return None
    return {"role": as_str(body.get("role")) or role, **{k: v for k, v in body.items() if k != "role"}}


def _choice_message(body: Any) -> dict[str, Any] | None:
    """An output message from a ``gen_ai.choice`` body, or None when it carries no content."""
    if not isinstance(body, dict):
        return None
    message = body.get("message")
    if isinstance(message, str):
        message = {"content": message}
    if not isinstance(message, dict) or not any(v not in (None, "", [], {}) for k, v in message.items()
                                                if k != "role"):
        return None
    out: dict[str, Any] = {"role": as_str(message.get("role")) or "assistant"}
    out.update((k, v) for k, v in message.items() if k != "role")
    if body.get("finish_reason"):
        out["finish_reason"] = body["finish_reason"]
    return out


def _output_reason(attrs: dict[str, Any]) -> str:
    """The first finish reason among ``gen_ai.output.messages`` (structured or a JSON string)."""
    messages = attrs.get("gen_ai.output.messages")
    if isinstance(messages, str):
        try:
            messages = orjson.loads(messages)
        except orjson.JSONDecodeError:
            return ""
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict) and message.get("finish_reason"):
                return finish_reason(message["finish_reason"])
    return ""


def _found(content: _SpanContent) -> Found:
    """The span's content as the span path's content sources: messages from message/choice events as
    ``gen_ai.input.messages``/``gen_ai.output.messages`` (after any the operation-details event gave)."""
    found = {code: list(items) for code, items in content.found.items()}
    if content.inputs:
        found.setdefault(_INPUT, []).append(("gen_ai.input.messages", content.inputs))
    if content.outputs:
        found.setdefault(_OUTPUT, []).append(("gen_ai.output.messages", content.outputs))
    return found
