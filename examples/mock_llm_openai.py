"""The mock LLM's OpenAI endpoints: Chat Completions, Responses (JSON and streamed) and embeddings."""

from __future__ import annotations

import base64
import hashlib
import math
import random
import struct
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .mock_llm_http import (
    State, new_request_id, openai_error, planted_error, read_json, structured_output, token_limit, user_text,
)
from .mock_llm_markers import parse_markers
from .mock_llm_models import EMBEDDING_DIMS, is_reasoning_model, model_info
from .mock_llm_plan import Generation, Tool, seeded_rng, split_pieces
from .mock_llm_sse import (
    STREAM_ERROR_AFTER_TOKENS, Closing, Pacer, sleep_unless_closing, sse_data, sse_event, sse_response,
    wait_as_streamed,
)
from .mock_llm_tokens import count_tokens, estimate_prompt_tokens

REASONING_BY_EFFORT = {"none": 0, "minimal": 8, "low": 32, "medium": 64, "high": 128, "xhigh": 256}
SYSTEM_FINGERPRINT = "fp_mockllm01"


def _ident(prefix: str, n: int = 24) -> str:
    return prefix + uuid.uuid4().hex[:n]


def _openai_usage(gen: Generation) -> dict[str, Any]:
    completion = gen.output_tokens
    return {
        "prompt_tokens": gen.prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": gen.prompt_tokens + completion,
        "prompt_tokens_details": {"cached_tokens": gen.cache_read, "audio_tokens": 0,
                                  **({"cache_write_tokens": gen.cache_write} if gen.cache_write else {})},
        "completion_tokens_details": {"reasoning_tokens": gen.reasoning_tokens, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    }


def _chat_tools(body: dict[str, Any]) -> tuple[list[Tool], str | None, bool]:
    tools: list[Tool] = []
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            fn = t.get("function") if isinstance(t.get("function"), dict) else t
            if fn.get("name"):
                tools.append(Tool(str(fn["name"]), fn.get("parameters") or {"type": "object", "properties": {}}))
    choice = body.get("tool_choice")
    forced = None
    if isinstance(choice, dict):
        forced = (choice.get("function") or {}).get("name") or choice.get("name")
    elif choice == "required" and tools:
        forced = tools[0].name
    return tools, forced, choice == "none"


def _reasoning_default(model: str, effort: Any) -> int:
    if not is_reasoning_model(model):
        return 0
    return REASONING_BY_EFFORT.get(str(effort or "medium"), REASONING_BY_EFFORT["medium"])


async def chat_completions(request: Request) -> Response:
    state: State = request.app.state.mock
    body, err = await read_json(request, state, anthropic=False)
    if err is not None:
        return err
    model = body.get("model")
    messages = body.get("messages")
    if not isinstance(model, str) or not model:
        return openai_error(400, "you must provide a model parameter", param="model")
    if not isinstance(messages, list) or not messages:
        return openai_error(400, "[] is too short - 'messages'", param="messages")
    stream = bool(body.get("stream"))
    if body.get("stream_options") is not None and not stream:
        return openai_error(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                            param="stream_options")
    last_user = user_text(messages)
    last = messages[-1] if isinstance(messages[-1], dict) else {}
    tools, forced, none_choice = _chat_tools(body)
    schema, json_mode = structured_output(body.get("response_format"))
    gen = state.plan(
        model=model, prompt_tokens=estimate_prompt_tokens(messages, tools=body.get("tools") or None),
        last_user_text=last_user, ends_with_tool_result=last.get("role") in ("tool", "function"), tools=tools,
        tools_given=bool(tools), forced_tool=forced, tool_choice_none=none_choice,
        limit=token_limit(body, "max_completion_tokens", "max_tokens"),
        reasoning_tokens=_reasoning_default(model, body.get("reasoning_effort")), thinking=False,
        structured_schema=schema, json_mode=json_mode)
    if (planted := planted_error(gen.markers, state, f"chat|{model}|{last_user}", anthropic=False)) is not None:
        return planted
    cid = _ident("chatcmpl-", 29)
    created = int(time.time())
    headers = {"x-request-id": new_request_id(), "openai-processing-ms": str(int(gen.total_duration_s * 1000)),
               "openai-version": "2020-10-01"}
    if stream:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return sse_response(_chat_stream(gen, cid, created, include_usage), headers)
    await wait_as_streamed(gen)
    finish = {"refusal": "stop"}.get(gen.finish, gen.finish)
    message: dict[str, Any] = {"role": "assistant", "content": None if gen.refusal or gen.tool_calls else gen.text,
                               "refusal": gen.text if gen.refusal else None, "annotations": []}
    if gen.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}} for c in gen.tool_calls]
    return JSONResponse({
        "id": cid, "object": "chat.completion", "created": created, "model": gen.response_model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": None if gen.markers.no_usage else _openai_usage(gen),
        "service_tier": "default", "system_fingerprint": SYSTEM_FINGERPRINT,
    }, headers=headers)


