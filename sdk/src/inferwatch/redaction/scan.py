"""Per-text prefilter state: where in a text each recognizer can match at all, found at C speed.

One ``bytes.translate`` turns the text into a mask of character classes (digits, separators, capitals, letters,
the phone matcher's characters) in which literal-led regexes and ``bytes.find`` locate digit runs, phone "zones",
IBAN starts and long alphanumeric runs, so that the recognizers (:mod:`.recognizers`) apply Presidio's patterns
only there."""

from __future__ import annotations

import re

from .phones.patterns import _PHONE_CHARS
from .rules import SECRET_RECOGNIZERS


class _Scan:
    """Per-text prefilter state shared by the recognizers (computed lazily, once).

    The recognizers share a mask of the text: one byte per character (``bytes.translate`` for ASCII text, about
    a microsecond per KB) saying whether it is a digit (``0``), a digit-run separator `` .-/`` (``.``), an ASCII
    capital that a phone-number candidate may hold (``E``) or not (``U``), another letter or digit (``[^\\W_]``)
    that a candidate may hold (``x``) or not (``l``), another character a candidate may hold (``z``) or none of
    these (`` ``). Regexes over the mask start with a literal, so ``re`` skips to the next digit at C speed, where
    a class such as ``\\d`` makes it try every character, and ``bytes.find`` over a reduced mask finds two
    capitals before a digit (IBAN) or 26 letters and digits in a row (crypto) without any regex."""

    __slots__ = ("text", "_long", "_lower", "_folded", "_chunks", "_mask", "_zones", "_digits", "secret_hits",
                 "_literals")

    def __init__(self, text: str) -> None:
        self.text = text
        self._long: list[tuple[int, int]] | None = None
        self._lower: str | None = None
        self._folded: str | None = None
        self._chunks: dict[int, list[tuple[int, int]]] = {}
        self._mask: bytes | None = None
        self._zones: list[tuple[int, int]] | None = None
        self._digits: bool | None = None
        self.secret_hits: set[str] = set()  # secret entities whose literals occur (see Redactor._finds_anything)
        self._literals: dict[str, list[int]] | None = None

    def long_chunks(self, n: int) -> list[tuple[int, int]]:
        """(start, end) of the whitespace-separated chunks of at least ``n`` characters (a chunk's first
        occurrence after the previous one is the chunk itself: a shorter chunk cannot hold it)."""
        found = self._chunks.get(n)
        if found is None:
            text = self.text
            found = []
            chunks = text.split()
            if chunks and max(map(len, chunks)) >= n:  # (at C speed: most texts have no chunk that long)
                pos = 0
                for chunk in [c for c in chunks if len(c) >= n]:
                    pos = text.find(chunk, pos)
                    found.append((pos, pos + len(chunk)))
                    pos += len(chunk)
            self._chunks[n] = found
        return found

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    @property
    def folded(self) -> str | None:
        """The text lower-cased as ``re.IGNORECASE`` compares it with ASCII letters (the long s, U+017F, is an
        's'), or None when lower-casing moved characters (one whose lower case is longer): offsets would differ."""
        if self._folded is None:
            lower = self.lower
            if len(lower) != len(self.text):
                self._folded = ""
            else:
                self._folded = lower.replace("\u017f", "s") if "\u017f" in lower else lower
        return self._folded or None

    @property
    def has_digit(self) -> bool:
        """Whether the text holds a character of ``\\d``: a ``0`` in the mask (one ``memchr``; the crypto
        recognizer makes the mask of every text anyway, and ten ``in`` tests cost more than the mask)."""
        if self._digits is None:
            self._digits = b"0" in self.mask
        return self._digits

    @property
    def mask(self) -> bytes:
        if self._mask is None:
            self._mask = _mask(self.text)
        return self._mask

    def literal_starts(self) -> dict[str, list[int]]:
        """Where each case-sensitive secret literal occurs (overlaps included, ascending), for those that do: one
        ``finditer`` of :data:`_LITERALS` instead of one ``find`` per literal (most texts hold none)."""
        if self._literals is None:
            found: dict[str, list[int]] = {}
            text = self.text
            for m in _LITERALS.finditer(text):
                p = m.start()
                for literal, offset in _BY_ANCHOR[text[p]]:
                    if p >= offset and text.startswith(literal, p - offset):
                        found.setdefault(literal, []).append(p - offset)
            self._literals = found
        return self._literals

    def iban_starts(self) -> list[int]:
        """Where two ASCII capitals stand right before a digit (found with ``bytes.find`` in the mask reduced to
        capitals, digits and the rest)."""
        if not self.has_digit:
            return []
        reduced = self.mask.translate(_MASK_CAPITALS)
        out = []
        i = reduced.find(b"AA0")
        while i >= 0:
            out.append(i)
            i = reduced.find(b"AA0", i + 1)
        return out

    def long_runs(self) -> list[tuple[int, int]]:
        """The digit runs of at least 7 characters (IPv4 addresses, SSNs and cards need that many)."""
        if self._long is None:
            self._long = [m.span() for m in _MASK_LONG_RUN.finditer(self.mask)] if self.has_digit else []
        return self._long

    def phone_zones(self) -> list[tuple[int, int]]:
        """(begin, stop) of the stretches of the text where the phone matcher can find a number, in order.

        A candidate (a match of ``_PH_PATTERN``) is made of the characters of ``_PHONE_CHARS`` only, so it
        lies within one maximal run of them (a zone), and ``finditer`` walks each zone as it walks the whole
        text. Only zones with at least ``_PHONE_MIN_DIGITS`` digits can hold a number (``_has_min_digits``). A
        candidate starts at most 10 characters (two lead groups) before its first digit, and no candidate of an
        earlier zone starts after that zone's last digit, so the walk of a zone starts at ``max(first digit - 10,
        one past the previous digit)`` and stops at the zone's end."""
        if self._zones is None:
            zones: list[tuple[int, int]] = []
            if self.has_digit:
                mask = self.mask
                for m in _MASK_PHONE_ZONE.finditer(mask):
                    first = m.start()
                    zones.append((max(first - 10, mask.rfind(b"0", 0, first) + 1), m.end()))
            self._zones = zones
        return self._zones


