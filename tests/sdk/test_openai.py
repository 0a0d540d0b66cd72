"""The OpenAI integration against the mock LLM server, with the real ``openai`` client.

Every number asserted is computed from the mock's documented rules (examples/mock_llm.py): prompt tokens =
sum over messages of ``4 + ceil(len(text) / 4)`` (+ the compact JSON of the tools), 24 output tokens of 4
characters by default, a tool call costs ``tokens(name) + tokens(arguments)``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import re
import sys
import threading
import types
import weakref
from types import SimpleNamespace
from collections.abc import Iterator
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from opentelemetry.trace import StatusCode  # noqa: E402
from pydantic import BaseModel  # noqa: E402

import inferwatch  # noqa: E402
from examples.mock_llm import REFUSAL_TEXT, estimate_prompt_tokens  # noqa: E402
from inferwatch import semconv as sc  # noqa: E402
from inferwatch.integrations import _openai_chat, _readers, _streams  # noqa: E402
from tests.helpers.mock_llm_fixtures import MOCK_API_KEY  # noqa: E402
from tests.helpers.mock_llm_rules import prompt_tokens, tokens, user  # noqa: E402
from tests.helpers.sdk_recording import Recorded, start_sdk  # noqa: E402

MODEL = "gpt-4o-mini"
SNAPSHOT = "gpt-4o-mini-2024-07-18"
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}
WEATHER_ARGS = '{"location":"sample-location"}'
RESP_WEATHER = {"type": "function", "name": "get_weather", "parameters": WEATHER["function"]["parameters"]}


@pytest.fixture
def rec(sdk: Recorded) -> Recorded:
    """``sdk`` + ``instrument_openai()``."""
    assert inferwatch.instrument_openai() is True
    return sdk


def async_client(mock: Any) -> Any:
    return openai.AsyncOpenAI(base_url=mock.openai_base_url, api_key=MOCK_API_KEY, max_retries=0)


def bare_chunks(client: Any, text: str) -> list[Any]:
    """The chunks of a streamed request made through the raw response (never recorded): what the app gets
    without the SDK, to compare the recorded stream's chunks with."""
    return list(client.chat.completions.with_raw_response.create(model=MODEL, messages=user(text),
                                                                 stream=True).parse())


async def bare_chunks_async(aclient: Any, text: str) -> list[Any]:
    """:func:`bare_chunks` for an async client."""
    raw = await aclient.chat.completions.with_raw_response.create(model=MODEL, messages=user(text), stream=True)
    parsed = raw.parse()  # the stream itself, or a coroutine giving it (older openai)
    return [c async for c in (await parsed if asyncio.iscoroutine(parsed) else parsed)]


def check_common(a: dict[str, Any], *, streamed: bool) -> None:
    assert a["_span"].name == f"chat {MODEL}"
    assert a[sc.GEN_AI_OPERATION_NAME] == "chat"
    assert a[sc.GEN_AI_PROVIDER_NAME] == "openai"
    assert a[sc.GEN_AI_REQUEST_MODEL] == MODEL
    assert a[sc.STREAMED] is streamed
    if not streamed:
        assert sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK not in a