async def _chat_stream(gen: Generation, cid: str, created: int, include_usage: bool) -> AsyncIterator[str]:
    base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": gen.response_model,
            "service_tier": "default", "system_fingerprint": SYSTEM_FINGERPRINT}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        data = {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        if include_usage:
            data["usage"] = None
        return sse_data(data)

    pacer = Pacer(gen)
    await pacer.first()
    if gen.refusal:
        yield chunk({"role": "assistant", "content": None, "refusal": ""})
    elif gen.tool_calls:
        yield chunk({"role": "assistant", "content": None, "refusal": None})
    else:
        yield chunk({"role": "assistant", "content": "", "refusal": None})
    sent = 0
    key = "refusal" if gen.refusal else "content"
    for piece in gen.pieces:
        await pacer.token()
        if gen.markers.stream_error and sent >= STREAM_ERROR_AFTER_TOKENS:
            yield sse_data({"error": {"message": "The server had an error while processing your request.",
                                       "type": "server_error", "param": None, "code": None}})
            return
        yield chunk({key: piece})
        sent += 1
    for index, call in enumerate(gen.tool_calls):
        await pacer.token()
        yield chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                     "function": {"name": call.name, "arguments": ""}}]})
        for piece in split_pieces(call.arguments, 8):
            await pacer.token()
            if gen.markers.stream_error and sent >= STREAM_ERROR_AFTER_TOKENS:
                yield sse_data({"error": {"message": "The server had an error while processing your request.",
                                           "type": "server_error", "param": None, "code": None}})
                return
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            sent += 1
    if gen.markers.stream_error:  # fewer tokens than the error threshold: fail before finishing
        yield sse_data({"error": {"message": "The server had an error while processing your request.",
                                   "type": "server_error", "param": None, "code": None}})
        return
    yield chunk({}, {"refusal": "stop"}.get(gen.finish, gen.finish))
    if include_usage and not gen.markers.no_usage:
        yield sse_data({**base, "choices": [], "usage": _openai_usage(gen)})
    yield "data: [DONE]\n\n"


