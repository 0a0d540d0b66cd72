"""An OpenAI- and Anthropic-compatible mock LLM server, for the demo app and the end-to-end tests.

The real ``openai`` and ``anthropic`` client libraries talk to it unchanged (point ``base_url`` at it): it speaks
the wire formats those clients parse, streaming included, and answers deterministically so a test can compute
every number it will see. Nothing leaves the machine; no model runs.

Run it::

    python -m examples.mock_llm --host 127.0.0.1 --port 8765 [--latency realistic|none] [--seed N]

    openai.OpenAI(base_url="http://127.0.0.1:8765/v1", api_key="any")
    anthropic.Anthropic(base_url="http://127.0.0.1:8765", api_key="any")

or in a test, :class:`MockLLMServer` (uvicorn on 127.0.0.1, a free port, a background thread)::

    with MockLLMServer() as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0)

Endpoints
---------
OpenAI: ``POST /v1/chat/completions`` (JSON or SSE ``data: {...}`` ... ``data: [DONE]``; usage in a final chunk
with empty ``choices`` only when ``stream_options.include_usage`` is set, as OpenAI does), ``POST /v1/responses``
(JSON or typed SSE events ``response.created`` ... ``response.completed``), ``POST /v1/embeddings``,
``GET /v1/models``. Anthropic: ``POST /v1/messages`` (JSON or SSE ``message_start``, ``ping``,
``content_block_start/delta/stop``, ``message_delta``, ``message_stop``), ``POST /v1/messages/count_tokens``;
``GET /v1/models`` answers in Anthropic's shape when the request carries an ``anthropic-version`` header.
Validation the real APIs do and the mock copies: ``stream_options`` without ``stream`` is a 400 (OpenAI);
``max_tokens`` is required and must exceed ``thinking.budget_tokens`` (Anthropic).

Auth: every request needs a non-empty key, ``Authorization: Bearer KEY`` or ``x-api-key: KEY`` (either provider);
without one, or with a key starting with ``invalid``, the answer is 401 in the provider's error shape.

Token counts (exact, so tests can compute them; :func:`count_tokens` and :func:`estimate_prompt_tokens`)
--------------------------------------------------------------------------------------------------------
- ``tokens(text) = ceil(len(text) / 4)``.
- Prompt tokens = sum over messages of ``4 + tokens(text of the message)`` + ``4 + tokens(system)`` when a system
  prompt (Anthropic ``system``, Responses ``instructions``) is given + ``tokens(compact JSON of the tools list)``
  when tools are given. The text of a message is its string content, or its parts' ``text`` joined; tool calls
  add their name and arguments, tool results their content.
- Completion text is made of 4-character tokens, so visible output tokens = ``len(text) / 4`` exactly (JSON for
  structured output is cut into 4-character pieces, the last maybe shorter: ``tokens(json)``). Default length:
  24 tokens (``[tokens:N]`` sets it; in ``realistic`` mode the default varies, lognormal around 120).
- A tool call costs ``tokens(name) + tokens(arguments)`` output tokens.
- Reasoning: OpenAI reasoning models (``o1``/``o3``/``o4*``, ``gpt-5*`` except ``*-chat*``) reason for 8/32/64/128/
  256 tokens at effort minimal/low/medium (default)/high/xhigh (``none``: 0); Anthropic thinks for 32 tokens
  (capped by ``budget_tokens``) when ``thinking`` is enabled. ``[reasoning:N]`` sets it. Reasoning tokens are
  inside output tokens (OpenAI ``completion_tokens_details.reasoning_tokens``; Anthropic ``output_tokens`` plus
  ``output_tokens_details.thinking_tokens``).
- Output token limits (``max_tokens`` / ``max_completion_tokens`` / ``max_output_tokens``) are honoured: reasoning
  is spent first, then the visible text is cut, and the finish reason becomes ``length`` / ``max_tokens`` /
  status ``incomplete``. A reasoning model that spends the whole budget reasoning answers with empty content.
- Cache: OpenAI reports cached tokens inside ``prompt_tokens`` (``prompt_tokens_details.cached_tokens``);
  Anthropic reports ``input_tokens`` = prompt tokens - cache reads - cache writes, with
  ``cache_read_input_tokens`` / ``cache_creation_input_tokens`` on top. ``usage.total = prompt + completion``.

Markers (in the LAST user message; several may be combined)
-----------------------------------------------------------
- ``[refuse]``: a refusal. OpenAI chat: ``message.refusal`` set, ``content`` null, finish ``stop`` (streamed as
  ``delta.refusal``); Responses: a ``refusal`` content part; Anthropic: stop reason ``refusal`` (+
  ``stop_details``).
- ``[truncate]``: finish ``length`` / ``max_tokens`` / ``incomplete`` even without a limit (half the output).
- ``[content-filter]``: OpenAI finish ``content_filter`` after half the text (Responses: incomplete,
  reason ``content_filter``; Anthropic has none: stop reason ``refusal``).
- ``[empty]``: empty content (``""``; Anthropic ``content: []``), zero visible output tokens, normal finish.
- ``[tokens:N]``: N visible output tokens. ``[reasoning:N]``: N reasoning/thinking tokens.
- ``[tool]``: call a tool (the first one given; ``get_weather`` when none is given). ``[tool:NAME]``: that tool.
  ``[tools:N]``: N parallel calls. ``[tool:bad-json]``: arguments that are not valid JSON, even to a partial
  parser (a trailing comma: ``{"location":"sample-location",}``). Anthropic non-stream: ``input`` is that raw
  string; stream: the ``input_json_delta`` fragments concatenate to it (so ``anthropic``'s ``messages.stream()``
  helper raises ``ValueError`` while accumulating, as it would with a real provider sending such JSON).
  ``[tool:unknown]``: a call to ``nonexistent_function``, which the request did not offer. ``[no-tool]``: answer
  with text even though tools are given. Without a marker, a request that offers tools gets a call to the first
  tool (or the one ``tool_choice`` names; ``tool_choice`` ``none`` gives text). When the conversation ends with a
  tool result (an OpenAI ``tool`` message, a Responses ``function_call_output``, an Anthropic ``tool_result``
  block) the model answers with text, tool markers or not, so an agent loop ends. Arguments are sampled from the
  tool's JSON schema (strings ``"sample-<name>"``, integers 42, numbers 4.2, the first enum value ...), and so is
  structured output (``response_format`` / ``text.format`` json_schema; json_object gives ``{"result": ...}``).
- ``[error:CODE]``: fail with that HTTP status in the provider's error shape (429 with ``retry-after`` /
  ``retry-after-ms``, 400, 401, 403, 404, 500, 503, 529 (Anthropic ``overloaded_error``) ...); a streaming
  request gets the status before any event, as with the real APIs.
  ``[retry-after:S]`` sets the 429's retry-after seconds (default 0.2). ``[flaky:CODE]`` / ``[flaky:CODE:K]``:
  the first K (default 1) requests with that same last user message fail, later ones succeed (client retries).
- ``[stream-error]``: a stream that fails after 3 tokens: OpenAI chat ``data: {"error": ...}`` (the client
  raises ``APIError``); Responses ``response.failed``; Anthropic an ``event: error`` (``overloaded_error``).
- ``[no-usage]``: the stream never reports usage: no usage chunk even when ``include_usage`` is asked; Responses
  ``response.completed`` with ``usage: null``; Anthropic: the stream stops after the content blocks, with no
  ``message_delta`` / ``message_stop``. Non-streaming OpenAI answers ``usage: null`` (Anthropic non-streaming
  always reports usage: its ``usage`` is required).
- ``[slow-first-token:MS]``: the first token comes MS ms after the request (OpenAI: before the first chunk;
  Anthropic: after ``message_start`` and ``ping``, before the first content block). ``[token-delay:MS]``: MS ms
  between tokens. Non-streaming responses take the same total time.
- ``[cache:N]``: N cached prompt tokens (clamped to the prompt). ``[cache-write:N]``: N cache-creation tokens
  (Anthropic; OpenAI ``prompt_tokens_details.cache_write_tokens``).

Latency: ``none`` (default, tests) sleeps only where a marker asks; ``realistic`` gives each model a lognormal
time to first token (median per model, sigma 0.35, 1% spikes ×3-8; reasoning adds reasoning tokens / speed) and
lognormal inter-token delays around a per-model decode speed, from a ``random.Random`` seeded by ``--seed`` and
the request's last user message. The words of an answer come from the same seeded source.

Not modelled: ``n`` > 1, stop sequences, logprobs, audio, images (0 tokens), server-side tools, prompt caching
by prefix (use ``[cache:N]``), parameter restrictions of particular models (``max_tokens`` is accepted everywhere).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import math
import random
import re
import socket
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_OUTPUT_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "MockLLMServer",
    "RecordedRequest",
    "count_tokens",
    "create_app",
    "estimate_prompt_tokens",
    "main",
    "parse_markers",
]

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
DEFAULT_OUTPUT_TOKENS = 24
DEFAULT_THINKING_TOKENS = 32
STREAM_ERROR_AFTER_TOKENS = 3
DEFAULT_RETRY_AFTER_S = 0.2
REASONING_BY_EFFORT = {"none": 0, "minimal": 8, "low": 32, "medium": 64, "high": 128, "xhigh": 256}
REFUSAL_TEXT = "I'm sorry, but I can't help with that request."
UNKNOWN_TOOL = "nonexistent_function"
DEFAULT_TOOL = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
}
SYSTEM_FINGERPRINT = "fp_mockllm01"


# --------------------------------------------------------------------------------------------------------------
# Models: the dated snapshot each alias answers with, and its speed in realistic mode
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ModelInfo:
    prefix: str
    snapshot: str  # '' -> echo the requested name
    ttft_ms: float  # median time to first token
    tps: float  # median decode speed, tokens/s
    provider: str


_MODELS: tuple[_ModelInfo, ...] = (  # longest prefix first
    _ModelInfo("gpt-4o-mini", "gpt-4o-mini-2024-07-18", 380, 110, "openai"),
    _ModelInfo("gpt-4o", "gpt-4o-2024-08-06", 620, 75, "openai"),
    _ModelInfo("gpt-4.1-mini", "gpt-4.1-mini-2025-04-14", 400, 100, "openai"),
    _ModelInfo("gpt-4.1", "gpt-4.1-2025-04-14", 600, 80, "openai"),
    _ModelInfo("gpt-5-mini", "gpt-5-mini-2025-08-07", 500, 140, "openai"),
    _ModelInfo("gpt-5", "gpt-5-2025-08-07", 750, 90, "openai"),
    _ModelInfo("o4-mini", "o4-mini-2025-04-16", 450, 150, "openai"),
    _ModelInfo("o3-mini", "o3-mini-2025-01-31", 450, 140, "openai"),
    _ModelInfo("o3", "o3-2025-04-16", 900, 70, "openai"),
    _ModelInfo("o1", "o1-2024-12-17", 1200, 60, "openai"),
    _ModelInfo("text-embedding-3-small", "", 60, 0, "openai"),
    _ModelInfo("text-embedding-3-large", "", 90, 0, "openai"),
    _ModelInfo("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", 950, 62, "anthropic"),
    _ModelInfo("claude-haiku-4-5", "claude-haiku-4-5-20251001", 480, 125, "anthropic"),
    _ModelInfo("claude-sonnet-4-6", "", 900, 65, "anthropic"),
    _ModelInfo("claude-opus-4-5", "claude-opus-4-5-20251101", 1300, 45, "anthropic"),
    _ModelInfo("claude-opus-4-1", "claude-opus-4-1-20250805", 1400, 40, "anthropic"),
    _ModelInfo("claude-3-5-haiku", "claude-3-5-haiku-20241022", 450, 110, "anthropic"),
)
_DEFAULT_MODEL = _ModelInfo("", "", 500, 80, "openai")
_EMBEDDING_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


def _model_info(model: str) -> _ModelInfo:
    for info in _MODELS:
        if model.startswith(info.prefix):
            return info
    return _DEFAULT_MODEL


def _response_model(model: str) -> str:
    """The dated snapshot a provider answers with for an alias; a dated or unknown name is echoed."""
    info = _model_info(model)
    return info.snapshot if info.snapshot and model == info.prefix else model


def _is_reasoning_model(model: str) -> bool:
    m = model.lower()
    if m.startswith("gpt-5"):
        return "-chat" not in m
    return bool(re.match(r"o\d", m))


# --------------------------------------------------------------------------------------------------------------
# Token counting
# --------------------------------------------------------------------------------------------------------------


def count_tokens(text: str) -> int:
    """The mock's tokenizer: ``ceil(len(text) / 4)``."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _content_text(content: Any) -> str:
    """The countable text of a message content: a string, or parts/blocks of any provider."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    out: list[str] = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if isinstance(part.get("text"), str):
            out.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            out.append(part["refusal"])
        elif kind == "thinking" and isinstance(part.get("thinking"), str):
            out.append(part["thinking"])
        elif kind == "tool_use":
            out.append(str(part.get("name", "")) + _compact(part.get("input", {})))
        elif kind == "tool_result":
            out.append(_content_text(part.get("content")))
    return "".join(out)


def _message_text(message: dict[str, Any]) -> str:
    """Text of one message or Responses input item, as counted for the prompt."""
    kind = message.get("type")
    if kind == "function_call":
        return str(message.get("name", "")) + str(message.get("arguments", ""))
    if kind == "function_call_output":
        out = message.get("output", "")
        return out if isinstance(out, str) else _content_text(out)
    if kind == "reasoning":
        return _content_text(message.get("summary"))
    text = _content_text(message.get("content"))
    for call in message.get("tool_calls") or []:
        fn = (call.get("function") or {}) if isinstance(call, dict) else {}
        if isinstance(fn, dict):
            text += str(fn.get("name", "")) + str(fn.get("arguments", ""))
    return text


def estimate_prompt_tokens(messages: Iterable[dict[str, Any]], *, system: Any = None,
                           tools: list[Any] | None = None) -> int:
    """Prompt tokens as the mock reports them (OpenAI ``prompt_tokens``; Anthropic input + cache reads + writes).

    ``messages``: OpenAI chat messages, Anthropic messages or Responses input items (a plain-string Responses
    ``input`` is one user message). ``system``: Anthropic ``system`` or Responses ``instructions`` (OpenAI chat
    system messages are ordinary messages). ``tools``: the request's tools list, exactly as sent.
    """
    total = sum(MESSAGE_OVERHEAD_TOKENS + count_tokens(_message_text(m)) for m in messages if isinstance(m, dict))
    if system:
        total += MESSAGE_OVERHEAD_TOKENS + count_tokens(_content_text(system))
    if tools:
        total += count_tokens(_compact(tools))
    return total


# --------------------------------------------------------------------------------------------------------------
# Markers
# --------------------------------------------------------------------------------------------------------------

_MARKER_RE = re.compile(r"\[([a-z][a-z-]*)(?::([^\]\s]*))?\]")


@dataclass
class Markers:
    """The behaviour a request's last user message asks for."""

    refuse: bool = False
    truncate: bool = False
    content_filter: bool = False
    empty: bool = False
    tool: str | None = None  # 'first', a tool name, 'bad-json', 'unknown'
    n_tools: int = 1
    no_tool: bool = False
    error: int | None = None
    flaky: tuple[int, int] | None = None  # (status, times)
    retry_after_s: float = DEFAULT_RETRY_AFTER_S
    stream_error: bool = False
    no_usage: bool = False
    slow_first_token_ms: float | None = None
    token_delay_ms: float | None = None
    cache_read: int = 0
    cache_write: int = 0
    tokens: int | None = None
    reasoning: int | None = None


