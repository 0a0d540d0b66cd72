"""Which regions a number written without '+' may be valid in: a necessary condition per region, cheap enough to
skip the full parse of most candidates, and the same conditions for all regions as one pattern."""

from __future__ import annotations

import re
from typing import Any

from .plans import _meta

_RegionGroup = tuple[str, tuple[str, ...], int, "frozenset[str] | None"]

_GROUPS: dict[tuple[str, ...], tuple[tuple[str, tuple[str, ...], int, frozenset[str] | None], ...]] = {}


def _region_groups(regions: tuple[str, ...]) -> tuple[_RegionGroup, ...]:
    """Regions that share a calling code and an IDD (US and CA) give ``_maybe_national`` the same answer:
    (representative, regions, shortest national number, first characters of the IDD or None)."""
    groups = _GROUPS.get(regions)
    if groups is None:
        by_key: dict[tuple[Any, ...], list[str]] = {}
        for region in regions:
            meta = _meta(region)
            key = (meta.cc, meta.idd.pattern if meta.idd else None) if meta is not None else (region,)
            by_key.setdefault(key, []).append(region)
        out = []
        for rs in by_key.values():
            meta = _meta(rs[0])
            out.append((rs[0], tuple(rs), meta.shortest_own_number if meta else 0,
                        (meta.idd_first if meta.idd is not None else frozenset()) if meta else None))
        groups = _GROUPS[regions] = tuple(out)
    return groups


_NATIONAL_FILTERS: dict[tuple[str, ...], re.Pattern[str] | None] = {}


def _national_filter(regions: tuple[str, ...]) -> re.Pattern[str] | None:
    """The conditions of ``_national_groups`` as alternatives: its ``match`` succeeds when one group accepts the
    digits, and stops at the first that does (None: a group accepts anything)."""
    if regions not in _NATIONAL_FILTERS:
        conditions = [c for _, _, c in _national_conditions(regions)]
        _NATIONAL_FILTERS[regions] = None if not all(conditions) else re.compile("|".join(conditions) or "(?!)")
    return _NATIONAL_FILTERS[regions]


def _national_conditions(regions: tuple[str, ...]) -> list[tuple[str, tuple[str, ...], str]]:
    """Per region group: (name, its regions, ``_maybe_national(digits, group, plain=True)`` as lookaheads: its
    IDD; or the shortest length, ``own_quick`` and the national-prefix rule; '' when it accepts anything)."""
    out = []
    for k, (representative, group, _, _) in enumerate(_region_groups(regions)):
        meta = _meta(representative)
        if meta is None:
            continue  # _maybe_national: False
        national = f"(?=\\d{{{meta.shortest_own_number}}})" if meta.shortest_own_number else ""
        if meta.own_quick is not None:
            national += f"(?=(?:{meta.own_quick.pattern})\\Z)"
        if meta.np_required is not None:
            options = [f"(?={meta.npp.pattern})"] if meta.npp is not None else []
            options += [f"(?={meta.cc})", f"(?!(?:{meta.np_required.pattern})\\Z)"]
            if meta.np_free is not None:
                options.append(f"(?=(?:{meta.np_free.pattern})\\Z)")
            national += "(?:" + "|".join(options) + ")"
        condition = ("|".join(([f"(?={meta.idd.pattern})"] if meta.idd is not None else []) + [national])
                     if national else "")
        out.append((f"g{k}", group, condition))
    return out


def _national_groups(regions: tuple[str, ...]) -> tuple[re.Pattern[str], tuple[tuple[str, tuple[str, ...]], ...]]:
    """One pattern that evaluates ``_maybe_national(digits, group, plain=True)`` for every region group at once:
    each group's conditions (``_national_conditions``) followed by an empty named group that is set when they
    hold (``(?:conditions(?P<gN>)|)``: the match always succeeds). Returns the pattern and (name, regions)."""
    found = _NATIONAL_GROUPS.get(regions)
    if found is None:
        conditions = _national_conditions(regions)
        parts = [f"(?:(?:{c})(?P<{name}>)|)" for name, _, c in conditions]
        found = _NATIONAL_GROUPS[regions] = (re.compile("".join(parts)), tuple((n, g) for n, g, _ in conditions))
    return found


_NATIONAL_GROUPS: dict[tuple[str, ...], tuple[re.Pattern[str], tuple[tuple[str, tuple[str, ...]], ...]]] = {}


def _maybe_national(digits: str, region: str, plain: bool) -> bool:
    """A necessary condition for ``digits`` (a number written without '+') to parse as a valid number in
    ``region``: the region's IDD starts them (any country may follow), or they are the calling code (optional),
    national prefixes (optional) and a national number matching a number type of the calling code; and, for a
    number written without a national prefix (``plain``: no letters, so ``digits`` are the raw input's), one whose
    format does not want it written (the first matching format decides; here: not only formats that want it)."""
    meta = _meta(region)
    if meta is None:
        return False
    idd = meta.idd
    if idd is not None and (meta.idd_first is None or digits[:1] in meta.idd_first) and idd.match(digits):
        return True
    if len(digits) < meta.shortest_own_number:
        return False
    if meta.own_quick is not None and meta.own_quick.fullmatch(digits) is None:
        return False
    if (plain and meta.np_required is not None and not (meta.npp is not None and meta.npp.match(digits))
            and not digits.startswith(str(meta.cc)) and meta.np_required.fullmatch(digits)
            and not (meta.np_free is not None and meta.np_free.fullmatch(digits))):
        return False  # read as a national number without its prefix, in a format that wants the prefix
    return True
