"""OTLP spans → typed rows: one :class:`LlmCallRow` per LLM call, one :class:`SpanRow` per other span.

Pure (no I/O): the route decodes a request (:mod:`.otlp_decode`), calls :func:`normalize`, prices the LLM rows and
hands everything to the writer. Every span gives exactly one row, or is rejected alone (counted in ``rejected``,
described in ``errors``); a bad span never raises.

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
``ai.stream.msToFirstChunk`` (ms, Vercel), the "First Token Stream Event" (OpenInference) or ``ai.stream.firstChunk``
span event, Langfuse's ``completion_start_time`` (ISO string). ``ttft_ms`` is rounded half up and at least 1 when
known; 0 when unknown, negative, or the call was explicitly not streamed.

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
* ``usage_missing``: our SDK says so, or the span reports neither input nor output tokens, or a count was out of
  range. Such a row must never be priced as zero silently.
* ``provider``: ``gen_ai.provider.name``, deprecated ``gen_ai.system``, OpenInference ``llm.provider`` /
  ``llm.system``, lower-cased and mapped to the current provider names (``az.ai.inference`` →
  ``azure.ai.inference``, Vercel's ``openai.chat`` → ``openai``, ...). Langfuse spans carry none: ''.
* ``cost_usd``/``price_version`` are left 0/'' for the pricing step.

A non-LLM span's ``status_message`` goes through the redactor (error texts quote user input); its ``operation`` is
``gen_ai.operation.name``, or the OpenInference/Langfuse/Traceloop span kind mapped to one (TOOL →
``execute_tool``, RETRIEVER → ``retrieval``, AGENT → ``invoke_agent``, workflow → ``invoke_workflow``).

Validation (per span): trace_id must be 16 non-zero bytes, span_id 8 non-zero bytes, parent_span_id empty or 8
bytes, start time set and end >= start → otherwise the span is rejected. A token count that is negative or above
:data:`MAX_TOKENS_PER_CALL` is *not* a rejection: the call's latency, status and flags are still real, so the
row is kept, that count is treated as absent, ``usage_missing`` is set (pricing must never price it as zero
silently) and a message goes to ``errors``.

Content: prompt/completion text under any convention (see ``_CONTENT_SOURCES``) never goes into ``attributes``.
With ``content_capture="redacted"`` it is redacted and stored as one :class:`PromptLogRow` per span (any kind);
with ``"off"`` it is dropped. Where a span carries the same content twice (OpenInference's ``input.value`` and
``llm.input_messages.*``), the highest-priority source is kept; system instructions are prepended to the prompt.

Attributes: span attributes, then resource attributes, then ``otel.scope.name``/``version``; values stringified
(arrays and key-value lists as compact JSON, bytes as hex), at most :data:`MAX_ATTRIBUTES` keys (span keys win;
the number dropped is recorded under :data:`DROPPED_ATTRIBUTES_KEY`) and :data:`MAX_ATTRIBUTE_CHARS` characters
per value. Keys that look like credentials (authorization, api_key/api-key, password, secret, cookie, credential,
headers, a last component ending in ``token`` such as ``access_token``/``accessToken`` — but not the ``*_tokens``
counters or ``time_to_first_token``) are dropped. Keys mapped to typed columns are not repeated in ``attributes``.

Speed (≥ 20k spans/s is the budget): each attribute is read once with a ``WhichOneof`` walk into one dict per
span; key classification (content/secret/column/plain) is memoised per distinct key, so the hot path does dict
lookups only, no regex and no JSON unless a value is structured or content is present.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable

import orjson
from inferwatch import semconv as sc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from .redaction import DEFAULT_REDACTOR, Redactor
from .rows import LlmCallRow, PromptLogRow, SpanRow

__all__ = [
    "NormalizedBatch",
    "normalize",
    "MAX_ATTRIBUTES",
    "MAX_ATTRIBUTE_CHARS",
    "MAX_CONTENT_CHARS",
    "MAX_TOKENS_PER_CALL",
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

# --- attribute names of other conventions (ours and the current OTel GenAI names come from inferwatch.semconv) ---
# OTel GenAI, names that inferwatch.semconv does not carry
GEN_AI_USAGE_TOTAL_TOKENS = "gen_ai.usage.total_tokens"  # emitted by OpenLIT, Sentry, some others
GEN_AI_TOOL_DEFINITIONS = "gen_ai.tool.definitions"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
# TTFT spellings (landscape.md §4)
GEN_AI_RESPONSE_TIME_TO_FIRST_TOKEN = "gen_ai.response.time_to_first_token"  # s, Sentry
GEN_AI_SERVER_TIME_TO_FIRST_TOKEN = "gen_ai.server.time_to_first_token"  # s, OpenLIT span attribute
VERCEL_MS_TO_FIRST_CHUNK = "ai.response.msToFirstChunk"  # ms
VERCEL_STREAM_MS_TO_FIRST_CHUNK = "ai.stream.msToFirstChunk"  # ms, older Vercel AI SDK
OPENINFERENCE_FIRST_TOKEN_EVENT = "First Token Stream Event"
VERCEL_FIRST_CHUNK_EVENT = "ai.stream.firstChunk"
# Sentry
SENTRY_STREAMING = "gen_ai.response.streaming"
SENTRY_CACHED_INPUT_TOKENS = "gen_ai.usage.input_tokens.cached"
SENTRY_REASONING_OUTPUT_TOKENS = "gen_ai.usage.output_tokens.reasoning"
SENTRY_REQUEST_MESSAGES = "gen_ai.request.messages"
SENTRY_RESPONSE_TEXT = "gen_ai.response.text"
SENTRY_RESPONSE_TOOL_CALLS = "gen_ai.response.tool_calls"
SENTRY_AVAILABLE_TOOLS = "gen_ai.request.available_tools"
# OpenLIT
OPENLIT_IS_STREAM = "gen_ai.request.is_stream"
OPENLIT_CONTENT_PROMPT = "gen_ai.content.prompt"  # span event name (attribute gen_ai.prompt) and attribute
OPENLIT_CONTENT_COMPLETION = "gen_ai.content.completion"  # span event name (attribute gen_ai.completion)
# OpenLLMetry / Traceloop legacy
TRACELOOP_REQUEST_TYPE = "llm.request.type"
TRACELOOP_IS_STREAMING = "llm.is_streaming"
TRACELOOP_TOTAL_TOKENS = "llm.usage.total_tokens"
TRACELOOP_PROMPT_TOKENS_OLD = "llm.usage.prompt_tokens"
TRACELOOP_COMPLETION_TOKENS_OLD = "llm.usage.completion_tokens"
TRACELOOP_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read_input_tokens"
TRACELOOP_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation_input_tokens"
TRACELOOP_REASONING_TOKENS = "gen_ai.usage.reasoning_tokens"
TRACELOOP_STOP_REASON = "llm.response.stop_reason"
TRACELOOP_FINISH_REASON = "llm.response.finish_reason"
TRACELOOP_FIRST_COMPLETION_FINISH_REASON = "gen_ai.completion.0.finish_reason"
TRACELOOP_SPAN_KIND = "traceloop.span.kind"
TRACELOOP_ENTITY_INPUT = "traceloop.entity.input"
TRACELOOP_ENTITY_OUTPUT = "traceloop.entity.output"
TRACELOOP_PROMPT_KEY = "traceloop.prompt.key"
TRACELOOP_PROMPT_VERSION = "traceloop.prompt.version"
# OpenInference
OI_SPAN_KIND = "openinference.span.kind"
OI_MODEL_NAME = "llm.model_name"
OI_PROVIDER = "llm.provider"
OI_SYSTEM = "llm.system"
OI_INVOCATION_PARAMETERS = "llm.invocation_parameters"
OI_PROMPT_TOKENS = "llm.token_count.prompt"
OI_COMPLETION_TOKENS = "llm.token_count.completion"
OI_TOTAL_TOKENS = "llm.token_count.total"
OI_CACHE_READ = "llm.token_count.prompt_details.cache_read"
OI_CACHE_WRITE = "llm.token_count.prompt_details.cache_write"
OI_REASONING = "llm.token_count.completion_details.reasoning"
OI_INPUT_VALUE = "input.value"
OI_OUTPUT_VALUE = "output.value"
OI_PROMPT_TEMPLATE = "llm.prompt_template.template"
OI_PROMPT_TEMPLATE_VARIABLES = "llm.prompt_template.variables"
OI_PROMPT_TEMPLATE_VERSION = "llm.prompt_template.version"
# Langfuse (OTel-based SDKs v3+)
LF_TYPE = "langfuse.observation.type"
LF_MODEL = "langfuse.observation.model.name"
LF_MODEL_PARAMETERS = "langfuse.observation.model.parameters"
LF_USAGE_DETAILS = "langfuse.observation.usage_details"
LF_COMPLETION_START_TIME = "langfuse.observation.completion_start_time"
LF_LEVEL = "langfuse.observation.level"
LF_INPUT = "langfuse.observation.input"
LF_OUTPUT = "langfuse.observation.output"
LF_TRACE_INPUT = "langfuse.trace.input"
LF_TRACE_OUTPUT = "langfuse.trace.output"
LF_PROMPT_NAME = "langfuse.observation.prompt.name"
LF_PROMPT_VERSION = "langfuse.observation.prompt.version"
# Vercel AI SDK
VERCEL_OPERATION_ID = "ai.operationId"
VERCEL_RESPONSE_ID = "ai.response.id"
VERCEL_RESPONSE_MODEL = "ai.response.model"
VERCEL_FINISH_REASON = "ai.response.finishReason"
VERCEL_PROMPT_TOKENS = "ai.usage.promptTokens"
VERCEL_COMPLETION_TOKENS = "ai.usage.completionTokens"
VERCEL_INPUT_TOKENS = "ai.usage.inputTokens"
VERCEL_OUTPUT_TOKENS = "ai.usage.outputTokens"
VERCEL_TOTAL_TOKENS = "ai.usage.totalTokens"
VERCEL_CACHED_INPUT_TOKENS = "ai.usage.cachedInputTokens"
VERCEL_REASONING_TOKENS = "ai.usage.reasoningTokens"
# common
SERVICE_NAME = "service.name"
EXCEPTION_TYPE = "exception.type"

# Alternative spellings, in priority order (ours and current OTel names first)
_PROVIDER_KEYS = (sc.GEN_AI_PROVIDER_NAME, sc.GEN_AI_SYSTEM, OI_PROVIDER, OI_SYSTEM)
_REQUEST_MODEL_KEYS = (sc.GEN_AI_REQUEST_MODEL, LF_MODEL)
_RESPONSE_MODEL_KEYS = (sc.GEN_AI_RESPONSE_MODEL, VERCEL_RESPONSE_MODEL, OI_MODEL_NAME)
_ANY_MODEL_KEYS = (sc.GEN_AI_REQUEST_MODEL, sc.GEN_AI_RESPONSE_MODEL)
_RESPONSE_ID_KEYS = (sc.GEN_AI_RESPONSE_ID, VERCEL_RESPONSE_ID)
_STREAM_KEYS = (sc.STREAMED, sc.GEN_AI_REQUEST_STREAM, SENTRY_STREAMING, OPENLIT_IS_STREAM, TRACELOOP_IS_STREAMING)
_FINISH_REASON_KEYS = (
    sc.GEN_AI_RESPONSE_FINISH_REASONS, TRACELOOP_FIRST_COMPLETION_FINISH_REASON, TRACELOOP_FINISH_REASON,
    TRACELOOP_STOP_REASON, VERCEL_FINISH_REASON,
)  # fmt: skip
_TTFT_SECONDS_KEYS = (
    sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, GEN_AI_RESPONSE_TIME_TO_FIRST_TOKEN, GEN_AI_SERVER_TIME_TO_FIRST_TOKEN,
)  # fmt: skip
_MS_TO_FIRST_CHUNK_KEYS = (VERCEL_MS_TO_FIRST_CHUNK, VERCEL_STREAM_MS_TO_FIRST_CHUNK)
_PROMPT_TEMPLATE_KEYS = (sc.PROMPT_TEMPLATE, LF_PROMPT_NAME, TRACELOOP_PROMPT_KEY)
_PROMPT_VERSION_KEYS = (sc.PROMPT_VERSION, LF_PROMPT_VERSION, TRACELOOP_PROMPT_VERSION, OI_PROMPT_TEMPLATE_VERSION)

# --- value sets --------------------------------------------------------------------------------------------------
_INFERENCE_OPERATIONS = frozenset(
    {"chat", "text_completion", "generate_content", "embeddings", "completion", "embedding", "generate"}
)
_REQUEST_TYPE_OPERATION = {
    "chat": "chat",
    "completion": "text_completion",
    "embedding": "embeddings",
    "embeddings": "embeddings",
    "rerank": "rerank",
}
_OI_LLM_KINDS = {"LLM": "chat", "EMBEDDING": "embeddings"}
_OI_SPAN_OPERATION = {
    "TOOL": "execute_tool", "RETRIEVER": "retrieval", "AGENT": "invoke_agent", "RERANKER": "rerank",
}  # fmt: skip
_LF_LLM_TYPES = {"generation": "chat", "embedding": "embeddings"}
_LF_SPAN_OPERATION = {"tool": "execute_tool", "agent": "invoke_agent", "retriever": "retrieval"}
_TRACELOOP_SPAN_OPERATION = {"workflow": "invoke_workflow", "agent": "invoke_agent", "tool": "execute_tool"}
# finish reasons, compared after lower-casing and '-' → '_' (Vercel says "content-filter", Gemini "MAX_TOKENS")
_TRUNCATION_REASONS = frozenset({"length", "max_tokens", "max_output_tokens"})
_REFUSAL_REASONS = frozenset({"content_filter", "refusal", "safety"})
# provider spellings → OTel gen_ai.provider.name values (deprecated gen_ai.system values, OpenInference, Vercel)
_PROVIDER_ALIASES = {
    "az.ai.inference": "azure.ai.inference",
    "az.ai.openai": "azure.ai.openai",
    "azure": "azure.ai.openai",
    "azure_openai": "azure.ai.openai",
    "azure-openai": "azure.ai.openai",
    "xai": "x_ai",
    "gemini": "gcp.gemini",
    "vertex_ai": "gcp.vertex_ai",
    "vertexai": "gcp.vertex_ai",
    "google": "gcp.gen_ai",
    "bedrock": "aws.bedrock",
    "aws": "aws.bedrock",
    "amazon-bedrock": "aws.bedrock",
    "mistral": "mistral_ai",
    "mistralai": "mistral_ai",
    "watsonx": "ibm.watsonx.ai",
}
_KNOWN_PROVIDERS = frozenset(
    {
        "openai", "anthropic", "aws.bedrock", "azure.ai.openai", "azure.ai.inference", "gcp.gemini",
        "gcp.vertex_ai", "gcp.gen_ai", "mistral_ai", "groq", "deepseek", "x_ai", "perplexity", "cohere",
        "ibm.watsonx.ai", "ollama",
    }
)  # fmt: skip
_SPAN_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")
_STATUS = ("unset", "ok", "error")
_STATUS_ERROR = 2

# --- key classification ------------------------------------------------------------------------------------------
# Every attribute key is put in one class, memoised in _KEY_CLASS:
_PLAIN = 0  # goes to attributes
_SECRET = 1  # dropped everywhere
_LLM_FIELD = 2  # read into LlmCallRow columns: not repeated in an LLM row's attributes, plain for a SpanRow
_OPERATION = 3  # gen_ai.operation.name: a column of both row types
_DROP_CONTENT = 4  # content we never store (tool definitions): dropped everywhere
_CONTENT = 10  # >= 10: content; code - 10 indexes _CONTENT_SOURCES

_PROMPT, _COMPLETION = 0, 1
# (side, key, is_prefix) in priority order per side: the first source present on a side is the one stored (system
# instructions are prepended to the prompt). A prefix source is a flattened list ("gen_ai.prompt.{i}.content").
_CONTENT_SOURCES: tuple[tuple[int, str, bool], ...] = (
    (_PROMPT, sc.GEN_AI_SYSTEM_INSTRUCTIONS, False),  # index 0: prepended, see _content_text
    (_PROMPT, sc.GEN_AI_INPUT_MESSAGES, False),
    (_PROMPT, sc.GEN_AI_PROMPT + ".", True),  # Traceloop gen_ai.prompt.{i}.role/content
    (_PROMPT, sc.GEN_AI_PROMPT, False),
    (_PROMPT, "llm.input_messages.", True),  # OpenInference
    (_PROMPT, OI_INPUT_VALUE, False),
    (_PROMPT, "llm.prompts", False),
    (_PROMPT, "llm.prompts.", True),
    (_PROMPT, OI_PROMPT_TEMPLATE_VARIABLES, False),
    (_PROMPT, OI_PROMPT_TEMPLATE, False),
    (_PROMPT, LF_INPUT, False),
    (_PROMPT, LF_TRACE_INPUT, False),
    (_PROMPT, SENTRY_REQUEST_MESSAGES, False),
    (_PROMPT, "ai.prompt.messages", False),
    (_PROMPT, "ai.prompt", False),
    (_PROMPT, "ai.values", False),
    (_PROMPT, "ai.value", False),
    (_PROMPT, "embedding.embeddings.", True),
    (_PROMPT, OPENLIT_CONTENT_PROMPT, False),
    (_PROMPT, TRACELOOP_ENTITY_INPUT, False),
    (_PROMPT, GEN_AI_TOOL_CALL_ARGUMENTS, False),
    (_PROMPT, "ai.toolCall.args", False),
    (_COMPLETION, sc.GEN_AI_OUTPUT_MESSAGES, False),
    (_COMPLETION, sc.GEN_AI_COMPLETION + ".", True),  # Traceloop gen_ai.completion.{i}.role/content/finish_reason
    (_COMPLETION, sc.GEN_AI_COMPLETION, False),
    (_COMPLETION, "llm.output_messages.", True),
    (_COMPLETION, OI_OUTPUT_VALUE, False),
    (_COMPLETION, LF_OUTPUT, False),
    (_COMPLETION, LF_TRACE_OUTPUT, False),
    (_COMPLETION, SENTRY_RESPONSE_TEXT, False),
    (_COMPLETION, SENTRY_RESPONSE_TOOL_CALLS, False),
    (_COMPLETION, "ai.response.text", False),
    (_COMPLETION, "ai.response.object", False),
    (_COMPLETION, "ai.response.toolCalls", False),
    (_COMPLETION, OPENLIT_CONTENT_COMPLETION, False),
    (_COMPLETION, TRACELOOP_ENTITY_OUTPUT, False),
    (_COMPLETION, GEN_AI_TOOL_CALL_RESULT, False),
    (_COMPLETION, "ai.toolCall.result", False),
    (_COMPLETION, "retrieval.documents.", True),
)
_SYSTEM_INSTRUCTIONS_CODE = _CONTENT  # source 0
_DROPPED_CONTENT_KEYS = frozenset({GEN_AI_TOOL_DEFINITIONS, SENTRY_AVAILABLE_TOOLS, "ai.prompt.tools"})
_DROPPED_CONTENT_PREFIXES = ("llm.tools.",)
# event name -> (attribute holding the text, content code)
_SOURCE_NAMES = [name for _, name, _ in _CONTENT_SOURCES]
_CONTENT_EVENTS = {
    OPENLIT_CONTENT_PROMPT: (sc.GEN_AI_PROMPT, _CONTENT + _SOURCE_NAMES.index(OPENLIT_CONTENT_PROMPT)),
    OPENLIT_CONTENT_COMPLETION: (sc.GEN_AI_COMPLETION, _CONTENT + _SOURCE_NAMES.index(OPENLIT_CONTENT_COMPLETION)),
}

_CONTENT_EXACT: dict[str, int] = {}
_CONTENT_PREFIXES: list[tuple[str, int]] = []
for _i, (_side, _key, _is_prefix) in enumerate(_CONTENT_SOURCES):
    if _is_prefix:
        _CONTENT_PREFIXES.append((_key, _CONTENT + _i))
    else:
        _CONTENT_EXACT[_key] = _CONTENT + _i
_CONTENT_PREFIX_TUPLE = tuple(p for p, _ in _CONTENT_PREFIXES)
del _i, _side, _key, _is_prefix

# Keys read into LlmCallRow columns (so not repeated in the LLM row's attributes).
_LLM_FIELDS = frozenset(
    {
        sc.GEN_AI_PROVIDER_NAME, sc.GEN_AI_SYSTEM, sc.GEN_AI_REQUEST_MODEL, sc.GEN_AI_RESPONSE_MODEL,
        sc.GEN_AI_RESPONSE_ID, sc.GEN_AI_REQUEST_STREAM, sc.GEN_AI_RESPONSE_FINISH_REASONS,
        sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, sc.GEN_AI_USAGE_INPUT_TOKENS, sc.GEN_AI_USAGE_OUTPUT_TOKENS,
        sc.GEN_AI_USAGE_PROMPT_TOKENS, sc.GEN_AI_USAGE_COMPLETION_TOKENS, sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
        sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, sc.ERROR_TYPE,
        GEN_AI_USAGE_TOTAL_TOKENS, GEN_AI_RESPONSE_TIME_TO_FIRST_TOKEN, GEN_AI_SERVER_TIME_TO_FIRST_TOKEN,
        VERCEL_MS_TO_FIRST_CHUNK, VERCEL_STREAM_MS_TO_FIRST_CHUNK, SENTRY_STREAMING, SENTRY_CACHED_INPUT_TOKENS,
        SENTRY_REASONING_OUTPUT_TOKENS, OPENLIT_IS_STREAM, TRACELOOP_REQUEST_TYPE, TRACELOOP_IS_STREAMING,
        TRACELOOP_TOTAL_TOKENS, TRACELOOP_PROMPT_TOKENS_OLD, TRACELOOP_COMPLETION_TOKENS_OLD,
        TRACELOOP_CACHE_READ_INPUT_TOKENS, TRACELOOP_CACHE_CREATION_INPUT_TOKENS, TRACELOOP_REASONING_TOKENS,
        TRACELOOP_STOP_REASON, TRACELOOP_FINISH_REASON, TRACELOOP_PROMPT_KEY, TRACELOOP_PROMPT_VERSION,
        OI_SPAN_KIND, OI_MODEL_NAME, OI_PROVIDER, OI_SYSTEM, OI_PROMPT_TOKENS, OI_COMPLETION_TOKENS,
        OI_TOTAL_TOKENS, OI_CACHE_READ, OI_CACHE_WRITE, OI_REASONING, OI_PROMPT_TEMPLATE_VERSION,
        LF_TYPE, LF_MODEL, LF_USAGE_DETAILS, LF_COMPLETION_START_TIME, LF_LEVEL, LF_PROMPT_NAME, LF_PROMPT_VERSION,
        VERCEL_RESPONSE_ID, VERCEL_RESPONSE_MODEL, VERCEL_FINISH_REASON, VERCEL_PROMPT_TOKENS,
        VERCEL_COMPLETION_TOKENS, VERCEL_INPUT_TOKENS, VERCEL_OUTPUT_TOKENS, VERCEL_TOTAL_TOKENS,
        VERCEL_CACHED_INPUT_TOKENS, VERCEL_REASONING_TOKENS,
        sc.FEATURE, sc.USER_HASH, sc.PROMPT_TEMPLATE, sc.PROMPT_VERSION, sc.EXPERIMENT, sc.VARIANT, sc.STREAMED,
        sc.USAGE_MISSING, sc.REFUSAL, sc.EMPTY_RESPONSE, sc.TRUNCATED, sc.TOOL_CALLS, sc.TOOL_CALL_FAILURES,
        sc.RESPONSE_CHARS, sc.FIRST_TOKEN_TIME_UNIX_NANO, sc.DECODE_TOKENS_PER_SECOND,
    }
)  # fmt: skip

# Credential-looking keys. Substrings anywhere in the lower-cased key:
_SECRET_SUBSTRINGS = (
    "authorization", "api_key", "api-key", "apikey", "password", "passwd", "secret", "cookie", "credential",
    "private_key", "private-key",
)  # fmt: skip
# ... or a last dotted component that is "headers" or ends with "token" (token, access_token, x-auth-token,
# accessToken) unless it is a timing name (time_to_first_token, time_per_output_token). The "*_tokens" counters and
# gen_ai.token.type never match (plural / not the last component).
_TIMING_TOKEN_SUFFIXES = ("first_token", "output_token", "per_token")

_KEY_CLASS: dict[str, int] = {}
_KEY_CLASS_LIMIT = 50_000  # distinct keys remembered; beyond that keys are classified each time


def _classify_uncached(key: str) -> int:
    if key == sc.GEN_AI_OPERATION_NAME:
        return _OPERATION
    code = _CONTENT_EXACT.get(key)
    if code is not None:
        return code
    if key.startswith(_CONTENT_PREFIX_TUPLE):
        for prefix, code in _CONTENT_PREFIXES:
            if key.startswith(prefix):
                return code
    if key in _LLM_FIELDS:
        return _LLM_FIELD
    if key in _DROPPED_CONTENT_KEYS or key.startswith(_DROPPED_CONTENT_PREFIXES):
        return _DROP_CONTENT
    lowered = key.lower()
    for needle in _SECRET_SUBSTRINGS:
        if needle in lowered:
            return _SECRET
    last = lowered.rpartition(".")[2]
    if last == "headers" or (last.endswith("token") and not last.endswith(_TIMING_TOKEN_SUFFIXES)):
        return _SECRET
    return _PLAIN


def _classify(key: str) -> int:
    code = _KEY_CLASS.get(key)
    if code is None:
        code = _classify_uncached(key)
        if len(_KEY_CLASS) < _KEY_CLASS_LIMIT:
            _KEY_CLASS[key] = code
    return code


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


# --- AnyValue → Python -------------------------------------------------------------------------------------------
_SCALAR_KINDS = frozenset({"string_value", "int_value", "bool_value", "double_value", "bytes_value"})


def _any(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind in _SCALAR_KINDS:
        return getattr(value, kind)
    if kind == "array_value":
        return [_any(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _any(kv.value) for kv in value.kvlist_value.values}
    return None  # unset, or string_value_strindex (profiles' dictionary; meaningless without it)


def _attributes(key_values: Iterable[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in key_values:
        value = kv.value
        text = value.string_value  # most values are non-empty strings: one read, no WhichOneof
        if text:
            out[kv.key] = text
            continue
        kind = value.WhichOneof("value")
        out[kv.key] = getattr(value, kind) if kind in _SCALAR_KINDS else _any(value)
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


def _json_object(value: Any) -> Any:
    """A JSON-encoded attribute (Langfuse and OpenInference send dicts as JSON strings), or the value itself."""
    if type(value) is str and value[:1] in ("{", "[", '"'):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


_PROVIDER_CACHE: dict[str, str] = {}


def _provider(raw: Any) -> str:
    if raw is None:
        return ""
    text = _as_str(raw)
    cached = _PROVIDER_CACHE.get(text)
    if cached is not None:
        return cached
    lowered = text.strip().lower()
    name = _PROVIDER_ALIASES.get(lowered, lowered)
    if name not in _KNOWN_PROVIDERS and "." in lowered:
        # Vercel reports "openai.chat" / "anthropic.messages": the part before the first dot names the provider
        head = lowered.split(".", 1)[0]
        head = _PROVIDER_ALIASES.get(head, head)
        if head in _KNOWN_PROVIDERS:
            name = head
    if len(_PROVIDER_CACHE) < 1000:
        _PROVIDER_CACHE[text] = name
    return name


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
    """Raw counts as reported, before normalisation; None = not reported."""

    __slots__ = (
        "input", "output", "cache_read", "cache_write", "reasoning", "total", "cache_on_top", "reasoning_on_top",
        "invalid",
    )  # fmt: skip

    def __init__(self) -> None:
        self.input: int | None = None
        self.output: int | None = None
        self.cache_read: int | None = None
        self.cache_write: int | None = None
        self.reasoning: int | None = None
        self.total: int | None = None
        # the convention's default when the numbers cannot tell: cache / reasoning reported on top of input / output
        self.cache_on_top = False
        self.reasoning_on_top = False
        self.invalid: list[str] = []


def _count(attrs: dict[str, Any], usage: _Usage, keys: tuple[str, ...]) -> int | None:
    """First present token count among ``keys``; out-of-range values are recorded and treated as absent."""
    for key in keys:
        raw = attrs.get(key)
        if raw is None:
            continue
        if type(raw) is int and 0 <= raw <= MAX_TOKENS_PER_CALL:
            return raw
        number = _as_int(raw)
        if number is None or number < 0 or number > MAX_TOKENS_PER_CALL:
            usage.invalid.append(f"{key}={_as_str(raw)[:40]} is not a token count in [0, {MAX_TOKENS_PER_CALL}]")
            return None
        return number
    return None


_INPUT_KEYS = (
    sc.GEN_AI_USAGE_INPUT_TOKENS, sc.GEN_AI_USAGE_PROMPT_TOKENS, OI_PROMPT_TOKENS, TRACELOOP_PROMPT_TOKENS_OLD,
    VERCEL_INPUT_TOKENS, VERCEL_PROMPT_TOKENS,
)  # fmt: skip
_OUTPUT_KEYS = (
    sc.GEN_AI_USAGE_OUTPUT_TOKENS, sc.GEN_AI_USAGE_COMPLETION_TOKENS, OI_COMPLETION_TOKENS,
    TRACELOOP_COMPLETION_TOKENS_OLD, VERCEL_OUTPUT_TOKENS, VERCEL_COMPLETION_TOKENS,
)  # fmt: skip
_TOTAL_KEYS = (GEN_AI_USAGE_TOTAL_TOKENS, TRACELOOP_TOTAL_TOKENS, OI_TOTAL_TOKENS, VERCEL_TOTAL_TOKENS)
_CACHE_READ_KEYS = (
    sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, OI_CACHE_READ, SENTRY_CACHED_INPUT_TOKENS, VERCEL_CACHED_INPUT_TOKENS,
)  # fmt: skip
_CACHE_WRITE_KEYS = (sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, OI_CACHE_WRITE)
_REASONING_KEYS = (
    sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, OI_REASONING, SENTRY_REASONING_OUTPUT_TOKENS,
    TRACELOOP_REASONING_TOKENS, VERCEL_REASONING_TOKENS,
)  # fmt: skip


def _read_usage(attrs: dict[str, Any], provider: str) -> _Usage:
    usage = _Usage()
    usage.input = _count(attrs, usage, _INPUT_KEYS)
    usage.output = _count(attrs, usage, _OUTPUT_KEYS)
    usage.total = _count(attrs, usage, _TOTAL_KEYS)
    usage.reasoning = _count(attrs, usage, _REASONING_KEYS)
    usage.cache_read = _count(attrs, usage, _CACHE_READ_KEYS)
    usage.cache_write = _count(attrs, usage, _CACHE_WRITE_KEYS)
    if usage.cache_read is None and usage.cache_write is None:
        # Traceloop legacy cache names: Anthropic-style reporting puts these on top of input (module docstring)
        usage.cache_read = _count(attrs, usage, (TRACELOOP_CACHE_READ_INPUT_TOKENS,))
        usage.cache_write = _count(attrs, usage, (TRACELOOP_CACHE_CREATION_INPUT_TOKENS,))
        if (usage.cache_read or usage.cache_write) and provider == "anthropic":
            usage.cache_on_top = True
    if usage.input is None and usage.output is None:
        details = attrs.get(LF_USAGE_DETAILS)
        if details is not None:
            _read_langfuse_usage(details, usage)
    return usage


def _read_langfuse_usage(raw: Any, usage: _Usage) -> None:
    """Langfuse ``usage_details``: a JSON object of counts. Its own flattened keys (``input``, ``output``,
    ``input_cached_tokens``, ``cache_read_input_tokens``, ``input_cache_creation``, ``output_reasoning_tokens``,
    ``input_audio_tokens``, ...) are additive: every key is a separately priced share and ``total`` is their sum.
    OpenAI-shaped usage (``prompt_tokens`` + ``prompt_tokens_details``) keeps OpenAI's included-in semantics."""
    details = _json_object(raw)
    if not isinstance(details, dict):
        usage.invalid.append(f"{LF_USAGE_DETAILS} is not a JSON object")
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
            usage.invalid.append(f"{LF_USAGE_DETAILS}.{key}={number} is not a token count")
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
    side, name, is_prefix = _CONTENT_SOURCES[code - _CONTENT]
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
        if code == _SYSTEM_INSTRUCTIONS_CODE:
            continue
        if _CONTENT_SOURCES[code - _CONTENT][0] == side:
            best = code
            break
    text = _render(best, found[best]) if best is not None else ""
    if side == _PROMPT and _SYSTEM_INSTRUCTIONS_CODE in found:
        system = _render(_SYSTEM_INSTRUCTIONS_CODE, found[_SYSTEM_INSTRUCTIONS_CODE])
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


