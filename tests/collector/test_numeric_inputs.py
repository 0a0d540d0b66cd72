"""No number makes the API answer 5xx: a property over every query parameter and JSON body field of every route.

The inputs are found by walking the app (``tests/helpers/route_inputs.py`` over ``app_routes``: its routes and
OpenAPI operations), so a new route or field is covered without touching this file: every query parameter (numbers in a string parameter are how hand
parsing breaks), every numeric field of a request body's schema, and every leaf of a valid example body (the
schema's, or for a body without one, OTLP and the what-if scenario, one from ``BODIES``). One at a time, each gets
an extreme number (``tests/helpers/numbers.py``: 1e300, -1e300, NaN and Infinity where JSON or the query string
allow them, beyond int64, negative, zero, floats for ints, a million digits) on an otherwise valid request, made
with a key that holds every scope so that auth hides no handler. The answer must be below 500, and a refusal
carries a message. (Most name the field; some cannot: a body whose number JSON itself cannot read, or a number
that makes another field's check fail, as a huge ``params`` makes the model not fit.)
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inferwatch_collector.auth import KeyStore
from inferwatch_collector.store import Store

from tests.helpers.numbers import SHARPEST_JSON, SHARPEST_QUERY, json_numbers, query_numbers
from tests.helpers.payloads import make_request, sdk_span, to_otlp_dict
from tests.helpers.route_inputs import Target, send, targets
from tests.helpers.routes import app_routes, header, path_params

ALL_SCOPES = ["admin", "read", "prompts:read", "ingest"]
EXAMPLES = 800  # ~15 s on 2 loaded cores (and the sweep of every input with the sharpest numbers: ~20 s)


@pytest.fixture
def every_scope(store: Store) -> str:
    return KeyStore(store, cache_seconds=0).create_key("p1", ALL_SCOPES)


@pytest.fixture
def walk(client: TestClient) -> tuple[dict[str, Any], list[Target]]:
    spec = client.app.openapi()
    found = targets(app_routes(client.app), spec)
    assert len({t.route.key for t in found}) >= 25 and any(t.where == "body" for t in found)
    return spec, found


def _refusal(response: Any, target: Target, number: str | None) -> str | None:
    """What is wrong with an answer: a 5xx, or a refusal without a message (OTLP's is in its status object)."""
    if response.status_code >= 500:
        return f"{target!r} = {(number or '')[:40]}: {response.status_code} {response.text[:200]}"
    if response.status_code >= 400:
        answer = response.json()
        if not (answer.get("error") or answer.get("message")):
            return f"{target!r} = {(number or '')[:40]}: {response.status_code} without a message"
    return None


def test_every_input_takes_the_sharpest_numbers_without_a_500(
        client: TestClient, every_scope: str, walk: tuple[dict[str, Any], list[Target]]) -> None:
    """Every input found by the walk, with each of the sharpest numbers, on top of its route's valid request;
    and that request itself is answered below 400 (404 where a path names a resource that does not exist), so the
    numbers reach the handlers instead of being refused for something else."""
    spec, found = walk
    by_route = {t.route.key: t for t in found}
    assert ("GET", "/api/v1/capacity/plan") in by_route and ("POST", "/api/v1/feedback") in by_route
    assert ("POST", "/v1/traces") in by_route and ("POST", "/api/v1/costs/whatif") in by_route
    refused = []
    for key, target in by_route.items():
        response = send(client, every_scope, spec, target, None)
        if response.status_code >= 400 and not (response.status_code == 404 and path_params(target.route)):
            refused.append((key, response.status_code, response.text[:200]))
    assert refused == []
    client = TestClient(client.app, raise_server_exceptions=False)  # (same app: every 500 listed, not the first)
    problems = []
    for target in found:
        for number in SHARPEST_QUERY if target.where == "query" else SHARPEST_JSON:
            problem = _refusal(send(client, every_scope, spec, target, number), target, number)
            if problem:
                problems.append(problem)
    assert problems == []


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_no_number_in_any_query_parameter_or_body_field_is_a_500(
        client: TestClient, every_scope: str, walk: tuple[dict[str, Any], list[Target]], data: st.DataObject
) -> None:
    """Any number (all the extremes, any float or integer) in a random input. It explores past the sweep's six
    numbers; a regression of one known input is the sweep's to catch (800 draws over ~300 inputs miss some)."""
    spec, found = walk
    routes = sorted({t.route.key for t in found})  # a route first: one with many inputs gets no more turns
    route = data.draw(st.sampled_from(routes), label="route")
    target = data.draw(st.sampled_from([t for t in found if t.route.key == route]), label="target")
    number = data.draw(query_numbers() if target.where == "query" else json_numbers(), label="number")
    assert _refusal(send(client, every_scope, spec, target, number), target, number) is None


# --- numbers that pass the route but not the columns ------------------------------------------------------------
def _stored(store: Store, span_id: str) -> int:
    return sum(store.query(f"SELECT count() FROM {table} WHERE span_id = {{s:String}}", {"s": span_id})
               .result_rows[0][0] for table in ("llm_calls", "spans"))


@pytest.mark.parametrize("change", ["end at 2^64 - 1 ns", "first token at 2^63 - 1 ns", "first token 60 days in"])
def test_a_span_with_extreme_times_is_refused_or_stored_never_acknowledged_and_lost(
        client: TestClient, store: Store, every_scope: str, change: str) -> None:
    """Times the OTLP types allow but no column holds (latency and time to first token are UInt32 ms, 49.7 days):
    such a span is refused by name, or stored with the time left out, and never acknowledged and then dropped
    by the failing insert (which also kept the project's other held calls from being stored)."""
    span = sdk_span()
    if change == "end at 2^64 - 1 ns":
        span.end_time_unix_nano = 2**64 - 1
    else:
        offset = 2**63 - 1 - span.start_time_unix_nano if "2^63" in change else 60 * 86_400 * 10**9
        attribute = next(a for a in span.attributes if a.key == "inferwatch.first_token.unix_nano")
        attribute.value.int_value = span.start_time_unix_nano + offset
    response = client.post("/v1/traces", content=to_json_bytes(span),
                           headers={**header(every_scope), "Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    rejected = int(response.json().get("partialSuccess", {}).get("rejectedSpans", 0))
    assert _stored(store, span.span_id.hex()) == 1 - rejected
    if rejected:
        assert "end_time" in response.json()["partialSuccess"]["errorMessage"]
    else:
        ttft, latency = store.query("SELECT ttft_ms, latency_ms FROM llm_calls WHERE span_id = {s:String}",
                                    {"s": span.span_id.hex()}).result_rows[0]
        assert ttft == 0 and latency == 2000


def to_json_bytes(span: Any) -> bytes:
    return json.dumps(to_otlp_dict(make_request(span))).encode()
