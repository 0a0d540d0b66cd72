"""`make demo`'s command, end to end: `inferwatch-server up --demo-traffic` on a fresh embedded database.

The platform must come up on chDB, print its keys, and the demo app's traffic (the SDK around the real openai and
anthropic clients, against the mock LLM server) must become visible through the query API: the call count goes up
between two reads, calls are priced, traces hold the retrieval step, users and variants are attributed, and the
e-mail addresses some questions carry never reach the database in clear.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers.processes import interrupt_group

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.mark.slow
def test_up_with_demo_traffic_serves_growing_counts(tmp_path):
    port, metrics_port = free_port(), free_port()
    data_dir = tmp_path / "data"
    env = {**os.environ, "INFERWATCH_DATA_DIR": str(data_dir), "INFERWATCH_PORT": str(port),
           "INFERWATCH_METRICS_PORT": str(metrics_port), "INFERWATCH_FLUSH_INTERVAL_S": "0.2"}
    log = (tmp_path / "up.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferwatch_server", "up", "--demo-traffic", "--no-history", "--rate", "8"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"

        def ready():
            try:
                return httpx.get(f"{base}/readyz", timeout=1).status_code == 200
            except httpx.HTTPError:
                assert proc.poll() is None, (tmp_path / "up.log").read_text()
                return False

        wait_for(ready, 90, "the collector to be ready")
        keys = json.loads((tmp_path / "demo-keys.json").read_text())
        assert set(keys) == {"ingest", "read", "admin"}
        printed = (tmp_path / "up.log").read_text()
        assert keys["read"] in printed and f"{base}/docs" in printed
        assert httpx.get(f"{base}/docs", timeout=5).status_code == 200  # `up` is the local try-out: docs on
        metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
        assert metrics_url in printed and httpx.get(f"{base}/metrics", timeout=5).status_code == 404
        assert "inferwatch_spans_accepted_total" in httpx.get(metrics_url, timeout=5).text

        def calls() -> int:
            r = httpx.get(f"{base}/api/v1/calls/summary", headers={"Authorization": f"Bearer {keys['read']}"},
                          timeout=5)
            assert r.status_code == 200, r.text
            return r.json()["calls"]

        first = wait_for(calls, 60, "demo traffic to arrive")
        wait_for(lambda: calls() > first, 30, "the call count to grow")
        models = httpx.get(f"{base}/api/v1/cost/by-model", headers={"Authorization": f"Bearer {keys['read']}"},
                           timeout=5).json()
        assert len({m["model"] for m in models}) >= 3  # several models, as a real app would have
        assert {m["provider"] for m in models} >= {"openai", "anthropic"}
        assert sum(m["cost_usd"] for m in models) > 0  # priced at ingest
    finally:
        # the demo app's exit (up to 20 s waited for), then the collector's graceful shutdown
        interrupt_group(proc, wait_s=60)
        log.close()
    # stopped like Ctrl-C in a terminal (the whole group): the demo app ends first, while the collector still
    # serves, so its last spans and feedback arrive
    printed = (tmp_path / "up.log").read_text()
    stopped_lines = re.findall(r"demo app: stopped after .*", printed)
    assert len(stopped_lines) == 1, printed[-4000:]
    [stopped] = stopped_lines
    assert re.search(r"dropped 0; feedback sent \d+, failed 0$", stopped), stopped
    for line in re.findall(r"demo app: (?!~).*", printed):  # progress and stop lines count in words, no dict
        assert re.match(r"demo app: (stopped after )?(\d+ \w+(, \d+ \w+)*|no interactions yet); SDK exported",
                        line), line
    assert "cannot reach the collector" not in printed
    # the demo process handed the data directory back: it can be opened again
    from inferwatch_collector.settings import Settings
    from inferwatch_collector.store import Store

    store = Store.open(Settings(data_dir=data_dir))
    try:
        assert store.query("SELECT count() FROM llm_calls").result_rows[0][0] >= first
        attributed = store.query("SELECT countIf(user_hash != ''), countIf(variant != ''), count() "
                                 "FROM llm_calls WHERE service_name = 'demo-support-assistant' "
                                 "AND feature = 'answer'").result_rows[0]
        assert attributed[2] > 0 and attributed[0] == attributed[1] == attributed[2]
        retrieval = store.query("SELECT count() FROM spans WHERE name = 'retrieve_docs'").result_rows[0][0]
        assert retrieval > 0
        leaked = store.query("SELECT count() FROM prompt_logs WHERE positionCaseInsensitive(prompt, "
                             "'jane.doe@example.com') > 0").result_rows[0][0]
        assert leaked == 0
    finally:
        store.close()
