"""The event tap (``integrations._streams.EventTap``) on a stream, decoder and response of openai's shape, without a
client: what it keeps, when and with which error it ends its call, and that it hooks the response's close without
disturbing the response. The tap on the real client's streams: tests/sdk/test_openai.py."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from inferwatch.integrations import _streams


class _Decoder:
    """A decoder of the client's shape: an event per chunk of bytes."""

    def iter_bytes(self, chunks: Iterator[bytes]) -> Iterator[Any]:
        for chunk in chunks:
            yield SimpleNamespace(data=chunk.decode())


class _Response:
    def __init__(self) -> None:
        self.closes = 0

    def close(self) -> None:
        self.closes += 1


class _Tap(_streams.EventTap):
    __slots__ = ("ends", "reads")

    def ended(self, error: BaseException | None) -> None:
        self.ends.append(error)

    def read(self, kept: Sequence[Any]) -> None:
        self.reads.append(list(kept[0::2]))  # chunk, clock, chunk, clock...


def _tapped_stream(chunks: Iterator[bytes]) -> tuple[_Tap, _Response, Iterator[Any]]:
    """A tap on a stream of openai's shape: its generator reads the events through the decoder and closes the
    response in a ``finally``, whatever ended it."""
    response = _Response()

    def stream() -> Iterator[Any]:
        try:
            yield from tap.iter_bytes(chunks)
        finally:
            response.close()

    generator = stream()
    tap = _Tap(_Decoder(), response, stream.__code__, False)
    tap.ends, tap.reads = [], []
    return tap, response, generator


def test_an_event_tap_keeps_the_chunks_and_ends_its_call_at_the_streams_close() -> None:
    """The tap alone, on a stream, decoder and response of openai's shape: each chunk kept with its clock, in
    order; the call ended once, by the stream's own close, and the response's close its own again after."""
    tap, response, stream = _tapped_stream(iter([b"a", b"b"]))
    assert [event.data for event in stream] == ["a", "b"]
    assert tap.ends == [None] and response.closes == 1 and "close" not in vars(response)
    assert tap.kept[0::2] == [b"a", b"b"] and tap.count == 4  # chunk, clock, chunk, clock
    assert tap.kept[1] <= tap.kept[3] <= time.time_ns()
    response.close()
    assert tap.ends == [None] and response.closes == 2


def test_what_an_event_tap_keeps_for_the_export_is_no_work_for_the_garbage_collector() -> None:
    """Until the export thread reads them, the kept chunks and clocks are bytes and ints in one list (no tuple per
    chunk: each would count towards the collector's next pass, on the app's thread), and the ended call lets go
    of the response and of the client's decoder."""
    tap, response, stream = _tapped_stream(iter([b"a", b"b", b"c"]))
    decoder = weakref.ref(tap.decoder)
    assert [event.data for event in stream] == ["a", "b", "c"]
    assert tap.ends == [None] and not any(gc.is_tracked(item) for item in tap.kept)
    assert tap.response is None and tap.decoder is None
    del stream
    assert decoder() is None


def test_an_event_tap_ended_before_the_stream_is_read_keeps_its_decoder() -> None:
    """The app closes the stream before reading it, then reads: the client's decoder is still there, so the
    app meets what the client does without the SDK."""
    tap, response, stream = _tapped_stream(iter([b"a"]))
    response.close()
    assert tap.ends == [None] and tap.response is None
    assert [event.data for event in stream] == ["a"] and response.closes == 2 and tap.ends == [None]
    assert tap.source is None  # the ended call keeps nothing of the response's, its byte iterator neither


def test_an_event_tap_hook_kept_from_before_the_end_does_nothing_after_it() -> None:
    """A reference to the hooked close, taken while the stream ran and called after the call ended: the response
    was closed by then, so nothing happens and nothing fails."""
    tap, response, stream = _tapped_stream(iter([b"a"]))
    hook = response.close
    assert [event.data for event in stream] == ["a"] and response.closes == 1
    assert hook() is None and response.closes == 1 and tap.ends == [None]


def test_an_event_tap_ends_as_the_app_closes_the_stream() -> None:
    """The app's close, or its own exception leaving a ``with`` (a close from outside the stream's generator):
    the call ends, as a success; the generator's later close changes nothing."""
    tap, response, stream = _tapped_stream(iter([b"a", b"b", b"c"]))
    next(stream)
    with pytest.raises(KeyError):
        try:
            raise KeyError("the app's own")
        finally:
            response.close()  # as Stream.__exit__ does
    assert tap.ends == [None] and response.closes == 1
    stream.close()  # GeneratorExit: the generator closes the response again
    assert tap.ends == [None] and response.closes == 2 and tap.count == 2  # one chunk and its clock

    tap, response, stream = _tapped_stream(iter([b"a", b"b"]))
    next(stream)
    del stream  # dropped part-read: GeneratorExit closes the response
    gc.collect()
    assert tap.ends == [None] and response.closes == 1


