"""Security review (issue 8 item 5), checked against the app as it is wired now.

The route list is built at test time from the routes and OpenAPI spec of the server's ``create_app()`` (every
package's routers), so a route added later is covered without editing this file; a route whose required scope
cannot be read from its dependencies fails the walk until it is added to :data:`SCOPE_OVERRIDES` (or
:data:`PUBLIC`, for unauthenticated endpoints).

* every route: no key → 401; a key of every single scope → 403 unless the scope is one the route accepts;
* a key of another project (p2, all scopes) aimed at p1's objects → never p1's data, never a change to it;
* ingest rate limit per key: 429 + Retry-After after the burst, other keys unaffected;
* CORS off by default; collector, its /metrics listener and dashboard bind to localhost by default; /metrics,
  /docs and /openapi.json are not on the public port (docs only with ``api_docs`` on);
* SQL-injection strings in every string parameter of every GET route → no 500, no other project's rows,
  every table intact.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from inferwatch_collector.auth import KeyStore
from inferwatch_collector.routes.feedback import COLUMNS as FEEDBACK_COLUMNS
from inferwatch_collector.rows import LLM_CALL_COLUMNS, PROMPT_LOG_COLUMNS, PromptLogRow
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app

from tests.helpers.factories import llm_call
from tests.helpers.metrics import scrape
from tests.helpers.routes import PUBLIC, Route, app_routes, build_url, header, path_params

# Routes that check their key by hand (OTLP answers errors in its own encoding) or accept several scopes.
SCOPE_OVERRIDES: dict[tuple[str, str], set[str]] = {
    ("POST", "/v1/traces"): {"ingest"},
    ("POST", "/api/public/otel/v1/traces"): {"ingest"},
    ("POST", "/v1/metrics"): {"ingest"},
    ("POST", "/v1/logs"): {"ingest"},
    ("GET", "/api/v1/budgets/status"): {"read", "ingest"},
}
# dependency function name -> scope it requires (deps._scoped names them require_<scope>)
SCOPE_DEPENDENCIES = {"require_read": "read", "require_admin": "admin", "require_prompts_read": "prompts:read",
                      "require_ingest": "ingest", "ingest_principal": "ingest"}
SCOPES = ("ingest", "read", "prompts:read", "admin")

P1_TRACE = "a1" * 16
P1_SPAN = "b1" * 8
P2_TRACE = "e2" * 16
P1_MODEL = "p1-private-model"
P2_MODEL = "p2-private-model"
P1_COMMENT = "p1-private-comment"
P2_COMMENT = "p2-private-comment"
P1_PROMPT = "p1-private-prompt"
P2_PROMPT = "p2-private-prompt"
P1_BUDGET = "b_p1private"


def required_scopes(route: Route) -> set[str] | None:
    """Scopes that let a key call ``route`` (admin always does); None when they cannot be told."""
    if route.key in SCOPE_OVERRIDES:
        found = set(SCOPE_OVERRIDES[route.key])
    else:
        found = set()
        stack = list(route.dependant.dependencies) if route.dependant is not None else []
        while stack:
            dep = stack.pop()
            name = getattr(dep.call, "__name__", "")
            if name in SCOPE_DEPENDENCIES:
                found.add(SCOPE_DEPENDENCIES[name])
            stack.extend(dep.dependencies)
        if not found:
            return None
    return found | {"admin"}


def _dummy_path_value(name: str) -> str:
    """An id that exists nowhere (the caller's own scope check must not touch real objects)."""
    return {"trace_id": "0f" * 16, "key_id": "0" * 12, "budget_id": "b_nothere",
            "silence_id": "s_" + "0" * 16}.get(name, "nothere")


def victim_path_value(name: str, victim: dict[str, str]) -> str:
    return {"trace_id": P1_TRACE, "key_id": victim["key_id"], "budget_id": P1_BUDGET}.get(name, "x")


def string_query_params(route: Route) -> list[str]:
    out = []
    for param in route.operation.get("parameters", []):
        if param["in"] != "query":
            continue
        schema = param.get("schema", {})
        options = schema.get("anyOf", [schema])
        if any(o.get("type") == "string" and "enum" not in o and o.get("format") is None for o in options):
            out.append(param["name"])
    return out


# Bodies good enough to get past validation, per route; anything else gets {} (a 422 is not a 401/403).
BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/api/v1/feedback"): {"trace_id": P1_TRACE, "thumbs_up": False, "comment": "from p2"},
    ("POST", "/api/v1/forget"): {"user_hash": "ab" * 32},
    ("POST", "/api/v1/keys"): {"scopes": ["read"], "name": "sec-test"},
    ("POST", "/api/v1/budgets"): {"scope_type": "project", "period": "day", "kind": "soft", "limit_usd": 5},
}


