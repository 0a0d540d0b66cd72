"""The in-flight budget of every body-decoding route (collector ``inflight.py``): charged by decompressed size,
a per-project share, a bounded wait then 429/503; and the collector under gzip bodies that inflate to ~15 MiB.

The flood tests run a real collector in its own process (``tests/helpers/collector_process.py``) with one ingest
worker, the default deployment's shape: the test's sender threads would otherwise share the collector's GIL.
"""

from __future__ import annotations

import asyncio
import gzip
import threading
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from inferwatch_collector.inflight import InflightBudget, Overloaded, TooLarge, body_cost
from inferwatch_server.app import create_app
from tests.helpers import payloads
from tests.helpers.collector_process import collector_process
from tests.helpers.genai_logs import record_events
from tests.helpers.hostile_bodies import ROUTES, Flood, Probe, hostile_body
from tests.helpers.keys import Keys
from tests.helpers.metrics import scrape

MIB = 1024 * 1024


# --- the budget itself ----------------------------------------------------------------------------------------
def test_a_flooding_project_waits_while_another_project_is_admitted_at_once():
    async def scenario():
        budget = InflightBudget(100, project_share=0.5, max_wait_s=5)
        a1 = await budget.reserve("A", 30, "traces")
        await budget.reserve("A", 20, "traces")  # A now holds its share (50)
        a3 = asyncio.ensure_future(budget.reserve("A", 10, "traces"))
        await asyncio.sleep(0.05)
        assert not a3.done()  # over A's share: it waits
        b = await asyncio.wait_for(budget.reserve("B", 40, "traces"), 0.5)  # B is let in at once
        assert (budget.used, budget.held["B"]) == (90, 40)
        a1.release()
        assert (await asyncio.wait_for(a3, 1)).size == 10  # woken by A's own release
        b.release()
        return budget

    budget = asyncio.run(scenario())
    assert budget.held == {"A": 30} and budget.counters.waits["traces"] == 1


def test_waiters_are_woken_least_holding_project_first():
    async def scenario():
        budget = InflightBudget(100, project_share=1.0, max_wait_s=5)
        await budget.reserve("A", 30, "metrics")
        a2 = await budget.reserve("A", 40, "metrics")
        order: list[str] = []

        async def want(project: str) -> None:
            await budget.reserve(project, 50, "metrics")
            order.append(project)

        waiting = [asyncio.ensure_future(want("A")), asyncio.ensure_future(want("B"))]
        await asyncio.sleep(0.05)  # A's request queued first; neither fits
        a2.release()  # room for one: B holds nothing, A still 30
        await asyncio.sleep(0.05)
        for task in waiting:
            task.cancel()
        return order, budget

    order, budget = asyncio.run(scenario())
    assert order == ["B"] and budget.waiting == 0


@pytest.mark.parametrize("share,status", [(0.5, 429), (1.0, 503)])
def test_a_request_that_finds_no_room_is_answered_after_the_bounded_wait(share, status):
    async def scenario():
        budget = InflightBudget(100, project_share=share, max_wait_s=0.2)
        await budget.reserve("A", 60, "logs")
        started = time.monotonic()
        with pytest.raises(Overloaded) as raised:
            await budget.reserve("A", 60, "logs")
        return budget, raised.value, time.monotonic() - started

    budget, exc, waited = asyncio.run(scenario())
    assert exc.status == status and exc.retry_after_s == 1 and 0.15 < waited < 2
    assert budget.waiting == 0 and budget.used == 60  # the refused request holds nothing
    reason = "project_share" if status == 429 else "budget_full"
    assert budget.counters.rejected[("logs", reason)] == 1


def test_a_gzip_body_is_charged_by_its_decompressed_size():
    text = b"x" * (3 * MIB)
    body = gzip.compress(text)
    charge, cap = body_cost(body, "gzip", 16 * MIB)
    assert len(body) < 64 * 1024 and charge >= len(text) + len(body) and cap >= len(text)
    assert body_cost(text, None, 16 * MIB) == (len(text), 16 * MIB)  # identity: the body is what it costs
    with pytest.raises(TooLarge, match=str(MIB)):  # the trailer says more than the limit: refused unread
        body_cost(body, "gzip", MIB)


