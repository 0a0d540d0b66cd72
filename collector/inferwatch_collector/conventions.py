"""Attribute names of every supported telemetry convention, and how each attribute key is classified.

One place lists every name the collector reads, so supporting a new instrumentation (or a renamed attribute) is
an edit here, and :mod:`.normalize` keeps only the algorithm. Pure data plus three tiny helpers
(:func:`classify_key`, :func:`canonical_provider`, :func:`infer_provider`); no I/O, nothing per request.

Conventions covered: OTel GenAI semantic conventions, current names (from :mod:`inferwatch.semconv`, which also
holds our SDK's ``inferwatch.*`` names) and deprecated ones; OpenLLMetry/Traceloop; OpenInference (Arize
Phoenix); Langfuse (OTel-based SDKs v3+); Vercel AI SDK; Sentry AI monitoring; OpenLIT.

Tuples named ``*_KEYS`` are alternative spellings of one value in priority order (ours and the current OTel names
first): the first key present with a non-empty value wins. How the values are combined (usage normalisation,
time to first token, LLM-call recognition) is documented in :mod:`.normalize`.
"""

from __future__ import annotations

from inferwatch import semconv as sc

# --- attribute names of other conventions (ours and the current OTel GenAI names come from inferwatch.semconv) ---
# OTel GenAI, names that inferwatch.semconv does not carry
GEN_AI_USAGE_TOTAL_TOKENS = "gen_ai.usage.total_tokens"  # emitted by OpenLIT, Sentry, some others
GEN_AI_TOOL_DEFINITIONS = "gen_ai.tool.definitions"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
# TTFT spellings
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
OPENLIT_SCOPE_PREFIX = "openlit.instrumentation."  # its tracers' scope: openlit.instrumentation.anthropic, ...
TELEMETRY_SDK_NAME = "telemetry.sdk.name"  # OpenLIT also sets it on each LLM span: "openlit"
OPENLIT_CONTENT_PROMPT = "gen_ai.content.prompt"  # span event name (attribute gen_ai.prompt) and attribute
OPENLIT_CONTENT_COMPLETION = "gen_ai.content.completion"  # span event name (attribute gen_ai.completion)
# OpenLLMetry / Traceloop legacy
TRACELOOP_REQUEST_TYPE = "llm.request.type"
TRACELOOP_IS_STREAMING = "llm.is_streaming"
TRACELOOP_GEN_AI_IS_STREAMING = "gen_ai.is_streaming"  # semconv-ai 0.5+ (OpenLLMetry 0.5x+)
# a span event per streamed chunk (OpenLLMetry's OpenAI instrumentation); current and pre-0.5 names
TRACELOOP_CHUNK_EVENTS = frozenset({"gen_ai.content.completion.chunk", "llm.content.completion.chunk"})
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
OI_MODEL_NAME = "llm.model_name"  # the request's name, overwritten by the response's when there is one
OI_REQUEST_MODEL_NAME = "llm.request.model_name"
OI_RESPONSE_MODEL_NAME = "llm.response.model_name"
OI_FINISH_REASON = "llm.finish_reason"  # a plain string, the provider's own value ("end_turn", "stop")
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
LF_MODEL = "langfuse.observation.model.name"  # the response's name; the request's on a failed call
LF_FINISH_REASON = "langfuse.observation.metadata.finish_reason"  # v3: stop; v5: JSON-encoded "stop"
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
# The anthropic client's own spans (anthropic/_tracing.py, 2.x)
ANTHROPIC_CACHE_WRITE_INPUT_TOKENS = "gen_ai.usage.cache_write.input_tokens"
ANTHROPIC_CACHE_1H_INPUT_TOKENS = "anthropic.usage.cache_creation.ephemeral_1h_input_tokens"
ANTHROPIC_STOP_REASON = "anthropic.message.stop_reason"
# common
OTEL_SCOPE_NAME = "otel.scope.name"  # the instrumentation scope's name, in every row's attributes map
SERVICE_NAME = "service.name"
SERVER_ADDRESS = "server.address"
EXCEPTION_TYPE = "exception.type"

