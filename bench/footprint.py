"""Idle footprint of the collector: resident memory of every process it runs, and what it is made of.

Nothing is asserted; it prints figures and a PASS/FAIL line against the target (idle RSS of all processes
<= 350 MiB) for a person to read. Everything binds 127.0.0.1; temporary data directories are removed.

1. **Idle collector**, ``--starts`` times (default 3, medians printed): ``inferwatch-server --data-dir D
   collector`` on a fresh temporary directory (the console script, as an operator starts it), wait for
   ``/readyz``, wait ``--settle`` seconds, then read every process of its tree (collector, ingest workers,
   multiprocessing's resource tracker): RSS and PSS from ``/proc/<pid>/smaps_rollup`` (PSS splits shared pages
   between the processes that map them, so libraries shared by the workers are not counted twice), and how much
   of the collector's RSS is file-backed (``RssFile``: the mapped chDB library, reclaimable) vs anonymous.
   Then (``--traffic``, default 20) it sends that many OTLP/HTTP protobuf requests of 512 LLM-call spans with
   ~1 KB of content each (``examples/traffic.py``), one at a time, waits ``--settle`` s and reads the tree again:
   the footprint once ingest has run (pages of the engine that inserts need are back, workers hold their decode
   state). With ``--baseline SRC`` the same is measured, interleaved start by start, for another source tree
   (e.g. ``git archive <commit>`` unpacked into ``SRC``), run by the same virtual environment (``PYTHONPATH``).
2. **Breakdown** (once per tree): in a fresh interpreter, RSS after each import stage and after opening and
   migrating a chDB store; chDB's own tracked memory (``system.metrics`` ``MemoryTracking``; chDB has no
   ``system.asynchronous_metrics``); the top imports by cumulative time (``python -X importtime``) of the
   collector's composition root and of an ingest worker's pipeline; the modules a live ingest worker holds.

Run: ``.venv/bin/python bench/footprint.py`` (about 2 minutes), ``--baseline /tmp/main-src`` to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MIB = 350
MIB = 1024 * 1024

#: The source packages of a tree, by import name (the repository maps them to these folders).
PACKAGES = {
    "inferwatch_collector": "collector/inferwatch_collector",
    "inferwatch_alerts": "alerts/inferwatch_alerts",
    "inferwatch_dashboard": "dashboard/inferwatch_dashboard",
    "inferwatch_migrations": "migrations",
    "inferwatch_server": "server/inferwatch_server",
    "inferwatch": "sdk/src/inferwatch",
}

#: Heavy third-party packages whose presence in a process is worth printing.
HEAVY = ("numpy", "scipy", "pandas", "pyarrow", "streamlit", "plotly", "spacy", "presidio_analyzer", "playwright",
         "apscheduler", "slack_sdk", "pagerduty", "clickhouse_connect", "chdb", "pydantic_settings", "asyncio",
         "fastapi", "uvicorn", "psutil", "phonenumbers")


def tree_env(src: Path | None) -> dict[str, str]:
    """The environment that runs ``src``'s packages (this checkout when None) with this virtual environment."""
    env = dict(os.environ)
    env.pop("INFERWATCH_DATA_DIR", None)
    if src is None:
        return env
    links = Path(tempfile.mkdtemp(prefix="footprint-pkgs-"))
    for name, folder in PACKAGES.items():
        (links / name).symlink_to(src / folder)
    env["PYTHONPATH"] = str(links)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def smaps_rollup(pid: int) -> dict[str, int]:
    """Fields of ``/proc/<pid>/smaps_rollup`` in bytes."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return out


def status_field(pid: int, name: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1]) * 1024
    return 0


def children(pid: int) -> list[int]:
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return found


def cmdline(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode(errors="replace")


def role(pid: int, root: int) -> str:
    if pid == root:
        return "collector"
    line = cmdline(pid)
    if "resource_tracker" in line:
        return "resource-tracker"
    if "forkserver" in line:
        return "forkserver"
    return "worker"


def mapped_libraries(pid: int) -> list[str]:
    """Shared objects mapped by ``pid`` (file names), to show which native libraries a worker pulled in."""
    names = set()
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) > 5 and ".so" in parts[5]:
                names.add(parts[5].rsplit("/", 1)[-1])
    return sorted(names)


def read_tree(root: int) -> dict:
    """RSS/PSS of ``root`` and every process under it."""
    procs = []
    for pid in [root, *children(root)]:
        rollup = smaps_rollup(pid)
        procs.append({"pid": pid, "role": role(pid, root), "rss": rollup["Rss"], "pss": rollup["Pss"],
                      "rss_file": status_field(pid, "RssFile"), "rss_anon": status_field(pid, "RssAnon"),
                      "threads": len(os.listdir(f"/proc/{pid}/task"))})
    workers = [p["pid"] for p in procs if p["role"] == "worker"]
    return {"procs": procs, "rss": sum(p["rss"] for p in procs), "pss": sum(p["pss"] for p in procs),
            "worker_libs": mapped_libraries(workers[0]) if workers else []}


def traffic_payloads(n: int) -> list[bytes]:
    """``n`` OTLP/HTTP protobuf requests of 512 LLM-call spans with ~1 KB content each (examples/traffic.py)."""
    sys.path.insert(0, str(ROOT))
    from examples.traffic import TrafficModel, build_request

    model = TrafficModel(seed=29, embeddings=False)
    return [build_request(model, 512, with_content=True, now_ns=time.time_ns(), spread_s=10,
                          app_spans=False).SerializeToString() for _ in range(n)]


def send(port: int, key: str, payloads: list[bytes]) -> None:
    """POST every payload to /v1/traces, one at a time, retrying a 503 after its Retry-After."""
    for body in payloads:
        while True:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/traces", data=body, method="POST",
                headers={"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"})
            try:
                with urllib.request.urlopen(request, timeout=60) as r:
                    r.read()
                break
            except urllib.error.HTTPError as exc:
                if exc.code != 503:
                    raise
                time.sleep(float(exc.headers.get("Retry-After") or 1))


def measure_idle(src: Path | None, settle: float, payloads: list[bytes]) -> dict:
    """Start a collector on a fresh directory, wait for /readyz and ``settle`` s, read its process tree; then,
    with ``payloads``, send them, wait ``settle`` s again and read it again (``after``)."""
    env = tree_env(src)
    data = Path(tempfile.mkdtemp(prefix="footprint-data-"))
    port = free_port()
    exe = str(Path(sys.executable).parent / "inferwatch-server")
    key = ""
    if payloads:  # a key needs the database, and one process per chDB directory: made before the collector starts
        out = subprocess.run([exe, "--data-dir", str(data), "keys", "create", "--project", "footprint", "--scope",
                              "ingest"], env=env, capture_output=True, text=True, check=True)
        key = out.stdout.strip().splitlines()[-1].strip()
    log = open(data.parent / f"{data.name}.log", "w")
    proc = subprocess.Popen([exe, "--data-dir", str(data), "collector", "--host", "127.0.0.1", "--port", str(port),
                             "--metrics-port", "0"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        started = time.monotonic()
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"collector exited with {proc.returncode}; see {log.name}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() - started > 120:
                raise RuntimeError("collector not ready after 120 s")
            time.sleep(0.2)
        ready_s = time.monotonic() - started
        time.sleep(settle)
        result = {"ready_s": ready_s, **read_tree(proc.pid)}
        if payloads:
            send(port, key, payloads)
            time.sleep(settle)
            result["after"] = read_tree(proc.pid)
        return result
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(data, ignore_errors=True)
        os.unlink(log.name)


# The breakdown runs in a fresh interpreter of the tree under test; it prints one JSON object.
BREAKDOWN_CHILD = r"""
import importlib, json, os, sys, tempfile, time
def mem():
    out = {}
    for line in open("/proc/self/smaps_rollup"):
        p = line.split()
        if p[0] in ("Rss:", "Pss:", "Anonymous:"):
            out[p[0][:-1].lower()] = int(p[1]) * 1024
    return out
