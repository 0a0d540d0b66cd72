"""One LLM call's span → its :class:`LlmCallRow`.

Columns, besides usage (:mod:`.usage`) and streaming (:mod:`.streaming`):

* ``model`` = request model, else response model; ``latency_ms`` = end − start, rounded. Request model:
  ``gen_ai.request.model``, OpenInference ``llm.request.model_name`` or the ``model`` of its invocation parameters.
  Response model: ``gen_ai.response.model``, Vercel's, OpenInference ``llm.response.model_name``, else
  OpenInference's ``llm.model_name`` when the span has no ``llm.request.model_name`` (older versions; newer ones
  leave the request's name there when no response came, as in a failed call), else Langfuse's ``model.name`` on a
  successful call (its integrations overwrite the requested name with the response's, and keep the requested one
  nowhere). On a failed call (see ``status``) Langfuse's ``model.name`` is the request model instead: its
  integrations write the requested name there on the error path, as no response came.
* ``provider``: ``gen_ai.provider.name``, deprecated ``gen_ai.system``, OpenInference ``llm.provider`` /
  ``llm.system``, mapped by :func:`..conventions.canonical_provider`. A span that names none (Langfuse, OpenLIT's
  failed calls) gets :func:`..conventions.infer_provider`'s, from ``server.address`` or the model name, else ''.
* ``status`` = error when the span status is ERROR, ``error.type`` is set, or Langfuse's level is ERROR;
  ``error_type`` = ``error.type``, else the first exception event's ``exception.type``, else ``_OTHER`` (the GenAI
  conventions' fallback) for an error.
* ``usage_missing``: set when a call that should have reported usage did not: our SDK says so, a count was out of
  range, or a *successful* call reports neither input nor output tokens (a failed call had no usage to report).
* ``finish_reason`` = the first reported reason (also OpenInference's ``llm.finish_reason``, the anthropic client's
  ``anthropic.message.stop_reason``, Langfuse's ``metadata.finish_reason``), as the library sent it (Anthropic's
  ``end_turn`` stays ``end_turn``), lower-cased with ``-`` → ``_``; OpenLLMetry's OTel-enum words are mapped back
  to the provider's where unambiguous (``tool_call`` → ``tool_calls`` for OpenAI, ``tool_use`` for Anthropic:
  :data:`..conventions.PROVIDER_FINISH_REASON_BY_SCOPE`), so a call is labelled alike whatever emitted it.
  ``truncated``: ``inferwatch.truncated`` if set, else reason length / max_tokens / max_output_tokens. ``refusal``:
  ``inferwatch.refusal`` or reason content_filter / refusal / safety. ``empty_response``:
  ``inferwatch.empty_response`` if set, else output_tokens == 0 on a successful call with trusted usage (not for
  embeddings).
* ``cache_write_1h_tokens``: our SDK's ``inferwatch.usage.cache_creation_1h.input_tokens``, else the anthropic
  client's ``anthropic.usage.cache_creation.ephemeral_1h_input_tokens``; never more than the cache writes.
* cost columns come from the batch's :data:`.batch.Pricer`; without one they stay 0 / ''.
* ``user_hash``: our SDK's ``inferwatch.user.hash``, else the hash of the span's first user-id attribute
  (``enduser.id``, ``user.id``, ``langfuse.user.id``, ...: :mod:`..user_ids`), so another library's calls are
  found by user as well.
* text columns that carry what the application or its instrumentation wrote (``span_name``, ``error_type``,
  ``finish_reason``, ``feature``, ``prompt_template``, ``prompt_version``, ``experiment``, ``variant``) go through
  the batch's redactor (memoised: they repeat), the call's model names in them excepted. Model, provider,
  operation and response id are kept as sent: they name things (pricing and pairing read them) rather than quote
  anyone.

This runs for every LLM call: a column with alternative spellings reads its first spelling inline (the usual case)
and looks at the others only when that one is absent; values are converted only when not already the right type.
"""

from __future__ import annotations

from typing import Any

from inferwatch import semconv as sc

from ..conventions import (
    CACHE_WRITE_1H_KEYS, FINISH_REASON_KEYS, LF_LEVEL, LF_MODEL, OI_INVOCATION_PARAMETERS, OI_MODEL_NAME,
    OI_REQUEST_MODEL_NAME, OTEL_SCOPE_NAME, PROMPT_TEMPLATE_KEYS, PROMPT_VERSION_KEYS,
    PROVIDER_FINISH_REASON_BY_SCOPE, PROVIDER_KEYS, REFUSAL_REASONS, REQUEST_MODEL_KEYS, RESPONSE_ID_KEYS,
    RESPONSE_MODEL_KEYS, SERVER_ADDRESS, TRUNCATION_REASONS, canonical_provider, infer_provider,
)  # fmt: skip
from ..rows import LlmCallRow
from .attributes import HASHED_USER_ID
from .batch import Batch
from .facts import SpanFacts
from .streaming import stream_columns
from .usage import usage_columns
from .values import as_bool, as_int, as_str, finish_reason, first, json_object, to_str