def _responses_input(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("input")
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    if isinstance(raw, list):
        return [i for i in raw if isinstance(i, dict)]
    return []


def _responses_usage(gen: Generation) -> dict[str, Any]:
    out = gen.output_tokens
    return {
        "input_tokens": gen.prompt_tokens,
        "input_tokens_details": {"cached_tokens": gen.cache_read, "cache_write_tokens": gen.cache_write},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": gen.reasoning_tokens},
        "total_tokens": gen.prompt_tokens + out,
    }


class _ResponseBuilder:
    """Builds the Responses API objects (final and streamed) of one generation."""

    def __init__(self, gen: Generation, body: dict[str, Any]) -> None:
        self.gen = gen
        self.body = body
        self.id = _ident("resp_", 32)
        self.created_at = int(time.time())
        self.msg_id = _ident("msg_", 32)
        self.reasoning_id = _ident("rs_", 32)
        self.fc_ids = [_ident("fc_", 32) for _ in gen.tool_calls]
        self.reasoning = is_reasoning_model(gen.request_model)

    @property
    def status(self) -> str:
        return "incomplete" if self.gen.finish in ("length", "content_filter") else "completed"

    def reasoning_item(self) -> dict[str, Any]:
        return {"id": self.reasoning_id, "type": "reasoning", "summary": []}

    def message_item(self, status: str, parts: bool = True) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if parts:
            content = [self.part(full=True)]
        return {"id": self.msg_id, "type": "message", "status": status, "role": "assistant", "content": content}

    def part(self, full: bool) -> dict[str, Any]:
        text = self.gen.text if full else ""
        if self.gen.refusal:
            return {"type": "refusal", "refusal": text}
        return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}

    def call_item(self, i: int, full: bool, status: str) -> dict[str, Any]:
        c = self.gen.tool_calls[i]
        return {"id": self.fc_ids[i], "type": "function_call", "status": status, "call_id": c.id,
                "name": c.name, "arguments": c.arguments if full else ""}

    def has_message(self) -> bool:
        return not self.gen.tool_calls and not (self.gen.finish == "length" and not self.gen.pieces
                                                and self.gen.reasoning_tokens)

    def output(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if self.reasoning:
            items.append(self.reasoning_item())
        if self.has_message():
            items.append(self.message_item(self.status))
        for i in range(len(self.gen.tool_calls)):
            items.append(self.call_item(i, True, "completed"))
        return items

    def response(self, status: str, *, final: bool) -> dict[str, Any]:
        gen, body = self.gen, self.body
        incomplete = None
        if final and status == "incomplete":
            incomplete = {"reason": "content_filter" if gen.finish == "content_filter" else "max_output_tokens"}
        text_cfg = body.get("text") if isinstance(body.get("text"), dict) else {"format": {"type": "text"}}
        return {
            "id": self.id, "object": "response", "created_at": self.created_at, "status": status,
            "background": False, "error": None, "incomplete_details": incomplete,
            "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
            "model": gen.response_model, "output": self.output() if final else [], "parallel_tool_calls": True,
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": (body.get("reasoning") or {}).get("effort", "medium") if self.reasoning
                          else None, "summary": None},
            "service_tier": "default", "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": text_cfg, "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [],
            "top_p": body.get("top_p", 1.0), "truncation": "disabled",
            "usage": (None if gen.markers.no_usage else _responses_usage(gen)) if final else None,
            "user": None, "metadata": body.get("metadata") or {},
            **({"completed_at": int(time.time())} if final and status == "completed" else {}),
        }

    async def events(self) -> AsyncIterator[str]:
        gen = self.gen
        seq = 0

        def ev(kind: str, **fields: Any) -> str:
            nonlocal seq
            data = {"type": kind, "sequence_number": seq, **fields}
            seq += 1
            return sse_event(kind, data)

        pacer = Pacer(gen)
        yield ev("response.created", response=self.response("in_progress", final=False))
        yield ev("response.in_progress", response=self.response("in_progress", final=False))
        index = 0
        await pacer.first()
        if self.reasoning:
            yield ev("response.output_item.added", output_index=index,
                     item={**self.reasoning_item()})
            yield ev("response.output_item.done", output_index=index, item=self.reasoning_item())
            index += 1
        sent = 0

        def failed() -> str:
            resp = self.response("failed", final=False)
            resp["error"] = {"code": "server_error",
                             "message": "The server had an error while processing your request."}
            return ev("response.failed", response=resp)

        if self.has_message():
            yield ev("response.output_item.added", output_index=index,
                     item=self.message_item("in_progress", False))
            yield ev("response.content_part.added", item_id=self.msg_id, output_index=index, content_index=0,
                     part=self.part(full=False))
            for piece in gen.pieces:
                await pacer.token()
                if gen.markers.stream_error and sent >= STREAM_ERROR_AFTER_TOKENS:
                    yield failed()
                    return
                if gen.refusal:
                    yield ev("response.refusal.delta", item_id=self.msg_id, output_index=index, content_index=0,
                             delta=piece)
                else:
                    yield ev("response.output_text.delta", item_id=self.msg_id, output_index=index,
                             content_index=0, delta=piece, logprobs=[])
                sent += 1
            if gen.refusal:
                yield ev("response.refusal.done", item_id=self.msg_id, output_index=index, content_index=0,
                         refusal=gen.text)
            else:
                yield ev("response.output_text.done", item_id=self.msg_id, output_index=index, content_index=0,
                         text=gen.text, logprobs=[])
            yield ev("response.content_part.done", item_id=self.msg_id, output_index=index, content_index=0,
                     part=self.part(full=True))
            yield ev("response.output_item.done", output_index=index, item=self.message_item(self.status))
            index += 1
        for i, call in enumerate(gen.tool_calls):
            await pacer.token()
            yield ev("response.output_item.added", output_index=index,
                     item=self.call_item(i, False, "in_progress"))
            for piece in split_pieces(call.arguments, 8):
                await pacer.token()
                if gen.markers.stream_error and sent >= STREAM_ERROR_AFTER_TOKENS:
                    yield failed()
                    return
                yield ev("response.function_call_arguments.delta", item_id=self.fc_ids[i], output_index=index,
                         delta=piece)
                sent += 1
            yield ev("response.function_call_arguments.done", item_id=self.fc_ids[i], output_index=index,
                     name=call.name, arguments=call.arguments)
            yield ev("response.output_item.done", output_index=index, item=self.call_item(i, True, "completed"))
            index += 1
        if gen.markers.stream_error:
            yield failed()
            return
        status = self.status
        yield ev("response.incomplete" if status == "incomplete" else "response.completed",
                 response=self.response(status, final=True))


