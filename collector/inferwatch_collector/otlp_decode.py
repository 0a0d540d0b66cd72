"""OTLP/HTTP request bodies → ``ExportTraceServiceRequest`` (and the metrics and logs requests): protobuf or JSON,
optionally gzip'd.

Both encodings end as the same protobuf message, so the normaliser has one input type and the two encodings give
identical rows. No FastAPI and no database here: the route passes the body and three headers, and turns a
:class:`OtlpDecodeError` into ``status`` + ``message``.

OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding) differs from protobuf's canonical
JSON mapping, which is why ``json_format.Parse`` is not used:

* ``traceId``/``spanId``/``parentSpanId`` are hex strings, not base64 (other ``bytes`` fields stay base64).
  For robustness a base64 id is accepted when the string is not hex but decodes to 16/8 bytes.
* keys are lowerCamelCase (the original snake_case names are accepted too); unknown keys are ignored, as the
  spec requires of receivers;
* enums are integers (names such as ``"SPAN_KIND_CLIENT"`` are accepted too);
* 64-bit integers may be strings or numbers.

The converter walks the protobuf descriptors, so it covers every field of the trace messages (and would cover
metrics/logs requests unchanged), and every error names the JSON path of the offending value, e.g.
``invalid JSON at resourceSpans[0].scopeSpans[0].spans[3].startTimeUnixNano: expected an integer, got 'soon'``.

Size limits: ``max_bytes`` applies to the body as received and again to the decompressed body. gzip is inflated
incrementally with an output cap, so a gzip bomb is rejected after inflating at most ``max_bytes + 1`` bytes.

Fast decoding (:func:`decode_traces_fast`, what ingest uses): with the standard classes, reading an attribute
costs more than everything else the normaliser does with it, because upb creates a Python wrapper for every
``KeyValue`` and ``AnyValue``. :data:`FastTraceRequest` is a private message schema,
built here from descriptors at import (no protoc), that is wire-compatible with ``ExportTraceServiceRequest`` and
declares every ``repeated KeyValue attributes`` (span, event, resource, scope) and the span links as
``repeated bytes``: the same bytes parse, and each attribute arrives as one ``bytes`` object holding its encoded
``KeyValue``, which :func:`decode_key_value` turns into ``(key, Python value)`` (a Python fast path for the common
shapes, upb's ``KeyValue`` parser for the rest) and which the normaliser can memoise by those bytes. Everything
else (ids, times, name, kind, status, events) has the standard field names and types, so code that reads those
works on both message types. Repeated bytes keep order and duplicates exactly as sent, so the two decoders give
identical rows (a ``map<string, ...>`` declaration would also parse these bytes but loses order, and upb reads
map values slowly).

The one difference: the fast parse does not look inside attribute (and link) bytes, so an attribute that is not a
valid ``KeyValue`` (bad protobuf, invalid UTF-8) fails later, in :func:`decode_key_value`
(:class:`MalformedPayload`), which the normaliser turns into the rejection of that span alone; the standard parse
rejects the whole request.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
import zlib
from typing import Any

import orjson
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

__all__ = [
    "OtlpDecodeError",
    "UnsupportedMediaType",
    "PayloadTooLarge",
    "MalformedPayload",
    "decode_traces",
    "decode_traces_fast",
    "decode_metrics",
    "decode_logs",
    "FastTraceRequest",
    "to_fast",
    "decode_key_value",
    "any_value_to_python",
    "decompress",
    "json_to_message",
    "PROTOBUF_CONTENT_TYPES",
    "JSON_CONTENT_TYPES",
]

PROTOBUF_CONTENT_TYPES = frozenset({"application/x-protobuf", "application/protobuf"})
JSON_CONTENT_TYPES = frozenset({"application/json"})
_IDENTITY_ENCODINGS = frozenset({"", "identity"})
_GZIP_ENCODINGS = frozenset({"gzip", "x-gzip"})


class OtlpDecodeError(Exception):
    """A request body that cannot become an ``ExportTraceServiceRequest``; ``status`` is the HTTP answer."""

    status: int = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnsupportedMediaType(OtlpDecodeError):
    """Content-Type or Content-Encoding that we do not accept (HTTP 415)."""

    status = 415


class PayloadTooLarge(OtlpDecodeError):
    """Body larger than the limit, before or after decompression (HTTP 413)."""

    status = 413


class MalformedPayload(OtlpDecodeError):
    """Bytes that are not valid gzip / protobuf / OTLP JSON (HTTP 400)."""

    status = 400


def decode_traces(
    body: bytes, content_type: str, content_encoding: str | None, max_bytes: int
) -> ExportTraceServiceRequest:
    """Decode an OTLP/HTTP ``/v1/traces`` body into the standard ``ExportTraceServiceRequest``.

    ``content_type`` is the raw header (parameters such as ``; charset=utf-8`` are ignored); ``content_encoding``
    is the raw header or None. Raises :class:`UnsupportedMediaType` (415), :class:`PayloadTooLarge` (413) or
    :class:`MalformedPayload` (400).
    """
    body, is_json = _body(body, content_type, content_encoding, max_bytes)
    if is_json:
        return _from_json(body)
    return _parse(ExportTraceServiceRequest, body)


def decode_traces_fast(
    body: bytes, content_type: str, content_encoding: str | None, max_bytes: int
) -> Any:
    """Like :func:`decode_traces` (same arguments, errors and limits), into a :data:`FastTraceRequest`: the
    normaliser's fast input (see the module docstring). JSON goes through the standard message first."""
    body, is_json = _body(body, content_type, content_encoding, max_bytes)
    if is_json:
        return to_fast(_from_json(body))
    return _parse(FastTraceRequest, body)