_new_row = tuple.__new__  # NamedTuple rows from a tuple in column order, without a Python-level call
_STATUS_ERROR = 2
_NO_COSTS = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False)


def llm_call_row(facts: SpanFacts, batch: Batch) -> LlmCallRow:
    """The row of one LLM call; out-of-range token counts are reported to ``batch.errors``, and the call is
    priced with ``batch.price``."""
    attrs = facts.attrs
    get = attrs.get
    # status first: a failed Langfuse call names its request model where a successful one names the response's
    error_attribute = get(sc.ERROR_TYPE)
    level = get(LF_LEVEL)
    error_type = as_str(error_attribute) or facts.exception_type or ""
    is_error = (
        facts.span.status.code == _STATUS_ERROR
        or bool(error_attribute)
        or (level is not None and as_str(level).upper() == "ERROR")
    )
    if is_error and not error_type:
        error_type = "_OTHER"  # the GenAI conventions' fallback value for error.type
    (provider, request_model, response_model, response_id, template, version, feature, experiment, variant,
     user_hash) = _labels(attrs, is_error)  # fmt: skip
    if not user_hash:
        user_hash = get(HASHED_USER_ID, "")
    input_tokens, output_tokens, cache_read, cache_write, reasoning, no_usage, invalid = usage_columns(
        attrs, provider
    )
    for problem in invalid:
        batch.errors.add(f"span {facts.index}: {problem}; usage marked missing")

    # whether usage that should have been reported is missing
    flag = get(sc.USAGE_MISSING)
    usage_missing = bool(flag is not None and as_bool(flag)) or bool(invalid) or (no_usage and not is_error)

    streamed, ttft_ms, decode_tps = stream_columns(facts, output_tokens, usage_missing)
    empty_by_usage = not is_error and not usage_missing and output_tokens == 0 and facts.operation != "embeddings"
    finish, truncated, refusal, empty, tool_calls, tool_call_failures, response_chars = _response_columns(
        attrs, facts.attributes, empty_by_usage
    )

    # cost: the 1-hour share of cache writes (never more than the writes), app-side cache hits, then the price
    cache_write_1h = get(sc.CACHE_CREATION_1H_INPUT_TOKENS)
    if cache_write_1h is None:
        cache_write_1h = first(attrs, CACHE_WRITE_1H_KEYS) if cache_write else 0
    if type(cache_write_1h) is not int or cache_write_1h < 0:
        cache_write_1h = _count(cache_write_1h, _UINT32)
    if cache_write_1h > cache_write:
        cache_write_1h = cache_write
    cache_hit = get(sc.CACHE_HIT)
    cache_hit = cache_hit is not None and (cache_hit is True or as_bool(cache_hit) is True)
    model = request_model or response_model
    price = batch.price
    if price is None:
        cost, price_version, costs, avoided = 0.0, "", _NO_COSTS, 0.0
    else:
        cost, price_version, costs, avoided = price(
            model, provider, input_tokens, output_tokens, cache_read, cache_write, cache_write_1h, reasoning,
            usage_missing, cache_hit,
        )  # fmt: skip

    start_ns = facts.start_ns
    end_ns = facts.end_ns
    span_name, finish, error_type, feature, template, version, experiment, variant = batch.scrubber.texts(
        (facts.span.name, finish, error_type, feature, template, version, experiment, variant), batch.redactions,
        (request_model, response_model))
    # Column order of rows.LlmCallRow (tuple.__new__ skips the keyword parsing of this wide NamedTuple); the
    # whole-row tests build their expectations by keyword, so a reordered rows.py fails them.
    return _new_row(
        LlmCallRow,
        (
            batch.project_id,  # project_id
            start_ns // 1000,  # start_time
            end_ns // 1000,  # end_time
            facts.trace_id,  # trace_id
            facts.span_id,  # span_id
            facts.parent_span_id,  # parent_span_id
            response_id,  # response_id
            facts.service,  # service_name
            span_name,  # span_name
            model,  # model
            request_model,  # request_model
            response_model,  # response_model
            provider,  # provider
            facts.operation,  # operation
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
            facts.attributes,  # attributes
            cache_write_1h,  # cache_write_1h_tokens
            *costs,  # cost_input_usd, cost_cache_read_usd, cost_cache_write_usd, cost_output_usd,
            # cost_reasoning_usd, cache_savings_usd, unpriced (see Pricer)
            cache_hit,  # cache_hit
            avoided,  # cost_avoided_usd
        ),
    )


