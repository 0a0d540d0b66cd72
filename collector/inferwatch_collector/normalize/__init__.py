"""OTLP spans → typed rows: one :class:`LlmCallRow` per LLM call, one :class:`SpanRow` per other span, and a
:class:`PromptLogRow` per span with captured content.

Pure (no I/O): ingest decodes a request (:func:`..otlp_decode.decode_traces_fast`), calls :func:`normalize` and
hands the rows on. Every valid span gives exactly one row; a bad span is rejected alone (counted in ``rejected``,
described in ``errors``) and never raises. Both input types, a :data:`..otlp_decode.FastTraceRequest` and a
standard ``ExportTraceServiceRequest``, give the same rows. A token count out of range is not a rejection: the row
is kept with that count absent, ``usage_missing`` set, and a message in ``errors``.

Attribute names of every convention live in :mod:`..conventions`; how they are read is described where it is done:
:mod:`.span` (validation, LLM-call recognition), :mod:`.llm_call` (derived columns), :mod:`.usage` (token usage),
:mod:`.streaming` (TTFT, streamed, decode speed), :mod:`.content` (prompts and completions), :mod:`.attributes`
(the attributes map). Cost columns are filled by the optional ``price`` function (:data:`Pricer`).
"""

from __future__ import annotations

import time
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ..conventions import SERVICE_NAME
from ..otlp_decode import FastTraceRequest, MalformedPayload
from ..redaction import DEFAULT_REDACTOR, Redactor
from ..user_ids import UserHasher
from .attributes import resource_attributes, scope_attributes
from .batch import Batch, NormalizedBatch, Pricer
from .limits import (
    DEFAULT_RETENTION_DAYS, DROPPED_ATTRIBUTES_KEY, MAX_ATTRIBUTE_CHARS, MAX_ATTRIBUTES, MAX_CONTENT_CHARS,
    MAX_FUTURE_SECONDS, MAX_TOKENS_PER_CALL,
)  # fmt: skip
from .span import convert
from .values import as_str

__all__ = [
    "NormalizedBatch",
    "Pricer",
    "normalize",
    "MAX_ATTRIBUTES",
    "MAX_ATTRIBUTE_CHARS",
    "MAX_CONTENT_CHARS",
    "MAX_TOKENS_PER_CALL",
    "MAX_FUTURE_SECONDS",
    "DEFAULT_RETENTION_DAYS",
    "DROPPED_ATTRIBUTES_KEY",
]


def normalize(
    request: ExportTraceServiceRequest | Any,
    project_id: str,
    *,
    content_capture: str = "redacted",
    redactor: Redactor = DEFAULT_REDACTOR,
    retention_days: int = DEFAULT_RETENTION_DAYS,
    now_ns: int | None = None,
    price: Pricer | None = None,
    user_hasher: UserHasher | None = None,
) -> NormalizedBatch:
    """Turn one OTLP trace request into rows. Never raises for a bad span.

    ``request``: a :data:`..otlp_decode.FastTraceRequest` (fast) or an ``ExportTraceServiceRequest``; same rows.
    ``content_capture``: ``"redacted"`` stores redacted prompts/completions as prompt logs, ``"off"`` drops them.
    Spans starting more than ``retention_days`` before ``now_ns`` (default: the current time) or more than
    :data:`MAX_FUTURE_SECONDS` after it are rejected. ``price`` stamps each LLM call's cost columns (see
    :data:`Pricer`); without it they stay zero and unflagged (the collector always passes one). Every text stored
    outside prompt logs (attribute values, span names, status messages, label columns) goes through ``redactor``,
    and user ids are hashed with ``user_hasher`` (the collector passes the deployment's; None: a process-wide
    random key, so ids are never stored raw)."""
    if content_capture not in ("off", "redacted"):
        raise ValueError(f"content_capture must be 'off' or 'redacted', not {content_capture!r}")
    if retention_days < 1:
        raise ValueError(f"retention_days must be at least 1, not {retention_days!r}")
    batch = Batch(
        project_id, content_capture == "redacted", redactor, isinstance(request, FastTraceRequest),
        time.time_ns() if now_ns is None else now_ns, retention_days, price, user_hasher,
    )  # fmt: skip
    errors = batch.errors
    rejected = 0
    index = -1
    for resource_spans in request.resource_spans:
        resource_problem = None
        try:
            resource = batch.read(resource_spans.resource.attributes)
        except MalformedPayload as exc:  # fast input only: every span of this resource is rejected
            resource, resource_problem = {}, f"resource {exc.message}"
        service = batch.text(as_str(resource.get(SERVICE_NAME))) or "unknown_service"
        base = resource_attributes(resource, batch.scrubber, batch.redactions)
        for scope_spans in resource_spans.scope_spans:
            scope_attrs = scope_attributes(base, scope_spans.scope)
            for span in scope_spans.spans:
                index += 1
                try:
                    problem = resource_problem or convert(span, index, service, scope_attrs, batch)
                except MalformedPayload as exc:  # fast input: an attribute that is not a valid KeyValue
                    problem = exc.message
                except Exception as exc:  # a bug or an input we did not foresee: lose the span, not the batch
                    problem = f"could not be normalised: {type(exc).__name__}: {exc}"
                if problem is not None:
                    rejected += 1
                    errors.add(f"span {index}: {problem}")
    return batch.result(rejected)
