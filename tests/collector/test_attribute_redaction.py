"""Every string an instrumentation sends is stored redacted outside ``prompt_logs`` (attribute values of spans
and resources, span names, status messages, label columns, log records' finish reasons), and user ids are stored
as the deployment's HMAC hash: the issue's planted values, in both input types, are in no table and no API answer
a ``read`` key gets.

``db.connection_string``'s password is found today only because ``admin:S3cr3tPass@host`` reads as an e-mail
address; connection-URI credentials get a recognizer of their own in the redactor (another part of issue 28).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import random
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from fastapi.testclient import TestClient

from inferwatch import context as sdk_context
from inferwatch.redaction import DEFAULT_REDACTOR
from inferwatch_collector.normalize import normalize
from inferwatch_collector.normalize.logs import normalize_logs
from inferwatch_collector.normalize.scrubber import ATTRIBUTE_ENTITIES, holds_nothing
from inferwatch_collector.otlp_decode import to_fast
from inferwatch_collector.user_ids import (
    KEY_NAME, TABLE, UserHasher, hashes_value, is_user_key, load_user_hash_key,
)  # fmt: skip
from inferwatch_server.app import create_app

from tests.helpers import payloads as P
from tests.helpers.genai_logs import Emitter, record_events
from tests.helpers.keys import Keys
from tests.helpers.metrics import scrape
from tests.helpers.redaction_corpus import corpus

EMAIL = "alice@example.com"
SSN = "219-09-9999"
PASSWORD = "S3cr3tPass"
OPENAI_KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH"
CARD = "4111 1111 1111 1111"
PHONE = "+1 415 555 2671"
USER_ID, END_USER, SESSION_EMAIL = "customer-8841", "u-12345", "bob@example.org"
#: Values that must appear nowhere (the raw user ids included: they are stored hashed).
PLANTED = (EMAIL, SSN, PASSWORD, OPENAI_KEY, CARD, "1111 1111", PHONE, "555 2671", USER_ID, END_USER,
           SESSION_EMAIL, "carol@example.net", "10.20.30.40")
KEY = "deployment-key-for-tests"

PII_ATTRIBUTES = {
    "enduser.id": END_USER,
    "user.id": USER_ID,
    "langfuse.user.id": EMAIL,
    "session.id": SESSION_EMAIL,
    "db.statement": f"SELECT * FROM users WHERE ssn = '{SSN}'",
    "db.connection_string": f"postgresql://admin:{PASSWORD}@db.prod.example.com:5432/app",
    "app.note": f"key {OPENAI_KEY}",
    "payment.card": CARD,
    "client.phone": PHONE,
    "client.ip": "10.20.30.40",
    "app.tags": ["vip", f"mail {EMAIL}"],
}


def _request() -> Any:
    """An LLM call and a plain span with PII in attribute values, names and status messages, under a resource
    that carries PII too."""
    call = P.otel_genai_span(**PII_ATTRIBUTES)
    call.name = f"chat for {EMAIL}"
    span = P.make_span("GET /users/alice@example.com/profile", dict(PII_ATTRIBUTES), kind=P.SERVER,
                       status_code=P.STATUS_ERROR, status_message=f"no such user {EMAIL}, call {PHONE}")
    span.trace_id = call.trace_id
    resource = {**P.DEFAULT_RESOURCE, "host.owner": "carol@example.net", "enduser.id": END_USER}
    return P.make_request(call, span, resource=resource)


def _hash(value: str, key: str = KEY) -> str:
    return hmac.new(key.encode(), value.encode(), hashlib.sha256).hexdigest()


@pytest.fixture
def keyed_client(app_settings, store, keys: Keys):
    """The platform on the test's store with ``user_hash_key`` set."""
    app = create_app(app_settings.model_copy(update={"user_hash_key": KEY, "pairing_window_s": 0}), store=store)
    with TestClient(app) as test_client:
        yield test_client


