"""OTLP/HTTP body decoding: encodings, compression, limits and the typed errors the route turns into answers."""

from __future__ import annotations

import gzip
import json
import tracemalloc

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from inferwatch_collector.otlp_decode import (
    MalformedPayload,
    OtlpDecodeError,
    PayloadTooLarge,
    UnsupportedMediaType,
    decode_traces,
    decompress,
)

from . import payloads as P

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
