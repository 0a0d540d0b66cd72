"""Typed reads of attribute values: any OTLP value (str, bool, int, float, bytes, list, dict) to the type a column
wants, never raising. Values that cannot be read become None (or '' for text)."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

import orjson

from .limits import MAX_ATTRIBUTE_CHARS

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def json_default(value: Any) -> Any:
    """orjson's ``default``: bytes as hex."""
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError


def to_str(value: Any) -> str:
    """The text stored for a value: arrays and key-value lists as compact JSON, bytes as hex, at most
    MAX_ATTRIBUTE_CHARS characters."""
    t = type(value)
    if t is str:
        text = value
    elif t is bool:
        return "true" if value else "false"
    elif t is int:
        return str(value)
    elif t is float:
        return repr(value)
    elif t is bytes:
        text = value.hex()
    elif value is None:
        return ""
    else:
        text = orjson.dumps(value, default=json_default).decode()
    return text if len(text) <= MAX_ATTRIBUTE_CHARS else text[:MAX_ATTRIBUTE_CHARS]


def as_int(value: Any) -> int | None:
    t = type(value)
    if t is int:
        return value
    if t is float:
        return int(value) if math.isfinite(value) else None
    if t is str:
        try:
            return int(value.strip())
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                return None
            return int(number) if math.isfinite(number) else None
    return None


def as_float(value: Any) -> float | None:
    t = type(value)
    if t is float:
        return value if math.isfinite(value) else None
    if t is int:
        return float(value)
    if t is str:
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def as_bool(value: Any) -> bool | None:
    t = type(value)
    if t is bool:
        return value
    if t is str:
        lowered = value.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        return None
    if t is int:
        return value != 0
    return None


def as_str(value: Any) -> str:
    if value is None:
        return ""
    return value if type(value) is str else to_str(value)


def first(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """Value of the first key present with a non-empty value."""
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def first_str(get: Any, keys: tuple[str, ...]) -> str:
    """``as_str(first(attrs, keys))`` in one call (``get`` is ``attrs.get``)."""
    for key in keys:
        value = get(key)
        if value is not None and value != "":
            return value if type(value) is str else to_str(value)
    return ""


def json_object(value: Any) -> Any:
    """A JSON-encoded attribute (Langfuse and OpenInference send dicts as JSON strings), or the value itself."""
    if type(value) is str and value[:1] in ("{", "[", '"'):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def finish_reason(raw: Any) -> str:
    """First finish reason, lower-cased with '-' → '_' (a list, a JSON list in a string, a JSON-encoded string as
    Langfuse v5 writes metadata, or a plain string)."""
    if raw is None:
        return ""
    if type(raw) is list and raw and type(raw[0]) is str and raw[0]:  # the usual shape: ["stop"]
        return raw[0].lower().replace("-", "_")
    if type(raw) is str and raw.startswith(("[", '"')):
        parsed = json_object(raw)
        raw = parsed if isinstance(parsed, (list, str)) else raw
    if type(raw) is list:
        raw = next((r for r in raw if r is not None and r != ""), None)
    if type(raw) is not str:
        return "" if raw is None or isinstance(raw, (list, dict)) else as_str(raw)
    return raw.strip().lower().replace("-", "_")


def iso_to_unix_nano(raw: Any) -> int | None:
    """An ISO 8601 time (Langfuse's completion_start_time), often JSON-quoted; naive times are UTC."""
    text = as_str(raw).strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