def call(client: TestClient, route: Route, url: str, params: dict[str, Any], headers: dict[str, str]):
    if route.key in (("POST", "/v1/traces"), ("POST", "/api/public/otel/v1/traces"), ("POST", "/v1/metrics"),
                     ("POST", "/v1/logs")):
        return client.post(url, content=ExportTraceServiceRequest().SerializeToString(),
                           headers={**headers, "Content-Type": "application/x-protobuf"})
    if route.method in ("POST", "PUT", "PATCH"):
        return client.request(route.method, url, params=params, json=BODIES.get(route.key, {}), headers=headers)
    return client.request(route.method, url, params=params, headers=headers)


def seed(store: Store) -> None:
    """Recognisable rows in p1 and p2: every marker string must stay inside its own project."""
    now_us = int(time.time() * 1_000_000) - 600_000_000
    calls = [llm_call("p1", trace_id=P1_TRACE, span_id=P1_SPAN, model=P1_MODEL, feature="p1-feature",
                      user_hash="a1" * 32, start_time=now_us),
             llm_call("p2", trace_id=P2_TRACE, span_id="e2" * 8, model=P2_MODEL, feature="p2-feature",
                      user_hash="e2" * 32, start_time=now_us)]
    store.insert_columns("llm_calls", [list(c) for c in zip(*calls)], LLM_CALL_COLUMNS)
    prompts = [PromptLogRow("p1", now_us, P1_TRACE, P1_SPAN, P1_MODEL, "t", P1_PROMPT, "c", "v1"),
               PromptLogRow("p2", now_us, P2_TRACE, "e2" * 8, P2_MODEL, "t", P2_PROMPT, "c", "v1")]
    store.insert_columns("prompt_logs", [list(c) for c in zip(*prompts)], PROMPT_LOG_COLUMNS)
    now_ms = int(time.time() * 1000)
    feedback = [["p1", "f_p1", now_ms, now_ms, P1_TRACE, P1_SPAN, "a1" * 32, "thumbs", "user_feedback", 1.0,
                 "good", P1_COMMENT, "api", P1_MODEL, "", "", "t", "p1-feature", 0],
                ["p2", "f_p2", now_ms, now_ms, P2_TRACE, "", "e2" * 32, "thumbs", "user_feedback", -1.0,
                 "bad", P2_COMMENT, "api", P2_MODEL, "", "", "t", "p2-feature", 0]]
    store.insert_columns("feedback", [list(c) for c in zip(*feedback)], FEEDBACK_COLUMNS)


def snapshot(store: Store) -> dict[str, Any]:
    tables = sorted(r[0] for r in store.query(
        "SELECT name FROM system.tables WHERE database = {d:String}", {"d": store.database}).result_rows)
    counts = {}
    for table in ("llm_calls", "prompt_logs", "spans"):
        counts[table] = store.query(f"SELECT project_id, count() FROM {table} GROUP BY project_id "
                                    "ORDER BY project_id").result_rows
    counts["feedback"] = store.query("SELECT project_id, feedback_id, comment, label FROM feedback FINAL "
                                     "ORDER BY project_id, feedback_id").result_rows
    return {"tables": tables, **counts}


@dataclass
class World:
    client: TestClient
    app: FastAPI
    store: Store
    keys: dict[str, str]  # p1 single-scope keys by scope, plus "p2" (all scopes)
    p1_key_id: str


