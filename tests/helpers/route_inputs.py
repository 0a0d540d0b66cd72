"""The inputs of the app's routes, found by walking it: every query parameter, every numeric field a request
body's schema describes and every leaf of a valid example body, each as a :class:`Target` that :func:`send` can
set to a raw value on top of its route's valid request (the schema's example, or one from ``QUERIES``/``BODIES``
where the schema makes none: OTLP, the what-if scenario, a plan that fits its GPU).

Used by ``tests/collector/test_numeric_inputs.py`` (no number makes a route answer 5xx).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fastapi.testclient import TestClient

from tests.helpers.payloads import make_request, sdk_span, to_otlp_dict
from tests.helpers.routes import PUBLIC, Route, _schema_value, build_url, header, path_params

# a valid request's values where the schema's defaults are not one (a plan needs a model that fits the GPU)
QUERIES: dict[tuple[str, str], dict[str, Any]] = {
    ("GET", "/api/v1/capacity/plan"): {"model": "llama-3-70b", "gpu_mem_gib": 80, "gpu_hour_usd": 3.5,
                                       "replica_tps": 2500, "qps": 50, "tokens": 400, "context": 4096,
                                       "api_usd_per_1m": 3.0},
    ("POST", "/api/v1/experiments"): {"replace": "true"},
}
PATHS = {"trace_id": "0f" * 16, "name": "numbers"}


def _otlp_traces() -> dict[str, Any]:
    return to_otlp_dict(make_request(sdk_span()))


# bodies the OpenAPI schema does not describe (OTLP, the what-if scenario) or whose schema alone makes no valid one
BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/v1/traces"): _otlp_traces,
    ("POST", "/api/public/otel/v1/traces"): _otlp_traces,
    ("POST", "/v1/logs"): lambda: {"resourceLogs": [{"resource": {"attributes": []}, "scopeLogs": [{"logRecords": [
        {"timeUnixNano": "1700000000000000000", "observedTimeUnixNano": "1700000000000000000",
         "severityNumber": 9, "body": {"stringValue": "hello"}, "flags": 1, "droppedAttributesCount": 0,
         "attributes": [{"key": "n", "value": {"intValue": "3"}}, {"key": "x", "value": {"doubleValue": 1.5}}]}]}]}]},
    ("POST", "/v1/metrics"): lambda: {"resourceMetrics": [{"resource": {"attributes": []}, "scopeMetrics": [
        {"metrics": [
            {"name": "gen_ai.client.token.usage", "unit": "{token}", "histogram": {"aggregationTemporality": 1,
             "dataPoints": [{"startTimeUnixNano": "1700000000000000000", "timeUnixNano": "1700000060000000000",
                             "count": "2", "sum": 30.5, "min": 10.0, "max": 20.5, "bucketCounts": ["1", "1"],
                             "explicitBounds": [16.0], "attributes": [
                                 {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}}]}]}},
            {"name": "requests", "sum": {"aggregationTemporality": 2, "isMonotonic": True, "dataPoints": [
                {"timeUnixNano": "1700000060000000000", "asInt": "5"}, {"timeUnixNano": "1700000060000000000",
                                                                        "asDouble": 2.5}]}},
            {"name": "queue", "gauge": {"dataPoints": [{"timeUnixNano": "1700000060000000000", "asDouble": 1.0}]}},
        ]}]}]},
    ("POST", "/api/v1/costs/whatif"): lambda: {
        "period": "month", "mix": [{"model": "gpt-4o", "share": 0.5, "to_model": "gpt-4o-mini"}],
        "cascade": [{"feature": "chat", "cheap_model": "gpt-4o-mini", "escalation_rate": 0.2}]},
    ("POST", "/api/v1/keys"): lambda: {"scopes": ["read"], "name": "numbers"},
    ("POST", "/api/v1/feedback"): lambda: {"trace_id": "0f" * 16, "name": "helpful", "score": 0.5},
    ("POST", "/api/v1/experiments"): lambda: {
        "name": "numbers", "variants": [{"name": "a", "weight": 1}, {"name": "b", "weight": 2}],
        "planned_users": 1000, "mde": 0.05, "alpha": 0.05},
}


@dataclass(frozen=True)
class Target:
    """One input of one route: a query parameter (``path`` is its name) or a body leaf (``path`` its keys)."""

    route: Route
    where: str  # "query" or "body"
    path: tuple[str | int, ...]
    described: bool  # in the OpenAPI schema (else from an example body)

    @property
    def name(self) -> str:
        return str(next(p for p in reversed(self.path) if isinstance(p, str)))

    def __repr__(self) -> str:
        return f"{self.route.method} {self.route.path} {self.where} {'.'.join(map(str, self.path))}"


# --- the walk ----------------------------------------------------------------------------------------------------
def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            schema = _resolve(options[0], spec) if options else {}
    return schema


def _example(schema: dict[str, Any], spec: dict[str, Any], name: str = "") -> Any:
    """A valid value for ``schema`` (required properties, arrays at their minimum length)."""
    schema = _resolve(schema, spec)
    if schema.get("type") == "object" or "properties" in schema:
        required = schema.get("required", [])
        return {key: _example(sub, spec, key) for key, sub in schema.get("properties", {}).items()
                if key in required}
    if schema.get("type") == "array":
        return [_example(schema.get("items", {}), spec, name) for _ in range(schema.get("minItems", 0))]
    if schema.get("type") == "string" and "minLength" in schema and schema.get("pattern", "").startswith("^[0-9a"):
        return "ab" * max(8, schema["minLength"])
    return _schema_value(schema, name)


def _numeric_fields(schema: dict[str, Any], spec: dict[str, Any], path: tuple[str | int, ...] = (),
                    depth: int = 0) -> Iterator[tuple[str | int, ...]]:
    """Paths of the numeric fields the schema describes (array items at index 0)."""
    schema = _resolve(schema, spec)
    if depth > 6:
        return
    if schema.get("type") in ("integer", "number"):
        yield path
    elif schema.get("type") == "array":
        yield from _numeric_fields(schema.get("items", {}), spec, (*path, 0), depth + 1)
    for key, sub in schema.get("properties", {}).items():
        yield from _numeric_fields(sub, spec, (*path, key), depth + 1)


def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _leaves(sub, (*path, key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from _leaves(sub, (*path, i))
    elif path:
        yield path


def _body_schema(route: Route, spec: dict[str, Any]) -> dict[str, Any] | None:
    content = route.operation.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema")
    if schema is None or schema.get("type") is None and not ({"$ref", "oneOf", "anyOf", "properties"} & set(schema)):
        return None  # no schema, or an opaque one (Any)
    return schema


def base_body(route: Route, spec: dict[str, Any]) -> Any:
    if route.key in BODIES:
        return BODIES[route.key]()
    schema = _body_schema(route, spec)
    return None if schema is None else _example(schema, spec)


def targets(routes: list[Route], spec: dict[str, Any]) -> list[Target]:
    out: list[Target] = []
    for route in routes:
        if route.key in PUBLIC or route.method == "DELETE":
            continue
        for param in route.operation.get("parameters", []):
            if param["in"] == "query":
                out.append(Target(route, "query", (param["name"],), True))
        schema = _body_schema(route, spec)
        body = base_body(route, spec)
        paths = dict.fromkeys(_leaves(body)) if body is not None else {}
        described = set(_numeric_fields(schema, spec)) if schema is not None else set()
        for path in [*paths, *(p for p in described if p not in paths)]:
            out.append(Target(route, "body", path, schema is not None))
    return out


# --- the requests ------------------------------------------------------------------------------------------------
_SLOT = "\x00number\x00"


def _set(document: Any, path: tuple[str | int, ...], value: Any) -> Any:
    """``document`` with ``value`` at ``path`` (missing objects and list items created)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = list(document) if isinstance(document, list) else []
        while len(items) <= head:
            items.append({})
        items[head] = _set(items[head], rest, value)
        return items
    mapping = dict(document) if isinstance(document, dict) else {}
    mapping[head] = _set(mapping.get(head), rest, value)
    return mapping


def send(client: TestClient, key: str, spec: dict[str, Any], target: Target, number: str | None) -> Any:
    """The target's route with its valid request, and ``number`` (raw) at ``target`` (None: nothing changed)."""
    route = target.route
    query = dict(QUERIES.get(route.key, {}))
    body = base_body(route, spec)
    if target.where == "query" and number is not None:
        query[target.name] = number
    raw = None if body is None else json.dumps(body)
    if target.where == "body" and number is not None:
        raw = json.dumps(_set(body, target.path, _SLOT)).replace(json.dumps(_SLOT), number)
    url, params = build_url(route, {name: PATHS.get(name, "x") for name in path_params(route)}, query)
    headers = {**header(key), **({"Content-Type": "application/json"} if raw is not None else {})}
    return client.request(route.method, url, params=params, content=raw, headers=headers)
