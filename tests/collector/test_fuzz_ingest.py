"""Fuzzing the ingest and query endpoints (issue 8 item 6) with hypothesis.

Whatever arrives, every answer is a 2xx, or a 4xx that carries a message, never a 500; and the store stays
consistent: the rows in ``llm_calls`` + ``spans`` are exactly the spans the collector acknowledged as accepted
(``ingest_stats.spans_accepted``), and for the bodies built here, exactly the spans sent minus those the answer
reported rejected (a body sent twice is written once: the second is a retry).

Inputs: random bytes as protobuf, JSON and gzip; valid requests truncated at random; spans with random ids of any
length, times in 1970, 2100 and at the int64 edges, end before start, negative and absurd token counts, NaN and
infinite numbers, huge attribute values, attribute values nested 1-200 levels deep, invalid UTF-8 spliced into
strings (protobuf and JSON); random values in every query parameter of the GET routes.
"""

from __future__ import annotations

import gzip
import json
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi.testclient import TestClient
from google.rpc import status_pb2
from hypothesis import HealthCheck, given, settings, strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from inferwatch_collector.store import Store

from tests.helpers.keys import Keys
from tests.helpers.payloads import T0, make_request, otel_genai_span, sdk_span, to_otlp_json, traceloop_openai_span
from tests.helpers.routes import PUBLIC, app_routes, build_url, header, path_params


def fuzz(examples: int):
    """A stored row costs ~0.1-0.5 s on the embedded database, so tests whose bodies mostly land run fewer."""
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


PROTO = "application/x-protobuf"
JSON = "application/json"
NOW_NS = time.time_ns()
MARKER = "\u2603FUZZMARK"  # spliced out for invalid UTF-8


@dataclass
class Ledger:
    """What the collector acknowledged, to compare with the store at the end."""

    client: TestClient
    store: Store
    key: str
    expected_rows: int = 0
    exact: bool = True  # False once a body of unknown span count was accepted (truncated, mangled)
    sent: set[tuple[str, str, bytes]] = field(default_factory=set)

    def post(self, body: bytes, content_type: str, encoding: str = "", spans: int | None = None):
        headers = {**header(self.key), "Content-Type": content_type}
        if encoding:
            headers["Content-Encoding"] = encoding
        response = self.client.post("/v1/traces", content=body, headers=headers)
        check_otlp_answer(response, content_type)
        retry = (content_type, encoding, body) in self.sent
        self.sent.add((content_type, encoding, body))
        if response.status_code == 200 and not retry:
            if spans is None:
                self.exact = False
            else:
                self.expected_rows += spans - rejected_spans(response, content_type)
        return response

    def rows(self) -> int:
        return sum(self.store.query(f"SELECT count() FROM {t} WHERE project_id = 'p1'").result_rows[0][0]
                   for t in ("llm_calls", "spans"))


def rejected_spans(response, content_type: str) -> int:
    if content_type == JSON:
        return int(response.json().get("partialSuccess", {}).get("rejectedSpans", 0))
    return ExportTraceServiceResponse.FromString(response.content).partial_success.rejected_spans


def check_otlp_answer(response, content_type: str) -> None:
    """2xx, or 4xx with a google.rpc.Status message (503 + Retry-After is allowed too: back-pressure)."""
    status = response.status_code
    assert status < 500 or (status == 503 and "retry-after" in response.headers), (status, response.content[:300])
    if status >= 400:
        if response.headers.get("content-type", "").startswith(PROTO):
            message = status_pb2.Status.FromString(response.content).message
        else:
            message = response.json()["message"]
        assert message, (status, response.content[:300])


@pytest.fixture
def ledger(client: TestClient, store: Store, keys: Keys) -> Iterator[Ledger]:
    book = Ledger(client, store, keys.ingest)
    yield book
    # consistency: rows == acknowledged accepted spans, by the collector's count and by ours
    accepted = client.app.state.ingest_stats.spans_accepted
    assert book.rows() == accepted
    if book.exact:
        assert book.rows() == book.expected_rows


# --- strategies --------------------------------------------------------------------------------------------------

def mostly(usual: st.SearchStrategy, odd: st.SearchStrategy) -> st.SearchStrategy:
    """``usual`` three times in four: most fuzzed spans should be stored, so the row path is exercised too."""
    return st.integers(min_value=0, max_value=3).flatmap(lambda n: odd if n == 0 else usual)