# --- free text that can quote user input (error messages, stack traces, queries): stored redacted ----------------
# Every convention's keys; classify_key puts them in FREE_TEXT, and the attributes map keeps their values
# redacted (normalize/attributes.py). Anything else whose last components name an error message is free text too.
EXCEPTION_MESSAGE = "exception.message"  # OTel exception attributes, also set on spans (OpenInference, others)
EXCEPTION_STACKTRACE = "exception.stacktrace"  # ends with the exception's message
ERROR_MESSAGE = "error.message"  # OpenLIT (firecrawl and others), many instrumentations
LF_STATUS_MESSAGE = "langfuse.observation.status_message"  # Langfuse: the error text of an observation
LF_EXPECTED_OUTPUT = "langfuse.experiment.item.expected_output"  # Langfuse experiments: a dataset answer
OI_RERANKER_QUERY = "reranker.query"  # OpenInference reranker spans
OI_FUNCTION_CALL = "llm.function_call"  # OpenInference: a legacy function call with its arguments (JSON)
OI_CHOICES = "llm.choices"  # OpenInference: legacy completion choices
OI_ANNOTATION_EXPLANATION = "annotation.explanation"  # OpenInference evaluators' reasons (quote the content)
OI_EVALUATION_EXPLANATION = "evaluation.explanation"
FREE_TEXT_KEYS = frozenset({
    EXCEPTION_MESSAGE, EXCEPTION_STACKTRACE, ERROR_MESSAGE, LF_STATUS_MESSAGE, LF_EXPECTED_OUTPUT,
    OI_RERANKER_QUERY, OI_FUNCTION_CALL, OI_CHOICES, OI_ANNOTATION_EXPLANATION, OI_EVALUATION_EXPLANATION,
})  # fmt: skip
# OpenLIT's gen_ai.framework.error.message, gen_ai.browser.error.message, mcp.error.message,
# retry.error.message; any *.exception.message, *.status_message, *_error_message
FREE_TEXT_SUFFIXES = (".error.message", ".exception.message", ".exception.stacktrace", "status_message",
                      "error_message")  # fmt: skip
# OpenInference reranker documents (reranker.input_documents.0.document.content, ...)
FREE_TEXT_PREFIXES = ("reranker.input_documents.", "reranker.output_documents.")

# Alternative spellings, in priority order (ours and current OTel names first)
PROVIDER_KEYS = (sc.GEN_AI_PROVIDER_NAME, sc.GEN_AI_SYSTEM, OI_PROVIDER, OI_SYSTEM)
REQUEST_MODEL_KEYS = (sc.GEN_AI_REQUEST_MODEL, OI_REQUEST_MODEL_NAME)
# (OpenInference's llm.model_name is read after these, only without llm.request.model_name, then Langfuse's
# model.name, the request's on a failed call: see llm_call.py)
RESPONSE_MODEL_KEYS = (sc.GEN_AI_RESPONSE_MODEL, VERCEL_RESPONSE_MODEL, OI_RESPONSE_MODEL_NAME)
ANY_MODEL_KEYS = (sc.GEN_AI_REQUEST_MODEL, sc.GEN_AI_RESPONSE_MODEL)
RESPONSE_ID_KEYS = (sc.GEN_AI_RESPONSE_ID, VERCEL_RESPONSE_ID)
STREAM_KEYS = (
    sc.STREAMED, sc.GEN_AI_REQUEST_STREAM, SENTRY_STREAMING, OPENLIT_IS_STREAM, TRACELOOP_GEN_AI_IS_STREAMING,
    TRACELOOP_IS_STREAMING,
)  # fmt: skip
FINISH_REASON_KEYS = (
    sc.GEN_AI_RESPONSE_FINISH_REASONS, TRACELOOP_FIRST_COMPLETION_FINISH_REASON, TRACELOOP_FINISH_REASON,
    TRACELOOP_STOP_REASON, VERCEL_FINISH_REASON, OI_FINISH_REASON, ANTHROPIC_STOP_REASON, LF_FINISH_REASON,
)  # fmt: skip
TTFT_SECONDS_KEYS = (
    sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, GEN_AI_RESPONSE_TIME_TO_FIRST_TOKEN, GEN_AI_SERVER_TIME_TO_FIRST_TOKEN,
)  # fmt: skip
MS_TO_FIRST_CHUNK_KEYS = (VERCEL_MS_TO_FIRST_CHUNK, VERCEL_STREAM_MS_TO_FIRST_CHUNK)
PROMPT_TEMPLATE_KEYS = (sc.PROMPT_TEMPLATE, LF_PROMPT_NAME, TRACELOOP_PROMPT_KEY)
PROMPT_VERSION_KEYS = (sc.PROMPT_VERSION, LF_PROMPT_VERSION, TRACELOOP_PROMPT_VERSION, OI_PROMPT_TEMPLATE_VERSION)