def test_an_event_tap_ends_with_the_error_the_streams_generator_raises() -> None:
    """An error out of the response's bytes: the HTTP library's own close, made from inside the byte iterator,
    does not end the call; the stream's close, as the error leaves its generator, ends it with the error."""
    responses: list[_Response] = []

    def chunks() -> Iterator[bytes]:
        try:
            yield b"a"
            raise ConnectionError("cut")
        finally:
            responses[0].close()  # httpx2's iter_raw does this

    tap, response, stream = _tapped_stream(chunks())
    responses.append(response)
    seen = []
    with pytest.raises(ConnectionError):
        for event in stream:
            seen.append(event.data)
    assert seen == ["a"] and response.closes == 2
    assert [type(e) for e in tap.ends] == [ConnectionError] and tap.kept[0::2] == [b"a"]


def test_an_event_tap_reads_in_folds_on_a_long_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_streams, "FOLD_AT", 2)
    tap, response, stream = _tapped_stream(iter([b"a", b"b", b"c", b"d", b"e"]))
    assert [event.data for event in stream] == ["a", "b", "c", "d", "e"]
    assert tap.reads == [[b"a", b"b"], [b"c", b"d"]] and tap.kept[0::2] == [b"e"] and tap.count == 2
    assert tap.ends == [None]


def test_an_event_tap_leaves_the_responses_attributes_where_they_were() -> None:
    """Asking whether the close can be hooked, hooking it and unhooking it never read the response's
    ``__dict__`` (which would give it a dict of its own for the rest of its life, slower for the client to read
    from); a response with a ``close`` of its own is not hooked."""
    httpx2 = pytest.importorskip("httpx2")

    class Watched(httpx2.Response):
        def __getattribute__(self, name: str) -> Any:
            assert name != "__dict__", "the tap read the response's __dict__"
            return super().__getattribute__(name)

    response = Watched(200, content=b"data: x\n\n")
    assert _streams.EventTap.can_hook(response, False) and _streams.EventTap.can_hook(response, True)
    tap = _Tap(_Decoder(), response, None, False)
    tap.ends, tap.reads = [], []
    assert response.close == tap.close
    response.close()
    assert tap.ends == [None] and response.is_closed and response.close.__func__ is httpx2.Response.close
    other = httpx2.Response(200)
    other.close = lambda: None  # type: ignore[method-assign]
    assert not _streams.EventTap.can_hook(other, False)


def test_the_recorder_and_the_tap_have_no_init_of_their_own() -> None:
    """The hot path makes them with ``object.__new__`` and calls ProviderCall's and EventTap's ``__init__``
    directly (no lookup of ``__init__`` on a class, see "names bound once" in ``_streams``): an ``__init__`` of
    their own would be skipped."""
    from inferwatch.integrations._openai_chat import _ChatEvents
    from inferwatch.integrations.openai import _Recorder
    from inferwatch.llm_call import ProviderCall

    assert "__init__" not in vars(_Recorder) and "__init__" not in vars(_ChatEvents)
    assert _Recorder.__init__ is ProviderCall.__init__ and _ChatEvents.__init__ is _streams.EventTap.__init__


def test_no_tap_overrides_the_hooks_bound_once() -> None:
    """A tap's close hooks are ``EventTap.close``/``aclose`` and the OpenAI tap's export callback is
    ``_ChatEvents.later``, bound at import (see "names bound once" in ``_streams``): a subclass's own would be
    skipped."""
    from inferwatch.integrations._openai_chat import _ChatEvents

    def subclasses(cls: type) -> list[type]:
        return [cls] + [sub for direct in cls.__subclasses__() for sub in subclasses(direct)]

    for cls in subclasses(_streams.EventTap)[1:]:
        if cls.__module__.startswith("inferwatch"):
            assert not {"close", "aclose"} & set(vars(cls)), cls
    assert all("later" not in vars(cls) for cls in subclasses(_ChatEvents)[1:])


def test_a_response_class_whose_close_is_replaced_is_still_hooked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The class's close is remembered per class; replaced later (another library patching httpx), the new one
    is asked for, so the stream is still tapped, and the tap's close calls the new function."""
    httpx2 = pytest.importorskip("httpx2")

    class Patched(httpx2.Response):
        pass

    assert _streams.can_hook(Patched(200), False)
    closed: list[Any] = []

    def close(self: Any) -> None:
        closed.append(self)
        httpx2.Response.close(self)

    monkeypatch.setattr(Patched, "close", close)
    response = Patched(200, content=b"data: x\n\n")
    closed.clear()  # a response made with its content reads it, and closes itself, as it is made
    assert _streams.can_hook(response, False)
    tap = _Tap(_Decoder(), response, None, False)
    tap.ends, tap.reads = [], []
    response.close()
    assert closed == [response] and tap.ends == [None]
    other = Patched(200)
    other.close = lambda: None  # type: ignore[method-assign]
    assert not _streams.can_hook(other, False) and _streams.can_hook(Patched(200), False)
