"""The mock LLM server speaks OpenAI and Anthropic well enough for the REAL client libraries.

Every test drives ``openai`` / ``anthropic`` clients (sync and async) against examples/mock_llm.py and checks
what the clients parse: text, usage (cache and reasoning tokens), finish/stop reasons, tool calls, the stream
helpers, and that planted errors raise the clients' own exception classes. Token counts are computed with the
mock's documented rules (``ceil(len / 4)``, 4 tokens per message, 24 output tokens by default).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anthropic
import httpx
import openai
import pydantic
import pytest

from examples.mock_llm import (
    DEFAULT_OUTPUT_TOKENS,
    REASONING_BY_EFFORT,
    MockLLMServer,
    count_tokens,
    estimate_prompt_tokens,
    parse_markers,
)
from tests.helpers.mock_llm_fixtures import MOCK_API_KEY

ROOT = Path(__file__).resolve().parents[2]

GPT = "gpt-4o-mini"
CLAUDE = "claude-haiku-4-5"
HELLO = "Hello there"  # 11 chars -> 3 tokens; one message -> 4 + 3 = 7 prompt tokens
HELLO_PROMPT_TOKENS = 7

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]},
                           "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
ORDER_TOOL = {"type": "function", "function": {"name": "lookup_order", "parameters": {
    "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}
CLAUDE_TOOL = {"name": "get_weather", "description": "Current weather",
               "input_schema": WEATHER_TOOL["function"]["parameters"]}


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def chat(client, text: str = HELLO, **kwargs):
    return client.chat.completions.create(model=kwargs.pop("model", GPT), messages=user(text), **kwargs)


def claude(client, text: str = HELLO, **kwargs):
    return client.messages.create(model=kwargs.pop("model", CLAUDE), max_tokens=kwargs.pop("max_tokens", 1000),
                                  messages=user(text), **kwargs)


# --------------------------------------------------------------------------------------------------------------
# Token rules and markers (pure)
# --------------------------------------------------------------------------------------------------------------


def test_token_rules_are_simple_and_documented():
    assert count_tokens("") == 0
    assert count_tokens("abcd") == 1
    assert count_tokens("abcde") == 2
    assert estimate_prompt_tokens(user(HELLO)) == HELLO_PROMPT_TOKENS
    system = "Be brief."  # 9 chars -> 3 tokens (+4)
    assert estimate_prompt_tokens(user(HELLO), system=system) == HELLO_PROMPT_TOKENS + 4 + 3
    tools = [WEATHER_TOOL]
    compact = json.dumps(tools, separators=(",", ":"))
    assert estimate_prompt_tokens(user(HELLO), tools=tools) == HELLO_PROMPT_TOKENS + count_tokens(compact)


def test_markers_parse():
    m = parse_markers("hi [refuse] [cache:128] [slow-first-token:800] [tool:bad-json] [error:429] [flaky:500:2]")
    assert (m.refuse, m.cache_read, m.slow_first_token_ms, m.tool, m.error, m.flaky) == \
        (True, 128, 800.0, "bad-json", 429, (500, 2))
    assert parse_markers("plain [text] without markers").tool is None


# --------------------------------------------------------------------------------------------------------------
# OpenAI Chat Completions
# --------------------------------------------------------------------------------------------------------------


def test_chat_non_stream_text_and_usage(openai_client, mock_llm):
    r = chat(openai_client)
    choice = r.choices[0]
    assert r.object == "chat.completion"
    assert r.model == "gpt-4o-mini-2024-07-18"  # the dated snapshot, as OpenAI answers
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant" and choice.message.refusal is None
    assert len(choice.message.content) == 4 * DEFAULT_OUTPUT_TOKENS
    assert choice.message.content.endswith(".")
    u = r.usage
    assert (u.prompt_tokens, u.completion_tokens, u.total_tokens) == \
        (HELLO_PROMPT_TOKENS, DEFAULT_OUTPUT_TOKENS, HELLO_PROMPT_TOKENS + DEFAULT_OUTPUT_TOKENS)
    assert u.prompt_tokens_details.cached_tokens == 0
    assert u.completion_tokens_details.reasoning_tokens == 0
    assert r._request_id.startswith("req_")
    # deterministic: same prompt, same answer
    assert chat(openai_client).choices[0].message.content == choice.message.content
    assert chat(openai_client, HELLO + "!").choices[0].message.content != choice.message.content
    # the server records what the client sent
    sent = mock_llm.requests[0]
    assert sent.path == "/v1/chat/completions" and sent.body["messages"] == user(HELLO)
    assert sent.headers["authorization"] == f"Bearer {MOCK_API_KEY}"


def test_chat_stream_without_include_usage_never_reports_usage(openai_client):
    chunks = list(chat(openai_client, stream=True))
    assert all(c.usage is None for c in chunks)
    assert all(c.choices for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    content = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert len(content) == DEFAULT_OUTPUT_TOKENS  # one chunk per token
    assert "".join(content) == chat(openai_client).choices[0].message.content
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_chat_stream_include_usage_final_chunk(openai_client):
    chunks = list(chat(openai_client, stream=True, stream_options={"include_usage": True}))
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (HELLO_PROMPT_TOKENS, DEFAULT_OUTPUT_TOKENS)
    assert all(c.usage is None for c in chunks[:-1])
    assert chunks[-2].choices[0].finish_reason == "stop"


def test_chat_stream_helper(openai_client):
    with openai_client.chat.completions.stream(model=GPT, messages=user(HELLO),
                                              stream_options={"include_usage": True}) as stream:
        deltas = [e.delta for e in stream if e.type == "content.delta"]
        final = stream.get_final_completion()
    assert "".join(deltas) == final.choices[0].message.content
    assert final.choices[0].finish_reason == "stop"
    assert final.usage.completion_tokens == DEFAULT_OUTPUT_TOKENS


def test_stream_options_without_stream_is_rejected(openai_client):
    with pytest.raises(openai.BadRequestError):
        chat(openai_client, stream_options={"include_usage": True})


@pytest.mark.parametrize("effort", ["low", "high"])
def test_reasoning_model_usage(openai_client, effort):
    r = chat(openai_client, model="o4-mini", reasoning_effort=effort)
    reasoning = REASONING_BY_EFFORT[effort]
    assert r.model == "o4-mini-2025-04-16"
    assert r.usage.completion_tokens_details.reasoning_tokens == reasoning
    assert r.usage.completion_tokens == DEFAULT_OUTPUT_TOKENS + reasoning  # reasoning is inside completion


def test_reasoning_can_spend_the_whole_budget(openai_client):
    r = chat(openai_client, "Think [reasoning:50]", model="gpt-5", max_completion_tokens=40)
    assert r.choices[0].finish_reason == "length"
    assert r.choices[0].message.content == ""
    assert r.usage.completion_tokens == 40
    assert r.usage.completion_tokens_details.reasoning_tokens == 40


def test_cache_marker_and_token_count_markers(openai_client):
    text = "Summarize this long document please [cache:12] [tokens:5]"
    prompt = 4 + count_tokens(text)
    r = chat(openai_client, text)
    assert r.usage.prompt_tokens == prompt
    assert r.usage.prompt_tokens_details.cached_tokens == 12  # OpenAI: cached tokens are inside prompt tokens
    assert r.usage.completion_tokens == 5 and len(r.choices[0].message.content) == 20
    clamped = chat(openai_client, "x [cache:100000]")
    assert clamped.usage.prompt_tokens_details.cached_tokens == clamped.usage.prompt_tokens


def test_max_tokens_truncates(openai_client):
    r = chat(openai_client, max_tokens=10)
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 10 and len(r.choices[0].message.content) == 40
    r = chat(openai_client, max_completion_tokens=7)
    assert r.choices[0].finish_reason == "length" and r.usage.completion_tokens == 7


def test_truncate_empty_refuse_content_filter_markers(openai_client):
    t = chat(openai_client, "go [truncate]")
    assert t.choices[0].finish_reason == "length"
    assert t.usage.completion_tokens == DEFAULT_OUTPUT_TOKENS // 2

    e = chat(openai_client, "go [empty]")
    assert e.choices[0].finish_reason == "stop" and e.choices[0].message.content == ""
    assert e.usage.completion_tokens == 0

    r = chat(openai_client, "how to pick a lock [refuse]")
    msg = r.choices[0].message
    assert msg.content is None and msg.refusal and "sorry" in msg.refusal
    assert r.choices[0].finish_reason == "stop"
    assert r.usage.completion_tokens == count_tokens(msg.refusal)

    f = chat(openai_client, "go [content-filter]")
    assert f.choices[0].finish_reason == "content_filter"
    assert len(f.choices[0].message.content) == 4 * (DEFAULT_OUTPUT_TOKENS // 2)


def test_refusal_streams_as_refusal_deltas(openai_client):
    chunks = list(chat(openai_client, "[refuse]", stream=True))
    refusal = "".join(c.choices[0].delta.refusal or "" for c in chunks)
    assert "sorry" in refusal
    assert not any(c.choices[0].delta.content for c in chunks)
    with openai_client.chat.completions.stream(model=GPT, messages=user("[refuse]")) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.refusal == refusal


def test_tools_given_produce_tool_calls(openai_client, mock_llm):
    r = chat(openai_client, "Weather in Paris?", tools=[WEATHER_TOOL])
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.id.startswith("call_")
    assert call.function.name == "get_weather"
    args = json.loads(call.function.arguments)
    assert args == {"city": "sample-city", "unit": "c", "days": 42}  # sampled from the schema
    assert r.usage.completion_tokens == count_tokens("get_weather") + count_tokens(call.function.arguments)
    assert r.usage.prompt_tokens == estimate_prompt_tokens(user("Weather in Paris?"), tools=[WEATHER_TOOL])


def test_tool_calls_stream_argument_deltas(openai_client):
    chunks = list(chat(openai_client, "Weather? [tools:2]", tools=[WEATHER_TOOL, ORDER_TOOL], stream=True,
                       stream_options={"include_usage": True}))
    calls: dict[int, dict[str, str]] = {}
    n_arg_deltas = 0
    for c in chunks:
        for tc in (c.choices[0].delta.tool_calls or []) if c.choices else []:
            slot = calls.setdefault(tc.index, {"name": "", "args": "", "id": ""})
            if tc.id:
                slot["id"] = tc.id
            if tc.function and tc.function.name:
                slot["name"] += tc.function.name
            if tc.function and tc.function.arguments:
                slot["args"] += tc.function.arguments
                n_arg_deltas += 1
    assert [calls[i]["name"] for i in sorted(calls)] == ["get_weather", "lookup_order"]
    assert json.loads(calls[1]["args"]) == {"order_id": "sample-order_id"}
    assert n_arg_deltas > 2  # arguments arrive in pieces
    assert chunks[-2].choices[0].finish_reason == "tool_calls"
    with openai_client.chat.completions.stream(model=GPT, messages=user("Weather?"), tools=[WEATHER_TOOL]) as s:
        final = s.get_final_completion()
    assert json.loads(final.choices[0].message.tool_calls[0].function.arguments)["city"] == "sample-city"


def test_tool_failure_markers(openai_client):
    bad = chat(openai_client, "[tool:bad-json]", tools=[WEATHER_TOOL]).choices[0].message.tool_calls[0]
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad.function.arguments)
    unknown = chat(openai_client, "[tool:unknown]", tools=[WEATHER_TOOL]).choices[0].message.tool_calls[0]
    assert unknown.function.name == "nonexistent_function"
    json.loads(unknown.function.arguments)
    # [tool] with no tools offered still calls one (get_weather)
    default = chat(openai_client, "[tool]").choices[0]
    assert default.finish_reason == "tool_calls" and default.message.tool_calls[0].function.name == "get_weather"
    named = chat(openai_client, "[tool:lookup_order]", tools=[WEATHER_TOOL, ORDER_TOOL]).choices[0]
    assert named.message.tool_calls[0].function.name == "lookup_order"


def test_tool_loop_answers_after_tool_result_and_choice_none(openai_client):
    first = chat(openai_client, "Weather in Paris? [tool]", tools=[WEATHER_TOOL]).choices[0].message
    call = first.tool_calls[0]
    messages = [*user("Weather in Paris? [tool]"),
                {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                {"role": "tool", "tool_call_id": call.id, "content": '{"temp": 21}'}]
    second = openai_client.chat.completions.create(model=GPT, messages=messages, tools=[WEATHER_TOOL])
    assert second.choices[0].finish_reason == "stop" and second.choices[0].message.content
    assert chat(openai_client, "hi", tools=[WEATHER_TOOL], tool_choice="none").choices[0].finish_reason == "stop"
    assert chat(openai_client, "hi [no-tool]", tools=[WEATHER_TOOL]).choices[0].finish_reason == "stop"
    forced = chat(openai_client, "hi", tools=[WEATHER_TOOL, ORDER_TOOL],
                  tool_choice={"type": "function", "function": {"name": "lookup_order"}})
    assert forced.choices[0].message.tool_calls[0].function.name == "lookup_order"


class Event(pydantic.BaseModel):
    name: str
    date: str
    attendees: list[str]
    seats: int | None = None


def test_structured_output_parse(openai_client):
    r = openai_client.chat.completions.parse(model=GPT, messages=user("Extract the event"), response_format=Event)
    assert r.choices[0].message.parsed == Event(name="sample-name", date="sample-date",
                                                attendees=["sample-attendees"], seats=42)
    j = chat(openai_client, response_format={"type": "json_object"})
    assert isinstance(json.loads(j.choices[0].message.content), dict)


@pytest.mark.parametrize("code, exc", [
    (400, openai.BadRequestError), (401, openai.AuthenticationError), (404, openai.NotFoundError),
    (429, openai.RateLimitError), (500, openai.InternalServerError), (503, openai.InternalServerError),
])
def test_openai_errors_raise_client_exceptions(openai_client, code, exc):
    with pytest.raises(exc) as info:
        chat(openai_client, f"boom [error:{code}]")
    err = info.value
    assert err.status_code == code
    assert isinstance(err.body, dict) and err.body.get("message")  # the client unwraps {"error": {...}}
    if code == 429:
        assert err.code == "rate_limit_exceeded"
        assert err.response.headers["retry-after"] == "0.2"
        assert err.response.headers["retry-after-ms"] == "200"
    with pytest.raises(exc):  # the same for a streaming request: the status arrives before any chunk
        chat(openai_client, f"boom [error:{code}]", stream=True)


def test_auth_required(mock_llm, openai_client):
    with openai.OpenAI(base_url=mock_llm.openai_base_url, api_key="invalid-key", max_retries=0) as bad:
        with pytest.raises(openai.AuthenticationError):
            chat(bad)
    r = httpx.post(mock_llm.openai_base_url + "/chat/completions", json={"model": GPT, "messages": user("x")})
    assert r.status_code == 401 and r.json()["error"]["type"] == "invalid_request_error"
    r = httpx.post(mock_llm.base_url + "/v1/messages", json={"model": CLAUDE, "max_tokens": 5,
                                                             "messages": user("x")})
    assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
    assert httpx.get(mock_llm.openai_base_url + "/nope", headers={"authorization": "Bearer k"}).status_code == 404


def test_flaky_marker_lets_a_retry_succeed(mock_llm):
    with openai.OpenAI(base_url=mock_llm.openai_base_url, api_key=MOCK_API_KEY, max_retries=2) as client:
        r = chat(client, "retry me [flaky:429]")
    assert r.choices[0].finish_reason == "stop"
    assert len(mock_llm.requests) == 2  # one 429 (retry-after-ms 200), then the success


def test_stream_error_midway(openai_client):
    got = []
    with pytest.raises(openai.APIError, match="server had an error"):
        for c in chat(openai_client, "[stream-error]", stream=True):
            got.append(c.choices[0].delta.content or "")
    assert len([g for g in got if g]) == 3


def test_no_usage_marker(openai_client):
    chunks = list(chat(openai_client, "[no-usage]", stream=True, stream_options={"include_usage": True}))
    assert all(c.usage is None for c in chunks) and all(c.choices for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chat(openai_client, "[no-usage]").usage is None


def test_slow_first_token_and_token_delay(openai_client):
    t0 = time.perf_counter()
    stream = chat(openai_client, "[slow-first-token:300] [tokens:4] [token-delay:25]", stream=True)
    first = None
    for c in stream:
        if first is None:
            first = time.perf_counter() - t0
    total = time.perf_counter() - t0
    assert 0.29 <= first < 1.5
    assert total - first >= 3 * 0.025 * 0.9  # three gaps after the first token
    t0 = time.perf_counter()
    chat(openai_client, "[slow-first-token:200] [tokens:2]")
    assert time.perf_counter() - t0 >= 0.19  # a non-streamed call takes the same time


def test_models_and_embeddings(openai_client):
    ids = {m.id for m in openai_client.models.list()}
    assert {"gpt-4o-mini", "o4-mini", "gpt-5"} <= ids
    e = openai_client.embeddings.create(model="text-embedding-3-small", input=["alpha", "beta"], dimensions=16)
    assert [len(d.embedding) for d in e.data] == [16, 16]
    assert abs(sum(v * v for v in e.data[0].embedding) - 1.0) < 1e-4
    assert e.usage.prompt_tokens == count_tokens("alpha") + count_tokens("beta")
    floats = openai_client.embeddings.create(model="text-embedding-3-small", input="alpha", dimensions=16,
                                             encoding_format="float")
    assert floats.data[0].embedding == pytest.approx(e.data[0].embedding, abs=1e-6)


# --------------------------------------------------------------------------------------------------------------
# OpenAI Responses
# --------------------------------------------------------------------------------------------------------------


def test_responses_non_stream(openai_client):
    r = openai_client.responses.create(model=GPT, input=HELLO, instructions="Be brief.")
    assert r.status == "completed" and r.model == "gpt-4o-mini-2024-07-18"
    assert len(r.output_text) == 4 * DEFAULT_OUTPUT_TOKENS
    prompt = estimate_prompt_tokens(user(HELLO), system="Be brief.")
    assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.total_tokens) == \
        (prompt, DEFAULT_OUTPUT_TOKENS, prompt + DEFAULT_OUTPUT_TOKENS)
    assert r.usage.input_tokens_details.cached_tokens == 0
    assert r.usage.output_tokens_details.reasoning_tokens == 0


def test_responses_reasoning_and_cache(openai_client):
    r = openai_client.responses.create(model="o4-mini", input="Plan it [cache:3]", reasoning={"effort": "high"})
    assert r.usage.output_tokens_details.reasoning_tokens == REASONING_BY_EFFORT["high"]
    assert r.usage.output_tokens == DEFAULT_OUTPUT_TOKENS + REASONING_BY_EFFORT["high"]
    assert r.usage.input_tokens_details.cached_tokens == 3
    assert [o.type for o in r.output] == ["reasoning", "message"]


def test_responses_stream_events(openai_client):
    events = list(openai_client.responses.create(model=GPT, input=HELLO, stream=True))
    types = [e.type for e in events]
    assert types[0] == "response.created" and types[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) == DEFAULT_OUTPUT_TOKENS
    done = next(e for e in events if e.type == "response.output_text.done")
    assert "".join(deltas) == done.text
    usage = events[-1].response.usage
    assert usage.output_tokens == DEFAULT_OUTPUT_TOKENS and usage.input_tokens == HELLO_PROMPT_TOKENS
    assert events[0].response.usage is None


def test_responses_stream_helper_and_function_calls(openai_client):
    with openai_client.responses.stream(model=GPT, input=HELLO) as stream:
        text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        final = stream.get_final_response()
    assert final.output_text == text and final.usage.output_tokens == DEFAULT_OUTPUT_TOKENS

    tool = {"type": "function", "name": "get_weather", "parameters": WEATHER_TOOL["function"]["parameters"]}
    r = openai_client.responses.create(model=GPT, input="Weather?", tools=[tool])
    (call,) = [o for o in r.output if o.type == "function_call"]
    assert call.name == "get_weather" and json.loads(call.arguments)["city"] == "sample-city"
    events = list(openai_client.responses.create(model=GPT, input="Weather?", tools=[tool], stream=True))
    arg_deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert "".join(arg_deltas) == call.arguments and len(arg_deltas) > 1
    # tool loop: after the function output, the model answers with text
    follow = openai_client.responses.create(model=GPT, tools=[tool], input=[
        {"role": "user", "content": "Weather?"},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": '{"temp": 21}'},
    ])
    assert follow.output_text and not [o for o in follow.output if o.type == "function_call"]


def test_responses_markers(openai_client):
    t = openai_client.responses.create(model=GPT, input="go", max_output_tokens=6)
    assert t.status == "incomplete" and t.incomplete_details.reason == "max_output_tokens"
    assert t.usage.output_tokens == 6
    events = list(openai_client.responses.create(model=GPT, input="go [truncate]", stream=True))
    assert events[-1].type == "response.incomplete"
    refused = openai_client.responses.create(model=GPT, input="[refuse]")
    assert refused.output[0].content[0].type == "refusal"
    failed = list(openai_client.responses.create(model=GPT, input="[stream-error]", stream=True))
    assert failed[-1].type == "response.failed" and failed[-1].response.error.code == "server_error"
    no_usage = list(openai_client.responses.create(model=GPT, input="[no-usage]", stream=True))
    assert no_usage[-1].type == "response.completed" and no_usage[-1].response.usage is None
    with pytest.raises(openai.RateLimitError):
        openai_client.responses.create(model=GPT, input="[error:429]")


def test_responses_parse(openai_client):
    r = openai_client.responses.parse(model=GPT, input="Extract the event", text_format=Event)
    assert isinstance(r.output_parsed, Event) and r.output_parsed.seats == 42


def test_async_openai(mock_llm):
    async def go():
        async with openai.AsyncOpenAI(base_url=mock_llm.openai_base_url, api_key=MOCK_API_KEY,
                                      max_retries=0) as client:
            r = await client.chat.completions.create(model=GPT, messages=user(HELLO))
            stream = await client.chat.completions.create(model=GPT, messages=user(HELLO), stream=True,
                                                          stream_options={"include_usage": True})
            chunks = [c async for c in stream]
            async with client.chat.completions.stream(model=GPT, messages=user(HELLO)) as s:
                helper = await s.get_final_completion()
            events = [e async for e in await client.responses.create(model=GPT, input=HELLO, stream=True)]
            with pytest.raises(openai.RateLimitError):
                await client.chat.completions.create(model=GPT, messages=user("[error:429]"))
            return r, chunks, helper, events

    r, chunks, helper, events = asyncio.run(go())
    text = r.choices[0].message.content
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == text
    assert chunks[-1].usage.completion_tokens == DEFAULT_OUTPUT_TOKENS
    assert helper.choices[0].message.content == text
    assert events[-1].type == "response.completed"


# --------------------------------------------------------------------------------------------------------------
# Anthropic Messages
# --------------------------------------------------------------------------------------------------------------


def test_messages_non_stream(anthropic_client, mock_llm):
    m = claude(anthropic_client, system="Be brief.")
    assert m.type == "message" and m.role == "assistant" and m.model == "claude-haiku-4-5-20251001"
    assert m.stop_reason == "end_turn"
    (block,) = m.content
    assert block.type == "text" and len(block.text) == 4 * DEFAULT_OUTPUT_TOKENS
    assert m.usage.input_tokens == HELLO_PROMPT_TOKENS + 4 + count_tokens("Be brief.")
    assert m.usage.output_tokens == DEFAULT_OUTPUT_TOKENS
    assert (m.usage.cache_read_input_tokens, m.usage.cache_creation_input_tokens) == (0, 0)
    assert m._request_id.startswith("req_")
    assert mock_llm.requests[0].headers.get("anthropic-version")


def test_messages_cache_tokens_are_on_top_of_input(anthropic_client):
    text = "Summarize the attached policy document [cache:6] [cache-write:3]"
    m = claude(anthropic_client, text)
    prompt = 4 + count_tokens(text)
    assert m.usage.cache_read_input_tokens == 6 and m.usage.cache_creation_input_tokens == 3
    assert m.usage.input_tokens == prompt - 6 - 3  # Anthropic: input excludes cache reads and writes
    counted = anthropic_client.messages.count_tokens(model=CLAUDE, messages=user(text))
    assert counted.input_tokens == prompt


def test_messages_raw_stream_events(anthropic_client):
    events = list(claude(anthropic_client, "Hi [cache:2]", stream=True))
    types = [e.type for e in events]
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
    assert types[1] == "content_block_start" and "content_block_stop" in types
    start = events[0].message.usage
    assert start.cache_read_input_tokens == 2 and start.input_tokens == 4 + count_tokens("Hi [cache:2]") - 2
    deltas = [e.delta.text for e in events if e.type == "content_block_delta"]
    assert len(deltas) == DEFAULT_OUTPUT_TOKENS
    delta = events[-2]
    assert delta.delta.stop_reason == "end_turn" and delta.usage.output_tokens == DEFAULT_OUTPUT_TOKENS
    assert "".join(deltas) == claude(anthropic_client, "Hi [cache:2]").content[0].text


def test_messages_stream_helper(anthropic_client):
    with anthropic_client.messages.stream(model=CLAUDE, max_tokens=100, messages=user(HELLO)) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert final.content[0].text == text == claude(anthropic_client).content[0].text
    assert final.stop_reason == "end_turn" and final.usage.output_tokens == DEFAULT_OUTPUT_TOKENS
    assert final.usage.input_tokens == HELLO_PROMPT_TOKENS


def test_wire_format_sse(mock_llm):
    headers = {"x-api-key": MOCK_API_KEY, "anthropic-version": "2023-06-01"}
    body = {"model": CLAUDE, "max_tokens": 50, "stream": True, "messages": user("[tokens:2]")}
    raw = httpx.post(mock_llm.base_url + "/v1/messages", json=body, headers=headers).text
    assert raw.startswith("event: message_start\ndata: {")
    assert "event: ping\ndata: {\"type\":\"ping\"}\n\n" in raw
    assert raw.rstrip().endswith('event: message_stop\ndata: {"type":"message_stop"}')
    raw = httpx.post(mock_llm.openai_base_url + "/chat/completions", headers={"authorization": "Bearer k"},
                     json={"model": GPT, "stream": True, "messages": user("[tokens:2]")}).text
    assert raw.startswith("data: {") and raw.endswith("data: [DONE]\n\n")


def test_thinking(anthropic_client):
    thinking = {"type": "enabled", "budget_tokens": 1024}
    m = claude(anthropic_client, "Think first", max_tokens=2048, thinking=thinking)
    assert [b.type for b in m.content] == ["thinking", "text"]
    assert m.content[0].signature and len(m.content[0].thinking) == 4 * 32
    assert m.usage.output_tokens == 32 + DEFAULT_OUTPUT_TOKENS  # thinking counts as output
    assert m.usage.output_tokens_details.thinking_tokens == 32
    events = list(claude(anthropic_client, "Think first", max_tokens=2048, thinking=thinking, stream=True))
    kinds = [e.delta.type for e in events if e.type == "content_block_delta"]
    assert kinds.count("thinking_delta") == 32 and kinds.count("signature_delta") == 1
    with anthropic_client.messages.stream(model=CLAUDE, max_tokens=2048, thinking=thinking,
                                          messages=user("Think first")) as stream:
        final = stream.get_final_message()
    assert final.content[0].thinking == m.content[0].thinking
    assert final.usage.output_tokens == m.usage.output_tokens
    with pytest.raises(anthropic.BadRequestError):
        claude(anthropic_client, max_tokens=1000, thinking=thinking)  # budget must be below max_tokens


def test_messages_tool_use(anthropic_client):
    m = claude(anthropic_client, "Weather in Oslo?", tools=[CLAUDE_TOOL])
    assert m.stop_reason == "tool_use"
    (block,) = m.content
    assert block.type == "tool_use" and block.id.startswith("toolu_") and block.name == "get_weather"
    assert block.input == {"city": "sample-city", "unit": "c", "days": 42}
    events = list(claude(anthropic_client, "Weather in Oslo?", tools=[CLAUDE_TOOL], stream=True))
    partial = "".join(e.delta.partial_json for e in events
                      if e.type == "content_block_delta" and e.delta.type == "input_json_delta")
    assert json.loads(partial) == block.input
    with anthropic_client.messages.stream(model=CLAUDE, max_tokens=100, tools=[CLAUDE_TOOL],
                                          messages=user("Weather in Oslo?")) as stream:
        final = stream.get_final_message()
    assert final.content[0].input == block.input and final.stop_reason == "tool_use"
    # the loop: after a tool_result the model answers with text
    follow = anthropic_client.messages.create(model=CLAUDE, max_tokens=100, tools=[CLAUDE_TOOL], messages=[
        *user("Weather in Oslo? [tool]"),
        {"role": "assistant", "content": [block.model_dump(exclude_none=True)]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block.id, "content": "21C"}]},
    ])
    assert follow.stop_reason == "end_turn" and follow.content[0].type == "text"


def test_messages_tool_failure_markers(anthropic_client):
    unknown = claude(anthropic_client, "[tool:unknown]", tools=[CLAUDE_TOOL])
    assert unknown.content[0].name == "nonexistent_function"
    bad = claude(anthropic_client, "[tool:bad-json]", tools=[CLAUDE_TOOL])
    assert isinstance(bad.content[0].input, str)  # the raw, unparseable arguments
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad.content[0].input)
    events = list(claude(anthropic_client, "[tool:bad-json]", tools=[CLAUDE_TOOL], stream=True))
    partial = "".join(e.delta.partial_json for e in events
                      if e.type == "content_block_delta" and e.delta.type == "input_json_delta")
    assert partial == bad.content[0].input
    # anthropic's own accumulator refuses such JSON (what an SDK wrapping .stream() will see)
    with pytest.raises(ValueError, match="Unable to parse tool parameter JSON"):
        with anthropic_client.messages.stream(model=CLAUDE, max_tokens=100, tools=[CLAUDE_TOOL],
                                              messages=user("[tool:bad-json]")) as stream:
            stream.get_final_message()


def test_messages_stop_reasons(anthropic_client):
    assert claude(anthropic_client, max_tokens=5).stop_reason == "max_tokens"
    assert claude(anthropic_client, max_tokens=5).usage.output_tokens == 5
    assert claude(anthropic_client, "[truncate]").stop_reason == "max_tokens"
    refused = claude(anthropic_client, "[refuse]")
    assert refused.stop_reason == "refusal" and refused.stop_details.type == "refusal"
    events = list(claude(anthropic_client, "[refuse]", stream=True))
    assert events[-2].delta.stop_reason == "refusal"
    empty = claude(anthropic_client, "[empty]")
    assert empty.content == [] and empty.usage.output_tokens == 0 and empty.stop_reason == "end_turn"


@pytest.mark.parametrize("code, exc, kind", [
    (429, anthropic.RateLimitError, "rate_limit_error"), (529, anthropic.OverloadedError, "overloaded_error"),
    (500, anthropic.InternalServerError, "api_error"),
    (401, anthropic.AuthenticationError, "authentication_error"),
    (400, anthropic.BadRequestError, "invalid_request_error"),
])
def test_anthropic_errors_raise_client_exceptions(anthropic_client, code, exc, kind):
    with pytest.raises(exc) as info:
        claude(anthropic_client, f"[error:{code}]")
    assert info.value.status_code == code
    assert info.value.body["error"]["type"] == kind
    if code == 429:
        assert info.value.response.headers["retry-after"] == "0.2"
    with pytest.raises(exc):
        with anthropic_client.messages.stream(model=CLAUDE, max_tokens=10, messages=user(f"[error:{code}]")) as s:
            s.get_final_message()


def test_anthropic_invalid_key_and_stream_error(mock_llm, anthropic_client):
    with anthropic.Anthropic(base_url=mock_llm.anthropic_base_url, api_key="invalid", max_retries=0) as bad:
        with pytest.raises(anthropic.AuthenticationError):
            claude(bad)
    seen = []
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
        for event in claude(anthropic_client, "[stream-error]", stream=True):
            seen.append(event.type)
    assert seen.count("content_block_delta") == 3


def test_anthropic_no_usage_stream_never_finishes_usage(anthropic_client):
    events = list(claude(anthropic_client, "[no-usage]", stream=True))
    assert [e.type for e in events][-1] == "content_block_stop"
    with anthropic_client.messages.stream(model=CLAUDE, max_tokens=100, messages=user("[no-usage]")) as stream:
        final = stream.get_final_message()
    assert final.stop_reason is None and final.usage.output_tokens == 1  # message_start's placeholder


def test_anthropic_slow_first_token(anthropic_client):
    t0 = time.perf_counter()
    first_text = None
    start_at = None
    for event in claude(anthropic_client, "[slow-first-token:300] [tokens:2]", stream=True):
        if event.type == "message_start":
            start_at = time.perf_counter() - t0
        if event.type == "content_block_delta" and first_text is None:
            first_text = time.perf_counter() - t0
    assert start_at < 0.25 <= 0.29 <= first_text  # message_start comes at once, the first token after 300 ms


def test_anthropic_models_list(anthropic_client):
    ids = [m.id for m in anthropic_client.models.list()]
    assert "claude-haiku-4-5-20251001" in ids


def test_async_anthropic(mock_llm):
    async def go():
        async with anthropic.AsyncAnthropic(base_url=mock_llm.anthropic_base_url, api_key=MOCK_API_KEY,
                                            max_retries=0) as client:
            m = await client.messages.create(model=CLAUDE, max_tokens=100, messages=user(HELLO))
            async with client.messages.stream(model=CLAUDE, max_tokens=100, messages=user(HELLO)) as stream:
                final = await stream.get_final_message()
            events = [e async for e in await client.messages.create(model=CLAUDE, max_tokens=100, stream=True,
                                                                     messages=user(HELLO))]
            with pytest.raises(anthropic.OverloadedError):
                await client.messages.create(model=CLAUDE, max_tokens=100, messages=user("[error:529]"))
            return m, final, events

    m, final, events = asyncio.run(go())
    assert final.content[0].text == m.content[0].text
    assert final.usage.output_tokens == m.usage.output_tokens == DEFAULT_OUTPUT_TOKENS
    assert events[-1].type == "message_stop"


# --------------------------------------------------------------------------------------------------------------
# The server itself
# --------------------------------------------------------------------------------------------------------------


def test_server_lifecycle_seed_and_realistic_latency():
    with MockLLMServer(seed=1) as one, MockLLMServer(seed=2, latency="realistic") as two:
        assert one.port != two.port and one.base_url.startswith("http://127.0.0.1:")
        with openai.OpenAI(base_url=one.openai_base_url, api_key="k", max_retries=0) as a, \
                openai.OpenAI(base_url=two.openai_base_url, api_key="k", max_retries=0) as b:
            text_one = chat(a, "[tokens:3]").choices[0].message.content
            t0 = time.perf_counter()
            text_two = chat(b, "[tokens:3]").choices[0].message.content
            elapsed = time.perf_counter() - t0
        assert text_one != text_two and len(text_one) == len(text_two) == 12
        assert elapsed > 0.1  # realistic: a gpt-4o-mini first token takes a few hundred ms
        port = one.port
    with socket.socket() as s:  # the port is free again
        s.bind(("127.0.0.1", port))


def test_stop_does_not_wait_for_streams_in_flight():
    server = MockLLMServer(latency="realistic").start()
    with openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0) as client:
        stream = chat(client, "a long answer [tokens:2000] [token-delay:50]", stream=True)
        next(iter(stream))
        t0 = time.perf_counter()
        server.stop()
        assert time.perf_counter() - t0 < 1.5
        rest = list(stream)  # the stream just ends (no [DONE], no usage)
    assert len(rest) < 100


def test_cli_serves(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (tmp_path / "mock.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "examples.mock_llm", "--port", str(port), "--seed", "3"],
                            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ})
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/v1/models", headers={"authorization": "Bearer k"})
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "mock.log").read_text()
                time.sleep(0.1)
        assert r.status_code == 200 and r.json()["object"] == "list"
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
