"""Start the dashboard as a ``streamlit run`` process pointed at a collector: used by ``inferwatch-server up`` and
``inferwatch-server dashboard``, and by the browser test, so all three run it the same way.

The key travels in the child's environment (``INFERWATCH_DASHBOARD_API_KEY``), never on its command line, where
``ps`` would show it. Streamlit runs headless, without usage statistics, error details or developer toolbar
(``client.showErrorDetails=none``: a failure is shown as a message, never as a traceback with file paths).
Importing this module does not import Streamlit.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.error import URLError
from urllib.request import urlopen

APP = Path(__file__).resolve().with_name("app.py")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def pick_port(host: str, preferred: int) -> int:
    """``preferred`` if it can be bound now, else any free port (0 means any)."""
    if preferred:
        with socket.socket() as s:
            try:
                s.bind((host, preferred))
                return preferred
            except OSError:
                pass
    return free_port(host)


def command(host: str, port: int) -> list[str]:
    """The ``streamlit run`` command line for the dashboard's entry file."""
    return [sys.executable, "-m", "streamlit", "run", str(APP), "--server.headless=true",
            f"--server.address={host}", f"--server.port={port}", "--browser.gatherUsageStats=false",
            "--client.showErrorDetails=none", "--client.toolbarMode=viewer", "--server.fileWatcherType=none",
            "--server.runOnSave=false", "--logger.level=warning"]


def environment(api_url: str, keys: Sequence[str], base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env.update(INFERWATCH_DASHBOARD_API_URL=api_url, INFERWATCH_DASHBOARD_API_KEY=",".join(keys))
    return env


@dataclass
class Dashboard:
    """A running dashboard process and its URL."""

    process: subprocess.Popen
    url: str

    def healthy(self) -> bool:
        try:
            with urlopen(f"{self.url}/_stcore/health", timeout=2) as response:  # noqa: S310 - our own URL
                return response.status == 200
        except (URLError, OSError):
            return False

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        """Block until Streamlit answers its health check; RuntimeError if the process exits or time runs out."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the dashboard exited with status {self.process.returncode}")
            if self.healthy():
                return
            time.sleep(0.2)
        raise RuntimeError(f"the dashboard did not answer at {self.url} within {timeout_s:g} s")

    def stop(self, timeout_s: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout_s)


def start(api_url: str, keys: Sequence[str], *, host: str = "127.0.0.1", port: int = 0, exact: bool = False,
          stdout: int | IO[bytes] | None = subprocess.DEVNULL, stderr: int | IO[bytes] | None = None,
          env: Mapping[str, str] | None = None, own_process_group: bool = False) -> Dashboard:
    """Start the dashboard on ``host:port``: exactly that port if ``exact`` (a configured port: a clash must show,
    not move the dashboard), else that port if free or any free one. Streamlit's own banner is dropped.

    ``own_process_group``: the dashboard gets a process group of its own, so a Ctrl-C in the terminal reaches only
    the caller, which stops the dashboard itself (:meth:`Dashboard.stop`) as part of its own shutdown."""
    port = port if exact and port else pick_port(host, port)
    process = subprocess.Popen(command(host, port), env=environment(api_url, keys, env), stdout=stdout,
                               stderr=stderr, process_group=0 if own_process_group else None)
    local = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return Dashboard(process, f"http://{local}:{port}")