def _invalid_span(span: Any) -> str | None:
    trace_id = span.trace_id
    if len(trace_id) != 16:
        return f"trace_id must be 16 bytes, got {len(trace_id)}"
    if trace_id == _ZERO_TRACE_ID:
        return "trace_id must not be all zeros"
    span_id = span.span_id
    if len(span_id) != 8:
        return f"span_id must be 8 bytes, got {len(span_id)}"
    if span_id == _ZERO_SPAN_ID:
        return "span_id must not be all zeros"
    parent = span.parent_span_id
    if parent and len(parent) != 8:
        return f"parent_span_id must be empty or 8 bytes, got {len(parent)}"
    start = span.start_time_unix_nano
    if start == 0:
        return "start_time_unix_nano is missing"
    if span.end_time_unix_nano < start:
        return "end_time_unix_nano is before start_time_unix_nano"
    return None


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


def normalize(
    request: ExportTraceServiceRequest,
    project_id: str,
    *,
    content_capture: str = "redacted",
    redactor: Redactor = DEFAULT_REDACTOR,
) -> NormalizedBatch:
    """Turn one OTLP trace request into rows. Never raises for a bad span (see the module docstring)."""
    if content_capture not in ("off", "redacted"):
        raise ValueError(f"content_capture must be 'off' or 'redacted', not {content_capture!r}")
    capture = content_capture == "redacted"
    llm_calls: list[LlmCallRow] = []
    spans: list[SpanRow] = []
    prompt_logs: list[PromptLogRow] = []
    errors = _Errors()
    redactions: dict[str, int] = {}
    rejected = 0
    index = -1
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        service = _as_str(resource.get(SERVICE_NAME)) or "unknown_service"
        base: dict[str, str] = {}
        for key, value in resource.items():
            if key != SERVICE_NAME and _classify(key) in (_PLAIN, _LLM_FIELD, _OPERATION):
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
                    problem = _invalid_span(span)
                    if problem is not None:
                        rejected += 1
                        errors.add(f"span {index}: {problem}")
                        continue
                    _convert(
                        span, index, project_id, service, scope_attrs, capture, redactor,
                        llm_calls, spans, prompt_logs, errors, redactions,
                    )  # fmt: skip
                except Exception as exc:  # a bug or an input we did not foresee: lose the span, not the batch
                    rejected += 1
                    errors.add(f"span {index}: could not be normalised: {type(exc).__name__}: {exc}")
    return NormalizedBatch(llm_calls, spans, prompt_logs, rejected, errors.finish(), redactions)


