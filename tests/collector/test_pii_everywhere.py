"""Issue 28's privacy guarantee, end to end: PII and secrets planted into every place an instrumentation can put
text, by every supported convention, never reach a table or an API response readable without ``prompts:read``;
and after ``forget``, nothing of the user is left anywhere.

Spans come from real libraries' recordings (tests/fixtures/conformance: OTel GenAI contrib and a provider's native
span, OpenInference, OpenLLMetry/Traceloop, OpenLIT, Langfuse) and from built ones for the Vercel AI SDK and our
SDK; :mod:`tests.helpers.pii_plant` copies them with :data:`~tests.helpers.pii_plant.PLANTED` values in span and
resource attributes (user-identifying keys and free text), span names, status messages, events and log records,
and the test adds feedback (name, label, comment) carrying them. Then:

(a) every GET route of the app (its own route list: a new route cannot be missed) is called with a ``read`` key,
    for every planted trace where it takes a trace id: no planted value in any answer;
(b) every table of the database (``system.tables``, every text column, rows as stored): no planted value either,
    ``prompt_logs`` included (its content is redacted at ingest);
(c) ``POST /api/v1/forget`` for the user, then (b) again with the user's raw id and hash added: zero.

``test_forget_leaves_nothing_of_the_user_anywhere`` checks (c) alone, with every span also carrying the user's
hash in an attribute of its own (what ingest writes for ``enduser.id`` and friends once user-identifying keys
are hashed), so it holds whether or not attribute values and names are redacted at ingest: forget finds the
user's rows by the hash and scrubs every planted value in them.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from tests.helpers.conformance import trace_ids
from tests.helpers.db_scan import places_holding
from tests.helpers.keys import Keys
from tests.helpers.conformance import post_all
from tests.helpers.pii_plant import NEEDLES, PLANTED, RAW_USER_ID, blob, plant, sources
from tests.helpers.routes import app_routes, build_url, path_params

PLANTED_VALUES = [*NEEDLES, RAW_USER_ID]


def _ingest_everything(client: TestClient, keys: Keys, user_hash: str, *, hash_in_attributes: bool = False
                       ) -> set[str]:
    """Every convention's planted recording (the user's raw id in the user-identifying keys; with
    ``hash_in_attributes`` also the hash itself in an attribute of every span), and feedback carrying the planted
    values on each of their traces; returns the trace ids."""
    traces: set[str] = set()
    problems = []
    for name, recording in sources(user_hash).items():
        planted = plant(recording, RAW_USER_ID, user_hash=user_hash if hash_in_attributes else None)
        problems += [f"{name}: {p}" for p in post_all(client, planted, keys.ingest)]
        traces |= trace_ids(planted)
    assert not problems, problems
    items = [{"trace_id": trace, "thumbs_up": False, "comment": f"call me: {blob()}",
              "label": f"bad {PLANTED['email']}", "name": f"helpful to {PLANTED['phone']}", "user_hash": user_hash}
             for trace in sorted(traces)]
    response = client.post("/api/v1/feedback", json=items, headers=Keys.header(keys.ingest))
    assert response.status_code == 202 and not response.json()["unmatched"], response.text
    return traces


def _leaks_in(text: str, values: list[str]) -> list[str]:
    return [v for v in values if v in text or json.dumps(v)[1:-1] in text]


def _read_routes_showing(client: TestClient, read_key: str, traces: set[str], values: list[str]) -> list[str]:
    """``"GET path: value"`` for every planted value an answer to a ``read`` key shows."""
    found = []
    for route in app_routes(client.app):
        if route.method != "GET":
            continue
        names = path_params(route)
        per_trace = [{n: trace if n == "trace_id" else "x" for n in names} for trace in sorted(traces)] \
            if "trace_id" in names else [{n: "x" for n in names}]
        for path_values in per_trace:
            url, params = build_url(route, path_values)
            response = client.get(url, params=params, headers=Keys.header(read_key))
            assert response.status_code < 500, f"GET {url}: {response.status_code} {response.text[:200]}"
            found += [f"GET {url}: {v!r}" for v in _leaks_in(response.text, values)]
    return sorted(set(found))


def test_planted_pii_reaches_no_table_and_no_read_route_and_forget_removes_the_user(
        client: TestClient, store: Any, keys: Keys) -> None:
    hasher = client.app.state.user_hasher
    user_hash = hasher.hash(RAW_USER_ID)  # what ingest and the SDK store for the user (one shared key)
    traces = _ingest_everything(client, keys, user_hash)
    assert len(traces) >= 8
    assert store.query("SELECT count() FROM spans").result_rows[0][0] > 0

    # REDACT-MERGE: (a) and (b) hold once helper "redact"'s collector redaction of every attribute value and
    # span name (and the hashing of user-identifying keys) is merged; until then they fail on those values.
    shown = _read_routes_showing(client, keys.read, traces, PLANTED_VALUES)
    assert not shown, "a read key sees planted values:\n" + "\n".join(shown)
    stored = places_holding(store, PLANTED_VALUES)
    assert not stored, "planted values are stored:\n" + "\n".join(stored)

    response = client.post("/api/v1/forget", json={"user_id": RAW_USER_ID}, headers=Keys.header(keys.admin))
    assert response.status_code == 200, response.text
    assert response.json()["user_hash"] == user_hash and response.json()["traces"] == len(traces)
    left = places_holding(store, [*PLANTED_VALUES, user_hash])
    assert not left, "after forget:\n" + "\n".join(left)


def test_forget_leaves_nothing_of_the_user_anywhere(client: TestClient, store: Any, keys: Keys) -> None:
    user_hash = client.app.state.user_hasher.hash(RAW_USER_ID)
    traces = _ingest_everything(client, keys, user_hash, hash_in_attributes=True)
    before = places_holding(store, [user_hash])
    for place in ("spans.attributes", "llm_calls.attributes", "llm_calls.user_hash", "feedback.user_hash",
                  "cost_1d.user_hash"):
        assert f"{place} holds {user_hash!r}" in before, before
    response = client.post("/api/v1/forget", json={"user_hash": user_hash}, headers=Keys.header(keys.admin))
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["traces"] == len(traces) and result["calls_found"] >= len(traces) - 1
    assert all(result["changed"][t] > 0 for t in ("spans", "llm_calls", "prompt_logs", "feedback", "cost_1d"))

    left = places_holding(store, [*PLANTED_VALUES, user_hash])
    assert not left, "after forget:\n" + "\n".join(left)
    shown = _read_routes_showing(client, keys.read, traces, [*PLANTED_VALUES, user_hash])
    assert not shown, "after forget a read key sees:\n" + "\n".join(shown)
    # the numbers stay: every call is still there, with its tokens and cost
    calls = store.query("SELECT count(), sum(input_tokens) FROM llm_calls WHERE project_id = 'p1'").result_rows[0]
    assert calls[0] >= len(traces) - 1 and calls[1] > 0
    assert not any(client.post("/api/v1/forget", json={"user_hash": user_hash},
                               headers=Keys.header(keys.admin)).json()["changed"].values())
