"""The retry memory (``ingest_dedup.RecentRequests``): a retry waits for or reuses the first write, a failure is
forgotten, and a remembered request holds its outcome only, never what the request path attached to it."""

from __future__ import annotations

import gc
import weakref

from inferwatch_collector.ingest_dedup import RecentRequests, request_digest


class Body:
    """Stands for a request body (bytes cannot be watched with a weak reference)."""

    def __init__(self, data: bytes) -> None:
        self.data = data


def test_a_retry_gets_the_first_writes_future_and_outcome() -> None:
    recent = RecentRequests(10)
    digest = request_digest("p1", "application/x-protobuf", "", b"spans")
    first, owner = recent.begin(digest)
    again, again_owner = recent.begin(digest)
    assert owner and not again_owner and again is first  # pending: the retry waits for the same write
    first.set_result((0, ()))
    later, later_owner = recent.begin(digest)
    assert not later_owner and later.result() == (0, ()) and recent.hits == 2


def test_a_failed_write_is_forgotten_so_its_retry_writes() -> None:
    recent = RecentRequests(10)
    future, _ = recent.begin(b"d")
    future.set_exception(RuntimeError("insert failed"))
    _, owner = recent.begin(b"d")
    assert owner


def test_a_remembered_request_does_not_keep_its_body_alive() -> None:
    """The collector attaches callbacks that close over the request; the window must not keep them."""
    recent = RecentRequests(100_000)
    body = Body(b"x" * 1_000)
    watch = weakref.ref(body)
    future, _ = recent.begin(request_digest("p1", "application/json", "", body.data))
    future.add_done_callback(lambda _: len(body.data))
    future.set_result((0, ()))
    del body, future
    gc.collect()
    assert watch() is None


def test_the_window_is_bounded() -> None:
    recent = RecentRequests(3)
    for n in range(5):
        future, _ = recent.begin(bytes([n]))
        future.set_result(None)
    assert not recent.begin(bytes([4]))[1] and recent.begin(bytes([0]))[1]  # oldest evicted first
