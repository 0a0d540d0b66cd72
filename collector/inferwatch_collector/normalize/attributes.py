"""Reading a span's attributes in one pass, and building the ``attributes`` map a row stores.

The map holds span attributes, resource attributes and ``otel.scope.name``/``version``, values stringified by
:func:`.values.to_str`, at most MAX_ATTRIBUTES keys (span keys win a clash and are kept first when capping; the
number dropped is recorded under DROPPED_ATTRIBUTES_KEY). Keys that :func:`..conventions.classify_key` marks as
credentials, content or typed columns are left out (column keys of LLM calls stay in the map of other spans);
free text that can quote user input (``FREE_TEXT``: error messages, stack traces, Langfuse's status message) is
kept redacted, whether content is captured or not, and its findings are counted with the content's. A key sent
twice in one span: the last value wins and the key keeps its first position, for both input types.

Fast input carries each attribute as one encoded ``KeyValue``; most repeat across spans (models, providers,
flags, small counts), so a bounded memo of ``encoded bytes → entry`` makes the usual attribute one dict lookup.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..conventions import CONTENT, FREE_TEXT, KEY_CLASS, LLM_FIELD, OPERATION, PLAIN, SERVICE_NAME, classify_key
from ..otlp_decode import any_value_to_python, decode_key_value
from ..redaction import DEFAULT_REDACTOR, Redactor
from .limits import DROPPED_ATTRIBUTES_KEY, MAX_ATTRIBUTE_CHARS, MAX_ATTRIBUTES
from .values import to_str

# A scanned attribute: (key, Python value, its text for the attributes map (PLAIN keys only, else None), its
# content source code (>= CONTENT) when the key is content, FREE_TEXT for free text, else 0). Values are shared between spans through
# _KV_CACHE: lists and dicts (arrays, kvlists) must never be mutated.
_Entry = tuple[str, Any, "str | None", int]

# Encoded KeyValue bytes -> entry. Bounded: entries up to _KV_CACHE_MAX_BYTES long, cleared when full (unique
# values such as response ids fill it; the repeating ones are back after a few spans).
_KV_CACHE: dict[bytes, _Entry] = {}
_KV_CACHE_LIMIT = 20_000
_KV_CACHE_MAX_BYTES = 256

_REDACTION_MARGIN = 256  # characters redacted past MAX_ATTRIBUTE_CHARS

#: (Python values by key, the attributes map (PLAIN keys), content by source code (None: none or not captured))
Scan = tuple[dict[str, Any], dict[str, str], "dict[int, list[tuple[str, Any]]] | None"]


def _kv_entry(raw: bytes) -> _Entry:
    """The entry of one encoded KeyValue (a _KV_CACHE miss); raises MalformedPayload for invalid bytes."""
    key, value = decode_key_value(raw)
    code = KEY_CLASS.get(key)
    if code is None:
        code = classify_key(key)
    if code == PLAIN:
        text = value if type(value) is str and len(value) <= MAX_ATTRIBUTE_CHARS else to_str(value)
        entry: _Entry = (key, value, text, 0)
    else:
        entry = (key, value, None, code if code >= CONTENT or code == FREE_TEXT else 0)
    if len(raw) <= _KV_CACHE_MAX_BYTES:
        if len(_KV_CACHE) >= _KV_CACHE_LIMIT:
            _KV_CACHE.clear()
        _KV_CACHE[raw] = entry
    return entry


def scan_fast(raws: Iterable[bytes], capture: bool, redactor: Redactor = DEFAULT_REDACTOR,
              totals: dict[str, int] | None = None) -> Scan:
    """Span attributes of a FastTraceRequest in one pass (the hot loop: one dict lookup per repeated attribute).
    ``redactor`` redacts free text; ``totals`` adds up what it replaced (entity -> count)."""
    cached = _KV_CACHE.get
    attrs: dict[str, Any] = {}
    attributes: dict[str, str] = {}
    found: dict[int, list[tuple[str, Any]]] | None = None
    for raw in raws:
        entry = cached(raw)
        if entry is None:
            entry = _kv_entry(raw)
        key, value, text, content = entry
        attrs[key] = value
        if text is not None:
            attributes[key] = text
        elif content >= CONTENT:
            if capture:
                if found is None:
                    found = {}
                found.setdefault(content, []).append((key, value))
        elif content:
            attributes[key] = redacted_text(value, redactor, totals)
        # SECRET, DROP_CONTENT and OPERATION never go to attributes; LLM_FIELD keys only on non-LLM spans
    return attrs, attributes, found


def scan_standard(key_values: Iterable[Any], capture: bool, redactor: Redactor = DEFAULT_REDACTOR,
                  totals: dict[str, int] | None = None) -> Scan:
    """The same for the standard message's KeyValue wrappers (callers holding a standard message; the tests'
    independent reference for the fast path)."""
    attrs: dict[str, Any] = {}
    attributes: dict[str, str] = {}
    found: dict[int, list[tuple[str, Any]]] | None = None
    for kv in key_values:
        key = kv.key
        any_value = kv.value
        value = any_value.string_value  # most values are non-empty strings: one read, no WhichOneof
        if not value:
            value = any_value_to_python(any_value)
        attrs[key] = value
        code = KEY_CLASS.get(key)
        if code is None:
            code = classify_key(key)
        if code == PLAIN:
            attributes[key] = value if type(value) is str and len(value) <= MAX_ATTRIBUTE_CHARS else to_str(value)
        elif code >= CONTENT:
            if capture:
                if found is None:
                    found = {}
                found.setdefault(code, []).append((key, value))
        elif code == FREE_TEXT:
            attributes[key] = redacted_text(value, redactor, totals)
    return attrs, attributes, found


def redacted_text(value: Any, redactor: Redactor, totals: dict[str, int] | None) -> str:
    """A free-text value as the attributes map keeps it: redacted, then cut to MAX_ATTRIBUTE_CHARS (a little more
    is redacted than kept, so a finding that straddles the cut is still found)."""
    text = value if type(value) is str else to_str(value)
    if not text:
        return text
    result = redactor.redact(text[: MAX_ATTRIBUTE_CHARS + _REDACTION_MARGIN])
    if totals is not None:
        for entity, n in result.counts.items():
            totals[entity] = totals.get(entity, 0) + n
    return result.text[:MAX_ATTRIBUTE_CHARS]


def read_fast(raws: Iterable[bytes]) -> dict[str, Any]:
    """Event or resource attributes of a FastTraceRequest as {key: Python value}."""
    cached = _KV_CACHE.get
    out: dict[str, Any] = {}
    for raw in raws:
        entry = cached(raw) or _kv_entry(raw)
        out[entry[0]] = entry[1]
    return out


def read_standard(key_values: Iterable[Any]) -> dict[str, Any]:
    """The same for the standard message's KeyValue wrappers."""
    out: dict[str, Any] = {}
    for kv in key_values:
        value = kv.value
        text = value.string_value
        out[kv.key] = text if text else any_value_to_python(value)
    return out