def decode_metrics(
    body: bytes, content_type: str, content_encoding: str | None, max_bytes: int
) -> ExportMetricsServiceRequest:
    """Decode an OTLP/HTTP ``/v1/metrics`` body (same encodings, limits and errors as :func:`decode_traces`)."""
    return _decode_standard(ExportMetricsServiceRequest, body, content_type, content_encoding, max_bytes)


def decode_logs(
    body: bytes, content_type: str, content_encoding: str | None, max_bytes: int
) -> ExportLogsServiceRequest:
    """Decode an OTLP/HTTP ``/v1/logs`` body (same encodings, limits and errors as :func:`decode_traces`; in
    JSON a log record's ``traceId``/``spanId`` are hex like a span's)."""
    return _decode_standard(ExportLogsServiceRequest, body, content_type, content_encoding, max_bytes)


def _decode_standard(cls: Any, body: bytes, content_type: str, content_encoding: str | None,
                     max_bytes: int) -> Any:
    body, is_json = _body(body, content_type, content_encoding, max_bytes)
    if not is_json:
        return _parse(cls, body)
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise MalformedPayload(f"invalid JSON: {exc}") from None
    request = cls()
    json_to_message(document, request)
    return request


def count_data_points(request: ExportMetricsServiceRequest) -> int:
    """Data points in a metrics request, whatever the metric types."""
    total = 0
    for resource in request.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                kind = metric.WhichOneof("data")
                if kind is not None:
                    total += len(getattr(metric, kind).data_points)
    return total


def _body(body: bytes, content_type: str, content_encoding: str | None, max_bytes: int) -> tuple[bytes, bool]:
    """The decompressed body and whether it is JSON, after the media type and size checks."""
    media_type = _media_type(content_type)
    if media_type in PROTOBUF_CONTENT_TYPES:
        is_json = False
    elif media_type in JSON_CONTENT_TYPES:
        is_json = True
    else:
        raise UnsupportedMediaType(
            f"unsupported content-type {content_type!r}: send application/x-protobuf or application/json"
        )
    if len(body) > max_bytes:
        raise PayloadTooLarge(f"request body is {len(body)} bytes, the limit is {max_bytes}")
    return decompress(body, content_encoding, max_bytes), is_json


def _from_json(body: bytes) -> ExportTraceServiceRequest:
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise MalformedPayload(f"invalid JSON: {exc}") from None
    request = ExportTraceServiceRequest()
    json_to_message(document, request)
    return request