def _int(value: str | None, default: int) -> int:
    try:
        return int(float(value)) if value not in (None, "") else default
    except ValueError:
        return default


def parse_markers(text: str) -> Markers:
    """Read the ``[marker]`` / ``[marker:value]`` tokens documented in the module docstring."""
    m = Markers()
    for name, value in _MARKER_RE.findall(text or ""):
        if name == "refuse":
            m.refuse = True
        elif name == "truncate":
            m.truncate = True
        elif name == "content-filter":
            m.content_filter = True
        elif name == "empty":
            m.empty = True
        elif name == "tool":
            m.tool = value or "first"
        elif name == "tools":
            m.tool = m.tool or "first"
            m.n_tools = max(1, _int(value, 2))
        elif name == "no-tool":
            m.no_tool = True
        elif name == "error":
            m.error = _int(value, 500)
        elif name == "flaky":
            status, _, times = value.partition(":")
            m.flaky = (_int(status, 500), max(1, _int(times, 1)))
        elif name == "retry-after":
            try:
                m.retry_after_s = max(0.0, float(value))
            except ValueError:
                pass
        elif name == "stream-error":
            m.stream_error = True
        elif name == "no-usage":
            m.no_usage = True
        elif name == "slow-first-token":
            m.slow_first_token_ms = float(_int(value, 1000))
        elif name == "token-delay":
            m.token_delay_ms = float(_int(value, 20))
        elif name == "cache":
            m.cache_read = max(0, _int(value, 0))
        elif name == "cache-write":
            m.cache_write = max(0, _int(value, 0))
        elif name == "tokens":
            m.tokens = max(0, _int(value, DEFAULT_OUTPUT_TOKENS))
        elif name == "reasoning":
            m.reasoning = max(0, _int(value, 0))
    return m