def make_world(settings: Settings, store: Store) -> Iterator[World]:
    ks = KeyStore(store, cache_seconds=0)
    keys = {scope: ks.create_key("p1", [scope], name=f"only-{scope}") for scope in SCOPES}
    keys["p2"] = ks.create_key("p2", list(SCOPES), name="p2-all")
    p1_key_id = keys["admin"].split("_")[1]
    seed(store)
    from inferwatch_collector.cost import budgets

    budgets.create_budget(store, "p1", budgets.validate_budget(
        budget_id=P1_BUDGET, scope_type="project", scope_value="", period="day", kind="soft", limit_usd=10.0,
        thresholds=None))
    app = create_app(settings, store=store)
    with TestClient(app) as client:
        yield World(client, app, store, keys, p1_key_id)


@pytest.fixture
def world(app_settings: Settings, store: Store) -> Iterator[World]:
    yield from make_world(app_settings, store)


# --- tests -------------------------------------------------------------------------------------------------------
def test_every_route_needs_a_key_of_the_right_scope(world: World) -> None:
    routes = app_routes(world.app)
    assert len(routes) > 20 and any(r.path == "/api/v1/forget" for r in routes)
    walked = {r.key for r in routes}
    assert {("POST", "/v1/logs"), ("POST", "/api/public/otel/v1/traces"), ("POST", "/v1/metrics")} <= walked
    problems = []
    for route in routes:
        if route.key in PUBLIC:
            continue
        allowed = required_scopes(route)
        if allowed is None:
            problems.append(f"{route.method} {route.path}: required scope unknown (not public, no scope "
                            "dependency): add it to SCOPE_OVERRIDES or PUBLIC")
            continue
        url, params = build_url(route, {n: _dummy_path_value(n) for n in path_params(route)})
        for label, headers in (("no key", {}), ("malformed key", {"Authorization": "Bearer nope"}),
                               ("unknown key", header("iwk_0123456789ab_" + "x" * 43)),
                               ("wrong scheme", {"Authorization": f"Basic {world.keys['admin']}"})):
            response = call(world.client, route, url, params, headers)
            if response.status_code != 401 or not response.content:
                problems.append(f"{route.method} {route.path} with {label}: {response.status_code}, want 401")
        for scope in SCOPES:
            response = call(world.client, route, url, params, header(world.keys[scope]))
            if response.status_code >= 500:
                problems.append(f"{route.method} {route.path} with a {scope} key: {response.status_code} "
                                f"{response.text[:200]}")
            elif scope in allowed and response.status_code in (401, 403):
                problems.append(f"{route.method} {route.path} refuses a {scope} key ({response.status_code})")
            elif scope not in allowed and response.status_code != 403:
                problems.append(f"{route.method} {route.path} with a {scope} key: {response.status_code}, "
                                f"want 403 (needs {sorted(allowed)})")
    assert not problems, "\n".join(problems)


P1_MARKERS = (P1_TRACE, P1_MODEL, P1_COMMENT, P1_PROMPT, P1_BUDGET, "p1-feature")


def test_a_key_of_another_project_never_sees_or_changes_its_data(world: World) -> None:
    before = snapshot(world.store)
    p2 = header(world.keys["p2"])
    problems = []
    for route in app_routes(world.app):
        if route.key in PUBLIC:
            continue
        victim = {n: victim_path_value(n, {"key_id": world.p1_key_id}) for n in path_params(route)}
        query = {name: P1_TRACE for name in string_query_params(route) if name == "trace_id"}
        url, params = build_url(route, victim, query)
        response = call(world.client, route, url, params, p2)
        asked = f"{url} {params} {BODIES.get(route.key, '')}"  # ids the caller named may be echoed back
        leaked = [m for m in P1_MARKERS + (world.p1_key_id,) if m in response.text and m not in asked]
        if response.status_code >= 500:
            problems.append(f"{route.method} {route.path}: {response.status_code} {response.text[:200]}")
        if leaked:
            problems.append(f"{route.method} {route.path} shows p1's {leaked} to a p2 key")
    assert not problems, "\n".join(problems)
    # nothing of p1 changed: its keys work, its budget and rows are all there
    for scope in SCOPES:
        assert world.client.get("/api/v1/keys" if scope == "admin" else "/healthz",
                                headers=header(world.keys[scope])).status_code == 200
    assert world.client.get("/api/v1/calls/summary", headers=header(world.keys["read"])).status_code == 200
    budgets = world.client.get("/api/v1/budgets", headers=header(world.keys["read"])).json()
    assert P1_BUDGET in str(budgets)
    after = snapshot(world.store)
    p1_rows = {k: [r for r in v if r[0] == "p1"] for k, v in after.items() if k != "tables"}
    assert p1_rows == {k: [r for r in v if r[0] == "p1"] for k, v in before.items() if k != "tables"}
    # p2's feedback about p1's trace was stored in p2 without a single field copied from p1's call
    rows = world.store.query("SELECT model, feature, user_hash FROM feedback FINAL WHERE project_id = 'p2' "
                             "AND trace_id = {t:String}", {"t": P1_TRACE}).result_rows
    assert rows and all(r == ("", "", "") for r in rows)


