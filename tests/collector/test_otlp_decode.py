"""OTLP/HTTP body decoding: encodings, compression, limits and the typed errors the route turns into answers."""

from __future__ import annotations

import gzip
import json
import math
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from google.protobuf.message import DecodeError
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from inferwatch_collector.otlp_decode import (
    FastTraceRequest,
    MalformedPayload,
    OtlpDecodeError,
    PayloadTooLarge,
    UnsupportedMediaType,
    any_value_to_python,
    decode_key_value,
    decode_traces,
    decode_traces_fast,
    decompress,
    to_fast,
)

from tests.helpers import payloads as P

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
MB = 1 << 20


@pytest.fixture
def request_message() -> ExportTraceServiceRequest:
    return P.make_request(P.otel_genai_span(), P.tool_span(), P.openinference_span(), P.http_server_span())


def test_protobuf_round_trip(request_message: ExportTraceServiceRequest) -> None:
    body = request_message.SerializeToString()
    assert decode_traces(body, PROTOBUF, None, MB) == request_message
    assert decode_traces(body, "application/protobuf", "identity", MB) == request_message


def test_json_from_a_json_exporter_equals_the_protobuf_message(request_message: ExportTraceServiceRequest) -> None:
    for integer_enums in (True, False):  # OTLP says integers; enum names are accepted too
        body = P.to_otlp_json(request_message, integer_enums=integer_enums)
        assert decode_traces(body, "application/json; charset=utf-8", None, MB) == request_message


def test_hand_written_otlp_json() -> None:
    document = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "checkout"}}]},
                "scopeSpans": [
                    {
                        "scope": {"name": "my.library", "version": "1.0.0"},
                        "spans": [
                            {
                                "traceId": "5B8EFFF798038103D269B633813FC60C",  # hex, case-insensitive
                                "spanId": "eee19b7ec3c1b174",
                                "parentSpanId": "",
                                "name": "chat gpt-4o",
                                "kind": 3,
                                "startTimeUnixNano": "1767225600000000000",  # int64 as string
                                "endTimeUnixNano": 1767225601000000000,  # or as a number
                                "attributes": [
                                    {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}},
                                    {"key": "gen_ai.request.temperature", "value": {"doubleValue": 0.5}},
                                    {"key": "gen_ai.request.stream", "value": {"boolValue": True}},
                                    {"key": "gen_ai.response.finish_reasons",
                                     "value": {"arrayValue": {"values": [{"stringValue": "stop"}]}}},
                                    {"key": "blob", "value": {"bytesValue": "AAEC"}},
                                    {"key": "empty", "value": {"arrayValue": {}}},
                                ],
                                "events": [{"timeUnixNano": "1767225600100000000", "name": "exception",
                                            "attributes": [{"key": "exception.type",
                                                            "value": {"stringValue": "RateLimitError"}}]}],
                                "status": {"code": 2, "message": "rate limited"},
                                "someFutureField": {"ignored": True},
                            }
                        ],
                    }
                ],
            }
        ]
    }  # fmt: skip
    message = decode_traces(json.dumps(document).encode(), JSON, None, MB)
    span = message.resource_spans[0].scope_spans[0].spans[0]
    assert span.trace_id == bytes.fromhex("5b8efff798038103d269b633813fc60c")
    assert span.span_id == bytes.fromhex("eee19b7ec3c1b174")
    assert span.parent_span_id == b""
    assert span.kind == 3
    assert span.start_time_unix_nano == 1767225600000000000
    assert span.end_time_unix_nano == 1767225601000000000
    values = {kv.key: kv.value for kv in span.attributes}
    assert values["gen_ai.usage.input_tokens"].int_value == 12
    assert values["gen_ai.request.temperature"].double_value == 0.5
    assert values["gen_ai.request.stream"].bool_value is True
    assert values["gen_ai.response.finish_reasons"].array_value.values[0].string_value == "stop"
    assert values["blob"].bytes_value == b"\x00\x01\x02"
    assert values["empty"].WhichOneof("value") == "array_value"
    assert span.status.code == 2 and span.status.message == "rate limited"
    assert span.events[0].attributes[0].value.string_value == "RateLimitError"
    assert message.resource_spans[0].scope_spans[0].scope.name == "my.library"


