"""Cache accounting in the SDK: Anthropic's 1-hour cache writes, and answers served from the app's own cache.

The mock LLM server always reports ``ephemeral_1h_input_tokens: 0``, so the 1-hour cases give the real
``anthropic`` client an ``httpx2.MockTransport`` (``httpx`` for older clients) that answers with Anthropic's
documented wire format (a Message, or the Messages SSE stream) carrying ``usage.cache_creation`` =
{5m: 30, 1h: 70}.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")
try:  # the HTTP package the installed anthropic client is built on (recent releases: httpx2)
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older anthropic releases
    httpx = pytest.importorskip("httpx")

import inferwatch  # noqa: E402
from inferwatch import semconv as sc  # noqa: E402
from inferwatch.metrics import InferenceMetrics, normalise_anthropic_usage  # noqa: E402
from tests.helpers.mock_llm_rules import user  # noqa: E402
from tests.helpers.sdk_recording import Recorded  # noqa: E402

MODEL = "claude-opus-4-5"
SNAPSHOT = "claude-opus-4-5-20251101"
FRESH, READ, WRITE_5M, WRITE_1H, OUTPUT = 5, 10, 30, 70, 7
TEXT = "Hello from the cache"
USAGE = {"input_tokens": FRESH, "cache_read_input_tokens": READ,
         "cache_creation_input_tokens": WRITE_5M + WRITE_1H,
         "cache_creation": {"ephemeral_5m_input_tokens": WRITE_5M, "ephemeral_1h_input_tokens": WRITE_1H},
         "output_tokens": OUTPUT, "service_tier": "standard"}


# --- the Anthropic wire format, served by an httpx transport ---------------------------------------------------
def _message() -> dict[str, Any]:
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": SNAPSHOT,
            "content": [{"type": "text", "text": TEXT}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": USAGE}


def _sse(delta_usage: dict[str, Any]) -> bytes:
    start = {**_message(), "content": [], "stop_reason": None, "usage": {**USAGE, "output_tokens": 1}}
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": TEXT}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": delta_usage}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


# message_delta as Anthropic sends it today (cumulative counts, no TTL breakdown) and with the breakdown repeated
DELTA_PLAIN = {k: v for k, v in USAGE.items() if k not in ("cache_creation", "service_tier")}
DELTA_FULL = {k: v for k, v in USAGE.items() if k != "service_tier"}


class Transport:
    """Answers ``POST /v1/messages`` like Anthropic; remembers what it was sent."""

    def __init__(self, delta_usage: dict[str, Any] = DELTA_PLAIN) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.delta_usage = delta_usage

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        if body.get("stream"):
            return httpx.Response(200, content=_sse(self.delta_usage),
                                  headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json=_message())


def sync_client(transport: Transport) -> Any:
    return anthropic.Anthropic(api_key="k", max_retries=0, http_client=httpx.Client(
        transport=httpx.MockTransport(transport)))


def check_1h(a: dict[str, Any]) -> None:
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == FRESH + READ + WRITE_5M + WRITE_1H  # OTel: input includes the cache
    assert a[sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == READ
    assert a[sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == WRITE_5M + WRITE_1H  # unchanged: 5m + 1h
    assert a[sc.CACHE_CREATION_1H_INPUT_TOKENS] == WRITE_1H  # the 1-hour share, a subset
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == OUTPUT


@pytest.mark.parametrize(("way", "delta"), [
    ("create", DELTA_PLAIN),
    ("create-stream", DELTA_PLAIN), ("create-stream", DELTA_FULL),
    ("stream-helper", DELTA_PLAIN), ("stream-helper", DELTA_FULL),
], ids=["create", "stream", "stream-delta-breakdown", "helper", "helper-delta-breakdown"])
def test_anthropic_1h_cache_writes_sync(sdk: Recorded, way: str, delta: dict[str, Any]) -> None:
    transport = Transport(delta)
    client = inferwatch.wrap_anthropic(sync_client(transport))
    if way == "create":
        message = client.messages.create(model=MODEL, max_tokens=100, messages=user("hi"))
        assert message.usage.cache_creation.ephemeral_1h_input_tokens == WRITE_1H  # the app's view is untouched
    elif way == "create-stream":
        events = list(client.messages.create(model=MODEL, max_tokens=100, messages=user("hi"), stream=True))
        assert [e.type for e in events][-1] == "message_stop"
    else:
        with client.messages.stream(model=MODEL, max_tokens=100, messages=user("hi")) as stream:
            assert stream.get_final_text() == TEXT
    assert len(transport.bodies) == 1
    check_1h(sdk.one())


def test_anthropic_1h_cache_writes_async(sdk: Recorded) -> None:
    transport = Transport()

    async def run() -> None:
        async with anthropic.AsyncAnthropic(api_key="k", max_retries=0, http_client=httpx.AsyncClient(
                transport=httpx.MockTransport(transport))) as client:
            inferwatch.wrap_anthropic(client)
            await client.messages.create(model=MODEL, max_tokens=100, messages=user("a"))
            async for _ in await client.messages.create(model=MODEL, max_tokens=100, messages=user("b"),
                                                        stream=True):
                pass
            async with client.messages.stream(model=MODEL, max_tokens=100, messages=user("c")) as stream:
                await stream.until_done()

    asyncio.run(run())
    finished = sdk.spans()
    assert len(finished) == 3
    for span in finished:
        check_1h(dict(span.attributes))


def test_normalisation_of_the_ttl_breakdown() -> None:
    n = normalise_anthropic_usage(FRESH, OUTPUT, READ, 100, 30, 70)
    assert (n["input_tokens"], n["cache_write_tokens"], n["cache_write_1h_tokens"]) == (115, 100, 70)
    # no breakdown (older API versions, the mock's streams): no 1-hour share
    assert normalise_anthropic_usage(FRESH, OUTPUT, READ, 100)["cache_write_1h_tokens"] == 0
    # breakdown without the total: the total is their sum
    n = normalise_anthropic_usage(FRESH, OUTPUT, None, None, 30, 70)
    assert (n["input_tokens"], n["cache_write_tokens"], n["cache_write_1h_tokens"]) == (105, 100, 70)
    # an inconsistent report never makes the 1-hour share exceed the writes
    assert normalise_anthropic_usage(FRESH, OUTPUT, 0, 20, 0, 70)["cache_write_1h_tokens"] == 20


def test_metrics_carry_the_1h_share() -> None:
    assert InferenceMetrics().cache_write_1h_tokens == 0
    plain = InferenceMetrics(input_tokens=10, output_tokens=1, cache_write_tokens=4).span_attributes()
    assert plain[sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 4
    assert sc.CACHE_CREATION_1H_INPUT_TOKENS not in plain


def test_manual_api_usage_takes_1h_writes(sdk: Recorded) -> None:
    with inferwatch.llm_call(model=MODEL, provider="anthropic") as call:
        call.usage(input_tokens=115, output_tokens=7, cache_read_tokens=10, cache_write_tokens=100,
                   cache_write_1h_tokens=70)
    assert call.metrics.cache_write_1h_tokens == 70
    check_1h(sdk.one())
    with inferwatch.llm_call(model=MODEL, provider="anthropic") as call:
        call.usage(input_tokens=10, output_tokens=1, cache_write_tokens=3, cache_write_1h_tokens=9)
    assert call.metrics.cache_write_1h_tokens == 3  # a subset of the cache writes, never more
    assert sdk.one()[sc.CACHE_CREATION_1H_INPUT_TOKENS] == 3


# --- application-side cache hits ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["exact", "semantic"])
def test_cache_hit_is_recorded_with_the_served_usage(sdk: Recorded, kind: str) -> None:
    with inferwatch.tags(feature="faq"), inferwatch.llm_call(model="gpt-4o", provider="openai") as call:
        call.cache_hit(kind)
        call.usage(input_tokens=1200, output_tokens=300, cache_read_tokens=0)
        call.response(text="the cached answer", finish_reason="stop")
    m = call.metrics
    assert m.cache_hit is True and m.cache_hit_kind == kind
    a = sdk.one()
    assert a[sc.CACHE_HIT] is True and a[sc.CACHE_HIT_KIND] == kind == a["inferwatch.cache_hit.kind"]
    # the usage of the answer that was served, so the collector can price what was avoided
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == 1200 and a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 300
    assert a[sc.GEN_AI_REQUEST_MODEL] == "gpt-4o" and a[sc.FEATURE] == "faq" and a[sc.USAGE_MISSING] is False


def test_cache_hit_given_to_llm_call(sdk: Recorded) -> None:
    with inferwatch.llm_call(model="gpt-4o", provider="openai", cache_hit="semantic") as call:
        call.usage(input_tokens=10, output_tokens=2)
    assert call.metrics.cache_hit is True
    assert sdk.one()[sc.CACHE_HIT_KIND] == "semantic"


def test_calls_are_not_cache_hits_by_default(sdk: Recorded) -> None:
    with inferwatch.llm_call(model="gpt-4o", provider="openai") as call:
        call.usage(input_tokens=10, output_tokens=2)
    assert call.metrics.cache_hit is False
    a = sdk.one()
    assert sc.CACHE_HIT not in a and sc.CACHE_HIT_KIND not in a


def test_bad_cache_hit_kind_never_raises(sdk: Recorded) -> None:
    with inferwatch.llm_call(model="gpt-4o", provider="openai") as call:
        call.cache_hit("fuzzy")
        call.usage(input_tokens=10, output_tokens=2)
    a = sdk.one()
    assert a[sc.CACHE_HIT] is True and sc.CACHE_HIT_KIND not in a  # still a hit; the kind is unknown
    assert inferwatch.stats()["internal_errors"]["llm_call.cache_hit"] == 1
