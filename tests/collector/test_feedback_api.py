"""Feedback API: rows carry the call's attribution, retries replace, comments are redacted, projects isolated."""

from __future__ import annotations

import gzip
import json
import time

import pytest

from inferwatch_collector.rows import LLM_CALL_COLUMNS

from tests.helpers.keys import Keys
from tests.helpers.factories import llm_call

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"


def insert_calls(store, *rows) -> None:
    store.insert_columns("llm_calls", [list(c) for c in zip(*rows)], LLM_CALL_COLUMNS)


def post(client, key, body, **headers):
    return client.post("/api/v1/feedback", json=body, headers={**Keys.header(key), **headers})


def listed(client, key, **params):
    response = client.get("/api/v1/feedback", params=params, headers=Keys.header(key))
    assert response.status_code == 200, response.text
    return response.json()


def stored(store, project="p1"):
    """Rows as ClickHouse returns them after replacement (FINAL)."""
    result = store.query("SELECT * FROM feedback FINAL WHERE project_id = {p:String} ORDER BY feedback_id",
                         {"p": project})
    return [dict(zip(result.column_names, row)) for row in result.result_rows]


def test_feedback_copies_the_calls_attribution(client, keys, store):
    now = int(time.time() * 1_000_000)
    older = llm_call("p1", trace_id=TRACE, span_id="1" * 16, start_time=now - 120_000_000, model="gpt-4o-mini")
    newer = llm_call("p1", trace_id=TRACE, span_id=SPAN, start_time=now - 30_000_000, model="gpt-4o",
                     feature="checkout", experiment="prompt-v3", variant="B", prompt_template="answer",
                     user_hash="cd" * 32)
    insert_calls(store, older, newer)

    response = post(client, keys.ingest, {"trace_id": TRACE.upper(), "thumbs_up": True})
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["accepted"] == 1 and len(body["feedback_ids"]) == 1 and body["unmatched"] == []

    [row] = listed(client, keys.read, trace_id=TRACE)
    assert row["feedback_id"] == body["feedback_ids"][0]
    # the most recent call of the trace; trace-level feedback does not pin a span
    assert (row["model"], row["feature"], row["experiment"], row["variant"], row["prompt_template"]) == \
        ("gpt-4o", "checkout", "prompt-v3", "B", "answer")
    assert row["user_hash"] == "cd" * 32 and row["span_id"] == "" and row["source"] == "api"
    assert (row["kind"], row["name"], row["value"]) == ("thumbs", "user_feedback", 1.0)

    # a span id picks that call; a user_hash in the body wins over the call's
    post(client, keys.ingest, {"trace_id": TRACE, "span_id": "1" * 16, "score": 0.2, "user_hash": "ef" * 32})
    by_span = [r for r in listed(client, keys.read, trace_id=TRACE) if r["kind"] == "score"]
    assert by_span[0]["model"] == "gpt-4o-mini" and by_span[0]["user_hash"] == "ef" * 32


def test_response_id_finds_the_call_and_fills_trace_and_span(client, keys, store):
    insert_calls(store, llm_call("p1", trace_id=TRACE, span_id=SPAN, response_id="msg_01XyZ", model="claude"))
    response = post(client, keys.ingest, {"gen_ai.response.id": "msg_01XyZ", "gen_ai.evaluation.name": "judge",
                                          "gen_ai.evaluation.score.value": 0.25,
                                          "gen_ai.evaluation.score.label": "partial"})
    assert response.status_code == 202 and response.json()["unmatched"] == []
    [row] = stored(store)
    assert (row["trace_id"], row["span_id"], row["model"]) == (TRACE, SPAN, "claude")
    assert (row["kind"], row["name"], row["value"], row["label"]) == ("score", "judge", 0.25, "partial")


def test_thumbs_down_score_and_label_only(client, keys, store):
    ids = post(client, keys.ingest, [
        {"trace_id": "1" * 32, "thumbs_up": False},
        {"trace_id": "2" * 32, "score": 7.5, "name": "helpfulness"},
        {"trace_id": "3" * 32, "label": "off-topic"},
    ]).json()["feedback_ids"]
    rows = {r["feedback_id"]: r for r in stored(store)}
    assert [(rows[i]["kind"], rows[i]["value"]) for i in ids] == [("thumbs", -1.0), ("score", 7.5), ("label", 0.0)]
    assert rows[ids[1]]["name"] == "helpfulness" and rows[ids[2]]["label"] == "off-topic"


