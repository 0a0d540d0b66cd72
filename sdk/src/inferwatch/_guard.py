"""Never break the host: SDK code around a user's call runs inside :func:`guard`.

An exception in our code is logged once per place (never with payloads), counted in ``internal_errors``, and
swallowed; the user's own call and its exceptions are never wrapped here (architecture §4 rule 1).
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import Iterator

log = logging.getLogger("inferwatch")

_lock = threading.Lock()
_logged: set[str] = set()
internal_errors: dict[str, int] = {}


def record_internal_error(where: str, exc: BaseException) -> None:
    """Count an SDK failure; log its type (not its message, which may quote user data) the first time."""
    with _lock:
        internal_errors[where] = internal_errors.get(where, 0) + 1
        first = where not in _logged
        _logged.add(where)
    if first:
        log.warning("inferwatch: internal error in %s (%s); the application is unaffected, further errors "
                    "here are only counted", where, type(exc).__name__)


@contextmanager
def guard(where: str) -> Iterator[None]:
    """Run SDK work; any ``Exception`` is recorded and swallowed."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the whole point
        record_internal_error(where, exc)


def reset() -> None:
    """Forget counters and logged places (tests, and ``shutdown()``)."""
    with _lock:
        internal_errors.clear()
        _logged.clear()