def _everything_stored(store) -> str:
    """Every row of every table a ``read`` key can reach (all but prompt_logs and the keys), as text."""
    tables = [name for (name,) in store.query(
        "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine NOT LIKE '%View'"
    ).result_rows if name not in ("prompt_logs", "api_keys", "schema_migrations", TABLE)]  # fmt: skip
    return "\n".join(store.client.raw_query(f"SELECT * FROM {name} FORMAT TabSeparated").decode(errors="replace")
                     for name in tables)


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_planted_values_reach_no_table_and_no_read_answer(keyed_client, store, keys: Keys, encoding: str) -> None:
    request = _request()
    if encoding == "protobuf":
        body, content_type = request.SerializeToString(), "application/x-protobuf"
    else:
        body, content_type = P.to_otlp_json(request), "application/json"
    response = keyed_client.post("/v1/traces", content=body,
                                 headers={"Content-Type": content_type, **Keys.header(keys.ingest)})
    assert response.status_code == 200, response.text
    stored = _everything_stored(store)
    assert "<US_SSN>" in stored and "<OPENAI_API_KEY>" in stored and "<CREDIT_CARD>" in stored
    assert [p for p in PLANTED if p in stored] == []
    trace = keyed_client.get(f"/api/v1/traces/{request.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()}",
                             headers=Keys.header(keys.read))
    assert trace.status_code == 200, trace.text
    assert len(trace.json()["spans"]) == 2
    assert [p for p in PLANTED if p in trace.text] == []
    names = sorted(name for (name,) in store.query(
        "SELECT span_name FROM llm_calls UNION ALL SELECT name FROM spans").result_rows)  # fmt: skip
    assert names == ["GET /users/<EMAIL_ADDRESS>/profile", "chat for <EMAIL_ADDRESS>"]
    assert 'inferwatch_redactions_total{entity="US_SSN"}' in scrape(keyed_client)


def test_user_ids_are_stored_as_the_sdks_hash_and_fill_user_hash(keyed_client, store, keys: Keys) -> None:
    body = _request().SerializeToString()
    assert keyed_client.post("/v1/traces", content=body, headers={
        "Content-Type": "application/x-protobuf", **Keys.header(keys.ingest)}).status_code == 200
    ((attributes, user_hash),) = store.query("SELECT attributes, user_hash FROM llm_calls").result_rows
    previous = sdk_context._hash_key
    sdk_context.set_hash_key(KEY)  # the SDK with the same key: the same hashes
    try:
        assert attributes["user.id"] == sdk_context.hash_user_id(USER_ID) == _hash(USER_ID)
        assert attributes["enduser.id"] == sdk_context.hash_user_id(END_USER)
        assert attributes["langfuse.user.id"] == sdk_context.hash_user_id(EMAIL)
        assert attributes["session.id"] == sdk_context.hash_user_id(SESSION_EMAIL)  # an e-mail: hashed
    finally:
        sdk_context._hash_key = previous
    assert user_hash == _hash(END_USER)  # the first user id of the span (enduser.id)
    ((span_attributes,),) = store.query("SELECT attributes FROM spans").result_rows
    assert span_attributes["user.id"] == _hash(USER_ID)
    assert keyed_client.app.state.user_hasher.hash(USER_ID) == _hash(USER_ID)


def test_the_sdks_own_user_hash_wins_and_is_not_hashed_again() -> None:
    batch = normalize(P.make_request(P.sdk_span(**{"user.id": USER_ID})), "p1",
                      user_hasher=UserHasher(KEY.encode()))  # fmt: skip
    assert batch.llm_calls[0].user_hash == P.SDK_USER_HASH
    assert batch.llm_calls[0].attributes["user.id"] == _hash(USER_ID)


