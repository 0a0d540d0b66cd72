"""The Anthropic integration against the mock LLM server, with the real ``anthropic`` client.

Numbers come from the mock's documented rules (examples/mock_llm.py): prompt tokens = sum over messages of
``4 + ceil(len(text) / 4)`` (+ ``4 + tokens(system)``, + the compact JSON of the tools); Anthropic reports
``input_tokens`` = prompt - cache reads - cache writes, which the SDK adds back (OTel: input includes the cache);
24 output tokens of 4 characters by default; thinking costs 32 tokens, inside ``output_tokens``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")

from opentelemetry.trace import StatusCode  # noqa: E402
from pydantic import BaseModel  # noqa: E402

import inferwatch  # noqa: E402
from examples.mock_llm import REFUSAL_TEXT, estimate_prompt_tokens  # noqa: E402
from inferwatch import semconv as sc  # noqa: E402
from tests.helpers.mock_llm_fixtures import MOCK_API_KEY  # noqa: E402
from tests.helpers.mock_llm_rules import prompt_tokens, tokens, user  # noqa: E402
from tests.helpers.sdk_recording import Recorded, start_sdk  # noqa: E402

MODEL = "claude-haiku-4-5"
SNAPSHOT = "claude-haiku-4-5-20251001"
WEATHER = {"name": "get_weather", "description": "Current weather", "input_schema": {
    "type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}
WEATHER_ARGS = '{"location":"sample-location"}'


@pytest.fixture
def rec(sdk: Recorded) -> Recorded:
    """``sdk`` + ``instrument_anthropic()``."""
    assert inferwatch.instrument_anthropic() is True
    return sdk


def async_client(mock: Any) -> Any:
    return anthropic.AsyncAnthropic(base_url=mock.anthropic_base_url, api_key=MOCK_API_KEY, max_retries=0)


def create(client: Any, text: str, *, stream: bool = False, **kwargs: Any) -> Any:
    """messages.create; a stream is consumed (the app's view of it returned as the list of events)."""
    kwargs.setdefault("max_tokens", 1000)
    result = client.messages.create(model=MODEL, messages=user(text), stream=stream, **kwargs)
    return list(result) if stream else result


# --- messages.create -------------------------------------------------------------------------------------------
def test_create_records_tokens_and_response(rec: Recorded, anthropic_client: Any) -> None:
    message = create(anthropic_client, "Say hello", system="Be brief")
    assert type(message) is anthropic.types.Message
    a = rec.one()
    assert a["_span"].name == f"chat {MODEL}"
    assert a[sc.GEN_AI_PROVIDER_NAME] == "anthropic" and a[sc.GEN_AI_OPERATION_NAME] == "chat"
    assert a[sc.STREAMED] is False and sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK not in a
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens("Say hello", "Be brief")
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 24
    assert a[sc.RESPONSE_CHARS] == len(message.content[0].text) == 96
    assert a[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("end_turn",)
    assert a[sc.GEN_AI_RESPONSE_MODEL] == SNAPSHOT and a[sc.GEN_AI_RESPONSE_ID] == message.id
    assert a[sc.USAGE_MISSING] is False and a[sc.EMPTY_RESPONSE] is False and a[sc.TRUNCATED] is False


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_cache_tokens_are_normalised(rec: Recorded, anthropic_client: Any, stream: bool) -> None:
    text = "Use the cached context please [cache:10][cache-write:5]"
    result = create(anthropic_client, text, stream=stream)
    if not stream:
        assert result.usage.input_tokens == prompt_tokens(text) - 15  # what Anthropic reports
    a = rec.one()
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens(text)  # cache reads and writes added back
    assert a[sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 10
    assert a[sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 5
    # the mock writes to the 5-minute cache only (ephemeral_1h_input_tokens: 0): no 1-hour share
    assert sc.CACHE_CREATION_1H_INPUT_TOKENS not in a
    if not stream:
        assert result.usage.cache_creation.ephemeral_5m_input_tokens == 5


def test_stream_marks_ttft_and_usage(rec: Recorded, anthropic_client: Any) -> None:
    text = "Stream please [slow-first-token:200]"
    stream = anthropic_client.messages.create(model=MODEL, max_tokens=1000, messages=user(text), stream=True)
    assert isinstance(stream, anthropic.Stream)
    events = list(stream)
    received = "".join(e.delta.text for e in events if e.type == "content_block_delta")
    a = rec.one()
    assert a[sc.STREAMED] is True
    assert a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0.2
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens(text)
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 24
    assert a[sc.RESPONSE_CHARS] == len(received) == 96
    assert a[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("end_turn",)
    assert a[sc.GEN_AI_RESPONSE_MODEL] == SNAPSHOT


def test_stream_without_usage_is_flagged(rec: Recorded, anthropic_client: Any) -> None:
    text = "x [no-usage]"
    create(anthropic_client, text, stream=True)
    a = rec.one()
    assert a[sc.USAGE_MISSING] is True
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens(text)  # known from message_start
    assert sc.GEN_AI_USAGE_OUTPUT_TOKENS not in a
    assert a[sc.RESPONSE_CHARS] == 96


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_thinking_is_reasoning_not_response(rec: Recorded, anthropic_client: Any, stream: bool) -> None:
    create(anthropic_client, "Think first [slow-first-token:200]", stream=stream, max_tokens=2048,
           thinking={"type": "enabled", "budget_tokens": 1024})
    a = rec.one()
    assert a[sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] == 32
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 24 + 32
    assert a[sc.RESPONSE_CHARS] == 96  # the text block only
    if stream:
        assert a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0.2


def test_parse(rec: Recorded, anthropic_client: Any) -> None:
    class Weather(BaseModel):
        city: str
        degrees: int

    message = anthropic_client.messages.parse(model=MODEL, max_tokens=1000, messages=user("JSON weather"),
                                              output_format=Weather)
    assert message.parsed_output == Weather(city="sample-city", degrees=42)
    a = rec.one()
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == tokens(message.content[0].text)
    assert a[sc.RESPONSE_CHARS] == len(message.content[0].text)


# --- messages.stream helper ------------------------------------------------------------------------------------
def test_stream_helper_works_and_records_once(rec: Recorded, anthropic_client: Any, mock_llm: Any) -> None:
    text = "helper [slow-first-token:200]"
    with anthropic_client.messages.stream(model=MODEL, max_tokens=1000, messages=user(text)) as stream:
        streamed_text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert streamed_text == final.content[0].text
    assert len(mock_llm.requests) == 1
    a = rec.one()
    assert a[sc.STREAMED] is True and a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0.2
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens(text)
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == final.usage.output_tokens == 24
    assert a[sc.RESPONSE_CHARS] == 96


def test_stream_helper_get_final_message_without_iterating(rec: Recorded, anthropic_client: Any) -> None:
    with anthropic_client.messages.stream(model=MODEL, max_tokens=1000, messages=user("final only")) as stream:
        assert stream.get_final_text()
    assert rec.one()[sc.USAGE_MISSING] is False


def test_stream_helper_closed_early(rec: Recorded, anthropic_client: Any) -> None:
    with anthropic_client.messages.stream(model=MODEL, max_tokens=1000, messages=user("early")) as stream:
        for event in stream:
            if event.type == "text":
                break
    a = rec.one()
    assert a[sc.RESPONSE_CHARS] == 4 and sc.ERROR_TYPE not in a and a[sc.USAGE_MISSING] is True


def test_async_create_stream_and_helper(rec: Recorded, mock_llm: Any) -> None:
    async def run() -> Any:
        async with async_client(mock_llm) as aclient:
            await aclient.messages.create(model=MODEL, max_tokens=100, messages=user("one"))
            stream = await aclient.messages.create(model=MODEL, max_tokens=100, messages=user("two"), stream=True)
            assert isinstance(stream, anthropic.AsyncStream)
            async for _ in stream:
                pass
            async with aclient.messages.stream(model=MODEL, max_tokens=100, messages=user("three")) as helper:
                return await helper.get_final_message()

    final = asyncio.run(run())
    assert final.content[0].text
    spans = sorted(rec.spans(), key=lambda s: s.start_time)
    assert [s.attributes[sc.STREAMED] for s in spans] == [False, True, True]
    assert [s.attributes[sc.GEN_AI_USAGE_INPUT_TOKENS] for s in spans] == [
        prompt_tokens("one"), prompt_tokens("two"), prompt_tokens("three")]
    assert all(s.attributes[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 24 for s in spans)


# --- stop reasons ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(("marker", "stop", "flags", "chars"), [
    ("[truncate]", "max_tokens", {sc.TRUNCATED: True, sc.REFUSAL: False}, 48),
    ("[refuse]", "refusal", {sc.REFUSAL: True, sc.EMPTY_RESPONSE: False}, len(REFUSAL_TEXT)),
    ("[empty]", "end_turn", {sc.EMPTY_RESPONSE: True}, 0),
])
def test_stop_reasons(rec: Recorded, anthropic_client: Any, stream: bool, marker: str, stop: str,
                      flags: dict[str, bool], chars: int) -> None:
    create(anthropic_client, f"go {marker}", stream=stream)
    a = rec.one()
    assert a[sc.GEN_AI_RESPONSE_FINISH_REASONS] == (stop,)
    for flag, value in flags.items():
        assert a[flag] is value, flag
    assert a[sc.RESPONSE_CHARS] == chars


# --- tools -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(("marker", "calls", "failures"), [
    ("[tool]", 1, 0), ("[tools:2]", 2, 0), ("[tool:bad-json]", 1, 1), ("[tool:unknown]", 1, 1),
])
def test_tool_use_and_failures(rec: Recorded, anthropic_client: Any, stream: bool, marker: str, calls: int,
                               failures: int) -> None:
    text = f"Weather? {marker}"
    create(anthropic_client, text, stream=stream, tools=[WEATHER])
    a = rec.one()
    assert a[sc.TOOL_CALLS] == calls and a[sc.TOOL_CALL_FAILURES] == failures
    assert a[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_use",)
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == estimate_prompt_tokens(user(text), tools=[WEATHER])
    if marker == "[tool]":
        assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == tokens("get_weather") + tokens(WEATHER_ARGS)


def test_stream_helper_with_bad_tool_json_fails_as_without_sdk(rec: Recorded, anthropic_client: Any) -> None:
    def run() -> BaseException:
        with pytest.raises(ValueError) as info:  # noqa: PT012 - the helper raises while accumulating
            with anthropic_client.messages.stream(model=MODEL, max_tokens=1000, tools=[WEATHER],
                                                  messages=user("Weather? [tool:bad-json]")) as stream:
                stream.get_final_message()
        return info.value

    recorded = run()
    a = rec.one()
    assert a[sc.TOOL_CALLS] == 1 and a[sc.TOOL_CALL_FAILURES] == 1  # recorded when the helper closed the stream
    inferwatch.uninstrument_anthropic()
    plain = run()
    assert type(recorded) is type(plain) and str(recorded) == str(plain)


def _tool_conversation(result: dict[str, Any], *, later: bool = False) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                           "input": {"location": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", **result}]},
    ]
    if later:
        messages += [{"role": "assistant", "content": "The weather service failed."},
                     {"role": "user", "content": "Never mind."}]
    return messages


@pytest.mark.parametrize(("result", "later", "failures"), [
    ({"content": "service down", "is_error": True}, False, 1),
    ({"content": '{"error": "no such city"}'}, False, 1),
    ({"content": "21 degrees", "is_error": False}, False, 0),
    ({"content": "service down", "is_error": True}, True, 0),
])
def test_tool_errors_reported_back(rec: Recorded, anthropic_client: Any, result: dict[str, Any], later: bool,
                                   failures: int) -> None:
    anthropic_client.messages.create(model=MODEL, max_tokens=100, tools=[WEATHER],
                                     messages=_tool_conversation(result, later=later))
    assert rec.one()[sc.TOOL_CALL_FAILURES] == failures


# --- errors ------------------------------------------------------------------------------------------------------
class Spy:
    def __init__(self, real: Any) -> None:
        self.real = real
        self.raised: list[BaseException] = []

    def __call__(self, resource: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.real(resource, *args, **kwargs)
        except BaseException as exc:
            self.raised.append(exc)
            raise


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_provider_error_propagates_unchanged(sdk: Recorded, anthropic_client: Any,
                                             monkeypatch: pytest.MonkeyPatch, stream: bool) -> None:
    messages = anthropic.resources.messages.Messages
    spy = Spy(messages.create)
    monkeypatch.setattr(messages, "create", lambda self, *a, **k: spy(self, *a, **k))
    inferwatch.instrument_anthropic()
    with pytest.raises(anthropic.RateLimitError) as info:
        create(anthropic_client, "x [error:429]", stream=stream)
    assert spy.raised == [info.value] and info.value is spy.raised[0]
    a = sdk.one()
    assert a[sc.ERROR_TYPE] == "RateLimitError"
    assert a["_span"].status.status_code is StatusCode.ERROR


def test_stream_helper_error_at_start(rec: Recorded, anthropic_client: Any) -> None:
    with pytest.raises(anthropic.RateLimitError):
        with anthropic_client.messages.stream(model=MODEL, max_tokens=100, messages=user("x [error:429]")):
            pass
    assert rec.one()[sc.ERROR_TYPE] == "RateLimitError"


def test_error_mid_stream_is_recorded_and_reraised(rec: Recorded, anthropic_client: Any) -> None:
    with pytest.raises(anthropic.APIStatusError) as info:
        create(anthropic_client, "x [stream-error]", stream=True)
    a = rec.one()
    assert a[sc.ERROR_TYPE] == type(info.value).__qualname__
    assert a[sc.RESPONSE_CHARS] == 3 * 4


# --- proxy, attribution, install ---------------------------------------------------------------------------------
def test_abandoned_stream_is_recorded_when_collected(rec: Recorded, anthropic_client: Any) -> None:
    stream = anthropic_client.messages.create(model=MODEL, max_tokens=100, messages=user("abandon"), stream=True)
    for event in stream:
        if event.type == "content_block_delta":
            break
    del stream, event
    a = rec.one_collected()
    assert a[sc.RESPONSE_CHARS] == 4 and a[sc.USAGE_MISSING] is True
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens("abandon")


def test_tags_experiment_and_hashed_user(rec: Recorded, anthropic_client: Any) -> None:
    with inferwatch.tags(feature="support", user_id="user-7"), inferwatch.experiment("tone", {"warm": 1.0}):
        with anthropic_client.messages.stream(model=MODEL, max_tokens=100, messages=user("tagged")) as stream:
            stream.until_done()
    a = rec.one()
    assert a[sc.FEATURE] == "support" and a[sc.EXPERIMENT] == "tone" and a[sc.VARIANT] == "warm"
    assert a[sc.USER_HASH] == inferwatch.hash_user_id("user-7")
    assert not any(v == "user-7" for v in a.values())


def _originals() -> dict[tuple[type, str], Any]:
    m = anthropic.resources.messages
    return {(cls, name): cls.__dict__[name] for cls in (m.Messages, m.AsyncMessages)
            for name in ("create", "parse", "stream")}


def test_uninstrument_restores_the_original_functions(sdk: Recorded) -> None:
    before = _originals()
    assert inferwatch.instrument_anthropic() is True
    assert inferwatch.instrument_anthropic() is False  # idempotent
    assert all(cls.__dict__[m] is not fn for (cls, m), fn in before.items())
    assert inferwatch.uninstrument_anthropic() is True
    assert _originals() == before and all(cls.__dict__[m] is fn for (cls, m), fn in before.items())
    inferwatch.instrument_anthropic()
    inferwatch.shutdown()
    assert _originals() == before


def test_double_instrument_records_once(rec: Recorded, anthropic_client: Any) -> None:
    assert inferwatch.instrument_anthropic() is False
    inferwatch.wrap_anthropic(anthropic_client)  # wrapped and instrumented: still once
    create(anthropic_client, "once")
    with anthropic_client.messages.stream(model=MODEL, max_tokens=100, messages=user("once")) as stream:
        stream.until_done()
    assert len(rec.spans()) == 2


def test_nothing_recorded_before_init(anthropic_client: Any) -> None:
    before = _originals()
    try:
        inferwatch.instrument_anthropic()
        stream = anthropic_client.messages.create(model=MODEL, max_tokens=100, messages=user("early"), stream=True)
        assert type(stream) is anthropic.Stream
        list(stream)
        with anthropic_client.messages.stream(model=MODEL, max_tokens=100, messages=user("early")) as helper:
            helper.until_done()
        recorded = start_sdk()
        create(anthropic_client, "after init")
        assert recorded.one()[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens("after init")
    finally:
        inferwatch.shutdown()
    assert _originals() == before


def test_the_provider_name_comes_from_the_clients_class(rec: Recorded, mock_llm: Any) -> None:
    """Bedrock's and Vertex's clients are ``anthropic.Anthropic`` subclasses named for their cloud; the provider is
    read from the class name (remembered per class: each client is called twice)."""
    class AnthropicBedrockLike(anthropic.Anthropic):
        pass

    class AnthropicVertexLike(anthropic.Anthropic):
        pass

    for cls, provider in ((AnthropicBedrockLike, "aws.bedrock"), (AnthropicVertexLike, "gcp.vertex_ai"),
                          (anthropic.Anthropic, "anthropic")):
        client = cls(base_url=mock_llm.anthropic_base_url, api_key=MOCK_API_KEY, max_retries=0)
        for _ in range(2):
            create(client, "which cloud?")
            assert rec.one()[sc.GEN_AI_PROVIDER_NAME] == provider


def test_wrap_anthropic_instruments_that_client_only(sdk: Recorded, anthropic_client: Any) -> None:
    other = anthropic_client.with_options(timeout=30)
    assert inferwatch.wrap_anthropic(anthropic_client) is anthropic_client
    create(other, "not wrapped")
    assert sdk.spans() == []
    create(anthropic_client, "wrapped")
    create(anthropic_client, "wrapped", stream=True)
    with anthropic_client.messages.stream(model=MODEL, max_tokens=100, messages=user("wrapped")) as stream:
        stream.until_done()
    assert len(sdk.spans()) == 3
    assert inferwatch.uninstrument_anthropic() is True
    assert not {"create", "parse", "stream"} & set(vars(anthropic_client.messages))


def test_wrap_async_client(sdk: Recorded, mock_llm: Any) -> None:
    async def run() -> None:
        async with async_client(mock_llm) as aclient:
            inferwatch.wrap_anthropic(aclient)
            await aclient.messages.create(model=MODEL, max_tokens=100, messages=user("a"))
            async with aclient.messages.stream(model=MODEL, max_tokens=100, messages=user("b")) as stream:
                await stream.until_done()

    asyncio.run(run())
    assert sorted(s.attributes[sc.STREAMED] for s in sdk.spans()) == [False, True]