def test_ingest_rate_limit_is_per_key(app_settings: Settings, store: Store) -> None:
    settings = app_settings.model_copy(update={"ingest_rate_limit_per_key": 0.2, "ingest_rate_burst": 3})
    ks = KeyStore(store, cache_seconds=0)
    flooding, other = ks.create_key("p1", ["ingest"]), ks.create_key("p2", ["ingest"])
    body = ExportTraceServiceRequest().SerializeToString()
    proto = {"Content-Type": "application/x-protobuf"}
    with TestClient(create_app(settings, store=store)) as client:
        for _ in range(3):
            ok = client.post("/v1/traces", content=body, headers={**header(flooding), **proto})
            assert ok.status_code == 200
        limited = client.post("/v1/traces", content=body, headers={**header(flooding), **proto})
        assert limited.status_code == 429
        assert 1 <= int(limited.headers["Retry-After"]) <= 5
        assert client.post("/v1/metrics", content=b"", headers={**header(flooding), **proto}).status_code == 429
        json_limited = client.post("/v1/traces", content=b"{}",
                                   headers={**header(flooding), "Content-Type": "application/json"})
        assert json_limited.status_code == 429 and "rate limit" in json_limited.json()["message"]
        assert client.post("/v1/traces", content=body, headers={**header(other), **proto}).status_code == 200
        assert client.post("/v1/traces", content=body, headers=proto).status_code == 401  # auth still first
        assert client.app.state.ingest_stats.rejected_requests["rate_limited"] == 3
        assert 'inferwatch_requests_rejected_total{reason="rate_limited"} 3' in scrape(client)


def test_rate_limit_is_off_by_default(client: TestClient, keys) -> None:
    body = ExportTraceServiceRequest().SerializeToString()
    for _ in range(30):
        response = client.post("/v1/traces", content=body,
                               headers={**header(keys.ingest), "Content-Type": "application/x-protobuf"})
        assert response.status_code == 200


def test_token_bucket_refills_at_the_rate() -> None:
    from inferwatch_collector.ratelimit import RateLimiter, retry_after_header

    now = [0.0]
    limiter = RateLimiter(2.0, 4, clock=lambda: now[0])
    assert [limiter.acquire("k") for _ in range(4)] == [0.0] * 4
    assert limiter.acquire("k") == pytest.approx(0.5)
    assert limiter.acquire("other") == 0.0
    now[0] += 0.5
    assert limiter.acquire("k") == 0.0 and limiter.acquire("k") > 0
    now[0] += 100
    assert [limiter.acquire("k") for _ in range(4)] == [0.0] * 4 and limiter.acquire("k") > 0  # capped at burst
    assert RateLimiter(0).acquire("k") == 0.0 and not RateLimiter(0).enabled
    assert retry_after_header(0.01) == "1" and retry_after_header(2.2) == "3"
    small = RateLimiter(1.0, 1, clock=lambda: now[0], max_keys=10)
    for n in range(50):
        small.acquire(f"k{n}")
    assert len(small._buckets) <= 11