def _parse(cls: Any, body: bytes) -> Any:
    request = cls()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise MalformedPayload(f"invalid protobuf: {exc or f'cannot parse {cls.__name__}'}") from None
    return request


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def decompress(body: bytes, content_encoding: str | None, max_bytes: int) -> bytes:
    """Undo ``Content-Encoding`` (identity or gzip, several gzip members allowed), inflating at most
    ``max_bytes + 1`` bytes: a larger result raises :class:`PayloadTooLarge` without inflating the rest."""
    encoding = (content_encoding or "").strip().lower()
    if encoding in _IDENTITY_ENCODINGS:
        return body
    if encoding not in _GZIP_ENCODINGS:
        raise UnsupportedMediaType(f"unsupported content-encoding {content_encoding!r}: send gzip or none")
    out: list[bytes] = []
    produced = 0
    data = body
    while True:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip header + trailer, CRC checked
        try:
            while data:
                chunk = inflater.decompress(data, max_bytes + 1 - produced)
                produced += len(chunk)
                if produced > max_bytes:
                    raise PayloadTooLarge(f"decompressed request body exceeds the limit of {max_bytes} bytes")
                out.append(chunk)
                if inflater.eof:
                    break
                data = inflater.unconsumed_tail
                if not chunk and not data:
                    break
            if not inflater.eof:
                raise MalformedPayload("invalid gzip: truncated stream (no end of member)")
        except zlib.error as exc:
            raise MalformedPayload(f"invalid gzip: {exc}") from None
        data = inflater.unused_data
        # another gzip member may follow (RFC 1952 §2.2); trailing zero padding is ignored like gzip(1) does
        if not data or not data.strip(b"\x00"):
            break
    return b"".join(out)


# --- OTLP/JSON → protobuf ----------------------------------------------------------------------------------------

_HEX_ID_FIELDS = frozenset({"trace_id", "span_id", "parent_span_id"})
_ID_LENGTHS = {"trace_id": 16, "span_id": 8, "parent_span_id": 8}

_T = FieldDescriptor
_INT_RANGES: dict[int, tuple[int, int]] = {
    _T.TYPE_INT64: (-(2**63), 2**63 - 1),
    _T.TYPE_SINT64: (-(2**63), 2**63 - 1),
    _T.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    _T.TYPE_UINT64: (0, 2**64 - 1),
    _T.TYPE_FIXED64: (0, 2**64 - 1),
    _T.TYPE_INT32: (-(2**31), 2**31 - 1),
    _T.TYPE_SINT32: (-(2**31), 2**31 - 1),
    _T.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    _T.TYPE_UINT32: (0, 2**32 - 1),
    _T.TYPE_FIXED32: (0, 2**32 - 1),
}
_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

# descriptor full name -> {json key: field}; both lowerCamelCase and snake_case names
_FIELD_MAPS: dict[str, dict[str, FieldDescriptor]] = {}


class _JsonError(Exception):
    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem


def json_to_message(document: Any, message: Message) -> Message:
    """Fill ``message`` from an OTLP/JSON document (already parsed); raises :class:`MalformedPayload`."""
    try:
        _fill(message, document, "")
    except _JsonError as exc:
        where = f" at {exc.path}" if exc.path else ""
        raise MalformedPayload(f"invalid JSON{where}: {exc.problem}") from None
    except (ValueError, TypeError) as exc:  # a protobuf setter refused a value we let through
        raise MalformedPayload(f"invalid JSON: {exc}") from None
    return message


