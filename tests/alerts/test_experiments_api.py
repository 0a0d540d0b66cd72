"""The experiments API (register, list, one experiment's results, history, analyse now) and the
``inferwatch-server experiments`` CLI, on a real embedded database."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from inferwatch_alerts.experiments import results
from inferwatch_collector.auth import KeyStore
from inferwatch_collector.rows import LLM_CALL_COLUMNS
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app
from inferwatch_server.cli import experiments as experiments_cli

from tests.helpers.factories import llm_call

START = datetime.combine(datetime.now(UTC).date() - timedelta(days=3), time(0), UTC)


@pytest.fixture
def keys(store: Store) -> dict[str, str]:
    ks = KeyStore(store, cache_seconds=0)
    return {"read": ks.create_key("p1", ["read"]), "admin": ks.create_key("p1", ["admin"]),
            "other": ks.create_key("p2", ["read", "admin"])}


@pytest.fixture
def client(settings: Settings, store: Store, keys: dict[str, str]) -> Iterator[TestClient]:
    app = create_app(settings.model_copy(update={"flush_interval_s": 0.02, "ingest_workers": 0}), store=store)
    with TestClient(app) as test_client:
        yield test_client


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def traffic(store: Store, experiment: str, users: int, factor: float) -> None:
    rows = []
    for u in range(users):
        variant = "A" if u % 2 else "B"
        for k in range(1 + u % 3):
            at = START + timedelta(hours=1, seconds=u * 3 + k)
            rows.append(llm_call("p1", start_time=int(at.timestamp() * 1_000_000), experiment=experiment,
                                 variant=variant, user_hash=f"{u:064x}",
                                 cost_usd=(0.001 + (u % 7) * 0.0003) * (factor if variant == "B" else 1.0)))
    store.insert_columns("llm_calls", [list(c) for c in zip(*rows)], LLM_CALL_COLUMNS)


BODY = {"name": "prompt-v3", "variants": [{"name": "A", "weight": 0.5}, {"name": "B", "weight": 0.5}],
        "primary_metric": "cost_per_call", "guardrails": ["error_rate"], "planned_users": 600,
        "start": START.isoformat()}


def test_register_list_and_read_results(client: TestClient, store: Store, keys: dict[str, str]) -> None:
    created = client.post("/api/v1/experiments", json=BODY, headers=auth(keys["admin"]))
    assert created.status_code == 201, created.text
    assert created.json()["control"] == "A" and created.json()["source"] == "api"
    assert client.post("/api/v1/experiments", json=BODY, headers=auth(keys["admin"])).status_code == 409
    replaced = client.post("/api/v1/experiments?replace=true", json=BODY | {"mde": 0.1},
                           headers=auth(keys["admin"]))
    assert replaced.status_code == 201 and replaced.json()["mde"] == 0.1

    listed = client.get("/api/v1/experiments", headers=auth(keys["read"])).json()["experiments"]
    assert [e["name"] for e in listed] == ["prompt-v3"] and listed[0]["latest"] is None

    traffic(store, "prompt-v3", 600, 0.8)
    results.run_experiments_job(store, START + timedelta(hours=20))
    one = client.get("/api/v1/experiments/prompt-v3", headers=auth(keys["read"])).json()
    assert one["latest"]["verdict"] == "ship" and one["latest"]["winner"] == "B"
    assert one["latest"]["arms"] == {"B": "ship"} and one["latest"]["details"]["sequential_method"] == \
        "obf_spending"
    rows = {(r["metric"], r["variant"]): r for r in one["results"]}
    cost = rows[("cost_per_call", "B")]
    assert cost["lift"] == pytest.approx(-0.2, abs=0.02) and cost["p_value"] < 1e-6
    assert cost["details"]["p_sequential"] < 0.05 and cost["details"]["test"] == "delta"
    assert rows[("cost_per_call", "A")]["p_value"] is None  # the control is not tested against itself
    assert rows[("users", "A")]["n"] == 300

    history = client.get("/api/v1/experiments/prompt-v3/history?metric=cost_per_call",
                         headers=auth(keys["read"])).json()
    assert len(history["windows"]) == 1 and {s["variant"] for s in history["series"]} == {"A", "B"}

    fresh = client.post("/api/v1/experiments/prompt-v3/analyze", headers=auth(keys["admin"]))
    assert fresh.status_code == 200 and fresh.json()["verdict"] == "ship"
    assert client.get("/api/v1/experiments/prompt-v3/history", headers=auth(keys["read"])).json()["windows"]


def test_scopes_projects_and_validation(client: TestClient, keys: dict[str, str]) -> None:
    assert client.post("/api/v1/experiments", json=BODY, headers=auth(keys["read"])).status_code == 403
    assert client.get("/api/v1/experiments").status_code == 401
    assert client.post("/api/v1/experiments", json=BODY, headers=auth(keys["admin"])).status_code == 201
    # another project sees nothing of it
    assert client.get("/api/v1/experiments", headers=auth(keys["other"])).json() == {"experiments": []}
    assert client.get("/api/v1/experiments/prompt-v3", headers=auth(keys["other"])).status_code == 404
    assert client.post("/api/v1/experiments/prompt-v3/analyze", headers=auth(keys["other"])).status_code == 404
    bad = client.post("/api/v1/experiments", json=BODY | {"name": "x", "primary_metric": "calls_per_user"},
                      headers=auth(keys["admin"]))
    assert bad.status_code == 422 and "primary_metric" in bad.json()["error"]
    one_variant = client.post("/api/v1/experiments", json=BODY | {"name": "y", "variants": [BODY["variants"][0]]},
                              headers=auth(keys["admin"]))
    assert one_variant.status_code == 422
    # numbers beyond what is stored or normalised: a 422 naming the field (planned_users was a 500)
    for field, change in (("planned_users", {"planned_users": 2**64}),
                          ("variants", {"variants": [{"name": "a", "weight": 1e308}, {"name": "b", "weight": 1e308}]})):
        too_big = client.post("/api/v1/experiments", json=BODY | {"name": "z"} | change, headers=auth(keys["admin"]))
        assert too_big.status_code == 422 and field in too_big.json()["error"], too_big.text


def test_cli_create_list_report(settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store.open(settings)  # the CLI opens the store itself: seed data, then close
    try:
        from inferwatch_collector.migrations import migrate, target_for

        migrate(store, target_for(settings, store))
        traffic(store, "cli-exp", 400, 0.8)
    finally:
        store.close()
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir")
    experiments_cli.register(parser.add_subparsers(dest="command"))

    def run(*argv: str) -> int:
        args = parser.parse_args(["--data-dir", str(Path(settings.data_dir)), "experiments", *argv])
        return args.func(args)

    assert run("create", "cli-exp", "--project", "p1", "--variant", "A=1", "--variant", "B=1",
               "--start", START.isoformat(), "--planned-users", "400") == 0
    assert "registered experiment cli-exp" in capsys.readouterr().out
    assert run("create", "cli-exp", "--project", "p1", "--variant", "A=1", "--variant", "B=1") == 2
    assert "already exists" in capsys.readouterr().err
    assert run("create", "bad", "--project", "p1", "--variant", "A") == 2
    assert "NAME=WEIGHT" in capsys.readouterr().err
    assert run("report", "cli-exp", "--project", "p1", "--save") == 0
    out = capsys.readouterr().out
    assert "verdict: SHIP, winner B" in out and "cost_per_call" in out and "SRM p" in out
    assert run("list", "--project", "p1") == 0
    assert "ship" in capsys.readouterr().out
    assert run("report", "cli-exp", "--project", "p1", "--json") == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "ship"
    assert run("report", "nope", "--project", "p1") == 1
