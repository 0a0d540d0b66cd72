"""The mock LLM's token counting: ``ceil(len(text) / 4)`` per text, and the prompt tokens of a request.

The rules are in :mod:`examples.mock_llm`'s docstring, so a test can compute every count it will see."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4


def count_tokens(text: str) -> int:
    """The mock's tokenizer: ``ceil(len(text) / 4)``."""
    return -(-len(text) // CHARS_PER_TOKEN)


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def content_text(content: Any) -> str:
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
            out.append(str(part.get("name", "")) + compact_json(part.get("input", {})))
        elif kind == "tool_result":
            out.append(content_text(part.get("content")))
    return "".join(out)


def _message_text(message: dict[str, Any]) -> str:
    """Text of one message or Responses input item, as counted for the prompt."""
    kind = message.get("type")
    if kind == "function_call":
        return str(message.get("name", "")) + str(message.get("arguments", ""))
    if kind == "function_call_output":
        out = message.get("output", "")
        return out if isinstance(out, str) else content_text(out)
    if kind == "reasoning":
        return content_text(message.get("summary"))
    text = content_text(message.get("content"))
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
        total += MESSAGE_OVERHEAD_TOKENS + count_tokens(content_text(system))
    if tools:
        total += count_tokens(compact_json(tools))
    return total