def test_snake_case_keys_and_base64_ids_are_accepted(request_message: ExportTraceServiceRequest) -> None:
    from google.protobuf.json_format import MessageToDict

    canonical = MessageToDict(request_message, preserving_proto_field_name=True)  # base64 ids, snake_case
    assert decode_traces(json.dumps(canonical).encode(), JSON, None, MB) == request_message


def test_gzip_protobuf_and_json(request_message: ExportTraceServiceRequest) -> None:
    body = request_message.SerializeToString()
    assert decode_traces(gzip.compress(body), PROTOBUF, "gzip", MB) == request_message
    assert decode_traces(gzip.compress(body), PROTOBUF, "GZIP", MB) == request_message
    json_body = P.to_otlp_json(request_message)
    assert decode_traces(gzip.compress(json_body), JSON, "gzip", MB) == request_message


def test_gzip_with_several_members_and_trailing_padding() -> None:
    data = b"x" * 1000 + b"y" * 1000
    body = gzip.compress(data[:700]) + gzip.compress(data[700:]) + b"\x00\x00"
    assert decompress(body, "gzip", MB) == data


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"definitely not gzip", "invalid gzip"),
        (gzip.compress(b"hello world" * 100)[:-12], "truncated"),  # cut before the end of the member
        (gzip.compress(b"hello")[:-4] + b"\x00\x00\x00\x00", "invalid gzip"),  # wrong length in the trailer
        (b"", "truncated"),
    ],
)
def test_bad_gzip_is_a_400(body: bytes, problem: str) -> None:
    with pytest.raises(MalformedPayload, match=problem) as info:
        decode_traces(body, PROTOBUF, "gzip", MB)
    assert info.value.status == 400


def test_gzip_bomb_is_rejected_without_inflating_it() -> None:
    member = gzip.compress(bytes(16 * MB), compresslevel=9)  # 16 MiB of zeros in about 16 KB
    bomb = member * 32  # 512 MiB in 32 gzip members, about 0.5 MB on the wire
    assert len(bomb) < MB
    tracemalloc.start()
    try:
        with pytest.raises(PayloadTooLarge, match="decompressed") as info:
            decode_traces(bomb, PROTOBUF, "gzip", 4 * MB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.status == 413
    assert peak < 16 * MB  # inflated at most the limit (plus bookkeeping), not 512 MiB
    # many small members add up too
    with pytest.raises(PayloadTooLarge):
        decompress(gzip.compress(bytes(MB)) * 64, "gzip", 4 * MB)


def test_size_limits() -> None:
    body = P.make_request(P.otel_genai_span()).SerializeToString()
    with pytest.raises(PayloadTooLarge) as info:
        decode_traces(body, PROTOBUF, None, len(body) - 1)
    assert info.value.status == 413
    assert str(len(body)) in info.value.message
    assert decode_traces(body, PROTOBUF, None, len(body)).resource_spans  # exactly at the limit is fine
    compressed = gzip.compress(body)
    assert len(compressed) < len(body)
    with pytest.raises(PayloadTooLarge, match="decompressed"):
        decode_traces(compressed, PROTOBUF, "gzip", len(body) - 1)


@pytest.mark.parametrize("content_type", ["text/plain", "", "application/grpc", "application/xml", "json"])
def test_unsupported_content_type_is_a_415(content_type: str) -> None:
    with pytest.raises(UnsupportedMediaType, match="content-type") as info:
        decode_traces(b"{}", content_type, None, MB)
    assert info.value.status == 415


@pytest.mark.parametrize("encoding", ["br", "deflate", "zstd", "gzip, br"])
def test_unsupported_content_encoding_is_a_415(encoding: str) -> None:
    with pytest.raises(UnsupportedMediaType, match="content-encoding") as info:
        decode_traces(b"{}", JSON, encoding, MB)
    assert info.value.status == 415


def test_malformed_protobuf_is_a_400() -> None:
    with pytest.raises(MalformedPayload, match="^invalid protobuf") as info:
        decode_traces(b"\x0a\xff\xff\xff\xff\x0f garbage", PROTOBUF, None, MB)
    assert info.value.status == 400


def test_empty_protobuf_body_is_an_empty_request() -> None:
    assert decode_traces(b"", PROTOBUF, None, MB) == ExportTraceServiceRequest()


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (b"{not json", "invalid JSON: "),
        (b"[]", "invalid JSON: expected an object, got list"),
        (b'{"resourceSpans": {}}', "invalid JSON at resourceSpans: expected an array"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "soon"}]}]}]}',
            "invalid JSON at resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: expected an integer",
        ),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}',
            "invalid JSON at resourceSpans[0].scopeSpans[0].spans[0].traceId: expected a hex id",
        ),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 7}]}]}]}',
            "invalid JSON at resourceSpans[0].scopeSpans[0].spans[0].name: expected a string",
        ),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": "SPAN_KIND_SIDEWAYS"}]}]}]}',
            "invalid JSON at resourceSpans[0].scopeSpans[0].spans[0].kind: expected an enum value",
        ),
        (
            b'{"resourceSpans": [{"resource": {"attributes": [{"key": "k", "value": {"intValue": true}}]}}]}',
            "invalid JSON at resourceSpans[0].resource.attributes[0].value.intValue: expected an integer",
        ),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"endTimeUnixNano": "-1"}]}]}]}',
            "invalid JSON at resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano: integer -1 out of range",
        ),
    ],
)
def test_malformed_json_names_the_path(document: bytes, message: str) -> None:
    with pytest.raises(MalformedPayload) as info:
        decode_traces(document, JSON, None, MB)
    assert info.value.status == 400
    assert info.value.message.startswith(message), info.value.message
    assert str(info.value) == info.value.message


