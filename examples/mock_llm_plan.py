"""One answer of the mock LLM, planned before a provider renders it: :class:`Generation`, :func:`plan_generation`.

The plan is provider-neutral (text pieces of one token each, tool calls, finish reason, token counts, timing);
the OpenAI and Anthropic handlers render it in their wire formats."""

from __future__ import annotations

import hashlib
import math
import random
import threading
from dataclasses import dataclass
from typing import Any

from .mock_llm_markers import DEFAULT_OUTPUT_TOKENS, Markers, parse_markers
from .mock_llm_models import is_reasoning_model, model_info, snapshot_for
from .mock_llm_tokens import CHARS_PER_TOKEN, compact_json, count_tokens

REFUSAL_TEXT = "I'm sorry, but I can't help with that request."
UNKNOWN_TOOL = "nonexistent_function"
DEFAULT_TOOL = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
}


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


def split_pieces(text: str, size: int = CHARS_PER_TOKEN) -> list[str]:
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
    return compact_json(_sample_schema(schema, defs))


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
class Tool:
    name: str
    schema: Any


def seeded_rng(seed: int, *parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(str(p) for p in (seed, *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def plan_generation(seed: int, latency: str, closing: threading.Event | None, *, model: str, prompt_tokens: int,
                    last_user_text: str, ends_with_tool_result: bool, tools: list[Tool], tools_given: bool,
                    forced_tool: str | None, tool_choice_none: bool, limit: int | None, reasoning_tokens: int,
                    thinking: bool, structured_schema: Any, json_mode: bool) -> Generation:
    """The answer to one request, before a provider renders it: text, tool calls, finish reason, token counts
    and timing, decided by the request, its markers, ``seed`` and ``latency`` (``none`` or ``realistic``)."""
    markers = parse_markers(last_user_text)
    rng = seeded_rng(seed, model, last_user_text)
    info = model_info(model)
    realistic = latency == "realistic"

    cache_read = min(markers.cache_read, prompt_tokens)
    cache_write = min(markers.cache_write, prompt_tokens - cache_read)
    if markers.reasoning is not None and (reasoning_tokens or thinking or is_reasoning_model(model)):
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
        pieces = split_pieces(REFUSAL_TEXT)
    elif markers.empty:
        pieces = []
    elif wants_tool:
        pieces = []
        offered = {t.name: t for t in tools}
        for i in range(markers.n_tools):
            if markers.tool == "unknown":
                tool = Tool(UNKNOWN_TOOL, DEFAULT_TOOL["parameters"])
            elif markers.tool not in (None, "first", "bad-json") and markers.tool in offered:
                tool = offered[markers.tool]
            elif markers.tool not in (None, "first", "bad-json", "unknown"):
                tool = Tool(markers.tool, DEFAULT_TOOL["parameters"])  # a name the request did not offer
            elif forced_tool and forced_tool in offered:
                tool = offered[forced_tool]
            elif tools:
                tool = tools[i % len(tools)]
            else:
                tool = Tool(DEFAULT_TOOL["name"], DEFAULT_TOOL["parameters"])
            arguments = _sample_json(tool.schema)
            if bad_json:
                arguments = arguments[:-1] + ",}"  # a trailing comma: invalid, even to a partial parser
            calls.append(ToolCall(id="", name=tool.name, arguments=arguments))
        finish = "tool_calls"
    elif structured_schema is not None or json_mode:
        pieces = split_pieces(_sample_json(structured_schema) if structured_schema is not None
                        else compact_json({"result": " ".join(_pieces(rng, 6)).strip()}))
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
        thinking_pieces = _pieces(seeded_rng(seed, "thinking", last_user_text), reasoning_tokens)

    # ids
    for c in calls:
        c.id = "call_" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
                                 for _ in range(24))

    # timing
    n_out = len(pieces) + sum(len(split_pieces(c.arguments, 8)) + 1 for c in calls)
    ttft = 0.0
    delays = [0.0] * max(0, n_out - 1)
    if realistic:
        lat = seeded_rng(seed, "latency", model, last_user_text)
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
        request_model=model, response_model=snapshot_for(model), prompt_tokens=prompt_tokens,
        cache_read=cache_read, cache_write=cache_write, pieces=pieces, refusal=refusal,
        reasoning_tokens=reasoning_tokens, thinking_pieces=thinking_pieces, tool_calls=calls, finish=finish,
        bad_json=bad_json, markers=markers, ttft_s=ttft, token_delays=delays, closing=closing,
    )
