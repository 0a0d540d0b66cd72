"""Small gzip bodies that inflate to many MiB of valid-looking JSON, one builder per body-decoding route, and a
probe that polls ``/healthz`` and samples the RSS of a process tree while they are sent.

The shapes are the expensive ones: many tiny JSON objects (each becomes a Python dict, then a protobuf message),
so decoding one costs several times its decompressed size. Shared by the hostile-body tests and
``bench/hostile_bodies.py``.
"""

from __future__ import annotations

import gzip
import threading
import time
from dataclasses import dataclass, field

import httpx
import orjson
import psutil

KV = [{"key": "gen_ai.system", "value": {"stringValue": "openai"}}]
ROUTES = ("/v1/metrics", "/v1/traces", "/v1/logs", "/api/v1/feedback")


def _metrics(n: int) -> object:
    point = {"asInt": "1", "timeUnixNano": "1700000000000000000", "attributes": KV}
    return {"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": "m", "sum": {"dataPoints": [point] * n}}]}]}]}


def _traces(n: int) -> object:
    now = str(time.time_ns())
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "chat",
            "startTimeUnixNano": now, "endTimeUnixNano": now, "attributes": KV * 4}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span] * n}]}]}


def _logs(n: int) -> object:
    record = {"timeUnixNano": str(time.time_ns()), "body": {"stringValue": "x"}, "attributes": KV * 4}
    return {"resourceLogs": [{"scopeLogs": [{"logRecords": [record] * n}]}]}


def _feedback(n: int) -> object:
    return [{"trace_id": "0af7651916cd43dd8448eb211c80319c", "score": 1}] * n


_BUILDERS = {"/v1/metrics": (_metrics, 123), "/v1/traces": (_traces, 414), "/v1/logs": (_logs, 309),
             "/api/v1/feedback": (_feedback, 58)}  # approximate JSON bytes per repeated item


def hostile_body(route: str, mib: float, salt: int = 0) -> bytes:
    """A gzip body for ``route`` inflating to about ``mib`` MiB of JSON (``salt`` makes bodies distinct, so the
    collector's retry deduplication does not fold them)."""
    build, item_bytes = _BUILDERS[route]
    text = orjson.dumps(build(int(mib * 1024 * 1024 / item_bytes)))
    return gzip.compress(text + b" " * salt, 9)


@dataclass
class Probe:
    """Polls ``base/healthz`` every ``interval_s`` and samples the RSS of ``pid`` and its children, on threads,
    until stopped. ``latencies_s``: one per poll (a failed poll counts as its time to fail)."""

    base: str
    pid: int
    interval_s: float = 0.02
    latencies_s: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def tree_rss(self) -> int:
        """RSS of ``pid`` and the children it had when first asked (listing children scans every process of the
        machine: done once, not per sample, so the sampler does not take the CPU it measures)."""
        if not hasattr(self, "_procs"):
            root = psutil.Process(self.pid)
            self._procs = [root, *root.children(recursive=True)]
        total = 0
        for proc in self._procs:
            try:
                total += proc.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _poll(self) -> None:
        with httpx.Client(timeout=5, trust_env=False) as client:
            while not self._stop.is_set():
                start = time.perf_counter()
                try:
                    client.get(self.base + "/healthz")
                except httpx.HTTPError:
                    pass
                self.latencies_s.append(time.perf_counter() - start)
                self._stop.wait(self.interval_s)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.rss.append(self.tree_rss())
            self._stop.wait(0.05)

    def __enter__(self) -> "Probe":
        self._threads = [threading.Thread(target=f, daemon=True) for f in (self._poll, self._sample)]
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(10)

    def p99_s(self) -> float:
        ordered = sorted(self.latencies_s)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0


class Flood:
    """POSTs every ``(route, gzip body)`` at once, one thread and client each (:meth:`send`: the status codes,
    0 for no answer). The clients are made on entering, before any clock starts: making one costs tens of
    milliseconds of CPU under the GIL (its TLS context), which would stall a collector served in this process
    and be blamed on it."""

    def __init__(self, base: str, key: str, bodies: list[tuple[str, bytes]], timeout_s: float = 60) -> None:
        self.base, self.key, self.bodies, self.timeout_s = base, key, bodies, timeout_s
        self.clients: list[httpx.Client] = []

    def __enter__(self) -> "Flood":
        self.clients = [httpx.Client(timeout=self.timeout_s, trust_env=False) for _ in self.bodies]
        return self

    def __exit__(self, *exc: object) -> None:
        for client in self.clients:
            client.close()

    def send(self) -> list[int]:
        statuses = [0] * len(self.bodies)
        start = threading.Barrier(len(self.bodies))
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json",
                   "Content-Encoding": "gzip"}

        def one(i: int, route: str, body: bytes) -> None:
            start.wait()
            try:
                statuses[i] = self.clients[i].post(self.base + route, content=body, headers=headers).status_code
            except httpx.HTTPError:
                statuses[i] = 0

        threads = [threading.Thread(target=one, args=(i, r, b)) for i, (r, b) in enumerate(self.bodies)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(self.timeout_s + 5)
        return statuses