def test_comment_is_redacted_before_storage(client, keys, store):
    comment = "Wrong answer. Write to jane.doe@example.com or call (555) 010-0199, key sk-proj-" + "Ab1" * 10
    response = post(client, keys.ingest, {"trace_id": TRACE, "thumbs_up": False, "comment": comment})
    assert response.status_code == 202
    [row] = stored(store)
    assert "jane.doe@example.com" not in row["comment"] and "<EMAIL_ADDRESS>" in row["comment"]
    assert "010-0199" not in row["comment"] and "sk-proj-" not in row["comment"]
    assert row["comment"].startswith("Wrong answer. Write to ")


def test_comment_text_needs_prompts_read(client, keys, store):
    # a comment is free text a user wrote (names, addresses): readable like prompts, not with plain `read`
    post(client, keys.ingest, {"trace_id": TRACE, "thumbs_up": False, "comment": "Wrong. I am Jane at 12 Elm St"})
    [plain] = listed(client, keys.read, trace_id=TRACE)
    assert (plain["comment"], plain["comment_hidden"], plain["kind"]) == (None, True, "thumbs")
    [full] = listed(client, keys.prompts, trace_id=TRACE)
    assert full["comment"] == "Wrong. I am Jane at 12 Elm St" and "comment_hidden" not in full


def test_a_retry_replaces_instead_of_duplicating(client, keys, store):
    item = {"trace_id": TRACE, "thumbs_up": True, "comment": "great"}
    first = post(client, keys.ingest, item).json()["feedback_ids"]
    second = post(client, keys.ingest, item).json()["feedback_ids"]
    assert first == second
    assert len(stored(store)) == 1 and len(listed(client, keys.read, trace_id=TRACE)) == 1
    raw = store.query("SELECT count() FROM feedback WHERE project_id = 'p1'").result_rows[0][0]
    assert raw in (1, 2)  # two versions until a merge; FINAL shows one

    # an explicit id is the idempotency key: a later correction replaces the earlier vote
    post(client, keys.ingest, {"trace_id": TRACE, "thumbs_up": True, "feedback_id": "vote-42"})
    post(client, keys.ingest, {"trace_id": TRACE, "thumbs_up": False, "feedback_id": "vote-42"})
    votes = [r for r in stored(store) if r["feedback_id"] == "vote-42"]
    assert len(votes) == 1 and votes[0]["value"] == -1.0
    # different content is different feedback
    post(client, keys.ingest, {"trace_id": TRACE, "thumbs_up": True, "comment": "great!"})
    assert len(stored(store)) == 3


def test_unknown_trace_is_stored_with_empty_attribution(client, keys, store):
    body = post(client, keys.ingest, {"trace_id": "9" * 32, "score": 1}).json()
    assert body["unmatched"] == body["feedback_ids"]
    [row] = stored(store)
    assert row["trace_id"] == "9" * 32 and row["model"] == "" and row["experiment"] == ""


def test_another_projects_call_is_never_joined_or_shown(client, keys, store):
    insert_calls(store, llm_call("p2", trace_id=TRACE, model="secret-model", experiment="secret-exp",
                                 user_hash="ee" * 32))
    body = post(client, keys.ingest, {"trace_id": TRACE, "thumbs_up": True}).json()
    assert body["unmatched"] == body["feedback_ids"]
    [row] = stored(store, "p1")
    assert row["model"] == "" and row["experiment"] == "" and row["user_hash"] == ""
    # p2 sees its own feedback only
    post(client, keys.other_project, {"trace_id": TRACE, "score": 0.5})
    assert [r["model"] for r in listed(client, keys.other_project, trace_id=TRACE)] == ["secret-model"]
    assert [r["kind"] for r in listed(client, keys.read, trace_id=TRACE)] == ["thumbs"]


