"""OTLP spans → typed rows: one :class:`LlmCallRow` per LLM call, one :class:`SpanRow` per other span.

Pure (no I/O): ingest decodes a request (:func:`.otlp_decode.decode_traces_fast`), calls :func:`normalize`, and
hands the rows on. Every span gives exactly one row, or is rejected alone (counted in ``rejected``, described in
``errors``); a bad span never raises.

Input: a :data:`.otlp_decode.FastTraceRequest` (the fast path: attributes arrive as encoded ``KeyValue`` bytes) or
a standard ``ExportTraceServiceRequest`` (read through upb's wrappers; slower, same rows). Attribute names of every
convention, and the classification of keys, live in :mod:`.conventions`.

Accepted conventions (DESIGN §9) and how a span is recognised as an LLM call, first rule that applies:

1. ``gen_ai.operation.name`` present: LLM iff it is an inference operation (``chat``, ``text_completion``,
   ``generate_content``, ``embeddings``, ...). ``execute_tool``, ``invoke_agent``, ``retrieval`` ... are spans.
2. OpenInference ``openinference.span.kind`` present: LLM iff ``LLM`` or ``EMBEDDING``.
3. Langfuse ``langfuse.observation.type`` present: LLM iff ``generation`` or ``embedding``.
4. OpenLLMetry/Traceloop ``llm.request.type`` present (``chat``/``completion``/``embedding``/``rerank``): LLM.
5. Traceloop ``traceloop.span.kind`` present (workflow/task/agent/tool): not LLM.
6. Otherwise: LLM iff ``gen_ai.request.model`` or ``gen_ai.response.model`` is set (older GenAI and Vercel AI SDK
   ``ai.*.doGenerate``/``doStream`` spans; Vercel's outer ``ai.generateText`` span has no ``gen_ai.*`` model and
   stays a span, so a call is never counted twice).

Token usage is normalised to the OTel convention the ``llm_calls`` columns use: ``input_tokens`` includes cache
reads and cache writes, ``output_tokens`` includes reasoning tokens. Conventions disagree (OpenAI and the OTel
spec: cached tokens are a subset of the prompt; Anthropic's API and Langfuse usage details: cache reads/writes are
*on top of* input), so :func:`_normalise_usage` decides, in this order:

* a reported count smaller than its part proves the part is on top (``input < cache_read + cache_write`` →
  add them; ``output < reasoning`` → add it);
* a reported total decides when it matches exactly one reading (``total == input + output`` → already included;
  ``total == input + output + cache`` → on top). OpenLLMetry's Anthropic instrumentation, for example, already
  adds the cache tokens into ``gen_ai.usage.prompt_tokens`` and reports ``llm.usage.total_tokens`` = that + output;
* otherwise the convention's own rule: on top for Anthropic reported with the legacy Traceloop names
  (``gen_ai.usage.cache_read_input_tokens``/``cache_creation_input_tokens``, provider ``anthropic``) and for
  Langfuse's flattened usage details (``input``, ``input_cached_tokens``, ``output_reasoning_tokens``, ...);
  included for everything else (current GenAI names, OpenAI-style legacy names, OpenInference, Sentry, Vercel).

Time to first token, first spelling present wins: our SDK's ``inferwatch.first_token.unix_nano`` (absolute),
``gen_ai.response.time_to_first_chunk`` (s, OTel), ``gen_ai.response.time_to_first_token`` (s, Sentry),
``gen_ai.server.time_to_first_token`` (s, OpenLIT's span attribute), ``ai.response.msToFirstChunk`` /
``ai.stream.msToFirstChunk`` (ms, Vercel), the "First Token Stream Event" (OpenInference) or
``ai.stream.firstChunk`` span event, Langfuse's ``completion_start_time`` (ISO string). ``ttft_ms`` is rounded half
up and at least 1 when known; 0 when unknown, negative, or the call was explicitly not streamed.

Derived columns:

* ``streamed``: the first explicit flag (``inferwatch.streamed``, ``gen_ai.request.stream``, Sentry's
  ``gen_ai.response.streaming``, OpenLIT's ``gen_ai.request.is_stream``, Traceloop's ``llm.is_streaming``, Vercel's
  ``doStream`` operation, ``"stream"`` in OpenInference/Langfuse parameters); without one, a known TTFT means
  streamed (only streams report a first token).
* ``decode_tps`` = (output_tokens − 1) / (end − first token) in seconds, when streamed with a known first token,
  more than one output token and trusted usage; else 0. Our SDK's own ``inferwatch.decode.tokens_per_second`` wins.
* ``latency_ms`` = end − start, rounded. ``model`` = request model, else response model.
* ``status`` = error when the span status is ERROR, ``error.type`` is set, or Langfuse's level is ERROR;
  ``error_type`` = ``error.type``, else the first exception event's ``exception.type``, else ``_OTHER`` (the
  GenAI conventions' fallback) for an error.
* ``finish_reason`` = the first reported reason, lower-cased with ``-`` → ``_`` (Vercel's ``content-filter``,
  Gemini's ``MAX_TOKENS``). ``truncated``: ``inferwatch.truncated`` if set, else reason length / max_tokens /
  max_output_tokens. ``refusal``: ``inferwatch.refusal`` or reason content_filter / refusal / safety.
  ``empty_response``: ``inferwatch.empty_response`` if set, else output_tokens == 0 on a successful call with
  trusted usage (not for embeddings).
* ``usage_missing``: set only when a call that should have reported usage did not: our SDK says so, a count was
  out of range, or a *successful* call reports neither input nor output tokens. A failed call (status error, e.g.
  rate limited) with no token counts is not ``usage_missing``: there was no usage to report. A flagged row must
  never be priced as zero silently.
* ``provider``: ``gen_ai.provider.name``, deprecated ``gen_ai.system``, OpenInference ``llm.provider`` /
  ``llm.system``, lower-cased and mapped to the current provider names (``az.ai.inference`` →
  ``azure.ai.inference``, Vercel's ``openai.chat`` → ``openai``, ...). Langfuse spans carry none: ''.
* ``cost_usd``/``price_version`` are left 0/'' for the pricing step.

A non-LLM span's ``status_message`` goes through the redactor (error texts quote user input); its ``operation`` is
``gen_ai.operation.name``, or the OpenInference/Langfuse/Traceloop span kind mapped to one (TOOL →
``execute_tool``, RETRIEVER → ``retrieval``, AGENT → ``invoke_agent``, workflow → ``invoke_workflow``).

Validation (per span): trace_id must be 16 non-zero bytes, span_id 8 non-zero bytes, parent_span_id empty or 8
bytes, start time set and end >= start, and the start time inside the window the tables keep: not older than
``retention_days`` (ClickHouse's TTL would drop the row right after the insert) and not more than
:data:`MAX_FUTURE_SECONDS` ahead of ``now_ns`` (it would pollute future buckets) → otherwise the span is rejected,
with a message naming it and the reason. A span whose attributes are not valid ``KeyValue`` bytes (fast input
only: bad protobuf or UTF-8) is rejected alone too. A token count that is negative or above
:data:`MAX_TOKENS_PER_CALL` is *not* a rejection: the call's latency, status and flags are still real, so the
row is kept, that count is treated as absent, ``usage_missing`` is set (pricing must never price it as zero
silently) and a message goes to ``errors``.

Content: prompt/completion text under any convention (see ``conventions.CONTENT_SOURCES``) never goes into
``attributes``. With ``content_capture="redacted"`` it is redacted and stored as one :class:`PromptLogRow` per span
(any kind); with ``"off"`` it is dropped. Where a span carries the same content twice (OpenInference's
``input.value`` and ``llm.input_messages.*``), the highest-priority source is kept; system instructions are
prepended to the prompt.

Attributes: span attributes, then resource attributes, then ``otel.scope.name``/``version``; values stringified
(arrays and key-value lists as compact JSON, bytes as hex), at most :data:`MAX_ATTRIBUTES` keys (span keys win;
the number dropped is recorded under :data:`DROPPED_ATTRIBUTES_KEY`) and :data:`MAX_ATTRIBUTE_CHARS` characters
per value. Keys that look like credentials (authorization, api_key/api-key, password, secret, cookie, credential,
headers, a last component ending in ``token`` such as ``access_token``/``accessToken`` — but not the ``*_tokens``
counters or ``time_to_first_token``) are dropped. Keys mapped to typed columns are not repeated in ``attributes``.
A key sent twice in one span: the last value wins (as protobuf does for a map) and the key keeps its first
position; both input types behave the same.

Speed (≥ 20k spans/s end to end on 2 cores is the budget; ``bench/normalize.py`` measures this module): on fast
input each attribute is one ``bytes`` object, looked up in a bounded memo (``_KV_CACHE``) of ``encoded KeyValue →
(key, value, attribute text, content code)``: most attributes repeat across spans (models, providers, flags,
features, small counts), so the usual attribute costs one dict lookup; a miss decodes the bytes
(:func:`.otlp_decode.decode_key_value`) and classifies the key (memoised per distinct key). No regex, and no JSON
unless a value is structured or content is present. The per-call code (``_llm_row``, ``_usage``) reads the usual
spelling of each column inline and makes Python calls only for the unusual ones: on CPython a call costs about as
much as the dict lookups it would save.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

import orjson
from inferwatch import semconv as sc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from .conventions import (  # names and key classes of every convention: see conventions.py
    ANY_MODEL_KEYS, CACHE_READ_KEYS, CACHE_WRITE_KEYS, COMPLETION, CONTENT, CONTENT_EVENTS, CONTENT_SOURCES,
    EXCEPTION_TYPE, FINISH_REASON_KEYS, GEN_AI_USAGE_TOTAL_TOKENS, INFERENCE_OPERATIONS, INPUT_KEYS, KEY_CLASS,
    LF_COMPLETION_START_TIME, LF_LEVEL, LF_LLM_TYPES, LF_MODEL_PARAMETERS, LF_SPAN_OPERATION, LF_TYPE,
    LF_USAGE_DETAILS, LLM_FIELD, MS_TO_FIRST_CHUNK_KEYS, OI_INVOCATION_PARAMETERS, OI_LLM_KINDS, OI_SPAN_KIND,
    OI_SPAN_OPERATION, OPENINFERENCE_FIRST_TOKEN_EVENT, OPERATION, OUTPUT_KEYS, PLAIN, PROMPT,
    PROMPT_TEMPLATE_KEYS, PROMPT_VERSION_KEYS, PROVIDER_KEYS, REASONING_KEYS, REFUSAL_REASONS, REQUEST_MODEL_KEYS,
    REQUEST_TYPE_OPERATION, RESPONSE_ID_KEYS, RESPONSE_MODEL_KEYS, SERVICE_NAME, STREAM_KEYS,
    SYSTEM_INSTRUCTIONS_CODE, TOTAL_KEYS, TRACELOOP_CACHE_CREATION_INPUT_TOKENS, TRACELOOP_CACHE_READ_INPUT_TOKENS,
    TRACELOOP_REQUEST_TYPE, TRACELOOP_SPAN_KIND, TRACELOOP_SPAN_OPERATION, TRUNCATION_REASONS, TTFT_SECONDS_KEYS,
    VERCEL_FIRST_CHUNK_EVENT, VERCEL_OPERATION_ID, canonical_provider, classify_key,
)  # fmt: skip
from .otlp_decode import FastTraceRequest, MalformedPayload, any_value_to_python, decode_key_value
from .redaction import DEFAULT_REDACTOR, Redactor
from .rows import LlmCallRow, PromptLogRow, SpanRow

__all__ = [
    "NormalizedBatch",
    "normalize",
    "MAX_ATTRIBUTES",
    "MAX_ATTRIBUTE_CHARS",
    "MAX_CONTENT_CHARS",
    "MAX_TOKENS_PER_CALL",
    "MAX_FUTURE_SECONDS",
    "DEFAULT_RETENTION_DAYS",
    "DROPPED_ATTRIBUTES_KEY",
]

# --- limits ------------------------------------------------------------------------------------------------------
MAX_ATTRIBUTES = 128  # keys per row's attributes map (span keys first, then resource, then scope)
MAX_ATTRIBUTE_CHARS = 4096  # characters per attribute value (longer values are cut)
MAX_CONTENT_CHARS = 65536  # characters per prompt / completion stored (cut after redaction, see _redact_capped)
_REDACTION_MARGIN = 4096  # extra characters redacted before the cut, so a secret straddling it is still found
MAX_TOKENS_PER_CALL = 10_000_000  # a token count above this (or negative) is treated as absent
MAX_ERRORS = 100  # messages kept in NormalizedBatch.errors; the rest are summarised in one line
DROPPED_ATTRIBUTES_KEY = "inferwatch.collector.dropped_attributes"
DEFAULT_RETENTION_DAYS = 90  # normalize(retention_days=...): pass the tables' retention (Settings.retention_days)
MAX_FUTURE_SECONDS = 3600  # a span starting further ahead of now than this is rejected (clock skew allowance)

_new_row = tuple.__new__  # NamedTuple rows from a tuple in column order, without a Python-level call
_SPAN_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")
_STATUS = ("unset", "ok", "error")
_STATUS_ERROR = 2


# --- output ------------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class NormalizedBatch:
    """Rows from one OTLP request. ``rejected`` spans gave no row; ``errors`` says why (and notes kept-but-fixed
    spans, such as an out-of-range token count); ``redactions`` counts replaced entities in stored content."""

    llm_calls: list[LlmCallRow]
    spans: list[SpanRow]
    prompt_logs: list[PromptLogRow]
    rejected: int
    errors: list[str]
    redactions: dict[str, int] = field(default_factory=dict)


# --- attributes: one pass per span, for either input type -------------------------------------------------------
# A scanned attribute: (key, Python value, its text for the attributes map (PLAIN keys only, else None), its
# content source code (>= CONTENT) when the key is content, else 0). Values are shared between spans through
# _KV_CACHE: lists and dicts (arrays, kvlists) must never be mutated.
_Entry = tuple[str, Any, "str | None", int]

# Encoded KeyValue bytes -> entry. Bounded: entries up to _KV_CACHE_MAX_BYTES long, cleared when full (unique
# values such as response ids fill it; the repeating ones are back after a few spans).
_KV_CACHE: dict[bytes, _Entry] = {}
_KV_CACHE_LIMIT = 20_000
_KV_CACHE_MAX_BYTES = 256


def _kv_entry(raw: bytes) -> _Entry:
    """The entry of one encoded KeyValue (a _KV_CACHE miss); raises MalformedPayload for invalid bytes."""
    key, value = decode_key_value(raw)
    code = KEY_CLASS.get(key)
    if code is None:
        code = classify_key(key)
    if code == PLAIN:
        text = value if type(value) is str and len(value) <= MAX_ATTRIBUTE_CHARS else _to_str(value)
        entry: _Entry = (key, value, text, 0)
    else:
        entry = (key, value, None, code if code >= CONTENT else 0)
    if len(raw) <= _KV_CACHE_MAX_BYTES:
        if len(_KV_CACHE) >= _KV_CACHE_LIMIT:
            _KV_CACHE.clear()
        _KV_CACHE[raw] = entry
    return entry


# (Python values by key, the attributes map (PLAIN keys), content by source code (None: none or not captured))
_Scan = tuple[dict[str, Any], dict[str, str], "dict[int, list[tuple[str, Any]]] | None"]


def _scan_fast(raws: Iterable[bytes], capture: bool) -> _Scan:
    """Span attributes of a FastTraceRequest in one pass (the hot loop: one dict lookup per repeated attribute)."""
    cached = _KV_CACHE.get
    attrs: dict[str, Any] = {}
    attributes: dict[str, str] = {}
    found: dict[int, list[tuple[str, Any]]] | None = None
    for raw in raws:
        entry = cached(raw)
        if entry is None:
            entry = _kv_entry(raw)
        key, value, text, content = entry
        attrs[key] = value
        if text is not None:
            attributes[key] = text
        elif content and capture:
            if found is None:
                found = {}
            found.setdefault(content, []).append((key, value))
        # SECRET, DROP_CONTENT and OPERATION never go to attributes; LLM_FIELD keys only on non-LLM spans
    return attrs, attributes, found


def _scan_standard(key_values: Iterable[Any], capture: bool) -> _Scan:
    """The same for the standard message's KeyValue wrappers (the way normalize read every span before the fast
    decoder; kept for callers holding a standard message, and as the tests' independent reference)."""
    attrs: dict[str, Any] = {}
    attributes: dict[str, str] = {}
    found: dict[int, list[tuple[str, Any]]] | None = None
    for kv in key_values:
        key = kv.key
        any_value = kv.value
        value = any_value.string_value  # most values are non-empty strings: one read, no WhichOneof
        if not value:
            value = any_value_to_python(any_value)
        attrs[key] = value
        code = KEY_CLASS.get(key)
        if code is None:
            code = classify_key(key)
        if code == PLAIN:
            attributes[key] = value if type(value) is str and len(value) <= MAX_ATTRIBUTE_CHARS else _to_str(value)
        elif code >= CONTENT and capture:
            if found is None:
                found = {}
            found.setdefault(code, []).append((key, value))
    return attrs, attributes, found