stages = [("python", mem())]
for name in sys.argv[1:]:
    importlib.import_module(name)
    stages.append(("import " + name, mem()))
os.environ["INFERWATCH_DATA_DIR"] = tempfile.mkdtemp(prefix="footprint-breakdown-")
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_collector.migrations import migrate, target_for
settings = Settings()
store = Store.open(settings)
stages.append(("chDB store opened", mem()))
migrate(store, target_for(settings, store))
stages.append(("migrated", mem()))
rows = store.query("SELECT metric, value FROM system.metrics WHERE metric IN "
                   "('MemoryTracking', 'MergesMutationsMemoryTracking')").result_rows
print(json.dumps({"stages": stages, "chdb": dict(rows)}))
"""

#: What the composition root imports, in the order it does (import stages of the breakdown).
STAGES = ("clickhouse_connect", "chdb", "inferwatch_collector.ingest", "inferwatch_collector.app",
          "inferwatch_alerts.scheduler", "inferwatch_server.app")


def breakdown(src: Path | None) -> dict:
    env = tree_env(src)
    out = subprocess.run([sys.executable, "-c", BREAKDOWN_CHILD, *STAGES], env=env, capture_output=True, text=True,
                         check=True, cwd=tempfile.gettempdir())
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["importtime_app"] = importtime(env, "import inferwatch_server.app")
    result["importtime_worker"] = importtime(env, "import inferwatch_collector.ingest_worker as w; w.warm()")
    result["worker_modules"] = worker_modules(env)
    return result


def importtime(env: dict[str, str], code: str, top: int = 12) -> list[tuple[str, int]]:
    """Top-level packages (and inferwatch's own modules) by cumulative import time (µs), largest first."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=tempfile.gettempdir())
    best: dict[str, int] = {}
    for line in out.stderr.splitlines():
        fields = line.split("|")
        if not line.startswith("import time:") or len(fields) != 3 or not fields[1].strip().isdigit():
            continue
        name = fields[2].strip()
        package = name.split(".")[0]
        key = name if package.startswith("inferwatch") else package
        best[key] = max(best.get(key, 0), int(fields[1]))
    return sorted(best.items(), key=lambda kv: -kv[1])[:top]


def worker_modules(env: dict[str, str]) -> list[str]:
    """Heavy packages held by a live ingest worker (spawned by the real pool, after its warm-up)."""
    code = ("import sys, json\n"
            "import inferwatch_server.cli  # the console script, which spawned workers re-import\n"
            "from inferwatch_collector.ingest_pool import IngestPool\n"
            "def main():\n"
            "    pool = IngestPool(1, max_bytes=1 << 20, content_capture='full')\n"
            "    pool.start()\n"
            "    mods = pool._executor.submit(_mods).result(60)\n"
            "    pool.close()\n"
            "    print(json.dumps(mods))\n"
            "def _mods():\n"
            "    import sys\n"
            "    return sorted({m.split('.')[0] for m in sys.modules})\n"
            "if __name__ == '__main__':\n"
            "    main()\n")
    script = Path(tempfile.mkdtemp(prefix="footprint-worker-")) / "probe.py"
    script.write_text(code)
    try:
        out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, check=True,
                             cwd=script.parent)
        mods = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(script.parent, ignore_errors=True)
    return [m for m in HEAVY if m in mods]


