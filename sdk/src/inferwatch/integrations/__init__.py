"""Provider integrations (OpenAI, Anthropic): patch tables that can always be undone.

Each integration registers how to undo what it installed; :func:`uninstrument_all` (called by ``shutdown()``)
restores every original attribute, so nothing stays patched after the SDK stops (architecture §4 rule 2).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

_lock = threading.Lock()
_undo: dict[str, Callable[[], Any]] = {}


class DidNotEnable(Exception):
    """The integration cannot be installed (library missing or too old); the message says which."""


def register_undo(name: str, undo: Callable[[], Any]) -> bool:
    """Remember how to undo integration ``name``; False when it is already installed (idempotent install)."""
    with _lock:
        if name in _undo:
            return False
        _undo[name] = undo
        return True


def uninstrument(name: str) -> bool:
    """Undo one integration; False when it was not installed."""
    with _lock:
        undo = _undo.pop(name, None)
    if undo is None:
        return False
    undo()
    return True


def uninstrument_all() -> None:
    """Undo every installed integration."""
    with _lock:
        names = list(_undo)
    for name in names:
        uninstrument(name)
