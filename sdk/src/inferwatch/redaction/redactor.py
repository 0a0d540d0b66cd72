"""The redactor: :class:`Redactor` runs the recognizers on a text, scores them with context words, resolves
their conflicts and writes the placeholders; :data:`DEFAULT_REDACTOR` and :func:`redact` are the shared instance.

A recognizer runs only where it can match (see :mod:`.scan`); after a redaction only the zones next to a
placeholder are looked at again (:mod:`.zones`). A JSON document is redacted value by value (:mod:`.documents`).
No result is cached across calls: nothing of a text is kept
once a call returns."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from ._data import _PHONE_META
from .conflicts import _remove_duplicates, _replace, _resolve, resolve_conflicts
from .context import _enhance_using_context
from .documents import dump_document, looks_like_document, parse_document, redact_values, same_keys
from .findings import _R, Finding, RedactionResult
from .recognizers import (
    _SECRET_PLAN,
    _SECRET_PRECHECKS,
    _cards,
    _crypto,
    _emails,
    _ibans,
    _ips,
    _literal,
    _phones,
    _secrets,
    _ssns,
    _urls,
)
from .rules import ALL_ENTITIES, DEFAULT_PHONE_REGIONS, POLICY, SECRET_ENTITIES, SecretRecognizer
from .scan import _Scan
from .zones import _Zones

_JSON_ESCAPE = re.compile(r"\\[\\nrtbf]")  # an escaped backslash, or an escaped newline, tab, CR, BS, FF


_MAX_CONTEXT_KEY = 256  # a JSON value is read after its key when the key is at most this long
_MAX_PLANS = 256  # entity selections whose recognizer plan a Redactor keeps (see Redactor._plan_for)
_SecretStep = tuple[SecretRecognizer, str, "Callable[[_Scan], bool] | None"]  # recognizer, folded gate, precheck
_PiiStep = Callable[[_Scan], list[_R]]
_Plan = tuple[tuple[_SecretStep, ...], tuple[_SecretStep, ...], tuple[_PiiStep, ...]]
_WORD_MAX = 16  # a word of ASCII letters up to this long holds no finding (see Redactor._WORDS_HOLD_NOTHING)
_PASSWORD_KEY = re.compile(r"(?i)pass|pwd|secret")  # a key whose value is read as a password (rules.PASSWORD)


def _add(counts: dict[str, int], more: dict[str, int]) -> None:
    for entity, n in more.items():
        counts[entity] = counts.get(entity, 0) + n


_ESCAPED_AS = {"\\\\": "\\\\", "\\n": "\n ", "\\r": "\r ", "\\t": "\t ", "\\b": "  ", "\\f": "  "}


def _blank_escape(match: re.Match[str]) -> str:
    return _ESCAPED_AS[match.group()]


def json_view(text: str) -> str:
    """``text`` as the recognizers read it in :meth:`Redactor.redact`: for a JSON document (it starts with ``[``,
    ``{`` or ``"``), each escaped newline, tab or carriage return becomes that character and a space, an escaped
    backspace or form feed two spaces; an escaped backslash stays. The same length, so what is found there is
    replaced at the same place in ``text``.

    Why: captured prompts are JSON messages, where a value at the start of a line follows ``\\n``, and no word
    boundary separates it from that ``n``. Other texts are read as they are."""
    if "\\" not in text or text.lstrip()[:1] not in ("[", "{", '"'):
        return text
    return _JSON_ESCAPE.sub(_blank_escape, text)


class Redactor:
    """Presidio-compatible PII and secret redactor (see :mod:`inferwatch.redaction`). Thread-safe; one instance
    can be shared (:data:`DEFAULT_REDACTOR`).

    ``entities``: the entity types to look for (default all of :data:`ENTITIES`); ``score_threshold``: findings
    scoring below it are dropped (Presidio's default 0 keeps everything); ``context``: apply the context-word
    boost; ``presidio_compatible``: drop the three deliberate differences (sample SSNs, reserved e-mail TLDs, dotted
    indexes as URLs);
    ``phone_regions``: regions for national-format phone numbers (Presidio's PhoneRecognizer defaults).
    """

    SECRET_ENTITIES = SECRET_ENTITIES
    KNOWN_ENTITIES: frozenset[str] = ALL_ENTITIES
    #: A word of at most _WORD_MAX ASCII letters holds no finding: every pattern needs a digit, punctuation or 20+
    #: characters, except a password after its key. (JSON values such as "user" or "stop" skip the recognizers.)
    #: A subclass that finds names (NER) sets it False.
    _WORDS_HOLD_NOTHING = True

    def __init__(self, *, entities: Iterable[str] | None = None, score_threshold: float = 0.0,
                 context: bool = True, presidio_compatible: bool = False,
                 phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS) -> None:
        chosen = frozenset(self.KNOWN_ENTITIES if entities is None else entities)
        unknown = chosen - self.KNOWN_ENTITIES
        if unknown:
            raise ValueError(f"unknown entities {sorted(unknown)}; known: {sorted(self.KNOWN_ENTITIES)}")
        if not 0.0 <= score_threshold <= 1.0:
            raise ValueError("score_threshold must be within [0, 1]")
        bad_regions = [r for r in phone_regions if r not in _PHONE_META]
        if bad_regions:
            raise ValueError(f"unknown phone regions {bad_regions}")
        self.entities = chosen
        self.score_threshold = float(score_threshold)
        self.context = bool(context)
        self.presidio_compatible = bool(presidio_compatible)
        self.phone_regions = tuple(phone_regions)
        options = []
        if chosen != self.KNOWN_ENTITIES:
            options.append("entities=" + ",".join(sorted(chosen)))
        if self.score_threshold:
            options.append(f"threshold={self.score_threshold:g}")
        if not self.context:
            options.append("no-context")
        if self.presidio_compatible:
            options.append("presidio-compatible")
        if self.phone_regions != DEFAULT_PHONE_REGIONS:
            options.append("phone=" + ",".join(self.phone_regions))
        self.policy: str = POLICY + (";" + ";".join(options) if options else "")
        self._pii = self._pii_recognizers()
        self._plans: dict[frozenset[str], _Plan] = {}  # per entity selection (see _plan_for)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(policy={self.policy!r})"

    # -- public API -----------------------------------------------------------------------------------------------
    def analyze(self, text: str, *, entities: Iterable[str] | None = None) -> list[Finding]:
        """What Presidio's ``AnalyzerEngine.analyze(text, "en", entities=...)`` returns: every finding (they may
        overlap), ordered by score (highest first), then position."""
        return [Finding(r.entity, r.start, r.end, r.score) for r in self._analyze(text, self._pick(entities))]

    def resolve(self, text: str, findings: Sequence[Finding]) -> list[Finding]:
        """The findings :meth:`redact` replaces (Presidio's anonymizer conflict resolution), ordered by start."""
        return resolve_conflicts(text, findings)

    def redact(self, text: str, *, entities: Iterable[str] | None = None) -> RedactionResult:
        """Replace every finding by ``<ENTITY_TYPE>``; ``entities`` narrows the types (e.g. SECRET_ENTITIES).

        A JSON object or array (the text starts with ``{`` or ``[`` and parses) keeps its keys and structure:
        only its string values and numbers are redacted, and when one changed the document is written again as
        compact JSON (still valid JSON; unchanged documents are returned as they came). See :mod:`.documents`.

        The result is stable: redacting it again changes nothing. (Rarely, replacing one finding uncovers
        another: Presidio's patterns are applied with ``finditer`` and validated afterwards, so a candidate that
        fails its check can hide a valid one that overlaps it, as in "00101-1000 500000000001 0008" where the
        card shows only once the weak SSN is gone. Such texts are redacted again until nothing is found.)"""
        counts: dict[str, int] = {}
        if not text:
            return RedactionResult(text, counts)
        return RedactionResult(self._redact(text, self._pick(entities), counts), counts)

    # -- internals ------------------------------------------------------------------------------------------------
    def _redact(self, text: str, wanted: frozenset[str], counts: dict[str, int], key: str | None = None) -> str:
        """``text`` redacted, counting into ``counts``. A JSON object or array is redacted value by value (see
        :mod:`.documents`); a value is read after its key (``"password: <value>"``) so that key-value secrets
        are found, unless a finding reaches into the key (then the value is read alone)."""
        if not text:
            return text
        if (self._WORDS_HOLD_NOTHING and len(text) <= _WORD_MAX and text.isascii() and text.isalpha()
                and (key is None or _PASSWORD_KEY.search(key) is None)):
            return text
        if looks_like_document(text):
            # One pass over the whole document first: most hold nothing, and when what it replaced left every key
            # and the structure as they were, that is the answer. Otherwise value by value. Without a key, a text
            # that is no document is redacted as text, which is that pass: so it runs before parsing, and a text
            # it leaves unchanged is never parsed (the common case).
            found: dict[str, int] = {}
            whole = None
            if key is None:
                whole = self._redact_text(text, wanted, found)
                if whole == text:
                    return text
            document = parse_document(text)
            if document is None and whole is not None:
                _add(counts, found)
                return whole
            if document is not None:
                if whole is None:
                    whole = self._redact_text(text, wanted, found)
                if whole == text or same_keys(document, parse_document(whole)):
                    _add(counts, found)
                    return whole
                found = {}
                try:
                    redacted, changed = redact_values(
                        document, lambda value, under: self._redact(value, wanted, found, under))
                except RecursionError:  # deeper than the stack allows: read as text
                    pass
                else:
                    if not changed:
                        _add(counts, found)
                        return text
                    # The dump read as text once more: a value that holds nothing alone can hold something as
                    # written in JSON (an escaped control character after a password key: "\u001f"), and the
                    # result must be stable, as redacting the dump again reads it as text first.
                    dumped = dump_document(redacted)
                    again: dict[str, int] = {}
                    whole = self._redact_text(dumped, wanted, again)
                    if whole != dumped and same_keys(document, parse_document(whole)):
                        _add(found, again)
                        dumped = whole
                    _add(counts, found)
                    return dumped
        if key is not None and len(key) <= _MAX_CONTEXT_KEY:
            head = key + ": "
            found = {}
            out = self._redact_text(head + text, wanted, found)
            if out.startswith(head):
                _add(counts, found)
                return out[len(head):]
        return self._redact_text(text, wanted, counts)

    def _redact_text(self, text: str, wanted: frozenset[str], counts: dict[str, int]) -> str:
        """``text`` redacted as text (a JSON document too: see :func:`json_view`), counting into ``counts``."""
        read = json_view(text)  # what the recognizers read: the same positions (see json_view)
        scan = _Scan(read)  # (kept: which secrets' literals occur, for _finds_anything)
        results = self._analyze(read, wanted, scan, scores=False)
        out = text
        for _ in range(8):
            if not results:
                break
            written: dict[str, int] = {}
            replaced = _replace(out, _resolve(read, results), written)
            if replaced == out:  # pragma: no cover - no pattern matches a placeholder
                break
            out = replaced
            _add(counts, written)
            read = json_view(out)
            if not self._finds_anything(read, wanted, frozenset(scan.secret_hits)):
                break
            scan = _Scan(read)
            results = self._analyze(read, wanted, scan, scores=False)
        return out

    def _pick(self, entities: Iterable[str] | None) -> frozenset[str]:
        if entities is None:
            return self.entities
        return self.entities & frozenset(entities)

    def _raw(self, text: str, wanted: frozenset[str], *, first: bool = False,
             scan: _Scan | None = None) -> list[list[_R]]:
        """Each recognizer's results (cheapest first); ``first``: stop at the first recognizer that finds any;
        ``scan``: the text's ``_Scan``, when the caller wants to read it afterwards."""
        out: list[list[_R]] = []
        if not text or not wanted:
            return out
        if scan is None:
            scan = _Scan(text)
        plans = self._plans.get(wanted)
        if plans is None:
            if len(self._plans) >= _MAX_PLANS:  # (selections come from a few call sites; bounded all the same)
                self._plans.clear()
            plans = self._plans[wanted] = self._plan_for(wanted)
        secrets, folded_only, pii = plans
        # every case-sensitive literal at once: most texts hold none, and then only the folded recognizers run
        hits = scan.literal_starts() if secrets is not folded_only else None
        for recognizer, gate, precheck in (secrets if hits else folded_only):
            if precheck is not None and not precheck(scan):
                # (no match here; counted as if its literals occurred, so that _finds_anything reads the text
                # again after a replacement, which may have made the condition true)
                scan.secret_hits.add(recognizer.entity)
                continue
            if gate:  # a substring every literal holds: most texts hold none (checked here, at C speed)
                haystack = scan.folded
                if haystack is not None and _literal(gate).search(haystack) is None:
                    continue
            found = _secrets(scan, recognizer)
            if found:
                out.append(found)
                if first:
                    return out
        for recognize in pii:
            found = recognize(scan)
            if found:
                out.append(found)
                if first:
                    return out
        return out

    def _plan_for(self, wanted: frozenset[str]) -> _Plan:
        """What :meth:`_raw` runs for ``wanted``, in its order: the secret recognizers (recognizer, folded gate or
        '', precheck), the same less the case-sensitive ones (the same tuple when there are none), and the PII
        recognizers. Computed once per entity selection (a handful per redactor), so that the loop per text tests
        no recognizer the selection leaves out."""
        secrets = tuple((r, gate if r.fold else "", _SECRET_PRECHECKS.get(r.entity))
                        for r, gate in _SECRET_PLAN if r.entity in wanted)
        folded = tuple(entry for entry in secrets if entry[0].fold)
        if len(folded) == len(secrets):
            folded = secrets
        return secrets, folded, tuple(recognize for entity, recognize in self._pii if entity in wanted)

    def _analyze(self, text: str, wanted: frozenset[str], scan: _Scan | None = None, *,
                 scores: bool = True) -> list[_R]:
        """The findings, scored; without ``scores`` (redacting), a score that cannot change what is replaced may
        be left as the recognizer gave it (see :func:`_overlapping`)."""
        results = [r for found in self._raw(text, wanted, scan=scan) for r in _remove_duplicates(found)]
        if not results:
            return []
        if not self.presidio_compatible:
            results = _without_uri_password_emails(text, results)
        if self.context:
            _enhance_using_context(text, results if scores or self.score_threshold > 0 else _overlapping(results))
        threshold = self.score_threshold
        return _remove_duplicates([r for r in results if r.score >= threshold])

    def _finds_anything(self, text: str, wanted: frozenset[str], secrets: frozenset[str] | None = None) -> bool:
        """Whether ``text``, a redacted text, still holds a finding (see :mod:`.zones`). ``secrets``: the secret
        entities whose literals occurred in the text before it was redacted (a match starts at an occurrence;
        redacting adds occurrences only inside placeholders, where none matches), None if not known."""
        if self.score_threshold > 0:
            return bool(self._analyze(text, wanted))  # context words may lift a score over the threshold
        # every raw result scores above 0. Secrets: all of the text (their prefixes may span whitespace; cheap)
        if self._raw(text, wanted & SECRET_ENTITIES & (SECRET_ENTITIES if secrets is None else secrets),
                     first=True):
            return True
        zones = _Zones(text)
        if not zones.placeholders:
            return bool(self._raw(text, wanted - SECRET_ENTITIES, first=True))
        suspects = zones.suspects(wanted)
        if suspects and self._raw(text, suspects, first=True):
            return True
        return "PHONE_NUMBER" in wanted and zones.phone(self.phone_regions)

    def _pii_recognizers(self) -> tuple[tuple[str, Callable[[_Scan], list[_R]]], ...]:
        strict, regions = self.presidio_compatible, self.phone_regions
        return (
            ("EMAIL_ADDRESS", lambda scan: _emails(scan, strict) if "@" in scan.text else []),
            ("URL", lambda scan: _urls(scan, strict)),
            ("CRYPTO", _crypto),
            ("IBAN_CODE", _ibans),
            ("IP_ADDRESS", _ips),
            ("US_SSN", lambda scan: _ssns(scan, not strict)),
            ("CREDIT_CARD", _cards),
            ("PHONE_NUMBER", lambda scan: _phones(scan, regions)),  # the most expensive, last
        )


def _overlapping(results: list[_R]) -> list[_R]:
    """Those of ``results`` that share a character with another one. Context words only raise scores, and with a
    zero threshold a score decides nothing but which of two overlapping findings is replaced (duplicate removal,
    conflict resolution; merging same-type findings keeps them apart from the others); findings apart from every
    other are all replaced, in the order of their positions. So redacting scores only these (context words are
    the slowest part of analysing a text with findings)."""
    marked = [False] * len(results)
    end, holder = -1, -1  # the furthest end so far, and whose it is
    for i in sorted(range(len(results)), key=lambda k: results[k].start):
        r = results[i]
        if r.start < end:  # (it overlaps the holder; a result overlapping an earlier one always meets its holder)
            marked[i] = marked[holder] = True
        if r.end > end:
            end, holder = r.end, i
    return [r for r, m in zip(results, marked) if m]


def _without_uri_password_emails(text: str, results: list[_R]) -> list[_R]:
    """``results`` less the e-mail addresses that are a URI's ``password@host`` (``scheme://user:password@host``):
    Presidio's e-mail pattern reads them as an address, which swallows the password finding and half the host
    (``postgres://admin:<EMAIL_ADDRESS><URL>``); without it the URI reads ``postgres://admin:<PASSWORD>@<URL>``."""
    ends = {r.end for r in results if r.entity == "PASSWORD" and text.startswith("@", r.end)}
    if not ends:
        return results
    return [r for r in results if r.entity != "EMAIL_ADDRESS" or text.find("@", r.start, r.end) not in ends]


def redact(text: str, *, entities: Iterable[str] | None = None) -> RedactionResult:
    """Redact ``text`` with :data:`DEFAULT_REDACTOR`."""
    return DEFAULT_REDACTOR.redact(text, entities=entities)


DEFAULT_REDACTOR = Redactor()
"""Shared instance: every entity, Presidio's default score threshold (0), context words on."""