# usage counts, alternative spellings in priority order
INPUT_KEYS = (
    sc.GEN_AI_USAGE_INPUT_TOKENS, sc.GEN_AI_USAGE_PROMPT_TOKENS, OI_PROMPT_TOKENS, TRACELOOP_PROMPT_TOKENS_OLD,
    VERCEL_INPUT_TOKENS, VERCEL_PROMPT_TOKENS,
)  # fmt: skip
OUTPUT_KEYS = (
    sc.GEN_AI_USAGE_OUTPUT_TOKENS, sc.GEN_AI_USAGE_COMPLETION_TOKENS, OI_COMPLETION_TOKENS,
    TRACELOOP_COMPLETION_TOKENS_OLD, VERCEL_OUTPUT_TOKENS, VERCEL_COMPLETION_TOKENS,
)  # fmt: skip
TOTAL_KEYS = (GEN_AI_USAGE_TOTAL_TOKENS, TRACELOOP_TOTAL_TOKENS, OI_TOTAL_TOKENS, VERCEL_TOTAL_TOKENS)
CACHE_READ_KEYS = (
    sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, OI_CACHE_READ, SENTRY_CACHED_INPUT_TOKENS, VERCEL_CACHED_INPUT_TOKENS,
)  # fmt: skip
CACHE_WRITE_KEYS = (sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, ANTHROPIC_CACHE_WRITE_INPUT_TOKENS, OI_CACHE_WRITE)
CACHE_WRITE_1H_KEYS = (sc.CACHE_CREATION_1H_INPUT_TOKENS, ANTHROPIC_CACHE_1H_INPUT_TOKENS)  # a share of the writes
REASONING_KEYS = (
    sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, OI_REASONING, SENTRY_REASONING_OUTPUT_TOKENS,
    TRACELOOP_REASONING_TOKENS, VERCEL_REASONING_TOKENS,
)  # fmt: skip