def test_cors_is_off_by_default(world: World) -> None:
    origin = {"Origin": "https://evil.example"}
    preflight = world.client.options("/api/v1/calls/summary", headers={
        **origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"})
    assert "access-control-allow-origin" not in preflight.headers
    for url, key in (("/api/v1/calls/summary", world.keys["read"]), ("/healthz", None)):
        response = world.client.get(url, headers={**origin, **(header(key) if key else {})})
        assert response.status_code == 200
        assert not any(h.startswith("access-control-") for h in response.headers)
    posted = world.client.post("/v1/traces", content=ExportTraceServiceRequest().SerializeToString(),
                               headers={**origin, **header(world.keys["ingest"]),
                                        "Content-Type": "application/x-protobuf"})
    assert posted.status_code == 200 and "access-control-allow-origin" not in posted.headers


def test_metrics_and_api_docs_are_not_on_the_public_port(world: World, app_settings: Settings,
                                                         store: Store) -> None:
    # /metrics is served by the internal listener only (test_metrics_listener.py); docs only with api_docs on
    for path in ("/metrics", "/docs", "/redoc", "/openapi.json"):
        for headers in ({}, header(world.keys["admin"])):
            assert world.client.get(path, headers=headers).status_code == 404, path
    assert not {("GET", "/metrics"), ("GET", "/docs"), ("GET", "/openapi.json")} & {r.key for r in
                                                                                     app_routes(world.app)}
    docs_on = app_settings.model_copy(update={"api_docs": True, "spool_max_bytes": 0})  # world holds the spool
    with TestClient(create_app(docs_on, store=store)) as client:
        assert client.get("/openapi.json").json()["paths"]["/v1/traces"]
        assert client.get("/docs").status_code == 200 and client.get("/metrics").status_code == 404


def test_servers_bind_to_localhost_by_default(monkeypatch) -> None:
    from inferwatch_dashboard.settings import DashboardSettings

    for name in ("INFERWATCH_HOST", "INFERWATCH_DASHBOARD_HOST", "INFERWATCH_METRICS_HOST", "INFERWATCH_API_DOCS"):
        monkeypatch.delenv(name, raising=False)
    assert Settings(data_dir="/nonexistent").host == "127.0.0.1"
    assert Settings(data_dir="/nonexistent").metrics_host == "127.0.0.1"
    assert not Settings(data_dir="/nonexistent").api_docs
    assert DashboardSettings().host == "127.0.0.1"


INJECTIONS = ("' OR 1=1 --", "\"; DROP TABLE llm_calls; --", "\\'", "{p:String}", "p2' OR project_id='p2",
              "\u2019 OR \u20181\u2019=\u20181", "%' UNION SELECT prompt FROM prompt_logs --", "\x00'",
              "`llm_calls`")
P2_MARKERS = (P2_TRACE, P2_MODEL, P2_COMMENT, P2_PROMPT, "p2-feature")


def test_sql_injection_in_every_string_filter(world: World) -> None:
    before = snapshot(world.store)
    p1_admin = header(world.keys["admin"])
    problems, tried = [], 0
    for route in app_routes(world.app):
        if route.method != "GET" or route.key in PUBLIC:
            continue
        targets = [("query", name) for name in string_query_params(route)]
        targets += [("path", name) for name in path_params(route)]
        for where, name in targets:
            for text in INJECTIONS:
                path_values = {n: _dummy_path_value(n) for n in path_params(route)}
                if where == "path":
                    path_values[name] = text
                url, params = build_url(route, path_values, {name: text} if where == "query" else None)
                response = call(world.client, route, url, params, p1_admin)
                tried += 1
                if response.status_code >= 500:
                    problems.append(f"{route.path} {name}={text!r}: {response.status_code} {response.text[:200]}")
                elif any(m in response.text for m in P2_MARKERS):
                    problems.append(f"{route.path} {name}={text!r} shows p2's rows")
                elif 400 <= response.status_code < 500 and not response.content:
                    problems.append(f"{route.path} {name}={text!r}: {response.status_code} without a message")
    assert tried > 50
    assert not problems, "\n".join(problems)
    assert snapshot(world.store) == before