# --------------------------------------------------------------------------------------------------------------
# Generation: provider-neutral plan of one answer
# --------------------------------------------------------------------------------------------------------------

_WORDS = ("the", "api", "can", "use", "new", "app", "our", "key", "log", "run", "set", "get", "fix", "add", "one",
          "two", "all", "any", "are", "was", "has", "may", "now", "see", "way", "how", "its", "per", "via", "not",
          "top", "low", "big", "few", "own", "too", "yes", "day", "job", "map", "row", "sum", "max", "min", "raw")
_ENDS = ("so", "up", "in", "on", "it", "to", "by", "at", "as", "ok")


def _pieces(rng: random.Random, n: int) -> list[str]:
    """``n`` tokens of 4 characters each: words + space, sentence ends ``'xx. '``, the last one ``'xxx.'``."""
    out: list[str] = []
    sentence = 0
    target = rng.randint(7, 14)
    for i in range(n):
        if i == n - 1:
            word = rng.choice(_WORDS)
            out.append((word.capitalize() if sentence == 0 else word) + ".")
        elif sentence >= target:
            out.append(rng.choice(_ENDS) + ". ")
            sentence, target = 0, rng.randint(7, 14)
        else:
            word = rng.choice(_WORDS)
            out.append((word.capitalize() if sentence == 0 else word) + " ")
            sentence += 1
    return out


