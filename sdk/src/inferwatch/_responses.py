"""Recent provider response ids → the trace and span of the call that produced them.

Why: apps often send feedback by the provider's response id (what they have at hand) seconds after the call,
while its span may still sit in the export queue. Resolving the id here gives the feedback its trace id at once,
so the collector can link it even before the call's row has arrived. Bounded: the oldest ids are forgotten.
"""

from __future__ import annotations

from collections import deque

MAX_REMEMBERED = 4096

# No lock: each dict/deque operation is atomic under the GIL, and this runs on the caller's thread at the end of
# every call that has a response id, so it stays small. An id remembered twice keeps its newest trace; it is
# forgotten a little early, when its older entry leaves the bound (provider response ids are unique anyway).
_ids: dict[str, tuple[int, int]] = {}
_order: deque[str] = deque()


def remember(response_id: str, trace_id: int, span_id: int) -> None:
    """Note that ``response_id`` came from the call recorded as (``trace_id``, ``span_id``): the ids as numbers
    (written out as hex only when looked up, which few calls ever are)."""
    _ids[response_id] = (trace_id, span_id)
    _order.append(response_id)
    if len(_order) > MAX_REMEMBERED:
        try:
            _ids.pop(_order.popleft(), None)
        except IndexError:  # another thread emptied it meanwhile (clear())
            pass


def lookup(response_id: str) -> tuple[str, str] | None:
    """The (trace_id, span_id) of a recently recorded call with this response id, if any, as 32/16 hex chars."""
    ids = _ids.get(response_id)
    if ids is None:
        return None
    return ids[0].to_bytes(16, "big").hex(), ids[1].to_bytes(8, "big").hex()


def clear() -> None:
    _ids.clear()
    _order.clear()
