"""Teardown shared by the tests that build their own ``telemetry.pipeline.Pipeline``s."""

from __future__ import annotations

from collections.abc import Iterable

from inferwatch.telemetry.pipeline import Pipeline


def stop_all(pipelines: Iterable[Pipeline], timeout: float) -> None:
    """Shut each pipeline down, then wait for its export thread: a shutdown that gave up (its point in some tests)
    leaves the thread finishing its export attempt, which must not log into a later test or into pytest's closed
    streams at the end of the session."""
    pipelines = list(pipelines)
    for pipeline in pipelines:
        pipeline.shutdown(timeout)
    for pipeline in pipelines:
        senders = pipeline.span_export.senders
        for thread in [pipeline._thread, *(senders.threads() if senders is not None else ())]:
            if thread is not None:
                thread.join(15.0)
                assert not thread.is_alive(), f"{thread.name} outlived shutdown by 15 s"
