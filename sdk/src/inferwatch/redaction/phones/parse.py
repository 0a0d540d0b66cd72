"""``phonenumbers.parse`` (with ``keep_raw_input``) and the checks of ``is_valid_number`` and of the matcher's
``_verify`` at leniency VALID."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from .._data import _PHONE_CC_REGIONS
from .patterns import (
    _PH_ALPHA_MAPPINGS,
    _PH_CAPTURING_DIGIT,
    _PH_EXTN,
    _PH_FIRST_GROUP_ONLY_PREFIX,
    _PH_PLUS_CHARS,
    _PH_PLUS_CHARS_PATTERN,
    _PH_SECOND_NUMBER_START,
    _PH_UNWANTED_END_CHARS,
    _PH_VALID_ALPHA_PHONE,
    _PH_VALID_PHONE_NUMBER,
    _PH_VALID_START_CHAR,
)
from .plans import _match_national_number, _Meta, _meta, _meta_for_cc

# CountryCodeSource / ValidationResult values
_FROM_PLUS, _FROM_IDD, _FROM_NO_PLUS, _FROM_DEFAULT = 1, 5, 10, 20
_IS_POSSIBLE, _IS_POSSIBLE_LOCAL_ONLY, _INVALID_CC, _TOO_SHORT, _INVALID_LENGTH, _TOO_LONG = 0, 4, 1, 2, 5, 3


class _PhoneParseError(Exception):
    def __init__(self, invalid_country_code: bool = False) -> None:
        super().__init__()
        self.invalid_country_code = invalid_country_code


def _test_number_length(number: str, meta: _Meta) -> int:
    """``_test_number_length(number, metadata)`` for PhoneNumberType.UNKNOWN (the general description)."""
    general = meta.general
    if general is None:
        return _INVALID_LENGTH
    n = len(number)
    if n in general.local_lengths:
        return _IS_POSSIBLE_LOCAL_ONLY
    lengths = general.lengths
    if lengths[0] == n:
        return _IS_POSSIBLE
    if lengths[0] > n:
        return _TOO_SHORT
    if lengths[-1] < n:
        return _TOO_LONG
    return _IS_POSSIBLE if n in lengths[1:] else _INVALID_LENGTH


def _normalize_digits_only(number: str) -> str:
    if number.isascii():
        return _NON_ASCII_DIGITS.sub("", number)
    out = []
    for ch in number:
        d = unicodedata.digit(ch, -1)
        if d != -1:
            out.append(str(d))
    return "".join(out)


_NON_ASCII_DIGITS = re.compile(r"[^0-9]+")


def _normalize(number: str) -> str:
    if _PH_VALID_ALPHA_PHONE.fullmatch(number):
        return "".join(_PH_ALPHA_MAPPINGS[c.upper()] for c in number if c.upper() in _PH_ALPHA_MAPPINGS)
    return _normalize_digits_only(number)


def _strip_national_prefix(number: str, meta: _Meta) -> tuple[str, bool]:
    """``_maybe_strip_national_prefix_carrier_code``: (number, stripped)."""
    prefix = meta.npp
    if not number or prefix is None:
        return number, False
    m = prefix.match(number)
    if not m:
        return number, False
    general = meta.general
    viable_original = _match_national_number(number, general)
    groups = m.groups()
    transform = meta.transform
    if not transform or groups[len(groups) - 1] is None:
        if viable_original and not _match_national_number(number[m.end():], general):
            return number, False
        return number[m.end():], True
    transformed = prefix.sub(transform, number, count=1)
    if viable_original and not _match_national_number(transformed, general):
        return number, False
    return transformed, True


def _extract_country_code(number: str) -> tuple[int, str]:
    if not number or number[0] == "0":
        return 0, number
    for i in range(1, min(len(number), 3) + 1):
        try:
            cc = int(number[:i])
        except ValueError:
            continue
        if cc in _PHONE_CC_REGIONS:
            return cc, number[i:]
    return 0, number


def _strip_i18n_prefix(number: str, idd: re.Pattern[str] | None, normalized: str | None = None) -> tuple[int, str]:
    """``normalized``: ``_normalize`` of ``number`` after its leading '+' signs, when the caller has it."""
    if not number:
        return _FROM_DEFAULT, number
    m = _PH_PLUS_CHARS_PATTERN.match(number)
    if m:
        return _FROM_PLUS, _normalize(number[m.end():]) if normalized is None else normalized
    number = _normalize(number) if normalized is None else normalized
    if idd is not None:
        m = idd.match(number)
        if m:
            digit = _PH_CAPTURING_DIGIT.search(number[m.end():])
            if not (digit and _normalize_digits_only(digit.group(1)) == "0"):
                return _FROM_IDD, number[m.end():]
    return _FROM_DEFAULT, number


def _maybe_extract_country_code(number: str, meta: _Meta | None,
                                normalized: str | None = None) -> tuple[int, str, int]:
    """(country calling code or 0, national number or '', CountryCodeSource)."""
    if not number:
        return 0, "", _FROM_DEFAULT
    source, full = _strip_i18n_prefix(number, meta.idd if meta is not None else None, normalized)
    if source != _FROM_DEFAULT:
        if len(full) <= 2:
            raise _PhoneParseError()
        cc, rest = _extract_country_code(full)
        if cc:
            return cc, rest, source
        raise _PhoneParseError(invalid_country_code=True)
    if meta is not None:
        cc_text = str(meta.cc)
        if full.startswith(cc_text):
            potential, _ = _strip_national_prefix(full[len(cc_text):], meta)
            if ((not _match_national_number(full, meta.general)
                 and _match_national_number(potential, meta.general))
                    or _test_number_length(full, meta) == _TOO_LONG):
                return meta.cc, potential, _FROM_NO_PLUS
    return 0, "", source


class _PhoneNumber(NamedTuple):
    cc: int
    nsn: str
    extension: str | None
    source: int
    raw: str


def _extract_possible_number(number: str) -> str:
    m = _PH_VALID_START_CHAR.search(number)
    if not m:
        return ""
    number = number[m.start():]
    last = number[-1:]
    if not (last.isalnum() or last == "#"):  # else no trailing run of '_' or non-word characters
        trailing = _PH_UNWANTED_END_CHARS.search(number)
        if trailing:
            number = number[:trailing.start()]
    if "/" in number or "\\" in number:
        second = _PH_SECOND_NUMBER_START.search(number)
        if second:
            number = number[:second.start()]
    return number


def _is_viable(number: str) -> bool:
    if len(number) < 2:
        return False
    if not number.translate(_PLAIN_NUMBER_CHARS):
        # ASCII digits, spaces and . - ( ) / [ ] + only: the pattern reduces to "two digits, or leading '+'s and
        # then at least three digits among punctuation"
        rest = number.lstrip("+")
        if "+" in rest:
            return False
        digits = sum(map(str.isdigit, rest))
        return digits >= 3 or (digits == 2 and len(number) == 2)
    return _PH_VALID_PHONE_NUMBER.fullmatch(number) is not None


class _PreParsed(NamedTuple):
    """The region-independent start of ``parse``: the possible number, its extension, whether it starts with '+',
    and its digits (after the '+')."""

    national: str
    extension: str | None
    plus: bool
    digits: str
    plain: bool  # only ASCII digits, spaces and . - ( ) / [ ] +


def _preparse(number: str) -> _PreParsed | None:
    if len(number) > 250:
        return None
    national = _extract_possible_number(number)  # candidates never hold ';phone-context=' or ';isub='
    if not _is_viable(national):
        return None
    plain = not national.translate(_PLAIN_NUMBER_CHARS)  # ASCII digits and . - ( ) / [ ] + and spaces only
    extension = None  # _maybe_strip_extension (every extension form needs a letter, '#', ',', ';' or '~')
    m = None if plain else _PH_EXTN.search(national)
    if m and _is_viable(national[:m.start()]):
        group = next((g for g in m.groups() if g is not None), None)
        if group:
            extension, national = group, national[:m.start()]
    plus = national[:1] in _PH_PLUS_CHARS and _PH_PLUS_CHARS_PATTERN.match(national)
    rest = national[plus.end():] if plus else national
    digits = _NON_ASCII_DIGITS.sub("", rest) if plain else _normalize(rest)  # no letters: no vanity number
    return _PreParsed(national, extension, bool(plus), digits, plain)


_PLAIN_NUMBER_CHARS = {ord(c): None for c in "0123456789 .-()/[]+"}


def _parse(number: str, region: str, pre: _PreParsed | None = None) -> _PhoneNumber | None:
    """``phonenumbers.parse(number, region, keep_raw_input=True)``; None where it raises. ``pre`` is
    ``_preparse(number)`` when the caller has it."""
    if pre is None:
        pre = _preparse(number)
        if pre is None:
            return None
    national = pre.national
    meta = _meta(region)
    if meta is None:
        return None
    try:
        cc, nsn, source = _maybe_extract_country_code(national, meta, pre.digits)
    except _PhoneParseError as error:
        plus = _PH_PLUS_CHARS_PATTERN.match(national)
        if not (error.invalid_country_code and plus):
            return None
        try:
            cc, nsn, source = _maybe_extract_country_code(national[plus.end():], meta)
        except _PhoneParseError:
            return None
        if cc == 0:
            return None
    target: _Meta | None = meta
    if cc:
        number_region = _PHONE_CC_REGIONS[cc][0]
        if number_region != region:
            target = _meta_for_cc(cc, number_region)
    else:
        nsn += pre.digits
        cc = meta.cc
    if len(nsn) < 2:
        return None
    if target is not None:
        potential, _ = _strip_national_prefix(nsn, target)
        if _test_number_length(potential, target) not in (_TOO_SHORT, _IS_POSSIBLE_LOCAL_ONLY, _INVALID_LENGTH):
            nsn = potential
    if len(nsn) > 17:
        return None
    return _PhoneNumber(cc, nsn, pre.extension, source, number)


def _is_valid_number(num: _PhoneNumber) -> bool:
    regions = _PHONE_CC_REGIONS.get(num.cc)
    if not regions:
        return False
    region: str | None = regions[0]
    if len(regions) > 1:
        region = None
        for candidate in regions:
            meta = _meta_for_cc(num.cc, candidate)
            if meta is None:
                continue
            if meta.leading_digits is not None:
                if meta.leading_digits.match(num.nsn):
                    region = candidate
                    break
            elif meta.is_valid_nsn(num.nsn):
                return meta.cc == num.cc  # (what the check below would find again)
        if region is None:
            return False
    meta = _meta_for_cc(num.cc, region)
    if meta is None or meta.cc != num.cc:
        return False
    return meta.is_valid_nsn(num.nsn)


def _national_prefix_present_if_required(num: _PhoneNumber) -> bool:
    if num.source != _FROM_DEFAULT:
        return True
    meta = _meta_for_cc(num.cc, _PHONE_CC_REGIONS[num.cc][0])
    if meta is None:
        return True
    fmt = meta.choose_format(num.nsn)
    if fmt is None:
        return True
    rule = fmt.national_prefix_formatting_rule
    if not rule or fmt.national_prefix_optional:
        return True
    if _PH_FIRST_GROUP_ONLY_PREFIX.fullmatch(rule):
        return True
    return _strip_national_prefix(_normalize_digits_only(num.raw), meta)[1]


def _contains_only_valid_x_chars(num: _PhoneNumber, candidate: str) -> bool:
    if "x" not in candidate and "X" not in candidate:
        return True
    i = 0
    while i < len(candidate) - 1:
        if candidate[i] in "xX":
            if candidate[i + 1] in "xX":
                return False  # carrier-code case (is_number_match): not ported, rejected
            if _normalize_digits_only(candidate[i:]) != num.extension:
                return False
        i += 1
    return True
