"""The event reader of tapped streams (``inferwatch.integrations._sse``) against openai's own decoder: the same
events from the same bytes, however the bytes are split into chunks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai._streaming import SSEDecoder

from inferwatch.integrations._sse import EventReader

# pieces of event streams: fields well and badly formed, every line ending, text beyond ASCII, JSON as OpenAI
# sends it
_PIECES = [b"data: hello", b"data:x", b"data", b"data: ", b"event: message", b"event:", b"id: 7", b"id: a\x00b",
           b"id:", b"retry: 150", b"retry: soon", b": a comment", b"other: field", b"\n", b"\r", b"\r\n",
           b"\n\n", b"\r\n\r\n", b"data: {\"id\":\"chatcmpl-1\",\"choices\":[]}",
           "data: caf\u00e9 \u2014 \U0001f600".encode(), b"data: [DONE]", b" ", b":"]


def _openai_events(chunks: list[bytes]) -> list[tuple[Any, str]]:
    return [(event.event, event.data) for event in SSEDecoder().iter_bytes(iter(chunks))]


def _our_events(chunks: list[bytes]) -> list[tuple[Any, str]]:
    reader, events = EventReader(), []  # type: ignore[var-annotated]
    for clock, chunk in enumerate(chunks):
        reader.feed(chunk, clock, events)
    return [(event, data) for _, event, data in events]


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30), st.lists(st.integers(0, 400), max_size=12))
def test_events_are_openais_whatever_the_chunks(pieces: list[bytes], cuts: list[int]) -> None:
    data = b"".join(pieces)
    expected = _openai_events([data])
    assert _our_events([data]) == expected
    chunks = _split(data, cuts)  # a chunk may end between CR and LF, or inside a UTF-8 character
    assert _openai_events(chunks) == expected
    assert _our_events(chunks) == expected


def test_an_event_takes_the_clock_of_the_chunk_that_completed_it() -> None:
    reader, events = EventReader(), []  # type: ignore[var-annotated]
    reader.feed(b"data: one\n\ndata: tw", 100, events)
    reader.feed(b"o\n", 200, events)
    reader.feed(b"\nevent: x\ndata: three\r", 300, events)
    reader.feed(b"\n\r\n: ignored\n", 400, events)
    assert events == [(100, None, "one"), (300, None, "two"), (400, "x", "three")]


def test_bytes_that_are_not_utf8_raise_where_openais_decoder_raises() -> None:
    chunks = [b"data: fine\n\n", b"data: \xff\xfe\n\n", b"data: never\n\n"]
    with pytest.raises(UnicodeDecodeError):
        _openai_events(chunks)
    reader, events = EventReader(), []  # type: ignore[var-annotated]
    reader.feed(chunks[0], 1, events)
    with pytest.raises(UnicodeDecodeError):
        reader.feed(chunks[1], 2, events)
    assert events == [(1, None, "fine")]


def test_a_line_left_without_its_end_dispatches_nothing() -> None:
    cut = [b"data: one\n\ndata: cut"]
    assert _openai_events(cut) == [(None, "one")] == _our_events(cut)
