"""A real collector in its own process (``inferwatch-server collector``), for tests that measure it from outside:
its RSS, and how fast it answers while the test's own threads are busy sending (in the test process they would
share its GIL and be blamed on it).

The database is migrated and the keys made here first (one process per chDB directory), then the store is closed
and the collector started on it with ``INFERWATCH_*`` settings.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from inferwatch_collector.auth import KeyStore
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from tests.helpers.live_collector import free_port


@dataclass
class RunningCollector:
    url: str
    pid: int
    keys: dict[str, str]  # project -> ingest key
    metrics_url: str  # the internal listener's /metrics


@contextmanager
def collector_process(data_dir: Path, projects: tuple[str, ...] = ("p1", "p2"),
                      env: dict[str, str] | None = None, timeout_s: float = 90) -> Iterator[RunningCollector]:
    """The collector serving ``data_dir`` on a free port with ``env`` (``INFERWATCH_*``) added, an ``ingest`` key
    per project; stopped (SIGINT, then SIGKILL) on exit."""
    settings = Settings(data_dir=data_dir, clickhouse_url="", cluster="", database="inferwatch",
                        migration_mode="auto")
    store = Store.open(settings)
    try:
        migrate(store, target_for(settings, store))
        keystore = KeyStore(store, cache_seconds=0)
        keys = {project: keystore.create_key(project, ["ingest"]) for project in projects}
    finally:
        store.close()
    port = free_port()
    metrics_port = free_port()
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
    child_env.update({"INFERWATCH_COLLECTOR_SCHEDULER": "off", "INFERWATCH_LOG_LEVEL": "WARNING", **(env or {})})
    command = [sys.executable, "-m", "inferwatch_server", "--data-dir", str(data_dir), "collector",
               "--host", "127.0.0.1", "--port", str(port), "--metrics-port", str(metrics_port)]
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    log = open(data_dir.parent / "collector.log", "wb")
    proc = subprocess.Popen(command, env=child_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the collector exited with {proc.returncode}: "
                                   f"{(data_dir.parent / 'collector.log').read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(url + "/readyz", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the collector was not ready in time")
            time.sleep(0.1)
        yield RunningCollector(url, proc.pid, keys, f"http://127.0.0.1:{metrics_port}/metrics")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        log.close()