def mib(n: float) -> str:
    return f"{n / MIB:7.1f}"


def print_runs(label: str, runs: list[dict]) -> dict:
    print(f"\n== {label}: idle collector, {len(runs)} starts ==")
    for i, run in enumerate(runs, 1):
        parts = ", ".join(f"{p['role']} {p['rss'] / MIB:.0f}/{p['pss'] / MIB:.0f}" for p in run["procs"])
        print(f"  start {i}: ready in {run['ready_s']:.1f} s; RSS sum {mib(run['rss'])} MiB, PSS sum "
              f"{mib(run['pss'])} MiB  [RSS/PSS MiB: {parts}]")
    median = {"rss": statistics.median(r["rss"] for r in runs), "pss": statistics.median(r["pss"] for r in runs)}
    after = [r["after"] for r in runs if "after" in r]
    if after:
        median["after_rss"] = statistics.median(a["rss"] for a in after)
        median["after_pss"] = statistics.median(a["pss"] for a in after)
    roles: dict[str, list[dict]] = {}
    for run in runs:
        for p in run["procs"]:
            roles.setdefault(p["role"], []).append(p)
    print(f"  median RSS sum {mib(median['rss'])} MiB, PSS sum {mib(median['pss'])} MiB")
    for name, procs in roles.items():
        n = len(procs) / len(runs)
        print(f"    {name:17s} x{n:.0f}: RSS {mib(statistics.median(p['rss'] for p in procs))} (file "
              f"{mib(statistics.median(p['rss_file'] for p in procs))}, anon "
              f"{mib(statistics.median(p['rss_anon'] for p in procs))}), PSS "
              f"{mib(statistics.median(p['pss'] for p in procs))} MiB, "
              f"{statistics.median(p['threads'] for p in procs):.0f} threads")
    print(f"  a worker maps {len(runs[-1]['worker_libs'])} shared objects")
    if after:
        print(f"  after the traffic, idle again: median RSS sum {mib(median['after_rss'])} MiB, PSS sum "
              f"{mib(median['after_pss'])} MiB  [last start, RSS/PSS MiB: "
              + ", ".join(f"{p['role']} {p['rss'] / MIB:.0f}/{p['pss'] / MIB:.0f}" for p in after[-1]["procs"])
              + "]")
    return median


