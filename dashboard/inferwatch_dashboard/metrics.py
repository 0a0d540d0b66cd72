"""Figures derived from the API's counts: quality rates and the headline metrics with their deltas. Pure, so
the tests rebuild the expected numbers from the API's answers with the same code.

Each rate has its own denominator: per call for refusals, empty and truncated answers and errors; per tool call
for tool-call failures (a call may make several, or none); thumbs-down per thumbs vote. A rate with nothing to
divide by is None ("no data"), never 0.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from . import fmt

#: rate -> (label, numerator, denominator)
RATES: dict[str, tuple[str, str, str]] = {
    "error_rate": ("Error rate", "errors", "calls"),
    "refusal_rate": ("Refusal rate", "refusals", "calls"),
    "empty_rate": ("Empty responses", "empty_responses", "calls"),
    "truncated_rate": ("Truncated responses", "truncated", "calls"),
    "tool_failure_rate": ("Tool-call failures", "tool_call_failures", "tool_calls"),
}
LENGTH = ("mean_output_tokens", "Response length (output tokens)", "output_tokens", "calls")
THUMBS_DOWN = ("thumbs_down_rate", "Thumbs-down rate", "thumbs_down", "votes")


def of_row(row: dict[str, Any]) -> dict[str, float | None]:
    """Every rate (and the mean response length) of one totals row."""
    out = {name: fmt.ratio(row.get(num), row.get(den)) for name, (_, num, den) in RATES.items()}
    out[LENGTH[0]] = fmt.ratio(row.get(LENGTH[2]), row.get(LENGTH[3]))
    return out


def _divide(frame: pd.DataFrame, num: str, den: str) -> pd.Series:
    denominator = frame[den].where(frame[den] > 0)
    return (frame[num] / denominator).astype("float64")


def of_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with a column per rate (NaN where the bucket had nothing to divide by)."""
    out = frame.copy()
    for name, (_, num, den) in RATES.items():
        if num in out and den in out:
            out[name] = _divide(out, num, den)
    out[LENGTH[0]] = _divide(out, LENGTH[2], LENGTH[3])
    return out


def thumbs(frame: pd.DataFrame) -> pd.DataFrame:
    """Feedback rows with ``votes`` and the thumbs-down rate."""
    out = frame.copy()
    out["votes"] = out["thumbs_up"] + out["thumbs_down"]
    out[THUMBS_DOWN[0]] = _divide(out, THUMBS_DOWN[2], "votes")
    return out


def headline(now: dict[str, Any], before: dict[str, Any]) -> list[tuple[str, str, str | None, str]]:
    """(label, value, delta, delta colour) of the Overview's metrics, the deltas against ``before``."""
    def per_success(row: dict[str, Any]) -> float | None:
        return fmt.ratio(row.get("cost_usd"), (row.get("calls") or 0) - (row.get("errors") or 0))

    def rate(row: dict[str, Any], name: str) -> float | None:
        return fmt.ratio(row.get(name), row.get("calls"))

    def latency(name: str) -> tuple[str, str | None]:
        return fmt.ms(now.get(name)), fmt.change(now.get(name), before.get(name))

    def share(name: str) -> tuple[str, str | None]:
        return fmt.pct(rate(now, name)), fmt.points(rate(now, name), rate(before, name))

    return [
        ("Calls", fmt.count(now.get("calls")), fmt.change(now.get("calls"), before.get("calls")), "off"),
        ("Cost", fmt.money(now.get("cost_usd")), fmt.change(now.get("cost_usd"), before.get("cost_usd")),
         "inverse"),
        ("Cost / successful call", fmt.money(per_success(now)), fmt.change(per_success(now), per_success(before)),
         "inverse"),
        ("TTFT p50", *latency("ttft_ms_p50"), "inverse"),
        ("TTFT p95", *latency("ttft_ms_p95"), "inverse"),
        ("Error rate", *share("errors"), "inverse"),
        ("Refusal rate", *share("refusals"), "inverse"),
    ]