def _fields(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    fields = _FIELD_MAPS.get(descriptor.full_name)
    if fields is None:
        fields = {}
        for fd in descriptor.fields:
            fields[fd.name] = fd
            fields[fd.json_name] = fd
        _FIELD_MAPS[descriptor.full_name] = fields
    return fields


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_MAX_DEPTH = 100  # nested messages, as upb's protobuf parser allows (deeper AnyValue nesting is an attack)


def _fill(message: Message, obj: Any, path: str, depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        raise _JsonError(path, f"nested more than {_MAX_DEPTH} levels deep")
    if not isinstance(obj, dict):
        raise _JsonError(path, f"expected an object, got {type(obj).__name__}")
    fields = _fields(message.DESCRIPTOR)
    for key, value in obj.items():
        fd = fields.get(key)
        if fd is None or value is None:  # unknown fields are ignored (OTLP/JSON spec); null = absent
            continue
        where = _join(path, key)
        if fd.is_repeated:
            if not isinstance(value, list):
                raise _JsonError(where, f"expected an array, got {type(value).__name__}")
            container = getattr(message, fd.name)
            if fd.type == _T.TYPE_MESSAGE:
                for i, item in enumerate(value):
                    _fill(container.add(), item, f"{where}[{i}]", depth + 1)
            else:
                container.extend(_scalar(fd, item, f"{where}[{i}]") for i, item in enumerate(value))
        elif fd.type == _T.TYPE_MESSAGE:
            sub = getattr(message, fd.name)
            sub.SetInParent()  # an empty object still selects a oneof member (e.g. "arrayValue": {})
            _fill(sub, value, where, depth + 1)
        else:
            setattr(message, fd.name, _scalar(fd, value, where))


def _scalar(fd: FieldDescriptor, value: Any, path: str) -> Any:
    t = fd.type
    if t == _T.TYPE_STRING:
        if not isinstance(value, str):
            raise _JsonError(path, f"expected a string, got {_describe(value)}")
        return value
    if t == _T.TYPE_BOOL:
        if not isinstance(value, bool):
            raise _JsonError(path, f"expected true or false, got {_describe(value)}")
        return value
    if t in _INT_RANGES:
        number = _integer(value, path)
        lo, hi = _INT_RANGES[t]
        if not lo <= number <= hi:
            raise _JsonError(path, f"integer {number} out of range")
        return number
    if t == _T.TYPE_DOUBLE or t == _T.TYPE_FLOAT:
        if isinstance(value, bool):
            raise _JsonError(path, f"expected a number, got {_describe(value)}")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            if value in _FLOATS:
                return _FLOATS[value]
            try:
                return float(value)
            except ValueError:
                pass
        raise _JsonError(path, f"expected a number, got {_describe(value)}")
    if t == _T.TYPE_ENUM:
        if isinstance(value, bool):
            raise _JsonError(path, f"expected an enum value, got {_describe(value)}")
        if isinstance(value, int):
            return value  # open enums: unknown numbers are kept, as protobuf does
        if isinstance(value, str):
            named = fd.enum_type.values_by_name.get(value)
            if named is not None:
                return named.number
            try:
                return int(value)
            except ValueError:
                pass
        raise _JsonError(path, f"expected an enum value, got {_describe(value)}")
    if t == _T.TYPE_BYTES:
        if not isinstance(value, str):
            raise _JsonError(path, f"expected a string, got {_describe(value)}")
        if fd.name in _HEX_ID_FIELDS:
            return _hex_id(fd.name, value, path)
        try:
            return base64.b64decode(value + "=" * (-len(value) % 4), altchars=_altchars(value), validate=True)
        except (binascii.Error, ValueError):
            raise _JsonError(path, f"expected base64, got {_describe(value)}") from None
    raise _JsonError(path, f"unsupported field type {t}")  # pragma: no cover - OTLP has no other types


def _integer(value: Any, path: str) -> int:
    if isinstance(value, bool):
        raise _JsonError(path, f"expected an integer, got {_describe(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise _JsonError(path, f"expected an integer, got {_describe(value)}")


def _altchars(value: str) -> bytes | None:
    return b"-_" if ("-" in value or "_" in value) else None


def _hex_id(name: str, value: str, path: str) -> bytes:
    try:
        return bytes.fromhex(value)
    except ValueError:
        pass
    # not hex: accept protobuf-canonical base64 ids when they decode to the right length
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if decoded and len(decoded) == _ID_LENGTHS[name]:
        return decoded
    raise _JsonError(path, f"expected a hex id, got {_describe(value)}")



# --- fast decoding -----------------------------------------------------------------------------------------------
_FD = descriptor_pb2.FieldDescriptorProto
_FAST_PACKAGE = "inferwatch_collector.otlp_fast"
# message -> fields (name, number, type, repeated, message type); numbers and names are OTLP's trace.proto /
# resource.proto / common.proto (v1). Attributes and links are bytes; enums are int32 (same varint encoding).
_FAST_SCHEMA: dict[str, tuple[tuple[str, int, int, bool, str], ...]] = {
    "TraceRequest": (("resource_spans", 1, _FD.TYPE_MESSAGE, True, "ResourceSpans"),),
    "ResourceSpans": (
        ("resource", 1, _FD.TYPE_MESSAGE, False, "Resource"),
        ("scope_spans", 2, _FD.TYPE_MESSAGE, True, "ScopeSpans"),
        ("schema_url", 3, _FD.TYPE_STRING, False, ""),
    ),
    "Resource": (
        ("attributes", 1, _FD.TYPE_BYTES, True, ""),
        ("dropped_attributes_count", 2, _FD.TYPE_UINT32, False, ""),
    ),
    "ScopeSpans": (
        ("scope", 1, _FD.TYPE_MESSAGE, False, "Scope"),
        ("spans", 2, _FD.TYPE_MESSAGE, True, "Span"),
        ("schema_url", 3, _FD.TYPE_STRING, False, ""),
    ),
    "Scope": (
        ("name", 1, _FD.TYPE_STRING, False, ""),
        ("version", 2, _FD.TYPE_STRING, False, ""),
        ("attributes", 3, _FD.TYPE_BYTES, True, ""),
        ("dropped_attributes_count", 4, _FD.TYPE_UINT32, False, ""),
    ),
    "Span": (
        ("trace_id", 1, _FD.TYPE_BYTES, False, ""),
        ("span_id", 2, _FD.TYPE_BYTES, False, ""),
        ("trace_state", 3, _FD.TYPE_STRING, False, ""),
        ("parent_span_id", 4, _FD.TYPE_BYTES, False, ""),
        ("name", 5, _FD.TYPE_STRING, False, ""),
        ("kind", 6, _FD.TYPE_INT32, False, ""),
        ("start_time_unix_nano", 7, _FD.TYPE_FIXED64, False, ""),
        ("end_time_unix_nano", 8, _FD.TYPE_FIXED64, False, ""),
        ("attributes", 9, _FD.TYPE_BYTES, True, ""),
        ("dropped_attributes_count", 10, _FD.TYPE_UINT32, False, ""),
        ("events", 11, _FD.TYPE_MESSAGE, True, "Event"),
        ("dropped_events_count", 12, _FD.TYPE_UINT32, False, ""),
        ("links", 13, _FD.TYPE_BYTES, True, ""),
        ("dropped_links_count", 14, _FD.TYPE_UINT32, False, ""),
        ("status", 15, _FD.TYPE_MESSAGE, False, "Status"),
        ("flags", 16, _FD.TYPE_FIXED32, False, ""),
    ),
    "Event": (
        ("time_unix_nano", 1, _FD.TYPE_FIXED64, False, ""),
        ("name", 2, _FD.TYPE_STRING, False, ""),
        ("attributes", 3, _FD.TYPE_BYTES, True, ""),
        ("dropped_attributes_count", 4, _FD.TYPE_UINT32, False, ""),
    ),
    "Status": (("message", 2, _FD.TYPE_STRING, False, ""), ("code", 3, _FD.TYPE_INT32, False, "")),
}


def _fast_request_class() -> Any:
    file = descriptor_pb2.FileDescriptorProto(
        name="inferwatch_collector/otlp_fast_trace.proto", package=_FAST_PACKAGE, syntax="proto3"
    )
    for message_name, fields in _FAST_SCHEMA.items():
        message = file.message_type.add(name=message_name)
        for name, number, field_type, repeated, type_name in fields:
            field = message.field.add(
                name=name, number=number, type=field_type,
                label=_FD.LABEL_REPEATED if repeated else _FD.LABEL_OPTIONAL,
            )  # fmt: skip
            if type_name:
                field.type_name = f".{_FAST_PACKAGE}.{type_name}"
    pool = descriptor_pool.DescriptorPool()  # private: nothing else can collide with (or see) these types
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_FAST_PACKAGE}.TraceRequest"))


#: The fast, wire-compatible twin of ``ExportTraceServiceRequest`` (see the module docstring).
FastTraceRequest = _fast_request_class()


def to_fast(request: ExportTraceServiceRequest) -> Any:
    """The same request as a :data:`FastTraceRequest` (re-encoded and parsed, both in C)."""
    return FastTraceRequest.FromString(request.SerializeToString())


_SCALAR_KINDS = frozenset({"string_value", "int_value", "bool_value", "double_value", "bytes_value"})


def any_value_to_python(value: AnyValue) -> Any:
    """An ``AnyValue`` as a Python value: str, int, float, bool, bytes, list, dict (kvlist), or None (unset, or a
    ``string_value_strindex``, meaningless without the profiles dictionary)."""
    kind = value.WhichOneof("value")
    if kind in _SCALAR_KINDS:
        return getattr(value, kind)
    if kind == "array_value":
        return [any_value_to_python(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value_to_python(kv.value) for kv in value.kvlist_value.values}
    return None


_DOUBLE = struct.Struct("<d")


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]  # IndexError when truncated: the caller falls back to upb
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def decode_key_value(raw: bytes) -> tuple[str, Any]:
    """One encoded ``KeyValue`` (an attribute of a :data:`FastTraceRequest`) → ``(key, value)``, the value as
    :func:`any_value_to_python` gives it for the same bytes parsed by the standard classes.

    The usual encoding (the key, then the value; a value holding one string, small int, bool, double or bytes) is
    read here, in Python and in one function (calls are what costs); other values (arrays, kvlists, large or
    negative ints) are parsed by upb's ``AnyValue``, and any other layout (fields out of order or repeated, unknown
    fields) by upb's ``KeyValue``, so protobuf semantics (the last value wins, unknown fields are ignored) are
    upb's own. Raises :class:`MalformedPayload` when the bytes are not a valid ``KeyValue`` (bad protobuf, or a key
    or string that is not UTF-8)."""
    try:
        if raw[0] == 0x0A:  # field 1, key
            n = raw[1]
            start = 2
            if n > 0x7F:
                n, start = _varint(raw, 1)
            end = start + n
            size = len(raw)
            if end == size:  # no value
                return raw[start:end].decode(), None
            if raw[end] == 0x12:  # field 2, value: an AnyValue in raw[pos:size]
                m = raw[end + 1]
                pos = end + 2
                if m > 0x7F:
                    m, pos = _varint(raw, end + 1)
                if pos + m == size:
                    key = raw[start:end].decode()
                    if pos == size:  # nothing set
                        return key, None
                    tag = raw[pos]
                    if tag == 0x0A:  # 1: string_value
                        n = raw[pos + 1]
                        start = pos + 2
                        if n > 0x7F:
                            n, start = _varint(raw, pos + 1)
                        if start + n == size:
                            return key, raw[start:size].decode()
                    elif tag == 0x18:  # 3: int_value, a varint that must end the value
                        last = raw[size - 1]
                        n = size - pos - 1
                        if last < 0x80 and n <= 10:
                            if n == 1:
                                return key, last
                            if n == 2 and raw[pos + 1] > 0x7F:
                                return key, (raw[pos + 1] & 0x7F) | last << 7
                            if n == 3 and raw[pos + 1] > 0x7F and raw[pos + 2] > 0x7F:
                                return key, (raw[pos + 1] & 0x7F) | (raw[pos + 2] & 0x7F) << 7 | last << 14
                            if n > 3 and min(raw[pos + 1 : size - 1]) > 0x7F:  # one varint: upb assembles it
                                return key, AnyValue.FromString(raw[pos:size]).int_value
                    elif tag == 0x10:  # 2: bool_value
                        if pos + 2 == size and raw[pos + 1] < 0x80:
                            return key, raw[pos + 1] != 0
                    elif tag == 0x21:  # 4: double_value
                        if pos + 9 == size:
                            return key, _DOUBLE.unpack_from(raw, pos + 1)[0]
                    elif tag == 0x3A:  # 7: bytes_value
                        n, start = _varint(raw, pos + 1)
                        if start + n == size:
                            return key, raw[start:size]
                    try:
                        return key, any_value_to_python(AnyValue.FromString(raw[pos:size]))
                    except DecodeError:
                        raise MalformedPayload(_BAD_KEY_VALUE) from None
    except (IndexError, ValueError):  # truncated, overlong, not UTF-8 (UnicodeDecodeError): upb says what it is
        pass
    try:
        kv = KeyValue.FromString(raw)
    except DecodeError:
        raise MalformedPayload(_BAD_KEY_VALUE) from None
    return kv.key, any_value_to_python(kv.value)


_BAD_KEY_VALUE = "attribute is not a valid OTLP KeyValue (bad protobuf or a string that is not UTF-8)"