def resource_attributes(resource: dict[str, Any]) -> dict[str, str]:
    """The resource's share of every row's attributes map (``service.name`` has its own column)."""
    base: dict[str, str] = {}
    for key, value in resource.items():
        if key != SERVICE_NAME and classify_key(key) in (PLAIN, LLM_FIELD, OPERATION):
            base[key] = to_str(value)
    return base


def scope_attributes(base: dict[str, str], scope: Any) -> dict[str, str]:
    """``base`` plus the instrumentation scope's name and version, when it has a name."""
    if not scope.name:
        return base
    out = dict(base)
    out["otel.scope.name"] = scope.name
    if scope.version:
        out["otel.scope.version"] = scope.version
    return out


def add_column_keys(attrs: dict[str, Any], attributes: dict[str, str]) -> None:
    """Keys that LLM rows map to columns: plain attributes of any other span (added after the rest)."""
    for key, value in attrs.items():
        if classify_key(key) == LLM_FIELD:
            attributes[key] = to_str(value)


def with_scope(attributes: dict[str, str], scope_attrs: dict[str, str]) -> dict[str, str]:
    """A span's attributes map joined with its resource and scope keys, capped at MAX_ATTRIBUTES."""
    if scope_attrs:
        if len(attributes) + len(scope_attrs) <= MAX_ATTRIBUTES:
            merged = scope_attrs.copy()
            merged.update(attributes)
            return merged
        return _capped(attributes, scope_attrs)
    if len(attributes) > MAX_ATTRIBUTES:
        return _capped(attributes, {})
    return attributes


def _capped(attributes: dict[str, str], scope_attrs: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    dropped = 0
    for source in (attributes, scope_attrs):
        for key, value in source.items():
            if key in out:
                continue
            if len(out) < MAX_ATTRIBUTES:
                out[key] = value
            else:
                dropped += 1
    if dropped:
        out[DROPPED_ATTRIBUTES_KEY] = str(dropped)
    return out
