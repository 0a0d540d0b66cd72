"""The collector under test: one real ``inferwatch-server collector`` subprocess per data dir, started the way
an operator would (``migrate``, ``keys create``, then ``collector``), measured from outside (RSS and CPU of its
whole process tree, ingest workers included; its ``/metrics``)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

from ingest_payloads import PROJECT
from ingest_report import log


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_command() -> list[str]:
    exe = Path(sys.executable).parent / "inferwatch-server"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("inferwatch-server")
    return [found] if found else [sys.executable, "-m", "inferwatch_server"]


class Collector:
    """One ``inferwatch-server collector`` on its own data dir and port; keys are made before it starts."""

    def __init__(self, workdir: Path, name: str, env: dict[str, str] | None = None,
                 projects: tuple[str, ...] = (PROJECT,)) -> None:
        self.data_dir = workdir / name / "data"  # its spool goes beside it (the default): one per collector
        self.log_path = workdir / f"{name}.log"
        self.env = {k: v for k, v in os.environ.items() if k != "INFERWATCH_CLICKHOUSE_URL"}
        self.env.update(env or {})
        self.port = 0
        self.metrics_port = 0  # the internal /metrics listener
        self.projects = projects
        self.key = ""  # the first project's ingest+read key
        self.keys: dict[str, str] = {}  # project -> its key
        self.proc: subprocess.Popen | None = None
        self._log_file = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _cli(self, *args: str, timeout: float = 120) -> str:
        cmd = [*server_command(), "--data-dir", str(self.data_dir), *args]
        done = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[-len(args) - 2:])} failed ({done.returncode}):\n"
                               f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return done.stdout

    def start(self, timeout: float = 90.0) -> None:
        t = time.perf_counter()
        self._cli("migrate")
        for project in self.projects:
            out = self._cli("keys", "create", "--project", project, "--scope", "ingest", "--scope", "read")
            self.keys[project] = out.strip().splitlines()[-1].strip()
            if not self.keys[project].startswith("iwk_"):
                raise RuntimeError(f"unexpected `keys create` output: {out!r}")
        self.key = self.keys[self.projects[0]]
        self.port, self.metrics_port = free_port(), free_port()
        self._log_file = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [*server_command(), "--data-dir", str(self.data_dir), "collector", "--host", "127.0.0.1",
             "--port", str(self.port), "--metrics-port", str(self.metrics_port)],
            env=self.env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=2, trust_env=False) as client:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the collector exited with {self.proc.returncode}:\n{self.log_tail()}")
                try:
                    if client.get(self.base + "/readyz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the collector was not ready after {timeout:.0f}s:\n{self.log_tail()}")
                time.sleep(0.1)
        log(f"  collector up on {self.base} in {time.perf_counter() - t:.1f}s (migrate + key + start), "
            f"data dir {self.data_dir}")

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def processes(self) -> list[psutil.Process]:
        if self.proc is None or self.proc.poll() is not None:
            return []
        try:
            root = psutil.Process(self.proc.pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def rss(self) -> int:
        total = 0
        for p in self.processes():
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def cpu_seconds(self) -> float:
        total = 0.0
        for p in self.processes():
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        return total

    def metrics(self) -> dict[str, float]:
        """The collector's Prometheus counters (name{labels} -> value); empty when unavailable."""
        try:
            text = httpx.get(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=10, trust_env=False).text
        except httpx.HTTPError:
            return {}
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                try:
                    out[name] = float(value)
                except ValueError:
                    pass
        return out

    def stop(self) -> None:
        """SIGINT (graceful: the writer flushes), then SIGKILL of our own child if it does not exit."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
