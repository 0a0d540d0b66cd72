"""Injected SDK failures for the never-break-the-host tests (monkeypatching the SDK there is fault injection)."""

from __future__ import annotations

from typing import Any


class Boom(RuntimeError):
    """The injected SDK failure."""


class Raiser:
    """Raises :class:`Boom` and counts how often it was reached (a test checks the fault fired)."""

    def __init__(self) -> None:
        self.hits = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.hits += 1
        raise Boom("injected SDK failure")
