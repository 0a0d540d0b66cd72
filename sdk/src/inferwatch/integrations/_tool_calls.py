"""Tool-call failure rules, one for every provider.

A tool call in a response counts as at most one failure, when

* its arguments are not a JSON object: unparseable JSON, or JSON that is not an object (empty arguments mean
  "no arguments" and are fine; free-form *custom* tools are not checked), or
* its name is not among the request's tools (when the request's ``tools`` is not a list or tuple we cannot look
  at it without consuming it, so names are not checked; a request without tools offers none).

A tool result sent back in the request counts as one failure when the provider's error flag is set (Anthropic
``tool_result.is_error``) or when its content is a JSON object with an ``"error"`` member that is not null,
false or empty (``{"error": "timeout"}`` counts, ``{"error": null, "temp": 21}`` does not). Only the results that
answer the latest assistant turn are looked at (the messages after the last assistant message), so a failure is
counted once, on the call that sees it first, and not again on every later call that carries the history.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._readers import as_sequence, get


def offered_tool_names(*tool_lists: Any) -> frozenset[str] | None:
    """Names of the tools a request offered; None when one of the lists cannot be read without consuming it."""
    names: set[str] = set()
    for tools in tool_lists:
        if not tools:  # absent, None, or the SDKs' omit / NOT_GIVEN sentinels (falsy)
            continue
        seq = as_sequence(tools)
        if seq is None:
            return None
        for tool in seq:
            name = get(tool, "name")
            if not name:
                name = get(get(tool, "function"), "name") or get(get(tool, "custom"), "name")
            if isinstance(name, str) and name:
                names.add(name)
    return frozenset(names)


def bad_arguments(arguments: Any) -> bool:
    """True when tool-call arguments are not a JSON object (a dict is; empty text means no arguments)."""
    if isinstance(arguments, Mapping):
        return False
    if not isinstance(arguments, str):
        return True
    text = arguments.strip()
    if not text:
        return False
    try:
        return not isinstance(json.loads(text), dict)
    except ValueError:
        return True


def tool_call_failed(name: Any, arguments: Any, offered: frozenset[str] | None, *,
                     check_json: bool = True) -> bool:
    if check_json and bad_arguments(arguments):
        return True
    return offered is not None and name not in offered


def error_payload(content: Any) -> bool:
    """True when a tool result's content is a JSON object with a non-empty ``"error"`` member."""
    if not isinstance(content, str):
        seq = as_sequence(content)
        if seq is None:
            return False
        content = "".join(t for t in (get(part, "text") for part in seq) if isinstance(t, str))
    text = content.lstrip()
    if not text.startswith("{") or '"error"' not in text:
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("error") not in (None, False, "", {}, [])