TIMES = mostly(
    st.integers(min_value=NOW_NS - 10**12, max_value=NOW_NS + 10**12),
    st.one_of(st.sampled_from([0, 1, 10**9, 4102444800 * 10**9, 2**63 - 1, 2**64 - 1, NOW_NS, T0]),
              st.integers(min_value=0, max_value=2**64 - 1)),
)
TOKEN_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.prompt_tokens",
              "gen_ai.usage.completion_tokens", "gen_ai.usage.cache_read.input_tokens", "llm.token_count.prompt",
              "llm.token_count.completion", "gen_ai.usage.reasoning.output_tokens", "inferwatch.tool_calls",
              "inferwatch.first_token.unix_nano", "gen_ai.request.max_tokens")
TEXT_KEYS = ("gen_ai.request.model", "gen_ai.response.model", "gen_ai.provider.name", "gen_ai.system",
             "gen_ai.operation.name", "inferwatch.user.hash", "inferwatch.feature", "gen_ai.response.id",
             "gen_ai.response.finish_reasons", "input.value", "output.value", "gen_ai.prompt.0.content",
             "gen_ai.completion.0.content", "langfuse.observation.usage_details", "llm.invocation_parameters",
             "langfuse.observation.completion_start_time", "gen_ai.input.messages", "openinference.span.kind")
NUMBERS = st.one_of(
    st.sampled_from([-1, -(2**63), 2**63 - 1, 0, 10**7 + 1, 2**32, 2**31 - 1]),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
)
FLOATS = st.one_of(st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308, -1e-308]), st.floats())
TEXTS = st.one_of(
    st.text(max_size=50),
    st.sampled_from(["", "chat", "gpt-4o-mini", "{}", "[", "{\"input\": -5, \"output\": 1e99}", "null",
                     "\"2100-01-01T00:00:00Z\"", MARKER, "'; DROP TABLE llm_calls; --", "\x00\x01"]),
    st.builds(lambda n, c: c * n, st.integers(min_value=10_000, max_value=300_000), st.sampled_from("xé\u2603")),
)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def nested_value(depth: int) -> bytes:
    """An ``AnyValue`` nested ``depth`` levels (kvlist and array alternating) as wire bytes: upb refuses to build
    messages much deeper than 100 levels, but a sender can always send them."""
    value = b"\x18\x01"  # AnyValue.int_value = 1
    for level in range(depth):
        if level % 2:  # AnyValue.array_value(5) -> ArrayValue.values(1)
            value = _field(5, _field(1, value))
        else:  # AnyValue.kvlist_value(6) -> KeyValueList.values(1) -> KeyValue(key 1, value 2)
            value = _field(6, _field(1, _field(1, b"k") + _field(2, value)))
    return value


def nested_attribute(depth: int, key: str = "deep") -> bytes:
    """A ``KeyValue`` holding :func:`nested_value`, as wire bytes."""
    return _field(1, key.encode()) + _field(2, nested_value(depth))


def request_bytes(span_bytes: list[bytes]) -> bytes:
    """An ExportTraceServiceRequest of one resource and scope holding these encoded spans."""
    scope = b"".join(_field(2, s) for s in span_bytes)  # ScopeSpans.spans(2)
    return _field(1, _field(2, scope))  # request.resource_spans(1) -> ResourceSpans.scope_spans(2)


def with_deep_attribute(span: Span, depth: int) -> bytes:
    return span.SerializeToString() + _field(9, nested_attribute(depth))  # Span.attributes(9): appended


@st.composite
def any_values(draw) -> AnyValue:
    kind = draw(st.sampled_from(["int", "float", "text", "bool", "bytes", "array", "nested", "empty"]))
    if kind == "int":
        return AnyValue(int_value=draw(NUMBERS))
    if kind == "float":
        return AnyValue(double_value=draw(FLOATS))
    if kind == "text":
        return AnyValue(string_value=draw(TEXTS))
    if kind == "bool":
        return AnyValue(bool_value=draw(st.booleans()))
    if kind == "bytes":
        return AnyValue(bytes_value=draw(st.binary(max_size=64)))
    if kind == "array":
        return AnyValue(array_value=ArrayValue(values=[AnyValue(string_value=t)
                                                       for t in draw(st.lists(TEXTS, max_size=4))]))
    if kind == "nested":
        return AnyValue.FromString(nested_value(draw(st.integers(min_value=1, max_value=25))))
    return AnyValue()


