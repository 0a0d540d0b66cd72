"""Streaming columns of an LLM call: ``streamed``, ``ttft_ms`` (time to first token) and ``decode_tps``.

Time to first token, first spelling present wins: our SDK's ``inferwatch.first_token.unix_nano`` (absolute),
``gen_ai.response.time_to_first_chunk`` (s, OTel), ``gen_ai.response.time_to_first_token`` (s, Sentry),
``gen_ai.server.time_to_first_token`` (s, OpenLIT), ``ai.response.msToFirstChunk`` / ``ai.stream.msToFirstChunk``
(ms, Vercel), the "First Token Stream Event" (OpenInference) or ``ai.stream.firstChunk`` span event, Langfuse's
``completion_start_time`` (ISO string). ``ttft_ms`` is rounded half up and at least 1 when known; 0 when unknown,
negative, or the call was not streamed.

``streamed`` is the first explicit flag (``inferwatch.streamed``, ``gen_ai.request.stream``, Sentry's
``gen_ai.response.streaming``, OpenLIT's ``gen_ai.request.is_stream``, Traceloop's ``llm.is_streaming``, Vercel's
``doStream`` operation, ``"stream"`` in OpenInference/Langfuse parameters); without one, a known TTFT means
streamed (only streams report a first token).

``decode_tps`` = (output_tokens − 1) / (end − first token) in seconds, when streamed with a known first token, more
than one output token and trusted usage; else 0. Our SDK's own ``inferwatch.decode.tokens_per_second`` wins.
"""

from __future__ import annotations

import math
from typing import Any

from inferwatch import semconv as sc

from ..conventions import (
    LF_COMPLETION_START_TIME, LF_MODEL_PARAMETERS, MS_TO_FIRST_CHUNK_KEYS, OI_INVOCATION_PARAMETERS, STREAM_KEYS,
    TTFT_SECONDS_KEYS, VERCEL_OPERATION_ID,
)  # fmt: skip
from .facts import SpanFacts
from .values import as_bool, as_float, as_int, as_str, first, iso_to_unix_nano, json_object


def stream_columns(facts: SpanFacts, output_tokens: int, usage_missing: bool) -> tuple[bool, int, float]:
    """(streamed, ttft_ms, decode_tps) of one LLM call whose usage is already known."""
    get = facts.attrs.get
    start_ns = facts.start_ns
    streamed = get(sc.STREAMED)  # our SDK's flag, a bool: the usual case, inline
    if type(streamed) is not bool:
        streamed = _stream_flag(facts.attrs)
    absolute = get(sc.FIRST_TOKEN_TIME_UNIX_NANO)  # our SDK's absolute first-token time: the usual case, inline
    if type(absolute) is int and absolute > 0:
        ttft_ns = absolute - start_ns if 0 <= absolute - start_ns < _MAX_TTFT_NS else None
    else:
        ttft_ns = _ttft_ns(facts.attrs, start_ns, facts.first_token_ns)
    if streamed is None:
        streamed = ttft_ns is not None  # only streamed responses have a first token distinct from the end
    if not streamed:
        ttft_ns = None
    ttft_ms = max(1, int(ttft_ns / 1e6 + 0.5)) if ttft_ns is not None else 0

    decode_tps = get(sc.DECODE_TOKENS_PER_SECOND)
    if type(decode_tps) is not float or not math.isfinite(decode_tps):
        decode_tps = as_float(decode_tps)
    if decode_tps is None or decode_tps < 0:
        decode_tps = 0.0
        if ttft_ns is not None and output_tokens > 1 and not usage_missing:
            decode_s = (facts.end_ns - (start_ns + ttft_ns)) / 1e9
            if decode_s > 0:
                decode_tps = round((output_tokens - 1) / decode_s, 3)
    return streamed, ttft_ms, decode_tps


def _stream_flag(attrs: dict[str, Any]) -> bool | None:
    """The explicit streaming flag of any convention; None when the span does not say."""
    get = attrs.get
    streamed = first(attrs, STREAM_KEYS)
    streamed = None if streamed is None else as_bool(streamed)
    if streamed is not None:
        return streamed
    operation_id = get(VERCEL_OPERATION_ID)
    if operation_id is not None and as_str(operation_id).endswith("doStream"):
        return True
    params = None
    if get(OI_INVOCATION_PARAMETERS) is not None:
        params = json_object(get(OI_INVOCATION_PARAMETERS))
    if params is None and get(LF_MODEL_PARAMETERS) is not None:
        params = json_object(get(LF_MODEL_PARAMETERS))
    if isinstance(params, dict) and "stream" in params:
        return as_bool(params["stream"])
    return None


_MAX_TTFT_NS = (2**32 - 2) * 1_000_000  # 49.7 days: within the UInt32 ms column after rounding; no inf into int()


def _ttft_ns(attrs: dict[str, Any], start_ns: int, first_token_event_ns: int | None) -> int | None:
    """Time to first token in ns from whichever spelling the span carries; None when unknown, negative or not a
    finite number."""
    get = attrs.get
    absolute = get(sc.FIRST_TOKEN_TIME_UNIX_NANO)  # our SDK: absolute time of the first token
    if type(absolute) is not int:
        absolute = as_int(absolute)
    ttft: float | None = None
    if absolute is not None and absolute > 0:
        ttft = absolute - start_ns
    else:
        seconds = as_float(first(attrs, TTFT_SECONDS_KEYS))
        if seconds is not None:
            ttft = seconds * 1e9
        else:
            ms = as_float(first(attrs, MS_TO_FIRST_CHUNK_KEYS))
            if ms is not None:
                ttft = ms * 1e6
            elif first_token_event_ns:
                ttft = first_token_event_ns - start_ns
            else:
                completion_start = get(LF_COMPLETION_START_TIME)
                if completion_start is not None:
                    moment = iso_to_unix_nano(completion_start)
                    if moment is not None:
                        ttft = moment - start_ns
    if ttft is None or not 0 <= ttft < _MAX_TTFT_NS:  # negative, absurd, or not a number (inf, nan)
        return None
    return int(ttft)