# --- value sets --------------------------------------------------------------------------------------------------
INFERENCE_OPERATIONS = frozenset(
    {"chat", "text_completion", "generate_content", "embeddings", "completion", "embedding", "generate"}
)
REQUEST_TYPE_OPERATION = {
    "chat": "chat",
    "completion": "text_completion",
    "embedding": "embeddings",
    "embeddings": "embeddings",
    "rerank": "rerank",
}
OI_LLM_KINDS = {"LLM": "chat", "EMBEDDING": "embeddings"}
OI_SPAN_OPERATION = {
    "TOOL": "execute_tool", "RETRIEVER": "retrieval", "AGENT": "invoke_agent", "RERANKER": "rerank",
}  # fmt: skip
LF_LLM_TYPES = {"generation": "chat", "embedding": "embeddings"}
LF_SPAN_OPERATION = {"tool": "execute_tool", "agent": "invoke_agent", "retriever": "retrieval"}
TRACELOOP_SPAN_OPERATION = {"workflow": "invoke_workflow", "agent": "invoke_agent", "tool": "execute_tool"}
# finish reasons, compared after lower-casing and '-' → '_' (Vercel says "content-filter", Gemini "MAX_TOKENS")
TRUNCATION_REASONS = sc.TRUNCATION_REASONS  # one list for the SDK and the collector
REFUSAL_REASONS = sc.REFUSAL_REASONS
# provider spellings → OTel gen_ai.provider.name values (deprecated gen_ai.system values, OpenInference, Vercel)
PROVIDER_ALIASES = {
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
# OpenLLMetry (opentelemetry-instrumentation-openai / -anthropic 0.62.x) maps finish reasons to the OTel GenAI enum
# (stop, length, content_filter, tool_call, error): openai/shared/__init__.py OPENAI_FINISH_REASON_MAP,
# anthropic/span_utils.py _FINISH_REASON_MAP. Back to the provider's own word, per scope, where the enum word came
# from one provider word only (Anthropic's "stop" was end_turn or stop_sequence: kept). The provider never says
# these enum words itself, so a library of the same scope that stores the raw word is left alone.
_OPENAI_FROM_ENUM = {"tool_call": "tool_calls"}
_ANTHROPIC_FROM_ENUM = {"tool_call": "tool_use", "length": "max_tokens"}
PROVIDER_FINISH_REASON_BY_SCOPE = {
    "opentelemetry.instrumentation.openai.v1": _OPENAI_FROM_ENUM,
    "opentelemetry.instrumentation.openai.v0": _OPENAI_FROM_ENUM,
    "opentelemetry.instrumentation.anthropic": _ANTHROPIC_FROM_ENUM,
}
#: Instrumentation scopes of provider clients' own spans: they read the provider's response as it came (its
#: finish reason, usage), so a merged row takes those facts from them first (see ``pairing/merge.py``).
PROVIDER_CLIENT_SCOPES = frozenset({"com.anthropic.sdk.python"})
KNOWN_PROVIDERS = frozenset(
    {
        "openai", "anthropic", "aws.bedrock", "azure.ai.openai", "azure.ai.inference", "gcp.gemini",
        "gcp.vertex_ai", "gcp.gen_ai", "mistral_ai", "groq", "deepseek", "x_ai", "perplexity", "cohere",
        "ibm.watsonx.ai", "ollama",
    }
)  # fmt: skip

# --- key classification ------------------------------------------------------------------------------------------
# Every attribute key is put in one class by classify_key, memoised in KEY_CLASS:
PLAIN = 0  # goes to attributes
SECRET = 1  # dropped everywhere
LLM_FIELD = 2  # read into LlmCallRow columns: not repeated in an LLM row's attributes, plain for a SpanRow
OPERATION = 3  # gen_ai.operation.name: a column of both row types
DROP_CONTENT = 4  # content we never store (tool definitions): dropped everywhere
FREE_TEXT = 5  # free text that can quote user input (FREE_TEXT_KEYS): goes to attributes redacted
CONTENT = 10  # >= 10: content; code - 10 indexes CONTENT_SOURCES

PROMPT, COMPLETION = 0, 1  # the side of a content source
# (side, key, is_prefix) in priority order per side: the first source present on a side is the one stored (system
# instructions are prepended to the prompt). A prefix source is a flattened list ("gen_ai.prompt.{i}.content").
CONTENT_SOURCES: tuple[tuple[int, str, bool], ...] = (
    (PROMPT, sc.GEN_AI_SYSTEM_INSTRUCTIONS, False),  # index 0: prepended to the prompt
    (PROMPT, sc.GEN_AI_INPUT_MESSAGES, False),
    (PROMPT, sc.GEN_AI_PROMPT + ".", True),  # Traceloop gen_ai.prompt.{i}.role/content
    (PROMPT, sc.GEN_AI_PROMPT, False),
    (PROMPT, "llm.input_messages.", True),  # OpenInference
    (PROMPT, OI_INPUT_VALUE, False),
    (PROMPT, "llm.prompts", False),
    (PROMPT, "llm.prompts.", True),
    (PROMPT, OI_PROMPT_TEMPLATE_VARIABLES, False),
    (PROMPT, OI_PROMPT_TEMPLATE, False),
    (PROMPT, LF_INPUT, False),
    (PROMPT, LF_TRACE_INPUT, False),
    (PROMPT, SENTRY_REQUEST_MESSAGES, False),
    (PROMPT, "ai.prompt.messages", False),
    (PROMPT, "ai.prompt", False),
    (PROMPT, "ai.values", False),
    (PROMPT, "ai.value", False),
    (PROMPT, "embedding.embeddings.", True),
    (PROMPT, OPENLIT_CONTENT_PROMPT, False),
    (PROMPT, TRACELOOP_ENTITY_INPUT, False),
    (PROMPT, GEN_AI_TOOL_CALL_ARGUMENTS, False),
    (PROMPT, "ai.toolCall.args", False),
    (COMPLETION, sc.GEN_AI_OUTPUT_MESSAGES, False),
    (COMPLETION, sc.GEN_AI_COMPLETION + ".", True),  # Traceloop gen_ai.completion.{i}.role/content/finish_reason
    (COMPLETION, sc.GEN_AI_COMPLETION, False),
    (COMPLETION, "llm.output_messages.", True),
    (COMPLETION, OI_OUTPUT_VALUE, False),
    (COMPLETION, LF_OUTPUT, False),
    (COMPLETION, LF_TRACE_OUTPUT, False),
    (COMPLETION, SENTRY_RESPONSE_TEXT, False),
    (COMPLETION, SENTRY_RESPONSE_TOOL_CALLS, False),
    (COMPLETION, "ai.response.text", False),
    (COMPLETION, "ai.response.object", False),
    (COMPLETION, "ai.response.toolCalls", False),
    (COMPLETION, OPENLIT_CONTENT_COMPLETION, False),
    (COMPLETION, TRACELOOP_ENTITY_OUTPUT, False),
    (COMPLETION, GEN_AI_TOOL_CALL_RESULT, False),
    (COMPLETION, "ai.toolCall.result", False),
    (COMPLETION, "retrieval.documents.", True),
)
SYSTEM_INSTRUCTIONS_CODE = CONTENT  # source 0
DROPPED_CONTENT_KEYS = frozenset({GEN_AI_TOOL_DEFINITIONS, SENTRY_AVAILABLE_TOOLS, "ai.prompt.tools"})
DROPPED_CONTENT_PREFIXES = ("llm.tools.",)
# event name -> (attribute holding the text, content code)
_SOURCE_NAMES = [name for _, name, _ in CONTENT_SOURCES]
CONTENT_EVENTS = {
    OPENLIT_CONTENT_PROMPT: (sc.GEN_AI_PROMPT, CONTENT + _SOURCE_NAMES.index(OPENLIT_CONTENT_PROMPT)),
    OPENLIT_CONTENT_COMPLETION: (sc.GEN_AI_COMPLETION, CONTENT + _SOURCE_NAMES.index(OPENLIT_CONTENT_COMPLETION)),
}

CONTENT_EXACT: dict[str, int] = {}
CONTENT_PREFIXES: list[tuple[str, int]] = []
for _i, (_side, _key, _is_prefix) in enumerate(CONTENT_SOURCES):
    if _is_prefix:
        CONTENT_PREFIXES.append((_key, CONTENT + _i))
    else:
        CONTENT_EXACT[_key] = CONTENT + _i
CONTENT_PREFIX_TUPLE = tuple(p for p, _ in CONTENT_PREFIXES)
del _i, _side, _key, _is_prefix

# Keys read into LlmCallRow columns (so not repeated in the LLM row's attributes).
LLM_FIELDS = frozenset(
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
        VERCEL_CACHED_INPUT_TOKENS, VERCEL_REASONING_TOKENS, TRACELOOP_GEN_AI_IS_STREAMING, OI_REQUEST_MODEL_NAME,
        OI_RESPONSE_MODEL_NAME, OI_FINISH_REASON, LF_FINISH_REASON, ANTHROPIC_CACHE_WRITE_INPUT_TOKENS,
        ANTHROPIC_CACHE_1H_INPUT_TOKENS, ANTHROPIC_STOP_REASON,
        sc.FEATURE, sc.USER_HASH, sc.PROMPT_TEMPLATE, sc.PROMPT_VERSION, sc.EXPERIMENT, sc.VARIANT, sc.STREAMED,
        sc.USAGE_MISSING, sc.REFUSAL, sc.EMPTY_RESPONSE, sc.TRUNCATED, sc.TOOL_CALLS, sc.TOOL_CALL_FAILURES,
        sc.RESPONSE_CHARS, sc.FIRST_TOKEN_TIME_UNIX_NANO, sc.DECODE_TOKENS_PER_SECOND,
    }
)  # fmt: skip