def _attributes_fast(raws: Iterable[bytes]) -> dict[str, Any]:
    """Event or resource attributes of a FastTraceRequest as {key: Python value}."""
    cached = _KV_CACHE.get
    out: dict[str, Any] = {}
    for raw in raws:
        entry = cached(raw) or _kv_entry(raw)
        out[entry[0]] = entry[1]
    return out


def _attributes(key_values: Iterable[Any]) -> dict[str, Any]:
    """The same for the standard message's KeyValue wrappers."""
    out: dict[str, Any] = {}
    for kv in key_values:
        value = kv.value
        text = value.string_value
        out[kv.key] = text if text else any_value_to_python(value)
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError


def _to_str(value: Any) -> str:
    t = type(value)
    if t is str:
        text = value
    elif t is bool:
        return "true" if value else "false"
    elif t is int:
        return str(value)
    elif t is float:
        return repr(value)
    elif t is bytes:
        text = value.hex()
    elif value is None:
        return ""
    else:
        text = orjson.dumps(value, default=_json_default).decode()
    return text if len(text) <= MAX_ATTRIBUTE_CHARS else text[:MAX_ATTRIBUTE_CHARS]


# --- typed reads -------------------------------------------------------------------------------------------------
def _as_int(value: Any) -> int | None:
    t = type(value)
    if t is int:
        return value
    if t is float:
        return int(value) if math.isfinite(value) else None
    if t is str:
        try:
            return int(value.strip())
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                return None
            return int(number) if math.isfinite(number) else None
    return None