def _split(text: str, size: int = CHARS_PER_TOKEN) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def _sample_schema(schema: Any, defs: dict[str, Any], name: str = "value", depth: int = 0) -> Any:
    """A deterministic value that validates against a (simple) JSON schema."""
    if not isinstance(schema, dict) or depth > 8:
        return "sample"
    if "$ref" in schema:
        ref = str(schema["$ref"]).rsplit("/", 1)[-1]
        return _sample_schema(defs.get(ref, {}), defs, name, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            options = [s for s in schema[key] if not (isinstance(s, dict) and s.get("type") == "null")]
            return _sample_schema((options or schema[key])[0], defs, name, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: _sample_schema(v, defs, k, depth + 1) for k, v in props.items()}
    if kind == "array":
        return [_sample_schema(schema.get("items", {}), defs, name, depth + 1)]
    if kind == "integer":
        return 42
    if kind == "number":
        return 4.2
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if schema.get("format") == "date":
        return "2025-01-01"
    if schema.get("format") == "date-time":
        return "2025-01-01T00:00:00Z"
    return f"sample-{name}"


def _sample_json(schema: Any) -> str:
    defs = {}
    if isinstance(schema, dict):
        defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    return _compact(_sample_schema(schema, defs))


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # the JSON text (may be invalid, or cut by a token limit)

    @property
    def tokens(self) -> int:
        return count_tokens(self.name) + count_tokens(self.arguments)


@dataclass
class Generation:
    """One planned answer, before a provider renders it."""

    request_model: str
    response_model: str
    prompt_tokens: int  # everything, cache included
    cache_read: int
    cache_write: int
    pieces: list[str]  # visible text (or refusal text), one entry per streamed token
    refusal: bool
    reasoning_tokens: int
    thinking_pieces: list[str]  # Anthropic thinking text (one piece per thinking token)
    tool_calls: list[ToolCall]
    finish: str  # stop | length | tool_calls | content_filter | refusal
    bad_json: bool
    markers: Markers
    ttft_s: float
    token_delays: list[float]  # delay before each output piece after the first
    closing: threading.Event | None = None

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    @property
    def visible_tokens(self) -> int:
        return count_tokens(self.text)

    @property
    def output_tokens(self) -> int:
        return self.visible_tokens + self.reasoning_tokens + sum(c.tokens for c in self.tool_calls)

    @property
    def total_duration_s(self) -> float:
        return self.ttft_s + sum(self.token_delays)


@dataclass(frozen=True)
class _Tool:
    name: str
    schema: Any


def _rng(seed: int, *parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(str(p) for p in (seed, *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _ident(prefix: str, n: int = 24) -> str:
    return prefix + uuid.uuid4().hex[:n]


class _Closing(Exception):
    """The server is stopping: a sleeping response gives up so shutdown is not held up."""


async def _sleep(seconds: float, closing: threading.Event | None) -> None:
    end = time.monotonic() + seconds
    while True:
        if closing is not None and closing.is_set():
            raise _Closing
        left = end - time.monotonic()
        if left <= 0:
            return
        await asyncio.sleep(min(left, 0.05))


class _Pacer:
    """Sleeps between chunks of a stream (TTFT first, then the per-token delays)."""

    def __init__(self, gen: Generation) -> None:
        self._ttft = gen.ttft_s
        self._delays = iter(gen.token_delays)
        self._first = True
        self._closing = gen.closing

    async def first(self) -> None:
        if self._first:
            self._first = False
            if self._ttft > 0:
                await _sleep(self._ttft, self._closing)

    async def token(self) -> None:
        if self._first:
            await self.first()
            return
        delay = next(self._delays, 0.0)
        if delay > 0:
            await _sleep(delay, self._closing)


def _sse_response(events: AsyncIterator[str], headers: dict[str, str]) -> StreamingResponse:
    async def body() -> AsyncIterator[str]:
        try:
            async for chunk in events:
                yield chunk
        except _Closing:
            return  # the stream just ends, as when a server goes away
        finally:
            await events.aclose()  # type: ignore[attr-defined]

    return StreamingResponse(body(), media_type="text/event-stream", headers={**headers, **_SSE_HEADERS})


async def _wait(gen: Generation) -> None:
    """A non-streamed answer takes as long as the stream would have."""
    if gen.total_duration_s > 0:
        try:
            await _sleep(gen.total_duration_s, gen.closing)
        except _Closing:
            pass


@dataclass
class RecordedRequest:
    """A request the server received (for tests: what did the client/SDK actually send?)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    received_at: float


@dataclass
class _State:
    latency: str = "none"
    seed: int = 0
    requests: deque[RecordedRequest] = field(default_factory=lambda: deque(maxlen=2000))
    flaky_counts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)

    def record(self, request: Request, body: Any) -> None:
        entry = RecordedRequest(request.method, request.url.path, dict(request.headers), body, time.time())
        with self.lock:
            self.requests.append(entry)

    def flaky_fail(self, key: str, times: int) -> bool:
        with self.lock:
            seen = self.flaky_counts.get(key, 0)
            self.flaky_counts[key] = seen + 1
            return seen < times

    def plan(self, *, model: str, prompt_tokens: int, last_user_text: str, ends_with_tool_result: bool,
             tools: list[_Tool], tools_given: bool, forced_tool: str | None, tool_choice_none: bool,
             limit: int | None, reasoning_tokens: int, thinking: bool, structured_schema: Any,
             json_mode: bool) -> Generation:
        markers = parse_markers(last_user_text)
        rng = _rng(self.seed, model, last_user_text)
        info = _model_info(model)
        realistic = self.latency == "realistic"

        cache_read = min(markers.cache_read, prompt_tokens)
        cache_write = min(markers.cache_write, prompt_tokens - cache_read)
        if markers.reasoning is not None and (reasoning_tokens or thinking or _is_reasoning_model(model)):
            reasoning_tokens = markers.reasoning

        # what the answer is
        refusal = markers.refuse
        finish = "refusal" if refusal else "stop"
        calls: list[ToolCall] = []
        pieces: list[str]
        bad_json = markers.tool == "bad-json"
        declined = refusal or markers.empty or markers.no_tool or tool_choice_none or ends_with_tool_result
        wants_tool = not declined and (markers.tool is not None or forced_tool is not None or tools_given)
        if refusal:
            pieces = _split(REFUSAL_TEXT)
        elif markers.empty:
            pieces = []
        elif wants_tool:
            pieces = []
            offered = {t.name: t for t in tools}
            for i in range(markers.n_tools):
                if markers.tool == "unknown":
                    tool = _Tool(UNKNOWN_TOOL, DEFAULT_TOOL["parameters"])
                elif markers.tool not in (None, "first", "bad-json") and markers.tool in offered:
                    tool = offered[markers.tool]
                elif markers.tool not in (None, "first", "bad-json", "unknown"):
                    tool = _Tool(markers.tool, DEFAULT_TOOL["parameters"])  # a name the request did not offer
                elif forced_tool and forced_tool in offered:
                    tool = offered[forced_tool]
                elif tools:
                    tool = tools[i % len(tools)]
                else:
                    tool = _Tool(DEFAULT_TOOL["name"], DEFAULT_TOOL["parameters"])
                arguments = _sample_json(tool.schema)
                if bad_json:
                    arguments = arguments[:-1] + ",}"  # a trailing comma: invalid, even to a partial parser
                calls.append(ToolCall(id="", name=tool.name, arguments=arguments))
            finish = "tool_calls"
        elif structured_schema is not None or json_mode:
            pieces = _split(_sample_json(structured_schema) if structured_schema is not None
                            else _compact({"result": " ".join(_pieces(rng, 6)).strip()}))
        else:
            n = markers.tokens
            if n is None:
                n = (int(min(600, max(20, 120 * math.exp(rng.gauss(0.0, 0.6))))) if realistic
                     else DEFAULT_OUTPUT_TOKENS)
            pieces = _pieces(rng, n)

        # limits, truncation, filtering
        def cut(budget: int) -> None:
            nonlocal pieces, calls
            keep: list[str] = []
            used = 0
            for p in pieces:
                if used >= budget:
                    break
                keep.append(p)
                used += count_tokens(p)
            pieces = keep
            left = budget - used
            kept_calls: list[ToolCall] = []
            for c in calls:
                if left <= 0:
                    break
                name_tokens = count_tokens(c.name)
                args_budget = max(0, left - name_tokens)
                if count_tokens(c.arguments) > args_budget:
                    c.arguments = c.arguments[:args_budget * CHARS_PER_TOKEN]
                kept_calls.append(c)
                left -= c.tokens
            calls = kept_calls

        planned = sum(count_tokens(p) for p in pieces) + sum(c.tokens for c in calls)
        if limit is not None and reasoning_tokens + planned > limit:
            finish = "length"
            if reasoning_tokens >= limit:
                reasoning_tokens, pieces, calls = limit, [], []
            else:
                cut(limit - reasoning_tokens)
        elif markers.truncate:
            finish = "length"
            cut(max(1, planned // 2))
        elif markers.content_filter and not refusal:
            finish = "content_filter"
            calls = []
            pieces = pieces[: len(pieces) // 2]

        thinking_pieces = []
        if thinking:
            thinking_pieces = _pieces(_rng(self.seed, "thinking", last_user_text), reasoning_tokens)

        # ids
        for c in calls:
            c.id = "call_" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
                                     for _ in range(24))

        # timing
        n_out = len(pieces) + sum(len(_split(c.arguments, 8)) + 1 for c in calls)
        ttft = 0.0
        delays = [0.0] * max(0, n_out - 1)
        if realistic:
            lat = _rng(self.seed, "latency", model, last_user_text)
            tps = max(5.0, (info.tps or 80.0) * math.exp(lat.gauss(0.0, 0.15)))
            ttft = info.ttft_ms / 1000 * math.exp(lat.gauss(0.0, 0.35))
            if lat.random() < 0.01:
                ttft *= lat.uniform(3.0, 8.0)
            ttft += reasoning_tokens / tps
            delays = [math.exp(lat.gauss(0.0, 0.3)) / tps for _ in delays]
        if markers.slow_first_token_ms is not None:
            ttft = markers.slow_first_token_ms / 1000
        if markers.token_delay_ms is not None:
            delays = [markers.token_delay_ms / 1000] * len(delays)

        return Generation(
            request_model=model, response_model=_response_model(model), prompt_tokens=prompt_tokens,
            cache_read=cache_read, cache_write=cache_write, pieces=pieces, refusal=refusal,
            reasoning_tokens=reasoning_tokens, thinking_pieces=thinking_pieces, tool_calls=calls, finish=finish,
            bad_json=bad_json, markers=markers, ttft_s=ttft, token_delays=delays, closing=self.closing,
        )


# --------------------------------------------------------------------------------------------------------------
# HTTP plumbing: auth, errors, SSE
# --------------------------------------------------------------------------------------------------------------

_OPENAI_ERRORS: dict[int, tuple[str, str | None, str]] = {
    # status -> (type, code, message)
    400: ("invalid_request_error", None, "Invalid request (planted by the mock)."),
    401: ("invalid_request_error", "invalid_api_key",
          "Incorrect API key provided. You can find your API key at "
          "https://platform.openai.com/account/api-keys."),
    403: ("invalid_request_error", "unsupported_country_region_territory",
          "Country, region, or territory not supported."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."),
    409: ("invalid_request_error", None, "Conflict."),
    422: ("invalid_request_error", None, "Unprocessable entity."),
    429: ("requests", "rate_limit_exceeded",
          "Rate limit reached for requests per min (RPM): Limit 500, Used 500, Requested 1. "
          "Please try again later."),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", "service_unavailable", "The engine is currently overloaded, please try again later."),
    504: ("server_error", None, "Gateway timeout."),
}
_ANTHROPIC_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request (planted by the mock)."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
    500: ("api_error", "Internal server error"),
    503: ("api_error", "Service unavailable"),
    529: ("overloaded_error", "Overloaded"),
}


def _request_id() -> str:
    return "req_" + uuid.uuid4().hex


def openai_error(status: int, message: str | None = None, *, param: str | None = None,
                 retry_after_s: float = DEFAULT_RETRY_AFTER_S) -> JSONResponse:
    kind, code, default = _OPENAI_ERRORS.get(status, ("server_error" if status >= 500 else "invalid_request_error",
                                                      None, f"Error {status} (planted by the mock)."))
    headers = {"x-request-id": _request_id()}
    if status == 429:
        headers.update({"retry-after": _retry_after_header(retry_after_s),
                        "retry-after-ms": str(int(retry_after_s * 1000)),
                        "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "0",
                        "x-ratelimit-reset-requests": f"{retry_after_s:g}s"})
    body = {"error": {"message": message or default, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


def anthropic_error(status: int, message: str | None = None, *,
                    retry_after_s: float = DEFAULT_RETRY_AFTER_S) -> JSONResponse:
    kind, default = _ANTHROPIC_ERRORS.get(status, ("api_error" if status >= 500 else "invalid_request_error",
                                                   f"Error {status} (planted by the mock)."))
    rid = "req_011" + uuid.uuid4().hex[:21]
    headers = {"request-id": rid}
    if status == 429:
        headers.update({"retry-after": _retry_after_header(retry_after_s),
                        "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0"})
    if status in (429, 500, 503, 529):
        headers["x-should-retry"] = "true"
    body = {"type": "error", "error": {"type": kind, "message": message or default}, "request_id": rid}
    return JSONResponse(body, status_code=status, headers=headers)


def _retry_after_header(seconds: float) -> str:
    return str(int(seconds)) if seconds == int(seconds) else f"{seconds:g}"


def _api_key(request: Request) -> str:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer ") and auth[7:].strip():
        return auth[7:].strip()
    return request.headers.get("x-api-key", "").strip()


def _auth_error(request: Request, anthropic: bool) -> JSONResponse | None:
    key = _api_key(request)
    if key and not key.startswith("invalid"):
        return None
    if anthropic:
        return anthropic_error(401, "invalid x-api-key" if key else "x-api-key header is required")
    if key:
        return openai_error(401)
    return openai_error(401, "You didn't provide an API key. You need to provide your API key in an Authorization "
                             "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")


def _sse_data(obj: Any) -> str:
    return f"data: {_compact(obj)}\n\n"


def _sse_event(event: str, obj: Any) -> str:
    return f"event: {event}\ndata: {_compact(obj)}\n\n"


_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


async def _read_json(request: Request, state: _State, anthropic: bool) -> tuple[dict[str, Any] | None,
                                                                               Response | None]:
    raw = await request.body()
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    state.record(request, body)
    if (err := _auth_error(request, anthropic)) is not None:
        return None, err
    if not isinstance(body, dict):
        msg = "We could not parse the JSON body of your request."
        return None, anthropic_error(400, msg) if anthropic else openai_error(400, msg)
    return body, None


def _planted_error(gen_markers: Markers, state: _State, key: str, anthropic: bool) -> Response | None:
    status = gen_markers.error
    if status is None and gen_markers.flaky is not None:
        flaky_status, times = gen_markers.flaky
        if state.flaky_fail(key, times):
            status = flaky_status
    if status is None:
        return None
    if anthropic:
        return anthropic_error(status, retry_after_s=gen_markers.retry_after_s)
    return openai_error(status, retry_after_s=gen_markers.retry_after_s)


def _limit(body: dict[str, Any], *names: str) -> int | None:
    for name in names:
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _user_text(messages: list[Any], user_roles: tuple[str, ...] = ("user",)) -> str:
    """Text of the last user message (markers live there); tool results are not user text."""
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") in user_roles and m.get("type") in (None, "message"):
            content = m.get("content")
            if isinstance(content, list):
                content = [p for p in content if not (isinstance(p, dict) and p.get("type") == "tool_result")]
            return _content_text(content)
    return ""


# --------------------------------------------------------------------------------------------------------------
# OpenAI Chat Completions
# --------------------------------------------------------------------------------------------------------------


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


def _chat_tools(body: dict[str, Any]) -> tuple[list[_Tool], str | None, bool]:
    tools: list[_Tool] = []
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            fn = t.get("function") if isinstance(t.get("function"), dict) else t
            if fn.get("name"):
                tools.append(_Tool(str(fn["name"]), fn.get("parameters") or {"type": "object", "properties": {}}))
    choice = body.get("tool_choice")
    forced = None
    if isinstance(choice, dict):
        forced = (choice.get("function") or {}).get("name") or choice.get("name")
    elif choice == "required" and tools:
        forced = tools[0].name
    return tools, forced, choice == "none"


def _structured(fmt: Any) -> tuple[Any, bool]:
    """(json schema or None, json_object mode) from a chat ``response_format`` or a Responses ``text.format``."""
    if not isinstance(fmt, dict):
        return None, False
    if fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") if isinstance(fmt.get("json_schema"), dict) else fmt
        return spec.get("schema") or {"type": "object", "properties": {}}, False
    return None, fmt.get("type") == "json_object"


def _reasoning_default(model: str, effort: Any) -> int:
    if not _is_reasoning_model(model):
        return 0
    return REASONING_BY_EFFORT.get(str(effort or "medium"), REASONING_BY_EFFORT["medium"])


async def chat_completions(request: Request) -> Response:
    state: _State = request.app.state.mock
    body, err = await _read_json(request, state, anthropic=False)
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
    last_user = _user_text(messages)
    last = messages[-1] if isinstance(messages[-1], dict) else {}
    tools, forced, none_choice = _chat_tools(body)
    schema, json_mode = _structured(body.get("response_format"))
    gen = state.plan(
        model=model, prompt_tokens=estimate_prompt_tokens(messages, tools=body.get("tools") or None),
        last_user_text=last_user, ends_with_tool_result=last.get("role") in ("tool", "function"), tools=tools,
        tools_given=bool(tools), forced_tool=forced, tool_choice_none=none_choice,
        limit=_limit(body, "max_completion_tokens", "max_tokens"),
        reasoning_tokens=_reasoning_default(model, body.get("reasoning_effort")), thinking=False,
        structured_schema=schema, json_mode=json_mode)
    if (planted := _planted_error(gen.markers, state, f"chat|{model}|{last_user}", anthropic=False)) is not None:
        return planted
    cid = _ident("chatcmpl-", 29)
    created = int(time.time())
    headers = {"x-request-id": _request_id(), "openai-processing-ms": str(int(gen.total_duration_s * 1000)),
               "openai-version": "2020-10-01"}
    if stream:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return _sse_response(_chat_stream(gen, cid, created, include_usage), headers)
    await _wait(gen)
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
        return _sse_data(data)

    pacer = _Pacer(gen)
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
            yield _sse_data({"error": {"message": "The server had an error while processing your request.",
                                       "type": "server_error", "param": None, "code": None}})
            return
        yield chunk({key: piece})
        sent += 1
    for index, call in enumerate(gen.tool_calls):
        await pacer.token()
        yield chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                     "function": {"name": call.name, "arguments": ""}}]})
        for piece in _split(call.arguments, 8):
            await pacer.token()
            if gen.markers.stream_error and sent >= STREAM_ERROR_AFTER_TOKENS:
                yield _sse_data({"error": {"message": "The server had an error while processing your request.",
                                           "type": "server_error", "param": None, "code": None}})
                return
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            sent += 1
    if gen.markers.stream_error:  # fewer tokens than the error threshold: fail before finishing
        yield _sse_data({"error": {"message": "The server had an error while processing your request.",
                                   "type": "server_error", "param": None, "code": None}})
        return
    yield chunk({}, {"refusal": "stop"}.get(gen.finish, gen.finish))
    if include_usage and not gen.markers.no_usage:
        yield _sse_data({**base, "choices": [], "usage": _openai_usage(gen)})
    yield "data: [DONE]\n\n"


# --------------------------------------------------------------------------------------------------------------
# OpenAI Responses
# --------------------------------------------------------------------------------------------------------------


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
        self.reasoning = _is_reasoning_model(gen.request_model)

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
            return _sse_event(kind, data)

        pacer = _Pacer(gen)
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
            for piece in _split(call.arguments, 8):
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
    state: _State = request.app.state.mock
    body, err = await _read_json(request, state, anthropic=False)
    if err is not None:
        return err
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return openai_error(400, "Missing required parameter: 'model'.", param="model")
    items = _responses_input(body)
    if not items:
        return openai_error(400, "Missing required parameter: 'input'.", param="input")
    tools, forced, none_choice = _chat_tools(body)
    schema, json_mode = _structured((body.get("text") or {}).get("format") if isinstance(body.get("text"), dict)
                                    else None)
    last_user = _user_text(items)
    gen = state.plan(
        model=model, prompt_tokens=estimate_prompt_tokens(items, system=body.get("instructions"),
                                                          tools=body.get("tools") or None),
        last_user_text=last_user, ends_with_tool_result=items[-1].get("type") == "function_call_output",
        tools=tools, tools_given=bool(tools), forced_tool=forced, tool_choice_none=none_choice,
        limit=_limit(body, "max_output_tokens"),
        reasoning_tokens=_reasoning_default(model, (body.get("reasoning") or {}).get("effort")), thinking=False,
        structured_schema=schema, json_mode=json_mode)
    if (planted := _planted_error(gen.markers, state, f"resp|{model}|{last_user}", anthropic=False)) is not None:
        return planted
    builder = _ResponseBuilder(gen, body)
    headers = {"x-request-id": _request_id(), "openai-processing-ms": str(int(gen.total_duration_s * 1000))}
    if body.get("stream"):
        return _sse_response(builder.events(), headers)
    await _wait(gen)
    return JSONResponse(builder.response(builder.status, final=True), headers=headers)


# --------------------------------------------------------------------------------------------------------------
# OpenAI embeddings and models
# --------------------------------------------------------------------------------------------------------------


def _vector(text: str, dims: int) -> list[float]:
    rng = random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))
    vec = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


async def embeddings(request: Request) -> Response:
    state: _State = request.app.state.mock
    body, err = await _read_json(request, state, anthropic=False)
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
    if (planted := _planted_error(markers, state, f"emb|{model}|{inputs[-1]}", anthropic=False)) is not None:
        return planted
    dims = body.get("dimensions") if isinstance(body.get("dimensions"), int) else _EMBEDDING_DIMS.get(model, 1536)
    if state.latency == "realistic":
        lat = _rng(state.seed, "latency", model, inputs[-1])
        try:
            await _sleep(_model_info(model).ttft_ms / 1000 * math.exp(lat.gauss(0.0, 0.4)), state.closing)
        except _Closing:
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
                        headers={"x-request-id": _request_id()})


async def list_models(request: Request) -> Response:
    state: _State = request.app.state.mock
    anthropic = "anthropic-version" in request.headers
    state.record(request, None)
    if (err := _auth_error(request, anthropic)) is not None:
        return err
    if anthropic:
        data = [{"type": "model", "id": m.snapshot or m.prefix, "display_name": m.prefix,
                 "created_at": "2025-01-01T00:00:00Z"} for m in _MODELS if m.provider == "anthropic"]
        return JSONResponse({"data": data, "has_more": False, "first_id": data[0]["id"],
                             "last_id": data[-1]["id"]})
    data = []
    for m in _MODELS:
        if m.provider == "openai":
            data.append({"id": m.prefix, "object": "model", "created": 1_700_000_000, "owned_by": "system"})
            if m.snapshot:
                data.append({"id": m.snapshot, "object": "model", "created": 1_700_000_000, "owned_by": "system"})
    return JSONResponse({"object": "list", "data": data})


# --------------------------------------------------------------------------------------------------------------
# Anthropic Messages
# --------------------------------------------------------------------------------------------------------------

_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
                   "content_filter": "refusal", "refusal": "refusal"}


def _anthropic_tools(body: dict[str, Any]) -> tuple[list[_Tool], str | None, bool]:
    tools = [_Tool(str(t["name"]), t.get("input_schema") or {"type": "object", "properties": {}})
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
    state: _State = request.app.state.mock
    body, err = await _read_json(request, state, anthropic=True)
    if err is not None:
        return err
    model = body.get("model")
    msgs = body.get("messages")
    if not isinstance(model, str) or not model:
        return anthropic_error(400, "model: Field required")
    if not isinstance(msgs, list) or not msgs:
        return anthropic_error(400, "messages: at least one message is required")
    max_tokens = _limit(body, "max_tokens")
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
    last_user = _user_text(msgs)
    thinking_tokens = DEFAULT_THINKING_TOKENS if thinking else 0
    if isinstance(budget, int):
        thinking_tokens = min(thinking_tokens, budget)
    schema, json_mode = _structured((body.get("output_config") or {}).get("format")
                                    if isinstance(body.get("output_config"), dict) else body.get("output_format"))
    gen = state.plan(
        model=model, prompt_tokens=estimate_prompt_tokens(msgs, system=body.get("system"),
                                                          tools=body.get("tools") or None),
        last_user_text=last_user, ends_with_tool_result=ends_with_tool_result, tools=tools,
        tools_given=bool(tools), forced_tool=forced, tool_choice_none=none_choice, limit=max_tokens,
        reasoning_tokens=thinking_tokens, thinking=thinking, structured_schema=schema, json_mode=json_mode)
    if (planted := _planted_error(gen.markers, state, f"msg|{model}|{last_user}", anthropic=True)) is not None:
        return planted
    mid = "msg_01" + uuid.uuid4().hex[:22]
    headers = {"request-id": "req_011" + uuid.uuid4().hex[:21]}
    if body.get("stream"):
        return _sse_response(_anthropic_stream(gen, mid), headers)
    await _wait(gen)
    return JSONResponse({
        "id": mid, "type": "message", "role": "assistant", "model": gen.response_model,
        "content": _anthropic_content(gen), "stop_reason": _ANTHROPIC_STOP[gen.finish], "stop_sequence": None,
        "stop_details": _refusal_details(gen), "usage": _anthropic_usage(gen),
    }, headers=headers)


async def _anthropic_stream(gen: Generation, mid: str) -> AsyncIterator[str]:
    start = {"id": mid, "type": "message", "role": "assistant", "model": gen.response_model, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": _anthropic_usage(gen, start=True)}
    yield _sse_event("message_start", {"type": "message_start", "message": start})
    yield _sse_event("ping", {"type": "ping"})
    pacer = _Pacer(gen)
    await pacer.first()
    index = 0
    sent = 0
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    def block(kind: str, **fields: Any) -> str:
        return _sse_event(kind, {"type": kind, "index": index, **fields})

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
                yield _sse_event("error", overloaded)
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
        for piece in _split(call.arguments, 8):
            await pacer.token()
            if gen.markers.stream_error and sent >= STREAM_ERROR_AFTER_TOKENS:
                yield _sse_event("error", overloaded)
                return
            yield block("content_block_delta", delta={"type": "input_json_delta", "partial_json": piece})
            sent += 1
        yield block("content_block_stop")
        index += 1
    if gen.markers.stream_error:
        yield _sse_event("error", overloaded)
        return
    if gen.markers.no_usage:
        return  # the stream ends without message_delta / message_stop: final usage never arrives
    usage = _anthropic_usage(gen)
    usage.pop("cache_creation")
    usage.pop("service_tier")
    yield _sse_event("message_delta", {"type": "message_delta",
                                       "delta": {"stop_reason": _ANTHROPIC_STOP[gen.finish], "stop_sequence": None,
                                                 "stop_details": _refusal_details(gen)},
                                       "usage": usage})
    yield _sse_event("message_stop", {"type": "message_stop"})


async def count_message_tokens(request: Request) -> Response:
    state: _State = request.app.state.mock
    body, err = await _read_json(request, state, anthropic=True)
    if err is not None:
        return err
    msgs = body.get("messages")
    if not isinstance(msgs, list):
        return anthropic_error(400, "messages: Field required")
    return JSONResponse({"input_tokens": estimate_prompt_tokens(msgs, system=body.get("system"),
                                                                tools=body.get("tools") or None)})


# --------------------------------------------------------------------------------------------------------------
# The app, the test helper, the CLI
# --------------------------------------------------------------------------------------------------------------


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if request.url.path.startswith("/v1/messages") or "anthropic-version" in request.headers:
        message = f"{request.method} {request.url.path}: not found" if status == 404 else None
        return anthropic_error(status, message)
    return openai_error(status, f"Invalid URL ({request.method} {request.url.path})" if status in (404, 405)
                        else None)


def create_app(*, latency: str = "none", seed: int = 0) -> Starlette:
    """The ASGI app. ``latency``: ``none`` (only markers sleep) or ``realistic``; ``seed``: text and timing."""
    if latency not in ("none", "realistic"):
        raise ValueError(f"latency must be 'none' or 'realistic', not {latency!r}")
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/v1/embeddings", embeddings, methods=["POST"]),
            Route("/v1/models", list_models, methods=["GET"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_message_tokens, methods=["POST"]),
        ],
        exception_handlers={404: _http_error, 405: _http_error},
    )
    app.state.mock = _State(latency=latency, seed=seed)
    return app


class MockLLMServer:
    """The mock on 127.0.0.1 and a free port, served by uvicorn in a background thread.

    ``base_url`` (``http://127.0.0.1:PORT``), ``openai_base_url`` (``.../v1``, for ``openai.OpenAI``),
    ``anthropic_base_url`` (= ``base_url``, for ``anthropic.Anthropic``); ``requests`` (what was received, newest
    last), ``reset()`` (forget requests and flaky counters), ``stop()``; a context manager (start/stop).
    """

    def __init__(self, *, latency: str = "none", seed: int = 0, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = create_app(latency=latency, seed=seed)
        self.host = host
        self._port = port
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self._port}"

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    @property
    def requests(self) -> list[RecordedRequest]:
        state: _State = self.app.state.mock
        with state.lock:
            return list(state.requests)

    def reset(self) -> None:
        state: _State = self.app.state.mock
        with state.lock:
            state.requests.clear()
            state.flaky_counts.clear()

    def start(self, timeout: float = 10.0) -> MockLLMServer:
        import uvicorn

        if self._thread is not None:
            return self
        self.app.state.mock.closing.clear()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self._port))
        self._port = sock.getsockname()[1]
        # keep-alive longer than httpx's pool expiry (5 s, as uvicorn's default): otherwise a client can reuse an
        # idle connection just as the server closes it, an APIConnectionError that no real provider would cause
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off", ws="none",
                                timeout_graceful_shutdown=2, timeout_keep_alive=30)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True,
                                        name=f"mock-llm-{self._port}")
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                sock.close()
                raise RuntimeError("mock LLM server did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._thread is None:
            return
        self.app.state.mock.closing.set()  # sleeping responses end now instead of holding up the shutdown
        self._server.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout)
        self._thread = None

    def __enter__(self) -> MockLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m examples.mock_llm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", choices=("realistic", "none"), default="none")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    base = f"http://{args.host}:{args.port}"
    print(f"mock LLM: OpenAI base_url {base}/v1, Anthropic base_url {base} "
          f"(latency={args.latency}, seed={args.seed})", flush=True)
    uvicorn.run(create_app(latency=args.latency, seed=args.seed), host=args.host, port=args.port,
                log_level=args.log_level, ws="none", lifespan="off")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
