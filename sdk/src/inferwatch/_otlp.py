"""OTLP/protobuf encoding of finished spans, written for the export thread's speed.

Why not the stock encoder (``opentelemetry.exporter.otlp.proto.common``): it builds a protobuf message object per
span, attribute key and value, so at a few thousand calls/s the export thread would fall behind and the queue
fill. Here each span is written straight
to the protobuf wire format, and every attribute (key, value) pair seen before is taken from a bounded cache of
its encoded bytes: most of an LLM span's attributes (operation, provider, model, flags, small counts) repeat from
call to call.

:func:`encode_spans` returns the bytes of an ``ExportTraceServiceRequest``, the same message the stock encoder
builds from the same spans (``tests/sdk/test_export_encoding.py`` compares them): spans grouped by
resource and instrumentation scope, ids, trace state, parent, name, kind, times, attributes, events, links,
status, dropped counts and the parent's is-remote flags. A value the stock encoder cannot encode either
(not a str, bool, int, float, bytes, sequence or mapping of those) is left out with a log line, as it does.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanKind

from . import semconv as sc

_log = logging.getLogger("inferwatch")

_KIND = {SpanKind.INTERNAL: 1, SpanKind.SERVER: 2, SpanKind.CLIENT: 3, SpanKind.PRODUCER: 4, SpanKind.CONSUMER: 5}
_HAS_IS_REMOTE = 0x100  # SpanFlags.SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
_IS_REMOTE = 0x200  # SpanFlags.SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
_double = struct.Struct("<d").pack
_fixed64 = struct.Struct("<Q").pack
_fixed32 = struct.Struct("<I").pack

MAX_CACHED = 4096  # encoded (key, value) pairs kept; the cache is emptied when it is full
_cache: dict[tuple[int, str, type, Any], bytes] = {}  # (field tag, key, value type, value) -> encoded field
# never cached: text the app sent or received (kept in memory no longer than the span), and values that are
# unique per call anyway; floats are not cached either (durations never repeat; -0.0 == 0.0 would mix them up)
_NOT_CACHED = frozenset({sc.GEN_AI_INPUT_MESSAGES, sc.GEN_AI_OUTPUT_MESSAGES, sc.GEN_AI_SYSTEM_INSTRUCTIONS,
                         sc.GEN_AI_PROMPT, sc.GEN_AI_COMPLETION, sc.GEN_AI_RESPONSE_ID})


def _varint(n: int) -> bytes:
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _len(tag: int, payload: bytes) -> bytes:
    """A length-delimited field: its tag byte (field numbers below 16), the length, the payload."""
    return bytes((tag,)) + _varint(len(payload)) + payload


def _any_value(value: Any) -> bytes:
    """The fields of an ``AnyValue`` (without its own tag and length)."""
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, str):
        return _len(0x0A, value.encode())
    if isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 63):
            raise ValueError(f"int {value} does not fit int64")
        return b"\x18" + _varint(value & 0xFFFFFFFFFFFFFFFF)
    if isinstance(value, float):
        return b"\x21" + _double(value)
    if isinstance(value, bytes):
        return _len(0x3A, value)
    if isinstance(value, Sequence):
        return _len(0x2A, b"".join(_len(0x0A, _any_value(v)) for v in value))
    if isinstance(value, Mapping):
        return _len(0x32, b"".join(_len(0x0A, _key_value(str(k), v)) for k, v in value.items()))
    raise TypeError(f"Invalid type {type(value)} of value {value}")


def _key_value(key: str, value: Any) -> bytes:
    """The fields of a ``KeyValue`` (without its own tag and length)."""
    return _len(0x0A, key.encode()) + _len(0x12, _any_value(value))


def _attributes(tag: int, attributes: Mapping[str, Any] | None) -> bytes:
    """Repeated ``KeyValue`` fields with tag byte ``tag``; (key, value) pairs seen before come from the cache."""
    if not attributes:
        return b""
    cache = _cache
    parts = []
    for key, value in attributes.items():
        kind = type(value)
        if kind is str:
            cacheable = len(value) <= 256 and key not in _NOT_CACHED
        elif kind is int or kind is bool:
            cacheable = True
        elif kind is tuple:  # e.g. finish reasons: a few short strings
            cacheable = len(value) <= 4 and all(type(v) is str and len(v) <= 64 for v in value) \
                and key not in _NOT_CACHED
        else:
            cacheable = False
        if cacheable:
            encoded = cache.get((tag, key, kind, value))
            if encoded is not None:
                parts.append(encoded)
                continue
        try:
            encoded = _len(tag, _key_value(key, value))
        except Exception as exc:  # noqa: BLE001 - as the stock encoder: this attribute is left out, not the span
            _log.warning("inferwatch: attribute %s not exported (%s)", key, exc)
            continue
        if cacheable:
            if len(cache) >= MAX_CACHED:
                cache.clear()
            cache[(tag, key, kind, value)] = encoded
        parts.append(encoded)
    return b"".join(parts)


def _span(span: ReadableSpan) -> bytes:
    ctx = span.get_span_context()
    out = [b"\x0a\x10", ctx.trace_id.to_bytes(16, "big"), b"\x12\x08", ctx.span_id.to_bytes(8, "big")]
    state = ctx.trace_state
    if state:
        out.append(_len(0x1A, ",".join(f"{k}={v}" for k, v in state.items()).encode()))
    parent = span.parent
    if parent:
        out.append(b"\x22\x08" + parent.span_id.to_bytes(8, "big"))
    if span.name:
        out.append(_len(0x2A, span.name.encode()))
    kind = _KIND[span.kind]
    if kind:
        out.append(b"\x30" + _varint(kind))
    if span.start_time:
        out.append(b"\x39" + _fixed64(span.start_time))
    if span.end_time:
        out.append(b"\x41" + _fixed64(span.end_time))
    out.append(_attributes(0x4A, span.attributes))
    if span.dropped_attributes:
        out.append(b"\x50" + _varint(span.dropped_attributes))
    for event in span.events or ():
        body = b""
        if event.timestamp:
            body += b"\x09" + _fixed64(event.timestamp)
        if event.name:
            body += _len(0x12, event.name.encode())
        body += _attributes(0x1A, event.attributes)
        if event.dropped_attributes:
            body += b"\x20" + _varint(event.dropped_attributes)
        out.append(_len(0x5A, body))
    if span.dropped_events:
        out.append(b"\x60" + _varint(span.dropped_events))
    for link in span.links or ():
        body = b"\x0a\x10" + link.context.trace_id.to_bytes(16, "big") + \
            b"\x12\x08" + link.context.span_id.to_bytes(8, "big")
        body += _attributes(0x22, link.attributes)
        if link.dropped_attributes:
            body += b"\x28" + _varint(link.dropped_attributes)
        body += b"\x35" + _fixed32(_HAS_IS_REMOTE | (_IS_REMOTE if link.context.is_remote else 0))
        out.append(_len(0x6A, body))
    if span.dropped_links:
        out.append(b"\x70" + _varint(span.dropped_links))
    status = span.status
    if status is not None:
        body = b""
        if status.description:
            body += _len(0x12, status.description.encode())
        if status.status_code.value:
            body += b"\x18" + _varint(status.status_code.value)
        out.append(_len(0x7A, body))
    out.append(b"\x85\x01" + _fixed32(_HAS_IS_REMOTE | (_IS_REMOTE if parent and parent.is_remote else 0)))
    return b"".join(out)


def _scope(scope: InstrumentationScope | None) -> bytes:
    if scope is None:
        return b""
    body = b""
    if scope.name:
        body += _len(0x0A, scope.name.encode())
    if scope.version:
        body += _len(0x12, scope.version.encode())
    body += _attributes(0x1A, scope.attributes)
    return body


def encode_spans(spans: Sequence[ReadableSpan]) -> bytes:
    """The serialized ``ExportTraceServiceRequest`` for ``spans`` (see the module docstring)."""
    # grouped by the objects' identity first (Resource.__hash__ serializes its attributes to JSON each time), then
    # merged by equality, as the stock encoder's dict keyed by Resource / InstrumentationScope does
    by_id: dict[tuple[int, int], list[bytes]] = {}
    objects: dict[tuple[int, int], tuple[Resource, InstrumentationScope | None]] = {}
    for span in spans:
        resource, scope = span.resource, span.instrumentation_scope or None
        key = (id(resource), id(scope))
        encoded = by_id.get(key)
        if encoded is None:
            encoded = by_id[key] = []
            objects[key] = (resource, scope)
        encoded.append(_len_span(_span(span)))
    grouped: dict[Resource, dict[InstrumentationScope | None, list[bytes]]] = {}
    for key, encoded in by_id.items():
        resource, scope = objects[key]
        grouped.setdefault(resource, {}).setdefault(scope, []).extend(encoded)
    out = []
    for resource, by_scope in grouped.items():
        body = _len(0x0A, _attributes(0x0A, resource.attributes))
        for scope, encoded in by_scope.items():
            scope_spans = _len(0x0A, _scope(scope)) + b"".join(encoded)
            if scope is not None and scope.schema_url:
                scope_spans += _len(0x1A, scope.schema_url.encode())
            body += _len(0x12, scope_spans)
        if resource.schema_url:
            body += _len(0x1A, resource.schema_url.encode())
        out.append(_len(0x0A, body))
    return b"".join(out)


def _len_span(encoded: bytes) -> bytes:
    return b"\x12" + _varint(len(encoded)) + encoded
