"""Numbering plans: the parts of a region's ``PhoneMetadata`` that matching and validation use, compiled on first
use from the table in :mod:`inferwatch.redaction._data`."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from .._data import _PHONE_CC_REGIONS, _PHONE_META
from .patterns import _PH_FIRST_GROUP_ONLY_PREFIX


class _Desc(NamedTuple):
    pattern: re.Pattern[str]
    lengths: tuple[int, ...]
    local_lengths: tuple[int, ...]


class _Format(NamedTuple):
    pattern: re.Pattern[str]
    leading_digits: re.Pattern[str] | None
    national_prefix_formatting_rule: str | None
    national_prefix_optional: bool


class _Meta:
    """The parts of one region's ``PhoneMetadata`` that matching and validation use (compiled on first use)."""

    __slots__ = ("cc", "idd", "npp", "transform", "general", "types", "leading_digits", "same_mobile_fixed",
                 "formats", "shortest_own_number", "own_quick", "idd_first", "np_required", "np_free",
                 "_special", "_fixed", "_mobile", "_types_by_length", "_format_chooser", "prefix_rule_formats")

    def __init__(self, raw: tuple[Any, ...]) -> None:
        cc, idd, npp, transform, general, types, leading, same, formats = raw
        self.cc: int = cc
        self.idd = re.compile(idd) if idd is not None else None
        self.idd_first = _first_chars(idd) if idd is not None else None
        self.npp = re.compile(npp) if npp else None
        self.transform: str | None = transform
        self.general = _desc(general)
        self.types: tuple[_Desc | None, ...] = tuple(_desc(t) for t in types)
        self.leading_digits = re.compile(leading) if leading else None
        self.same_mobile_fixed: bool = same
        self.formats = tuple(_Format(re.compile(p), re.compile(ld) if ld else None, rule, optional)
                             for p, ld, rule, optional in formats or ())
        *special, self._fixed, self._mobile = self.types
        self._special = tuple(d for d in special if d is not None)
        self._types_by_length: dict[int, re.Pattern[str] | None] = {}
        self._format_chooser: re.Pattern[str] | None = None
        # the shortest national number any region of this calling code accepts (a number is valid only when one
        # of the type descriptions matches, lengths included), provided national-prefix handling can only shorten
        # a number (no transform rule, or one that keeps a captured group); else 0 (no shortcut)
        shortest = 0
        own_quick = None
        if transform is None or re.fullmatch(r"\\[0-9]", transform):
            own = [_PHONE_META[f"001/{cc}" if x == "001" else x] for x in _PHONE_CC_REGIONS.get(cc, ())]
            shortest = min((_shortest_valid(raw) for raw in own), default=0)
            if own and all(raw[4] for raw in own):
                # a valid number matches a number type of its region: the union over the calling code's regions
                valid = "|".join(dict.fromkeys(f"(?:{t[0]})" for raw in own for t in raw[5] if t is not None))
                if transform is None:
                    np = f"(?:{npp})?" if npp else ""
                    own_quick = re.compile(f"(?:{cc}{np})?{np}(?:{valid})")
                else:  # a transform keeps a suffix of the number: any suffix
                    own_quick = re.compile(f"\\d*(?:{valid})")
        self.own_quick: re.Pattern[str] | None = own_quick
        # the formats of the calling code's main region, split by whether they want the national prefix written
        # (what _national_prefix_present_if_required checks for a number without one)
        required: list[str] = []
        free: list[str] = []
        main = _PHONE_CC_REGIONS.get(cc, ("",))[0]
        main_raw = _PHONE_META.get(f"001/{cc}" if main == "001" else main)
        rule_formats: list[tuple[str | None, str, bool]] = []
        for pattern, leading, rule, optional in (main_raw[8] or ()) if main_raw else ():
            alternative = (f"(?={leading})" if leading else "") + f"(?:{pattern})"
            wants_prefix = bool(rule and not optional and not _PH_FIRST_GROUP_ONLY_PREFIX.fullmatch(rule))
            (required if wants_prefix else free).append(alternative)
            rule_formats.append((leading, pattern, wants_prefix))
        self.prefix_rule_formats: tuple[tuple[str | None, str, bool], ...] = tuple(rule_formats)
        self.np_required = re.compile("|".join(required)) if required else None
        self.np_free = re.compile("|".join(free)) if free else None
        self.shortest_own_number: int = shortest

    def is_valid_nsn(self, nsn: str) -> bool:
        """``_number_type_helper(nsn, metadata) != UNKNOWN``: the general description matches, and one of the
        number types does (only whether one does matters here, so the types that accept the length are tried as
        one pattern)."""
        if not _matches_desc(nsn, self.general):
            return False
        n = len(nsn)
        if n not in self._types_by_length:
            descs = [*self._special, self._fixed, *(() if self.same_mobile_fixed else (self._mobile,))]
            patterns = [d.pattern.pattern for d in descs if d is not None and (not d.lengths or n in d.lengths)]
            self._types_by_length[n] = re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None
        rx = self._types_by_length[n]
        return rx is not None and rx.fullmatch(nsn) is not None

    def choose_format(self, nsn: str) -> _Format | None:
        """``_choose_formatting_pattern_for_number``: the first format whose leading digits and pattern match
        (the formats as one pattern, each alternative ending in a named empty group that says which it was)."""
        if not self.formats:
            return None
        if self._format_chooser is None:
            self._format_chooser = re.compile("|".join(
                (f"(?={f.leading_digits.pattern})" if f.leading_digits is not None else "")
                + f"(?:{f.pattern.pattern})\\Z(?P<f{i}>)" for i, f in enumerate(self.formats)))
        m = self._format_chooser.match(nsn)
        return None if m is None else self.formats[int((m.lastgroup or "f0")[1:])]