# --- chat completions ------------------------------------------------------------------------------------------
def test_chat_create_records_tokens_and_response(rec: Recorded, openai_client: Any) -> None:
    text = "Say hello"
    completion = openai_client.chat.completions.create(model=MODEL, messages=user(text))
    assert type(completion) is openai.types.chat.ChatCompletion  # the app's object, untouched
    a = rec.one()
    check_common(a, streamed=False)
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens(text)
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 24
    assert a[sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 0
    assert a[sc.RESPONSE_CHARS] == 96 == len(completion.choices[0].message.content)
    assert a[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert a[sc.GEN_AI_RESPONSE_MODEL] == SNAPSHOT
    assert a[sc.GEN_AI_RESPONSE_ID] == completion.id
    assert a[sc.USAGE_MISSING] is False and a[sc.EMPTY_RESPONSE] is False and a[sc.TRUNCATED] is False
    assert a[sc.REFUSAL] is False and a[sc.TOOL_CALLS] == 0 and a[sc.TOOL_CALL_FAILURES] == 0
    assert a["_span"].status.status_code is not StatusCode.ERROR


def test_chat_stream_with_usage_marks_ttft(rec: Recorded, openai_client: Any, mock_llm: Any) -> None:
    text = "Stream please [slow-first-token:200]"
    stream = openai_client.chat.completions.create(model=MODEL, messages=user(text), stream=True,
                                                   stream_options={"include_usage": True})
    assert isinstance(stream, openai.Stream)
    tap = stream._decoder
    chunks = list(stream)
    received = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[-1].usage is not None and chunks[-1].choices == []
    a = rec.one()
    check_common(a, streamed=True)
    assert a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0.2
    # the tap keeps every chunk of bytes with its clock; the clock of the chunk that brought the first text is
    # the time to first token
    assert isinstance(tap, _openai_chat._ChatEvents)
    kept = list(zip(tap.kept[0::2], tap.kept[1::2]))  # chunk, clock, chunk, clock...
    assert b"".join(chunk for chunk, _ in kept).count(b"\n\n") == len(chunks) + 1  # and "[DONE]"
    first_text = next(clock for chunk, clock in kept if re.search(rb'"content":"[^"]', chunk))
    assert a[sc.FIRST_TOKEN_TIME_UNIX_NANO] == first_text
    assert a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] == pytest.approx((first_text - a["_span"].start_time) / 1e9)
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens(text)
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 24
    assert a[sc.RESPONSE_CHARS] == len(received) == 96
    assert a[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert a[sc.GEN_AI_RESPONSE_MODEL] == SNAPSHOT
    assert a[sc.USAGE_MISSING] is False
    assert a[sc.DECODE_TOKENS_PER_SECOND] > 0


def test_stream_without_include_usage_is_usage_missing_and_request_untouched(
        rec: Recorded, openai_client: Any, mock_llm: Any) -> None:
    stream = openai_client.chat.completions.create(model=MODEL, messages=user("no usage asked"), stream=True)
    assert len(list(stream)) == 24 + 2  # role chunk, 24 tokens, finish chunk: no usage chunk was added
    assert "stream_options" not in mock_llm.requests[-1].body  # include_usage is never injected
    a = rec.one()
    assert a[sc.USAGE_MISSING] is True
    assert sc.GEN_AI_USAGE_INPUT_TOKENS not in a and sc.GEN_AI_USAGE_OUTPUT_TOKENS not in a
    assert a[sc.RESPONSE_CHARS] == 96


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_no_usage_reported_is_usage_missing(rec: Recorded, openai_client: Any, stream: bool) -> None:
    kwargs: dict[str, Any] = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
    result = openai_client.chat.completions.create(model=MODEL, messages=user("x [no-usage]"), **kwargs)
    if stream:
        list(result)
    a = rec.one()
    assert a[sc.USAGE_MISSING] is True
    assert a[sc.RESPONSE_CHARS] == 96


def test_cache_and_reasoning_tokens(rec: Recorded, openai_client: Any) -> None:
    text = "Think about it [cache:8]"
    openai_client.chat.completions.create(model="o3-mini", messages=user(text))
    a = rec.one()
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens(text)  # cached tokens are inside prompt tokens
    assert a[sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 8
    assert a[sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] == 64  # medium effort
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 24 + 64  # reasoning inside output


def test_async_chat_create_and_stream(rec: Recorded, mock_llm: Any) -> None:
    async def run() -> tuple[Any, str]:
        async with async_client(mock_llm) as aclient:
            completion = await aclient.chat.completions.create(model=MODEL, messages=user("async one"))
            stream = await aclient.chat.completions.create(
                model=MODEL, messages=user("async two [slow-first-token:200]"), stream=True,
                stream_options={"include_usage": True})
            assert isinstance(stream, openai.AsyncStream)
            text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
            return completion, text

    completion, text = asyncio.run(run())
    spans = sorted(rec.spans(), key=lambda s: s.start_time)
    assert len(spans) == 2
    plain, streamed = dict(spans[0].attributes), dict(spans[1].attributes)
    assert plain[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens("async one")
    assert plain[sc.RESPONSE_CHARS] == len(completion.choices[0].message.content) == 96
    assert sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK not in plain
    assert streamed[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens("async two [slow-first-token:200]")
    assert streamed[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 24
    assert streamed[sc.RESPONSE_CHARS] == len(text) == 96
    assert streamed[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0.2


def test_chat_stream_helper_works_and_records_once(rec: Recorded, openai_client: Any, mock_llm: Any) -> None:
    text = "helper [slow-first-token:200]"
    with openai_client.chat.completions.stream(model=MODEL, messages=user(text),
                                               stream_options={"include_usage": True}) as stream:
        deltas = [e.delta for e in stream if e.type == "content.delta"]
        final = stream.get_final_completion()
    assert "".join(deltas) == final.choices[0].message.content
    assert len(mock_llm.requests) == 1
    a = rec.one()
    check_common(a, streamed=True)
    assert a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0.2
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens(text)
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == final.usage.completion_tokens == 24
    assert a[sc.RESPONSE_CHARS] == 96


def test_async_chat_stream_helper(rec: Recorded, mock_llm: Any) -> None:
    async def run() -> Any:
        async with async_client(mock_llm) as aclient:
            async with aclient.chat.completions.stream(model=MODEL, messages=user("async helper")) as stream:
                async for _ in stream:
                    pass
                return await stream.get_final_completion()

    final = asyncio.run(run())
    a = rec.one()
    assert a[sc.STREAMED] is True and a[sc.USAGE_MISSING] is True  # no include_usage asked
    assert a[sc.RESPONSE_CHARS] == len(final.choices[0].message.content) == 96


class Weather(BaseModel):
    city: str
    degrees: int


def test_chat_parse(rec: Recorded, openai_client: Any) -> None:
    text = "Weather as JSON"
    completion = openai_client.chat.completions.parse(model=MODEL, messages=user(text), response_format=Weather)
    parsed = completion.choices[0].message.parsed
    assert parsed == Weather(city="sample-city", degrees=42)
    content = completion.choices[0].message.content
    a = rec.one()
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens(text)
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == tokens(content)
    assert a[sc.RESPONSE_CHARS] == len(content)


# --- Responses API ---------------------------------------------------------------------------------------------
def test_responses_create(rec: Recorded, openai_client: Any) -> None:
    response = openai_client.responses.create(model=MODEL, input="Answer briefly", instructions="Be terse")
    a = rec.one()
    check_common(a, streamed=False)
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens("Answer briefly", "Be terse")
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 24
    assert a[sc.RESPONSE_CHARS] == len(response.output_text) == 96
    assert a[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert a[sc.GEN_AI_RESPONSE_ID] == response.id
    assert a[sc.GEN_AI_RESPONSE_MODEL] == SNAPSHOT


def test_responses_stream(rec: Recorded, openai_client: Any) -> None:
    text = "stream it [slow-first-token:200]"
    stream = openai_client.responses.create(model=MODEL, input=text, stream=True)
    events = list(stream)
    assert events[-1].type == "response.completed"
    a = rec.one()
    check_common(a, streamed=True)
    assert a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0.2
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens(text)
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 24
    assert a[sc.RESPONSE_CHARS] == 96
    assert a[sc.USAGE_MISSING] is False


def test_responses_stream_helper_records_once(rec: Recorded, openai_client: Any, mock_llm: Any) -> None:
    with openai_client.responses.stream(model=MODEL, input="helper") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text
    assert len(mock_llm.requests) == 1
    a = rec.one()
    assert a[sc.STREAMED] is True
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == final.usage.input_tokens == prompt_tokens("helper")
    assert a[sc.RESPONSE_CHARS] == 96


def test_responses_no_usage_stream(rec: Recorded, openai_client: Any) -> None:
    list(openai_client.responses.create(model=MODEL, input="x [no-usage]", stream=True))
    assert rec.one()[sc.USAGE_MISSING] is True


def test_async_responses_create_and_stream(rec: Recorded, mock_llm: Any) -> None:
    async def run() -> None:
        async with async_client(mock_llm) as aclient:
            await aclient.responses.create(model=MODEL, input="one")
            stream = await aclient.responses.create(model=MODEL, input="two", stream=True)
            async for _ in stream:
                pass
            async with aclient.responses.stream(model=MODEL, input="three") as helper:
                await helper.get_final_response()

    asyncio.run(run())
    spans = sorted(rec.spans(), key=lambda s: s.start_time)
    assert [s.attributes[sc.STREAMED] for s in spans] == [False, True, True]
    assert [s.attributes[sc.GEN_AI_USAGE_INPUT_TOKENS] for s in spans] == [
        prompt_tokens("one"), prompt_tokens("two"), prompt_tokens("three")]


# --- flags -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(("marker", "finish", "flags", "chars", "output"), [
    ("[truncate]", "length", {sc.TRUNCATED: True}, 48, 12),
    ("[refuse]", "stop", {sc.REFUSAL: True, sc.EMPTY_RESPONSE: False}, len(REFUSAL_TEXT), tokens(REFUSAL_TEXT)),
    ("[content-filter]", "content_filter", {sc.REFUSAL: True}, 48, 12),
    ("[empty]", "stop", {sc.EMPTY_RESPONSE: True, sc.REFUSAL: False}, 0, 0),
])
def test_chat_finish_flags(rec: Recorded, openai_client: Any, stream: bool, marker: str, finish: str,
                           flags: dict[str, bool], chars: int, output: int) -> None:
    kwargs: dict[str, Any] = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
    result = openai_client.chat.completions.create(model=MODEL, messages=user(f"go {marker}"), **kwargs)
    if stream:
        list(result)
    a = rec.one()
    assert a[sc.GEN_AI_RESPONSE_FINISH_REASONS] == (finish,)
    for flag, value in flags.items():
        assert a[flag] is value, flag
    assert a[sc.RESPONSE_CHARS] == chars
    assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == output


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_responses_truncated_and_refusal(rec: Recorded, openai_client: Any, stream: bool) -> None:
    for marker in ("[truncate]", "[refuse]"):
        result = openai_client.responses.create(model=MODEL, input=f"go {marker}", stream=stream)
        if stream:
            list(result)
    truncated, refused = sorted(rec.spans(), key=lambda s: s.start_time)
    assert truncated.attributes[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("max_output_tokens",)
    assert truncated.attributes[sc.TRUNCATED] is True
    assert refused.attributes[sc.REFUSAL] is True
    assert refused.attributes[sc.RESPONSE_CHARS] == len(REFUSAL_TEXT)


# --- tool calls ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(("marker", "calls", "failures"), [
    ("[tool]", 1, 0), ("[tools:2]", 2, 0), ("[tool:bad-json]", 1, 1), ("[tool:unknown]", 1, 1),
])
def test_chat_tool_calls_and_failures(rec: Recorded, openai_client: Any, stream: bool, marker: str, calls: int,
                                      failures: int) -> None:
    messages = user(f"Weather? {marker}")
    kwargs: dict[str, Any] = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
    result = openai_client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER], **kwargs)
    if stream:
        list(result)
    a = rec.one()
    assert a[sc.TOOL_CALLS] == calls
    assert a[sc.TOOL_CALL_FAILURES] == failures
    assert a[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_calls",)
    assert a[sc.EMPTY_RESPONSE] is False
    assert a[sc.GEN_AI_USAGE_INPUT_TOKENS] == estimate_prompt_tokens(messages, tools=[WEATHER])
    if marker == "[tool]":
        assert a[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == tokens("get_weather") + tokens(WEATHER_ARGS)


def _tool_conversation(result: str, *, later: bool = False) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_weather", "arguments": '{"location":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": result},
    ]
    if later:  # the conversation went on: the error is history now
        messages += [{"role": "assistant", "content": "Sorry, the weather service failed."},
                     {"role": "user", "content": "Try again tomorrow then."}]
    return messages


@pytest.mark.parametrize(("result", "later", "failures"), [
    ('{"error": "upstream timeout"}', False, 1),
    ('{"error": null, "temperature": 21}', False, 0),
    ("21 degrees and sunny", False, 0),
    ('{"error": "upstream timeout"}', True, 0),
])
def test_tool_errors_reported_back(rec: Recorded, openai_client: Any, result: str, later: bool,
                                   failures: int) -> None:
    openai_client.chat.completions.create(model=MODEL, messages=_tool_conversation(result, later=later),
                                          tools=[WEATHER])
    a = rec.one()
    assert a[sc.TOOL_CALL_FAILURES] == failures
    assert a[sc.TOOL_CALLS] == (1 if later else 0)  # after a tool result the model answers with text


def test_tool_errors_are_those_of_the_request_as_it_was_sent(rec: Recorded, openai_client: Any) -> None:
    """The request's tool results are read when the call is recorded (the export thread), from a copy of the
    messages list taken as the call was made: the app appending the reply (and more) to its list meanwhile, as
    apps do, changes nothing."""
    messages = _tool_conversation('{"error": "upstream timeout"}')
    long = [{"role": "user", "content": f"turn {i}"} for i in range(70)] + messages  # read at the call
    for stream, request in ((False, messages), (True, messages), (False, long)):
        sent = list(request)
        reply = openai_client.chat.completions.create(model=MODEL, messages=sent, tools=[WEATHER], stream=stream)
        sent += [{"role": "assistant", "content": "Sorry."}, {"role": "user", "content": "Thanks."}]
        if stream:
            list(reply)
        assert rec.one()[sc.TOOL_CALL_FAILURES] == 1


def test_responses_tool_calls_and_reported_errors(rec: Recorded, openai_client: Any) -> None:
    openai_client.responses.create(model=MODEL, input="Weather? [tool]", tools=[RESP_WEATHER])
    ok = rec.one()
    assert ok[sc.TOOL_CALLS] == 1 and ok[sc.TOOL_CALL_FAILURES] == 0
    assert ok[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_calls",)
    list(openai_client.responses.create(model=MODEL, input="Weather? [tool:bad-json]", tools=[RESP_WEATHER],
                                        stream=True))
    bad = rec.one()
    assert bad[sc.TOOL_CALLS] == 1 and bad[sc.TOOL_CALL_FAILURES] == 1
    openai_client.responses.create(model=MODEL, tools=[RESP_WEATHER], input=[
        {"role": "user", "content": "Weather?"},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": json.dumps({"error": "no such city"})},
    ])
    reported = rec.one()
    assert reported[sc.TOOL_CALL_FAILURES] == 1 and reported[sc.TOOL_CALLS] == 0


# --- errors ----------------------------------------------------------------------------------------------------
class Spy:
    """Sits under our wrapper (installed on the class before it) and keeps what the real method raised."""

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
def test_provider_error_propagates_unchanged(sdk: Recorded, openai_client: Any, monkeypatch: pytest.MonkeyPatch,
                                             stream: bool) -> None:
    completions = openai.resources.chat.completions.Completions
    spy = Spy(completions.create)
    monkeypatch.setattr(completions, "create", lambda self, *a, **k: spy(self, *a, **k))
    inferwatch.instrument_openai()
    with pytest.raises(openai.RateLimitError) as info:
        openai_client.chat.completions.create(model=MODEL, messages=user("x [error:429]"), stream=stream)
    assert spy.raised == [info.value] and info.value is spy.raised[0]  # the very same object
    assert info.value.status_code == 429
    a = sdk.one()
    assert a[sc.ERROR_TYPE] == "RateLimitError"
    assert a["_span"].status.status_code is StatusCode.ERROR
    assert a[sc.USAGE_MISSING] is False  # an error is not an unpriced success


def test_error_mid_stream_is_recorded_and_reraised(rec: Recorded, openai_client: Any) -> None:
    stream = openai_client.chat.completions.create(model=MODEL, messages=user("x [stream-error]"), stream=True)
    seen: list[Any] = []
    with pytest.raises(openai.APIError) as info:
        for chunk in stream:
            seen.append(chunk)
    assert type(info.value) is openai.APIError
    a = rec.one()
    assert a[sc.ERROR_TYPE] == "APIError"
    assert a[sc.RESPONSE_CHARS] == 3 * 4  # what arrived before the error
    assert a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0


# --- the event tap (chat streams, capture off) ----------------------------------------------------------------
_VOLATILE_ATTRIBUTES = {sc.GEN_AI_RESPONSE_ID, sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, sc.DECODE_TOKENS_PER_SECOND,
                        sc.FIRST_TOKEN_TIME_UNIX_NANO}


def _stream_attributes(rec: Recorded, client: Any, text: str, **kwargs: Any) -> tuple[str, dict[str, Any]]:
    """Read a recorded stream to its end (or its error): the stream's type and the span's stable attributes."""
    stream = client.chat.completions.create(model=MODEL, messages=user(text), stream=True, **kwargs)
    kind = "tap" if type(stream) is openai.Stream and type(stream._decoder).__name__ == "_ChatEvents" else (
        type(stream).__name__)
    try:
        list(stream)
    except openai.APIError:
        pass
    a = rec.one()
    assert a.pop("_span").end_time > 0
    return kind, {k: v for k, v in a.items() if k not in _VOLATILE_ATTRIBUTES}


@pytest.mark.parametrize("text", ["plain [slow-first-token:30]", "Weather? [tool]", "Weather? [tools:2]",
                                  "Weather? [tool:bad-json]", "Weather? [tool:unknown]", "go [refuse]",
                                  "go [truncate]", "go [content-filter]", "go [empty]", "x [stream-error]"])
def test_tapped_and_proxied_chat_streams_record_the_same(rec: Recorded, openai_client: Any,
                                                         monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """A chat stream comes back as the client's own ``openai.Stream`` with its decoder tapped, its events read in
    the export thread; the stream proxy (capture on, or a stream class that cannot be tapped) reads the chunk
    objects as the app gets them. Both record the same facts: tokens, flags, tool calls and failures, finish
    reason, the error of a stream that raised."""
    from inferwatch.integrations import openai as iw_openai

    options = {"stream_options": {"include_usage": True}, "tools": [WEATHER]}
    kind, tapped = _stream_attributes(rec, openai_client, text, **options)
    assert kind == "tap"
    monkeypatch.setattr(iw_openai, "_tappable", {})
    kind, proxied = _stream_attributes(rec, openai_client, text, **options)
    assert kind == "StreamProxy"
    assert tapped == proxied
    assert tapped[sc.STREAMED] is True
    assert (tapped.get(sc.ERROR_TYPE) == "APIError") is ("stream-error" in text)


def test_a_read_stream_lets_go_of_its_http_response(rec: Recorded, openai_client: Any) -> None:
    """The ended call waits for the export thread with its chunks only: the HTTP response (request, headers,
    stream objects) is freed with the app's stream, not kept for the garbage collector to walk meanwhile."""
    stream = openai_client.chat.completions.create(model=MODEL, messages=user("hello"), stream=True)
    tap, response = stream._decoder, weakref.ref(stream.response)
    assert isinstance(tap, _openai_chat._ChatEvents)
    list(stream)
    del stream
    gc.collect()
    assert response() is None and tap.kept and tap.done
    assert rec.one()[sc.RESPONSE_CHARS] > 0


def test_a_long_stream_is_read_in_folds_of_bounded_size(rec: Recorded, openai_client: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``FOLD_AT`` kept chunks the tap reads them on the app's thread and forgets them: memory stays
    bounded, and the call records what it records in one piece (TTFT included)."""

    text = "long [tokens:40] [slow-first-token:30] [token-delay:2]"  # about an event per chunk
    _, whole = _stream_attributes(rec, openai_client, text, stream_options={"include_usage": True})
    monkeypatch.setattr(_streams, "FOLD_AT", 3)
    stream = openai_client.chat.completions.create(model=MODEL, messages=user(text), stream=True,
                                                   stream_options={"include_usage": True})
    tap = stream._decoder
    kept = []
    for _ in stream:
        kept.append(len(tap.kept) // 2)  # chunk, clock, chunk, clock...
    a = rec.one()
    folds = sum(later < earlier for earlier, later in zip(kept, kept[1:]))
    assert len(kept) > 40 and max(kept) == 2 and folds >= 5  # read as the third arrives
    assert a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0.03
    assert {k: v for k, v in a.items() if k not in _VOLATILE_ATTRIBUTES and k != "_span"} == whole
    assert whole[sc.RESPONSE_CHARS] == 160 and whole[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 40


def _sse_chunk(content: str, role: str | None = None) -> bytes:
    delta = {"role": role, "content": content} if role else {"content": content}
    body = {"id": "chatcmpl-broken", "object": "chat.completion.chunk", "created": 1, "model": SNAPSHOT,
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    return f"data: {json.dumps(body)}\n\n".encode()


_BROKEN_EVENTS = [_sse_chunk("", role="assistant"), _sse_chunk("Hel"), _sse_chunk("lo!")]


@pytest.mark.parametrize("library", ["httpx2", "httpx"])
@pytest.mark.parametrize(("error", "seen_as"), [("ReadTimeout", "APITimeoutError"),
                                                 ("RemoteProtocolError", "APIConnectionError")])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_transport_error_mid_stream_is_recorded_as_the_app_sees_it(rec: Recorded, library: str, error: str,
                                                                     seen_as: str, mode: str) -> None:
    """The HTTP library's error comes out of the tapped decoder; openai's stream turns it into its own error
    type, and the call records that type, with what arrived before it. httpx2 (openai's own) closes the
    response from inside the read on its way out: that close must not end the call as a success."""
    import importlib

    http = importlib.import_module(library)

    def failure(request: Any) -> Exception:
        return getattr(http, error)("cut", request=request)

    class Broken(http.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, request: Any) -> None:
            self.request = request

        def __iter__(self) -> Iterator[bytes]:
            yield from _BROKEN_EVENTS
            raise failure(self.request)

    class BrokenAsync(http.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, request: Any) -> None:
            self.request = request

        async def __aiter__(self) -> Any:
            for event in _BROKEN_EVENTS:
                yield event
            raise failure(self.request)

    def handler(request: Any) -> Any:
        body = BrokenAsync(request) if mode == "async" else Broken(request)
        return http.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    options = {"base_url": "http://127.0.0.1:9/v1", "api_key": MOCK_API_KEY, "max_retries": 0}
    transport = http.MockTransport(handler)
    seen: list[Any] = []
    if mode == "sync":
        client = openai.OpenAI(**options, http_client=http.Client(transport=transport))
        stream = client.chat.completions.create(model=MODEL, messages=user("hi"), stream=True)
        assert type(stream._decoder).__name__ == "_ChatEvents"
        with pytest.raises(openai.APIError) as info:
            for item in stream:
                seen.append(item)
        raised = type(info.value).__name__
    else:
        async def run() -> str:
            aclient = openai.AsyncOpenAI(**options, http_client=http.AsyncClient(transport=transport))
            stream = await aclient.chat.completions.create(model=MODEL, messages=user("hi"), stream=True)
            assert type(stream._decoder).__name__ == "_ChatEvents"
            try:
                async for item in stream:
                    seen.append(item)
            except openai.APIError as exc:
                return type(exc).__name__
            return "nothing raised"

        raised = asyncio.run(run())
    assert raised == seen_as and len(seen) == 3
    a = rec.one()
    assert a[sc.ERROR_TYPE] == seen_as and a["_span"].status.status_code is StatusCode.ERROR
    assert a[sc.RESPONSE_CHARS] == 6 and a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0


@pytest.mark.parametrize("tuples", ["openai's", "by name"])
def test_transport_errors_are_named_as_openai_names_them(monkeypatch: pytest.MonkeyPatch, tuples: str) -> None:
    """With openai's own exception tuples, and without them (another release): by httpx's base class names."""
    import httpx
    import httpx2

    from inferwatch.integrations._openai_chat import _as_client_error

    if tuples == "by name":
        monkeypatch.setitem(sys.modules, "openai._httpx2", None)  # the import fails
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    for http in (httpx, httpx2):
        assert type(_as_client_error(http.ReadTimeout("t"))) is openai.APITimeoutError
        assert type(_as_client_error(http.ConnectError("c"))) is openai.APIConnectionError
    assert _as_client_error(httpx.ReadTimeout("t", request=request)).request is request
    other = ValueError("not a transport error")
    assert _as_client_error(other) is other
    already = openai.APIError("x", request=request, body=None)
    assert _as_client_error(already) is already


def _canned_client(chunks: list[bytes]) -> Any:
    """A client whose stream delivers exactly these chunks of bytes (httpx2, openai's own HTTP library)."""
    import httpx2

    class Body(httpx2.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            yield from chunks

    def handler(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

    return openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key=MOCK_API_KEY, max_retries=0,
                         http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def test_the_apps_own_exception_leaving_with_is_not_the_streams_error(rec: Recorded, openai_client: Any) -> None:
    """``Stream.__exit__`` closes the response while the app's exception is on its way out: the call ends there,
    as a success (the stream itself did not fail)."""
    with pytest.raises(KeyError):
        with openai_client.chat.completions.create(model=MODEL, messages=user("hi [tokens:10]"),
                                                   stream=True) as stream:
            assert type(stream._decoder).__name__ == "_ChatEvents"
            for _ in stream:
                raise KeyError("the app's own")
    a = rec.one()
    assert sc.ERROR_TYPE not in a and a["_span"].status.status_code is not StatusCode.ERROR


def test_a_stream_closed_part_read_records_what_had_arrived(rec: Recorded) -> None:
    """The tap keeps what the response delivered: here the whole stream came in one chunk, and the app read two
    chunks of it and closed the stream. The call records the provider's whole answer."""
    stream = _canned_client([b"".join(_BROKEN_EVENTS) + b"data: [DONE]\n\n"]).chat.completions.create(
        model=MODEL, messages=user("hi"), stream=True)
    assert type(stream._decoder).__name__ == "_ChatEvents"
    assert [chunk.choices[0].delta.content for chunk in (next(stream), next(stream))] == ["", "Hel"]
    stream.close()
    a = rec.one()
    assert a[sc.RESPONSE_CHARS] == 6 and sc.ERROR_TYPE not in a


@pytest.mark.parametrize("last", [b"data: \xff\n\n", b"data: \xff"], ids=["an event", "a last line cut"])
def test_bytes_the_client_cannot_decode_are_the_calls_error(rec: Recorded, last: bytes) -> None:
    """A line that is not UTF-8: the client's decoder raises ``UnicodeDecodeError`` into the app, and the call
    records it, with the text that came before it. Bytes left without their line end when the body ends are
    decoded by the client then: the HTTP library's close at the end of the body (no exception on its way yet)
    must not end the call first."""
    client = _canned_client([_BROKEN_EVENTS[0], _BROKEN_EVENTS[1], last])
    seen = []
    with pytest.raises(UnicodeDecodeError):
        for chunk in client.chat.completions.create(model=MODEL, messages=user("hi"), stream=True):
            seen.append(chunk)
    a = rec.one()
    assert len(seen) == 2 and a[sc.ERROR_TYPE] == "UnicodeDecodeError" and a[sc.RESPONSE_CHARS] == 3


def test_a_stream_read_while_the_app_handles_an_exception_is_a_success(rec: Recorded, openai_client: Any) -> None:
    """A retry in an ``except`` block: the exception the app is handling is not the stream's, though it is the
    one ``sys.exception()`` gives while the stream's generator closes the response."""
    try:
        raise openai.APITimeoutError(request=None)  # type: ignore[arg-type]
    except openai.APITimeoutError:
        chunks = list(openai_client.chat.completions.create(model=MODEL, messages=user("retry [tokens:5]"),
                                                            stream=True))
    a = rec.one()
    assert len(chunks) > 3 and sc.ERROR_TYPE not in a and a["_span"].status.status_code is not StatusCode.ERROR


def test_an_async_stream_read_while_the_app_handles_an_exception_is_a_success(rec: Recorded) -> None:
    """The same for an async stream, over HTTP/2 (where openai's stream leaves the response undrained, and the
    stream's own close is the first)."""
    import httpx2

    class Body(httpx2.AsyncByteStream):
        async def __aiter__(self) -> Any:
            for event in [*_BROKEN_EVENTS, b"data: [DONE]\n\n"]:
                yield event

    def handler(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Body(),
                               extensions={"http_version": b"HTTP/2"})

    async def run() -> int:
        aclient = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key=MOCK_API_KEY, max_retries=0,
                                     http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
        try:
            raise KeyError("handled by the app")
        except KeyError:
            stream = await aclient.chat.completions.create(model=MODEL, messages=user("hi"), stream=True)
            assert type(stream._decoder).__name__ == "_ChatEvents"
            return len([chunk async for chunk in stream])

    assert asyncio.run(run()) == 3
    a = rec.one()
    assert sc.ERROR_TYPE not in a and a[sc.RESPONSE_CHARS] == 6


def test_a_stream_dropped_part_read_ends_its_call_though_its_response_is_kept(rec: Recorded,
                                                                             openai_client: Any) -> None:
    """The tap holds nothing that keeps the stream alive: dropping it (the app keeping only its response)
    closes it, and that ends the call."""
    stream = openai_client.chat.completions.create(model=MODEL, messages=user("hi [tokens:10]"), stream=True)
    next(stream)
    response = stream.response
    del stream
    gc.collect()
    a = rec.one()
    assert response.is_closed and a[sc.STREAMED] is True and sc.ERROR_TYPE not in a


def test_a_close_taken_before_the_stream_ended_still_closes_it(rec: Recorded, openai_client: Any) -> None:
    """The app may take the response's ``close`` while the tap's hook is in place and call it after the call
    ended (an ``ExitStack`` callback): it closes the response, as without the SDK, and records nothing more."""
    import contextlib

    with contextlib.ExitStack() as stack:
        stream = openai_client.chat.completions.create(model=MODEL, messages=user("taken close"), stream=True)
        stack.callback(stream.response.close)
        chunks = list(stream)
    assert stream.response.is_closed and len(chunks) > 3
    assert rec.one()[sc.RESPONSE_CHARS] == 96
    assert rec.spans() == []


def test_a_tapped_stream_never_read_is_recorded_when_collected(rec: Recorded, openai_client: Any) -> None:
    stream = openai_client.chat.completions.create(model=MODEL, messages=user("never read"), stream=True)
    assert type(stream._decoder).__name__ == "_ChatEvents"
    del stream
    gc.collect()  # the response and the tap refer to each other until the call ends
    a = rec.one()
    assert a[sc.STREAMED] is True and a[sc.RESPONSE_CHARS] == 0 and sc.ERROR_TYPE not in a
    assert sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK not in a


def test_an_async_tapped_stream_closed_early_ends_at_the_close(rec: Recorded, mock_llm: Any) -> None:
    async def run() -> tuple[type, int]:
        async with async_client(mock_llm) as aclient:
            stream = await aclient.chat.completions.create(model=MODEL, messages=user("async early [tokens:30]"),
                                                           stream=True)
            decoder = type(stream._decoder)
            seen = 0
            async for _ in stream:
                seen += 1
                if seen == 3:
                    break
            await stream.close()
            ended = rec.one()  # recorded without the stream being dropped or collected
            assert ended[sc.RESPONSE_CHARS] == 8 and sc.ERROR_TYPE not in ended
            del stream
            return decoder, seen

    decoder, seen = asyncio.run(run())
    assert decoder.__name__ == "_ChatEvents" and seen == 3


def test_leading_id_reads_only_a_plain_first_member() -> None:
    from inferwatch.integrations._openai_chat import _leading_id

    assert _leading_id(b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk"}\n\n') == "chatcmpl-1"
    assert _leading_id(b'data: {"object":"chat.completion.chunk","id":"chatcmpl-3"}\n\n') is None  # not first
    assert _leading_id(b'data:{"id" : "chatcmpl-2", "choices": []}\n\n') is None  # spaced otherwise than OpenAI
    assert _leading_id(b'data: {"id":null,"x":"y"}') is None
    assert _leading_id(b'data: {"id":"a\\"b"}') is None  # escaped: left to the export thread's parse
    assert _leading_id(b'data: {"id":"chatcmpl-cut') is None  # the rest in the next chunk
    assert _leading_id(b': keep-alive\n\ndata: {"id":"x"}\n\n') is None  # not the chunk's first line
    assert _leading_id(b'data: {"id":""}') is None and _leading_id(b"data: [DONE]") is None
    assert _leading_id('data: {"id":"caf\u00e9"}'.encode()) is None


def test_only_stream_classes_that_read_their_decoder_are_tapped() -> None:
    """An openai release whose stream reads its events some other way gets the stream proxy."""
    from inferwatch.integrations._openai_chat import _reads_decoder, _stream_classes

    assert _stream_classes() == {openai.Stream: openai.Stream.__stream__.__code__,
                                 openai.AsyncStream: openai.AsyncStream.__stream__.__code__}

    class Other:
        def _iter_events(self) -> Any:
            return iter(self.response.iter_lines())  # type: ignore[attr-defined]

    class NoClose(openai.Stream):  # type: ignore[type-arg]
        def __stream__(self) -> Any:  # reads its events as openai's do, but leaves the response open
            yield from self._iter_events()

    assert not _reads_decoder(Other, "iter_bytes") and _reads_decoder(openai.Stream, "iter_bytes")
    assert not _reads_decoder(NoClose, "iter_bytes")
    assert _reads_decoder(openai.AsyncStream, "aiter_bytes", "aclose")


# --- the stream proxy ------------------------------------------------------------------------------------------
def test_stream_proxy_is_transparent_and_close_ends_the_call(rec: Recorded, openai_client: Any) -> None:
    with openai_client.chat.completions.create(model=MODEL, messages=user("close early"), stream=True) as stream:
        assert isinstance(stream, openai.Stream)
        assert stream.response.status_code == 200
        first, second = next(stream), next(stream)
        assert first.choices[0].delta.role == "assistant" and second.choices[0].delta.content
    a = rec.one()
    assert a[sc.RESPONSE_CHARS] == len(second.choices[0].delta.content) == 4
    assert sc.ERROR_TYPE not in a and a[sc.USAGE_MISSING] is True
    stream.close()  # closing again: nothing more is recorded
    assert rec.spans() == []


def test_abandoned_stream_is_recorded_when_collected(rec: Recorded, openai_client: Any) -> None:
    stream = openai_client.chat.completions.create(model=MODEL, messages=user("abandon"), stream=True)
    next(stream)
    next(stream)
    del stream
    a = rec.one_collected()
    assert a[sc.STREAMED] is True and a[sc.RESPONSE_CHARS] == 4


def test_for_loop_break_then_next_goes_on_and_early_stop_is_not_an_error(rec: Recorded,
                                                                        openai_client: Any) -> None:
    """A ``for`` loop runs the proxy's generator path: breaking out of it and going on with ``next()`` and another
    loop sees every chunk once, in order, as the bare stream does; a loop left early and then dropped records the
    call as it stood, not as an error (the generator's ``GeneratorExit`` is not the stream's error)."""
    stream = openai_client.chat.completions.create(model=MODEL, messages=user("resume"), stream=True)
    seen = []
    for chunk in stream:
        seen.append(chunk)
        break
    seen.append(next(stream))
    seen.extend(stream)
    bare = bare_chunks(openai_client, "resume")
    assert [c.choices[0].delta.content if c.choices else None for c in seen] == [
        c.choices[0].delta.content if c.choices else None for c in bare]
    a = rec.one()
    assert a[sc.RESPONSE_CHARS] == sum(len(c.choices[0].delta.content or "") for c in seen if c.choices)
    assert sc.ERROR_TYPE not in a and a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0

    stream = openai_client.chat.completions.create(model=MODEL, messages=user("abandon"), stream=True)
    for i, _ in enumerate(stream):
        if i == 1:
            break
    del stream
    gc.collect()
    a = rec.one()
    assert sc.ERROR_TYPE not in a and a["_span"].status.status_code is not StatusCode.ERROR
    assert a[sc.RESPONSE_CHARS] == 4


def test_async_for_break_then_anext_goes_on_and_errors_are_recorded(rec: Recorded, mock_llm: Any) -> None:
    """``async for`` runs the async proxy's generator path, with the sync path's rules: leaving the loop and going
    on with ``__anext__`` and another loop sees every chunk once, in order; a loop left early and then dropped is
    not an error; an error from the stream is recorded and re-raised as it is."""
    async def run() -> tuple[list[Any], list[Any], list[Any]]:
        async with async_client(mock_llm) as aclient:
            stream = await aclient.chat.completions.create(model=MODEL, messages=user("resume"), stream=True)
            seen = []
            async for chunk in stream:
                seen.append(chunk)
                break
            seen.append(await stream.__anext__())
            seen.extend([c async for c in stream])
            bare = await bare_chunks_async(aclient, "resume")
            stream = await aclient.chat.completions.create(model=MODEL, messages=user("abandon"), stream=True)
            async for i, _ in _aenumerate(stream):
                if i == 1:
                    break
            del stream
            gc.collect()
            await asyncio.sleep(0)  # the loop closes the abandoned async generator
            failed: list[Any] = []
            stream = await aclient.chat.completions.create(model=MODEL, messages=user("x [stream-error]"),
                                                           stream=True)
            with pytest.raises(openai.APIError):
                async for chunk in stream:
                    failed.append(chunk)
            return seen, bare, failed

    seen, bare, failed = asyncio.run(run())
    assert [c.choices[0].delta.content if c.choices else None for c in seen] == [
        c.choices[0].delta.content if c.choices else None for c in bare]
    resumed, abandoned, error = sorted(rec.spans(), key=lambda s: s.start_time)
    a = dict(resumed.attributes)
    assert a[sc.RESPONSE_CHARS] == sum(len(c.choices[0].delta.content or "") for c in seen if c.choices)
    assert sc.ERROR_TYPE not in a and a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0
    a = dict(abandoned.attributes)
    assert sc.ERROR_TYPE not in a and abandoned.status.status_code is not StatusCode.ERROR
    assert a[sc.RESPONSE_CHARS] == 4
    a = dict(error.attributes)
    assert a[sc.ERROR_TYPE] == "APIError" and a[sc.RESPONSE_CHARS] == 3 * 4 == sum(
        len(c.choices[0].delta.content or "") for c in failed if c.choices)


@pytest.mark.parametrize("path", ["for", "next", "async for", "anext"])
def test_observer_that_raises_is_dropped_and_the_stream_goes_on(rec: Recorded, openai_client: Any, mock_llm: Any,
                                                                 monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """The chat stream observer raising on its third chunk, in each way of reading a stream: the app still gets
    every chunk, in order, as the bare stream gives them; the fault is counted once as an internal error; the call
    is still recorded when the stream ends (with what was observed before the fault), and not as an error. The
    proxy path (capture on, the Responses API, Anthropic; here: no stream class to tap)."""
    from inferwatch.integrations import openai as iw_openai

    monkeypatch.setattr(iw_openai, "_tappable", {})

    real_observe = _openai_chat._ChatStream.observe
    calls = {"n": 0}

    def failing_observe(self: Any, chunk: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("observer bug")
        real_observe(self, chunk)

    async def read_async() -> tuple[list[Any], list[Any]]:
        async with async_client(mock_llm) as aclient:
            bare = await bare_chunks_async(aclient, "faulty")
            monkeypatch.setattr(_openai_chat._ChatStream, "observe", failing_observe)
            stream = await aclient.chat.completions.create(model=MODEL, messages=user("faulty"), stream=True)
            if path == "async for":
                return [c async for c in stream], bare
            seen = []
            while True:
                try:
                    seen.append(await stream.__anext__())
                except StopAsyncIteration:
                    return seen, bare

    if path.startswith("a"):
        seen, bare = asyncio.run(read_async())
    else:
        bare = bare_chunks(openai_client, "faulty")
        monkeypatch.setattr(_openai_chat._ChatStream, "observe", failing_observe)
        stream = openai_client.chat.completions.create(model=MODEL, messages=user("faulty"), stream=True)
        seen = list(stream) if path == "for" else [next(stream) for _ in range(len(bare))]
        if path == "next":
            with pytest.raises(StopIteration):
                next(stream)
    same = {"id", "created"}  # differ between two responses; everything else is the mock's deterministic reply
    assert [c.model_dump(exclude=same) for c in seen] == [c.model_dump(exclude=same) for c in bare]
    assert len(seen) > 3
    assert calls["n"] == 3  # dropped after the fault: not shown the rest
    assert inferwatch.stats()["internal_errors"] == {"openai.stream": 1}
    a = rec.one()
    assert sc.ERROR_TYPE not in a and a["_span"].status.status_code is not StatusCode.ERROR
    assert a[sc.RESPONSE_CHARS] == 4  # the second chunk's text, observed before the fault
    assert a[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] >= 0


async def _aenumerate(items: Any) -> Any:
    i = 0
    async for item in items:
        yield i, item
        i += 1


def test_chunk_observer_reads_any_chunk_alike() -> None:
    """The chat stream observer gives the same facts for openai's validated and constructed chunks and for other
    objects of the same shape (missing fields, ``choices`` as an iterator, no ``__dict__``): several choices,
    refusals, tool-call pieces, finish reasons and the usage chunk."""

    from openai.types.chat import ChatCompletionChunk

    from inferwatch.integrations._openai_chat import _ChatStream
    from inferwatch.integrations.openai import _Recorder

    def delta(content: Any = None, refusal: Any = None, tool: Any = None) -> dict[str, Any]:
        return {"content": content, "refusal": refusal, "function_call": None, "tool_calls": tool and [
            {"index": 0, "function": {"name": tool[0], "arguments": tool[1]}}]}

    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": SNAPSHOT, "usage": None}
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
              {**base, "choices": [{"index": 0, "delta": delta("Hel")}]},
              {**base, "choices": [{"index": 0, "delta": delta("lo")}, {"index": 1, "delta": delta("Bye")}]},
              {**base, "choices": [{"index": 1, "delta": delta(refusal="no")}]},
              {**base, "choices": [{"index": 0, "delta": delta(tool=("get_weather", '{"a"'))}]},
              {**base, "choices": [{"index": 0, "delta": delta(tool=(None, ": 1}"))}]},
              {**base, "choices": [{"index": 1, "delta": delta(), "finish_reason": "length"}]},
              {**base, "choices": [{"index": 0, "delta": delta(), "finish_reason": "tool_calls"}]},
              {**base, "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}}]

    def namespace(value: Any, key: str = "") -> Any:  # a chunk's choices as an iterator: read once, in full
        if isinstance(value, dict):
            return SimpleNamespace(**{k: namespace(v, k) for k, v in value.items()})
        if isinstance(value, list):
            items = [namespace(v) for v in value]
            return iter(items) if key == "choices" else items
        return value

    class Slotted:  # no __dict__ (the observer's fast path reads openai's models through theirs)
        __slots__ = ("_fields",)

        def __init__(self, fields: dict[str, Any]) -> None:
            self._fields = fields

        def __getattr__(self, name: str) -> Any:
            try:
                return self._fields[name]
            except KeyError:
                raise AttributeError(name) from None

    def slotted(value: Any) -> Any:
        if isinstance(value, dict):
            return Slotted({k: slotted(v) for k, v in value.items()})
        if isinstance(value, list):
            return [slotted(v) for v in value]
        return value

    def facts(items: list[Any]) -> tuple[Any, ...]:
        recorder = _Recorder("", "openai", True)
        recorder.capture = True
        observer = _ChatStream(recorder)
        for item in items:
            observer.observe(item)
        assert recorder.call.metrics.first_token_time_ns is not None
        return (observer.model, observer.response_id, observer.chars, observer.parts, observer.refusal,
                observer.finish_reason, getattr(observer.usage, "completion_tokens", None), observer.tool_calls)

    models = facts([ChatCompletionChunk.model_validate(c) for c in chunks])
    assert models == facts([namespace(c) for c in chunks]) == facts(
        [ChatCompletionChunk.construct(**c) for c in chunks]) == facts([slotted(c) for c in chunks])
    assert models == (SNAPSHOT, "c1", 10, ["Hel", "lo", "Bye", "no"], True, "tool_calls", 5,
                      {(0, 0): ["get_weather", ['{"a"', ": 1}"]]})


def test_chunk_observer_keeps_each_choices_index_when_fields_are_missing() -> None:
    """Choices read with defaults (fields missing, so not through the models' ``__dict__``) keep their own index:
    the second choice's tool call is its own, and the first choice's finish reason wins over a later one's."""
    from types import SimpleNamespace as NS

    from inferwatch.integrations._openai_chat import _ChatStream
    from inferwatch.integrations.openai import _Recorder

    function = NS(name="lookup", arguments="{}")
    chunks = [NS(choices=[NS(index=0, delta=NS(content="Hi"))]),  # no finish_reason, no tool_calls fields
              NS(choices=[NS(index=1, delta=NS(content=None, tool_calls=[NS(index=0, function=function)]))]),
              NS(choices=[NS(index=0, finish_reason="stop")]),  # no delta
              NS(choices=[NS(index=1, finish_reason="length")])]
    recorder = _Recorder("", "openai", True)
    recorder.capture = False
    observer = _ChatStream(recorder)
    for chunk in chunks:
        observer.observe(chunk)
    assert observer.chars == 2
    assert observer.tool_calls == {(1, 0): ["lookup", ["{}"]]}
    assert observer.finish_reason == "stop"


# --- attribution and capture -----------------------------------------------------------------------------------
def test_tags_experiment_and_hashed_user(rec: Recorded, openai_client: Any) -> None:
    with inferwatch.tags(feature="search", user_id="user-42", prompt_template="answer", template_version="3"), \
            inferwatch.experiment("prompt-v3", {"B": 1.0}) as variant:
        stream = openai_client.chat.completions.create(model=MODEL, messages=user("tagged"), stream=True)
    list(stream)  # consumed outside the block: the tags were taken when the call started
    a = rec.one()
    assert variant == "B"
    assert a[sc.FEATURE] == "search" and a[sc.EXPERIMENT] == "prompt-v3" and a[sc.VARIANT] == "B"
    assert a[sc.PROMPT_TEMPLATE] == "answer" and a[sc.PROMPT_VERSION] == "3"
    assert a[sc.USER_HASH] == inferwatch.hash_user_id("user-42")
    assert not any(v == "user-42" for v in a.values())


def test_content_captured_only_when_on(openai_client: Any) -> None:
    try:
        recorded = start_sdk(capture="full")
        inferwatch.instrument_openai()
        completion = openai_client.chat.completions.create(model=MODEL, messages=user("capture me"))
        a = recorded.one()
        assert "capture me" in a[sc.GEN_AI_INPUT_MESSAGES]
        assert a[sc.GEN_AI_OUTPUT_MESSAGES] == completion.choices[0].message.content
    finally:
        inferwatch.shutdown()
    try:
        recorded = start_sdk()  # capture off (the default)
        inferwatch.instrument_openai()
        openai_client.chat.completions.create(model=MODEL, messages=user("do not capture me"))
        a = recorded.one()
        assert sc.GEN_AI_INPUT_MESSAGES not in a and sc.GEN_AI_OUTPUT_MESSAGES not in a
    finally:
        inferwatch.shutdown()


# --- install / uninstall ---------------------------------------------------------------------------------------
def _originals() -> dict[tuple[type, str], Any]:
    chat = openai.resources.chat.completions
    responses = openai.resources.responses
    return {(cls, m): cls.__dict__[m] for cls, m in [
        (chat.Completions, "create"), (chat.Completions, "parse"), (chat.AsyncCompletions, "create"),
        (chat.AsyncCompletions, "parse"), (responses.Responses, "create"), (responses.AsyncResponses, "create")]}


def test_uninstrument_restores_the_original_functions(sdk: Recorded) -> None:
    before = _originals()
    assert inferwatch.instrument_openai() is True
    assert all(cls.__dict__[m] is not fn for (cls, m), fn in before.items())
    assert inferwatch.uninstrument_openai() is True
    assert all(cls.__dict__[m] is fn for (cls, m), fn in before.items())
    assert inferwatch.uninstrument_openai() is False
    inferwatch.instrument_openai()
    inferwatch.shutdown()  # shutdown undoes it too
    assert all(cls.__dict__[m] is fn for (cls, m), fn in before.items())


def test_double_instrument_is_a_noop(rec: Recorded, openai_client: Any) -> None:
    patched = _originals()
    assert inferwatch.instrument_openai() is False
    assert _originals() == patched
    openai_client.chat.completions.create(model=MODEL, messages=user("once"))
    rec.one()


def test_nothing_recorded_before_init(openai_client: Any) -> None:
    before = _originals()
    try:
        assert inferwatch.instrument_openai() is True  # allowed before init: inert
        completion = openai_client.chat.completions.create(model=MODEL, messages=user("before init"))
        stream = openai_client.chat.completions.create(model=MODEL, messages=user("before init"), stream=True)
        assert type(stream) is openai.Stream  # no proxy either
        list(stream)
        assert completion.choices[0].message.content
        recorded = start_sdk()
        openai_client.chat.completions.create(model=MODEL, messages=user("after init"))
        assert recorded.one()[sc.GEN_AI_USAGE_INPUT_TOKENS] == prompt_tokens("after init")
    finally:
        inferwatch.shutdown()
    assert _originals() == before


def test_wrap_openai_instruments_that_client_only(sdk: Recorded, openai_client: Any, mock_llm: Any) -> None:
    other = openai_client.with_options(timeout=30)
    assert inferwatch.wrap_openai(openai_client) is openai_client
    assert inferwatch.wrap_openai(openai_client) is openai_client  # idempotent
    other.chat.completions.create(model=MODEL, messages=user("not wrapped"))
    assert sdk.spans() == []
    openai_client.chat.completions.create(model=MODEL, messages=user("wrapped"))
    list(openai_client.chat.completions.create(model=MODEL, messages=user("wrapped"), stream=True))
    openai_client.responses.create(model=MODEL, input="wrapped")
    with openai_client.chat.completions.stream(model=MODEL, messages=user("wrapped")) as stream:
        stream.until_done()
    assert len(sdk.spans()) == 4
    sdk.exporter.clear()
    inferwatch.instrument_openai()  # both at once: still one span per call
    openai_client.chat.completions.create(model=MODEL, messages=user("both"))
    sdk.one()
    assert inferwatch.uninstrument_openai() is True
    assert "create" not in vars(openai_client.chat.completions)  # the instance attribute is gone


def test_wrap_async_client(sdk: Recorded, mock_llm: Any) -> None:
    async def run() -> None:
        async with async_client(mock_llm) as aclient:
            inferwatch.wrap_openai(aclient)
            await aclient.chat.completions.create(model=MODEL, messages=user("async wrapped"))
            async for _ in await aclient.chat.completions.create(model=MODEL, messages=user("s"), stream=True):
                pass

    asyncio.run(run())
    assert sorted(s.attributes[sc.STREAMED] for s in sdk.spans()) == [False, True]


def test_a_call_made_on_another_thread_during_a_call_is_recorded(rec: Recorded, mock_llm: Any) -> None:
    """The "inside a recorded call" mark (nested patched functions call straight through) is the calling thread's
    own: a call another thread makes meanwhile is recorded, and so is the next call after a failed one."""
    other = openai.OpenAI(base_url=mock_llm.openai_base_url, api_key=MOCK_API_KEY, max_retries=0)
    inner: list[Any] = []

    def call_from_another_thread(request: Any) -> None:  # runs inside the outer call, before it is sent
        if not inner:
            inner.append(None)
            worker = threading.Thread(target=lambda: inner.append(
                other.chat.completions.create(model=MODEL, messages=user("inner")).id))
            worker.start()
            worker.join(30)

    client = openai.OpenAI(base_url=mock_llm.openai_base_url, api_key=MOCK_API_KEY, max_retries=0,
                           http_client=openai.DefaultHttpxClient(event_hooks={"request": [call_from_another_thread]}))
    outer = client.chat.completions.create(model=MODEL, messages=user("outer"))
    assert isinstance(inner[1], str)
    assert sorted(s.attributes[sc.GEN_AI_RESPONSE_ID] for s in rec.spans()) == sorted([outer.id, inner[1]])
    rec.exporter.clear()
    with pytest.raises(TypeError):
        client.chat.completions.create(model=MODEL, messages=user("x"), not_an_argument=1)  # raises inside
    after = client.chat.completions.create(model=MODEL, messages=user("after the failure"))
    failed, recorded = rec.spans()
    assert failed.attributes[sc.ERROR_TYPE] == "TypeError"
    assert recorded.attributes[sc.GEN_AI_RESPONSE_ID] == after.id


def test_azure_clients_are_recorded_as_azure(rec: Recorded, openai_client: Any) -> None:
    """The provider comes from the client's class (remembered per class): ``azure.ai.openai`` for Azure's."""
    # the HTTP package the installed client is built on (recent releases: httpx2, older ones: httpx)
    httpx = pytest.importorskip(openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0])
    body = {"id": "chatcmpl-azure", "object": "chat.completion", "created": 1, "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}
    azure = openai.AzureOpenAI(api_key="k", api_version="2024-10-21", azure_endpoint="https://azure.invalid",
                               max_retries=0, http_client=openai.DefaultHttpxClient(
                                   transport=httpx.MockTransport(lambda request: httpx.Response(200, json=body))))
    for _ in range(2):  # the second time from what was remembered
        azure.chat.completions.create(model=MODEL, messages=user("azure"))
        assert rec.one()[sc.GEN_AI_PROVIDER_NAME] == "azure.ai.openai"
        openai_client.chat.completions.create(model=MODEL, messages=user("openai"))
        assert rec.one()[sc.GEN_AI_PROVIDER_NAME] == "openai"


def test_a_resource_or_stream_of_an_unexpected_shape_is_still_handled() -> None:
    """The hot path reads ``resource._client``, ``stream._decoder`` and ``stream.response`` as attributes (see
    "names bound once" in ``_streams``): one that is missing means the default provider name, and no tap (the
    stream is then proxied), never an error."""

    from inferwatch.integrations.openai import _Recorder, _tap

    rec = _Recorder.prepare(SimpleNamespace(), "chat", {"model": MODEL, "messages": [], "stream": True},
                            is_async=False)
    assert rec is not None and rec.provider == "openai" and rec.model == MODEL and rec.streamed
    assert not _tap(SimpleNamespace(response=object()), rec)
    assert not _tap(SimpleNamespace(_decoder=object()), rec)
    assert not _tap(SimpleNamespace(_decoder=object(), response=object()), rec)  # no close to hook


def test_provider_names_remember_a_bounded_number_of_client_classes() -> None:
    from inferwatch.integrations._patching import ProviderNames

    names = ProviderNames("openai", (("Azure", "azure.ai.openai"),))
    classes = [type(f"AzureClient{i}" if i % 2 else f"Client{i}", (), {}) for i in range(2 * ProviderNames.LIMIT)]
    assert [names.learn(cls) for cls in classes] == [
        "azure.ai.openai" if i % 2 else "openai" for i in range(len(classes))]
    assert len(names.known) == ProviderNames.LIMIT  # the first ones; later classes are named, not remembered
    assert names.known[classes[1]] == "azure.ai.openai"


def test_raw_response_calls_pass_through(rec: Recorded, openai_client: Any) -> None:
    raw = openai_client.chat.completions.with_raw_response.create(model=MODEL, messages=user("raw"))
    assert raw.parse().choices[0].message.content
    assert rec.spans() == []


def test_wrap_leaves_the_apps_own_instance_attributes_alone(sdk: Recorded, openai_client: Any) -> None:
    client = openai_client.with_options(timeout=30)

    def fake_create(**kwargs: Any) -> str:
        return "app's own double"

    client.chat.completions.create = fake_create
    inferwatch.wrap_openai(client)
    assert client.chat.completions.create is fake_create
    assert client.chat.completions.create(model=MODEL, messages=user("x")) == "app's own double"
    client.responses.create(model=MODEL, input="the rest is wrapped")
    assert len(sdk.spans()) == 1


def test_uninstrument_with_another_patch_on_top_switches_ours_off(sdk: Recorded, openai_client: Any) -> None:
    completions = openai.resources.chat.completions.Completions
    real = completions.__dict__["create"]
    try:
        inferwatch.instrument_openai()
        ours = completions.__dict__["create"]

        def theirs(self: Any, *args: Any, **kwargs: Any) -> Any:  # e.g. another vendor's SDK
            return ours(self, *args, **kwargs)

        completions.create = theirs
        assert inferwatch.uninstrument_openai() is True
        assert completions.__dict__["create"] is theirs  # their patch is kept ...
        openai_client.chat.completions.create(model=MODEL, messages=user("after uninstrument"))
        assert sdk.spans() == []  # ... and ours only calls through
    finally:
        completions.create = real


def test_the_reader_of_dicts_and_models_tells_mappings_from_objects() -> None:
    """``_readers.get`` reads a Mapping by key and anything else by attribute; whether a type is a Mapping is
    asked once per type (then cached)."""
    class Usage:  # a model-like object, with a ``get`` method of its own that must not be used
        prompt_tokens = 7

        def get(self, key: str, default: Any = None) -> Any:
            raise AssertionError("an object's get() was called as if it were a Mapping")

    class DictProxy:  # a wrapt-style proxy: isinstance() sees its __class__, the wrapped dict's
        def __init__(self, wrapped: dict[str, Any]) -> None:
            self._wrapped = wrapped

        @property  # type: ignore[misc]
        def __class__(self) -> type:  # noqa: D105
            return dict

        def get(self, key: str, default: Any = None) -> Any:
            return self._wrapped.get(key, default)

    assert _readers.get(DictProxy({"prompt_tokens": 5}), "prompt_tokens") == 5
    assert DictProxy not in _readers._is_mapping  # never cached: its instances answer for themselves
    proxy = types.MappingProxyType({"prompt_tokens": 3})
    for _ in range(2):  # the second time from the cache
        assert _readers.get({"prompt_tokens": 1}, "prompt_tokens") == 1
        assert _readers.get(proxy, "prompt_tokens") == 3 and _readers.get(proxy, "missing", 0) == 0
        assert _readers.get(Usage(), "prompt_tokens") == 7 and _readers.get(Usage(), "missing") is None
        assert _readers.get(None, "prompt_tokens") is None
    assert _readers._is_mapping[types.MappingProxyType] is True and _readers._is_mapping[Usage] is False
