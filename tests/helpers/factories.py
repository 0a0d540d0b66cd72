"""Row factories for tests that need stored calls without going through OTLP."""

from __future__ import annotations

import itertools
import time

from inferwatch_collector.rows import LlmCallRow, SpanRow

_ids = itertools.count(1)


def llm_call(project_id: str = "p1", **overrides) -> LlmCallRow:
    """A plausible LLM call; every field can be overridden."""
    n = next(_ids)
    start = overrides.pop("start_time", int(time.time() * 1_000_000) - 60_000_000)
    latency_ms = overrides.pop("latency_ms", 1200)
    fields = dict(
        project_id=project_id, start_time=start, end_time=start + latency_ms * 1000,
        trace_id=f"{n:032x}", span_id=f"{n:016x}", parent_span_id="", response_id=f"chatcmpl-{n}",
        service_name="svc", span_name="chat gpt-4o-mini", model="gpt-4o-mini", request_model="gpt-4o-mini",
        response_model="gpt-4o-mini-2024-07-18", provider="openai", operation="chat", input_tokens=500,
        output_tokens=120, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0, ttft_ms=300,
        latency_ms=latency_ms, decode_tps=130.0, finish_reason="stop", status="ok", error_type="", streamed=True,
        usage_missing=False, refusal=False, empty_response=False, truncated=False, tool_calls=0,
        tool_call_failures=0, response_chars=480, feature="search", prompt_template="answer",
        prompt_version="3", experiment="", variant="", user_hash="ab" * 32, cost_usd=0.0, price_version="",
        attributes={},
    )
    fields.update(overrides)
    return LlmCallRow(**fields)


def span(project_id: str = "p1", **overrides) -> SpanRow:
    """A plausible non-LLM span (a retrieval step); every field can be overridden."""
    n = next(_ids)
    start = overrides.pop("start_time", int(time.time() * 1_000_000) - 60_000_000)
    fields = dict(
        project_id=project_id, start_time=start, end_time=start + 40_000, trace_id=f"{n:032x}", span_id=f"{n:016x}",
        parent_span_id="", service_name="svc", name="retrieve", kind="internal", operation="retrieval",
        status="ok", status_message="", duration_ms=40.0, attributes={},
    )
    fields.update(overrides)
    return SpanRow(**fields)