@st.composite
def spans(draw) -> Span:
    keys = draw(st.lists(st.one_of(st.sampled_from(TOKEN_KEYS + TEXT_KEYS), st.text(max_size=20)), max_size=10))
    attributes = []
    for key in keys:
        if key in TOKEN_KEYS and draw(st.booleans()):
            value = AnyValue(int_value=draw(NUMBERS))
        elif key in TEXT_KEYS and draw(st.booleans()):
            value = AnyValue(string_value=draw(TEXTS))
        else:
            value = draw(any_values())
        attributes.append(KeyValue(key=key, value=value))
    if draw(st.booleans()):  # most fuzzed spans should look like LLM calls, so the call path is exercised
        attributes.insert(0, KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="chat")))
        attributes.insert(0, KeyValue(key="gen_ai.request.model", value=AnyValue(string_value="gpt-4o-mini")))
    start = draw(TIMES)
    end = draw(mostly(st.just(min(start + 10**9, 2**64 - 1)), TIMES))
    return Span(
        trace_id=draw(mostly(st.binary(min_size=16, max_size=16), st.binary(max_size=20))),
        span_id=draw(mostly(st.binary(min_size=8, max_size=8), st.binary(max_size=10))),
        parent_span_id=draw(st.one_of(st.just(b""), st.binary(max_size=10))),
        name=draw(TEXTS), kind=draw(st.integers(min_value=0, max_value=9)),
        start_time_unix_nano=start, end_time_unix_nano=end, attributes=attributes,
        events=[Span.Event(name=draw(st.sampled_from(["First Token Stream Event", "gen_ai.content.prompt", "x"])),
                           time_unix_nano=draw(TIMES))] if draw(st.booleans()) else [],
    )


@st.composite
def requests(draw) -> ExportTraceServiceRequest:
    groups = draw(st.lists(st.lists(spans(), max_size=4), min_size=0, max_size=3))
    resource = {"service.name": draw(TEXTS)} if draw(st.booleans()) else {}
    request = make_request(resource=resource)
    del request.resource_spans[:]
    for group in groups:
        request.resource_spans.append(ResourceSpans(scope_spans=[ScopeSpans(spans=group)]))
    return request


def span_count(request: ExportTraceServiceRequest) -> int:
    return sum(len(s.spans) for rs in request.resource_spans for s in rs.scope_spans)


def invalid_utf8(body: bytes) -> bytes:
    """Replace the marker's bytes with bytes that are not UTF-8 (same length, so protobuf framing holds)."""
    marker = MARKER.encode()
    return body.replace(marker, b"\xff\xfe" + b"\xc3" * (len(marker) - 2))


def valid_request() -> ExportTraceServiceRequest:
    return make_request(otel_genai_span(), sdk_span(), traceloop_openai_span())


# --- ingest ------------------------------------------------------------------------------------------------------
@fuzz(200)
@given(body=st.binary(max_size=3000), content_type=st.sampled_from([PROTO, JSON, "application/protobuf",
                                                                     "text/plain", ""]),
       encoding=st.sampled_from(["", "gzip", "br", "identity"]))
def test_random_bytes_never_500(ledger: Ledger, body: bytes, content_type: str, encoding: str) -> None:
    ledger.post(body, content_type, encoding)


@fuzz(100)
@given(request=requests(), as_json=st.booleans(), gzipped=st.booleans(), bad_utf8=st.booleans())
def test_fuzzed_spans_land_exactly_as_acknowledged(ledger: Ledger, request: ExportTraceServiceRequest,
                                                   as_json: bool, gzipped: bool, bad_utf8: bool) -> None:
    if as_json:
        body, content_type = to_otlp_json(request), JSON  # NaN/Infinity as the protobuf JSON mapping writes them
    else:
        body, content_type = request.SerializeToString(), PROTO
    if bad_utf8:
        body = invalid_utf8(body)
    if gzipped:
        body = gzip.compress(body)
    ledger.post(body, content_type, "gzip" if gzipped else "", spans=span_count(request))


@fuzz(100)
@given(cut=st.floats(min_value=0.0, max_value=1.0), as_json=st.booleans(), gzipped=st.booleans())
def test_truncated_bodies(ledger: Ledger, cut: float, as_json: bool, gzipped: bool) -> None:
    request = valid_request()
    body = to_otlp_json(request) if as_json else request.SerializeToString()
    if gzipped:
        body = gzip.compress(body)
    body = body[:int(len(body) * cut)]
    ledger.post(body, JSON if as_json else PROTO, "gzip" if gzipped else "")