def _as_float(value: Any) -> float | None:
    t = type(value)
    if t is float:
        return value if math.isfinite(value) else None
    if t is int:
        return float(value)
    if t is str:
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _as_bool(value: Any) -> bool | None:
    t = type(value)
    if t is bool:
        return value
    if t is str:
        lowered = value.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        return None
    if t is int:
        return value != 0
    return None


def _as_str(value: Any) -> str:
    if value is None:
        return ""
    return value if type(value) is str else _to_str(value)


def _first(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """Value of the first key present with a non-empty value."""
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def _first_str(get: Any, keys: tuple[str, ...]) -> str:
    """``_as_str(_first(attrs, keys))`` in one call (``get`` is ``attrs.get``)."""
    for key in keys:
        value = get(key)
        if value is not None and value != "":
            return value if type(value) is str else _to_str(value)
    return ""


def _json_object(value: Any) -> Any:
    """A JSON-encoded attribute (Langfuse and OpenInference send dicts as JSON strings), or the value itself."""
    if type(value) is str and value[:1] in ("{", "[", '"'):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def _finish_reason(raw: Any) -> str:
    """First finish reason, lower-cased with '-' → '_' (a list, a JSON list in a string, or a plain string)."""
    if raw is None:
        return ""
    if type(raw) is list and raw and type(raw[0]) is str and raw[0]:  # the usual shape: ["stop"]
        return raw[0].lower().replace("-", "_")
    if type(raw) is str and raw.startswith("["):
        parsed = _json_object(raw)
        raw = parsed if isinstance(parsed, list) else raw
    if type(raw) is list:
        raw = next((r for r in raw if r is not None and r != ""), None)
    if type(raw) is not str:
        return "" if raw is None or isinstance(raw, (list, dict)) else _as_str(raw)
    return raw.strip().lower().replace("-", "_")


def _iso_to_unix_nano(raw: Any) -> int | None:
    """Langfuse's completion_start_time: an ISO 8601 string, often JSON-quoted; naive times are UTC."""
    text = _as_str(raw).strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


# --- usage -------------------------------------------------------------------------------------------------------
class _Usage:
    """Raw counts as reported, before normalisation; None = not reported. Defaults are class attributes, so making
    one runs no Python code (this is per LLM call)."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    total: int | None = None
    # the convention's default when the numbers cannot tell: cache / reasoning reported on top of input / output
    cache_on_top = False
    reasoning_on_top = False
    invalid: tuple[str, ...] = ()  # problems with reported counts (each makes the row usage_missing)


def _checked_count(key: str, raw: Any, usage: _Usage) -> int | None:
    """A count that is not an int in range: converted if possible, else recorded as invalid (and absent)."""
    number = _as_int(raw)
    if number is None or number < 0 or number > MAX_TOKENS_PER_CALL:
        usage.invalid += (f"{key}={_as_str(raw)[:40]} is not a token count in [0, {MAX_TOKENS_PER_CALL}]",)
        return None
    return number


def _count(attrs: dict[str, Any], usage: _Usage, keys: tuple[str, ...]) -> int | None:
    """First present token count among ``keys``; out-of-range values are recorded and treated as absent."""
    for key in keys:
        raw = attrs.get(key)
        if raw is not None:
            return raw if type(raw) is int and 0 <= raw <= MAX_TOKENS_PER_CALL else _checked_count(key, raw, usage)
    return None


def _usage(attrs: dict[str, Any], provider: str) -> tuple[int, int, int, int, int, bool, tuple[str, ...]]:
    """Token usage as the columns want it: (input incl. cache reads+writes, output incl. reasoning, cache_read,
    cache_write, reasoning, whether neither input nor output was reported, problems with reported counts)."""
    # Per LLM call, so written as _llm_row is: the first spelling inline, _count() only if it is not a plain count.
    usage = _Usage()
    get = attrs.get
    top = MAX_TOKENS_PER_CALL
    n = get(sc.GEN_AI_USAGE_INPUT_TOKENS)
    usage.input = n if type(n) is int and 0 <= n <= top else _count(attrs, usage, INPUT_KEYS)
    n = get(sc.GEN_AI_USAGE_OUTPUT_TOKENS)
    usage.output = n if type(n) is int and 0 <= n <= top else _count(attrs, usage, OUTPUT_KEYS)
    n = get(GEN_AI_USAGE_TOTAL_TOKENS)
    usage.total = n if type(n) is int and 0 <= n <= top else _count(attrs, usage, TOTAL_KEYS)
    n = get(sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS)
    usage.reasoning = n if type(n) is int and 0 <= n <= top else _count(attrs, usage, REASONING_KEYS)
    n = get(sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS)
    usage.cache_read = n if type(n) is int and 0 <= n <= top else _count(attrs, usage, CACHE_READ_KEYS)
    n = get(sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS)
    usage.cache_write = n if type(n) is int and 0 <= n <= top else _count(attrs, usage, CACHE_WRITE_KEYS)
    if usage.cache_read is None and usage.cache_write is None:
        # Traceloop legacy cache names: Anthropic-style reporting puts these on top of input (module docstring)
        usage.cache_read = _count(attrs, usage, (TRACELOOP_CACHE_READ_INPUT_TOKENS,))
        usage.cache_write = _count(attrs, usage, (TRACELOOP_CACHE_CREATION_INPUT_TOKENS,))
        if (usage.cache_read or usage.cache_write) and provider == "anthropic":
            usage.cache_on_top = True
    if usage.input is None and usage.output is None:
        details = get(LF_USAGE_DETAILS)
        if details is not None:
            _read_langfuse_usage(details, usage)
    no_usage = usage.input is None and usage.output is None
    return (*_normalise_usage(usage), no_usage, usage.invalid)


def _read_langfuse_usage(raw: Any, usage: _Usage) -> None:
    """Langfuse ``usage_details``: a JSON object of counts. Its own flattened keys (``input``, ``output``,
    ``input_cached_tokens``, ``cache_read_input_tokens``, ``input_cache_creation``, ``output_reasoning_tokens``,
    ``input_audio_tokens``, ...) are additive: every key is a separately priced share and ``total`` is their sum.
    OpenAI-shaped usage (``prompt_tokens`` + ``prompt_tokens_details``) keeps OpenAI's included-in semantics."""
    details = _json_object(raw)
    if not isinstance(details, dict):
        usage.invalid += (f"{LF_USAGE_DETAILS} is not a JSON object",)
        return
    counts: dict[str, int] = {}
    flat: list[tuple[str, Any]] = []
    for key, value in details.items():
        if isinstance(value, dict):  # OpenAI-shaped nested details: prompt_tokens_details.cached_tokens
            flat.extend((f"{key}.{sub_key}", sub_value) for sub_key, sub_value in value.items())
        else:
            flat.append((key, value))
    for key, value in flat:
        number = _as_int(value) if type(value) is not bool else None
        if number is None:
            continue
        if number < 0 or number > MAX_TOKENS_PER_CALL:
            usage.invalid += (f"{LF_USAGE_DETAILS}.{key}={number} is not a token count",)
            continue
        counts[key] = number
    native = "input" in counts or "output" in counts
    usage.cache_on_top = usage.reasoning_on_top = native
    base_in = next((counts[k] for k in ("input", "prompt_tokens", "input_tokens") if k in counts), None)
    base_out = next((counts[k] for k in ("output", "completion_tokens", "output_tokens") if k in counts), None)
    usage.total = next((counts[k] for k in ("total", "total_tokens") if k in counts), None)
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
    if base_in is not None or extra_in:
        usage.input = (base_in or 0) + extra_in
    if base_out is not None or extra_out:
        usage.output = (base_out or 0) + extra_out
    usage.cache_read = cache_read or None
    usage.cache_write = cache_write or None
    usage.reasoning = reasoning or None


def _normalise_usage(usage: _Usage) -> tuple[int, int, int, int, int]:
    """→ (input incl. cache reads+writes, output incl. reasoning, cache_read, cache_write, reasoning).

    Rules in the module docstring: proof by a count smaller than its part, then an exactly matching total, then
    the convention's default."""
    inp = usage.input or 0
    out = usage.output or 0
    cached = (usage.cache_read or 0) + (usage.cache_write or 0)
    reasoning = usage.reasoning or 0
    if usage.total is None:  # the usual case, and the same choice as below without a total to match
        if cached and (inp < cached or usage.cache_on_top):
            inp += cached
        if reasoning and (out < reasoning or usage.reasoning_on_top):
            out += reasoning
        return inp, out, usage.cache_read or 0, usage.cache_write or 0, reasoning
    cache_options = (False, True) if cached else (False,)
    reasoning_options = (False, True) if reasoning else (False,)
    if cached and inp < cached:
        cache_options = (True,)
    if reasoning and out < reasoning:
        reasoning_options = (True,)
    default = (usage.cache_on_top, usage.reasoning_on_top)
    choice = None
    if usage.total is not None and (len(cache_options) > 1 or len(reasoning_options) > 1):
        matches = [
            (c, r)
            for c in cache_options
            for r in reasoning_options
            if inp + (cached if c else 0) + out + (reasoning if r else 0) == usage.total
        ]
        if len(matches) == 1:
            choice = matches[0]
        elif default in matches:
            choice = default
    if choice is None:
        choice = (
            default[0] if len(cache_options) > 1 else cache_options[0],
            default[1] if len(reasoning_options) > 1 else reasoning_options[0],
        )
    if choice[0]:
        inp += cached
    if choice[1]:
        out += reasoning
    return inp, out, usage.cache_read or 0, usage.cache_write or 0, reasoning


# --- content -----------------------------------------------------------------------------------------------------
def _render(code: int, items: list[tuple[str, Any]]) -> str:
    """One content source as text: a single value as-is (JSON for structured values), or flattened indexed keys
    (``gen_ai.prompt.0.role``, ``llm.input_messages.0.message.content``) rebuilt into a JSON list of objects."""
    side, name, is_prefix = CONTENT_SOURCES[code - CONTENT]
    if not is_prefix:
        value = items[-1][1]
        return value if type(value) is str else orjson.dumps(value, default=_json_default).decode()
    entries: dict[int, dict[str, Any]] = {}
    loose: dict[str, Any] = {}
    for key, value in items:
        rest = key[len(name) :]
        index, _, sub = rest.partition(".")
        if index.isdigit() and sub:
            head, dot, tail = sub.partition(".")
            if dot and head in ("message", "document", "embedding"):
                sub = tail  # OpenInference wraps fields: llm.input_messages.0.message.content
            entries.setdefault(int(index), {})[sub] = value
        else:
            loose[rest] = value
    rebuilt: list[Any] = [entries[i] for i in sorted(entries)]
    if loose:
        rebuilt.append(loose)
    return orjson.dumps(rebuilt, default=_json_default).decode()


def _content_text(found: dict[int, list[tuple[str, Any]]], side: int) -> str:
    best = None
    for code in sorted(found):
        if code == SYSTEM_INSTRUCTIONS_CODE:
            continue
        if CONTENT_SOURCES[code - CONTENT][0] == side:
            best = code
            break
    text = _render(best, found[best]) if best is not None else ""
    if side == PROMPT and SYSTEM_INSTRUCTIONS_CODE in found:
        system = _render(SYSTEM_INSTRUCTIONS_CODE, found[SYSTEM_INSTRUCTIONS_CODE])
        text = f"{system}\n\n{text}" if text else system
    return text


def _redact_capped(redactor: Redactor, text: str, totals: dict[str, int]) -> str:
    """Redact, then cut to MAX_CONTENT_CHARS. Only the first MAX + margin characters are redacted (the rest would
    be cut anyway); the margin keeps a secret that straddles the cut whole, so it is found and replaced."""
    if not text:
        return ""
    if len(text) > MAX_CONTENT_CHARS + _REDACTION_MARGIN:
        text = text[: MAX_CONTENT_CHARS + _REDACTION_MARGIN]
    result = redactor.redact(text)
    for entity, n in result.counts.items():
        totals[entity] = totals.get(entity, 0) + n
    return result.text[:MAX_CONTENT_CHARS]


# --- the normaliser ----------------------------------------------------------------------------------------------
_ZERO_TRACE_ID = bytes(16)
_ZERO_SPAN_ID = bytes(8)


class _Errors:
    __slots__ = ("messages", "overflow")

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.overflow = 0

    def add(self, message: str) -> None:
        if len(self.messages) < MAX_ERRORS:
            self.messages.append(message)
        else:
            self.overflow += 1

    def finish(self) -> list[str]:
        if self.overflow:
            self.messages.append(f"... and {self.overflow} more")
        return self.messages


#: Prices one LLM call for its row: ``price(model, provider, input_tokens, output_tokens, cache_read_tokens,
#: cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, usage_missing, cache_hit)`` with tokens in the
#: OTel convention → ``(cost_usd, price_version, (cost_input_usd, cost_cache_read_usd, cost_cache_write_usd,
#: cost_output_usd, cost_reasoning_usd, cache_savings_usd, unpriced), cost_avoided_usd)``. See ``cost/ingest_pricer.py``.
Pricer = Callable[[str, str, int, int, int, int, int, int, bool, bool], tuple[float, str, tuple, float]]
_NO_COSTS = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)


