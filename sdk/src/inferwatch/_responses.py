"""Recent provider response ids → the trace and span of the call that produced them.

Why: apps often send feedback by the provider's response id (what they have at hand) seconds after the call,
while its span may still sit in the export queue. Resolving the id here gives the feedback its trace id at once,
so the collector can link it even before the call's row has arrived. Bounded: the oldest ids are forgotten.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

MAX_REMEMBERED = 4096

_lock = threading.Lock()
_ids: OrderedDict[str, tuple[str, str]] = OrderedDict()


def remember(response_id: str, trace_id: str, span_id: str) -> None:
    """Note that ``response_id`` came from the call recorded as (``trace_id``, ``span_id``), 32/16 hex chars."""
    with _lock:
        _ids[response_id] = (trace_id, span_id)
        _ids.move_to_end(response_id)
        while len(_ids) > MAX_REMEMBERED:
            _ids.popitem(last=False)


def lookup(response_id: str) -> tuple[str, str] | None:
    """The (trace_id, span_id) of a recently recorded call with this response id, if any."""
    with _lock:
        return _ids.get(response_id)


def clear() -> None:
    with _lock:
        _ids.clear()