def _shortest_valid(raw: tuple[Any, ...]) -> int:
    """The shortest national number any number type of this region accepts."""
    general = raw[4]
    general_min = min(general[1]) if general and general[1] else 0
    lengths = [min(t[1]) if t[1] else general_min for t in raw[5] if t is not None]
    return min(lengths, default=general_min)


def _desc(raw: tuple[str, tuple[int, ...], tuple[int, ...]] | None) -> _Desc | None:
    if raw is None:
        return None
    return _Desc(re.compile(raw[0]), raw[1], raw[2])


def _matches_desc(nsn: str, desc: _Desc | None) -> bool:
    if desc is None:
        return False
    if desc.lengths and len(nsn) not in desc.lengths:
        return False
    return desc.pattern.fullmatch(nsn) is not None


def _match_national_number(number: str, desc: _Desc | None) -> bool:
    return desc is not None and desc.pattern.fullmatch(number) is not None


_META_CACHE: dict[str, _Meta] = {}


def _meta(key: str) -> _Meta | None:
    meta = _META_CACHE.get(key)
    if meta is None:
        raw = _PHONE_META.get(key)
        if raw is None:
            return None
        meta = _META_CACHE[key] = _Meta(raw)
    return meta


def _meta_for_cc(cc: int, region: str) -> _Meta | None:
    return _meta(f"001/{cc}" if region == "001" else region)


def _first_chars(pattern: str) -> frozenset[str] | None:
    """The characters a match of ``pattern`` can start with, or None when that is not simple to tell."""
    try:
        from re import _parser as parser  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as parser  # type: ignore[no-redef]

    def first(items: Any) -> set[str] | None:
        if not len(items):
            return None
        op, arg = items[0]
        name = str(op)
        if name == "LITERAL":
            return {chr(arg)}
        if name == "IN":
            chars: set[str] = set()
            for kind, value in arg:
                if str(kind) == "LITERAL":
                    chars.add(chr(value))
                elif str(kind) == "RANGE":
                    chars.update(chr(c) for c in range(value[0], value[1] + 1))
                else:
                    return None
            return chars
        if name == "BRANCH":
            out: set[str] = set()
            for branch in arg[1]:
                sub = first(branch)
                if sub is None:
                    return None
                out |= sub
            return out
        if name == "SUBPATTERN":
            return first(arg[-1])
        if name in ("MAX_REPEAT", "MIN_REPEAT") and arg[0] >= 1:
            return first(arg[2])
        return None

    try:
        found = first(parser.parse(pattern))
    except Exception:  # noqa: BLE001 - no shortcut then
        return None
    return frozenset(found) if found else None


def _phone_min_digits() -> int:
    """Fewer digits than this are never a valid number: national numbers of the default regions, or a calling
    code (1+ digits) plus the shortest national number anywhere (general descriptions cover every type)."""
    def shortest(raw: tuple[Any, ...]) -> int:
        lengths = raw[4][1] if raw[4] else ()
        return min(lengths) if lengths else 2
    national = min(shortest(_PHONE_META[r]) for r in ("US", "GB", "DE", "FR", "IL", "IN", "CA", "BR"))
    anywhere = min(shortest(raw) for raw in _PHONE_META.values())
    return max(2, min(national, 1 + anywhere))


_PHONE_MIN_DIGITS = _phone_min_digits()
