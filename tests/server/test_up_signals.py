"""``inferwatch-server up --demo-traffic`` stops cleanly on Ctrl-C and on SIGTERM.

A terminal's Ctrl-C is SIGINT to the whole foreground process group: the server, its ingest workers, the demo
app and the dashboard all get it at once. The test does the same: it starts ``up`` as the leader of a process
group of its own, waits until every part runs (ingest workers, the demo app sending, the dashboard answering),
signals the group with ``os.killpg`` and checks the way out: status 0, no traceback, no broken worker pool, one
stop line per service, and no process of the tree left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from tests.helpers.live_collector import free_port

ROOT = Path(__file__).resolve().parents[2]
STOP_LINES = ("demo app: stopped after", "scheduler stopped", "ingest workers stopped (2)", "collector stopped",
              "dashboard stopped", "alert receiver stopped")
READY_LINES = ("Application startup complete", "demo app: ~", "dashboard ready: ")
FORBIDDEN = ("Traceback", "KeyboardInterrupt", "broke", "not available", "not configured")


class Output:
    """The process's combined stdout and stderr, read as it comes."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        assert proc.stdout is not None
        self._thread = threading.Thread(target=lambda: self.lines.extend(proc.stdout or ()), daemon=True)
        self._thread.start()

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def wait_for(self, needles: tuple[str, ...], proc: subprocess.Popen[str], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not all(needle in self.text for needle in needles):
            assert proc.poll() is None, f"up exited early ({proc.returncode}):\n{self.text}"
            assert time.monotonic() < deadline, f"not ready within {timeout_s:g} s:\n{self.text}"
            time.sleep(0.2)

    def close(self) -> None:
        self._thread.join(timeout=10)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_up_stops_cleanly_when_its_process_group_is_signalled(sig: signal.Signals, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
    env.update(INFERWATCH_DATA_DIR=str(tmp_path / "data"), INFERWATCH_PORT=str(free_port()),
               INFERWATCH_METRICS_PORT="0", INFERWATCH_DASHBOARD_PORT=str(free_port()),
               INFERWATCH_INGEST_WORKERS="2", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "inferwatch_server", "up", "--demo-traffic", "--no-history", "--rate", "5"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    output = Output(proc)
    tree: list[psutil.Process] = []
    try:
        output.wait_for(READY_LINES, proc, timeout_s=180)
        time.sleep(3)  # the demo app's calls are in flight, its spans going through the ingest workers
        tree = psutil.Process(proc.pid).children(recursive=True)
        assert len(tree) >= 4, tree  # 2 ingest workers (+ their resource tracker), the demo app, the dashboard
        os.killpg(proc.pid, sig)
        status = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for child in tree:
            if child.is_running() and child.status() != psutil.STATUS_ZOMBIE:
                child.kill()
        output.close()
    text = output.text
    assert status == 0, text
    for word in FORBIDDEN:
        assert word not in text, f"{word!r} in the output:\n{text}"
    for line in STOP_LINES:
        assert text.count(line) == 1, f"{line!r} expected once:\n{text}"
    # multiprocessing's resource tracker ends when the server's end of its pipe closes, a moment after the server
    _, alive = psutil.wait_procs(tree, timeout=15)
    left = [(child.pid, " ".join(child.cmdline())[:120]) for child in alive
            if child.is_running() and child.status() != psutil.STATUS_ZOMBIE]
    assert not left, f"left running: {left}"
