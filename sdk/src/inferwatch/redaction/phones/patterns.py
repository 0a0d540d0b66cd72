"""The phone matcher's regular expressions and character classes (phonenumbers' ``phonenumbermatcher`` and
``phonenumberutil`` constants; ``tests/sdk/test_redaction.py`` compares them)."""

from __future__ import annotations

import re
from collections.abc import Callable

_PH_VALID_PUNCTUATION = ("-x\u2010-\u2015\u2212\u30fc\uff0d-\uff0f \xa0\xad\u200b\u2060\u3000()"
                         "\uff08\uff09\uff3b\uff3d.\\[\\]/~\u2053\u223c\uff5e")
_PH_PLUS_CHARS = "+\uff0b"
_PH_OPENING_PARENS = "(\\[\uff08\uff3b"
_PH_CLOSING_PARENS = ")\\]\uff09\uff3d"
_PH_NON_PARENS = "[^" + _PH_OPENING_PARENS + _PH_CLOSING_PARENS + "]"
_PH_LEAD_CLASS = "[" + _PH_OPENING_PARENS + _PH_PLUS_CHARS + "]"
_PH_PUNCTUATION = "[" + _PH_VALID_PUNCTUATION + "]{0,4}"


def _ph_extn_pattern(for_parsing: bool) -> str:
    def digits(n: int) -> str:
        return "(\\d{1,%d})" % n

    separators = "[ \xa0\\t,]*"
    after_label = "[:\\.\uff0e]?[ \xa0\\t,-]*"
    explicit = "(?:e?xt(?:ensi(?:o\u0301?|\xf3))?n?|\uff45?\uff58\uff54\uff4e?|\u0434\u043e\u0431|anexo)"
    ambiguous = "(?:[x\uff58#\uff03~\uff5e]|int|\uff49\uff4e\uff54)"
    pattern = (";ext=" + digits(20) + "|" + separators + explicit + after_label + digits(20) + "#?|"
               + separators + ambiguous + after_label + digits(9) + "#?|" + "[- ]+" + digits(6) + "#")
    if for_parsing:
        no_comma = "[ \xa0\\t]*"
        pattern += ("|" + no_comma + "(?:,{2}|;)" + after_label + digits(15) + "#?"
                    + "|" + no_comma + "(?:,)+" + after_label + digits(9) + "#?")
    return pattern


_PH_I = re.UNICODE | re.IGNORECASE
_PH_PATTERN = re.compile("(?:" + _PH_LEAD_CLASS + _PH_PUNCTUATION + "){0,2}\\d{1,20}(?:" + _PH_PUNCTUATION
                         + "\\d{1,20}){0,20}(?:" + _ph_extn_pattern(False) + ")?", _PH_I)
_PH_MATCHING_BRACKETS = re.compile(
    "(?:[" + _PH_OPENING_PARENS + "])?(?:" + _PH_NON_PARENS + "+[" + _PH_CLOSING_PARENS + "])?" + _PH_NON_PARENS
    + "+(?:[" + _PH_OPENING_PARENS + "]" + _PH_NON_PARENS + "+[" + _PH_CLOSING_PARENS + "]){0,3}" + _PH_NON_PARENS
    + "*")