def print_breakdown(label: str, result: dict) -> None:
    print(f"\n== {label}: breakdown (one fresh interpreter) ==")
    previous = 0
    for name, m in result["stages"]:
        print(f"  {name:45s} RSS {mib(m['rss'])} MiB (+{mib(m['rss'] - previous).strip():>6s}), anon "
              f"{mib(m['anonymous'])}, PSS {mib(m['pss'])}")
        previous = m["rss"]
    chdb = result["chdb"]
    print(f"  chDB MemoryTracking (idle, migrated): {mib(chdb.get('MemoryTracking', 0))} MiB; merges "
          f"{mib(chdb.get('MergesMutationsMemoryTracking', 0))} MiB")
    for key, title in (("importtime_app", "composition root"), ("importtime_worker", "ingest worker pipeline")):
        items = ", ".join(f"{name} {us / 1000:.0f}" for name, us in result[key])
        print(f"  -X importtime, {title} (cumulative ms): {items}")
    print(f"  heavy packages in a live ingest worker: {', '.join(result['worker_modules']) or 'none'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=3, help="collector starts per tree (medians)")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds idle after /readyz before reading")
    parser.add_argument("--baseline", type=Path, help="another source tree to measure the same way (before)")
    parser.add_argument("--traffic", type=int, default=20,
                        help="requests (512 spans with content each) sent after the idle reading, then read again")
    parser.add_argument("--no-breakdown", action="store_true")
    args = parser.parse_args()

    trees: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.baseline:
        trees.insert(0, (f"baseline {args.baseline}", args.baseline.resolve()))
    print(f"load average at start: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
          f"{os.cpu_count()} CPUs; INFERWATCH_INGEST_WORKERS="
          f"{os.environ.get('INFERWATCH_INGEST_WORKERS', 'default')}")
    payloads = traffic_payloads(args.traffic) if args.traffic > 0 else []
    runs: dict[str, list[dict]] = {label: [] for label, _ in trees}
    for _ in range(args.starts):  # interleaved, so drift on a shared machine hits every tree alike
        for label, src in trees:
            runs[label].append(measure_idle(src, args.settle, payloads))
    medians = {label: print_runs(label, runs[label]) for label, _ in trees}
    if not args.no_breakdown:
        for label, src in trees:
            print_breakdown(label, breakdown(src))
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")
    mine = medians["this tree"]
    if args.baseline:
        base = medians[trees[0][0]]
        print(f"before -> after: RSS sum {mib(base['rss']).strip()} -> {mib(mine['rss']).strip()} MiB "
              f"({mine['rss'] / base['rss']:.2f}x), PSS sum {mib(base['pss']).strip()} -> "
              f"{mib(mine['pss']).strip()} MiB ({mine['pss'] / base['pss']:.2f}x)")
        if "after_rss" in mine and "after_rss" in base:
            print(f"  after traffic: RSS sum {mib(base['after_rss']).strip()} -> {mib(mine['after_rss']).strip()} "
                  f"MiB, PSS sum {mib(base['after_pss']).strip()} -> {mib(mine['after_pss']).strip()} MiB")
    verdict = "PASS" if mine["rss"] <= TARGET_MIB * MIB else "FAIL"
    print(f"{verdict}: idle RSS of all collector processes {mib(mine['rss']).strip()} MiB "
          f"(target <= {TARGET_MIB})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
