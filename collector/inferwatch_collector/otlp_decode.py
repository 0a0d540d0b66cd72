"""OTLP/HTTP request bodies → ``ExportTraceServiceRequest``: protobuf or JSON, optionally gzip'd.

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
"""

from __future__ import annotations

import base64
import binascii
import math
import zlib
from typing import Any

import orjson
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = [
    "OtlpDecodeError",
    "UnsupportedMediaType",
    "PayloadTooLarge",
    "MalformedPayload",
    "decode_traces",
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
    """Decode an OTLP/HTTP ``/v1/traces`` body.

    ``content_type`` is the raw header (parameters such as ``; charset=utf-8`` are ignored); ``content_encoding``
    is the raw header or None. Raises :class:`UnsupportedMediaType` (415), :class:`PayloadTooLarge` (413) or
    :class:`MalformedPayload` (400).
    """
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
    body = decompress(body, content_encoding, max_bytes)
    request = ExportTraceServiceRequest()
    if is_json:
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise MalformedPayload(f"invalid JSON: {exc}") from None
        json_to_message(document, request)
        return request
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise MalformedPayload(f"invalid protobuf: {exc or 'cannot parse ExportTraceServiceRequest'}") from None
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