def test_a_session_id_that_is_no_e_mail_is_kept_redacted_not_hashed() -> None:
    span = P.make_span("step", {"session.id": "sess-42", "langfuse.session.id": "ann@example.com"})
    batch = normalize(P.make_request(span), "p1", user_hasher=UserHasher(KEY.encode()))
    assert batch.spans[0].attributes["session.id"] == "sess-42"
    assert batch.spans[0].attributes["langfuse.session.id"] == _hash("ann@example.com")
    assert batch.spans[0].attributes["service.version"] == "1.4.2"


@pytest.mark.parametrize("key,expected", [
    ("enduser.id", True), ("user.id", True), ("User.Id", True), ("user_id", True), ("langfuse.user.id", True),
    ("traceloop.association.properties.user_id", True), ("app.enduser.id", True), ("user.hash", False),
    ("inferwatch.user.hash", False), ("user.idle_ms", False), ("session.id", False), ("userid_count", False),
])  # fmt: skip
def test_user_keys(key: str, expected: bool) -> None:
    assert is_user_key(key) is expected


def test_session_keys_hash_only_e_mail_values() -> None:
    assert hashes_value("session.id", "ann@example.com") and hashes_value("app.session.id", " ann@example.com ")
    assert not hashes_value("session.id", "sess-42") and not hashes_value("session.id", "call ann@example.com now")
    assert hashes_value("user.id", "42")


@pytest.mark.parametrize("fast", [True, False])
def test_resource_values_and_column_keys_of_other_spans_are_redacted(fast: bool) -> None:
    span = P.make_span("step", {"gen_ai.response.id": f"resp of {EMAIL}", "inferwatch.feature": PHONE})
    request = P.make_request(span, resource={**P.DEFAULT_RESOURCE, "host.owner": EMAIL, "user.id": USER_ID})
    batch = normalize(to_fast(request) if fast else request, "p1", user_hasher=UserHasher(KEY.encode()))
    attributes = batch.spans[0].attributes
    assert attributes["host.owner"] == "<EMAIL_ADDRESS>" and attributes["user.id"] == _hash(USER_ID)
    assert attributes["gen_ai.response.id"] == "resp of <EMAIL_ADDRESS>"
    assert attributes["inferwatch.feature"] == "<PHONE_NUMBER>"
    assert batch.redactions == {"EMAIL_ADDRESS": 2, "PHONE_NUMBER": 1}


def test_label_columns_of_llm_calls_are_redacted() -> None:
    span = P.sdk_span(**{"inferwatch.feature": f"support for {EMAIL}", "inferwatch.experiment": PHONE})
    span.name = f"chat {EMAIL}"
    (row,) = normalize(to_fast(P.make_request(span)), "p1").llm_calls
    assert (row.span_name, row.feature, row.experiment) == (
        "chat <EMAIL_ADDRESS>", "support for <EMAIL_ADDRESS>", "<PHONE_NUMBER>")
    assert row.model == "claude-sonnet-4-5"  # names of things stay as sent


def test_model_names_in_span_names_and_model_keys_are_kept() -> None:
    model = "claude-haiku-4-5-20251001"  # the phone recognizer reads 4-5-20251001 as a number
    call = P.otel_genai_span(**{"gen_ai.request.model": model, "gen_ai.response.model": model})
    call.name = f"chat {model} for {EMAIL}"
    tool = P.make_span(f"embed {model}", {"gen_ai.operation.name": "execute_tool", "gen_ai.request.model": model,
                                          "app.model": model})  # fmt: skip
    batch = normalize(to_fast(P.make_request(call, tool)), "p1")
    assert batch.llm_calls[0].span_name == f"chat {model} for <EMAIL_ADDRESS>"
    assert batch.llm_calls[0].model == model
    assert batch.spans[0].name == f"embed {model}" and batch.spans[0].attributes["gen_ai.request.model"] == model
    assert batch.spans[0].attributes["app.model"] == "claude-haiku-<PHONE_NUMBER>"  # any other key: redacted


