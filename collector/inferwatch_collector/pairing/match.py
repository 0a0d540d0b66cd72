"""Which LLM spans describe the same provider request. Pure functions over :class:`CallView`.

Two spans are one request when they come from different instrumentation scopes (one library never emits two
spans for one request, which keeps parallel calls of one library apart) and:

1. both carry a response id: it is the same (provider ids are unique); or, without two ids,
2. one is the other's parent, and that parent has exactly one LLM child (a generation that wraps two calls is
   merged with neither), or
3. they are siblings (same parent) whose time intervals overlap and whose models agree (equal, or one a dated
   snapshot of the other: ``claude-sonnet-4-5`` and ``claude-sonnet-4-5-20250929``); or
4. both are roots of their own traces (a library that starts a new trace beside the client's), of one service, with
   agreeing models, starting and ending within :data:`ROOT_TOLERANCE_US` of each other.

Providers, when both are known, must agree. When a span has several candidates, it is paired with the closest in
time; a group never holds two spans of one scope. :func:`group_calls` returns the groups.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from typing import Iterable, NamedTuple, Sequence

from ..rows import LlmCallRow
from .held import SCOPE_KEY


ROOT_TOLERANCE_US = 250_000


class CallView(NamedTuple):
    """What matching reads of an LLM row (held in memory, or already in llm_calls)."""

    span_id: str
    parent_span_id: str
    trace_id: str
    response_id: str
    provider: str
    request_model: str
    response_model: str
    start_time: int  # µs
    end_time: int
    scope: str
    service: str

    @classmethod
    def of(cls, row: LlmCallRow) -> "CallView":
        return cls(row.span_id, row.parent_span_id, row.trace_id, row.response_id, row.provider,
                   row.request_model, row.response_model, row.start_time, row.end_time,
                   row.attributes.get(SCOPE_KEY, ""), row.service_name)


def models_agree(a: CallView, b: CallView) -> bool:
    """Some model name of ``a`` equals one of ``b``, or is a dated snapshot of it; true when either has none."""
    left = {m for m in (a.request_model, a.response_model) if m}
    right = {m for m in (b.request_model, b.response_model) if m}
    if not left or not right:
        return True
    return any(x == y or x.startswith(y + "-") or y.startswith(x + "-") for x in left for y in right)


def same_request(a: CallView, b: CallView, llm_children: dict[str, int]) -> bool:
    """Whether ``a`` and ``b`` describe one provider request (rules of the module docstring).
    ``llm_children``: span id -> number of LLM spans whose parent it is."""
    if a.scope == b.scope or a.span_id == b.span_id:
        return False
    if a.provider and b.provider and a.provider != b.provider:
        return False
    if a.response_id and b.response_id:
        return a.response_id == b.response_id
    if a.trace_id != b.trace_id:
        return (not a.parent_span_id and not b.parent_span_id and a.service == b.service
                and abs(a.start_time - b.start_time) <= ROOT_TOLERANCE_US
                and abs(a.end_time - b.end_time) <= ROOT_TOLERANCE_US and models_agree(a, b))
    if b.parent_span_id == a.span_id:
        return llm_children.get(a.span_id, 0) == 1
    if a.parent_span_id == b.span_id:
        return llm_children.get(b.span_id, 0) == 1
    return (a.parent_span_id == b.parent_span_id and a.start_time <= b.end_time and b.start_time <= a.end_time
            and models_agree(a, b))


def _distance(a: CallView, b: CallView) -> int:
    return abs(a.start_time - b.start_time) + abs(a.end_time - b.end_time)


_NEAREST = 4  # siblings and roots of another scope looked at on each side of a view's start time


class _ByStart:
    """Views sorted by start time, for the few nearest to a time."""

    def __init__(self) -> None:
        self.views: list[CallView] = []
        self.starts: list[int] = []

    def finish(self) -> None:
        self.views.sort(key=lambda v: v.start_time)
        self.starts = [v.start_time for v in self.views]

    def nearest(self, time_us: int) -> list[CallView]:
        at = bisect_left(self.starts, time_us)
        return self.views[max(0, at - _NEAREST):at + _NEAREST]


class _Candidates:
    """Where a view's possible twins are found without comparing every pair: by response id, parent and children,
    and, among siblings and roots, the few of each other scope nearest in start time (twins start milliseconds
    apart, and a pairing takes the closest anyway)."""

    def __init__(self, views: Sequence[CallView]) -> None:
        self.by_response: dict[str, list[CallView]] = defaultdict(list)
        self.by_span: dict[str, CallView] = {}
        self.children: dict[str, list[CallView]] = defaultdict(list)
        # (trace, parent) -> scope -> siblings; for roots also service -> scope -> roots of every trace
        self.siblings: dict[tuple[str, str], dict[str, _ByStart]] = defaultdict(lambda: defaultdict(_ByStart))
        self.roots: dict[str, dict[str, _ByStart]] = defaultdict(lambda: defaultdict(_ByStart))
        for view in views:
            self.by_span[view.span_id] = view
            if view.response_id:
                self.by_response[view.response_id].append(view)
            if view.parent_span_id:
                self.children[view.parent_span_id].append(view)
            else:
                self.roots[view.service][view.scope].views.append(view)
            self.siblings[(view.trace_id, view.parent_span_id)][view.scope].views.append(view)
        for table in (*self.siblings.values(), *self.roots.values()):
            for by_start in table.values():
                by_start.finish()
        self.llm_children = {span_id: len(found) for span_id, found in self.children.items()}

    def of(self, view: CallView) -> list[CallView]:
        found: dict[str, CallView] = {}
        for other in self.by_response.get(view.response_id, ()) if view.response_id else ():
            found[other.span_id] = other
        parent = self.by_span.get(view.parent_span_id) if view.parent_span_id else None
        if parent is not None:
            found[parent.span_id] = parent
        for other in self.children.get(view.span_id, ()):
            found[other.span_id] = other
        tables = [self.siblings[(view.trace_id, view.parent_span_id)]]
        if not view.parent_span_id:
            tables.append(self.roots[view.service])
        for table in tables:
            for scope, by_start in table.items():
                if scope != view.scope:
                    for other in by_start.nearest(view.start_time):
                        found[other.span_id] = other
        return [other for other in found.values() if same_request(view, other, self.llm_children)]


def group_calls(held: Sequence[CallView], written: Iterable[CallView] = ()) -> list[list[CallView]]:
    """Groups of views that are one request each, every held view in exactly one group (alone if unmatched).

    ``written``: rows already in llm_calls that a held row may turn out to duplicate; they appear in a group only
    together with a held row, and a group holds at most one of them. Near-linear in the number of views (the
    candidates of a view come from indexes, see :class:`_Candidates`).
    """
    held_ids = {h.span_id for h in held}
    written = [w for w in written if w.span_id not in held_ids]
    candidates = _Candidates(list(held) + written)
    written_ids = {w.span_id for w in written}
    group_of: dict[str, list[CallView]] = {view.span_id: [view] for view in list(held) + written}
    for view in held:
        for other in sorted(candidates.of(view), key=lambda other: (_distance(view, other), other.span_id)):
            mine, theirs = group_of[view.span_id], group_of[other.span_id]
            if mine is theirs:
                break
            scopes = {v.scope for v in mine}
            if any(v.scope in scopes for v in theirs):
                continue
            if sum(v.span_id in written_ids for v in mine + theirs) > 1:
                continue
            mine.extend(theirs)
            for member in theirs:
                group_of[member.span_id] = mine
            break
    groups: list[list[CallView]] = []
    seen: set[int] = set()
    for view in held:
        group = group_of[view.span_id]
        if id(group) not in seen:
            seen.add(id(group))
            groups.append(group)
    return groups
