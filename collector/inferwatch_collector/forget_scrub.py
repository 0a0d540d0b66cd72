"""What a forgotten user's rows keep: the SQL expressions :mod:`.forget` rewrites ``spans`` and ``llm_calls`` with.

A row of the user keeps what is not free text, so traces still render and every number stays right:

* **attributes**: a value survives only when it is a number or a boolean (token counts, temperatures, status
  codes, flags), or its key is structural (:data:`KEPT_KEYS`, :data:`KEPT_PREFIXES`: the instrumentation scope,
  the SDK, model/provider/operation names, span kinds, HTTP method and status). Every other value (ids, URLs, SQL
  statements, queries, e-mail addresses, anything an application or a library may fill with what the user
  typed) is removed, and so is any value equal to the user's hash, whatever its key.
* **span names** of other spans become their ``operation`` (``execute_tool``, ``retrieval``, ...) or, without
  one, their ``kind`` (``server``, ``internal``, ...); an LLM call's ``span_name`` becomes
  ``"{operation} {model}"`` (the OTel GenAI convention's name, from the row's own columns). A name is free text:
  ``GET /users/alice@example.com/profile`` is a route with the user in it.
* **status messages** become empty (error texts quote input).

Each expression is parameterised by ``{u:String}`` (the user's hash), ``{num:String}`` (:data:`NUMBER_RE`),
``{keep:Array(String)}`` and ``{keep_prefixes:Array(String)}``: :func:`params` gives the last three.
"""

from __future__ import annotations

from typing import Any, Final

#: Attribute keys whose values are structure, not user text: kept on a forgotten user's rows.
KEPT_KEYS: Final[tuple[str, ...]] = (
    "otel.scope.name", "otel.scope.version", "service.version", "service.namespace",
    "deployment.environment", "deployment.environment.name",
    "gen_ai.system", "gen_ai.provider.name", "gen_ai.operation.name", "gen_ai.request.model",
    "gen_ai.response.model", "gen_ai.response.finish_reasons", "gen_ai.output.type",
    "llm.request.type", "llm.system", "llm.provider", "llm.model_name", "openinference.span.kind",
    "traceloop.span.kind", "langfuse.observation.type", "ai.model.provider", "ai.model.id", "ai.operationId",
    "http.request.method", "http.method", "http.response.status_code", "http.status_code",
    "rpc.system", "db.system", "db.system.name", "error.type", "exception.type",
)
KEPT_PREFIXES: Final[tuple[str, ...]] = ("telemetry.sdk.", "telemetry.distro.")
#: A number (int, decimal, exponent) or a boolean, as attribute values are stringified.
NUMBER_RE: Final = r"^(-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|true|false|True|False)$"

_KEEP = ("v != {u:String} AND (match(v, {num:String}) OR has({keep:Array(String)}, k) "
         "OR arrayExists(x -> startsWith(k, x), {keep_prefixes:Array(String)}))")

#: The attributes map with only what a forgotten user's row keeps.
KEPT_ATTRIBUTES: Final = f"mapFilter((k, v) -> {_KEEP}, attributes)"
#: True when the attributes map still holds something a forgotten user's row does not keep.
ATTRIBUTES_TO_DROP: Final = f"notEmpty(mapKeys(mapFilter((k, v) -> NOT ({_KEEP}), attributes)))"
#: The name a non-LLM span of the user gets.
SPAN_NAME: Final = "if(operation != '', toString(operation), toString(kind))"
#: The name an LLM call of the user gets: "{operation} {model}".
CALL_NAME: Final = ("trimBoth(concat(toString(operation), ' ', "
                    "toString(if(request_model != '', request_model, model))))")
#: A ``spans`` row of the user that still holds something to scrub.
SPAN_NOT_SCRUBBED: Final = f"(name != {SPAN_NAME} OR status_message != '' OR {ATTRIBUTES_TO_DROP})"
#: An ``llm_calls`` row of the user that still holds something to scrub.
CALL_NOT_SCRUBBED: Final = f"(user_hash = {{u:String}} OR span_name != {CALL_NAME} OR {ATTRIBUTES_TO_DROP})"


def params() -> dict[str, Any]:
    """The query parameters of the expressions, except ``u``."""
    return {"num": NUMBER_RE, "keep": list(KEPT_KEYS), "keep_prefixes": list(KEPT_PREFIXES)}
