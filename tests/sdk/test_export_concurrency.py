"""Span export keeps up with a collector that answers slowly: several requests in flight (never more than the
setting), batches that grow with the backlog, ``Retry-After`` honoured by every sender, and ``flush()`` waiting for
the answers. Against a real OTLP/HTTP receiver on 127.0.0.1 (tests/helpers/otlp_receiver.py)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from inferwatch import _guard
from inferwatch.options import Options, resolve
from inferwatch.telemetry.pipeline import Pipeline
from tests.helpers.otlp_receiver import Receiver, ScriptedStatus
from tests.helpers.pipelines import stop_all


@pytest.fixture
def pipeline_for() -> Iterator[Callable[..., Pipeline]]:
    made: list[Pipeline] = []

    def make(url: str, **overrides: Any) -> Pipeline:
        settings = {"endpoint": url, "api_key": "k", "schedule_delay_ms": 20, "export_timeout_s": 10.0,
                    **overrides}
        made.append(Pipeline(Options(**settings)))
        return made[-1]

    yield make
    stop_all(made, timeout=1.0)
    _guard.reset()


def _end(p: Pipeline, names: range | list[int]) -> None:
    for i in names:
        p.span(f"s{i}", trace.SpanKind.CLIENT).end()


def _names(body: bytes) -> list[str]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return [s.name for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]


def _wait_for(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_slow_collector_gets_several_requests_at_once_never_more_than_the_setting(
        receiver: Receiver, pipeline_for: Callable[..., Pipeline]) -> None:
    receiver.delay_s = 0.3
    p = pipeline_for(receiver.url, max_concurrent_exports=3, max_export_batch_size=10, max_backlog_batch_size=10)
    _end(p, range(200))

    assert p.flush(30.0) is True

    assert 1 < receiver.most_in_flight <= 3
    names = [n for body in receiver.bodies("/v1/traces") for n in _names(body)]
    assert sorted(names) == sorted(f"s{i}" for i in range(200))  # each span once
    stats = p.stats()
    assert stats["exported"] == 200 and stats["in_flight"] == 0 and sum(stats["dropped"].values()) == 0


def test_requests_grow_with_the_backlog_up_to_the_cap(receiver: Receiver,
                                                      pipeline_for: Callable[..., Pipeline]) -> None:
    """One sender, held by the collector while 200 spans queue up: once it answers, the backlog leaves in
    requests of the cap (40), not of the batch size (10)."""
    receiver.hold = True
    p = pipeline_for(receiver.url, max_concurrent_exports=1, max_export_batch_size=10, max_backlog_batch_size=40)
    _end(p, [0])
    _wait_for(lambda: len(receiver.bodies("/v1/traces")) == 1)
    _end(p, range(1, 201))
    receiver.release()

    assert p.flush(30.0) is True

    sizes = [len(_names(body)) for body in receiver.bodies("/v1/traces")]
    assert sizes == [1, 40, 40, 40, 40, 40]
    assert p.stats()["exported"] == 201


def test_a_503_with_retry_after_holds_every_request_back_and_lands_once(
        receiver: Receiver, pipeline_for: Callable[..., Pipeline]) -> None:
    """The first request is answered 503 + Retry-After: 1. Its retry, and the requests queued meanwhile, arrive
    after that second; the retry is the same request (the collector recognises it by its bytes), and every span
    is accepted once."""
    script = [503]
    receiver.status = ScriptedStatus(script)
    receiver.retry_after = "1"
    p = pipeline_for(receiver.url, max_concurrent_exports=4, max_export_batch_size=5, max_backlog_batch_size=5)
    _end(p, [0])
    _wait_for(lambda: receiver.answered >= 1)
    _end(p, range(1, 21))

    assert p.flush(30.0) is True

    bodies = receiver.bodies("/v1/traces")
    arrived = [t for (path, _, _), t in zip(receiver.requests, receiver.arrived) if path == "/v1/traces"]
    assert all(t >= arrived[0] + 1.0 for t in arrived[1:])
    assert Counter(bodies)[bodies[0]] == 2  # refused once, then sent again as it was
    accepted = [n for body in bodies[1:] for n in _names(body)]
    assert sorted(accepted) == sorted(f"s{i}" for i in range(21))
    assert p.stats()["exported"] == 21 and p.stats()["export_failures"] == 0


def test_flush_returns_once_every_request_is_answered(receiver: Receiver,
                                                      pipeline_for: Callable[..., Pipeline]) -> None:
    receiver.delay_s = 0.5
    p = pipeline_for(receiver.url, max_concurrent_exports=2, max_export_batch_size=10, max_backlog_batch_size=10)
    _end(p, range(40))

    assert p.flush(30.0) is True

    assert receiver.answered == len(receiver.requests) and len(receiver.bodies("/v1/traces")) >= 4
    stats = p.stats()
    assert stats["exported"] == 40
    assert stats["last_flush"] == {"completed": True, "queued": 0, "in_flight": 0, "in_flight_requests": 0}


def test_a_flush_that_times_out_says_what_it_left(receiver: Receiver,
                                                  pipeline_for: Callable[..., Pipeline]) -> None:
    receiver.hold = True
    p = pipeline_for(receiver.url, max_concurrent_exports=2, max_export_batch_size=10, max_backlog_batch_size=10)
    _end(p, range(50))

    assert p.flush(1.0) is False

    left = p.stats()["last_flush"]
    assert left["completed"] is False
    assert left["queued"] + left["in_flight"] == 50  # nothing was answered: every span is in one or the other
    assert 1 <= left["in_flight_requests"] <= 2 and left["in_flight"] == 10 * left["in_flight_requests"]
    receiver.release()
    assert p.flush(30.0) is True and p.stats()["exported"] == 50




@pytest.mark.parametrize("name", ["max_concurrent_exports", "max_backlog_batch_size"])
def test_the_new_settings_must_be_at_least_one(name: str) -> None:
    with pytest.raises(ValueError, match=name):
        resolve(**{name: 0})
