"""API keys: hashed at rest, scoped, revocable, confined to their project."""

from __future__ import annotations

import pytest

from inferwatch_collector.auth import AuthError, KeyStore, hash_key, parse_authorization, validate_project


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