# Credential-looking keys. Substrings anywhere in the lower-cased key:
SECRET_SUBSTRINGS = (
    "authorization", "api_key", "api-key", "apikey", "password", "passwd", "secret", "cookie", "credential",
    "private_key", "private-key",
)  # fmt: skip
# ... or a last dotted component that is "headers" or ends with "token" (token, access_token, x-auth-token,
# accessToken) unless it is a timing name (time_to_first_token, time_per_output_token). The "*_tokens" counters and
# gen_ai.token.type never match (plural / not the last component).
TIMING_TOKEN_SUFFIXES = ("first_token", "output_token", "per_token")

KEY_CLASS: dict[str, int] = {}
KEY_CLASS_LIMIT = 50_000  # distinct keys remembered; beyond that keys are classified each time


def _classify_uncached(key: str) -> int:
    if key == sc.GEN_AI_OPERATION_NAME:
        return OPERATION
    code = CONTENT_EXACT.get(key)
    if code is not None:
        return code
    if key.startswith(CONTENT_PREFIX_TUPLE):
        for prefix, code in CONTENT_PREFIXES:
            if key.startswith(prefix):
                return code
    if key in LLM_FIELDS:
        return LLM_FIELD
    if key in DROPPED_CONTENT_KEYS or key.startswith(DROPPED_CONTENT_PREFIXES):
        return DROP_CONTENT
    lowered = key.lower()
    for needle in SECRET_SUBSTRINGS:
        if needle in lowered:
            return SECRET
    last = lowered.rpartition(".")[2]
    if last == "headers" or (last.endswith("token") and not last.endswith(TIMING_TOKEN_SUFFIXES)):
        return SECRET
    if key in FREE_TEXT_KEYS or lowered.endswith(FREE_TEXT_SUFFIXES) or key.startswith(FREE_TEXT_PREFIXES):
        return FREE_TEXT
    return PLAIN


