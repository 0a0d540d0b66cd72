"""Prompt and completion text: found under any convention's content keys, redacted, stored as a PromptLogRow.

Content never goes into ``attributes``. With ``content_capture="redacted"`` it is redacted and stored as one
:class:`PromptLogRow` per span (any kind); with ``"off"`` it is not collected. Where a span carries the same
content twice (OpenInference's ``input.value`` and ``llm.input_messages.*``), the highest-priority source of
``conventions.CONTENT_SOURCES`` is kept; system instructions are prepended to the prompt, unless the prompt's
messages already hold them as system messages with the same text (OpenLIT sends ``gen_ai.system_instructions``
and the system message in ``gen_ai.input.messages``): then the prompt keeps them once.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..conventions import COMPLETION, CONTENT, CONTENT_SOURCES, PROMPT, SYSTEM_INSTRUCTIONS_CODE
from ..redaction import Redactor
from ..rows import PromptLogRow
from .batch import Batch
from .facts import SpanFacts
from .limits import MAX_CONTENT_CHARS
from .values import json_default

#: Content by source code (``conventions.CONTENT + index into CONTENT_SOURCES``) → (key, value) as found.
Found = dict[int, list[tuple[str, Any]]]

_REDACTION_MARGIN = 4096  # extra characters redacted before the cut, so a secret straddling it is still found


def prompt_log_row(facts: SpanFacts, found: Found, model: str, template: str, batch: Batch) -> PromptLogRow | None:
    """The span's redacted prompt and completion, or None when both are empty."""
    return content_row(found, batch.project_id, facts.start_ns, facts.trace_id, facts.span_id, model, template,
                       batch.redactor, batch.redactions)


def content_row(found: Found, project_id: str, start_ns: int, trace_id: str, span_id: str, model: str,
                template: str, redactor: Redactor, redactions: dict[str, int]) -> PromptLogRow | None:
    """The redacted prompt and completion of the content ``found`` for one span (from its attributes and events,
    or from OTLP log events joined to it), or None when both are empty. Replaced entities are added to
    ``redactions``."""
    prompt = _redact_capped(redactor, _content_text(found, PROMPT), redactions)
    completion = _redact_capped(redactor, _content_text(found, COMPLETION), redactions)
    if not prompt and not completion:
        return None
    return PromptLogRow(
        project_id=project_id,
        start_time=start_ns // 1000,
        trace_id=trace_id,
        span_id=span_id,
        model=model,
        prompt_template=template,
        prompt=prompt,
        completion=completion,
        redaction=redactor.policy,
    )


def _render(code: int, items: list[tuple[str, Any]]) -> str:
    """One content source as text: a single value as-is (JSON for structured values), or flattened indexed keys
    (``gen_ai.prompt.0.role``, ``llm.input_messages.0.message.content``) rebuilt into a JSON list of objects."""
    side, name, is_prefix = CONTENT_SOURCES[code - CONTENT]
    if not is_prefix:
        value = items[-1][1]
        return value if type(value) is str else orjson.dumps(value, default=json_default).decode()
    entries: dict[int, dict[str, Any]] = {}
    loose: dict[str, Any] = {}
    for key, value in items:
        rest = key[len(name) :]
        index, _, sub = rest.partition(".")
        if index.isdigit() and sub:
            head, dot, tail = sub.partition(".")
            if dot and head in ("message", "document", "embedding"):
                sub = tail  # OpenInference wraps fields: llm.input_messages.0.message.content
            entries.setdefault(int(index), {})[sub] = value
        else:
            loose[rest] = value
    rebuilt: list[Any] = [entries[i] for i in sorted(entries)]
    if loose:
        rebuilt.append(loose)
    return orjson.dumps(rebuilt, default=json_default).decode()


def _content_text(found: Found, side: int) -> str:
    best = None
    for code in sorted(found):
        if code == SYSTEM_INSTRUCTIONS_CODE:
            continue
        if CONTENT_SOURCES[code - CONTENT][0] == side:
            best = code
            break
    text = _render(best, found[best]) if best is not None else ""
    if side == PROMPT and SYSTEM_INSTRUCTIONS_CODE in found:
        system = _render(SYSTEM_INSTRUCTIONS_CODE, found[SYSTEM_INSTRUCTIONS_CODE])
        if not text:
            text = system
        elif not _holds_system(text, system):
            text = f"{system}\n\n{text}"
    return text


def _holds_system(prompt: str, system: str) -> bool:
    """Whether the prompt's messages (a JSON list) carry the system instructions already: the text of its
    ``system`` messages is the instructions' text, whitespace aside."""
    wanted = _joined(_texts(_loads(system, system)))
    if not wanted:
        return False
    messages = _loads(prompt, None)
    if type(messages) is not list:
        return False
    held = [text for message in messages if type(message) is dict and message.get("role") == "system"
            for text in _texts(message.get("content", message.get("parts")))]  # fmt: skip
    return _joined(held) == wanted


def _loads(text: str, otherwise: Any) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return otherwise


def _texts(value: Any) -> list[str]:
    """The texts of a message content: a string, or a list of strings and text parts (``{"type": "text",
    "content": ...}`` in the GenAI conventions, ``{"type": "text", "text": ...}`` in the providers' shape)."""
    if type(value) is str:
        return [value]
    if type(value) is dict:
        value = [value]
    if type(value) is not list:
        return []
    out = []
    for part in value:
        if type(part) is str:
            out.append(part)
        elif type(part) is dict:
            text = part.get("content", part.get("text"))
            if type(text) is str:
                out.append(text)
    return out


def _joined(texts: list[str]) -> str:
    return " ".join(" ".join(texts).split())


def _redact_capped(redactor: Redactor, text: str, totals: dict[str, int]) -> str:
    """Redact, then cut to MAX_CONTENT_CHARS. Only the first MAX + margin characters are redacted (the rest would
    be cut anyway); the margin keeps a secret that straddles the cut whole, so it is found and replaced."""
    if not text:
        return ""
    if len(text) > MAX_CONTENT_CHARS + _REDACTION_MARGIN:
        text = text[: MAX_CONTENT_CHARS + _REDACTION_MARGIN]
    result = redactor.redact(text)
    for entity, n in result.counts.items():
        totals[entity] = totals.get(entity, 0) + n
    return result.text[:MAX_CONTENT_CHARS]
