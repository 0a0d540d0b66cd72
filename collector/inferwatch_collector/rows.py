"""Typed rows and their column order, shared by the normaliser, the writer and the tests.

Each row type is a ``NamedTuple`` whose field order is the insert column order, so a batch of rows becomes
clickhouse-connect's column-oriented insert with one ``zip(*rows)`` and no per-row dict work. The migrations
(``migrations/0001_init.sql``, ``0002_cost.sql``) must declare every field here (a test checks it against
``DESCRIBE TABLE``).

Times are integer microseconds since the Unix epoch: clickhouse-connect writes ints to ``DateTime64(6)``
columns as raw ticks, which is exact and skips datetime conversion on the hot path.

Why two span tables: ``llm_calls`` holds one row per LLM call (typed InferenceMetrics; every rollup reads it,
so it must not contain retrieval or app spans, or calls would be over-counted); ``spans`` holds every other span
(retrieval, tools, app code) so a trace can still be shown whole.
"""

from __future__ import annotations

from typing import NamedTuple


class LlmCallRow(NamedTuple):
    """One LLM call (its InferenceMetrics), one typed column each."""

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
    cost_usd: float  # what the provider charges; 0 when unpriced, usage_missing or an app-side cache hit
    price_version: str  # the price table that priced it ('' when not priced)
    attributes: dict[str, str]
    # The columns of migrations/0002_cost.sql, after `attributes` in this order; defaulted so a row can be built
    # without them.
    cache_write_1h_tokens: int = 0  # the share of cache_write_tokens billed at the 1-hour rate
    cost_input_usd: float = 0.0  # uncached input
    cost_cache_read_usd: float = 0.0
    cost_cache_write_usd: float = 0.0  # 5-minute and 1-hour writes
    cost_output_usd: float = 0.0  # output minus reasoning
    cost_reasoning_usd: float = 0.0
    cache_savings_usd: float = 0.0  # cache reads at the uncached input rate minus what they cost
    unpriced: bool = False  # the model is in no price table: cost 0, counted, never a silent zero
    cache_hit: bool = False  # answered from the application's own cache: no provider call
    cost_avoided_usd: float = 0.0  # for a cache hit, what the served answer's usage would have cost


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


class HeldCallRow(NamedTuple):
    """An LLM call waiting in the pairing window (see :mod:`.pairing`): its row and prompt logs as JSON."""

    project_id: str
    received_at: int  # ms since epoch, UTC
    trace_id: str
    span_id: str
    payload: str


LLM_CALL_COLUMNS: tuple[str, ...] = LlmCallRow._fields
SPAN_COLUMNS: tuple[str, ...] = SpanRow._fields
PROMPT_LOG_COLUMNS: tuple[str, ...] = PromptLogRow._fields

# table name -> column names, in insert order
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "llm_calls": LLM_CALL_COLUMNS,
    "spans": SPAN_COLUMNS,
    "prompt_logs": PROMPT_LOG_COLUMNS,
    "llm_calls_held": HeldCallRow._fields,
}

# table -> ClickHouse type of each inserted column (checked against DESCRIBE TABLE by test_migrations)
COLUMN_TYPES: dict[str, dict[str, str]] = {
    "llm_calls": {
        "project_id": "LowCardinality(String)", "start_time": "DateTime64(6, 'UTC')",
        "end_time": "DateTime64(6, 'UTC')", "trace_id": "String", "span_id": "String", "parent_span_id": "String",
        "response_id": "String", "service_name": "LowCardinality(String)", "span_name": "String",
        "model": "LowCardinality(String)", "request_model": "LowCardinality(String)",
        "response_model": "LowCardinality(String)", "provider": "LowCardinality(String)",
        "operation": "LowCardinality(String)", "input_tokens": "UInt32", "output_tokens": "UInt32",
        "cache_read_tokens": "UInt32", "cache_write_tokens": "UInt32", "reasoning_tokens": "UInt32",
        "ttft_ms": "UInt32", "latency_ms": "UInt32", "decode_tps": "Float32",
        "finish_reason": "LowCardinality(String)", "status": "LowCardinality(String)",
        "error_type": "LowCardinality(String)", "streamed": "Bool", "usage_missing": "Bool", "refusal": "Bool",
        "empty_response": "Bool", "truncated": "Bool", "tool_calls": "UInt16", "tool_call_failures": "UInt16",
        "response_chars": "UInt32", "feature": "LowCardinality(String)",
        "prompt_template": "LowCardinality(String)", "prompt_version": "LowCardinality(String)",
        "experiment": "LowCardinality(String)", "variant": "LowCardinality(String)", "user_hash": "String",
        "cost_usd": "Float64", "price_version": "LowCardinality(String)",
        "attributes": "Map(LowCardinality(String), String)", "cache_write_1h_tokens": "UInt32",
        "cost_input_usd": "Float64", "cost_cache_read_usd": "Float64", "cost_cache_write_usd": "Float64",
        "cost_output_usd": "Float64", "cost_reasoning_usd": "Float64", "cache_savings_usd": "Float64",
        "unpriced": "Bool", "cache_hit": "Bool", "cost_avoided_usd": "Float64",
    },
    "spans": {
        "project_id": "LowCardinality(String)", "start_time": "DateTime64(6, 'UTC')",
        "end_time": "DateTime64(6, 'UTC')", "trace_id": "String", "span_id": "String", "parent_span_id": "String",
        "service_name": "LowCardinality(String)", "name": "String", "kind": "LowCardinality(String)",
        "operation": "LowCardinality(String)", "status": "LowCardinality(String)", "status_message": "String",
        "duration_ms": "Float64", "attributes": "Map(LowCardinality(String), String)",
    },
    "prompt_logs": {
        "project_id": "LowCardinality(String)", "start_time": "DateTime64(6, 'UTC')", "trace_id": "String",
        "span_id": "String", "model": "LowCardinality(String)", "prompt_template": "LowCardinality(String)",
        "prompt": "String", "completion": "String", "redaction": "LowCardinality(String)",
    },
    "llm_calls_held": {
        "project_id": "LowCardinality(String)", "received_at": "DateTime64(3, 'UTC')", "trace_id": "String",
        "span_id": "String", "payload": "String",
    },
}
