"""The demo traffic generator builds valid, realistic OTLP requests (no collector needed)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from examples.traffic import (
    DEMO_USER_HASH_KEY,
    LlmCall,
    TrafficModel,
    build_request,
    hash_user,
    traces_url,
)
from inferwatch import semconv as sc

LLM_OPERATIONS = {"chat", "generate_content", "embeddings"}


def _attrs(span: Span) -> dict[str, object]:
    out: dict[str, object] = {}
    for kv in span.attributes:
        which = kv.value.WhichOneof("value")
        if which == "array_value":
            out[kv.key] = [v.string_value for v in kv.value.array_value.values]
        else:
            out[kv.key] = getattr(kv.value, which)
    return out


def _spans(request: ExportTraceServiceRequest) -> list[Span]:
    return [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]


def _llm_spans(request: ExportTraceServiceRequest) -> list[Span]:
    return [s for s in _spans(request) if _attrs(s).get(sc.GEN_AI_OPERATION_NAME) in LLM_OPERATIONS]


@pytest.fixture(scope="module")
def many_calls() -> tuple[ExportTraceServiceRequest, list[LlmCall]]:
    calls: list[LlmCall] = []
    request = build_request(TrafficModel(seed=7), 4000, with_content=False, now_ns=2_000_000_000 * 10**9,
                            calls_out=calls)
    return ExportTraceServiceRequest.FromString(request.SerializeToString()), calls


def test_exact_number_of_llm_calls_and_round_trip(many_calls):
    request, calls = many_calls
    assert len(calls) == 4000
    assert len(_llm_spans(request)) == 4000
    for n in (1, 7, 512):
        assert len(_llm_spans(build_request(TrafficModel(seed=n), n))) == n
        assert len(_spans(build_request(TrafficModel(seed=n), n, app_spans=False))) == n


def test_ids_unique_and_well_formed(many_calls):
    request, _ = many_calls
    spans = _spans(request)
    span_ids = [s.span_id for s in spans]
    assert len(set(span_ids)) == len(span_ids)
    assert all(len(s.trace_id) == 16 and any(s.trace_id) for s in spans)
    assert all(len(s.span_id) == 8 and any(s.span_id) for s in spans)
    by_id = {s.span_id: s for s in spans}
    for s in spans:  # every parent is in the same trace and encloses the child in time
        if s.parent_span_id:
            parent = by_id[s.parent_span_id]
            assert parent.trace_id == s.trace_id
            assert parent.start_time_unix_nano <= s.start_time_unix_nano
            assert s.end_time_unix_nano <= parent.end_time_unix_nano
    traces = Counter(s.trace_id for s in spans)
    assert len(traces) > 1000  # many traces, not one giant one
    # two requests from two models never share ids
    other = {s.span_id for s in _spans(build_request(TrafficModel(seed=8), 2000))}
    assert not other & set(span_ids)


def test_llm_span_shape(many_calls):
    request, _ = many_calls
    now_ns = 2_000_000_000 * 10**9
    for span in _llm_spans(request):
        a = _attrs(span)
        assert span.kind == Span.SpanKind.SPAN_KIND_CLIENT
        assert span.name == f"{a[sc.GEN_AI_OPERATION_NAME]} {a[sc.GEN_AI_REQUEST_MODEL]}"
        assert a[sc.GEN_AI_PROVIDER_NAME]
        assert a[sc.FEATURE] and a[sc.PROMPT_TEMPLATE] and a[sc.PROMPT_VERSION]
        assert len(a[sc.USER_HASH]) == 64
        assert span.start_time_unix_nano < span.end_time_unix_nano <= now_ns
        if span.status.code == Status.StatusCode.STATUS_CODE_ERROR:
            assert a[sc.ERROR_TYPE]
        else:
            assert span.status.code == Status.StatusCode.STATUS_CODE_OK
            assert a[sc.GEN_AI_RESPONSE_MODEL] and a[sc.GEN_AI_RESPONSE_FINISH_REASONS]
            assert sc.GEN_AI_USAGE_INPUT_TOKENS in a or a.get(sc.USAGE_MISSING) is True
    app = [s for s in _spans(request) if s.name.startswith("handle /")]
    assert app and all(s.kind == Span.SpanKind.SPAN_KIND_SERVER and not s.parent_span_id for s in app)
    ops = Counter(_attrs(s).get(sc.GEN_AI_OPERATION_NAME) for s in _spans(request))
    assert ops["retrieval"] > 0 and ops["execute_tool"] > 0
    assert ops["chat"] > ops["generate_content"] > ops["embeddings"] > 0


def test_token_and_latency_ranges(many_calls):
    _, calls = many_calls
    normal = [c for c in calls
              if c.operation != "embeddings" and not (c.is_error or c.refusal or c.empty_response)]
    assert len(normal) > 3500
    for c in normal:
        assert 200 <= c.input_tokens <= 4000
        assert 50 <= c.output_tokens <= 800
        assert 0 <= c.cache_read_tokens < c.input_tokens
        assert c.cache_read_tokens + c.cache_write_tokens <= c.input_tokens
        assert 0 <= c.reasoning_tokens < c.output_tokens
        if c.reasoning_tokens:
            assert c.model.reasoning
        assert 50 <= c.latency_ms <= 120_000
        if c.streamed:
            ttft = (c.first_token_ns - c.start_ns) / 1e6
            assert 20 <= ttft < c.latency_ms + 1e-6
            if c.decode_tps:
                assert 10 <= c.decode_tps <= 300
                measured = (c.output_tokens - c.reasoning_tokens - 1) / ((c.end_ns - c.first_token_ns) / 1e9)
                assert measured == pytest.approx(c.decode_tps, rel=0.02, abs=1)
        else:
            assert c.first_token_ns == 0
    streamed = [c for c in normal if c.streamed]
    ttfts = sorted((c.first_token_ns - c.start_ns) / 1e6 for c in streamed if not c.model.reasoning)
    median = ttfts[len(ttfts) // 2]
    assert 300 <= median <= 1500
    assert 0.3 < len(streamed) / len(normal) < 0.8
    assert 0.1 < sum(c.cache_read_tokens > 0 for c in normal) / len(normal) < 0.5
    assert len({c.model.name for c in calls}) >= 6
    assert len({c.feature.name for c in calls}) >= 5
    assert len({c.user_hash for c in calls}) >= 100


def test_rates_near_configuration():
    model = TrafficModel(seed=3, error_rate=0.03)
    calls: list[LlmCall] = []
    build_request(model, 5000, calls_out=calls)
    errors = sum(c.is_error for c in calls) / len(calls)
    assert 0.02 <= errors <= 0.04
    assert Counter(c.error_type for c in calls if c.is_error).most_common(1)[0][0] == "RateLimitError"
    chat = [c for c in calls if c.operation != "embeddings" and not c.is_error]
    assert 0.005 <= sum(c.refusal for c in chat) / len(chat) <= 0.03
    assert 0.005 <= sum(c.truncated for c in chat) / len(chat) <= 0.04
    assert any(c.empty_response for c in chat)
    assert all(c.finish_reason in ("length", "max_tokens", "MAX_TOKENS") for c in chat if c.truncated)
    with_tools = [c for c in chat if c.tool_calls]
    assert with_tools and 0 < sum(c.tool_call_failures for c in with_tools) < sum(c.tool_calls for c in with_tools)
    none = TrafficModel(seed=3, error_rate=0.0)
    assert not any(c.is_error for c in _collect(none, 2000))


def test_experiment_assignment_is_per_user():
    calls = _collect(TrafficModel(seed=5), 4000)
    enrolled = [c for c in calls if c.experiment]
    assert 0.1 < len(enrolled) / len(calls) < 0.6
    assert {c.variant for c in enrolled} == {"control", "concise"}
    variant_of: dict[str, str] = {}
    for c in enrolled:
        assert variant_of.setdefault(c.user_hash, c.variant) == c.variant
        assert c.feature.in_experiment


def test_content_only_when_asked():
    without = build_request(TrafficModel(seed=1), 300)
    keys = {k for s in _spans(without) for k in _attrs(s)}
    assert not keys & {sc.GEN_AI_INPUT_MESSAGES, sc.GEN_AI_OUTPUT_MESSAGES, sc.GEN_AI_SYSTEM_INSTRUCTIONS}

    with_content = build_request(TrafficModel(seed=1), 300, with_content=True, app_spans=False)
    texts = []
    for span in _spans(with_content):
        a = _attrs(span)
        if a[sc.GEN_AI_OPERATION_NAME] == "embeddings":
            continue
        inputs = json.loads(a[sc.GEN_AI_INPUT_MESSAGES])
        if span.status.code == Status.StatusCode.STATUS_CODE_ERROR:
            assert sc.GEN_AI_OUTPUT_MESSAGES not in a  # a failed call has a prompt but no completion
            continue
        outputs = json.loads(a[sc.GEN_AI_OUTPUT_MESSAGES])
        assert inputs[0]["role"] == "user" and inputs[0]["parts"][0]["type"] == "text"
        assert outputs[0]["role"] == "assistant"
        texts.append(a[sc.GEN_AI_INPUT_MESSAGES] + a[sc.GEN_AI_OUTPUT_MESSAGES] + a[sc.GEN_AI_SYSTEM_INSTRUCTIONS])
    sizes = sorted(len(t.encode()) for t in texts)
    assert 600 <= sizes[len(sizes) // 2] <= 2000  # ~1 KB per call
    assert any("@" in t for t in texts)  # some carry PII for the collector to redact
    assert sum("@" in t or "555-" in t or "4111" in t or "sk-proj-" in t for t in texts) < len(texts)
    scopes = {ss.scope.name for rs in with_content.resource_spans for ss in rs.scope_spans}
    assert scopes == {"inferwatch-demo-traffic"}  # not our SDK: the collector must redact


def test_seeded_and_placed_in_time():
    a = build_request(TrafficModel(seed=11), 50, now_ns=10**18).SerializeToString()
    b = build_request(TrafficModel(seed=11), 50, now_ns=10**18).SerializeToString()
    assert a == b
    spans = _spans(build_request(TrafficModel(seed=11), 200, now_ns=10**18, spread_s=60))
    roots = [s for s in spans if not s.parent_span_id]
    ends = [s.end_time_unix_nano for s in roots]
    assert max(ends) <= 10**18 and min(ends) >= 10**18 - 60 * 10**9


def test_user_hash_is_hex_hmac():
    h = hash_user("user-0001")
    assert h == hash_user("user-0001", DEMO_USER_HASH_KEY) and len(h) == 64
    assert h != hash_user("user-0001", b"another deployment")
    assert "user-0001" not in h


def test_traces_url():
    assert traces_url("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("http://127.0.0.1:4318/") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("http://h/v1/traces") == "http://h/v1/traces"


def _collect(model: TrafficModel, n: int) -> list[LlmCall]:
    calls: list[LlmCall] = []
    build_request(model, n, calls_out=calls)
    return calls


def test_sender_retries_503_after_retry_after():
    import httpx

    from examples.traffic_send import RunStats, _post_until_acked

    answers = [httpx.Response(503, headers={"Retry-After": "2"}), httpx.Response(200, content=b"")]
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    slept: list[float] = []
    stats = RunStats()
    body = build_request(TrafficModel(seed=1), 5).SerializeToString()
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        ok = _post_until_acked(client, "http://collector/v1/traces", "iwk_test", body, 5, stats, gzip=False,
                               give_up_at=float("inf"), sleep=slept.append)
    assert ok and slept == [2.0]
    assert stats.rejected_503 == 1 and stats.acks == 1 and stats.calls_acked == 5 and stats.requests == 2
    assert seen[0].headers["authorization"] == "Bearer iwk_test"
    assert seen[0].headers["content-type"] == "application/x-protobuf"
    assert seen[1].content == body  # the same bytes are retried
