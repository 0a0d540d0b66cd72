"""The mock LLM's Anthropic endpoints: Messages (JSON and streamed) and token counting."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .mock_llm_http import (
    State, anthropic_error, planted_error, read_json, structured_output, token_limit, user_text,
)
from .mock_llm_plan import Generation, Tool, ToolCall, split_pieces
from .mock_llm_sse import STREAM_ERROR_AFTER_TOKENS, Pacer, sse_event, sse_response, wait_as_streamed
from .mock_llm_tokens import estimate_prompt_tokens

DEFAULT_THINKING_TOKENS = 32


_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
                   "content_filter": "refusal", "refusal": "refusal"}


def _anthropic_tools(body: dict[str, Any]) -> tuple[list[Tool], str | None, bool]:
    tools = [Tool(str(t["name"]), t.get("input_schema") or {"type": "object", "properties": {}})
             for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name")]
    choice = body.get("tool_choice") if isinstance(body.get("tool_choice"), dict) else {}
    forced = None
    if choice.get("type") == "tool":
        forced = choice.get("name")
    elif choice.get("type") == "any" and tools:
        forced = tools[0].name
    return tools, forced, choice.get("type") == "none"


def _anthropic_usage(gen: Generation, *, start: bool = False) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "input_tokens": gen.prompt_tokens - gen.cache_read - gen.cache_write,
        "cache_creation_input_tokens": gen.cache_write,
        "cache_read_input_tokens": gen.cache_read,
        "cache_creation": {"ephemeral_5m_input_tokens": gen.cache_write, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 1 if start else gen.output_tokens,
        "service_tier": "standard",
    }
    if gen.thinking_pieces and not start:
        usage["output_tokens_details"] = {"thinking_tokens": gen.reasoning_tokens}
    return usage


def _signature(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest() * 2).decode()


def _tool_use_id(call: ToolCall) -> str:
    return "toolu_01" + call.id[5:27]


def _anthropic_input(call: ToolCall) -> Any:
    try:
        return json.loads(call.arguments)
    except ValueError:
        return call.arguments  # planted bad JSON / cut by max_tokens: the raw text, unparseable


def _anthropic_content(gen: Generation) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if gen.thinking_pieces:
        thinking = "".join(gen.thinking_pieces)
        blocks.append({"type": "thinking", "thinking": thinking, "signature": _signature(thinking)})
    if gen.pieces:
        blocks.append({"type": "text", "text": gen.text, "citations": None})
    for call in gen.tool_calls:
        blocks.append({"type": "tool_use", "id": _tool_use_id(call), "name": call.name,
                       "input": _anthropic_input(call)})
    return blocks


def _refusal_details(gen: Generation) -> dict[str, Any] | None:
    if gen.finish in ("refusal", "content_filter"):
        return {"type": "refusal", "category": None, "explanation": None}
    return None


async def messages(request: Request) -> Response:
    state: State = request.app.state.mock
    body, err = await read_json(request, state, anthropic=True)
    if err is not None:
        return err
    model = body.get("model")
    msgs = body.get("messages")
    if not isinstance(model, str) or not model:
        return anthropic_error(400, "model: Field required")
    if not isinstance(msgs, list) or not msgs:
        return anthropic_error(400, "messages: at least one message is required")
    max_tokens = token_limit(body, "max_tokens")
    if max_tokens is None:
        return anthropic_error(400, "max_tokens: Field required")
    thinking_cfg = body.get("thinking") if isinstance(body.get("thinking"), dict) else {}
    thinking = thinking_cfg.get("type") in ("enabled", "adaptive")
    budget = thinking_cfg.get("budget_tokens")
    if thinking_cfg.get("type") == "enabled":
        if not isinstance(budget, int):
            return anthropic_error(400, "thinking.enabled.budget_tokens: Field required")
        if budget >= max_tokens:
            return anthropic_error(400, "`max_tokens` must be greater than `thinking.budget_tokens`.")
    tools, forced, none_choice = _anthropic_tools(body)
    last = msgs[-1] if isinstance(msgs[-1], dict) else {}
    last_content = last.get("content")
    ends_with_tool_result = (last.get("role") == "user" and isinstance(last_content, list)
                             and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last_content))
    last_user = user_text(msgs)
    thinking_tokens = DEFAULT_THINKING_TOKENS if thinking else 0
    if isinstance(budget, int):
        thinking_tokens = min(thinking_tokens, budget)
    schema, json_mode = structured_output((body.get("output_config") or {}).get("format")
                                    if isinstance(body.get("output_config"), dict) else body.get("output_format"))
    gen = state.plan(
        model=model, prompt_tokens=estimate_prompt_tokens(msgs, system=body.get("system"),
                                                          tools=body.get("tools") or None),
        last_user_text=last_user, ends_with_tool_result=ends_with_tool_result, tools=tools,
        tools_given=bool(tools), forced_tool=forced, tool_choice_none=none_choice, limit=max_tokens,
        reasoning_tokens=thinking_tokens, thinking=thinking, structured_schema=schema, json_mode=json_mode)
    if (planted := planted_error(gen.markers, state, f"msg|{model}|{last_user}", anthropic=True)) is not None:
        return planted
    mid = "msg_01" + uuid.uuid4().hex[:22]
    headers = {"request-id": "req_011" + uuid.uuid4().hex[:21]}
    if body.get("stream"):
        return sse_response(_anthropic_stream(gen, mid), headers)
    await wait_as_streamed(gen)
    return JSONResponse({
        "id": mid, "type": "message", "role": "assistant", "model": gen.response_model,
        "content": _anthropic_content(gen), "stop_reason": _ANTHROPIC_STOP[gen.finish], "stop_sequence": None,
        "stop_details": _refusal_details(gen), "usage": _anthropic_usage(gen),
    }, headers=headers)


async def _anthropic_stream(gen: Generation, mid: str) -> AsyncIterator[str]:
    start = {"id": mid, "type": "message", "role": "assistant", "model": gen.response_model, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": _anthropic_usage(gen, start=True)}
    yield sse_event("message_start", {"type": "message_start", "message": start})
    yield sse_event("ping", {"type": "ping"})
    pacer = Pacer(gen)
    await pacer.first()
    index = 0
    sent = 0
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    def block(kind: str, **fields: Any) -> str:
        return sse_event(kind, {"type": kind, "index": index, **fields})

    if gen.thinking_pieces:
        yield block("content_block_start", content_block={"type": "thinking", "thinking": "", "signature": ""})
        for piece in gen.thinking_pieces:
            yield block("content_block_delta", delta={"type": "thinking_delta", "thinking": piece})
        thinking = "".join(gen.thinking_pieces)
        yield block("content_block_delta", delta={"type": "signature_delta", "signature": _signature(thinking)})
        yield block("content_block_stop")
        index += 1
    if gen.pieces:
        yield block("content_block_start", content_block={"type": "text", "text": ""})
        for piece in gen.pieces:
            await pacer.token()
            if gen.markers.stream_error and sent >= STREAM_ERROR_AFTER_TOKENS:
                yield sse_event("error", overloaded)
                return
            yield block("content_block_delta", delta={"type": "text_delta", "text": piece})
            sent += 1
        yield block("content_block_stop")
        index += 1
    for call in gen.tool_calls:
        await pacer.token()
        yield block("content_block_start",
                    content_block={"type": "tool_use", "id": _tool_use_id(call), "name": call.name, "input": {}})
        yield block("content_block_delta", delta={"type": "input_json_delta", "partial_json": ""})
        for piece in split_pieces(call.arguments, 8):
            await pacer.token()
            if gen.markers.stream_error and sent >= STREAM_ERROR_AFTER_TOKENS:
                yield sse_event("error", overloaded)
                return
            yield block("content_block_delta", delta={"type": "input_json_delta", "partial_json": piece})
            sent += 1
        yield block("content_block_stop")
        index += 1
    if gen.markers.stream_error:
        yield sse_event("error", overloaded)
        return
    if gen.markers.no_usage:
        return  # the stream ends without message_delta / message_stop: final usage never arrives
    usage = _anthropic_usage(gen)
    usage.pop("cache_creation")
    usage.pop("service_tier")
    yield sse_event("message_delta", {"type": "message_delta",
                                       "delta": {"stop_reason": _ANTHROPIC_STOP[gen.finish], "stop_sequence": None,
                                                 "stop_details": _refusal_details(gen)},
                                       "usage": usage})
    yield sse_event("message_stop", {"type": "message_stop"})


async def count_message_tokens(request: Request) -> Response:
    state: State = request.app.state.mock
    body, err = await read_json(request, state, anthropic=True)
    if err is not None:
        return err
    msgs = body.get("messages")
    if not isinstance(msgs, list):
        return anthropic_error(400, "messages: Field required")
    return JSONResponse({"input_tokens": estimate_prompt_tokens(msgs, system=body.get("system"),
                                                                tools=body.get("tools") or None)})
