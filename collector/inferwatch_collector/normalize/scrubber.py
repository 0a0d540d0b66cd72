"""What a string an instrumentation sent becomes before it is stored outside ``prompt_logs``: redacted by the
content's redactor, or hashed when it identifies a user (:mod:`..user_ids`).

A :class:`Scrubber` pairs one redactor with one :class:`..user_ids.UserHasher` and memoises their results, since
most values repeat across spans (span names, models, flags, small counts): a repeated value costs one dict lookup,
a distinct one a redactor call. Findings are counted on every occurrence (the memo keeps them with the text), into
the totals ``/metrics`` reports as ``inferwatch_redactions_total``. :func:`scrubber_for` shares one scrubber per
(redactor, hasher) pair between batches, so the memos outlive a request.

One entity is left out of values and names (free text keeps it, see :meth:`Scrubber.free_text`): ``URL``. In
content a URL can point at a person; in attribute values and names a scheme-less URL match is nearly always a
dotted identifier (``openai.chat``, ``httpx.ReadTimeout``, ``ai.streamText.doStream``: ``.chat``, ``.re`` and
``.do`` are TLDs) or an endpoint (``server.address``), and what in a URL can identify someone (an e-mail, a phone
number, an IP address, a key, a password) is found by its own recognizer. A redactor whose ``redact`` takes no
``entities`` argument is called as it is.

A value that no recognizer can match skips the redactor (:func:`holds_nothing`): a text of at most eight
characters, all ASCII digits, ``.`` or ``-``, at most three of them digits (small counts, flags, versions). Why
that is safe: every recognizer needs a letter, ``@``, ``:``, or at least four digits (the phone matcher's own
bound ``_PHONE_MIN_DIGITS``; an SSN has nine, a card thirteen, an IPv4 address four, a bitcoin address 26
characters); ``tests/collector/test_attribute_redaction.py`` checks it against the redaction corpus and every
such text up to four characters.
"""

from __future__ import annotations

import inspect
import secrets
from typing import Any, Callable

from ..redaction import DEFAULT_REDACTOR, ENTITIES, Redactor, RedactionResult
from ..user_ids import UserHasher, hashes_value, is_user_key
from .limits import MAX_ATTRIBUTE_CHARS
from .values import to_str

REDACTION_MARGIN = 256  # characters redacted past MAX_ATTRIBUTE_CHARS, so a finding that straddles the cut is found
_MEMO_LIMIT = 20_000  # texts remembered per scrubber (cleared when full)
_MEMO_MAX_CHARS = 256  # longer texts are redacted each time (they rarely repeat)
_SAFE_CHARS = frozenset("0123456789.-")
#: What attribute values and names are redacted for (see the module docstring).
ATTRIBUTE_ENTITIES = frozenset(ENTITIES) - {"URL"}
#: The note of an attribute entry whose stored text is a user id's hash (see :meth:`Scrubber.attribute`).
USER_ID = "user_id"


def holds_nothing(text: str) -> bool:
    """True when no recognizer can match ``text``: at most three digits and only ``0-9.-`` (see the module
    docstring). Cheap enough to run before every redactor call."""
    return len(text) <= 8 and sum(c.isdigit() for c in text) <= 3 and _SAFE_CHARS.issuperset(text)