# --- through the app ------------------------------------------------------------------------------------------
def _post(client: TestClient, route: str, body: bytes, key: str, encoding: str = "gzip"):
    return client.post(route, content=body, headers={**Keys.header(key), "Content-Type": "application/json",
                                                     "Content-Encoding": encoding})


@pytest.mark.parametrize("route", ROUTES)
def test_a_gzip_bomb_is_413_naming_the_limit_and_holds_nothing_on_every_route(client, keys, route):
    bomb = gzip.compress(b"[" + b" " * (20 * MIB) + b"]", 9)  # 20 KiB that would inflate to 20 MiB
    response = _post(client, route, bomb, keys.ingest)
    assert response.status_code == 413
    assert str(16 * MIB) in response.text
    assert "inferwatch_inflight_request_bytes 0" in scrape(client)


def test_a_trailer_that_understates_the_size_is_still_bounded(client, keys):
    # Two gzip members: the trailer read is the last one's (tiny); the first inflates to 1 MiB. The decoder
    # overruns its cap, the reservation grows to the limit, and the request succeeds; a lie past the limit is 413.
    text = payloads.to_otlp_json(payloads.make_request(payloads.otel_genai_span()))
    padded = text[:-1] + b',"pad":"' + b"p" * MIB + b'"}'  # an unknown key: ignored, as OTLP/JSON requires
    body = gzip.compress(padded) + gzip.compress(b" ")
    assert body_cost(body, "gzip", 16 * MIB)[1] < MIB  # the claim is small
    response = _post(client, "/v1/traces", body, keys.ingest)
    assert response.status_code == 200, response.text
    liar = gzip.compress(b" " * (17 * MIB)) + gzip.compress(b" ")
    assert _post(client, "/v1/traces", liar, keys.ingest).status_code == 413


def test_every_body_route_decodes_in_worker_processes(app_settings, store, keys):
    # What a route hands the pool and gets back must cross a process boundary (pickle), errors included.
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    pooled = app_settings.model_copy(update={"ingest_workers": 1})
    logs, _ = record_events(lambda emit: emit.event("gen_ai.user.message", {"content": "hello"}))
    trace_id = "0af7651916cd43dd8448eb211c80319c"
    with TestClient(create_app(pooled, store=store)) as client:
        assert client.app.state.ingest_pool.workers == 1

        def post(route: str, body: bytes, content_type: str = "application/x-protobuf"):
            return client.post(route, content=gzip.compress(body), headers={
                **Keys.header(keys.ingest), "Content-Type": content_type, "Content-Encoding": "gzip"})

        traces = payloads.make_request(payloads.otel_genai_span()).SerializeToString()
        assert post("/v1/traces", traces).status_code == 200
        assert post("/v1/metrics", ExportMetricsServiceRequest().SerializeToString()).status_code == 200
        assert post("/v1/logs", logs.SerializeToString()).status_code == 200
        good = post("/api/v1/feedback", b'{"trace_id": "%s", "score": 1}' % trace_id.encode(), "application/json")
        assert good.status_code == 202, good.text
        bad = post("/api/v1/feedback", b'{"trace_id": "zz", "score": 1}', "application/json")
        assert bad.status_code == 422 and "trace_id" in bad.text
        assert post("/api/v1/feedback", b"{not json", "application/json").status_code == 400
        assert client.app.state.inflight.used == 0
    assert store.query("SELECT count() FROM prompt_logs").result_rows[0][0] == 1


def test_budget_settings_are_validated():
    from pydantic import ValidationError

    from inferwatch_collector.settings import Settings

    for bad in ({"inflight_project_share": 0}, {"inflight_project_share": 1.5}, {"inflight_wait_s": 6},
                {"max_inflight_bytes": 10}):
        with pytest.raises(ValidationError):
            Settings(**bad)
    assert 64 * MIB <= Settings().max_inflight_bytes <= 1024 * MIB


