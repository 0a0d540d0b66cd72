"""Sender models for the ingest bench: how clients post OTLP/HTTP bodies to the collector.

* :func:`send_all`: closed loop. N sender threads, each with its own keep-alive connection and exactly one
  request in flight, the next body sent when the previous one is answered: N exporters, each with a
  BatchSpanProcessor (one export request in flight per process), or, with many threads, a load generator.
* :func:`send_paced`: open loop. Bodies are sent on a fixed schedule whatever the collector's answers, so a slow
  answer does not slow the offered rate down; a request's latency counts from its scheduled time (a sender that
  is late to send is the collector's delay too).

Both honour ``503``/``429`` ``Retry-After`` (an exporter retries), and record each body's acknowledgement latency:
from its first attempt (or its slot) to its ``200``, retries included.
"""

from __future__ import annotations

import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Sequence

import httpx


@dataclass
class SendStats:
    requests: int = 0
    acks: int = 0
    rejected_503: int = 0
    failures: int = 0
    last_failure: str = ""
    first_send: float = 0.0
    last_ack: float = 0.0
    latencies: list[float] = field(default_factory=list)  # per acknowledged body, seconds to its 200
    lock: threading.Lock = field(default_factory=threading.Lock)


def _headers(key: str) -> dict[str, str]:
    return {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"}


def make_clients(n: int) -> list[httpx.Client]:
    """Keep-alive clients, one per sender thread, made once and reused across reps.

    ``verify=False`` only skips building an SSL context (about 30 ms of CPU per client; the URLs are plain
    http), ``trust_env=False`` keeps proxy settings from routing 127.0.0.1 elsewhere.
    """
    return [httpx.Client(timeout=httpx.Timeout(180.0, connect=10.0), verify=False, trust_env=False)
            for _ in range(n)]


def _deliver(client: httpx.Client, url: str, body: bytes, headers: dict[str, str], stats: SendStats, *,
             since: float, honour_retry_after: bool = True, stop_at: float | None = None) -> bool:
    """Post ``body`` until it is answered other than 503/429 (or once, without ``honour_retry_after``); its
    latency counts from ``since``. False when ``stop_at`` passed while retrying (the sender should stop)."""
    while True:
        try:
            response = client.post(url, content=body, headers=headers)
            status = response.status_code
        except httpx.HTTPError as exc:
            status, response = 0, None
            with stats.lock:
                stats.failures += 1
                stats.last_failure = f"{type(exc).__name__}: {exc}"
        now = time.perf_counter()
        with stats.lock:
            stats.requests += 1
            if status == 200:
                stats.acks += 1
                stats.last_ack = max(stats.last_ack, now)
                stats.latencies.append(now - since)
            elif status in (429, 503):
                stats.rejected_503 += 1
            elif status:
                stats.failures += 1
                stats.last_failure = f"HTTP {status}: {response.text[:200]}"
        if status == 200 or (status not in (0, 429, 503)):
            return True
        if not honour_retry_after:
            return True  # overload mode: move on to the next body at once
        if stop_at is not None and now >= stop_at:
            return False
        retry_after = 1.0
        if response is not None:
            try:
                retry_after = float(response.headers.get("retry-after", "1"))
            except ValueError:
                pass
        time.sleep(retry_after)


def send_all(base: str, key: str, payloads: Sequence[bytes], clients: Sequence[httpx.Client], *,
             honour_retry_after: bool = True, stop_at: float | None = None,
             body_for: Callable[[int], bytes] | None = None) -> SendStats:
    """Post ``payloads`` (or, with ``stop_at``, ``body_for(i)`` until then) from one thread per client, each
    thread with one request in flight (closed loop).

    Connections are warmed before the clock starts. Threads are the cheapest generator here: 512-span requests
    mean tens of requests per second, so the threads mostly wait on the collector.
    """
    url = base + "/v1/traces"
    headers = _headers(key)
    stats = SendStats()
    counter = itertools.count()
    barrier = threading.Barrier(len(clients) + 1)

    def worker(client: httpx.Client) -> None:
        try:
            client.get(base + "/healthz")
        except httpx.HTTPError:
            pass
        barrier.wait()
        while True:
            i = next(counter)
            if stop_at is None:
                if i >= len(payloads):
                    return
                body = payloads[i]
            else:
                if time.perf_counter() >= stop_at:
                    return
                body = body_for(i)
            if not _deliver(client, url, body, headers, stats, since=time.perf_counter(),
                            honour_retry_after=honour_retry_after, stop_at=stop_at):
                return

    threads = [threading.Thread(target=worker, args=(c,), name=f"sender-{i}", daemon=True)
               for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    stats.first_send = time.perf_counter()
    for t in threads:
        t.join()
    return stats


def send_paced(base: str, key: str, payloads: Sequence[bytes], interval_s: float, *,
               max_in_flight: int = 16) -> SendStats:
    """Post ``payloads[i]`` at ``first_send + i * interval_s`` (open loop), each on a pooled keep-alive
    connection; at most ``max_in_flight`` requests at once (a body whose slot comes while all are busy waits,
    and that wait counts in its latency)."""
    url = base + "/v1/traces"
    headers = _headers(key)
    stats = SendStats()
    local = threading.local()
    clients: list[httpx.Client] = []
    clients_lock = threading.Lock()

    def client() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = make_clients(1)[0]
            with clients_lock:
                clients.append(local.client)
        return local.client

    def post(body: bytes, slot: float) -> None:
        _deliver(client(), url, body, headers, stats, since=slot)

    with ThreadPoolExecutor(max_in_flight, thread_name_prefix="paced") as pool:
        for _ in pool.map(lambda _: client().get(base + "/healthz"), range(max_in_flight)):
            pass  # connections warmed before the clock starts (threads beyond the first few may stay cold)
        stats.first_send = start = time.perf_counter()
        for i, body in enumerate(payloads):
            slot = start + i * interval_s
            delay = slot - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            pool.submit(post, body, slot)
    for c in clients:
        c.close()
    return stats


def summary_calls(client: httpx.Client, base: str, key: str, window: tuple[str, str]) -> int:
    response = client.get(base + "/api/v1/calls/summary", params={"start": window[0], "end": window[1]},
                          headers={"Authorization": f"Bearer {key}"})
    response.raise_for_status()
    return int(response.json()["calls"])


def wait_queryable(client: httpx.Client, base: str, key: str, window: tuple[str, str], target: int,
                   timeout_s: float, every_s: float = 0.05) -> tuple[float, int]:
    """Poll the calls summary until it counts ``target`` calls: (the time it did, 0.0 if never; the last count).

    A ``200`` means committed, so callers start polling at the last acknowledgement."""
    deadline = time.perf_counter() + timeout_s
    seen = 0
    while time.perf_counter() < deadline:
        seen = summary_calls(client, base, key, window)
        if seen >= target:
            return time.perf_counter(), seen
        time.sleep(every_s)
    return 0.0, seen
