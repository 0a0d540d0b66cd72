"""What a running collector loads: no heavy library it does not use, in the collector or its ingest workers.

The idle footprint (``bench/footprint.py``) depends on it: numpy and scipy belong to the A/B analysis (loaded when
it runs), pandas, numpy and pyarrow to clickhouse-connect's and chDB's DataFrame and Arrow APIs (never used),
Streamlit and Plotly to the dashboard's own process, spaCy, Presidio and Playwright to tests only. An ingest
worker holds the decode/normalise/encode pipeline, not the HTTP app, the settings or the database engine.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.helpers import payloads
from tests.helpers.collector_process import collector_process
from tests.helpers.keys import Keys

#: Never in a collector process nor an ingest worker, whatever it has served.
HEAVY = {"numpy", "scipy", "pandas", "pyarrow", "polars", "streamlit", "plotly", "spacy", "thinc",
         "presidio_analyzer", "playwright", "inferwatch_dashboard"}
#: Also never in an ingest worker: the collector's HTTP side, settings, engine and jobs.
NOT_IN_WORKERS = {"fastapi", "starlette", "uvicorn", "pydantic_settings", "chdb", "apscheduler",
                  "inferwatch_alerts", "slack_sdk", "pagerduty"}

REQUEST = payloads.make_request(payloads.otel_genai_span(), payloads.openinference_span(),
                                payloads.traceloop_openai_span(), payloads.langfuse_span(), payloads.sdk_span())

# The platform's app in a fresh interpreter, lifespan and all (scheduler on, one ingest worker), after an
# ingest and a query; prints the top-level packages of the app's process and of its worker.
APP_CHILD = r"""
import asyncio, json, sys
from functools import partial
from fastapi.testclient import TestClient
from inferwatch_collector.auth import KeyStore
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app

settings = Settings(data_dir=sys.argv[1], clickhouse_url="", cluster="", database="inferwatch",
                    migration_mode="auto", metrics_port=0, ingest_workers=1, collector_scheduler="on",
                    flush_interval_s=0.02)
store = Store.open(settings)
migrate(store, target_for(settings, store))
key = KeyStore(store, cache_seconds=0).create_key("p1", ["ingest", "read"])
body = open(sys.argv[2], "rb").read()
with TestClient(create_app(settings, store=store)) as client:
    headers = {"Authorization": f"Bearer {key}"}
    sent = client.post("/v1/traces", content=body, headers={**headers, "Content-Type": "application/x-protobuf"})
    assert sent.status_code == 200, sent.text
    assert client.get("/api/v1/calls/summary", headers=headers).status_code == 200
    pool = client.app.state.ingest_pool
    packages = "sorted({m.split('.')[0] for m in __import__('sys').modules})"  # eval'd in the worker
    worker = asyncio.run(pool.run("p1", partial(eval, packages)))
app = sorted({m.split(".")[0] for m in sys.modules})
store.close()
print(json.dumps({"app": app, "worker": worker}))
"""


def packages_mapped(pid: int) -> set[str]:
    """Installed packages with a shared object mapped into ``pid`` (``site-packages/<name>[.libs]/...``)."""
    found = set()
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            match = re.search(r"/site-packages/([^/]+)/", line)
            if match:
                found.add(match.group(1).removesuffix(".libs"))
    return found


def process_tree(pid: int) -> list[int]:
    pids = [pid]
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            for child in f.read().split():
                pids += process_tree(int(child))
    return pids


def test_the_running_app_and_its_worker_import_no_heavy_module(tmp_path: Path) -> None:
    body = tmp_path / "request.bin"
    body.write_bytes(REQUEST.SerializeToString())
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
    done = subprocess.run([sys.executable, "-c", APP_CHILD, str(tmp_path / "data"), str(body)], env=env,
                          check=False, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert "chdb" in loaded["app"] and "apscheduler" in loaded["app"]  # the probe saw a live, scheduling app
    assert "inferwatch_collector" in loaded["worker"]
    assert HEAVY & set(loaded["app"]) == set()
    assert (HEAVY | NOT_IN_WORKERS) & set(loaded["worker"]) == set()


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_collector_process_tree_maps_no_heavy_native_library(tmp_path: Path) -> None:
    env = {"INFERWATCH_COLLECTOR_SCHEDULER": "on", "INFERWATCH_INGEST_WORKERS": "2"}
    with collector_process(tmp_path / "data", env=env) as collector:
        for _ in range(4):  # both workers decode and encode
            answer = httpx.post(collector.url + "/v1/traces", content=REQUEST.SerializeToString(), trust_env=False,
                                timeout=30, headers={**Keys.header(collector.keys["p1"]),
                                                     "Content-Type": "application/x-protobuf"})
            assert answer.status_code == 200, answer.text
        tree = process_tree(collector.pid)
        mapped = {pid: packages_mapped(pid) for pid in tree}
    assert len(tree) >= 3  # the collector and its two workers (and multiprocessing's resource tracker)
    assert "chdb" in mapped[collector.pid]
    assert {pid: found & HEAVY for pid, found in mapped.items()} == {pid: set() for pid in tree}