def test_deeply_nested_json_is_refused_not_a_crash() -> None:
    value: dict = {"stringValue": "leaf"}
    for _ in range(300):
        value = {"arrayValue": {"values": [value]}}
    document = {"resourceSpans": [{"resource": {"attributes": [{"key": "deep", "value": value}]}}]}
    with pytest.raises(MalformedPayload, match="nested more than 100 levels deep"):
        decode_traces(json.dumps(document).encode(), JSON, None, MB)


def test_errors_share_a_base_class_with_status() -> None:
    for cls, status in ((UnsupportedMediaType, 415), (PayloadTooLarge, 413), (MalformedPayload, 400)):
        assert issubclass(cls, OtlpDecodeError)
        assert cls("x").status == status


# --- the fast decoder --------------------------------------------------------------------------------------------
def as_standard(fast: Any) -> ExportTraceServiceRequest:
    """A FastTraceRequest back into the standard message (the schemas are wire-compatible)."""
    assert isinstance(fast, FastTraceRequest)
    return ExportTraceServiceRequest.FromString(fast.SerializeToString())


def test_fast_decoding_is_wire_compatible(request_message: ExportTraceServiceRequest) -> None:
    body = request_message.SerializeToString()
    fast = decode_traces_fast(body, PROTOBUF, None, MB)
    assert as_standard(fast) == request_message
    assert fast.SerializeToString() == body  # attributes re-encode byte for byte, in order
    span = fast.resource_spans[0].scope_spans[0].spans[0]
    original = request_message.resource_spans[0].scope_spans[0].spans[0]
    for field in ("trace_id", "span_id", "parent_span_id", "name", "kind", "start_time_unix_nano",
                  "end_time_unix_nano"):  # fmt: skip
        assert getattr(span, field) == getattr(original, field)
    assert [decode_key_value(raw) for raw in span.attributes] == [
        (kv.key, any_value_to_python(kv.value)) for kv in original.attributes
    ]
    openinference = fast.resource_spans[0].scope_spans[0].spans[2]
    assert (openinference.status.code, openinference.events[0].name) == (1, "First Token Stream Event")


def test_fast_decoding_of_gzip_and_json_and_its_errors(request_message: ExportTraceServiceRequest) -> None:
    body = request_message.SerializeToString()
    assert as_standard(decode_traces_fast(gzip.compress(body), PROTOBUF, "gzip", MB)) == request_message
    json_body = P.to_otlp_json(request_message)
    assert as_standard(decode_traces_fast(json_body, JSON, None, MB)) == request_message
    assert as_standard(to_fast(request_message)) == request_message
    assert as_standard(decode_traces_fast(b"", PROTOBUF, None, MB)) == ExportTraceServiceRequest()
    with pytest.raises(MalformedPayload, match="^invalid protobuf"):
        decode_traces_fast(b"\x0a\xff\xff\xff\xff\x0f garbage", PROTOBUF, None, MB)
    with pytest.raises(MalformedPayload, match="invalid JSON at resourceSpans"):
        decode_traces_fast(b'{"resourceSpans": {}}', JSON, None, MB)
    with pytest.raises(PayloadTooLarge):
        decode_traces_fast(body, PROTOBUF, None, len(body) - 1)
    with pytest.raises(UnsupportedMediaType):
        decode_traces_fast(body, "text/plain", None, MB)


