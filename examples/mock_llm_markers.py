"""The ``[marker]`` tokens in a request's last user message that choose the mock LLM's behaviour.

The markers and their effects are listed in :mod:`examples.mock_llm`'s docstring."""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_OUTPUT_TOKENS = 24
DEFAULT_RETRY_AFTER_S = 0.2


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
    """Read the ``[marker]`` / ``[marker:value]`` tokens documented in :mod:`examples.mock_llm`."""
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