_PH_PUB_PAGES = re.compile("\\d{1,5}-+\\d{1,5}\\s{0,4}\\(\\d{1,4}")
_PH_SLASH_SEPARATED_DATES = re.compile("(?:(?:[0-3]?\\d/[01]?\\d)|(?:[01]?\\d/[0-3]?\\d))/(?:[12]\\d)?\\d{2}")
_PH_TIME_STAMPS = re.compile("[12]\\d{3}[-/]?[01]\\d[-/]?[0-3]\\d +[0-2]\\d$")
_PH_TIME_STAMPS_SUFFIX = re.compile(":[0-5]\\d")
_PH_INNER_MATCHES = (
    re.compile("/+(.*)"),
    re.compile("(\\([^(]*)"),
    re.compile("(?u)(?:\\s-|-\\s)\\s*(.+)"),
    re.compile("(?u)[\u2012-\u2015\uff0d]\\s*(.+)"),
    re.compile("(?u)\\.+\\s*([^.]+)"),
    re.compile("(?u)\\s+(\\S+)"),
)
_PH_BRACKETS = frozenset("()[]\uff08\uff09\uff3b\uff3d")
_PH_WIDE_HYPHENS = frozenset("\u2012\u2013\u2014\u2015\uff0d")
_PH_INNER_NEEDS: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (_PH_INNER_MATCHES[0], lambda c: "/" in c),
    (_PH_INNER_MATCHES[1], lambda c: "(" in c),
    (_PH_INNER_MATCHES[2], lambda c: "-" in c and not c.isascii() or " -" in c or "- " in c or "-\t" in c
     or "\t-" in c or ("-" in c and any(ch.isspace() and ch not in " \t" for ch in c))),
    (_PH_INNER_MATCHES[3], lambda c: not _PH_WIDE_HYPHENS.isdisjoint(c)),
    (_PH_INNER_MATCHES[4], lambda c: "." in c),
    (_PH_INNER_MATCHES[5], lambda c: any(ch.isspace() for ch in c)),
)
# the same for a plain candidate (ASCII digits and " .-()/[]+" only): its only whitespace is ' ', it has no wide
# hyphen, and what _trim_unwanted_end removes from its end are the characters of _PLAIN_NON_WORD
_PH_PLAIN_INNER: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (_PH_INNER_MATCHES[0], lambda c: "/" in c),
    (_PH_INNER_MATCHES[1], lambda c: "(" in c),
    (_PH_INNER_MATCHES[2], lambda c: " -" in c or "- " in c),
    (_PH_INNER_MATCHES[4], lambda c: "." in c),
    (_PH_INNER_MATCHES[5], lambda c: " " in c),
)
_PLAIN_NON_WORD = " .-()/[]+"
_PH_LEAD_PATTERN = re.compile(_PH_LEAD_CLASS)
_PH_SECOND_NUMBER_START = re.compile("[\\\\/] *x")
_PH_UNWANTED_END_CHARS = re.compile("(?u)(?:_|[^#\\w])+$")
_PH_VALID_START_CHAR = re.compile("[" + _PH_PLUS_CHARS + "\\d]")
_PH_VALID_PHONE_NUMBER = re.compile(
    "\\d{2}|[" + _PH_PLUS_CHARS + "]*(?:[" + _PH_VALID_PUNCTUATION + "*]*\\d){3,}[" + _PH_VALID_PUNCTUATION
    + "*ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\\d]*(?:" + _ph_extn_pattern(True) + ")?", _PH_I)
_PH_EXTN = re.compile("(?:" + _ph_extn_pattern(True) + ")$", _PH_I)
_PH_PLUS_CHARS_PATTERN = re.compile("[" + _PH_PLUS_CHARS + "]+")
_PH_VALID_ALPHA_PHONE = re.compile("(?:.*?[A-Za-z]){3}.*")
_PH_CAPTURING_DIGIT = re.compile("(\\d)", re.UNICODE)
_PH_FIRST_GROUP_ONLY_PREFIX = re.compile("\\(?\\\\1\\)?")
_PH_ALPHA_MAPPINGS = {**{c: d for d, letters in (("2", "ABC"), ("3", "DEF"), ("4", "GHI"), ("5", "JKL"),
                                                 ("6", "MNO"), ("7", "PQRS"), ("8", "TUV"), ("9", "WXYZ"))
                         for c in letters}, **{d: d for d in "0123456789"}}
_PH_LATIN_BLOCKS = ((0x0000, 0x007F), (0x0080, 0x00FF), (0x0100, 0x017F), (0x0180, 0x024F), (0x0300, 0x036F),
                    (0x1E00, 0x1EFF))

_ANY_DIGIT = re.compile(r"\d")
# every character a candidate (a match of _PH_PATTERN) can hold: digits, the leading and punctuation classes, and
# what the extension part allows (";ext=", "ext"/"extension"/"anexo"/"int"/"доб", ':', '.', ',', '#', '~', tab)
_PHONE_CHARS = re.compile(
    "[" + _PH_VALID_PUNCTUATION + "\\d" + _PH_OPENING_PARENS + _PH_PLUS_CHARS
    + ";=:,.#\uff03~\uff5e\t\uff0e\xf3\u0301exntsioa\u0434\u043e\u0431"
    + "\uff45\uff58\uff54\uff4e\uff49]*", _PH_I)