class _Batch:
    """What every span of one normalize() call shares: options, readers for the input type, and the output."""

    __slots__ = (
        "project_id", "capture", "redactor", "scan", "read", "oldest_ns", "newest_ns", "retention_days",
        "llm_calls", "spans", "prompt_logs", "errors", "redactions", "price",
    )  # fmt: skip

    def __init__(self, project_id: str, capture: bool, redactor: Redactor, fast: bool, now_ns: int,
                 retention_days: int, price: Pricer | None) -> None:  # fmt: skip
        self.project_id = project_id
        self.price = price
        self.capture = capture
        self.redactor = redactor
        self.scan = _scan_fast if fast else _scan_standard
        self.read = _attributes_fast if fast else _attributes
        self.oldest_ns = now_ns - retention_days * 86_400_000_000_000
        self.newest_ns = now_ns + MAX_FUTURE_SECONDS * 1_000_000_000
        self.retention_days = retention_days
        self.llm_calls: list[LlmCallRow] = []
        self.spans: list[SpanRow] = []
        self.prompt_logs: list[PromptLogRow] = []
        self.errors = _Errors()
        self.redactions: dict[str, int] = {}


def normalize(
    request: ExportTraceServiceRequest | Any,
    project_id: str,
    *,
    content_capture: str = "redacted",
    redactor: Redactor = DEFAULT_REDACTOR,
    retention_days: int = DEFAULT_RETENTION_DAYS,
    now_ns: int | None = None,
    price: Pricer | None = None,
) -> NormalizedBatch:
    """Turn one OTLP trace request into rows. Never raises for a bad span (see the module docstring).

    ``request``: a :data:`.otlp_decode.FastTraceRequest` (fast) or an ``ExportTraceServiceRequest``; same rows.
    Spans starting more than ``retention_days`` before ``now_ns`` (default: the current time) or more than
    :data:`MAX_FUTURE_SECONDS` after it are rejected. ``price`` stamps each LLM call's cost columns (see
    :data:`Pricer`); without it they stay zero and unflagged (the collector always passes one)."""
    if content_capture not in ("off", "redacted"):
        raise ValueError(f"content_capture must be 'off' or 'redacted', not {content_capture!r}")
    if retention_days < 1:
        raise ValueError(f"retention_days must be at least 1, not {retention_days!r}")
    batch = _Batch(
        project_id, content_capture == "redacted", redactor, isinstance(request, FastTraceRequest),
        time.time_ns() if now_ns is None else now_ns, retention_days, price,
    )  # fmt: skip
    errors = batch.errors
    rejected = 0
    index = -1
    for resource_spans in request.resource_spans:
        resource_problem = None
        try:
            resource = batch.read(resource_spans.resource.attributes)
        except MalformedPayload as exc:  # fast input only: every span of this resource is rejected
            resource, resource_problem = {}, f"resource {exc.message}"
        service = _as_str(resource.get(SERVICE_NAME)) or "unknown_service"
        base: dict[str, str] = {}
        for key, value in resource.items():
            if key != SERVICE_NAME and classify_key(key) in (PLAIN, LLM_FIELD, OPERATION):
                base[key] = _to_str(value)
        for scope_spans in resource_spans.scope_spans:
            scope_attrs = base
            scope = scope_spans.scope
            if scope.name:
                scope_attrs = dict(base)
                scope_attrs["otel.scope.name"] = scope.name
                if scope.version:
                    scope_attrs["otel.scope.version"] = scope.version
            for span in scope_spans.spans:
                index += 1
                try:
                    problem = resource_problem or _convert(span, index, service, scope_attrs, batch)
                except MalformedPayload as exc:  # fast input: an attribute that is not a valid KeyValue
                    problem = exc.message
                except Exception as exc:  # a bug or an input we did not foresee: lose the span, not the batch
                    problem = f"could not be normalised: {type(exc).__name__}: {exc}"
                if problem is not None:
                    rejected += 1
                    errors.add(f"span {index}: {problem}")
    return NormalizedBatch(batch.llm_calls, batch.spans, batch.prompt_logs, rejected, errors.finish(),
                           batch.redactions)  # fmt: skip


