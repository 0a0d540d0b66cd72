"""The SDK started on an in-memory span exporter, and what it exported read back.

The fixtures built on these (``sdk``, ``spans``, ``stop_sdk``) are in tests/sdk/conftest.py.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import inferwatch
from inferwatch import _guard, _responses
from tests.helpers.otel_exporters import NullMetricExporter


def finished(exporter: InMemorySpanExporter) -> list[Any]:
    """Every span exported so far, after a flush (which must succeed)."""
    assert inferwatch.flush(5)
    return list(exporter.get_finished_spans())


class Recorded:
    """The exporter of a started SDK."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.exporter = exporter

    def spans(self) -> list[Any]:
        return finished(self.exporter)

    def one(self) -> dict[str, Any]:
        """The one span exported since the last ``one()``: its attributes, and the span under ``"_span"``."""
        spans = self.spans()
        assert len(spans) == 1, [s.name for s in spans]
        self.exporter.clear()
        return {"_span": spans[0], **dict(spans[0].attributes)}

    def one_collected(self, timeout_s: float = 5.0) -> dict[str, Any]:
        """``one()`` for a call that a finaliser records: collect garbage until a span is exported or
        ``timeout_s`` passes (a collection another thread is running returns ``gc.collect()`` at once, with the
        finaliser perhaps still to run)."""
        deadline = time.monotonic() + timeout_s
        gc.collect()
        while not self.spans() and time.monotonic() < deadline:
            time.sleep(0.01)
            gc.collect()
        return self.one()


def start_sdk(**options: Any) -> Recorded:
    """``inferwatch.init()`` on a new in-memory exporter, metrics going nowhere, capture off, every call sampled
    (whatever the environment says); ``options`` override any of these."""
    exporter = InMemorySpanExporter()
    inferwatch.init(**{"exporter": exporter, "metric_exporter": NullMetricExporter(), "schedule_delay_ms": 50,
                       "sample_rate": 1.0, "capture": "off", **options})
    return Recorded(exporter)


def reset_sdk() -> None:
    """Shut the SDK down (which undoes every patch) and forget its error counters and remembered response ids."""
    inferwatch.shutdown()
    _guard.reset()
    _responses.clear()
