"""Attribute and metric names, in one place.

OTel GenAI semantic-convention names are used wherever the convention has one (architecture §4 rule 8); everything
the convention does not cover lives under ``inferwatch.*``. The collector imports this module to recognise our
own spans, so the SDK and the server can never disagree about a name.
"""

from __future__ import annotations

# --- OTel GenAI (current names) ---------------------------------------------------------------------------
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_REQUEST_STREAM = "gen_ai.request.stream"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"  # seconds
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"  # includes cache reads and writes
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"  # includes reasoning
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
ERROR_TYPE = "error.type"

# --- OTel GenAI (deprecated names still emitted by older instrumentations) ---------------------------------
GEN_AI_SYSTEM = "gen_ai.system"
GEN_AI_USAGE_PROMPT_TOKENS = "gen_ai.usage.prompt_tokens"
GEN_AI_USAGE_COMPLETION_TOKENS = "gen_ai.usage.completion_tokens"
GEN_AI_PROMPT = "gen_ai.prompt"
GEN_AI_COMPLETION = "gen_ai.completion"

# --- Metrics ------------------------------------------------------------------------------------------------
METRIC_OPERATION_DURATION = "gen_ai.client.operation.duration"
METRIC_TOKEN_USAGE = "gen_ai.client.token.usage"
METRIC_TIME_TO_FIRST_CHUNK = "gen_ai.client.operation.time_to_first_chunk"

# --- inferwatch extras ----------------------------------------------------------------------------------------
FEATURE = "inferwatch.feature"
USER_HASH = "inferwatch.user.hash"
PROMPT_TEMPLATE = "inferwatch.prompt.template"
PROMPT_VERSION = "inferwatch.prompt.version"
EXPERIMENT = "inferwatch.experiment"
VARIANT = "inferwatch.variant"
STREAMED = "inferwatch.streamed"
USAGE_MISSING = "inferwatch.usage_missing"
REFUSAL = "inferwatch.refusal"
EMPTY_RESPONSE = "inferwatch.empty_response"
TRUNCATED = "inferwatch.truncated"
TOOL_CALLS = "inferwatch.tool_calls"
TOOL_CALL_FAILURES = "inferwatch.tool_call_failures"
RESPONSE_CHARS = "inferwatch.response.chars"
FIRST_TOKEN_TIME_UNIX_NANO = "inferwatch.first_token.unix_nano"
DECODE_TOKENS_PER_SECOND = "inferwatch.decode.tokens_per_second"
# Cache writes billed at the 1-hour rate (Anthropic's ephemeral_1h); a subset of the cache_creation count.
CACHE_CREATION_1H_INPUT_TOKENS = "inferwatch.usage.cache_creation_1h.input_tokens"
# Answered from the application's own cache (exact or semantic): no provider call, its cost was avoided.
CACHE_HIT = "inferwatch.cache_hit"
CACHE_HIT_KIND = "inferwatch.cache_hit.kind"  # exact | semantic
# The model a hard budget's downgrade policy replaced (the call went to gen_ai.request.model instead).
BUDGET_DOWNGRADED_FROM = "inferwatch.budget.downgraded_from"
# The SDK's export thread handled the span's content attributes with its redactor (capture "redacted", or "full":
# secrets only), and by which rules. A record of what the SDK did, not a licence: the collector redacts the content
# it stores again whatever the span says (the mark is set by the client, which the collector cannot trust).
REDACTED = "inferwatch.redacted"
REDACTION_POLICY = "inferwatch.redaction.policy"
# Metric attribute of gen_ai.client.token.usage: input | output.
GEN_AI_TOKEN_TYPE = "gen_ai.token.type"

# --- finish reasons (normalised: lower case, '-' → '_') that set the quality flags ---------------------------
# Truncated: the output limit (OpenAI length, Anthropic max_tokens, Responses max_output_tokens, vLLM's
# model_length) or the context window (Anthropic model_context_window_exceeded) cut the answer short.
TRUNCATION_REASONS = frozenset({"length", "max_tokens", "max_output_tokens", "model_length",
                                "model_context_window_exceeded"})
REFUSAL_REASONS = frozenset({"content_filter", "refusal", "safety"})
