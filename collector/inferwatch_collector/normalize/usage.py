"""Token usage of one LLM call, normalised to the OTel convention the ``llm_calls`` columns use.

``input_tokens`` includes cache reads and cache writes; ``output_tokens`` includes reasoning tokens. Conventions
disagree (OpenAI and the OTel spec: cached tokens are a subset of the prompt; Anthropic's API and Langfuse usage
details: cache reads/writes are *on top of* input), so :func:`usage_columns` decides, in this order:

* a reported count smaller than its part proves the part is on top (``input < cache_read + cache_write`` → add
  them; ``output < reasoning`` → add it);
* a reported total decides when it matches exactly one reading (``total == input + output`` → already included;
  ``total == input + output + cache`` → on top). OpenLLMetry's Anthropic instrumentation, for example, already
  adds the cache tokens into ``gen_ai.usage.prompt_tokens`` and reports ``llm.usage.total_tokens`` = that + output;
* otherwise the convention's own rule: on top for Anthropic reported with the legacy Traceloop names
  (``gen_ai.usage.cache_read_input_tokens``/``cache_creation_input_tokens``, provider ``anthropic``), for OpenLIT's
  Anthropic spans (span attribute ``telemetry.sdk.name`` = ``openlit``: it copies Anthropic's ``input_tokens``
  as is, beside the current cache names) and for Langfuse's flattened usage details (``input``,
  ``input_cached_tokens``, ``output_reasoning_tokens``, ...); included for everything else (current GenAI names,
  the anthropic client's own spans, which add the cache reads and writes into ``gen_ai.usage.input_tokens`` and
  name writes ``gen_ai.usage.cache_write.input_tokens``, OpenLLMetry 0.5x, OpenAI-style legacy names,
  OpenInference, Sentry, Vercel).

A count that is negative or above MAX_TOKENS_PER_CALL is treated as absent and reported as a problem (the row
is then ``usage_missing``, so pricing never prices it as zero silently).
"""

from __future__ import annotations

from typing import Any

from inferwatch import semconv as sc

from ..conventions import (
    CACHE_READ_KEYS, CACHE_WRITE_KEYS, GEN_AI_USAGE_TOTAL_TOKENS, INPUT_KEYS, LF_USAGE_DETAILS, OUTPUT_KEYS,
    REASONING_KEYS, TELEMETRY_SDK_NAME, TOTAL_KEYS, TRACELOOP_CACHE_CREATION_INPUT_TOKENS,
    TRACELOOP_CACHE_READ_INPUT_TOKENS,
)  # fmt: skip
from .limits import MAX_TOKENS_PER_CALL
from .values import as_int, as_str, json_object


def usage_columns(attrs: dict[str, Any], provider: str) -> tuple[int, int, int, int, int, bool, list[str]]:
    """Token usage as the columns want it: (input incl. cache reads+writes, output incl. reasoning, cache_read,
    cache_write, reasoning, whether neither input nor output was reported, problems with reported counts)."""
    # Per LLM call: the first spelling of each count is read inline, _count() runs only if it is not a plain count.
    get = attrs.get
    top = MAX_TOKENS_PER_CALL
    invalid: list[str] = []
    n = get(sc.GEN_AI_USAGE_INPUT_TOKENS)
    inp = n if type(n) is int and 0 <= n <= top else _count(attrs, INPUT_KEYS, invalid)
    n = get(sc.GEN_AI_USAGE_OUTPUT_TOKENS)
    out = n if type(n) is int and 0 <= n <= top else _count(attrs, OUTPUT_KEYS, invalid)
    n = get(GEN_AI_USAGE_TOTAL_TOKENS)
    total = n if type(n) is int and 0 <= n <= top else _count(attrs, TOTAL_KEYS, invalid)
    n = get(sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS)
    reasoning = n if type(n) is int and 0 <= n <= top else _count(attrs, REASONING_KEYS, invalid)
    n = get(sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS)
    cache_read = n if type(n) is int and 0 <= n <= top else _count(attrs, CACHE_READ_KEYS, invalid)
    n = get(sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS)
    cache_write = n if type(n) is int and 0 <= n <= top else _count(attrs, CACHE_WRITE_KEYS, invalid)
    # the convention's default when the numbers cannot tell: cache / reasoning reported on top of input / output
    cache_on_top = reasoning_on_top = False
    if cache_read is None and cache_write is None:
        # Traceloop legacy cache names: Anthropic-style reporting puts these on top of input
        cache_read = _count(attrs, (TRACELOOP_CACHE_READ_INPUT_TOKENS,), invalid)
        cache_write = _count(attrs, (TRACELOOP_CACHE_CREATION_INPUT_TOKENS,), invalid)
        cache_on_top = bool(cache_read or cache_write) and provider == "anthropic"
    elif provider == "anthropic" and (cache_read or cache_write) and get(TELEMETRY_SDK_NAME) == "openlit":
        cache_on_top = True  # OpenLIT: Anthropic's own input_tokens beside the current cache names
    if inp is None and out is None and (details := get(LF_USAGE_DETAILS)) is not None:
        langfuse = _langfuse_usage(details, invalid)
        if langfuse is not None:
            inp, out, total, cache_read, cache_write, reasoning, cache_on_top = langfuse
            reasoning_on_top = cache_on_top
    no_usage = inp is None and out is None

    # normalise (rules of the module docstring)
    inp = inp or 0
    out = out or 0
    cache_read = cache_read or 0
    cache_write = cache_write or 0
    reasoning = reasoning or 0
    cached = cache_read + cache_write
    if total is not None and (cached or reasoning):
        cache_on_top, reasoning_on_top = _on_top_by_total((inp, out, cached, reasoning), total,
                                                          (cache_on_top, reasoning_on_top))  # fmt: skip
    if cached and (inp < cached or cache_on_top):
        inp += cached
    if reasoning and (out < reasoning or reasoning_on_top):
        out += reasoning
    return inp, out, cache_read, cache_write, reasoning, no_usage, invalid