def classify_key(key: str) -> int:
    """The class of an attribute key (one of the codes above), memoised per distinct key."""
    code = KEY_CLASS.get(key)
    if code is None:
        code = _classify_uncached(key)
        if len(KEY_CLASS) < KEY_CLASS_LIMIT:
            KEY_CLASS[key] = code
    return code



_PROVIDER_CACHE: dict[str, str] = {}


def canonical_provider(text: str) -> str:
    """A provider spelling → the OTel ``gen_ai.provider.name`` value: lower-cased, aliases mapped
    (``az.ai.inference`` → ``azure.ai.inference``), and Vercel's ``openai.chat`` / ``anthropic.messages`` → the
    part before the dot."""
    cached = _PROVIDER_CACHE.get(text)
    if cached is not None:
        return cached
    lowered = text.strip().lower()
    name = PROVIDER_ALIASES.get(lowered, lowered)
    if name not in KNOWN_PROVIDERS and "." in lowered:
        head = lowered.split(".", 1)[0]
        head = PROVIDER_ALIASES.get(head, head)
        if head in KNOWN_PROVIDERS:
            name = head
    if len(_PROVIDER_CACHE) < 1000:
        _PROVIDER_CACHE[text] = name
    return name


# --- provider inference, for spans that name no provider (Langfuse, OpenLIT's failed calls, ...) ------------------
# server.address → provider: exact host names, then (prefix, suffix) pairs; the host that served the call wins over
# the model's maker (a Llama on Groq is billed by Groq).
PROVIDER_BY_HOST = {
    "api.openai.com": "openai",
    "api.anthropic.com": "anthropic",
    "generativelanguage.googleapis.com": "gcp.gemini",
    "api.mistral.ai": "mistral_ai",
    "api.cohere.com": "cohere",
    "api.cohere.ai": "cohere",
    "api.x.ai": "x_ai",
    "api.deepseek.com": "deepseek",
    "api.groq.com": "groq",
    "api.perplexity.ai": "perplexity",
    "models.inference.ai.azure.com": "azure.ai.inference",
}
PROVIDER_BY_HOST_PATTERN = (
    ("", ".openai.azure.com", "azure.ai.openai"),
    ("", ".services.ai.azure.com", "azure.ai.inference"),
    ("", ".inference.ai.azure.com", "azure.ai.inference"),
    ("bedrock-runtime", ".amazonaws.com", "aws.bedrock"),
    ("", "aiplatform.googleapis.com", "gcp.vertex_ai"),
)
# model name prefix → provider, first match wins (so the more specific prefixes come first). Bedrock model ids
# ("anthropic.claude-...", "us.anthropic.claude-...") name Bedrock. Google's text-embedding-00N is not OpenAI's.
PROVIDER_BY_MODEL_PREFIX = (
    ("text-embedding-00", ""),
    ("gpt-", "openai"), ("chatgpt-", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
    ("text-embedding-", "openai"), ("davinci-", "openai"), ("babbage-", "openai"), ("dall-e-", "openai"),
    ("whisper-", "openai"), ("tts-", "openai"), ("omni-moderation-", "openai"), ("codex-", "openai"),
    ("claude-", "anthropic"),
    ("gemini-", "gcp.gemini"),
    ("mistral", "mistral_ai"), ("ministral", "mistral_ai"), ("open-mistral", "mistral_ai"),
    ("open-mixtral", "mistral_ai"), ("codestral", "mistral_ai"), ("pixtral", "mistral_ai"),
    ("magistral", "mistral_ai"), ("devstral", "mistral_ai"),
    ("command-", "cohere"), ("embed-english", "cohere"), ("embed-multilingual", "cohere"),
    ("rerank-", "cohere"),
    ("grok-", "x_ai"),
    ("deepseek-", "deepseek"),
    ("sonar", "perplexity"),
    ("anthropic.", "aws.bedrock"), ("amazon.", "aws.bedrock"), ("meta.llama", "aws.bedrock"),
    ("cohere.", "aws.bedrock"), ("mistral.", "aws.bedrock"), ("ai21.", "aws.bedrock"),
    ("us.", "aws.bedrock"), ("eu.", "aws.bedrock"), ("apac.", "aws.bedrock"), ("global.", "aws.bedrock"),
)
_OPENAI_O_SERIES = ("o1", "o3", "o4")  # only as a whole first part: "o1", "o3-mini", not "o1x"
_INFERRED_CACHE: dict[tuple[str, str], str] = {}


def infer_provider(model: str, server_address: str = "") -> str:
    """The provider a span that names none called: by ``server.address`` (who served it), else by the model name's
    prefix (``claude-*`` → ``anthropic``, ``gpt-*`` / ``o3-*`` → ``openai``, ``gemini-*`` → ``gcp.gemini``, ...);
    '' when neither says. A ``provider/model`` gateway name says nothing (OpenRouter serves many)."""
    key = (model, server_address)
    cached = _INFERRED_CACHE.get(key)
    if cached is not None:
        return cached
    name = _provider_by_host(server_address.strip().lower()) if server_address else ""
    if not name and model:
        name = _provider_by_model(model.strip().lower())
    if len(_INFERRED_CACHE) < 1000:
        _INFERRED_CACHE[key] = name
    return name


def _provider_by_host(host: str) -> str:
    name = PROVIDER_BY_HOST.get(host)
    if name is not None:
        return name
    for prefix, suffix, provider in PROVIDER_BY_HOST_PATTERN:
        if host.startswith(prefix) and host.endswith(suffix):
            return provider
    return ""


def _provider_by_model(model: str) -> str:
    model = model.removeprefix("models/")  # google-genai's resource names: models/gemini-2.0-flash
    if "/" in model:
        return ""
    for prefix, provider in PROVIDER_BY_MODEL_PREFIX:
        if model.startswith(prefix):
            if prefix in _OPENAI_O_SERIES and model.split("-", 1)[0] != prefix:
                continue
            return provider
    return ""