ANY_VALUES = [
    None, "", "x", "é" * 100, "y" * 300, 0, 1, -1, 127, 128, 2**63 - 1, -(2**63), True, False, 0.0, -0.0, 1.5,
    math.inf, -math.inf, b"", b"\x00\xff", [], ["a", 1, [True]], {}, {"a": [1, {"b": None}]},
]  # fmt: skip


def same_value(a: Any, b: Any) -> bool:
    return repr(a) == repr(b)  # tells -0.0 from 0.0 and 1 from True; nan == nan


@pytest.mark.parametrize("value", ANY_VALUES, ids=repr)
def test_decode_key_value_agrees_with_the_standard_parser(value: Any) -> None:
    for key in ("k", "gen_ai.usage.input_tokens", "ключ", "k" * 200):
        kv = P.kv(key, value)
        assert same_value(decode_key_value(kv.SerializeToString()), (kv.key, any_value_to_python(kv.value)))
    assert decode_key_value(KeyValue(key="only").SerializeToString()) == ("only", None)
    nan_key, nan = decode_key_value(P.kv("n", math.nan).SerializeToString())
    assert nan_key == "n" and math.isnan(nan)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # fields out of order, repeated (the last wins), unknown fields, non-canonical varints: upb decides
        (b"\x12\x03\x0a\x01v\x0a\x01k", ("k", "v")),
        (b"\x0a\x01k\x12\x03\x0a\x01a\x12\x03\x0a\x01b", ("k", "b")),
        (b"\x0a\x01k\x12\x05\x0a\x01a\x18\x07", ("k", 7)),  # two oneof members: the last one
        (b"\x0a\x01k\x12\x03\x0a\x01v\x18\x05", ("k", "v")),  # unknown field 3 in KeyValue
        (b"\x0a\x01k\x12\x05\x0a\x01v\x60\x01", ("k", "v")),  # unknown field 12 in AnyValue
        (b"\x0a\x81\x00k\x12\x04\x0a\x81\x00v", ("k", "v")),  # lengths as two-byte varints
        (b"\x0a\x01k\x12\x02\x10\x02", ("k", True)),  # a bool varint other than 1
        (b"\x0a\x01k\x12\x03\x10\x81\x00", ("k", True)),
        (b"\x0a\x01k\x12\x00", ("k", None)),  # empty AnyValue
        (b"", ("", None)),  # an empty KeyValue
    ],
)
def test_decode_key_value_on_unusual_encodings(raw: bytes, expected: tuple[str, Any]) -> None:
    standard = KeyValue.FromString(raw)
    assert decode_key_value(raw) == expected == (standard.key, any_value_to_python(standard.value))


@pytest.mark.parametrize(
    "raw",
    [b"\x0a\x02\xff\xfe", b"\x0a\x01k\x12\x04\x0a\x02\xc3\x28", b"\x0a\x05ab", b"\x0a\x01k\x12\x05\x0a\x01",
     b"\xff", b"\x0a\x01k\x12\x0b\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"],
)  # fmt: skip
def test_decode_key_value_refuses_what_the_standard_parser_refuses(raw: bytes) -> None:
    with pytest.raises(DecodeError):
        KeyValue.FromString(raw)
    with pytest.raises(MalformedPayload, match="not a valid OTLP KeyValue") as info:
        decode_key_value(raw)
    assert info.value.status == 400


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats() | st.text(max_size=300)
    | st.binary(max_size=300),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(key=st.text(max_size=200), value=_VALUES)
def test_decode_key_value_matches_upb_on_random_values(key: str, value: Any) -> None:
    kv = P.kv(key, value)
    assert same_value(decode_key_value(kv.SerializeToString()), (kv.key, any_value_to_python(kv.value)))


def test_any_value_to_python_of_every_kind() -> None:
    assert any_value_to_python(AnyValue()) is None
    assert any_value_to_python(P.any_value({"a": [1, "b", b"c"]})) == {"a": [1, "b", b"c"]}
