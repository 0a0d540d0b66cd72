"""``PhoneNumberMatcher(text, region, leniency=VALID)`` for one text and several regions at once."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from .parse import (
    _FROM_PLUS,
    _PLAIN_NUMBER_CHARS,
    _contains_only_valid_x_chars,
    _is_valid_number,
    _national_prefix_present_if_required,
    _parse,
    _PhoneNumber,
    _preparse,
    _PreParsed,
)
from .patterns import (
    _ANY_DIGIT,
    _PH_BRACKETS,
    _PH_INNER_NEEDS,
    _PH_LATIN_BLOCKS,
    _PH_LEAD_PATTERN,
    _PH_MATCHING_BRACKETS,
    _PH_PATTERN,
    _PH_PLAIN_INNER,
    _PH_PUB_PAGES,
    _PH_SECOND_NUMBER_START,
    _PH_SLASH_SEPARATED_DATES,
    _PH_TIME_STAMPS,
    _PH_TIME_STAMPS_SUFFIX,
    _PH_UNWANTED_END_CHARS,
    _PLAIN_NON_WORD,
)
from .plans import _PHONE_MIN_DIGITS
from .regions import _maybe_national, _national_filter, _national_groups, _region_groups

_NUMBER_SEPARATORS = {ord(c): None for c in " .-()/[]"}  # what a plain number holds besides digits and '+'
_NO_REGIONS: frozenset[str] = frozenset()


def _is_latin_letter(ch: str) -> bool:
    if ch < "\x80":
        return ch.isalpha()
    category = unicodedata.category(ch)
    if category not in ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn"):
        return False
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _PH_LATIN_BLOCKS)


def _is_invalid_punctuation(ch: str) -> bool:
    if ch < "\x80":
        return ch == "%" or ch == "$"
    return unicodedata.category(ch) == "Sc"


_PlanEntry = tuple[int, str, tuple[tuple[int, str, frozenset[str]], ...]]


class _PhoneMatcher:
    """One text, several regions. Everything that does not depend on the region (the candidates, the order in
    which a candidate and its inner parts are tried, the checks on brackets and neighbouring letters, the start of
    the parse, and the parse of numbers written with ``+``) is computed once and shared by the regions; a cheap
    necessary condition per region skips the full parse of most national-format candidates."""

    __slots__ = ("text", "regions", "_groups", "_candidates", "_subs", "_verified", "_pre", "_plans",
                 "_checked", "_possible")

    def __init__(self, text: str, regions: Sequence[str]) -> None:
        self.text = text
        self.regions = tuple(regions)
        self._groups = _region_groups(self.regions)
        self._plans: dict[tuple[int, int | None], list[_PlanEntry]] = {}
        self._candidates: dict[int, tuple[int, str] | None] = {}
        self._subs: dict[tuple[int, str], tuple[tuple[int, str, frozenset[str]], ...]] = {}
        self._verified: dict[tuple[str, str], bool] = {}
        self._checked: dict[_PhoneNumber, bool] = {}
        self._pre: dict[str, _PreParsed] = {}
        self._possible: dict[str, frozenset[str]] = {}

    def find(self, region: str, begin: int = 0, stop: int | None = None) -> list[tuple[int, int]]:
        """``PhoneNumberMatcher(text, region, leniency=VALID)``'s matches as (start, end); from ``begin`` (where
        the matcher's search must be able to start: no candidate may cross it) up to candidates that start before
        ``stop``."""
        out = []
        plan = self._plan(begin, stop)
        k = 0
        while k < len(plan):
            start, candidate, subs = plan[k]
            if stop is not None and start >= stop:
                break
            k += 1
            for offset, sub, possible in subs:
                if region in possible and self._verify(sub, region):
                    end = offset + len(sub)
                    out.append((offset, end))
                    if end != start + len(candidate):  # an inner match: the search resumes inside the candidate
                        plan, k = self._plan(end, stop), 0
                    break
        return out

    def has_candidates(self, begin: int, stop: int | None = None) -> bool:
        """Whether ``find(region, begin, stop)`` has anything to parse, for any region."""
        return bool(self._plan(begin, stop))

    def _plan(self, index: int,
              stop: int | None = None) -> list[tuple[int, str, tuple[tuple[int, str, frozenset[str]], ...]]]:
        """The candidates from ``index`` on (those starting before ``stop``), as long as none of them matches
        (each search resumes after the previous candidate), keeping those with something worth parsing."""
        key = (index, stop)
        plan = self._plans.get(key)
        if plan is None:
            plan = []
            i = index
            text = self.text
            endpos = len(text) if stop is None else stop  # (a zone's end: no candidate crosses it)
            while True:
                # finditer walks the candidates exactly as the matcher does (each search resumes at the end of
                # the previous one) until a candidate is cut short at a second number ("…/x…")
                for m in _PH_PATTERN.finditer(text, i, endpos):
                    start, candidate = m.start(), m.group()
                    if stop is not None and start >= stop:
                        break
                    if ("/" in candidate or "\\" in candidate) and _PH_SECOND_NUMBER_START.search(candidate):
                        break
                    if _has_min_digits(candidate):
                        subs = self._sub_candidates(start, candidate)
                        if subs:
                            plan.append((start, candidate, subs))
                else:
                    break
                if stop is not None and start >= stop:
                    break
                found = self._candidate(start, endpos)  # the cut candidate, then go on after it
                if found is None:  # pragma: no cover - a match was found at this very position
                    break
                start, candidate = found
                subs = self._sub_candidates(start, candidate)
                if subs:
                    plan.append((start, candidate, subs))
                i = start + len(candidate)
            self._plans[key] = plan
        return plan

    def _candidate(self, index: int, endpos: int) -> tuple[int, str] | None:
        if index in self._candidates:
            return self._candidates[index]
        text = self.text
        digit = _ANY_DIGIT.search(text, index, endpos)
        found = None
        if digit is not None:
            # a match starts at most 10 characters (two lead groups) before its first digit
            m = _PH_PATTERN.search(text, max(index, digit.start() - 10), endpos)
            if m is not None:
                candidate = m.group()
                if "/" in candidate or "\\" in candidate:
                    second = _PH_SECOND_NUMBER_START.search(candidate)
                    if second:
                        candidate = candidate[:second.start()]
                found = (m.start(), candidate)
        self._candidates[index] = found
        return found

    def _sub_candidates(self, offset: int, candidate: str) -> tuple[tuple[int, str, frozenset[str]], ...]:
        """``_extract_match``'s tries, in order, that pass the region-independent checks of
        ``_parse_and_verify`` (the whole candidate, then the inner matches), each with the regions where it may
        be valid."""
        key = (offset, candidate)
        subs = self._subs.get(key)
        if subs is not None:
            return subs
        if not _has_min_digits(candidate):  # its inner matches have even fewer digits
            self._subs[key] = ()
            return ()
        tries: list[tuple[int, str]] = []
        if not ("/" in candidate and _PH_SLASH_SEPARATED_DATES.search(candidate)) and not (
                " " in candidate and _PH_TIME_STAMPS.search(candidate)
                and _PH_TIME_STAMPS_SUFFIX.match(self.text, offset + len(candidate))):
            tries.append((offset, candidate))
            plain = not candidate.translate(_PLAIN_NUMBER_CHARS)
            for inner, needed in (_PH_PLAIN_INNER if plain else _PH_INNER_NEEDS):
                if not needed(candidate):
                    continue  # the pattern cannot match without these characters
                group_match = inner.search(candidate)
                first = True
                while group_match:
                    if first:
                        before = candidate[:group_match.start()]
                        tries.append((offset,
                                      before.rstrip(_PLAIN_NON_WORD) if plain else _trim_unwanted_end(before)))
                        first = False
                    inside = group_match.group(1)
                    tries.append((offset + group_match.start(1),
                                  inside.rstrip(_PLAIN_NON_WORD) if plain else _trim_unwanted_end(inside)))
                    group_match = inner.search(candidate, group_match.start() + 1)
        kept = []
        for i, (sub_offset, sub) in enumerate(tries):
            if (sub_offset, sub) in tries[:i]:
                continue  # the same try again (an inner match equal to the whole one): the same outcome
            possible = self._possible.get(sub)
            if possible is None:
                possible = self._possible[sub] = self._regions_for(sub)
            if possible and self._plausible(sub, sub_offset):
                kept.append((sub_offset, sub, possible))
        subs = self._subs[key] = tuple(kept)
        return subs

    def _regions_for(self, sub: str) -> frozenset[str]:
        """The regions where ``sub`` may be a valid number (none when it does not parse). Numbers written with
        '+' may be valid anywhere; for the others ``_maybe_national`` decides per group of regions; for a plain
        number (ASCII digits and `` .-()/[]`` only) all the groups are asked at once (``_national_groups``),
        before anything else, since most candidates are no number in any region."""
        digits = sub.translate(_NUMBER_SEPARATORS)
        if digits.isascii() and digits.isdigit():
            if len(digits) < _PHONE_MIN_DIGITS:
                return _NO_REGIONS
            accept = _national_filter(self.regions)  # any group at all: one quick test rejects most
            if accept is not None and accept.match(digits) is None:
                return _NO_REGIONS
            rx, names = _national_groups(self.regions)
            m = rx.match(digits)
            allowed = [region for name, group in names if m.group(name) is not None for region in group]
            if not allowed:
                return _NO_REGIONS
            if len(sub) > 250:
                return _NO_REGIONS  # (parse refuses it)
            national = sub.lstrip(" .-()/[]").rstrip(" .-()/[]")  # _extract_possible_number, plain
            self._pre[sub] = _PreParsed(national, None, False, digits, True)
            return frozenset(allowed)
        pre = self._pre.get(sub)
        if pre is None:
            parsed = _preparse(sub)
            if parsed is None:
                return _NO_REGIONS  # parse raises whatever the region
            pre = self._pre[sub] = parsed
        if pre.plus:
            return frozenset(self.regions)
        digits = pre.digits
        n, first = len(digits), digits[:1]
        found: list[str] = []
        for same, group, shortest, idd_first in self._groups:
            if n < shortest and idd_first is not None and first not in idd_first:
                continue  # too short for a national number, and no IDD (see _maybe_national)
            if _maybe_national(digits, same, pre.plain):
                found.extend(group)
        return frozenset(found)

    def _verify(self, candidate: str, region: str) -> bool:
        """``parse`` + ``_verify`` at leniency VALID. A number whose calling code came after a '+' does not depend
        on the region, so that outcome is shared by all regions."""
        verified = self._verified
        ok = verified.get((candidate, "+"))
        if ok is None:
            ok = verified.get((candidate, region))
            if ok is None:
                num = _parse(candidate, region, self._pre[candidate])
                if num is None:
                    ok = False
                else:
                    # the rest depends on the parse only (US and CA often parse a number alike)
                    ok = self._checked.get(num)
                    if ok is None:
                        ok = self._checked[num] = (_is_valid_number(num)
                                                   and _contains_only_valid_x_chars(num, candidate)
                                                   and _national_prefix_present_if_required(num))
                verified[(candidate, "+" if num is not None and num.source == _FROM_PLUS else region)] = ok
        return ok

    def _plausible(self, candidate: str, offset: int) -> bool:
        """The region-independent checks of ``_parse_and_verify`` (brackets, page ranges, adjacent letters), and
        a digit count below which no region or calling code has a valid number."""
        if not candidate or not _has_min_digits(candidate):
            return False
        if not _PH_BRACKETS.isdisjoint(candidate) and not _PH_MATCHING_BRACKETS.fullmatch(candidate):
            return False  # (without brackets the pattern is "one or more non-brackets": it matches)
        if "(" in candidate and "-" in candidate and _PH_PUB_PAGES.search(candidate):
            return False
        text = self.text
        if offset > 0 and not _PH_LEAD_PATTERN.match(candidate):
            previous = text[offset - 1]
            if _is_invalid_punctuation(previous) or _is_latin_letter(previous):
                return False
        end = offset + len(candidate)
        if end < len(text):
            following = text[end]
            if _is_invalid_punctuation(following) or _is_latin_letter(following):
                return False
        return True


def _has_min_digits(candidate: str) -> bool:
    return sum(map(str.isdigit, candidate)) >= _PHONE_MIN_DIGITS


def _trim_unwanted_end(candidate: str) -> str:
    m = _PH_UNWANTED_END_CHARS.search(candidate)
    return candidate[:m.start()] if m else candidate
