"""Streaming for the mock LLM: server-sent event framing, and the pacing of a stream (time to first token, then
the per-token delays), which a stopping server cuts short."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import StreamingResponse

from .mock_llm_plan import Generation
from .mock_llm_tokens import compact_json

STREAM_ERROR_AFTER_TOKENS = 3
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


class Closing(Exception):
    """The server is stopping: a sleeping response gives up so shutdown is not held up."""


async def sleep_unless_closing(seconds: float, closing: threading.Event | None) -> None:
    end = time.monotonic() + seconds
    while True:
        if closing is not None and closing.is_set():
            raise Closing
        left = end - time.monotonic()
        if left <= 0:
            return
        await asyncio.sleep(min(left, 0.05))


class Pacer:
    """Sleeps between chunks of a stream (TTFT first, then the per-token delays)."""

    def __init__(self, gen: Generation) -> None:
        self._ttft = gen.ttft_s
        self._delays = iter(gen.token_delays)
        self._first = True
        self._closing = gen.closing

    async def first(self) -> None:
        if self._first:
            self._first = False
            if self._ttft > 0:
                await sleep_unless_closing(self._ttft, self._closing)

    async def token(self) -> None:
        if self._first:
            await self.first()
            return
        delay = next(self._delays, 0.0)
        if delay > 0:
            await sleep_unless_closing(delay, self._closing)


def sse_response(events: AsyncIterator[str], headers: dict[str, str]) -> StreamingResponse:
    async def body() -> AsyncIterator[str]:
        try:
            async for chunk in events:
                yield chunk
        except Closing:
            return  # the stream just ends, as when a server goes away
        finally:
            await events.aclose()  # type: ignore[attr-defined]

    return StreamingResponse(body(), media_type="text/event-stream", headers={**headers, **_SSE_HEADERS})


async def wait_as_streamed(gen: Generation) -> None:
    """A non-streamed answer takes as long as the stream would have."""
    if gen.total_duration_s > 0:
        try:
            await sleep_unless_closing(gen.total_duration_s, gen.closing)
        except Closing:
            pass


def sse_data(obj: Any) -> str:
    return f"data: {compact_json(obj)}\n\n"


def sse_event(event: str, obj: Any) -> str:
    return f"event: {event}\ndata: {compact_json(obj)}\n\n"