@pytest.mark.parametrize(("item", "field"), [
    ({"trace_id": "xyz", "score": 1}, "trace_id"),
    ({"trace_id": "0" * 32, "score": 1}, "trace_id"),
    ({"trace_id": TRACE, "span_id": "12", "score": 1}, "span_id"),
    ({"trace_id": TRACE, "score": "high"}, "score"),
    ({"trace_id": TRACE, "thumbs_up": "maybe"}, "thumbs_up"),
    ({"trace_id": TRACE, "comment": "x" * 4097}, "comment"),
    ({"trace_id": TRACE, "comment": "é" * 2049}, "comment"),  # 4098 bytes in UTF-8
    ({"trace_id": TRACE, "score": 1, "user_id": "alice@example.com"}, "user_id"),
    ({"trace_id": TRACE, "score": 1, "user_hash": "alice"}, "user_hash"),
    ({"trace_id": TRACE, "score": 1, "feedback_id": "has space"}, "feedback_id"),
    ({"trace_id": TRACE, "score": 1, "timestamp": "1999-01-01T00:00:00Z"}, "timestamp"),
    ({"trace_id": TRACE, "score": 1, "colour": "blue"}, "colour"),
    ({"score": 1}, "trace_id or response_id"),
    ({"trace_id": TRACE}, "nothing to record"),
    ({"trace_id": TRACE, "score": 1, "thumbs_up": True}, "score or thumbs_up"),
])
def test_bad_input_is_422_naming_the_field(client, keys, store, item, field):
    response = post(client, keys.ingest, item)
    assert response.status_code == 422, response.text
    assert field in response.json()["error"]
    assert "alice@example.com" not in response.text  # inputs are never echoed
    assert stored(store) == []


def test_malformed_bodies(client, keys):
    headers = {**Keys.header(keys.ingest), "Content-Type": "application/json"}
    assert client.post("/api/v1/feedback", content=b"{not json", headers=headers).status_code == 400
    assert client.post("/api/v1/feedback", content=b'{"trace_id": "' + b"a" * 32 + b'", "score": NaN}',
                       headers=headers).status_code == 400
    assert post(client, keys.ingest, "thumbs up").status_code == 422
    assert post(client, keys.ingest, []).status_code == 422


def test_gzip_bodies_are_accepted(client, keys, store):
    body = gzip.compress(json.dumps({"trace_id": TRACE, "score": 3}).encode())
    response = client.post("/api/v1/feedback", content=body, headers={
        **Keys.header(keys.ingest), "Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert response.status_code == 202 and len(stored(store)) == 1


def test_scopes(client, keys):
    item = {"trace_id": TRACE, "thumbs_up": True}
    assert post(client, keys.read, item).status_code == 403
    assert client.post("/api/v1/feedback", json=item).status_code == 401
    assert post(client, keys.admin, item).status_code == 202  # admin implies every scope of its project
    assert client.get("/api/v1/feedback", headers=Keys.header(keys.ingest)).status_code == 403
    assert client.get("/api/v1/feedback", params={"trace_id": "nope"},
                      headers=Keys.header(keys.read)).status_code == 422


def test_a_batch_is_all_or_nothing(client, keys, store):
    good = [{"trace_id": f"{i + 1:032x}", "score": i} for i in range(5)]
    bad = good[:2] + [{"trace_id": TRACE, "score": "NaN"}] + good[2:] + [{"trace_id": "q", "score": 1}]
    response = post(client, keys.ingest, bad)
    assert response.status_code == 422
    error = response.json()["error"]
    assert "2.score" in error and "6.trace_id" in error
    assert stored(store) == []

    response = post(client, keys.ingest, good)
    assert response.status_code == 202 and response.json()["accepted"] == 5
    assert len(set(response.json()["feedback_ids"])) == 5 and len(stored(store)) == 5

    too_many = [{"trace_id": TRACE, "score": 1}] * 1001
    response = post(client, keys.ingest, too_many)
    assert response.status_code == 422 and "1000" in response.json()["error"]


def test_a_full_batch_stores_every_item(client, keys, store):
    items = [{"trace_id": f"{i + 1:032x}", "thumbs_up": i % 2 == 0, "comment": f"note {i}"} for i in range(1000)]
    response = post(client, keys.ingest, items)
    assert response.status_code == 202, response.text
    assert store.query("SELECT count(), sum(value) FROM feedback FINAL").result_rows[0] == (1000, 0.0)


def test_openapi_documents_the_body(client):
    spec = client.app.openapi()  # the spec the docs serve when api_docs is on
    body = spec["paths"]["/api/v1/feedback"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    item, batch = body["oneOf"]
    assert "trace_id" in item["properties"] and "user_id" not in item["properties"]
    assert batch["maxItems"] == 1000


def test_feedback_shares_the_per_key_ingest_rate_limit(app_settings, store, keys):
    from fastapi.testclient import TestClient

    from inferwatch_collector.app import create_app

    limited = app_settings.model_copy(update={"ingest_rate_limit_per_key": 0.001, "ingest_rate_burst": 1})
    with TestClient(create_app(limited, store=store)) as client:
        item = {"trace_id": "ab" * 16, "thumbs_up": True}
        assert post(client, keys.ingest, item).status_code == 202
        refused = post(client, keys.ingest, item)
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
        assert post(client, keys.other_project, item).status_code == 202  # another key has its own budget
