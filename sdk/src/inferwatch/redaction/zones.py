"""After a redaction: where the redacted text can still hold a finding (only next to a placeholder), so a text is
looked at again there only."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .phones.matcher import _PhoneMatcher
from .phones.patterns import _ANY_DIGIT, _PHONE_CHARS
from .recognizers import _URL_DOT_LETTER


class _Zones:
    """Where a redacted text can hold a finding that the pass before did not see.

    Redacting replaces findings by placeholders ('<', capitals, '_', '>'), characters that no recognizer's match
    can contain. Take the stretch of text a recognizer's matches can be made of (its "zone" kind: digits and
    separators for cards, SSNs, IBANs, IPv4; non-space characters for e-mail, URLs, crypto, IPv6; the phone
    matcher's candidate characters). A zone that does not touch a placeholder is the text the previous pass saw,
    bounded by the same characters that no match crosses, so ``finditer`` (or the phone matcher) walks it the same
    way and finds the same matches, and every one that was a finding was replaced. So a new finding lies in a
    zone right before or after a placeholder; there it is looked for (the whole recognizer runs when such a zone
    could hold one of its matches at all)."""

    __slots__ = ("text", "placeholders", "_reversed", "_windows")

    def __init__(self, text: str) -> None:
        self.text = text
        self.placeholders = [m.span() for m in _PLACEHOLDER.finditer(text)]
        self._reversed: str | None = None
        self._windows: dict[str, list[tuple[int, int]]] = {}

    def windows(self, kind: str) -> list[tuple[int, int]]:
        """(start, end) of the zones of ``kind`` right before and right after each placeholder."""
        found = self._windows.get(kind)
        if found is None:
            run = _ZONE_RUNS[kind]
            text, n = self.text, len(self.text)
            if self._reversed is None:
                self._reversed = text[::-1]
            found = []
            for a, b in self.placeholders:
                left = a - (run.match(self._reversed, n - a).end() - (n - a))
                if left < a:
                    found.append((left, a))
                right = run.match(text, b).end()
                if right > b:
                    found.append((b, right))
            self._windows[kind] = found
        return found

    def suspects(self, wanted: frozenset[str]) -> frozenset[str]:
        """The entities of ``wanted`` whose zone test (``_ZONE_TESTS``) holds for a zone next to a placeholder
        (every zone is cut out once)."""
        text = self.text
        out = []
        for kind, entities in _ZONE_KINDS:
            asked = [e for e in entities if e in wanted]
            if not asked:
                continue
            zones = [text[a:b] for a, b in self.windows(kind)]
            if zones:
                out.extend(e for e in asked if any(map(_ZONE_TESTS[e][1], zones)))
        return frozenset(out)

    def phone(self, regions: Sequence[str]) -> bool:
        """Whether the phone matcher finds a number in a candidate zone next to a placeholder: it can start at
        the zone's start (no candidate crosses the character before it) and stops at its end."""
        matcher: _PhoneMatcher | None = None
        text = self.text
        for begin, stop in self.windows("phone"):
            if not _ANY_DIGIT.search(text, begin, stop):
                continue
            if matcher is None:
                matcher = _PhoneMatcher(text, regions)
            if not matcher.has_candidates(begin, stop):
                continue
            if any(matcher.find(region, begin, stop) for region in regions):
                return True
        return False


_PLACEHOLDER = re.compile(r"<[A-Z_]+>")
_ZONE_RUNS: dict[str, re.Pattern[str]] = {
    # every character a match can hold (the patterns are the judges: a superset is fine)
    "digits": re.compile(r"[\dA-Z .\-/]*"),  # cards [\d -], SSNs [0-9 .-], IBANs [A-Z0-9 -], IPv4 [0-9./]
    "word": re.compile(r"[^\s<>]*"),  # e-mail, URLs (quotes included), crypto, IPv6
    "phone": _PHONE_CHARS,  # phone candidates
}
_IBAN_START = re.compile(r"[A-Z]{2}[0-9]{2}")
_ZONE_KINDS = (("digits", ("CREDIT_CARD", "US_SSN", "IBAN_CODE")),
               ("word", ("IP_ADDRESS", "EMAIL_ADDRESS", "URL", "CRYPTO")))
_ZONE_TESTS: dict[str, tuple[str, Callable[[str], bool]]] = {
    # what a zone must contain to hold a match at all
    "CREDIT_CARD": ("digits", lambda z: sum(map(str.isdigit, z)) >= 13),
    "US_SSN": ("digits", lambda z: sum(map(str.isdigit, z)) >= 9),
    "IBAN_CODE": ("digits", lambda z: _IBAN_START.search(z) is not None),
    "IP_ADDRESS": ("word", lambda z: z.count(".") >= 3 or z.count(":") >= 2),
    "EMAIL_ADDRESS": ("word", lambda z: "@" in z),
    "URL": ("word", lambda z: _URL_DOT_LETTER.search(z) is not None),
    "CRYPTO": ("word", lambda z: len(z) >= 26),
}
