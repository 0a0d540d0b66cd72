"""Parts soak: sustained ingest at the writer's full insert rate, with the active parts per partition over time.

Why: the writer inserts as soon as it is free (at most one insert per table every ``min_insert_interval_s``), so
a steady exporter makes up to 1/``min_insert_interval_s`` new parts per second in every table its rows reach
(materialized-view rollups included). ClickHouse merges them in the background; if the merges fall behind, the
active parts of a partition grow until inserts are delayed (``parts_to_delay_insert``) and then refused ("Too
many parts"). This run shows whether they keep up on this machine.

What it does: starts ``inferwatch-server collector`` (defaults, embedded chDB, its own temp dir), then
``--senders`` threads post 512-span OTLP requests back to back (each waits for its answer, like an exporter with
one request in flight) for ``--seconds``. Every ``--every`` seconds it scrapes ``/metrics`` and prints the
acknowledged spans/s, inserts/s into ``llm_calls`` and, per table, the active parts of its fullest partition.
At the end: the peak of each table's fullest partition in the first and the last third of the run, and the
verdict (bounded: the last third's peak is not above the first third's by more than 50% and stays well below
``parts_to_delay_insert``, 1000 by default).

Run: ``.venv/bin/python bench/soak_parts.py`` (5 minutes; ``--seconds 60`` for a quick look).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # examples/ lives in the checkout
from ingest_clients import make_clients  # noqa: E402
from ingest_collector import Collector  # noqa: E402
from ingest_payloads import build_payloads, llm_calls_per_request, unique_suffix  # noqa: E402

DELAY_THRESHOLD = 1000  # ClickHouse's parts_to_delay_insert default


def sender(collector: Collector, client, pool: list[bytes], counter, stop_at: float, acked: list[int],
           per_request: int, lock: threading.Lock) -> None:
    url = collector.base + "/v1/traces"
    headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {collector.key}"}
    while time.monotonic() < stop_at:
        i = next(counter)
        body = pool[i % len(pool)] + unique_suffix(i)  # distinct bodies: the retry dedup must not answer
        response = client.post(url, content=body, headers=headers)
        if response.status_code == 200:
            with lock:
                acked[0] += per_request
        elif response.status_code in (429, 503):
            time.sleep(float(response.headers.get("retry-after", "1")))
        else:
            print(f"  ! HTTP {response.status_code}: {response.text[:200]}", flush=True)
            time.sleep(1)


def parts_by_table(metrics: dict[str, float], name: str) -> dict[str, float]:
    prefix = name + '{table="'
    return {key[len(prefix):-2]: value for key, value in metrics.items() if key.startswith(prefix)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/soak_parts.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--senders", type=int, default=4, help="requests in flight (default 4)")
    parser.add_argument("--content", action="store_true", help="spans with ~1 KB of prompt content")
    parser.add_argument("--every", type=float, default=15, help="seconds between samples (default 15)")
    parser.add_argument("--spans-per-request", type=int, default=512)
    args = parser.parse_args(argv)

    pool = build_payloads(16, args.spans_per_request, with_content=args.content, seed=7)
    per_request = llm_calls_per_request(pool[0]) or args.spans_per_request
    workdir = Path(tempfile.mkdtemp(prefix="iw-soak-"))
    collector = Collector(workdir, "soak")
    print(f"soak: {args.senders} sender(s), {args.spans_per_request}-span requests "
          f"({'with' if args.content else 'without'} content) for {args.seconds:.0f} s; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    collector.start()
    try:
        interval = collector.metrics().get("inferwatch_min_insert_interval_seconds")
        print(f"min_insert_interval_s = {interval}", flush=True)
        clients = make_clients(args.senders)
        counter, lock, acked = itertools.count(), threading.Lock(), [0]
        start = time.monotonic()
        stop_at = start + args.seconds
        threads = [threading.Thread(target=sender, daemon=True, args=(
            collector, client, pool, counter, stop_at, acked, per_request, lock)) for client in clients]
        for thread in threads:
            thread.start()
        samples: list[tuple[float, dict[str, float]]] = []
        last_t, last_acked, last_inserts = start, 0, 0.0
        while time.monotonic() < stop_at:
            time.sleep(min(args.every, max(0.0, stop_at - time.monotonic())))
            now, metrics = time.monotonic(), collector.metrics()
            fullest = parts_by_table(metrics, "inferwatch_active_parts_max_per_partition")
            inserts = metrics.get('inferwatch_inserts_total{table="llm_calls"}', 0.0)
            with lock:
                done = acked[0]
            dt = now - last_t
            samples.append((now - start, fullest))
            shown = "  ".join(f"{t}:{int(v)}" for t, v in sorted(fullest.items()) if v)
            print(f"t={now - start:5.0f}s  acked {(done - last_acked) / dt:7,.0f} spans/s  inserts "
                  f"{(inserts - last_inserts) / dt:5.1f}/s  load {os.getloadavg()[0]:.2f}  "
                  f"active parts (fullest partition): {shown}", flush=True)
            last_t, last_acked, last_inserts = now, done, inserts
        for thread in threads:
            thread.join()
        for client in clients:
            client.close()
        time.sleep(args.every)  # merges after the load
        after = parts_by_table(collector.metrics(), "inferwatch_active_parts_max_per_partition")
    finally:
        collector.stop()

    third = max(1, len(samples) // 3)
    first, last = samples[:third], samples[-third:]
    tables = sorted({t for _, fullest in samples for t in fullest})
    bounded = True
    print(f"\n{'table':<24} {'peak, first third':>18} {'peak, last third':>17} {f'{args.every:.0f} s after':>12}")
    for table in tables:
        early = max(f.get(table, 0) for _, f in first)
        late = max(f.get(table, 0) for _, f in last)
        ok = late <= max(early * 1.5, early + 10) and late < DELAY_THRESHOLD / 4
        bounded &= ok
        print(f"{table:<24} {early:>18.0f} {late:>17.0f} {after.get(table, 0):>12.0f}{'' if ok else '  GROWING'}")
    print(f"\nmerges keep up: {'yes' if bounded else 'NO'} (bounded: last third's peak <= 1.5x the first's and "
          f"< {DELAY_THRESHOLD // 4}, a quarter of parts_to_delay_insert)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