async def responses(request: Request) -> Response:
    state: State = request.app.state.mock
    body, err = await read_json(request, state, anthropic=False)
    if err is not None:
        return err
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return openai_error(400, "Missing required parameter: 'model'.", param="model")
    items = _responses_input(body)
    if not items:
        return openai_error(400, "Missing required parameter: 'input'.", param="input")
    tools, forced, none_choice = _chat_tools(body)
    text_config = body.get("text")
    schema, json_mode = structured_output(text_config.get("format") if isinstance(text_config, dict) else None)
    last_user = user_text(items)
    gen = state.plan(
        model=model, prompt_tokens=estimate_prompt_tokens(items, system=body.get("instructions"),
                                                          tools=body.get("tools") or None),
        last_user_text=last_user, ends_with_tool_result=items[-1].get("type") == "function_call_output",
        tools=tools, tools_given=bool(tools), forced_tool=forced, tool_choice_none=none_choice,
        limit=token_limit(body, "max_output_tokens"),
        reasoning_tokens=_reasoning_default(model, (body.get("reasoning") or {}).get("effort")), thinking=False,
        structured_schema=schema, json_mode=json_mode)
    if (planted := planted_error(gen.markers, state, f"resp|{model}|{last_user}", anthropic=False)) is not None:
        return planted
    builder = _ResponseBuilder(gen, body)
    headers = {"x-request-id": new_request_id(), "openai-processing-ms": str(int(gen.total_duration_s * 1000))}
    if body.get("stream"):
        return sse_response(builder.events(), headers)
    await wait_as_streamed(gen)
    return JSONResponse(builder.response(builder.status, final=True), headers=headers)


def _vector(text: str, dims: int) -> list[float]:
    rng = random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))
    vec = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


async def embeddings(request: Request) -> Response:
    state: State = request.app.state.mock
    body, err = await read_json(request, state, anthropic=False)
    if err is not None:
        return err
    model = body.get("model")
    raw = body.get("input")
    if not isinstance(model, str) or not model:
        return openai_error(400, "you must provide a model parameter", param="model")
    if isinstance(raw, str):
        inputs = [raw]
    elif isinstance(raw, list) and raw and all(isinstance(x, int) for x in raw):
        inputs = [" ".join(map(str, raw))]
    elif isinstance(raw, list) and raw:
        inputs = [x if isinstance(x, str) else " ".join(map(str, x)) for x in raw]
    else:
        return openai_error(400, "'input' is a required property", param="input")
    markers = parse_markers(inputs[-1])
    if (planted := planted_error(markers, state, f"emb|{model}|{inputs[-1]}", anthropic=False)) is not None:
        return planted
    dims = body.get("dimensions") if isinstance(body.get("dimensions"), int) else EMBEDDING_DIMS.get(model, 1536)
    if state.latency == "realistic":
        lat = seeded_rng(state.seed, "latency", model, inputs[-1])
        try:
            delay = model_info(model).ttft_ms / 1000 * math.exp(lat.gauss(0.0, 0.4))
            await sleep_unless_closing(delay, state.closing)
        except Closing:
            pass
    data = []
    for i, text in enumerate(inputs):
        vec = _vector(text, dims)
        emb: Any = vec
        if body.get("encoding_format") == "base64":
            emb = base64.b64encode(struct.pack(f"<{dims}f", *vec)).decode()
        data.append({"object": "embedding", "index": i, "embedding": emb})
    tokens = sum(count_tokens(t) for t in inputs)
    return JSONResponse({"object": "list", "data": data, "model": model,
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}},
                        headers={"x-request-id": new_request_id()})
