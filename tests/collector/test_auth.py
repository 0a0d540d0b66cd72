"""API keys: hashed at rest, scoped, revocable (on every collector within a poll), confined to their project;
unknown keys cached apart from valid ones, and their database lookups rate-limited."""

from __future__ import annotations

import secrets
import time

import pytest

from inferwatch_collector.auth import AuthError, KeyStore, hash_key, parse_authorization, validate_project
from inferwatch_collector.key_cache import KeyCache
from tests.helpers.watched_store import WatchedStore


def test_keys_are_stored_hashed(store):
    keys = KeyStore(store, cache_seconds=0)
    key = keys.create_key("p1", ["ingest", "read"], name="ci")
    dump = str(store.query("SELECT * FROM api_keys").result_rows)
    secret = key.split("_", 2)[2]  # iwk_<id>_<secret>: the secret (token_urlsafe) may hold "_" itself
    assert secret not in dump and key not in dump
    assert hash_key(key) in dump
    principal = keys.authenticate(key)
    assert principal.project_id == "p1" and principal.scopes == {"ingest", "read"}


def test_wrong_secret_unknown_and_malformed_keys_are_rejected(store):
    keys = KeyStore(store, cache_seconds=0)
    key = keys.create_key("p1", ["read"])
    tampered = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    for bad in (tampered, "iwk_000000000000_" + "x" * 43, "not-a-key", ""):
        with pytest.raises(AuthError) as info:
            keys.authenticate(bad)
        assert info.value.status == 401


def test_revoked_key_stops_working(store):
    keys = KeyStore(store, cache_seconds=0)
    key = keys.create_key("p1", ["read"])
    key_id = key.split("_")[1]
    assert keys.revoke(key_id)
    with pytest.raises(AuthError):
        keys.authenticate(key)
    assert [k.revoked for k in keys.list_keys("p1")] == [True]
    assert not keys.revoke("ffffffffffff")


def test_revoke_is_confined_to_the_given_project(store):
    keys = KeyStore(store, cache_seconds=0)
    key = keys.create_key("p1", ["read"])
    assert not keys.revoke(key.split("_")[1], project_id="p2")
    assert keys.authenticate(key).project_id == "p1"


@pytest.mark.parametrize("name", ["", "UPPER", "has space", "-lead", "x" * 64, "a;drop"])
def test_project_names_are_validated(name):
    with pytest.raises(ValueError, match="project name"):
        validate_project(name)


def test_scopes_are_validated(store):
    with pytest.raises(ValueError, match="unknown scope"):
        KeyStore(store).create_key("p1", ["write"])
    with pytest.raises(ValueError, match="at least one scope"):
        KeyStore(store).create_key("p1", [])


def test_authorization_header_forms():
    assert parse_authorization("Bearer abc", None) == "abc"
    assert parse_authorization("bearer  abc ", None) == "abc"
    assert parse_authorization(None, "abc") == "abc"
    for bad in ("Basic abc", "Bearer", "abc"):
        with pytest.raises(AuthError):
            parse_authorization(bad, None)
    with pytest.raises(AuthError, match="missing API key"):
        parse_authorization(None, None)


def test_admin_api_manages_only_its_own_projects_keys(client, keys):
    created = client.post("/api/v1/keys", json={"scopes": ["read"], "name": "dash"}, headers=keys.header(keys.admin))
    assert created.status_code == 201, created.text
    new_key = created.json()["key"]
    assert created.json()["project"] == "p1"
    assert client.get("/api/v1/calls/summary", headers=keys.header(new_key)).status_code == 200

    listed = client.get("/api/v1/keys", headers=keys.header(keys.admin)).json()
    assert all(k["project_id"] == "p1" for k in listed) and "key_hash" not in listed[0]
    other_id = keys.other_project.split("_")[1]
    assert client.delete(f"/api/v1/keys/{other_id}", headers=keys.header(keys.admin)).status_code == 404

    bad = client.post("/api/v1/keys", json={"scopes": ["write"]}, headers=keys.header(keys.admin))
    assert bad.status_code == 422 and "scopes" in bad.json()["error"]
    assert client.post("/api/v1/keys", json={"scopes": ["read"]}, headers=keys.header(keys.read)).status_code == 403


