"""Reading a span's attributes in one pass, and building the ``attributes`` map a row stores.

The map holds span attributes, resource attributes and ``otel.scope.name``/``version``, values stringified by
:func:`.values.to_str`, at most MAX_ATTRIBUTES keys (span keys win a clash and are kept first when capping; the
number dropped is recorded under DROPPED_ATTRIBUTES_KEY). Keys that :func:`..conventions.classify_key` marks as
credentials, content or typed columns are left out (column keys of LLM calls stay in the map of other spans).
Every value the map keeps went through the content's redactor (every entity but URL: see :mod:`.scrubber`),
whether content is captured or not, and its findings are counted with the content's: plain values (memoised, see
below), the resource's and the column keys kept on other spans, and free text that can quote user input
(``FREE_TEXT``: error messages, stack traces, Langfuse's status message; every entity, redacted each time, as it
rarely repeats). Values of user-identifying keys (``enduser.id``, ``user.id``, ``*.user_id``, an e-mail
``session.id``: :mod:`..user_ids`) are kept as their HMAC hash instead; the first user id's hash is also returned
among the Python values under :data:`HASHED_USER_ID`, for an LLM row's ``user_hash``. A key sent twice in one
span: the last value wins and the key keeps its first position, for both input types.

Fast input carries each attribute as one encoded ``KeyValue``; most repeat across spans (models, providers,
flags, small counts), so a bounded memo of ``encoded bytes → entry`` (one per scrubber, as the entries hold its
results) makes the usual attribute one dict lookup, and a repeated value is redacted once.
"""

from __future__ import annotations

from typing import Any, Iterable

from inferwatch.semconv import USER_HASH

from ..conventions import (
    CONTENT, FREE_TEXT, KEY_CLASS, LF_MODEL, LLM_FIELD, OI_MODEL_NAME, OPERATION, PLAIN, PROVIDER_KEYS,
    REQUEST_MODEL_KEYS, RESPONSE_MODEL_KEYS, SERVICE_NAME, classify_key,
)  # fmt: skip
from ..otlp_decode import any_value_to_python, decode_key_value
from .limits import DROPPED_ATTRIBUTES_KEY, MAX_ATTRIBUTES
from .scrubber import USER_ID, Scrubber, add
from .values import to_str

# A scanned attribute: (key, Python value, its text for the attributes map (PLAIN keys only, else None), its
# content source code (>= CONTENT) when the key is content, FREE_TEXT for free text, else 0, and the note of its
# text: the redaction's counts, USER_ID for a user id's hash, else None). Values are shared between spans through
# the scrubber's memo: lists and dicts (arrays, kvlists) must never be mutated.
_Entry = tuple[str, Any, "str | None", int, Any]

# Bounds of the memo (Scrubber.entries): entries up to _KV_CACHE_MAX_BYTES long, cleared when full (unique values
# such as response ids fill it; the repeating ones are back after a few spans).
_KV_CACHE_LIMIT = 20_000
_KV_CACHE_MAX_BYTES = 256

#: Where the scans put the hash of the span's first user-id attribute among its Python values (not a valid
#: attribute key of any convention: it starts with a NUL).
HASHED_USER_ID = "\x00user_hash"
#: Column keys that name things (kept as sent on other spans, as in an LLM row's columns).
NAME_KEYS = frozenset({USER_HASH, LF_MODEL, OI_MODEL_NAME, *PROVIDER_KEYS, *REQUEST_MODEL_KEYS,
                       *RESPONSE_MODEL_KEYS})
_PENDING = object()  # the note of a plain entry whose text is not computed yet (see _kv_entry)

#: (Python values by key, the attributes map (PLAIN keys), content by source code (None: none or not captured))
Scan = tuple[dict[str, Any], dict[str, str], "dict[int, list[tuple[str, Any]]] | None"]


def _kv_entry(raw: bytes, scrubber: Scrubber, scrub: bool = True) -> _Entry:
    """The entry of one encoded KeyValue (a memo miss); raises MalformedPayload for invalid bytes. Without
    ``scrub`` (event and resource attributes, whose values are read, not kept) a plain value's text is left
    :data:`_PENDING` (the scan that needs it computes it and replaces the entry)."""
    key, value = decode_key_value(raw)
    code = KEY_CLASS.get(key)
    if code is None:
        code = classify_key(key)
    if code == PLAIN:
        if scrub:
            text, note = scrubber.attribute(key, value)
        else:
            text, note = "", _PENDING
        entry: _Entry = (key, value, text, 0, note)
    else:
        entry = (key, value, None, code if code >= CONTENT or code == FREE_TEXT else 0, None)
    if len(raw) <= _KV_CACHE_MAX_BYTES:
        cache = scrubber.entries
        if len(cache) >= _KV_CACHE_LIMIT:
            cache.clear()
        cache[raw] = entry
    return entry


