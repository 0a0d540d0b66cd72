"""One row from the spans of one provider request. Pure functions.

The kept span gives the row its identity (ids, times, span name, service); every other fact is the union of what
the spans said: the first non-empty label in the order kept, then the others, except the facts of the response
(its id, model, finish reason, usage), which a provider client's own span (``PROVIDER_CLIENT_SCOPES``) gives
first, as the provider sent them (instrumentations map finish reasons to their own words, and miscount now and
then); token counts, tool calls and response size otherwise their maximum (a library that does not know a token
type reports none of it); flags (streamed, error, refusal, truncated, cache hit) set when any span sets them; ``usage_missing`` only
when no span reported usage. The cost is priced again from the merged usage. The other spans become span rows
(``spans``, shown in the trace view) marked ``inferwatch.merged_into``, and the kept row's attributes name them
in ``inferwatch.merged_span_ids``.
"""

from __future__ import annotations

from typing import Sequence

from ..conventions import PROVIDER_CLIENT_SCOPES
from ..normalize.batch import Pricer
from ..normalize.limits import MAX_ATTRIBUTES
from ..rows import LlmCallRow, PromptLogRow, SpanRow
from .held import SCOPE_KEY

MERGED_INTO = "inferwatch.merged_into"
MERGED_SPAN_IDS = "inferwatch.merged_span_ids"
_LABELS = ("request_model", "provider", "feature", "prompt_template", "prompt_version", "experiment", "variant",
           "user_hash")
_RESPONSE_LABELS = ("response_id", "response_model", "finish_reason")
_TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
           "cache_write_1h_tokens")
_MAXIMA = ("tool_calls", "tool_call_failures", "response_chars")
_ANY = ("streamed", "refusal", "truncated", "cache_hit")


def _first(values) -> object:
    return next((value for value in values if value), None)


def kept_first(rows: Sequence[LlmCallRow], with_content: set[str]) -> list[LlmCallRow]:
    """``rows`` with the one that keeps its identity first: the outermost span (whose parent is not in the
    group), then one with content, then the earliest start."""
    ids = {row.span_id for row in rows}
    return sorted(rows, key=lambda row: (row.parent_span_id in ids, row.span_id not in with_content,
                                         row.start_time, row.span_id))


def merged_row(rows: Sequence[LlmCallRow], price: Pricer | None) -> LlmCallRow:
    """The union of ``rows`` (the kept one first) as one row, priced with ``price``."""
    kept = rows[0]
    if len(rows) == 1:
        return kept
    changes: dict[str, object] = {}
    from_client = [row for row in rows if row.attributes.get(SCOPE_KEY) in PROVIDER_CLIENT_SCOPES]
    response_first = from_client + [row for row in rows if row not in from_client]
    for name in _LABELS:
        changes[name] = _first(getattr(row, name) for row in rows) or ""
    for name in _RESPONSE_LABELS:
        changes[name] = _first(getattr(row, name) for row in response_first) or ""
    usage = next((row for row in from_client if not row.usage_missing), None)
    for name in _TOKENS:
        changes[name] = getattr(usage, name) if usage is not None else max(getattr(row, name) for row in rows)
    for name in _MAXIMA:
        changes[name] = max(getattr(row, name) for row in rows)
    for name in _ANY:
        changes[name] = any(getattr(row, name) for row in rows)
    changes["ttft_ms"] = _first(row.ttft_ms for row in rows) or 0
    changes["decode_tps"] = _first(row.decode_tps for row in rows) or 0.0
    failed = [row for row in rows if row.status == "error"]
    changes["status"] = "error" if failed else kept.status
    changes["error_type"] = _first(row.error_type for row in failed) or ""
    changes["usage_missing"] = all(row.usage_missing for row in rows)
    output = changes["output_tokens"]
    changes["empty_response"] = any(row.empty_response and row.output_tokens == output for row in rows)
    changes["model"] = changes["request_model"] or changes["response_model"]
    attributes: dict[str, str] = {}
    for row in reversed(rows):
        attributes.update(row.attributes)
    if len(attributes) >= MAX_ATTRIBUTES:
        attributes = dict(kept.attributes)
    attributes[MERGED_SPAN_IDS] = ",".join(row.span_id for row in rows[1:])
    changes["attributes"] = attributes
    merged = kept._replace(**changes)
    if price is None:
        return merged
    cost, version, parts, avoided = price(
        merged.model, merged.provider, merged.input_tokens, merged.output_tokens, merged.cache_read_tokens,
        merged.cache_write_tokens, merged.cache_write_1h_tokens, merged.reasoning_tokens, merged.usage_missing,
        merged.cache_hit,
    )  # fmt: skip
    (cost_input, cost_cache_read, cost_cache_write, cost_output, cost_reasoning, savings, unpriced) = parts
    return merged._replace(
        cost_usd=cost, price_version=version, cost_input_usd=cost_input, cost_cache_read_usd=cost_cache_read,
        cost_cache_write_usd=cost_cache_write, cost_output_usd=cost_output, cost_reasoning_usd=cost_reasoning,
        cache_savings_usd=savings, unpriced=unpriced, cost_avoided_usd=avoided,
    )  # fmt: skip


def absorbed_span(row: LlmCallRow, kept_span_id: str) -> SpanRow:
    """The span row of a span whose call is counted in ``kept_span_id``'s row (kept for the trace view)."""
    attributes = dict(row.attributes)
    attributes[MERGED_INTO] = kept_span_id
    return SpanRow(
        row.project_id, row.start_time, row.end_time, row.trace_id, row.span_id, row.parent_span_id,
        row.service_name, row.span_name, "client", row.operation, "error" if row.status == "error" else "unset",
        "", (row.end_time - row.start_time) / 1000.0, attributes,
    )  # fmt: skip


def moved_logs(kept: LlmCallRow, logs: dict[str, tuple[PromptLogRow, ...]]) -> list[PromptLogRow]:
    """The group's prompt logs (span id -> logs). When the kept span has none, the first other span's logs move
    to it, so the call's content is found from its row."""
    out: list[PromptLogRow] = []
    target = None if logs.get(kept.span_id) else kept.span_id
    for span_id, span_logs in logs.items():
        if target is not None and span_id != target and span_logs:
            out.extend(log._replace(span_id=target, model=kept.model or log.model) for log in span_logs)
            target = None
        else:
            out.extend(span_logs)
    return out