# --- a real collector under hostile bodies --------------------------------------------------------------------
FLOOD_ENV = {"INFERWATCH_INGEST_WORKERS": "1", "INFERWATCH_MAX_INFLIGHT_BYTES": str(64 * MIB),
             "INFERWATCH_MAX_BODY_BYTES": str(16 * MIB)}

#: RSS growth allowed during the flood: the budget (64 MiB) plus what one worker's decode of one ~15 MiB body of
#: tiny JSON objects costs (measured 160-260 MiB: Python dicts, then protobuf messages), plus 128 MiB for the
#: allocators keeping freed memory and the machine's noise. Without the budget and the pool it was 1.5 GiB for
#: ten /v1/metrics bodies alone.
RSS_GROWTH_LIMIT = 64 * MIB + 320 * MIB + 128 * MIB


def test_gzip_bodies_inflating_to_15_mib_leave_rss_bounded_and_healthz_answering(tmp_path):
    bodies = [(route, hostile_body(route, 15, salt)) for route in ROUTES for salt in range(10)]
    with collector_process(tmp_path / "data", env=FLOOD_ENV) as collector:
        probe = Probe(collector.url, collector.pid)
        idle = probe.tree_rss()
        with Flood(collector.url, collector.keys["p1"], bodies) as flood, probe:
            statuses = flood.send()
        metrics = httpx.get(collector.metrics_url, trust_env=False).text
    assert set(statuses) <= {200, 202, 413, 422, 429, 503}, statuses  # a clear answer each, never a 500
    growth = max(probe.rss) - idle
    assert growth < RSS_GROWTH_LIMIT, f"RSS grew {growth / MIB:.0f} MiB"
    # /healthz within 100 ms: every poll but the slowest 1% (p99), and none over 500 ms. The 1% is the machine, not
    # the collector: on 2 cores at load average ~8 an idle collector's /healthz already spikes to 35-50 ms and
    # its event loop lags up to 50 ms with nothing to do; decoding happens in a worker process at lower priority.
    # Before the budget and the pool, this flood stalled /healthz for seconds (3.5 s for ten /v1/metrics bodies).
    slow = sorted(round(s * 1000) for s in probe.latencies_s if s > 0.1)
    assert len(probe.latencies_s) > 50, "the probe did not run"
    assert probe.p99_s() <= 0.1 and max(probe.latencies_s) < 0.5, f"/healthz over 100 ms (ms): {slow}"
    assert statuses.count(200) >= 1 and statuses.count(429) >= 1, statuses  # A is held to its share
    assert 'inferwatch_inflight_rejections_total{route="metrics",reason="project_share"}' in metrics


def test_one_projects_flood_does_not_hold_another_projects_request(tmp_path):
    flood_bodies = [("/v1/traces", hostile_body("/v1/traces", 15, salt)) for salt in range(6)]
    small = payloads.make_request(payloads.otel_genai_span()).SerializeToString()
    env = {**FLOOD_ENV, "INFERWATCH_INFLIGHT_WAIT_S": "5"}  # A's requests queue as long as they may
    with collector_process(tmp_path / "data", env=env) as collector:
        done: dict[str, float] = {}
        with Flood(collector.url, collector.keys["p1"], flood_bodies, timeout_s=120) as flood:
            flooding = threading.Thread(target=lambda: done.setdefault("A", flood.send()))
            flooding.start()
            time.sleep(0.5)  # A's bodies are in: one decoding, the rest waiting
            started = time.monotonic()
            answer = httpx.post(collector.url + "/v1/traces", content=small, trust_env=False, timeout=30,
                                headers={**Keys.header(collector.keys["p2"]),
                                         "Content-Type": "application/x-protobuf"})
            done["B"] = time.monotonic() - started
            a_still_running = flooding.is_alive()
            flooding.join(120)
    assert answer.status_code == 200
    assert a_still_running, "B's request should be answered while A's flood is still being worked off"