def _convert(
    span: Any,
    index: int,
    project_id: str,
    service: str,
    scope_attrs: dict[str, str],
    capture: bool,
    redactor: Redactor,
    llm_calls: list[LlmCallRow],
    spans: list[SpanRow],
    prompt_logs: list[PromptLogRow],
    errors: _Errors,
    redactions: dict[str, int],
) -> None:
    # 1. one pass over the attributes: Python values for the mapping below, the attributes map, content
    attrs: dict[str, Any] = {}
    attributes: dict[str, str] = {}
    fields: list[str] | None = None  # column keys: kept in attributes only if the span is not an LLM call
    found: dict[int, list[tuple[str, Any]]] | None = None
    for kv in span.attributes:
        key = kv.key
        any_value = kv.value
        value = any_value.string_value  # most values are non-empty strings: one read, no WhichOneof
        if not value:
            kind = any_value.WhichOneof("value")
            value = getattr(any_value, kind) if kind in _SCALAR_KINDS else _any(any_value)
        attrs[key] = value
        code = _KEY_CLASS.get(key)
        if code is None:
            code = _classify(key)
        if code == _PLAIN:
            attributes[key] = (
                value if type(value) is str and len(value) <= MAX_ATTRIBUTE_CHARS else _to_str(value)
            )
        elif code == _LLM_FIELD:
            if fields is None:
                fields = []
            fields.append(key)
        elif code >= _CONTENT:
            if capture:
                if found is None:
                    found = {}
                found.setdefault(code, []).append((key, value))
        # _SECRET, _DROP_CONTENT and _OPERATION: never in attributes
    get = attrs.get

    # 2. LLM or not, and the operation name (rules 1-6 of the module docstring)
    operation = get(sc.GEN_AI_OPERATION_NAME)
    is_llm = False
    if operation is not None:
        operation = _as_str(operation)
        is_llm = operation in _INFERENCE_OPERATIONS
    elif (oi_kind := get(OI_SPAN_KIND)) is not None:
        oi_kind = _as_str(oi_kind).upper()
        operation = _OI_LLM_KINDS.get(oi_kind)
        is_llm = operation is not None
        if not is_llm:
            operation = _OI_SPAN_OPERATION.get(oi_kind, "")
    elif (lf_type := get(LF_TYPE)) is not None:
        lf_type = _as_str(lf_type).lower()
        operation = _LF_LLM_TYPES.get(lf_type)
        is_llm = operation is not None
        if not is_llm:
            operation = _LF_SPAN_OPERATION.get(lf_type, "")
    elif (request_type := get(TRACELOOP_REQUEST_TYPE)) is not None:
        request_type = _as_str(request_type).lower()
        operation = _REQUEST_TYPE_OPERATION.get(request_type, request_type)
        is_llm = True
    elif (tl_kind := get(TRACELOOP_SPAN_KIND)) is not None:
        operation = _TRACELOOP_SPAN_OPERATION.get(_as_str(tl_kind).lower(), "")
    elif get(sc.GEN_AI_REQUEST_MODEL) is not None or get(sc.GEN_AI_RESPONSE_MODEL) is not None:
        is_llm = True
        operation = "embeddings" if "embed" in span.name.lower() else "chat"
    else:
        operation = ""

    if fields is not None and not is_llm:
        for key in fields:
            attributes[key] = _to_str(attrs[key])

    # 3. events: exceptions, first token, content events
    exception_type = None
    first_token_event_ns = None
    if span.events:
        for event in span.events:
            name = event.name
            if name == "exception":
                if exception_type is None:
                    exception_type = _as_str(_attributes(event.attributes).get(EXCEPTION_TYPE)) or None
            elif name == OPENINFERENCE_FIRST_TOKEN_EVENT:
                if first_token_event_ns is None:
                    first_token_event_ns = event.time_unix_nano
            elif name == VERCEL_FIRST_CHUNK_EVENT:
                event_attrs = _attributes(event.attributes)
                ms = _as_float(_first(event_attrs, _MS_TO_FIRST_CHUNK_KEYS))
                if ms is not None and first_token_event_ns is None:
                    first_token_event_ns = span.start_time_unix_nano + int(ms * 1e6 + 0.5)
            elif name in _CONTENT_EVENTS and capture:
                attr_name, code = _CONTENT_EVENTS[name]
                text = _attributes(event.attributes).get(attr_name)
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

    start_ns = span.start_time_unix_nano
    end_ns = span.end_time_unix_nano
    trace_id = span.trace_id.hex()
    span_id = span.span_id.hex()
    parent = span.parent_span_id
    parent_span_id = parent.hex() if parent and parent != _ZERO_SPAN_ID else ""
    start_us = start_ns // 1000

    if is_llm:
        row = _llm_row(
            attrs, span, operation, project_id, service, trace_id, span_id, parent_span_id, start_ns, end_ns,
            attributes, exception_type, first_token_event_ns, index, errors,
        )  # fmt: skip
        llm_calls.append(row)
        model, template = row.model, row.prompt_template
    else:
        code = span.status.code
        message = span.status.message
        if message:
            message = redactor.redact(message[:MAX_ATTRIBUTE_CHARS]).text
        spans.append(
            SpanRow._make(
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
        model = _as_str(_first(attrs, _ANY_MODEL_KEYS))
        template = _as_str(get(sc.PROMPT_TEMPLATE))

    if found:
        prompt = _redact_capped(redactor, _content_text(found, _PROMPT), redactions)
        completion = _redact_capped(redactor, _content_text(found, _COMPLETION), redactions)
        if prompt or completion:
            prompt_logs.append(
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
) -> LlmCallRow:
    get = attrs.get
    provider = _provider(_first(attrs, _PROVIDER_KEYS))

    # models: request model is the grouping key, response model the fallback
    invocation = None
    request_model = _as_str(_first(attrs, _REQUEST_MODEL_KEYS))
    if not request_model and get(OI_INVOCATION_PARAMETERS) is not None:
        invocation = _json_object(get(OI_INVOCATION_PARAMETERS))
        if isinstance(invocation, dict):
            request_model = _as_str(invocation.get("model"))
    response_model = _as_str(_first(attrs, _RESPONSE_MODEL_KEYS))

    # usage
    usage = _read_usage(attrs, provider)
    for problem in usage.invalid:
        errors.add(f"span {index}: {problem}; usage marked missing")
    input_tokens, output_tokens, cache_read, cache_write, reasoning = _normalise_usage(usage)
    no_usage = usage.input is None and usage.output is None
    usage_missing = bool(_as_bool(get(sc.USAGE_MISSING))) or no_usage or bool(usage.invalid)

    # status
    error_type = _as_str(get(sc.ERROR_TYPE)) or exception_type or ""
    is_error = (
        span.status.code == _STATUS_ERROR
        or bool(get(sc.ERROR_TYPE))
        or _as_str(get(LF_LEVEL)).upper() == "ERROR"
    )
    if is_error and not error_type:
        error_type = "_OTHER"  # the GenAI conventions' fallback value for error.type

    # streaming and time to first token (all spellings, ours first; landscape.md §4)
    streamed = _as_bool(_first(attrs, _STREAM_KEYS))
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
    ttft_ns = _ttft_ns(attrs, start_ns, first_token_event_ns)
    if streamed is None:
        streamed = ttft_ns is not None  # only streamed responses have a first token distinct from the end
    if not streamed:
        ttft_ns = None
    ttft_ms = max(1, int(ttft_ns / 1e6 + 0.5)) if ttft_ns is not None else 0

    decode_tps = _as_float(get(sc.DECODE_TOKENS_PER_SECOND))
    if decode_tps is None or decode_tps < 0:
        decode_tps = 0.0
        if ttft_ns is not None and output_tokens > 1 and not usage_missing:
            decode_s = (end_ns - (start_ns + ttft_ns)) / 1e9
            if decode_s > 0:
                decode_tps = round((output_tokens - 1) / decode_s, 3)

    # quality flags
    finish = _finish_reason(_first(attrs, _FINISH_REASON_KEYS))
    truncated = _as_bool(get(sc.TRUNCATED))
    if truncated is None:
        truncated = finish in _TRUNCATION_REASONS
    refusal = bool(_as_bool(get(sc.REFUSAL))) or finish in _REFUSAL_REASONS
    empty = _as_bool(get(sc.EMPTY_RESPONSE))
    if empty is None:
        empty = not is_error and not usage_missing and output_tokens == 0 and operation != "embeddings"

    # Column order of rows.LlmCallRow; _make skips the keyword parsing of a 43-field NamedTuple (3x faster).
    # The whole-row tests build their expectations by keyword, so a reordered rows.py fails them.
    return LlmCallRow._make(
        (
            project_id,  # project_id
            start_ns // 1000,  # start_time
            end_ns // 1000,  # end_time
            trace_id,  # trace_id
            span_id,  # span_id
            parent_span_id,  # parent_span_id
            _as_str(_first(attrs, _RESPONSE_ID_KEYS)),  # response_id
            service,  # service_name
            span.name,  # span_name
            request_model or response_model,  # model
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
            _nonnegative(get(sc.TOOL_CALLS)),  # tool_calls
            _nonnegative(get(sc.TOOL_CALL_FAILURES)),  # tool_call_failures
            _nonnegative(get(sc.RESPONSE_CHARS)),  # response_chars
            _as_str(get(sc.FEATURE)),  # feature
            _as_str(_first(attrs, _PROMPT_TEMPLATE_KEYS)),  # prompt_template
            _as_str(_first(attrs, _PROMPT_VERSION_KEYS)),  # prompt_version
            _as_str(get(sc.EXPERIMENT)),  # experiment
            _as_str(get(sc.VARIANT)),  # variant
            _as_str(get(sc.USER_HASH)),  # user_hash
            0.0,  # cost_usd: pricing stamps cost_usd and price_version after normalisation
            "",  # price_version
            attributes,  # attributes
        )
    )


def _nonnegative(value: Any) -> int:
    number = _as_int(value) if value is not None else None
    return number if number is not None and number >= 0 else 0


def _ttft_ns(attrs: dict[str, Any], start_ns: int, first_token_event_ns: int | None) -> int | None:
    """Time to first token in ns from whichever spelling the span carries; None when unknown or negative."""
    get = attrs.get
    absolute = _as_int(get(sc.FIRST_TOKEN_TIME_UNIX_NANO))  # our SDK: absolute time of the first token
    ttft: float | None = None
    if absolute is not None and absolute > 0:
        ttft = absolute - start_ns
    else:
        seconds = _as_float(_first(attrs, _TTFT_SECONDS_KEYS))
        if seconds is not None:
            ttft = seconds * 1e9
        else:
            ms = _as_float(_first(attrs, _MS_TO_FIRST_CHUNK_KEYS))
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
