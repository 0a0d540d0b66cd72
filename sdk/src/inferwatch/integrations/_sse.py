"""Server-sent events read from the bytes a stream received, as the provider's client reads them.

A tapped stream (``_streams.EventTap``) keeps the byte chunks its HTTP response delivered, each with the clock of
its arrival, and the call's recording reads the events from them later, in the export thread: this module. The
rules are the event-stream interpretation of the HTML standard as openai's (Stainless-made) ``SSEDecoder``
applies them:

* a line ends at CR, LF or CRLF (a CRLF split across two chunks ends one line);
* a blank line dispatches the event when it has any field; a ``data`` field's lines are joined with LF;
* the ``id`` is kept from one event to the next (a blank line after one still dispatches an empty event, as the
  client does), an ``id`` holding NUL is ignored, a ``retry`` that is not an integer is ignored;
* comments (``:``) and unknown fields are ignored; a space after the field's colon is dropped;
* each line is decoded as UTF-8, strictly: a line the client could not decode raised in it and ended its stream,
  and :meth:`EventReader.feed` raises ``UnicodeDecodeError`` likewise.

A line left without its end when the bytes stop dispatches nothing, and is not decoded (the client's decoder
decodes it at the end of the body and may raise there: that error reaches the call as the stream's own, at its
close).
``tests/sdk/test_sse.py`` holds this to openai's decoder, event for event, over arbitrary splits of the same bytes.
"""

from __future__ import annotations

import re

_LINE_END = re.compile(b"[\r\n]")
_LF = 10
_CR = 13

Event = tuple[int, "str | None", str]  # (clock of the chunk that completed it, event name, data)


class EventReader:
    """Reads the events out of one stream's chunks, fed in order (a line or an event may span chunks)."""

    __slots__ = ("_data", "_event", "_id", "_partial", "_retry", "_skip_lf")

    def __init__(self) -> None:
        self._partial = b""  # the start of a line whose end has not arrived yet
        self._skip_lf = False  # the last chunk ended in CR: a LF first in the next one ends no line
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes, clock: int, events: list[Event]) -> None:
        """Append to ``events`` each event that ``chunk`` completes, with ``clock`` (when it was received)."""
        start = 0
        for match in _LINE_END.finditer(chunk):
            end = match.start()
            if self._skip_lf and end == start and chunk[end] == _LF:  # the LF of a CRLF
                self._skip_lf = False
                start = end + 1
                continue
            line = chunk[start:end]
            if self._partial:
                line, self._partial = self._partial + line, b""
            self._skip_lf = chunk[end] == _CR
            start = end + 1
            self._line(line.decode("utf-8"), clock, events)
        if start < len(chunk):
            self._skip_lf = False
            self._partial += chunk[start:]

    def _line(self, line: str, clock: int, events: list[Event]) -> None:
        if not line:
            if self._event or self._data or self._id or self._retry is not None:
                events.append((clock, self._event or None, "\n".join(self._data)))
                self._event, self._data, self._retry = None, [], None  # the id stays
            return
        if line[0] == ":":
            return
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            try:
                self._retry = int(value)
            except ValueError:
                pass