def test_log_records_leave_no_planted_value_outside_prompt_logs(client, store, keys: Keys) -> None:
    def block(emit: Emitter) -> None:
        emit.event("gen_ai.choice", {"index": 0, "finish_reason": f"stop {EMAIL}", "message": {"content": "hi"}},
                   {"user.email": EMAIL, "enduser.id": USER_ID})
        emit.log(f"user {EMAIL} paid with {CARD}", **{"user.id": USER_ID})

    request, _ = record_events(block)
    result = normalize_logs(request, "p1")
    assert list(result.finish_reasons.values()) == ["stop <EMAIL_ADDRESS>"]  # it patches llm_calls
    assert result.redactions["EMAIL_ADDRESS"] >= 1
    response = client.post("/v1/logs", content=request.SerializeToString(),
                           headers={"Content-Type": "application/x-protobuf", **Keys.header(keys.ingest)})
    assert response.status_code == 200, response.text
    assert [p for p in PLANTED if p in _everything_stored(store)] == []


# --- the key ---------------------------------------------------------------------------------------------------


def test_the_generated_key_is_kept_and_shared_by_every_app_on_the_store(app_settings, store, keys: Keys) -> None:
    hashes = []
    for _ in range(2):  # two collectors (or one restarted) on one database
        with TestClient(create_app(app_settings, store=store)) as test_client:
            hashes.append(test_client.app.state.user_hasher.hash(USER_ID))
    assert hashes[0] == hashes[1]
    ((value, count),) = store.query(f"SELECT any(value), count() FROM {TABLE}").result_rows
    assert count == 1 and len(value) == 64 and hashes[0] == _hash(USER_ID, value)
    assert load_user_hash_key(app_settings, store) == value.encode()


def test_candidates_written_at_once_converge_on_the_earliest(app_settings, store) -> None:
    now = datetime.now(timezone.utc)
    store.client.insert(store.table(TABLE), [[KEY_NAME, "b" * 64, now], [KEY_NAME, "a" * 64, now + timedelta(1)],
                                             [KEY_NAME, "c" * 64, now]],
                        column_names=["name", "value", "created_at"])  # fmt: skip
    assert load_user_hash_key(app_settings, store) == b"b" * 64  # earliest; on a tie the smallest value


def test_the_setting_overrides_the_stored_key(app_settings, store) -> None:
    generated = load_user_hash_key(app_settings, store)
    assert load_user_hash_key(app_settings.model_copy(update={"user_hash_key": KEY}), store) == KEY.encode()
    assert load_user_hash_key(app_settings, store) == generated
    assert KEY not in repr(app_settings.model_copy(update={"user_hash_key": KEY}))
    assert "key" not in repr(UserHasher(KEY.encode())).lower().replace("<key>", "")


# --- the pre-filter -------------------------------------------------------------------------------------------


def _redacts(text: str) -> bool:
    return DEFAULT_REDACTOR.redact(text, entities=ATTRIBUTE_ENTITIES).text != text or bool(
        DEFAULT_REDACTOR.analyze(text))


def test_the_pre_filter_never_skips_a_value_a_recognizer_matches() -> None:
    planted = [p.value for sample in corpus(200, seed=3) for p in sample.planted]
    chunks = {chunk for sample in corpus(200, seed=3) for chunk in sample.text.split()}
    assert planted and not any(holds_nothing(value) for value in planted)
    skipped = [chunk for chunk in chunks if holds_nothing(chunk)]
    assert skipped  # the corpus has such values (versions, small counts)
    assert [chunk for chunk in skipped if _redacts(chunk)] == []
    # every text over its alphabet up to 4 characters, and longer ones at random
    alphabet = "0123456789.-"
    texts = ["".join(t) for n in range(1, 5) for t in itertools.product(alphabet, repeat=n)]
    rng = random.Random(5)
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(5, 8))) for _ in range(3000)]
    assert [t for t in texts if holds_nothing(t) and _redacts(t)] == []
    assert not holds_nothing("1234") and not holds_nothing("1.2.3.4") and not holds_nothing("a1")