def _invalid_span(trace_id: bytes, span_id: bytes, parent: bytes, start_ns: int, end_ns: int,
                  batch: _Batch) -> str | None:  # fmt: skip
    """Why a span cannot become a row, or None."""
    if len(trace_id) != 16:
        return f"trace_id must be 16 bytes, got {len(trace_id)}"
    if trace_id == _ZERO_TRACE_ID:
        return "trace_id must not be all zeros"
    if len(span_id) != 8:
        return f"span_id must be 8 bytes, got {len(span_id)}"
    if span_id == _ZERO_SPAN_ID:
        return "span_id must not be all zeros"
    if parent and len(parent) != 8:
        return f"parent_span_id must be empty or 8 bytes, got {len(parent)}"
    if start_ns == 0:
        return "start_time_unix_nano is missing"
    if end_ns < start_ns:
        return "end_time_unix_nano is before start_time_unix_nano"
    if start_ns < batch.oldest_ns:
        return f"start_time {_utc_text(start_ns)} is older than the {batch.retention_days}-day retention"
    if start_ns > batch.newest_ns:
        return f"start_time {_utc_text(start_ns)} is more than {_duration_text(MAX_FUTURE_SECONDS)} in the future"
    return None


def _utc_text(ns: int) -> str:
    try:
        return datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):  # pragma: no cover - fixed64 ns always fit a datetime
        return f"{ns} ns"