# --- two collectors on one database: revocations propagate by the key poll ---------------------------------------
def _refused(keys: KeyStore, key: str) -> int | None:
    """The status a key check answers with, None when the key is accepted."""
    try:
        keys.authenticate(key)
    except AuthError as exc:
        return exc.status
    return None


def test_a_key_revoked_through_one_collector_is_refused_by_another_after_its_poll(store):
    here, there = KeyStore(store, cache_seconds=30), KeyStore(store, cache_seconds=30)
    key = here.create_key("p1", ["read"])
    assert _refused(there, key) is None  # cached by the other collector for 30 s
    assert here.revoke(key.split("_")[1])
    assert _refused(here, key) == 401  # where it was revoked: at once
    assert _refused(there, key) is None  # elsewhere the cache still holds it, until the poll
    assert there.poll_key_changes() == 1
    assert _refused(there, key) == 401
    assert there.stats.revocations_applied == 1 and there.poll_key_changes() == 0


def test_the_poll_thread_applies_a_revocation_within_its_interval(store):
    here, there = KeyStore(store, cache_seconds=30), KeyStore(store, cache_seconds=30)
    key = here.create_key("p1", ["read"])
    assert _refused(there, key) is None
    there.start_polling(0.05)
    try:
        here.revoke(key.split("_")[1])
        deadline = time.monotonic() + 10  # generous: the interval is 0.05 s, the cache 30 s
        while _refused(there, key) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _refused(there, key) == 401
    finally:
        there.stop_polling()
    assert there.stats.polls["ok"] >= 1


def test_a_running_collector_refuses_a_key_revoked_elsewhere(app_settings, store, keys):
    from fastapi.testclient import TestClient

    from inferwatch_server.app import create_app

    settings = app_settings.model_copy(update={"key_cache_s": 30.0, "key_poll_s": 0.05})
    with TestClient(create_app(settings, store=store)) as client:
        def status() -> int:
            return client.get("/api/v1/calls/summary", headers=keys.header(keys.read)).status_code

        assert status() == 200
        KeyStore(store).revoke(keys.read.split("_")[1])  # another collector, or `inferwatch-server keys revoke`
        deadline = time.monotonic() + 10
        while status() == 200 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert status() == 401
        assert 'inferwatch_api_key_revocations_applied_total 1' in "\n".join(client.app.state.keys.metric_lines())


def test_a_failed_poll_keeps_last_known_good_keys_and_never_raises(store):
    here = KeyStore(store, cache_seconds=30)
    watched = WatchedStore(store)
    there = KeyStore(watched, cache_seconds=0.05)
    key, other = here.create_key("p1", ["read"]), here.create_key("p1", ["read"])
    assert _refused(there, key) is None and _refused(there, other) is None
    watched.down = True  # this collector cannot reach the database; the other one can
    here.revoke(other.split("_")[1])
    assert there.poll_key_changes() == 0  # no exception, nothing dropped
    time.sleep(0.1)  # past cache_seconds: answered from the last-known-good entries
    assert _refused(there, key) is None and _refused(there, other) is None
    assert there.stats.polls["failed"] == 1 and there.stale_answers == 2
    watched.down = False
    assert there.poll_key_changes() == 1 and _refused(there, other) == 401 and _refused(there, key) is None


# --- unknown keys: their own cache, a global limit on their lookups ---------------------------------------------
def _made_up_key() -> str:
    return f"iwk_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"


