"""SDK fixtures: the SDK started on an in-memory exporter, and stopped after the test.

A test that calls ``inferwatch.init()`` itself asks for ``stop_sdk`` (rather than a try/finally), so that nothing
it started or patched reaches the next test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.helpers.otlp_receiver import Receiver
from tests.helpers.sdk_recording import Recorded, reset_sdk, start_sdk


@pytest.fixture
def stop_sdk() -> Iterator[None]:
    """After the test: the SDK shut down (every patch undone), its error counters and response ids forgotten."""
    try:
        yield
    finally:
        reset_sdk()


@pytest.fixture
def sdk(stop_sdk: None) -> Recorded:
    """The SDK started by :func:`~tests.helpers.sdk_recording.start_sdk` (in-memory exporter, capture off, every
    call sampled); stopped after the test."""
    return start_sdk()


@pytest.fixture
def spans(sdk: Recorded) -> InMemorySpanExporter:
    """The span exporter of ``sdk``."""
    return sdk.exporter


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A local OTLP/HTTP receiver on a free port (test_feedback.py has its own, which waits for the SDK)."""
    r = Receiver()
    yield r
    r.close()
