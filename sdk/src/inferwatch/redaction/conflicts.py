"""Presidio's handling of overlapping findings: the analyzer's duplicate removal, the anonymizer's conflict
resolution, and its ``replace`` operator (each finding becomes ``<ENTITY_TYPE>``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .findings import _R, Finding
from .rules import PLACEHOLDERS


def _remove_duplicates(results: list[_R]) -> list[_R]:
    """Presidio's ``EntityRecognizer.remove_duplicates``: drop zero scores and results contained in a result of
    the same type with an equal or higher score; returns them ordered by (-score, start, -length)."""
    unique = sorted(set(results), key=lambda r: (r.entity, r.start, -(r.end - r.start), -r.score))
    kept: list[_R] = []
    active: list[_R] = []
    entity = None
    for r in unique:
        if r.entity != entity:
            entity, active = r.entity, []
        if r.score == 0:
            continue
        active = [a for a in active if a.end >= r.start]
        if any(r.start >= a.start and r.end <= a.end and r.score <= a.score for a in active):
            continue
        kept.append(r)
        active.append(r)
    return sorted(kept, key=lambda r: (-r.score, r.start, -(r.end - r.start)))


def resolve_conflicts(text: str, findings: Sequence[Finding]) -> list[Finding]:
    """What Presidio's ``AnonymizerEngine.anonymize`` replaces, for ``findings`` in analyzer order (the default
    ``MERGE_SIMILAR_OR_CONTAINED`` strategy, then the merge of same-type findings separated by spaces)."""
    results = [_R(f.entity_type, f.start, f.end, f.score, "") for f in findings]
    return [Finding(r.entity, r.start, r.end, r.score) for r in _resolve(text, results)]


_SPACES_ONLY = re.compile(r"^( )+$")


def _resolve(text: str, results: list[_R]) -> list[_R]:
    results = [_R(r.entity, r.start, r.end, r.score, r.rec) for r in results]
    results.sort(key=lambda r: (r.start, r.end))
    merged: list[_R] = []
    others = results.copy()
    for r in results:
        others.remove(r)
        for o in others:
            if o.entity != r.entity or _intersects(r, o) == 0:
                continue
            o.start, o.end, o.score = min(r.start, o.start), max(r.end, o.end), max(r.score, o.score)
            break
        else:
            others.append(r)
            merged.append(r)
    unique: list[_R] = []
    others = merged.copy()
    for r in merged:
        others.remove(r)
        if not any(_has_conflict(r, o) for o in others):
            others.append(r)
            unique.append(r)
    out: list[_R] = []
    prev: _R | None = None
    for r in unique:
        if prev is not None and prev.entity == r.entity and _SPACES_ONLY.search(text[prev.end:r.start]):
            out.remove(prev)
            r.start = prev.start
        out.append(r)
        prev = r
    return out


def _intersects(a: _R, b: _R) -> int:
    if a.end < b.start or b.end < a.start:
        return 0
    return min(a.end, b.end) - max(a.start, b.start)


def _has_conflict(a: _R, b: _R) -> bool:
    if a.start == b.start and a.end == b.end:
        return a.score <= b.score
    return b.start <= a.start and b.end >= a.end


def _replace(text: str, results: list[_R], counts: dict[str, int]) -> str:
    """``AnonymizerEngine._operate`` with the ``replace`` operator (right to left; partial overlaps become adjacent
    placeholders)."""
    out = text
    last = len(text)
    for r in sorted(results, key=lambda r: (r.start, r.end), reverse=True):
        end = min(r.end, last)
        last = r.start
        out = out[:r.start] + PLACEHOLDERS.get(r.entity, f"<{r.entity}>") + out[end:]
        counts[r.entity] = counts.get(r.entity, 0) + 1
    return out
