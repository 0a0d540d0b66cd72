"""Typed rows and their column order, shared by the normaliser, the writer and the tests.

Each row type is a ``NamedTuple`` whose field order is the insert column order, so a batch of rows becomes
clickhouse-connect's column-oriented insert with one ``zip(*rows)`` and no per-row dict work. The migration in
``migrations/0001_init.sql`` must declare every field here (a test checks it against ``DESCRIBE TABLE``).

Times are integer microseconds since the Unix epoch: clickhouse-connect writes ints to ``DateTime64(6)``
columns as raw ticks, which is exact and skips datetime conversion on the hot path.

Why two span tables: ``llm_calls`` holds one row per LLM call (typed InferenceMetrics; every rollup reads it,
so it must not contain retrieval or app spans, or calls would be over-counted); ``spans`` holds every other span
(retrieval, tools, app code) so a trace can still be shown whole.
"""

from __future__ import annotations

from typing import NamedTuple


class LlmCallRow(NamedTuple):
    """One LLM call: the InferenceMetrics of DESIGN §5, one typed column each."""

    project_id: str
    start_time: int  # µs since epoch, UTC
    end_time: int
    trace_id: str  # 32 lower-case hex chars
    span_id: str  # 16 lower-case hex chars
    parent_span_id: str
    response_id: str  # provider's request/response id (gen_ai.response.id)
    service_name: str
    span_name: str
    model: str  # request model if known, else response model: the grouping key
    request_model: str
    response_model: str
    provider: str
    operation: str
    input_tokens: int  # OTel convention: includes cache reads and writes
    output_tokens: int  # includes reasoning tokens
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    ttft_ms: int  # 0 = unknown / not streamed
    latency_ms: int
    decode_tps: float  # (output_tokens - 1) / (end - first token); 0 when unknown
    finish_reason: str
    status: str  # ok | error
    error_type: str
    streamed: bool
    usage_missing: bool
    refusal: bool
    empty_response: bool
    truncated: bool
    tool_calls: int
    tool_call_failures: int
    response_chars: int
    feature: str
    prompt_template: str
    prompt_version: str
    experiment: str
    variant: str
    user_hash: str
    cost_usd: float
    price_version: str
    attributes: dict[str, str]


class SpanRow(NamedTuple):
    """Any non-LLM span (retrieval, tool, app code), kept so traces can be shown whole."""

    project_id: str
    start_time: int
    end_time: int
    trace_id: str
    span_id: str
    parent_span_id: str
    service_name: str
    name: str
    kind: str  # internal | server | client | producer | consumer | unspecified
    operation: str  # gen_ai.operation.name when present (retrieval, execute_tool, ...), else ''
    status: str  # ok | error | unset
    status_message: str
    duration_ms: float
    attributes: dict[str, str]


class PromptLogRow(NamedTuple):
    """Redacted prompt/completion text of one span; only written when content arrives and capture is on."""

    project_id: str
    start_time: int
    trace_id: str
    span_id: str
    model: str
    prompt_template: str
    prompt: str
    completion: str
    redaction: str  # redaction policy/version applied


LLM_CALL_COLUMNS: tuple[str, ...] = LlmCallRow._fields
SPAN_COLUMNS: tuple[str, ...] = SpanRow._fields
PROMPT_LOG_COLUMNS: tuple[str, ...] = PromptLogRow._fields

# table name -> column names, in insert order
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "llm_calls": LLM_CALL_COLUMNS,
    "spans": SPAN_COLUMNS,
    "prompt_logs": PROMPT_LOG_COLUMNS,
}