def _labels(attrs: dict[str, Any], failed: bool) -> tuple[str, str, str, str, str, str, str, str, str, str]:
    """(provider, request_model, response_model, response_id, prompt_template, prompt_version, feature,
    experiment, variant, user_hash): what was called, and the application's labels for it. ``failed``: the call
    failed (Langfuse's model name is then the request's)."""
    get = attrs.get
    provider = get(sc.GEN_AI_PROVIDER_NAME)
    if provider is None or provider == "":
        provider = first(attrs, PROVIDER_KEYS)
    if provider is not None:
        provider = canonical_provider(provider if type(provider) is str else to_str(provider))
    else:
        provider = ""
    request_model = get(sc.GEN_AI_REQUEST_MODEL)
    if request_model is None or request_model == "":
        request_model = first(attrs, REQUEST_MODEL_KEYS)
    if type(request_model) is not str:
        request_model = as_str(request_model)
    if not request_model and get(OI_INVOCATION_PARAMETERS) is not None:  # OpenInference: the request's parameters
        invocation = json_object(get(OI_INVOCATION_PARAMETERS))
        if isinstance(invocation, dict):
            request_model = as_str(invocation.get("model"))
    response_model = get(sc.GEN_AI_RESPONSE_MODEL)
    if response_model is None or response_model == "":
        response_model = first(attrs, RESPONSE_MODEL_KEYS)
    if type(response_model) is not str:
        response_model = as_str(response_model)
    if not response_model and get(OI_MODEL_NAME) is not None and get(OI_REQUEST_MODEL_NAME) is None:
        response_model = as_str(get(OI_MODEL_NAME))
    if not response_model and (lf_model := get(LF_MODEL)) is not None and lf_model != "":
        if not failed:
            response_model = as_str(lf_model)
        elif not request_model:
            request_model = as_str(lf_model)
    if not provider:
        provider = infer_provider(request_model or response_model, as_str(get(SERVER_ADDRESS)))
    response_id = get(sc.GEN_AI_RESPONSE_ID)
    if response_id is None or response_id == "":
        response_id = first(attrs, RESPONSE_ID_KEYS)
    if type(response_id) is not str:
        response_id = as_str(response_id)
    template = get(sc.PROMPT_TEMPLATE)
    if template is None or template == "":
        template = first(attrs, PROMPT_TEMPLATE_KEYS)
    if type(template) is not str:
        template = as_str(template)
    version = get(sc.PROMPT_VERSION)
    if version is None or version == "":
        version = first(attrs, PROMPT_VERSION_KEYS)
    if type(version) is not str:
        version = as_str(version)
    feature = get(sc.FEATURE, "")
    if type(feature) is not str:
        feature = as_str(feature)
    experiment = get(sc.EXPERIMENT, "")
    if type(experiment) is not str:
        experiment = as_str(experiment)
    variant = get(sc.VARIANT, "")
    if type(variant) is not str:
        variant = as_str(variant)
    user_hash = get(sc.USER_HASH, "")
    if type(user_hash) is not str:
        user_hash = as_str(user_hash)
    return provider, request_model, response_model, response_id, template, version, feature, experiment, variant, \
        user_hash  # fmt: skip


def _response_columns(attrs: dict[str, Any], attributes: dict[str, str],
                      empty_by_usage: bool) -> tuple[str, bool, bool, bool, int, int, int]:  # fmt: skip
    """(finish_reason, truncated, refusal, empty_response, tool_calls, tool_call_failures, response_chars);
    ``attributes``: the row's map (its scope name); ``empty_by_usage``: the usage says the response was empty
    (used when the span does not say)."""
    get = attrs.get
    finish = get(sc.GEN_AI_RESPONSE_FINISH_REASONS)
    if finish is None or finish == "":
        finish = first(attrs, FINISH_REASON_KEYS)
    if type(finish) is list and finish and type(finish[0]) is str and finish[0]:  # the usual shape: ["stop"]
        finish = finish[0].lower().replace("-", "_")
    else:
        finish = finish_reason(finish)
    if finish:
        from_enum = PROVIDER_FINISH_REASON_BY_SCOPE.get(attributes.get(OTEL_SCOPE_NAME, ""))
        if from_enum is not None:
            finish = from_enum.get(finish, finish)
    truncated = get(sc.TRUNCATED)
    if truncated is not None:
        truncated = as_bool(truncated)
    if truncated is None:
        truncated = finish in TRUNCATION_REASONS
    refusal = get(sc.REFUSAL)
    refusal = bool(refusal is not None and as_bool(refusal)) or finish in REFUSAL_REASONS
    empty = get(sc.EMPTY_RESPONSE)
    if empty is not None:
        empty = as_bool(empty)
    if empty is None:
        empty = empty_by_usage
    tool_calls = get(sc.TOOL_CALLS, 0)
    if type(tool_calls) is not int or not 0 <= tool_calls <= _UINT16:
        tool_calls = _count(tool_calls, _UINT16)
    tool_call_failures = get(sc.TOOL_CALL_FAILURES, 0)
    if type(tool_call_failures) is not int or not 0 <= tool_call_failures <= _UINT16:
        tool_call_failures = _count(tool_call_failures, _UINT16)
    response_chars = get(sc.RESPONSE_CHARS, 0)
    if type(response_chars) is not int or not 0 <= response_chars <= _UINT32:
        response_chars = _count(response_chars, _UINT32)
    return finish, truncated, refusal, empty, tool_calls, tool_call_failures, response_chars


_UINT16 = 65_535  # tool_calls, tool_call_failures
_UINT32 = 4_294_967_295  # response_chars


def _count(value: Any, top: int) -> int:
    """A count as its column holds it: not a number or negative → 0, above the column's range → ``top``."""
    number = as_int(value) if value is not None else None
    return min(number, top) if number is not None and number >= 0 else 0