class Scrubber:
    """One redactor and one user hasher, with their memos. Shared by the batches of every thread: dict operations
    are atomic under the GIL, and an entry lost to a concurrent clear is only computed again."""

    __slots__ = ("redactor", "hasher", "entries", "_texts", "_rows", "_redact_text")

    def __init__(self, redactor: Redactor, hasher: UserHasher) -> None:
        self.redactor = redactor
        self.hasher = hasher
        self._redact_text: Callable[[str], RedactionResult] = _attribute_redaction(redactor)
        #: the attribute memo of :mod:`.attributes` (encoded KeyValue -> entry), kept here because its entries
        #: hold this scrubber's results
        self.entries: dict[bytes, tuple] = {}
        self._texts: dict[str, tuple[str, dict[str, int] | None]] = {}
        self._rows: dict[tuple[str, ...], tuple[tuple[str, ...], dict[str, int] | None]] = {}

    def text(self, text: str, totals: dict[str, int] | None) -> str:
        """``text`` redacted (cut to MAX_ATTRIBUTE_CHARS), its findings added to ``totals``."""
        if not text:
            return text
        redacted, counts = self.redacted(text)
        if counts is not None and totals is not None:
            add(totals, counts)
        return redacted

    def texts(self, values: tuple[str, ...], totals: dict[str, int] | None, keep: tuple[str, ...] = ()
              ) -> tuple[str, ...]:
        """Each of ``values`` (a row's text columns) as :meth:`text` redacts it, except that an occurrence of
        one of ``keep`` (the call's model names: kept as sent in their own columns) is left as it is, so
        ``chat claude-haiku-4-5-20251001`` keeps its model (the phone recognizer reads ``4-5-20251001`` as a
        number). Memoised as a whole: a row's labels repeat together (one lookup instead of one per column)."""
        key = values + keep if keep else values
        found = self._rows.get(key)
        if found is None:
            out = []
            counts: dict[str, int] = {}
            for value in values:
                redacted, more = self._kept(value, keep) if value else (value, None)
                out.append(redacted)
                if more is not None:
                    add(counts, more)
            found = (tuple(out), counts or None)
            if sum(map(len, key)) <= _MEMO_MAX_CHARS * 2:
                if len(self._rows) >= _MEMO_LIMIT:
                    self._rows.clear()
                self._rows[key] = found
        if found[1] is not None and totals is not None:
            add(totals, found[1])
        return found[0]

    def _kept(self, text: str, keep: tuple[str, ...]) -> tuple[str, dict[str, int] | None]:
        """``text`` redacted around the first of ``keep`` it holds (recursively for the others)."""
        for i, name in enumerate(keep):
            if name and name in text:
                counts: dict[str, int] = {}
                parts = []
                for part in text.split(name):
                    redacted, more = self._kept(part, keep[i + 1:]) if part else (part, None)
                    parts.append(redacted)
                    if more is not None:
                        add(counts, more)
                return name.join(parts)[:MAX_ATTRIBUTE_CHARS], counts or None
        return self.redacted(text)

    def redacted(self, text: str) -> tuple[str, dict[str, int] | None]:
        """``text`` redacted and cut to MAX_ATTRIBUTE_CHARS, with the counts of what was replaced (None: nothing);
        memoised for texts up to _MEMO_MAX_CHARS."""
        found = self._texts.get(text)
        if found is None:
            found = self._redact(text)
            if len(text) <= _MEMO_MAX_CHARS:
                if len(self._texts) >= _MEMO_LIMIT:
                    self._texts.clear()
                self._texts[text] = found
        return found

    def attribute(self, key: str, value: Any) -> tuple[str, dict[str, int] | str | None]:
        """The text the attributes map keeps for a plain attribute, and its note: the redaction's counts (None
        when nothing was found; the caller adds them to the batch totals on every occurrence), or
        :data:`USER_ID` when the text is the hash of a user id."""
        text = value if type(value) is str else to_str(value)
        if hashes_value(key, text):
            return self.hasher.hash(text), USER_ID if is_user_key(key) else None
        return self.redacted(text)

    def _redact(self, text: str) -> tuple[str, dict[str, int] | None]:
        if holds_nothing(text):
            return text[:MAX_ATTRIBUTE_CHARS], None
        result = self._redact_text(text[: MAX_ATTRIBUTE_CHARS + REDACTION_MARGIN])
        return result.text[:MAX_ATTRIBUTE_CHARS], (dict(result.counts) if result.counts else None)

    def free_text(self, text: str, totals: dict[str, int] | None) -> str:
        """Free text (an error message, a stack trace, a status message) redacted like content, URLs included,
        and cut to MAX_ATTRIBUTE_CHARS; not memoised (it rarely repeats); its findings added to ``totals``."""
        if not text:
            return text
        result = self.redactor.redact(text[: MAX_ATTRIBUTE_CHARS + REDACTION_MARGIN])
        if totals is not None and result.counts:
            add(totals, result.counts)
        return result.text[:MAX_ATTRIBUTE_CHARS]


def _attribute_redaction(redactor: Redactor) -> Callable[[str], RedactionResult]:
    """``redactor.redact`` narrowed to :data:`ATTRIBUTE_ENTITIES` when it takes ``entities``."""
    try:
        takes_entities = "entities" in inspect.signature(redactor.redact).parameters
    except (TypeError, ValueError):
        takes_entities = False
    if not takes_entities:
        return redactor.redact
    redact = redactor.redact

    def narrowed(text: str) -> RedactionResult:
        return redact(text, entities=ATTRIBUTE_ENTITIES)  # type: ignore[call-arg]

    return narrowed


def add(totals: dict[str, int], counts: dict[str, int]) -> None:
    """Add ``counts`` (entity -> n) to ``totals``."""
    for entity, n in counts.items():
        totals[entity] = totals.get(entity, 0) + n


#: A process-wide random key for callers that pass no hasher (tests, tools): ids are still never stored raw,
#: but their hashes join nothing.
_RANDOM_HASHER = UserHasher(secrets.token_bytes(32))
_SCRUBBERS: dict[tuple[int, int], Scrubber] = {}
_SCRUBBERS_LIMIT = 16


def scrubber_for(redactor: Redactor = DEFAULT_REDACTOR, hasher: UserHasher | None = None) -> Scrubber:
    """The shared scrubber of ``redactor`` and ``hasher`` (None: a process-wide random key). Keyed by identity;
    the registry holds both objects, so an id is never reused while its entry lives."""
    hasher = _RANDOM_HASHER if hasher is None else hasher
    key = (id(redactor), id(hasher))
    found = _SCRUBBERS.get(key)
    if found is None:
        if len(_SCRUBBERS) >= _SCRUBBERS_LIMIT:
            _SCRUBBERS.clear()
        found = _SCRUBBERS[key] = Scrubber(redactor, hasher)
    return found
