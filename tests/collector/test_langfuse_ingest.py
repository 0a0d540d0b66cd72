"""The Langfuse SDK's way in: its OTLP path and HTTP Basic auth with a Langfuse-style key pair."""

from __future__ import annotations

import base64
import re

from fastapi.testclient import TestClient
from google.rpc import status_pb2

from inferwatch_collector.auth import KeyStore, langfuse_pair
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app
from inferwatch_server.cli import main

from tests.helpers import payloads
from tests.helpers.cli import run_cli

LANGFUSE_PATH = "/api/public/otel/v1/traces"
PROTOBUF = {"Content-Type": "application/x-protobuf"}


def basic(credentials: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(credentials.encode()).decode()}


def post(client: TestClient, headers: dict[str, str], path: str = LANGFUSE_PATH):
    body = payloads.make_request(payloads.otel_genai_span()).SerializeToString()
    return client.post(path, content=body, headers={**PROTOBUF, **headers})


def message(response) -> str:
    """The message of an OTLP error answer (a protobuf ``google.rpc.Status`` for a protobuf request)."""
    return status_pb2.Status.FromString(response.content).message


def calls(store: Store) -> list[tuple]:
    return store.query("SELECT project_id, model FROM llm_calls").result_rows


def test_langfuse_path_with_a_basic_pair_lands_the_call(client, store, keys):
    public, secret = langfuse_pair(keys.ingest)
    response = post(client, basic(f"{public}:{secret}"))
    assert response.status_code == 200, response.text
    assert calls(store) == [("p1", "gpt-4o-mini")]


def test_basic_pair_also_works_on_the_standard_path(client, store, keys):
    public, secret = langfuse_pair(keys.ingest)
    assert post(client, basic(f"{public}:{secret}"), "/v1/traces").status_code == 200
    assert len(calls(store)) == 1


def test_bearer_still_works_on_the_langfuse_path(client, store, keys):
    assert post(client, {"Authorization": f"Bearer {keys.ingest}"}).status_code == 200
    assert len(calls(store)) == 1


def test_mismatched_pairs_are_401(client, store, keys):
    public, secret = langfuse_pair(keys.ingest)
    other_public, other_secret = langfuse_pair(keys.other_project)
    for credentials in (f"{public}:{other_secret}", f"{other_public}:{secret}", f"{public}:{secret}x"):
        response = post(client, basic(credentials))
        assert response.status_code == 401, credentials
        assert "invalid or revoked" in message(response)
    assert calls(store) == []


def test_pair_of_a_key_without_ingest_scope_is_403(client, keys):
    public, secret = langfuse_pair(keys.read)
    response = post(client, basic(f"{public}:{secret}"))
    assert response.status_code == 403 and "ingest" in message(response)


def test_malformed_basic_headers_are_401_saying_what_is_wrong(client, keys):
    public, secret = langfuse_pair(keys.ingest)
    cases = {
        "Basic not*base64!": "not valid base64",
        "Basic " + base64.b64encode(b"\xff\xfe:x").decode(): "not valid base64",
        basic(public + secret)["Authorization"]: "no ':' separator",
        basic(f"{keys.ingest}:{secret}")["Authorization"]: "public key must look like 'pk-lf-",
        basic(f"{public}:{keys.ingest}")["Authorization"]: "secret key must look like 'sk-lf-",
        "Digest abc": "must be 'Bearer <api key>' or 'Basic",
    }
    for header, expected in cases.items():
        response = post(client, {"Authorization": header})
        assert response.status_code == 401, header
        text = message(response)
        assert expected in text, (header, text)
        assert secret.removeprefix("sk-lf-") not in text  # never echo a secret


def test_keys_api_returns_a_langfuse_pair_that_authenticates(client, store, keys):
    response = client.post("/api/v1/keys", json={"scopes": ["ingest"], "langfuse": True},
                           headers={"Authorization": f"Bearer {keys.admin}"})
    assert response.status_code == 201, response.text
    pair = response.json()["langfuse"]
    assert pair["LANGFUSE_HOST"] == "http://testserver"
    assert (pair["LANGFUSE_PUBLIC_KEY"], pair["LANGFUSE_SECRET_KEY"]) == langfuse_pair(response.json()["key"])
    assert post(client, basic(f"{pair['LANGFUSE_PUBLIC_KEY']}:{pair['LANGFUSE_SECRET_KEY']}")).status_code == 200
    assert "langfuse" not in client.post("/api/v1/keys", json={"scopes": ["read"]},
                                         headers={"Authorization": f"Bearer {keys.admin}"}).json()


def test_keys_cli_prints_a_working_langfuse_environment(settings, app_settings, capsys):
    assert run_cli("--data-dir", str(settings.data_dir), "keys", "create", "--project", "lf", "--langfuse") == 0
    printed = dict(line.split("=", 1) for line in capsys.readouterr().out.strip().splitlines())
    assert set(printed) == {"LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST"}
    assert re.fullmatch(r"pk-lf-[0-9a-f]{12}", printed["LANGFUSE_PUBLIC_KEY"])
    assert re.fullmatch(r"sk-lf-[A-Za-z0-9_-]{20,}", printed["LANGFUSE_SECRET_KEY"])
    assert printed["LANGFUSE_HOST"] == f"http://{settings.host}:{settings.port}"
    store = Store.open(settings)
    try:
        (info,) = KeyStore(store, cache_seconds=0).list_keys("lf")
        assert info.scopes == ("ingest",) and printed["LANGFUSE_PUBLIC_KEY"].endswith(info.key_id)
        stored = store.query("SELECT key_hash FROM api_keys").result_rows[0][0]
        assert printed["LANGFUSE_SECRET_KEY"].removeprefix("sk-lf-") not in stored  # hashed at rest
        with TestClient(create_app(app_settings, store=store)) as client:
            credentials = f"{printed['LANGFUSE_PUBLIC_KEY']}:{printed['LANGFUSE_SECRET_KEY']}"
            assert post(client, basic(credentials)).status_code == 200
            client.app.state.call_pairing.settle_all()  # a Langfuse generation is held for its pairing window
            assert calls(store) == [("lf", "gpt-4o-mini")]
    finally:
        store.close()


def test_keys_cli_needs_a_scope_or_langfuse(settings, capsys):
    assert main(["--data-dir", str(settings.data_dir), "keys", "create", "--project", "x"]) == 2
    assert "needs --scope (or --langfuse" in capsys.readouterr().err
