"""Recent provider response ids → the trace and span of the call that produced them.

Why: apps often send feedback by the provider's response id (what they have at hand) seconds after the call,
while its span may still sit in the export queue. Resolving the id here gives the feedback its trace id at once,
so the collector can link it even before the call's row has arrived. Bounded: the oldest ids are forgotten.
"""

from __future__ import annotations

MAX_REMEMBERED = 4096

# Two generations of dicts, no lock: each dict operation is atomic under the GIL, and this runs for every call that
# has a response id (on the caller's thread as it ends, or, for most OpenAI calls, in the export thread as it is
# recorded; the feedback stage finds the still-queued ones in the span queue), so it stays small: one dict store,
# and when the newer dict is full it becomes the older one (the older one's ids are forgotten). So between
# MAX_REMEMBERED and twice that many of the latest ids are known. An id remembered twice keeps its newest trace.
_ids: dict[str, tuple[int, int]] = {}
_older: dict[str, tuple[int, int]] = {}


def remember(response_id: str, trace_id: int, span_id: int) -> None:
    """Note that ``response_id`` came from the call recorded as (``trace_id``, ``span_id``): the ids as numbers
    (written out as hex only when looked up, which few calls ever are)."""
    global _ids, _older
    ids = _ids
    ids[response_id] = (trace_id, span_id)
    if len(ids) >= MAX_REMEMBERED:
        _older, _ids = ids, {}


def lookup(response_id: str) -> tuple[str, str] | None:
    """The (trace_id, span_id) of a recently recorded call with this response id, if any, as 32/16 hex chars."""
    ids = _ids.get(response_id) or _older.get(response_id)
    if ids is None:
        return None
    return as_hex(ids[0], ids[1])


def as_hex(trace_id: int, span_id: int) -> tuple[str, str]:
    """The ids as 32 and 16 hex characters."""
    return trace_id.to_bytes(16, "big").hex(), span_id.to_bytes(8, "big").hex()


def clear() -> None:
    global _ids, _older
    _ids, _older = {}, {}
