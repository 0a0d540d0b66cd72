"""What one span's row is built from: read once from the OTLP span, then handed to the row builders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class SpanFacts:
    """One valid span, read: ids as hex, its attributes, its operation and what its events said."""

    index: int  # position of the span in the request (for error messages)
    span: Any  # the OTLP span (name, kind, status are read from it)
    attrs: dict[str, Any]  # span attributes as Python values
    attributes: dict[str, str]  # the row's attributes map (span, resource and scope keys, capped)
    operation: str  # gen_ai.operation.name or the convention's span kind mapped to one; '' when unknown
    service: str  # the resource's service.name
    trace_id: str
    span_id: str
    parent_span_id: str  # '' for a root span
    start_ns: int
    end_ns: int
    exception_type: str | None  # exception.type of the first exception event
    first_token_ns: int | None  # absolute time of the first token, from a first-token event
