"""Prompt and completion text in spans, by capture mode, handled in the export thread before anything is sent.

The recorder sets the :data:`CONTENT_ATTRIBUTES` raw (truncated) and only when capture is on; here:

* ``off``: stripped, whatever slipped in;
* ``redacted``: every PII and secret entity replaced (``inferwatch.redaction.DEFAULT_REDACTOR``, or the
  ``redactor=`` given to ``init()``);
* ``full``: secrets only replaced, by the redaction package's secret recognizers.

A span whose text was handled is marked ``inferwatch.redacted=true`` with ``inferwatch.redaction.policy``: a
record of what the SDK did (the collector redacts what it stores again whatever the mark says). A redactor that
raises, or a redaction package that cannot be loaded, fails closed: the text is dropped, never sent raw.

Unless capture is ``full``, the rest of the span's text goes through the same redactor too, since span names,
attribute values, event attributes and status descriptions can quote user input as well: values and names (the
call's model, provider, operation and response id excepted: they name things, and the collector prices by them) with
every entity but ``URL`` (in names and values a scheme-less URL match is nearly always a dotted identifier such
as ``anthropic.claude-3-haiku-…``; what in a URL identifies someone has a recognizer of its own; the collector
does the same), exception messages, stack traces and status descriptions with every entity. Values are memoised
(they repeat across spans). ``inferwatch.user.hash`` (already a hash) and the redaction marks are left alone;
user ids in other attributes are hashed by the collector. A span with nothing to change is sent as it is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import Status

from .. import _guard
from .. import semconv as sc

CONTENT_ATTRIBUTES: frozenset[str] = frozenset({
    sc.GEN_AI_INPUT_MESSAGES, sc.GEN_AI_OUTPUT_MESSAGES, sc.GEN_AI_SYSTEM_INSTRUCTIONS,
    sc.GEN_AI_PROMPT, sc.GEN_AI_COMPLETION,  # deprecated spellings, in case anything sets them on our spans
})

Scrub = Callable[[str], str]


class Scrubbers(NamedTuple):
    redact: Scrub | None  # capture=redacted; None: unavailable (the text is dropped)
    redact_policy: str
    secrets: Scrub | None  # capture=full
    secrets_policy: str
    values: Scrub | None = None  # names and attribute values: every entity but URL (when the redactor can narrow)


def load_scrubbers(redactor: Any = None) -> Scrubbers:
    """The scrub functions: ``redactor`` (default: the redaction package's ``DEFAULT_REDACTOR``) for everything;
    for secrets only, ``redactor`` narrowed to the secret entities when it takes an ``entities`` argument, else
    the redaction package's secret recognizers. The redaction package is imported on first use, in the export
    thread, so that importing the SDK stays cheap."""
    try:
        from ..redaction import DEFAULT_REDACTOR, SECRET_ENTITIES
    except Exception as exc:  # noqa: BLE001 - a broken redaction package: content is dropped, and counted
        _guard.record_internal_error("telemetry.redaction_import", exc)
        DEFAULT_REDACTOR, SECRET_ENTITIES = None, frozenset()  # noqa: N806
    everything = redactor if redactor is not None else DEFAULT_REDACTOR
    of_secrets, secret_entities = DEFAULT_REDACTOR, SECRET_ENTITIES
    if redactor is not None and _accepts_entities(redactor.redact):
        of_secrets = redactor
        secret_entities = getattr(redactor, "SECRET_ENTITIES", None) or SECRET_ENTITIES
    values = _scrub(everything)
    if everything is not None and _accepts_entities(everything.redact):
        known = getattr(everything, "KNOWN_ENTITIES", None) or getattr(everything, "entities", None) or ()
        values = _scrub(everything, frozenset(known) - {"URL"}) or values
    return Scrubbers(_scrub(everything), _policy(everything), _scrub(of_secrets, secret_entities),
                     f"{_policy(of_secrets)}:secrets", values)


def _scrub(redactor: Any, entities: Any = None) -> Scrub | None:
    if redactor is None:
        return None
    if entities is None:
        return lambda text: _text_of(redactor.redact(text))
    if not entities:
        return None
    only = frozenset(entities)
    return lambda text: _text_of(redactor.redact(text, entities=only))


def _policy(redactor: Any) -> str:
    return str(getattr(redactor, "policy", "") or type(redactor).__name__)


#: Attributes whose value is free text: redacted with every entity (see the module docstring).
FREE_TEXT_ATTRIBUTES: frozenset[str] = frozenset({"exception.message", "exception.stacktrace"})
#: Attributes the text redaction leaves alone: names of what was called (the collector keeps them as sent in
#: their columns, and prices by the model), a hash, the marks of what the SDK did, and the content (handled by the
#: capture mode).
NAME_ATTRIBUTES: frozenset[str] = frozenset({
    sc.GEN_AI_REQUEST_MODEL, sc.GEN_AI_RESPONSE_MODEL, sc.GEN_AI_PROVIDER_NAME, sc.GEN_AI_SYSTEM,
    sc.GEN_AI_OPERATION_NAME, sc.GEN_AI_RESPONSE_ID,
})
KEPT_ATTRIBUTES: frozenset[str] = (NAME_ATTRIBUTES | {sc.USER_HASH, sc.REDACTED, sc.REDACTION_POLICY}
                                   | CONTENT_ATTRIBUTES)
_MEMO_LIMIT = 10_000
_MEMO_MAX_CHARS = 256


class ContentFilter:
    """Applies the capture mode to a finished span (export thread). ``redactor`` may be replaced until the first
    span is handled."""

    def __init__(self, capture: str, redactor: Any = None) -> None:
        self.capture = capture
        self.redactor = redactor
        self._scrubbers: Scrubbers | None = None
        self._memos: tuple[dict[str, str], dict[str, str]] = ({}, {})  # values and names; free text

    def apply(self, span: ReadableSpan) -> ReadableSpan:
        """``span`` itself when nothing in it changes, else a copy with its content (and, unless capture is
        ``full``, every other text) handled."""
        handled = self._content(span)
        if self.capture == "full":
            return handled
        return self._text(handled, span)

    def _content(self, span: ReadableSpan) -> ReadableSpan:
        """``span`` with its content attributes handled by the capture mode (``span`` itself when it has none)."""
        attributes = span.attributes or {}
        found = not CONTENT_ATTRIBUTES.isdisjoint(attributes)
        events = span.events or ()
        in_events = any(ev.attributes and not CONTENT_ATTRIBUTES.isdisjoint(ev.attributes) for ev in events)
        if not found and not in_events:
            return span
        scrub: Scrub | None = None
        policy = ""
        if self.capture != "off":
            s = self._loaded()
            if self.capture == "redacted":
                scrub, policy = s.redact, s.redact_policy
            else:  # full: the user chose to keep PII; secrets are scrubbed
                scrub, policy = s.secrets, s.secrets_policy
        new_attributes = _scrubbed(attributes, scrub)
        if in_events:
            events = tuple(Event(ev.name, _scrubbed(ev.attributes or {}, scrub), ev.timestamp)
                           if ev.attributes and not CONTENT_ATTRIBUTES.isdisjoint(ev.attributes) else ev
                           for ev in events)
        if scrub is not None:
            new_attributes[sc.REDACTED] = True
            new_attributes[sc.REDACTION_POLICY] = policy
        return RebuiltSpan(span, new_attributes, events)

    def _text(self, span: ReadableSpan, original: ReadableSpan) -> ReadableSpan:
        """``span`` with its name, attribute values, events and status description redacted; ``original`` when
        ``span`` is it and nothing changed."""
        s = self._loaded()
        values = (s.values, self._memos[0])
        free = (s.redact, self._memos[1])
        attributes, changed = self._mapping(span.attributes or {}, values, free)
        events = []
        for ev in span.events or ():
            ev_attributes, ev_changed = self._mapping(ev.attributes or {}, values, free)
            name = self._value(ev.name, *values)
            if ev_changed or name is not ev.name:
                ev = Event(name, ev_attributes, ev.timestamp)
                changed = True
            events.append(ev)
        name = self._name(span.name or "", attributes, values)
        status = span.status
        if status is not None and status.description:
            description = self._value(status.description, *free)
            if description is not status.description:
                status = Status(status.status_code, description)
        if span is original and not changed and name is (span.name or "") and status is span.status:
            return original
        return RebuiltSpan(span, attributes, tuple(events), name=name, status=status)

    def _name(self, name: str, attributes: Mapping[str, Any], values: tuple[Scrub | None, dict[str, str]]) -> str:
        """The span name redacted around the call's model name (``chat claude-haiku-4-5-20251001``: the phone
        recognizer reads ``4-5-20251001`` as a number), which is sent as it is anyway."""
        for key in (sc.GEN_AI_REQUEST_MODEL, sc.GEN_AI_RESPONSE_MODEL):
            model = attributes.get(key)
            if isinstance(model, str) and model and model in name:
                parts = [self._value(part, *values) for part in name.split(model)]
                joined = model.join(parts)
                return name if joined == name else joined
        return self._value(name, *values)

    def _mapping(self, attributes: Mapping[str, Any], values: tuple[Scrub | None, dict[str, str]],
                 free: tuple[Scrub | None, dict[str, str]]) -> tuple[dict[str, Any], bool]:
        out = dict(attributes)
        changed = False
        for key, item in attributes.items():
            if key in KEPT_ATTRIBUTES:
                continue
            new = self._value(item, *(free if key in FREE_TEXT_ATTRIBUTES else values))
            if new is not item:
                out[key] = new
                changed = True
        return out, changed

    def _value(self, item: Any, scrub: Scrub | None, memo: dict[str, str]) -> Any:
        """``item`` as sent: a string (or a sequence's strings) redacted, memoised; the same object when
        unchanged; '' when there is no working redactor (fail closed: never sent raw)."""
        if isinstance(item, str):
            if not item:
                return item
            found = memo.get(item)
            if found is None:
                try:
                    found = scrub(item) if scrub is not None else ""
                except Exception as exc:  # noqa: BLE001 - fail closed: the text is dropped, never sent raw
                    _guard.record_internal_error("telemetry.redact", exc)
                    found = ""
                if found == item:
                    found = item
                if len(item) <= _MEMO_MAX_CHARS:
                    if len(memo) >= _MEMO_LIMIT:
                        memo.clear()
                    memo[item] = found
            return found
        if isinstance(item, (tuple, list)) and any(isinstance(v, str) for v in item):
            new = tuple(self._value(v, scrub, memo) for v in item)
            return item if all(a is b for a, b in zip(new, item)) else new
        return item

    def _loaded(self) -> Scrubbers:
        if self._scrubbers is None:
            self._scrubbers = load_scrubbers(self.redactor)
        return self._scrubbers


def _scrubbed(attributes: Mapping[str, Any], scrub: Scrub | None) -> dict[str, Any]:
    out = dict(attributes)
    for key in CONTENT_ATTRIBUTES.intersection(out):
        value = out.pop(key)
        if scrub is None:
            continue  # capture off (or no scrubber): stripped
        try:
            if isinstance(value, str):
                out[key] = scrub(value)
            elif isinstance(value, (tuple, list)):
                out[key] = tuple(scrub(v) if isinstance(v, str) else v for v in value)
            else:
                out[key] = value  # numbers, booleans: no text to leak
        except Exception as exc:  # noqa: BLE001 - fail closed: the text is dropped, never sent raw
            _guard.record_internal_error("telemetry.redact", exc)
    return out


class RebuiltSpan(ReadableSpan):
    """A finished span with new attributes/events (and name, status); everything else (ids, times...) is the
    original's."""

    def __init__(self, original: ReadableSpan, attributes: Mapping[str, Any], events: Sequence[Event], *,
                 name: str | None = None, status: Status | None = None) -> None:
        super().__init__(name=original.name if name is None else name, context=original.context,
                         parent=original.parent, resource=original.resource, attributes=attributes, events=events,
                         links=original.links, kind=original.kind,
                         status=original.status if status is None else status, start_time=original.start_time,
                         end_time=original.end_time, instrumentation_scope=original.instrumentation_scope)
        self._dropped = (original.dropped_attributes, original.dropped_events, original.dropped_links)

    @property
    def dropped_attributes(self) -> int:
        return self._dropped[0]

    @property
    def dropped_events(self) -> int:
        return self._dropped[1]

    @property
    def dropped_links(self) -> int:
        return self._dropped[2]


def _text_of(result: Any) -> str:
    return result if isinstance(result, str) else result.text


def _accepts_entities(fn: Callable[..., Any]) -> bool:
    try:
        return "entities" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
