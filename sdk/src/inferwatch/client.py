"""The process-wide SDK state: the running pipeline and its options, ``None`` until ``inferwatch.init()``.

Every recording path reads :func:`get_pipeline` (or ``_pipeline`` directly, on the hot path) first and does
nothing when it is ``None``, so importing the SDK, or calling instrumented code before ``init()``, costs nothing
and changes nothing (architecture §4 rule 2). :mod:`inferwatch.lifecycle` sets and clears it.
"""

from __future__ import annotations

from typing import Any

from .options import Options

_pipeline: Any = None  # inferwatch.telemetry.pipeline.Pipeline once initialised
_options: Options | None = None


def get_pipeline() -> Any:
    """The running pipeline, or ``None`` before ``init()`` (every recorder checks this first)."""
    return _pipeline


def get_options() -> Options | None:
    """The running configuration, or ``None`` before ``init()``."""
    return _options


def set_running(pipeline: Any, options: Options | None) -> None:
    """Publish the state ``init()`` made (``pipeline`` None: the SDK is disabled or stopped)."""
    global _pipeline, _options
    _pipeline, _options = pipeline, options