def test_a_flood_of_unknown_keys_costs_at_most_the_limit_and_never_evicts_a_valid_key(store):
    watched = WatchedStore(store)
    keys = KeyStore(watched, cache_seconds=30, valid_cache_size=10, unknown_cache_size=100,
                    unknown_lookups_per_s=0.001, unknown_lookup_burst=20)
    valid = KeyStore(store).create_key("p1", ["read"])  # made elsewhere: this collector looks it up once
    assert _refused(keys, valid) is None
    assert watched.queries["api_keys"] == 1
    answers: dict[int | None, int] = {}
    for n in range(2_000):
        status = _refused(keys, _made_up_key())
        answers[status] = answers.get(status, 0) + 1
        if n % 100 == 0:
            assert _refused(keys, valid) is None
    assert watched.queries["api_keys"] == 1 + 20  # the valid key once, then the burst of unknown ones
    assert answers == {401: 20, 503: 1_980}  # over the limit: retry later, no query
    assert keys.cache.sizes() == (1, 20)  # bounded, apart; the valid key is still there
    assert keys.stats.refused_by_limit == 1_980 and keys.stats.lookups == {"valid": 1, "unknown": 20, "failed": 0}
    metrics = "\n".join(keys.metric_lines())
    assert "inferwatch_api_key_lookups_refused_total 1980" in metrics
    assert 'inferwatch_api_key_cache_entries{cache="valid"} 1' in metrics


def test_an_unknown_key_is_remembered_by_hash_and_a_retry_costs_no_query(store):
    watched = WatchedStore(store)
    keys = KeyStore(watched, cache_seconds=30, unknown_cache_seconds=30)
    made_up = _made_up_key()
    assert [_refused(keys, made_up) for _ in range(5)] == [401] * 5
    assert watched.queries["api_keys"] == 1 and keys.stats.unknown_cache_hits == 4
    assert made_up not in str(keys.cache._unknown)  # only its hash is kept
    assert _refused(keys, "iwk_" + "x" * 5_000) == 401 and watched.queries["api_keys"] == 1  # malformed: no query


def test_fresh_keys_work_at_once_even_while_unknown_lookups_are_refused(store):
    watched = WatchedStore(store)
    keys = KeyStore(watched, cache_seconds=30, unknown_lookups_per_s=0.001, unknown_lookup_burst=1)
    assert _refused(keys, _made_up_key()) == 401
    assert _refused(keys, _made_up_key()) == 503  # the bucket is empty
    mine = keys.create_key("p1", ["read"])  # created through this collector: cached at once
    assert _refused(keys, mine) is None
    elsewhere = KeyStore(store).create_key("p1", ["read"])
    assert _refused(keys, elsewhere) == 503  # not seen yet, and the bucket is empty
    keys.poll_key_changes()  # the poll saw it created: its lookup skips the bucket
    assert _refused(keys, elsewhere) is None


def test_a_valid_key_gives_its_lookup_token_back(store):
    keys = KeyStore(store, cache_seconds=30, unknown_lookups_per_s=0.001, unknown_lookup_burst=1)
    made_elsewhere = [KeyStore(store).create_key("p1", ["read"]) for _ in range(3)]
    assert [_refused(keys, key) for key in made_elsewhere] == [None] * 3  # one token, given back each time
    assert _refused(keys, _made_up_key()) == 401 and _refused(keys, _made_up_key()) == 503


def test_the_key_cache_is_bounded_and_keeps_unknown_keys_apart() -> None:
    from inferwatch_collector.auth import Principal

    cache = KeyCache(valid_size=2, unknown_size=3, unknown_ttl_s=5)
    for n in range(3):
        cache.remember_valid(f"key{n}", f"h{n}", Principal("p1", f"k{n}", frozenset()), now=0)
    assert cache.valid("key0") is None and cache.valid("key2") is not None  # least recently used went
    for n in range(10):
        cache.remember_unknown(f"u{n}", now=0)
    assert cache.sizes() == (2, 3) and cache.is_unknown("u9", now=1) and not cache.is_unknown("u9", now=6)
    cache.remember_unknown("h9", now=0)
    cache.mark_fresh(["h9"], until=10)  # created elsewhere: no longer unknown
    assert not cache.is_unknown("h9", now=1) and cache.is_fresh("h9", now=1) and not cache.is_fresh("h9", now=11)
    assert cache.forget_key_ids(["k2"], now=0) == 1 and cache.valid("key2") is None
    assert cache.is_unknown(hash_key("key2"), now=1)
    cache.prune(now=100)
    assert cache.sizes() == (1, 0)
