"""Prompt and completion text in spans, by capture mode, handled in the export thread before anything is sent.

The recorder sets the :data:`CONTENT_ATTRIBUTES` raw (truncated) and only when capture is on; here:

* ``off``: stripped, whatever slipped in;
* ``redacted``: every PII and secret entity replaced (``inferwatch.redaction.DEFAULT_REDACTOR``, or the
  ``redactor=`` given to ``init()``);
* ``full``: secrets only replaced, by the redaction package's secret recognizers.

A span whose text was handled is marked ``inferwatch.redacted=true`` with ``inferwatch.redaction.policy``: a
record of what the SDK did (the collector redacts what it stores again whatever the mark says). A redactor that
raises, or a redaction package that cannot be loaded, fails closed: the text is dropped, never sent raw.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from opentelemetry.sdk.trace import Event, ReadableSpan

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
    return Scrubbers(_scrub(everything), _policy(everything), _scrub(of_secrets, secret_entities),
                     f"{_policy(of_secrets)}:secrets")


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


class ContentFilter:
    """Applies the capture mode to a finished span (export thread). ``redactor`` may be replaced until the first
    span with content is handled."""

    def __init__(self, capture: str, redactor: Any = None) -> None:
        self.capture = capture
        self.redactor = redactor
        self._scrubbers: Scrubbers | None = None

    def apply(self, span: ReadableSpan) -> ReadableSpan:
        """``span`` itself when it holds no content, else a copy with its content handled."""
        attributes = span.attributes or {}
        found = not CONTENT_ATTRIBUTES.isdisjoint(attributes)
        events = span.events or ()
        in_events = any(ev.attributes and not CONTENT_ATTRIBUTES.isdisjoint(ev.attributes) for ev in events)
        if not found and not in_events:
            return span
        scrub: Scrub | None = None
        policy = ""
        if self.capture != "off":
            if self._scrubbers is None:
                self._scrubbers = load_scrubbers(self.redactor)
            s = self._scrubbers
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
    """A finished span with new attributes/events; everything else (ids, times, status...) is the original's."""

    def __init__(self, original: ReadableSpan, attributes: Mapping[str, Any], events: Sequence[Event]) -> None:
        super().__init__(name=original.name, context=original.context, parent=original.parent,
                         resource=original.resource, attributes=attributes, events=events, links=original.links,
                         kind=original.kind, status=original.status, start_time=original.start_time,
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
