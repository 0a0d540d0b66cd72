"""OpenAI Responses API: what a response and its stream events record.

Finish reason: ``stop`` or ``tool_calls`` when completed, the ``incomplete_details.reason`` (``max_output_tokens``,
``content_filter``) when incomplete, error status with the response's error code when ``failed``. Refusals: a
``refusal`` content part (its text counts as response length). Tool calls: function and custom tool calls (not
built-in tools such as web search); failures by the rules in ``_tool_calls``. A stream's final
``response.completed``/``incomplete``/``failed`` event is authoritative; its deltas serve streams that end early.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._openai_chat import _usage
from ._readers import get
from ._tool_calls import error_payload, tool_call_failed

if TYPE_CHECKING:
    from ..llm_call import ProviderCall as _Recorder  # openai._Recorder, a ProviderCall with api, capture, tools


_UNSET = object()


def _apply_response(rec: _Recorder, response: Any) -> None:
    """Record a Responses API ``Response`` (not streamed, or a stream's final event's)."""
    usage = getattr(response, "usage", None)
    if usage is not None:
        rec.call.usage(**_usage(usage))
    parts: list[str] | None = [] if rec.capture else None
    chars = calls = failures = 0
    refusal = False
    offered: Any = _UNSET
    for item in getattr(response, "output", None) or ():
        kind = getattr(item, "type", None)
        if kind == "message":
            for part in getattr(item, "content", None) or ():
                part_type = getattr(part, "type", None)
                text = getattr(part, "text", None) if part_type == "output_text" else (
                    getattr(part, "refusal", None) if part_type == "refusal" else None)
                if isinstance(text, str) and text:
                    chars += len(text)
                    refusal = refusal or part_type == "refusal"
                    if parts is not None:
                        parts.append(text)
        elif kind in ("function_call", "custom_tool_call"):
            calls += 1
            if offered is _UNSET:
                offered = rec.offered()
            failures += tool_call_failed(getattr(item, "name", None), getattr(item, "arguments", None), offered,
                                         check_json=kind == "function_call")
    status = getattr(response, "status", None)
    finish: Any = status
    if status == "completed":
        finish = "tool_calls" if calls else "stop"
    elif status == "incomplete":
        finish = getattr(getattr(response, "incomplete_details", None), "reason", None) or "incomplete"
    elif status == "failed":
        m = rec.call.metrics
        m.status = "error"
        m.error_type = str(getattr(getattr(response, "error", None), "code", None) or "response.failed")
    rec.respond(parts, chars, finish, getattr(response, "model", None), getattr(response, "id", None), refusal,
                calls, failures)


def _responses_tool_errors(items: Any) -> int:
    """Tool outputs reported as errors after the last assistant message or tool call (rule in ``_tool_calls``)."""
    if not items:
        return 0
    count = 0
    for item in reversed(items):
        kind = get(item, "type")
        if get(item, "role") == "assistant" or kind in ("function_call", "custom_tool_call"):
            break
        if kind in ("function_call_output", "custom_tool_call_output") and error_payload(
                get(item, "output")):
            count += 1
    return count


_FIRST_TOKEN_EVENTS = frozenset({
    "response.function_call_arguments.delta", "response.custom_tool_call_input.delta",
    "response.reasoning_summary_text.delta", "response.reasoning_text.delta",
})
_FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


class _ResponsesStream:
    """Accumulates Responses stream events; the final ``response.completed``/``incomplete``/``failed`` event's
    response is authoritative, the deltas serve streams that end early."""

    __slots__ = ("chars", "final", "items", "model", "parts", "rec", "refusal", "response_id", "seen_first")

    def __init__(self, rec: _Recorder) -> None:
        self.rec = rec
        self.seen_first = False
        self.chars = 0
        self.parts: list[str] | None = [] if rec.capture else None
        self.refusal = False
        self.final: Any = None
        self.items: list[Any] = []  # finished function/custom tool-call items
        self.model: Any = None
        self.response_id: Any = None

    def _first(self) -> None:
        if not self.seen_first:
            self.seen_first = True
            self.rec.first_token()

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            delta = event.delta
            if delta:
                self._first()
                self.chars += len(delta)
                if kind == "response.refusal.delta":
                    self.refusal = True
                if self.parts is not None:
                    self.parts.append(delta)
        elif kind in _FIRST_TOKEN_EVENTS:
            self._first()
        elif kind == "response.output_item.added":
            if getattr(event.item, "type", None) in ("function_call", "custom_tool_call"):
                self._first()
        elif kind == "response.output_item.done":
            if getattr(event.item, "type", None) in ("function_call", "custom_tool_call"):
                self.items.append(event.item)
        elif kind in _FINAL_EVENTS:
            self.final = event.response
        elif kind == "response.created":
            response = getattr(event, "response", None)
            self.model = getattr(response, "model", None)
            self.response_id = getattr(response, "id", None)

    def finish(self, error: BaseException | None) -> None:
        try:
            if self.final is not None:
                _apply_response(self.rec, self.final)
                return
            offered = self.rec.offered() if self.items else None
            failures = sum(tool_call_failed(getattr(item, "name", None), getattr(item, "arguments", None),
                                            offered, check_json=getattr(item, "type", None) == "function_call")
                           for item in self.items)
            self.rec.respond(self.parts, self.chars, None, self.model, self.response_id, self.refusal,
                             len(self.items), failures)
        finally:
            self.rec.end(error)