@fuzz(60)
@given(data=st.data())
def test_mangled_json(ledger: Ledger, data) -> None:
    """Valid OTLP/JSON with one value replaced by something of the wrong type, or raw invalid UTF-8 inside."""
    document = json.loads(to_otlp_json(valid_request()))
    paths: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                paths.append((node, k))
                walk(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                paths.append((node, i))
                walk(v)

    walk(document)
    parent, key = data.draw(st.sampled_from(paths))
    parent[key] = data.draw(st.one_of(
        st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False),
        st.text(max_size=30), st.just([]), st.just({}), st.just("-1"), st.just("1e400"),
        st.just("1970-01-01T00:00:00Z"), st.just(MARKER)))
    body = json.dumps(document).encode()
    if data.draw(st.booleans()):
        body = body.replace(json.dumps(MARKER).encode()[1:-1], b"\xff\xfe\xfd")
        body = body.replace(MARKER.encode(), b"\xff\xfe\xfd")
    ledger.post(body, JSON)


def test_edge_cases_are_answered_with_messages(ledger: Ledger) -> None:
    """The named cases, once each, with what must happen to them."""
    old, future = make_request(sdk_span()), make_request(sdk_span())
    old.resource_spans[0].scope_spans[0].spans[0].start_time_unix_nano = 1  # 1970
    future.resource_spans[0].scope_spans[0].spans[0].start_time_unix_nano = 4102444800 * 10**9  # 2100
    for request in (old, future):
        response = ledger.post(request.SerializeToString(), PROTO, spans=1)
        assert response.status_code == 200 and rejected_spans(response, PROTO) == 1
    absurd = make_request(otel_genai_span(**{"gen_ai.usage.input_tokens": -5,
                                             "gen_ai.usage.output_tokens": 2**62}))
    response = ledger.post(absurd.SerializeToString(), PROTO, spans=1)
    assert response.status_code == 200 and rejected_spans(response, PROTO) == 0  # kept, counts treated absent
    assert "token count" in ExportTraceServiceResponse.FromString(response.content).partial_success.error_message
    huge = make_request(sdk_span(**{"gen_ai.prompt.0.content": "x" * 2_000_000}))
    response = ledger.post(huge.SerializeToString(), PROTO, spans=1)
    assert response.status_code == 200
    for depth in (90, 150, 5000):  # below and above upb's 100-level limit: the span or the request is refused
        response = ledger.post(request_bytes([with_deep_attribute(sdk_span(), depth)]), PROTO, spans=1)
        assert response.status_code in (200, 400)
    deep_json = ("{\"resourceSpans\": " + "[" * 5000 + "]" * 5000 + "}").encode()
    assert ledger.post(deep_json, JSON).status_code == 400
    bad = make_request(sdk_span(**{"gen_ai.request.model": MARKER}))
    response = ledger.post(invalid_utf8(bad.SerializeToString()), PROTO, spans=1)
    assert response.status_code in (200, 400)


# --- queries -----------------------------------------------------------------------------------------------------
QUERY_VALUES = st.one_of(
    st.text(max_size=40),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats().map(str),
    st.sampled_from(["", "0", "-1", "1e308", "nan", "inf", "true", "null", "0001-01-01", "9999-12-31T23:59:59",
                     "1970-01-01T00:00:00Z", "2100-01-01", "2024-02-30", "2024-01-01T00:00:00+25:00",
                     "2024-01-01T00:00:00-14:00", "minute", "day", "model,user", "\u0000", "\ud7ff",
                     "a" * 5000, "%00", "../../etc/passwd"]),
)


@pytest.fixture
def read_routes(client: TestClient) -> list:
    routes = [r for r in app_routes(client.app) if r.method == "GET" and r.key not in PUBLIC]
    assert routes
    return routes


@fuzz(200)
@given(data=st.data())
def test_random_query_parameters_never_500(client: TestClient, keys: Keys, read_routes: list, data) -> None:
    route = data.draw(st.sampled_from(read_routes))
    names = [p["name"] for p in route.operation.get("parameters", []) if p["in"] == "query"]
    chosen = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names))) if names else []
    query = {name: data.draw(QUERY_VALUES) for name in chosen}
    path_values = {name: data.draw(st.one_of(st.text(min_size=1, max_size=40), st.just("0f" * 16)))
                   for name in path_params(route)}
    url, params = build_url(route, path_values, query)
    response = client.get(url, params=params, headers=header(keys.admin))
    assert response.status_code < 500, (url, params, response.status_code, response.text[:300])
    if response.status_code >= 400:
        assert response.json().get("error"), (url, params, response.text[:300])