def _checked_count(key: str, raw: Any, invalid: list[str]) -> int | None:
    """A count that is not an int in range: converted if possible, else recorded as invalid (and absent)."""
    number = as_int(raw)
    if number is None or number < 0 or number > MAX_TOKENS_PER_CALL:
        invalid.append(f"{key}={as_str(raw)[:40]} is not a token count in [0, {MAX_TOKENS_PER_CALL}]")
        return None
    return number


def _count(attrs: dict[str, Any], keys: tuple[str, ...], invalid: list[str]) -> int | None:
    """First present token count among ``keys``; out-of-range values are recorded and treated as absent."""
    for key in keys:
        raw = attrs.get(key)
        if raw is not None:
            if type(raw) is int and 0 <= raw <= MAX_TOKENS_PER_CALL:
                return raw
            return _checked_count(key, raw, invalid)
    return None


_Counts = tuple["int | None", "int | None", "int | None", "int | None", "int | None", "int | None", bool]


def _langfuse_usage(raw: Any, invalid: list[str]) -> _Counts | None:
    """Langfuse ``usage_details``: a JSON object of counts. Its own flattened keys (``input``, ``output``,
    ``input_cached_tokens``, ``cache_read_input_tokens``, ``input_cache_creation``, ``output_reasoning_tokens``,
    ``input_audio_tokens``, ...) are additive: every key is a separately priced share and ``total`` is their sum.
    OpenAI-shaped usage (``prompt_tokens`` + ``prompt_tokens_details``) keeps OpenAI's included-in semantics.

    → (input, output, total, cache_read, cache_write, reasoning, whether cache and reasoning are on top), or None
    when the attribute is not a JSON object."""
    details = json_object(raw)
    if not isinstance(details, dict):
        invalid.append(f"{LF_USAGE_DETAILS} is not a JSON object")
        return None
    counts: dict[str, int] = {}
    flat: list[tuple[str, Any]] = []
    for key, value in details.items():
        if isinstance(value, dict):  # OpenAI-shaped nested details: prompt_tokens_details.cached_tokens
            flat.extend((f"{key}.{sub_key}", sub_value) for sub_key, sub_value in value.items())
        else:
            flat.append((key, value))
    for key, value in flat:
        number = as_int(value) if type(value) is not bool else None
        if number is None:
            continue
        if number < 0 or number > MAX_TOKENS_PER_CALL:
            invalid.append(f"{LF_USAGE_DETAILS}.{key}={number} is not a token count")
            continue
        counts[key] = number
    native = "input" in counts or "output" in counts
    base_in = next((counts[k] for k in ("input", "prompt_tokens", "input_tokens") if k in counts), None)
    base_out = next((counts[k] for k in ("output", "completion_tokens", "output_tokens") if k in counts), None)
    total = next((counts[k] for k in ("total", "total_tokens") if k in counts), None)
    cache_read = cache_write = reasoning = extra_in = extra_out = 0
    for key, number in counts.items():
        if key in ("input", "output", "total", "prompt_tokens", "completion_tokens", "total_tokens",
                   "input_tokens", "output_tokens"):  # fmt: skip
            continue
        if "cache_read" in key or "cached" in key:
            cache_read += number
        elif "cache_creation" in key or "cache_write" in key:
            cache_write += number
        elif "reasoning" in key:
            reasoning += number
        elif native and key.startswith("input"):
            extra_in += number  # e.g. input_audio_tokens: another share of the input
        elif native and key.startswith("output"):
            extra_out += number
    inp = (base_in or 0) + extra_in if base_in is not None or extra_in else None
    out = (base_out or 0) + extra_out if base_out is not None or extra_out else None
    return inp, out, total, cache_read or None, cache_write or None, reasoning or None, native


def _on_top_by_total(counts: tuple[int, int, int, int], total: int,
                     default: tuple[bool, bool]) -> tuple[bool, bool]:  # fmt: skip
    """Whether (cache, reasoning) are on top of input / output, given a reported total: a count smaller than its
    part proves it; else the one reading that matches ``total``; else ``default`` (the convention's rule)."""
    inp, out, cached, reasoning = counts
    cache_options = (False, True) if cached else (False,)
    reasoning_options = (False, True) if reasoning else (False,)
    if cached and inp < cached:
        cache_options = (True,)
    if reasoning and out < reasoning:
        reasoning_options = (True,)
    if len(cache_options) > 1 or len(reasoning_options) > 1:
        matches = [
            (c, r)
            for c in cache_options
            for r in reasoning_options
            if inp + (cached if c else 0) + out + (reasoning if r else 0) == total
        ]
        if len(matches) == 1:
            return matches[0]
        if default in matches:
            return default
    return (
        default[0] if len(cache_options) > 1 else cache_options[0],
        default[1] if len(reasoning_options) > 1 else reasoning_options[0],
    )