def _duration_text(seconds: int) -> str:
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return f"{hours} hour" if hours == 1 else f"{hours} hours"
    return f"{seconds} s"


def _convert(span: Any, index: int, service: str, scope_attrs: dict[str, str], batch: _Batch) -> str | None:
    """One span → one row (plus a prompt log when it carries content); returns why it was rejected, or None."""
    # 0. validation, reading each field once
    trace_bytes = span.trace_id
    span_bytes = span.span_id
    parent = span.parent_span_id
    start_ns = span.start_time_unix_nano
    end_ns = span.end_time_unix_nano
    if (
        len(trace_bytes) != 16 or len(span_bytes) != 8 or (parent and len(parent) != 8) or start_ns == 0
        or end_ns < start_ns or start_ns < batch.oldest_ns or start_ns > batch.newest_ns
        or trace_bytes == _ZERO_TRACE_ID or span_bytes == _ZERO_SPAN_ID
    ):  # fmt: skip
        return _invalid_span(trace_bytes, span_bytes, parent, start_ns, end_ns, batch)

    # 1. one pass over the attributes: Python values for the mapping below, the attributes map, content
    capture = batch.capture
    attrs, attributes, found = batch.scan(span.attributes, capture)
    get = attrs.get

    # 2. LLM or not, and the operation name (rules 1-6 of the module docstring)
    operation = get(sc.GEN_AI_OPERATION_NAME)
    is_llm = False
    if operation is not None:
        if type(operation) is not str:
            operation = _as_str(operation)
        is_llm = operation in INFERENCE_OPERATIONS
    elif (oi_kind := get(OI_SPAN_KIND)) is not None:
        oi_kind = _as_str(oi_kind).upper()
        operation = OI_LLM_KINDS.get(oi_kind)
        is_llm = operation is not None
        if not is_llm:
            operation = OI_SPAN_OPERATION.get(oi_kind, "")
    elif (lf_type := get(LF_TYPE)) is not None:
        lf_type = _as_str(lf_type).lower()
        operation = LF_LLM_TYPES.get(lf_type)
        is_llm = operation is not None
        if not is_llm:
            operation = LF_SPAN_OPERATION.get(lf_type, "")
    elif (request_type := get(TRACELOOP_REQUEST_TYPE)) is not None:
        request_type = _as_str(request_type).lower()
        operation = REQUEST_TYPE_OPERATION.get(request_type, request_type)
        is_llm = True
    elif (tl_kind := get(TRACELOOP_SPAN_KIND)) is not None:
        operation = TRACELOOP_SPAN_OPERATION.get(_as_str(tl_kind).lower(), "")
    elif get(sc.GEN_AI_REQUEST_MODEL) is not None or get(sc.GEN_AI_RESPONSE_MODEL) is not None:
        is_llm = True
        operation = "embeddings" if "embed" in span.name.lower() else "chat"
    else:
        operation = ""

    if not is_llm:  # column keys of LLM rows are plain attributes of other spans (after the plain keys, in order)
        for key, value in attrs.items():
            if classify_key(key) == LLM_FIELD:
                attributes[key] = _to_str(value)

    # 3. events: exceptions, first token, content events
    read = batch.read
    exception_type = None
    first_token_event_ns = None
    if span.events:
        for event in span.events:
            name = event.name
            if name == "exception":
                if exception_type is None:
                    exception_type = _as_str(read(event.attributes).get(EXCEPTION_TYPE)) or None
            elif name == OPENINFERENCE_FIRST_TOKEN_EVENT:
                if first_token_event_ns is None:
                    first_token_event_ns = event.time_unix_nano
            elif name == VERCEL_FIRST_CHUNK_EVENT:
                event_attrs = read(event.attributes)
                ms = _as_float(_first(event_attrs, MS_TO_FIRST_CHUNK_KEYS))
                if ms is not None and first_token_event_ns is None:
                    first_token_event_ns = start_ns + int(ms * 1e6 + 0.5)
            elif name in CONTENT_EVENTS and capture:
                attr_name, code = CONTENT_EVENTS[name]
                text = read(event.attributes).get(attr_name)
                if text is not None:
                    if found is None:
                        found = {}
                    found.setdefault(code, []).append((attr_name, text))

    # 4. attribute cap: span keys first, then resource and scope keys
    if scope_attrs:
        if len(attributes) + len(scope_attrs) <= MAX_ATTRIBUTES:
            merged = scope_attrs.copy()
            merged.update(attributes)
            attributes = merged
        else:
            attributes = _capped(attributes, scope_attrs)
    elif len(attributes) > MAX_ATTRIBUTES:
        attributes = _capped(attributes, {})

    trace_id = trace_bytes.hex()
    span_id = span_bytes.hex()
    parent_span_id = parent.hex() if parent and parent != _ZERO_SPAN_ID else ""
    start_us = start_ns // 1000
    project_id = batch.project_id

    if is_llm:
        row = _llm_row(
            attrs, span, operation, project_id, service, trace_id, span_id, parent_span_id, start_ns, end_ns,
            attributes, exception_type, first_token_event_ns, index, batch.errors, batch.price,
        )  # fmt: skip
        batch.llm_calls.append(row)
        model, template = row.model, row.prompt_template
    else:
        code = span.status.code
        message = span.status.message
        if message:
            message = batch.redactor.redact(message[:MAX_ATTRIBUTE_CHARS]).text
        batch.spans.append(
            _new_row(
                SpanRow,
                (
                    project_id,  # project_id
                    start_us,  # start_time
                    end_ns // 1000,  # end_time
                    trace_id,  # trace_id
                    span_id,  # span_id
                    parent_span_id,  # parent_span_id
                    service,  # service_name
                    span.name,  # name
                    _SPAN_KINDS[span.kind] if 0 <= span.kind < len(_SPAN_KINDS) else "unspecified",  # kind
                    operation,  # operation
                    _STATUS[code] if 0 <= code < 3 else "unset",  # status
                    message,  # status_message
                    (end_ns - start_ns) / 1e6,  # duration_ms
                    attributes,  # attributes
                )
            )
        )
        model = _first_str(get, ANY_MODEL_KEYS)
        template = _as_str(get(sc.PROMPT_TEMPLATE))

    if found:
        redactor = batch.redactor
        prompt = _redact_capped(redactor, _content_text(found, PROMPT), batch.redactions)
        completion = _redact_capped(redactor, _content_text(found, COMPLETION), batch.redactions)
        if prompt or completion:
            batch.prompt_logs.append(
                PromptLogRow(
                    project_id=project_id,
                    start_time=start_us,
                    trace_id=trace_id,
                    span_id=span_id,
                    model=model,
                    prompt_template=template,
                    prompt=prompt,
                    completion=completion,
                    redaction=redactor.policy,
                )
            )
    return None


