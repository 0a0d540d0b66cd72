"""A trace's prompt logs as shown: one entry per span, its content once and complete.

A span's content can arrive in several ``prompt_logs`` rows: from its own attributes (the trace request) and from
GenAI log events joined to it (``/v1/logs``), whose events may also be split over several logs requests. Shown
side by side, the same span would appear twice, or with its prompt in one entry and its completion in another.
:func:`one_per_span` merges them: per side, each distinct text once (texts compared as canonical JSON when they
are JSON, so the same messages rendered by two emitters count as one; a text contained in another is dropped),
joined in time order. Pure.
"""

from __future__ import annotations

from typing import Any

import orjson


def one_per_span(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in time order, with ``span_id``, ``model``, ``prompt_template``, ``prompt``, ``completion`` and
    ``redaction`` (other keys are taken from a span's first row), merged to one per span, in order of each span's
    first row."""
    merged: dict[str, dict[str, Any]] = {}
    parts: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        span = row["span_id"]
        entry = merged.get(span)
        if entry is None:
            merged[span] = dict(row)
            parts[span] = {"prompt": [row["prompt"]], "completion": [row["completion"]],
                           "redaction": [row["redaction"]]}
            continue
        for name in ("model", "prompt_template"):
            entry[name] = entry[name] or row[name]
        for name in ("prompt", "completion", "redaction"):
            parts[span][name].append(row[name])
    for span, entry in merged.items():
        entry["prompt"] = _combine(parts[span]["prompt"])
        entry["completion"] = _combine(parts[span]["completion"])
        entry["redaction"] = ", ".join(dict.fromkeys(r for r in parts[span]["redaction"] if r))
    return list(merged.values())


def covers(texts: list[str], text: str) -> bool:
    """Whether ``text`` adds nothing to ``texts``: it is empty, or equal to or contained in one of them (compared
    as canonical JSON where they are JSON)."""
    if not text:
        return True
    key = _canonical(text)
    return any(key in _canonical(other) for other in texts if other)


def _canonical(text: str) -> str:
    try:
        return orjson.dumps(orjson.loads(text), option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONDecodeError:
        return text.strip()


def _combine(texts: list[str]) -> str:
    """Each distinct non-empty text once; one contained in another is dropped."""
    distinct: dict[str, str] = {}  # canonical -> text
    for text in texts:
        if text:
            distinct.setdefault(_canonical(text), text)
    keys = list(distinct)
    kept = [k for k in keys if not any(k != other and k in other for other in keys)]
    return "\n\n".join(distinct[k] for k in kept)
