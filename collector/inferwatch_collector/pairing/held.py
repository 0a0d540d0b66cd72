"""Which LLM rows wait in the pairing window, and their durable form (a :class:`..rows.HeldCallRow`).

A row is held when it may have a twin: a span from an instrumentation scope other than ours. Our SDK's spans
(scope ``inferwatch``, and ``inferwatch-*`` generators shaped like them) describe each request once, and a span
without a scope name comes from a hand-written exporter, not from a library that wraps another; both are written
at once. A held row travels with the prompt logs of its span, so that a merge can move them to the kept row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence

from ..rows import HeldCallRow, LlmCallRow, PromptLogRow

SCOPE_KEY = "otel.scope.name"
OUR_SCOPE = "inferwatch"


@dataclass(frozen=True, slots=True)
class HeldCall:
    """One LLM call's row waiting for a possible twin, with its span's prompt logs."""

    row: LlmCallRow
    logs: tuple[PromptLogRow, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return self.row.project_id, self.row.span_id


def is_held(row: LlmCallRow) -> bool:
    """Whether ``row`` waits in the pairing window (see the module docstring)."""
    scope = row.attributes.get(SCOPE_KEY)
    return bool(scope) and scope != OUR_SCOPE and not scope.startswith(OUR_SCOPE + "-")


def split_held(llm_calls: Sequence[LlmCallRow], prompt_logs: Sequence[PromptLogRow]
               ) -> tuple[list[LlmCallRow], list[PromptLogRow], list[HeldCall]]:
    """(rows written at once, prompt logs written at once, held calls with their spans' prompt logs)."""
    held_rows = [row for row in llm_calls if is_held(row)]
    if not held_rows:
        return list(llm_calls), list(prompt_logs), []
    held_ids = {row.span_id for row in held_rows}
    logs_by_span: dict[str, list[PromptLogRow]] = {}
    direct_logs = []
    for log in prompt_logs:
        if log.span_id in held_ids:
            logs_by_span.setdefault(log.span_id, []).append(log)
        else:
            direct_logs.append(log)
    direct = [row for row in llm_calls if row.span_id not in held_ids]
    held = [HeldCall(row, tuple(logs_by_span.get(row.span_id, ()))) for row in held_rows]
    return direct, direct_logs, held


def to_held_row(call: HeldCall, received_ms: int) -> HeldCallRow:
    """The durable form of ``call`` (JSON keeps every column exactly: ints, floats, strings, bools, a map)."""
    payload = json.dumps({"row": list(call.row), "logs": [list(log) for log in call.logs]},
                         separators=(",", ":"), ensure_ascii=False)
    return HeldCallRow(call.row.project_id, received_ms, call.row.trace_id, call.row.span_id, payload)


def from_payload(payload: str) -> HeldCall:
    """Inverse of :func:`to_held_row`'s payload."""
    data = json.loads(payload)
    return HeldCall(LlmCallRow(*data["row"]), tuple(PromptLogRow(*log) for log in data["logs"]))