def _capped(attributes: dict[str, str], scope_attrs: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    dropped = 0
    for source in (attributes, scope_attrs):
        for key, value in source.items():
            if key in out:
                continue
            if len(out) < MAX_ATTRIBUTES:
                out[key] = value
            else:
                dropped += 1
    if dropped:
        out[DROPPED_ATTRIBUTES_KEY] = str(dropped)
    return out


def _llm_row(
    attrs: dict[str, Any],
    span: Any,
    operation: str,
    project_id: str,
    service: str,
    trace_id: str,
    span_id: str,
    parent_span_id: str,
    start_ns: int,
    end_ns: int,
    attributes: dict[str, str],
    exception_type: str | None,
    first_token_event_ns: int | None,
    index: int,
    errors: _Errors,
    price: Pricer | None,
) -> LlmCallRow:
    # This runs for every LLM call, so it is written for the interpreter: a column with alternative spellings reads
    # its first spelling inline (the usual case) and calls _first() for the others only when that one is absent;
    # values are converted only when they are not already the right type.
    get = attrs.get
    provider = get(sc.GEN_AI_PROVIDER_NAME)
    if provider is None or provider == "":
        provider = _first(attrs, PROVIDER_KEYS)
    if provider is not None:
        provider = canonical_provider(provider if type(provider) is str else _to_str(provider))
    else:
        provider = ""
    request_model = get(sc.GEN_AI_REQUEST_MODEL)
    if request_model is None or request_model == "":
        request_model = _first(attrs, REQUEST_MODEL_KEYS)
    if type(request_model) is not str:
        request_model = _as_str(request_model)
    response_model = get(sc.GEN_AI_RESPONSE_MODEL)
    if response_model is None or response_model == "":
        response_model = _first(attrs, RESPONSE_MODEL_KEYS)
    if type(response_model) is not str:
        response_model = _as_str(response_model)
    response_id = get(sc.GEN_AI_RESPONSE_ID)
    if response_id is None or response_id == "":
        response_id = _first(attrs, RESPONSE_ID_KEYS)
    if type(response_id) is not str:
        response_id = _as_str(response_id)
    template = get(sc.PROMPT_TEMPLATE)
    if template is None or template == "":
        template = _first(attrs, PROMPT_TEMPLATE_KEYS)
    if type(template) is not str:
        template = _as_str(template)
    version = get(sc.PROMPT_VERSION)
    if version is None or version == "":
        version = _first(attrs, PROMPT_VERSION_KEYS)
    if type(version) is not str:
        version = _as_str(version)
    feature = get(sc.FEATURE, "")
    if type(feature) is not str:
        feature = _as_str(feature)
    experiment = get(sc.EXPERIMENT, "")
    if type(experiment) is not str:
        experiment = _as_str(experiment)
    variant = get(sc.VARIANT, "")
    if type(variant) is not str:
        variant = _as_str(variant)
    user_hash = get(sc.USER_HASH, "")
    if type(user_hash) is not str:
        user_hash = _as_str(user_hash)

    # models: request model is the grouping key, response model the fallback
    invocation = None
    if not request_model and get(OI_INVOCATION_PARAMETERS) is not None:
        invocation = _json_object(get(OI_INVOCATION_PARAMETERS))
        if isinstance(invocation, dict):
            request_model = _as_str(invocation.get("model"))

    # usage
    input_tokens, output_tokens, cache_read, cache_write, reasoning, no_usage, invalid = _usage(attrs, provider)
    for problem in invalid:
        errors.add(f"span {index}: {problem}; usage marked missing")

    # status
    error_attribute = get(sc.ERROR_TYPE)
    level = get(LF_LEVEL)
    error_type = _as_str(error_attribute) or exception_type or ""
    is_error = (
        span.status.code == _STATUS_ERROR
        or bool(error_attribute)
        or (level is not None and _as_str(level).upper() == "ERROR")
    )
    if is_error and not error_type:
        error_type = "_OTHER"  # the GenAI conventions' fallback value for error.type

    # missing usage: only a call that should have reported usage (a failed call without counts had none to report)
    flag = get(sc.USAGE_MISSING)
    usage_missing = bool(flag is not None and _as_bool(flag)) or bool(invalid) or (no_usage and not is_error)

    # streaming and time to first token (all spellings, ours first; landscape.md §4)
    streamed = get(sc.STREAMED)
    if streamed is None or streamed == "":
        streamed = _first(attrs, STREAM_KEYS)
    if type(streamed) is not bool:
        streamed = None if streamed is None else _as_bool(streamed)
    if streamed is None:
        operation_id = get(VERCEL_OPERATION_ID)
        if operation_id is not None and _as_str(operation_id).endswith("doStream"):
            streamed = True
        else:
            params = invocation
            if params is None and get(OI_INVOCATION_PARAMETERS) is not None:
                params = _json_object(get(OI_INVOCATION_PARAMETERS))
            if params is None and get(LF_MODEL_PARAMETERS) is not None:
                params = _json_object(get(LF_MODEL_PARAMETERS))
            if isinstance(params, dict) and "stream" in params:
                streamed = _as_bool(params["stream"])
    absolute = get(sc.FIRST_TOKEN_TIME_UNIX_NANO)  # our SDK's absolute first-token time: the usual case, inline
    if type(absolute) is int and absolute > 0:
        ttft_ns = absolute - start_ns if absolute >= start_ns else None
    else:
        ttft_ns = _ttft_ns(attrs, start_ns, first_token_event_ns)
    if streamed is None:
        streamed = ttft_ns is not None  # only streamed responses have a first token distinct from the end
    if not streamed:
        ttft_ns = None
    ttft_ms = max(1, int(ttft_ns / 1e6 + 0.5)) if ttft_ns is not None else 0

    decode_tps = get(sc.DECODE_TOKENS_PER_SECOND)
    if type(decode_tps) is not float or not math.isfinite(decode_tps):
        decode_tps = _as_float(decode_tps)
    if decode_tps is None or decode_tps < 0:
        decode_tps = 0.0
        if ttft_ns is not None and output_tokens > 1 and not usage_missing:
            decode_s = (end_ns - (start_ns + ttft_ns)) / 1e9
            if decode_s > 0:
                decode_tps = round((output_tokens - 1) / decode_s, 3)

    # quality flags
    finish = get(sc.GEN_AI_RESPONSE_FINISH_REASONS)
    if finish is None or finish == "":
        finish = _first(attrs, FINISH_REASON_KEYS)
    if type(finish) is list and finish and type(finish[0]) is str and finish[0]:  # the usual shape: ["stop"]
        finish = finish[0].lower().replace("-", "_")
    else:
        finish = _finish_reason(finish)
    truncated = get(sc.TRUNCATED)
    if truncated is not None:
        truncated = _as_bool(truncated)
    if truncated is None:
        truncated = finish in TRUNCATION_REASONS
    refusal = get(sc.REFUSAL)
    refusal = bool(refusal is not None and _as_bool(refusal)) or finish in REFUSAL_REASONS
    empty = get(sc.EMPTY_RESPONSE)
    if empty is not None:
        empty = _as_bool(empty)
    if empty is None:
        empty = not is_error and not usage_missing and output_tokens == 0 and operation != "embeddings"
    tool_calls = get(sc.TOOL_CALLS, 0)
    if type(tool_calls) is not int or tool_calls < 0:
        tool_calls = _nonnegative(tool_calls)
    tool_call_failures = get(sc.TOOL_CALL_FAILURES, 0)
    if type(tool_call_failures) is not int or tool_call_failures < 0:
        tool_call_failures = _nonnegative(tool_call_failures)
    response_chars = get(sc.RESPONSE_CHARS, 0)
    if type(response_chars) is not int or response_chars < 0:
        response_chars = _nonnegative(response_chars)

    # cost: the 1-hour share of cache writes (never more than the writes), app-side cache hits, then the price
    cache_write_1h = get(sc.CACHE_CREATION_1H_INPUT_TOKENS, 0)
    if type(cache_write_1h) is not int or cache_write_1h < 0:
        cache_write_1h = _nonnegative(cache_write_1h)
    if cache_write_1h > cache_write:
        cache_write_1h = cache_write
    cache_hit = get(sc.CACHE_HIT)
    cache_hit = cache_hit is not None and (cache_hit is True or _as_bool(cache_hit) is True)
    model = request_model or response_model
    if price is None:
        cost, price_version, costs, avoided = 0.0, "", _NO_COSTS, 0.0
    else:
        cost, price_version, costs, avoided = price(
            model, provider, input_tokens, output_tokens, cache_read, cache_write, cache_write_1h, reasoning,
            usage_missing, cache_hit,
        )  # fmt: skip

    # Column order of rows.LlmCallRow; tuple.__new__ skips the keyword parsing of a 42-field NamedTuple (and the
    # length check of _make). The whole-row tests build their expectations by keyword, so a reordered rows.py
    # fails them.
    return _new_row(
        LlmCallRow,
        (
            project_id,  # project_id
            start_ns // 1000,  # start_time
            end_ns // 1000,  # end_time
            trace_id,  # trace_id
            span_id,  # span_id
            parent_span_id,  # parent_span_id
            response_id,  # response_id
            service,  # service_name
            span.name,  # span_name
            model,  # model
            request_model,  # request_model
            response_model,  # response_model
            provider,  # provider
            operation,  # operation
            input_tokens,  # input_tokens
            output_tokens,  # output_tokens
            cache_read,  # cache_read_tokens
            cache_write,  # cache_write_tokens
            reasoning,  # reasoning_tokens
            ttft_ms,  # ttft_ms
            int((end_ns - start_ns) / 1e6 + 0.5),  # latency_ms
            decode_tps,  # decode_tps
            finish,  # finish_reason
            "error" if is_error else "ok",  # status
            error_type,  # error_type
            streamed,  # streamed
            usage_missing,  # usage_missing
            refusal,  # refusal
            empty,  # empty_response
            truncated,  # truncated
            tool_calls,  # tool_calls
            tool_call_failures,  # tool_call_failures
            response_chars,  # response_chars
            feature,  # feature
            template,  # prompt_template
            version,  # prompt_version
            experiment,  # experiment
            variant,  # variant
            user_hash,  # user_hash
            cost,  # cost_usd
            price_version,  # price_version
            attributes,  # attributes
            cache_write_1h,  # cache_write_1h_tokens
            *costs,  # cost_input_usd, cost_cache_read_usd, cost_cache_write_usd, cost_output_usd,
            # cost_reasoning_usd, cache_savings_usd, unpriced (see Pricer)
            cache_hit,  # cache_hit
            avoided,  # cost_avoided_usd
        ),
    )


def _nonnegative(value: Any) -> int:
    number = _as_int(value) if value is not None else None
    return number if number is not None and number >= 0 else 0


def _ttft_ns(attrs: dict[str, Any], start_ns: int, first_token_event_ns: int | None) -> int | None:
    """Time to first token in ns from whichever spelling the span carries; None when unknown or negative."""
    get = attrs.get
    absolute = get(sc.FIRST_TOKEN_TIME_UNIX_NANO)  # our SDK: absolute time of the first token
    if type(absolute) is not int:
        absolute = _as_int(absolute)
    ttft: float | None = None
    if absolute is not None and absolute > 0:
        ttft = absolute - start_ns
    else:
        seconds = _as_float(_first(attrs, TTFT_SECONDS_KEYS))
        if seconds is not None:
            ttft = seconds * 1e9
        else:
            ms = _as_float(_first(attrs, MS_TO_FIRST_CHUNK_KEYS))
            if ms is not None:
                ttft = ms * 1e6
            elif first_token_event_ns:
                ttft = first_token_event_ns - start_ns
            else:
                completion_start = get(LF_COMPLETION_START_TIME)
                if completion_start is not None:
                    moment = _iso_to_unix_nano(completion_start)
                    if moment is not None:
                        ttft = moment - start_ns
    if ttft is None or ttft < 0:
        return None
    return int(ttft)