def scan_fast(raws: Iterable[bytes], capture: bool, scrubber: Scrubber, totals: dict[str, int] | None = None
              ) -> Scan:
    """Span attributes of a FastTraceRequest in one pass (the hot loop: one dict lookup per repeated attribute).
    ``scrubber`` redacts and hashes what the map keeps; ``totals`` adds up what it replaced (entity -> count)."""
    cached = scrubber.entries.get
    attrs: dict[str, Any] = {}
    attributes: dict[str, str] = {}
    found: dict[int, list[tuple[str, Any]]] | None = None
    for raw in raws:
        entry = cached(raw)
        if entry is None:
            entry = _kv_entry(raw, scrubber)
        key, value, text, content, note = entry
        attrs[key] = value
        if text is not None:
            if note is not None:  # (rare: a finding, a user id, or a value first read as an event's)
                if note is _PENDING:
                    _, _, text, _, note = _kv_entry(raw, scrubber)
                if note is not None:
                    _noted(note, text, attrs, totals)
            attributes[key] = text
        elif content >= CONTENT:
            if capture:
                if found is None:
                    found = {}
                found.setdefault(content, []).append((key, value))
        elif content:
            attributes[key] = redacted_text(value, scrubber, totals)
        # SECRET, DROP_CONTENT and OPERATION never go to attributes; LLM_FIELD keys only on non-LLM spans
    return attrs, attributes, found


def scan_standard(key_values: Iterable[Any], capture: bool, scrubber: Scrubber,
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
            text, note = scrubber.attribute(key, value)
            attributes[key] = text
            if note is not None:
                _noted(note, text, attrs, totals)
        elif code >= CONTENT:
            if capture:
                if found is None:
                    found = {}
                found.setdefault(code, []).append((key, value))
        elif code == FREE_TEXT:
            attributes[key] = redacted_text(value, scrubber, totals)
    return attrs, attributes, found


def _noted(note: Any, text: str, attrs: dict[str, Any], totals: dict[str, int] | None) -> None:
    """Apply an entry's note: count its findings, or remember the first user id's hash."""
    if note == USER_ID:
        attrs.setdefault(HASHED_USER_ID, text)
    elif totals is not None:
        add(totals, note)


def redacted_text(value: Any, scrubber: Scrubber, totals: dict[str, int] | None) -> str:
    """A free-text value as the attributes map keeps it: redacted, then cut to MAX_ATTRIBUTE_CHARS (a little more
    is redacted than kept, so a finding that straddles the cut is still found). Not memoised."""
    return scrubber.free_text(value if type(value) is str else to_str(value), totals)


def read_fast(raws: Iterable[bytes], scrubber: Scrubber) -> dict[str, Any]:
    """Event or resource attributes of a FastTraceRequest as {key: Python value}."""
    cached = scrubber.entries.get
    out: dict[str, Any] = {}
    for raw in raws:
        entry = cached(raw) or _kv_entry(raw, scrubber, scrub=False)
        out[entry[0]] = entry[1]
    return out


def read_standard(key_values: Iterable[Any], scrubber: Scrubber | None = None) -> dict[str, Any]:
    """The same for the standard message's KeyValue wrappers."""
    out: dict[str, Any] = {}
    for kv in key_values:
        value = kv.value
        text = value.string_value
        out[kv.key] = text if text else any_value_to_python(value)
    return out


def resource_attributes(resource: dict[str, Any], scrubber: Scrubber, totals: dict[str, int] | None
                        ) -> dict[str, str]:
    """The resource's share of every row's attributes map (``service.name`` has its own column), redacted or
    hashed like a span's plain values. Its findings are counted once per resource (not per span)."""
    base: dict[str, str] = {}
    for key, value in resource.items():
        if key != SERVICE_NAME and classify_key(key) in (PLAIN, LLM_FIELD, OPERATION):
            text, note = scrubber.attribute(key, value)
            base[key] = text
            if note is not None and note != USER_ID and totals is not None:
                add(totals, note)
    return base


def scope_attributes(base: dict[str, str], scope: Any) -> dict[str, str]:
    """``base`` plus the instrumentation scope's name and version, when it has a name (kept as sent: they name
    the instrumentation library, and recognising calls and pairing them depend on them)."""
    if not scope.name:
        return base
    out = dict(base)
    out["otel.scope.name"] = scope.name
    if scope.version:
        out["otel.scope.version"] = scope.version
    return out


def add_column_keys(attrs: dict[str, Any], attributes: dict[str, str], scrubber: Scrubber,
                    totals: dict[str, int] | None) -> None:
    """Keys that LLM rows map to columns: plain attributes of any other span (added after the rest, redacted; the
    SDK's user hash, model and provider names are kept as they are on an LLM row, in its columns)."""
    for key, value in attrs.items():
        if classify_key(key) == LLM_FIELD:
            text = to_str(value)
            attributes[key] = text if key in NAME_KEYS else scrubber.text(text, totals)


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
