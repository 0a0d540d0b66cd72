"""``GET /api/v1/capacity/plan`` and ``plan --project``: observed traffic read per project, overrides, errors."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.rows import LLM_CALL_COLUMNS
from inferwatch_collector.store import Store

from tests.helpers.keys import Keys
from tests.helpers.factories import llm_call
from tests.helpers.cli import run_cli

MINUTE_US = 60_000_000
GPU = {"model": "llama-3-8b", "gpu_mem_gib": 80, "gpu_hour_usd": 2.0, "replica_tps": 1000}
BRIEF = {"model": "llama-3-70b", "gpu_mem_gib": 80, "gpu_hour_usd": 3.5, "replica_tps": 2500, "qps": 50,
         "tokens": 400, "context": 4096, "api_usd_per_1m": 3.0}


def seed(store: Store) -> int:
    """p1: 90 gpt-4o calls in one minute then 1 a minute for 29 minutes (300 out / 1000 in tokens, $0.003
    each), plus 10 unpriced calls to a local model; an embeddings call; p2: a much busier minute."""
    base = (int(time.time()) // 60 - 60) * MINUTE_US  # an hour ago, on the minute
    gpt = dict(model="gpt-4o", input_tokens=1000, output_tokens=300, cost_usd=0.003)
    rows = [llm_call("p1", start_time=base + i * 500_000, **gpt) for i in range(90)]
    rows += [llm_call("p1", start_time=base + m * MINUTE_US, **gpt) for m in range(1, 30)]
    rows += [llm_call("p1", start_time=base + m * MINUTE_US + 1, model="llama-local", input_tokens=100,
                      output_tokens=50, cost_usd=0.0, unpriced=True) for m in range(10)]
    rows.append(llm_call("p1", start_time=base, operation="embeddings", model="text-embedding-3-small",
                         output_tokens=0, input_tokens=5000, cost_usd=0.0001))
    rows += [llm_call("p2", start_time=base + i * 100_000, model="gpt-4o", output_tokens=5000, cost_usd=1.0)
             for i in range(600)]
    store.insert_columns("llm_calls", [list(c) for c in zip(*rows)], LLM_CALL_COLUMNS)
    return base


def get(client, key, **params):
    return client.get("/api/v1/capacity/plan", params=params, headers=Keys.header(key))


def test_plan_from_observed_traffic(client, keys, store):
    seed(store)
    body = get(client, keys.read, traffic_model="gpt-4o", **GPU).json()
    seen = body["observed"]
    assert seen["calls"] == 119 and seen["peak_qps"] == pytest.approx(90 / 60)
    assert seen["mean_qps"] == pytest.approx(119 / (30 * 60))  # first to last minute, inclusive
    assert seen["mean_output_tokens"] == 300 and seen["p95_input_tokens"] == 1000
    assert seen["p95_context_tokens"] == 1300
    assert seen["api_usd_per_1m_output"] == pytest.approx(0.003 / 300 * 1e6)  # $10 per 1M output tokens
    p = body["plan"]
    assert (p["qps"], p["tokens"], p["context"]) == (pytest.approx(1.5), 300, 1300)
    assert p["mean_qps"] == pytest.approx(119 / 1800) and p["api_usd_per_1m"] == pytest.approx(10)
    assert set(body["sources"].values()) == {"observed"}
    assert p["replicas"] == 1 and p["tp"] == 1 and p["verdict"] == "api"  # one GPU at 0.07 QPS on average: ~$28/1M


def test_query_values_override_observed_ones(client, keys, store):
    seed(store)
    body = get(client, keys.read, traffic_model="gpt-4o", qps=20, tokens=500, **GPU).json()
    p = body["plan"]
    assert p["qps"] == 20 and p["tokens"] == 500 and p["mean_qps"] == 20  # a target peak: no observed mean
    assert body["sources"]["qps"] == "given" and body["sources"]["context"] == "observed"


def test_unpriced_traffic_is_said_not_priced_at_zero(client, keys, store):
    seed(store)
    body = get(client, keys.read, traffic_model="llama-local", **GPU).json()
    assert body["observed"]["unpriced_calls"] == 10 and body["observed"]["api_usd_per_1m_output"] is None
    assert body["plan"]["api_usd_per_1m"] is None and body["plan"]["verdict"] == "unknown"
    assert any("unpriced" in note for note in body["notes"])
    everything = get(client, keys.read, **GPU).json()  # embeddings are left out: they decode nothing
    assert everything["observed"]["calls"] == 129
    assert everything["observed"]["api_usd_per_1m_output"] == pytest.approx(10)  # from the priced calls only
    assert any("10 of 129" in note for note in everything["notes"])


def test_projects_are_isolated(client, keys, store):
    seed(store)
    mine = get(client, keys.read, **GPU).json()["observed"]
    theirs = get(client, keys.other_project, **GPU).json()["observed"]
    assert mine["peak_qps"] == pytest.approx(91 / 60) and theirs["peak_qps"] == pytest.approx(10)
    assert theirs["calls"] == 600 and theirs["mean_output_tokens"] == 5000


def test_the_briefs_example_over_the_api(client, keys):
    body = get(client, keys.read, brief=True, **BRIEF).json()
    assert body["observed"] is None  # every traffic value given: nothing is read
    naive, fixed = body["brief"], body["plan"]
    assert (naive["tp"], round(naive["weights_gib_per_gpu"], 1), round(naive["kv_headroom_gib_per_gpu"], 1),
            naive["max_concurrency"], naive["replicas"], round(naive["usd_per_1m"], 2)
            ) == (4, 39.1, 40.9, 4, 3, 1.56)
    assert naive["deliverable_tps"] == 7500 < naive["demanded_tps"] == 20_000
    assert fixed["replicas_before_headroom"] == 8 and fixed["replicas"] == 10


@pytest.mark.parametrize(("params", "status", "field"), [
    ({**BRIEF, "gpu_mem_gib": -80}, 422, "gpu_mem_gib"),
    ({**BRIEF, "qps": 0}, 422, "qps"),
    ({**BRIEF, "model": "gpt-4o"}, 422, "model"),
    ({**BRIEF, "model": "llama-3.1-405b"}, 422, "model"),
    ({**BRIEF, "headroom": 0.5}, 422, "headroom"),
    ({**BRIEF, "precision": "fp8"}, 422, "precision"),
    ({**BRIEF, "tokens": "many"}, 422, "tokens"),
    ({k: v for k, v in BRIEF.items() if k != "replica_tps"}, 422, "replica_tps"),
    ({**GPU, "traffic_model": "none-such"}, 422, "qps"),
    ({**GPU, "start": "2030-01-02T00:00:00Z", "end": "2030-01-01T00:00:00Z"}, 400, "start"),
    ({**BRIEF, "overhead": 1e300}, 422, "overhead"),  # once an OverflowError: a 500
])
def test_bad_input_names_the_field(client, keys, params, status, field):
    response = get(client, keys.read, **params)
    assert response.status_code == status
    assert field in response.json()["error"]


def test_needs_a_read_key(client, keys):
    assert client.get("/api/v1/capacity/plan", params=BRIEF).status_code == 401
    assert get(client, keys.ingest, **BRIEF).status_code == 403


def test_cli_reads_observed_traffic_from_the_data_dir(settings, capsys):
    store = Store.open(settings)  # seeded and closed before the CLI opens the same directory
    try:
        migrate(store, target_for(settings, store))
        seed(store)
    finally:
        store.close()
    assert run_cli("--data-dir", str(settings.data_dir), "plan", "--model", "llama-3-8b", "--gpu-mem-gib", "80",
                   "--gpu-hour-usd", "2", "--replica-tps", "1000", "--project", "p1", "--traffic-model", "gpt-4o",
                   "--tokens", "250") == 0
    out = capsys.readouterr().out
    assert "Observed (project p1, model gpt-4o" in out and "119 calls, peak 1.5 QPS" in out
    assert "1.5 QPS peak (observed)" in out and "250 output tokens (given)" in out
    assert "context 1300 tokens (observed)" in out and "API $10.00/1M (observed)" in out
    since = (datetime.now(timezone.utc) - timedelta(days=7)).isoformat()[:10]
    assert since in out