#: Characters by how often they occur in prose and JSON messages, the most frequent first (those not listed are
#: rarer than all of these): a literal's anchor is its rarest character.
_BY_FREQUENCY = ' etaronshciudpml",wyf:.gvbk' + "IASCTFRENOMDLPBHGUWYKVJXQZ" + "xjqz-/_"


def _anchored(literals: list[str]) -> tuple[re.Pattern[str], dict[str, tuple[tuple[str, int], ...]]]:
    """A pattern that matches, one character long, at each occurrence of a literal's anchor (its rarest
    character) where the literal occurs around it; and, by anchor, the literals with their anchor's offset. Its
    search skips from anchor to anchor at C speed (the pattern starts with the set of anchors)."""
    by_anchor: dict[str, list[tuple[str, int]]] = {}
    for literal in dict.fromkeys(literals):
        offset = max(range(len(literal)), key=lambda i: _BY_FREQUENCY.find(literal[i]) % 1000)
        by_anchor.setdefault(literal[offset], []).append((literal, offset))
    alternatives = []
    for anchor, entries in by_anchor.items():
        around = [(f"(?<={re.escape(literal[:offset + 1])})" if offset else "")
                  + (f"(?={re.escape(literal[offset + 1:])})" if offset + 1 < len(literal) else "")
                  for literal, offset in entries]
        alternatives.append(re.escape(anchor) + "(?:" + "|".join(around) + ")")
    return re.compile("|".join(alternatives)), {a: tuple(entries) for a, entries in by_anchor.items()}


# (a str.find returns -1 for a character not listed: % 1000 ranks it rarest)
_LITERALS, _BY_ANCHOR = _anchored([literal for r in SECRET_RECOGNIZERS if not r.fold for literal in r.literals])


# the digit runs (\d(?:[\d .\-/]*\d)?, starting and ending with a digit) of 7 characters or more
_MASK_LONG_RUN = re.compile(rb"0[0.]{5,}0")
_MASK_PHONE_ZONE = re.compile(rb"0(?:[.zxE]*0){3}[0.zxE]*")  # first digit to the end of a zone with 4+ digits
_MASK_CAPITALS = bytes(ord("A") if c in b"EU" else c if c == ord("0") else ord(" ") for c in range(256))
_MASK_ALNUM = bytes(ord("a") if c in b"0EUxl" else ord(" ") for c in range(256))  # [^\W_] or not
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _mask_class(ch: str) -> str:
    if ch.isdecimal():  # what \d matches in a str pattern
        return "0"
    if ch in " .-/":
        return "."
    zone = _PHONE_CHARS.fullmatch(ch) is not None
    if "A" <= ch <= "Z":
        return "E" if zone else "U"
    if ch.isalnum():  # (what [^\W_] matches)
        return "x" if zone else "l"
    return "z" if zone else " "


class _MaskTable(dict):  # type: ignore[type-arg]
    """``str.translate`` table for non-ASCII text: classifies each character the first time it is seen."""

    def __missing__(self, code: int) -> str:
        found = _mask_class(chr(code))
        if len(self) < 65536:
            self[code] = found
        return found


_MASK_TABLE = _MaskTable()
_MASK_ASCII = "".join(_mask_class(chr(c)) for c in range(128)).encode("ascii") + b" " * 128


def _mask(text: str) -> bytes:
    """The digit / phone mask of ``text`` (see ``_Scan``), one byte per character."""
    if text.isascii():
        return text.encode("ascii").translate(_MASK_ASCII)
    others = [m.start() for m in _NON_ASCII.finditer(text)]
    if len(others) * 8 > len(text):
        return text.translate(_MASK_TABLE).encode("ascii")
    # a few characters beyond ASCII (accents in names, a dash): '?' stands in for them, then each is classified
    mask = bytearray(text.encode("ascii", "replace").translate(_MASK_ASCII))
    table = _MASK_TABLE
    for i in others:
        mask[i] = ord(table[ord(text[i])])
    return bytes(mask)
