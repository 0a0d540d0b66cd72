"""Traces: search calls (the sidebar's filters plus status, flag, minimum latency, user hash, trace id), open one
trace as a timeline of its spans (retrieval → inference → tools), and read its redacted prompt and completion
when the dashboard's key has ``prompts:read``.

The search reads the raw calls for the range, newest first and capped, so it is a drill-down, not a report; a
trace id looks across the whole retention through the bloom filter on ``trace_id``.
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from inferwatch_dashboard import charts, context, data, fmt, ui
from inferwatch_dashboard.data import Scope

FLAGS = {"(any)": None, "refusal": "refusal", "empty response": "empty", "truncated": "truncated",
         "tool-call failure": "tool_failure", "usage missing": "usage_missing", "unpriced": "unpriced"}
STATUSES = {"(any)": None, "ok": "ok", "error": "error"}
RESULT_COLUMNS = ["start_time", "model", "feature", "status", "latency_ms", "ttft_ms", "output_tokens", "cost_usd",
                  "error_type", "finish_reason", "trace_id", "user_hash"]
SPAN_COLUMNS = ["name", "type", "operation", "model", "status", "latency_ms", "ttft_ms", "input_tokens",
                "output_tokens", "cost_usd", "finish_reason", "error_type", "span_id", "parent_span_id"]
_HEX = re.compile(r"[0-9a-fA-F]*")


def search(scope: Scope) -> tuple[pd.DataFrame, str]:
    """The search form and its results; returns them and the trace id typed in (if any)."""
    cols = st.columns([1, 1, 1, 2, 2])
    status = cols[0].selectbox("Status", list(STATUSES), key="status", bind="query-params")
    flag = cols[1].selectbox("Flag", list(FLAGS), key="flag", bind="query-params")
    min_latency = cols[2].number_input("Min latency (ms)", min_value=0, value=0, step=100, key="min_latency",
                                       bind="query-params")
    user = cols[3].text_input("User hash", key="user", bind="query-params").strip().lower()
    trace_id = cols[4].text_input("Trace id", key="trace", bind="query-params").strip().lower()
    if not _HEX.fullmatch(user) or not _HEX.fullmatch(trace_id) or (trace_id and len(trace_id) != 32):
        st.warning("A user hash is hexadecimal, and a trace id is 32 hexadecimal characters.")
        return pd.DataFrame(), ""
    found, more = data.calls(scope, status=STATUSES[status], flag=FLAGS[flag],
                             min_latency_ms=int(min_latency) or None, user_hash=user or None,
                             trace_id=trace_id or None)
    if found.empty:
        st.info("No calls match. Widen the time range or clear a filter." if scope.filters or status != "(any)"
                or flag != "(any)" or min_latency or user or trace_id else
                ui.no_traffic_text(scope), icon=":material/search_off:")
        return found, trace_id
    st.markdown(f"**Matching calls: {len(found)}{'+' if more else ''}** (newest first)")
    st.dataframe(found[[c for c in RESULT_COLUMNS if c in found]], hide_index=True, column_config={
        "cost_usd": st.column_config.NumberColumn("cost (USD)", format="$%.5f")})
    return found, trace_id


def timeline(scope: Scope, trace_id: str) -> None:
    spans = data.trace(scope, trace_id)
    llm = spans[spans["type"] == "llm"]
    cols = st.columns(4)
    cols[0].metric("Spans", len(spans))
    cols[1].metric("LLM calls", len(llm))
    cols[2].metric("Duration", fmt.ms((spans["end_us"].max() - spans["start_us"].min()) / 1000))
    cols[3].metric("Cost", fmt.money(llm["cost_usd"].sum() if "cost_usd" in llm else None))
    ui.chart(charts.trace_timeline(spans, title=f"Trace {trace_id}"), key="trace-timeline")
    ui.table(spans, SPAN_COLUMNS)


def content(scope: Scope, trace_id: str) -> None:
    if not scope.can_read_prompts:
        st.info("Prompt and completion text need a key with the `prompts:read` scope; this dashboard's key has "
                f"{', '.join(sorted(scope.scopes)) or 'no scopes'}.", icon=":material/lock:")
        return
    texts = data.prompts(scope, trace_id)
    if not texts:
        st.caption("No prompt text stored for this trace (content capture is off by default, and text is kept "
                   "for the prompt retention period only).")
    for item in texts:
        st.markdown(f"**{item['model']}** · template `{item['prompt_template'] or '-'}` · redaction "
                    f"`{item['redaction']}` · {item['start_time']}")
        left, right = st.columns(2)
        left.text_area("Prompt (redacted)", item["prompt"], disabled=True, key=f"prompt-{item['span_id']}")
        right.text_area("Completion (redacted)", item["completion"], disabled=True,
                        key=f"completion-{item['span_id']}")


def main() -> None:
    scope = context.current()
    ui.header("Traces", scope)
    found, typed = pd.DataFrame(), ""
    with ui.section("Call search"):
        found, typed = search(scope)
    if found.empty:
        return
    ids = list(dict.fromkeys(found["trace_id"]))
    labels = {row.trace_id: f"{row.start_time} · {row.model} · {fmt.ms(row.latency_ms)} · {row.status}"
              for row in found.drop_duplicates("trace_id").itertuples()}
    chosen = st.selectbox("Open trace", ids, index=ids.index(typed) if typed in ids else 0,
                          format_func=lambda t: f"{t} ({labels.get(t, '')})", key="open_trace")
    st.subheader("Trace timeline")
    with ui.section("Trace"):
        timeline(scope, chosen)
    st.subheader("Prompt and completion")
    with ui.section("Prompt text"):
        content(scope, chosen)


main()
