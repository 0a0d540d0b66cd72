"""Machine instructions the SDK adds to an app's OpenAI call, counted by valgrind's callgrind: a figure that does
not move with the machine's state.

``bench/sdk_overhead.py`` times the SDK in µs, and on a small shared VM its streaming figure moved by 20 µs or
more between runs of the same code, so a change worth less than about 10 µs could not be told from drift there.
This bench counts instead: each configuration runs in its own Python process under
``valgrind --tool=callgrind``, which counts only inside the measured loop (``--toggle-collect`` on the C function
the loop runs in) and simulates the caches (``--cache-sim=yes``, a last level of 512 KiB: this VM's per-core L2,
since the shared L3 is what its neighbours take). Per configuration it makes warm-up calls, then ``--calls``
calls in batches of 10; between batches, outside the counted region, it does the export thread's work on what
was queued (``readable()`` on each queued call) and a full garbage collection, so the counts are the caller's
thread alone, no queue grows, and no full collection (rare, and millions of instructions) falls in a count. The
export thread itself is idle: a schedule delay of days, and no metrics export (its first would otherwise come
after 30 s, within a run under valgrind, and callgrind counts every thread: before 2026-12-03's sixth session
such a wake-up could put the export thread's work on a batch into a count).

Configurations: the stub client (``sdk_overhead.StubClient``: openai's own parsed objects, served without any
client or transport work) or the real ``openai.OpenAI`` client on ``sdk_overhead``'s mock transport; a
non-streamed or an 11-chunk streamed Chat Completions call; the SDK's wrapper on or off (``wrap_openai`` with
default settings, capture off; the stub's stream is a list of chunks, so it takes the stream proxy's path, the real
client's ``openai.Stream`` is tapped). Added per call = (SDK on - SDK off) / calls, each the median of ``--runs``
runs.
Two runs of one configuration differ by well under 1 % (the garbage collector's timing and address-based hashes
are the only variation); the stub's figures are the SDK's work alone, the real client's add what the SDK does to
the client's own work (its caches, the allocator, the garbage collector).

Prints a table; never asserts. Needs valgrind (Debian's ``valgrind`` package); without it, says so and exits 2.

    python bench/sdk_instructions.py                  # stub client, 200 calls x 3 runs per configuration (~5 min)
    python bench/sdk_instructions.py --client real    # the real client, 50 calls (~3-4 min per run on 2 cores)
    python bench/sdk_instructions.py --cold --calls 30 --runs 1   # stub client on cold caches (~4 min)
    python bench/sdk_instructions.py --client real --runs 1 --gc-off   # run in each of two trees (~5 min)
    python bench/sdk_instructions.py --client real --kinds stream --runs 1 --gc-off --through --shifts 0,13,57
                                                      # the wrapper alone too, in three draws (~26 min)

``--gc-off`` keeps the garbage collector out of the counted batches (it runs between them, with the rest of the
export thread's work): where young-generation passes land otherwise moves a real-client count by 10,000-20,000
instructions per call between two trees of the same client code, more than most changes to the SDK.

``--through`` adds a configuration with the wrapper installed but calling straight through (nothing recorded): what
installing the SDK costs before it records anything. ``--install instrument`` installs it with
``instrument_openai`` (the resource's class patched) instead of ``wrap_openai`` (an instance attribute of the
client's resource), real client only.

``--shifts`` runs each configuration once per shift: that many classes made, and looked up, before the SDK and the
client are imported (:func:`shift_type_versions`), which moves every later class's version tag and the objects made
later, and so which of the client's entries in CPython's type-attribute cache (and in the simulated caches) the
SDK's own lookups and objects collide with; each shift is a process as good as another. On the real client the
added figures of the same code moved by more across shifts than most changes to the SDK are worth
(bench/README.md, eleventh session): compare two versions on the median over a few shifts, never on one process.

``--cold`` counts each stub call alone, right after an uncounted call of the real client without the SDK: the
simulated caches are then as cold as the app's own work leaves the real ones, and the L2 column counts what the
timed bench's cold figure pays for (about 0.1 µs per miss in this VM's slow state; the instructions alone are its
warm figure).
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

EVENTS = ("Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")  # what callgrind --cache-sim=yes counts
LAST_LEVEL = "524288,8,64"  # 512 KiB, 8-way, 64-byte lines: the per-core L2 of this VM's CPU
BATCH = 10


# --- the measured process --------------------------------------------------------------------------------------
def workload(client_kind: str, kind: str, sdk: str, calls: int, cold: bool = False,
             collect: bool = True, install: str = "wrap", shift: int = 0) -> None:
    """Run in the child process under callgrind: warm up, then ``calls`` calls inside ``functools.reduce`` (the
    one C function callgrind counts in), draining the queue between batches outside it. ``cold`` (stub client
    only): each counted call alone, right after an uncounted call of the real client without the SDK, which
    leaves the simulated caches as the app's own work leaves the real ones. ``sdk``: ``on``, ``off`` or
    ``through`` (the wrapper installed and switched to call straight through); ``install``: ``wrap``
    (``wrap_openai``, an instance attribute of the client's resource) or ``instrument`` (``instrument_openai``, a
    class attribute); ``shift``: see :func:`shift_type_versions`."""
    _classes = shift_type_versions(shift)  # before the SDK and the client are imported (kept alive)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import sdk_overhead as bench  # noqa: PLC0415 - the child only (puts sdk/src on the path too)

    import inferwatch  # noqa: PLC0415
    from inferwatch import client as iw_client  # noqa: PLC0415
    from inferwatch.telemetry.pipeline import Pipeline  # noqa: PLC0415

    # No export thread at all: its work is done by export_queued() below, between batches. callgrind counts
    # every thread, and a thread that wakes on its own (its first metrics export comes 30 s after it starts,
    # within a run under valgrind; a failed export retries) puts its work into whichever batch it falls in:
    # up to 50,000 instructions per call, differently from run to run.
    Pipeline._run = lambda self: None  # type: ignore[method-assign]
    inferwatch.init(endpoint="http://127.0.0.1:9/", api_key="iwk_bench", schedule_delay_ms=10**9,
                    max_export_batch_size=10**6, max_queue_size=10**6)
    real = None
    if client_kind == "stub":
        real = bench.make_client()  # openai's objects as its client builds them (not validated), served as is
        bench.StubCompletions.parsed = real.chat.completions.create(model=bench.MODEL, messages=bench.MESSAGES)
        bench.StubCompletions.parsed_chunks = list(real.chat.completions.create(
            model=bench.MODEL, messages=bench.MESSAGES, stream=True, stream_options={"include_usage": True}))
        client = inferwatch.wrap_openai(bench.StubClient())
    elif install == "instrument":
        client = bench.make_client()
        inferwatch.instrument_openai()  # off: installed and undone, as wrap's off arm wraps and then unwraps
        if sdk == "off":
            inferwatch.uninstrument_openai()
    else:
        client = inferwatch.wrap_openai(bench.make_client())
    if install == "wrap":
        bench.Toggle(client).set(sdk != "off")
    if sdk == "through":
        resource = client.chat.completions
        _switch_off(vars(resource)["create"] if install == "wrap" else type(resource).__dict__["create"])
    call = bench.call_stream if kind == "stream" else bench.call_plain
    pipeline = iw_client.get_pipeline()
    refill_ids = getattr(pipeline, "_refill_ids", None)  # span ids drawn ahead (SDK versions that do)

    def export_queued() -> None:  # the export thread's work, done here and not counted
        queue = pipeline._queue
        while queue:
            item = queue.popleft()
            readable = getattr(item, "readable", None)
            if readable is not None:
                readable()
        pipeline._metric_records.clear()
        if refill_ids is not None:
            refill_ids()
        # a full collection, here rather than inside a batch: one falling in the counted region adds millions
        # of instructions to it, and whether one does depends on the whole process (real client runs of the
        # same code differed by 0.9 M instructions per call without this). The timed bench's median leaves
        # them out likewise.
        gc.collect()

    def step(_: object, __: int) -> None:
        call(client)

    if not collect:  # --gc-off: the collector runs only between batches (export_queued), never inside a count
        gc.disable()
    for _ in range(10):
        for _ in range(BATCH):
            call(client)
        export_queued()
    if cold and real is not None:
        one = range(1)
        for _ in range(calls // BATCH):
            for _ in range(BATCH):
                call(real)  # not counted: the app's own work between two of its calls
                functools.reduce(step, one, None)
            export_queued()
    else:
        for _ in range(calls // BATCH):
            functools.reduce(step, range(BATCH), None)
            export_queued()
    sys.stdout.flush()
    os._exit(0)  # no shutdown: nothing is exported, and the interpreter's teardown is not of interest


def shift_type_versions(count: int) -> list[type]:
    """Make ``count`` classes and look an attribute up on each, so that every class first looked up later gets
    a version tag ``count`` higher (a class modified later gets a new one at its next lookup anyway), and the
    objects made later lie a little further on: the same process as before in every other way.

    Why: CPython 3.11 caches attribute lookups on classes in one table of 4,096 entries, indexed by the class's
    version tag (numbered in the order classes are first looked up in) and the name's address. The real client's
    streamed call makes about 77,000 such lookups, so which of its entries an added lookup of the SDK evicts,
    and whether its next lookup then walks a class hierarchy, depends on that numbering and those addresses, as
    do the simulated cache's conflicts. A shift changes only the draw; the spread of the SDK's figures over a
    few shifts is what any one process's figure can be off by (bench/README.md, eleventh session)."""
    classes = [type(f"_Shift{i}", (), {}) for i in range(count)]
    for cls in classes:
        getattr(cls, "_shift", None)  # the lookup that gives the class its version tag
    return classes


def _switch_off(wrapper: Any) -> None:
    """Make an installed wrapper call straight through (as it does when it is undone with something patched on
    top of it): the wrapper and where it is installed stay, the recording goes."""
    from inferwatch.integrations._patching import Switch  # noqa: PLC0415 - the child only

    function = getattr(wrapper, "__func__", wrapper)
    for cell in function.__closure__ or ():
        if isinstance(cell.cell_contents, Switch):
            cell.cell_contents.enabled = False
            return
    raise RuntimeError("no switch in the installed wrapper (another SDK version?)")


# --- the driver ------------------------------------------------------------------------------------------------
def count(client_kind: str, kind: str, sdk: str, calls: int, workdir: Path, tag: str,
          cold: bool = False, collect: bool = True, install: str = "wrap", shift: int = 0) -> dict[str, int]:
    """One configuration under callgrind: its event totals inside the measured loop."""
    out = workdir / f"callgrind.{client_kind}{'.cold' if cold else ''}.{kind}.{sdk}.{shift}.{tag}"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", f"--LL={LAST_LEVEL}",
           "--toggle-collect=functools_reduce", f"--callgrind-out-file={out}",
           sys.executable, __file__, "--child", client_kind, kind, sdk, str(calls),
           "cold" if cold else "warm", "gc" if collect else "nogc", install, str(shift)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"callgrind run failed ({done.returncode}): {done.stderr[-2000:]}")
    names: list[str] = []
    totals: list[int] = []
    for line in out.read_text().splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith("summary:") or line.startswith("totals:"):
            totals = [int(v) for v in line.split()[1:]]
    if not names or not totals:
        raise RuntimeError(f"no event totals in {out}")
    values = dict(zip(names, totals + [0] * (len(names) - len(totals))))
    return {event: values.get(event, 0) for event in EVENTS}


def _median_run(runs: Sequence[dict[str, int]]) -> dict[str, float]:
    return {event: statistics.median(run[event] for run in runs) for event in EVENTS}


def added_per_call(on: dict[str, float], off: dict[str, float], calls: int) -> dict[str, float]:
    return {event: (on[event] - off[event]) / calls for event in EVENTS}


def _l2(added: dict[str, float]) -> float:
    return added["ILmr"] + added["DLmr"] + added["DLmw"]


def _row(off: dict[str, float], on: dict[str, float], added: dict[str, float], calls: int) -> str:
    return (f"{off['Ir'] / calls:13,.0f} {on['Ir'] / calls:13,.0f} {added['Ir']:9,.0f} {added['I1mr']:9,.0f} "
            f"{added['D1mr'] + added['D1mw']:9,.0f} {_l2(added):8,.0f}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--client", choices=("stub", "real"), default="stub")
    ap.add_argument("--calls", type=int, help="counted calls per configuration (default: stub 200, real or --cold 50)")
    ap.add_argument("--runs", type=int, default=3, help="runs per configuration; the median is reported")
    ap.add_argument("--kinds", default="plain,stream", help="plain, stream or both (comma-separated)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="callgrind runs at a time")
    ap.add_argument("--cold", action="store_true",
                    help="stub client: each counted call right after an uncounted real client call (cold caches)")
    ap.add_argument("--gc-off", action="store_true",
                    help="no garbage collection inside the counted batches (only between them): compare versions")
    ap.add_argument("--through", action="store_true",
                    help="also count the wrapper alone: installed, calling straight through (no recording)")
    ap.add_argument("--install", choices=("wrap", "instrument"), default="wrap",
                    help="wrap_openai (an instance attribute, the default) or instrument_openai (a class "
                         "attribute; real client only)")
    ap.add_argument("--shifts", default="0",
                    help="comma-separated counts of classes made before the imports, one process each (see "
                         "shift_type_versions): the added figures' median and spread over them are printed")
    ap.add_argument("--child", nargs=8, metavar=("CLIENT", "KIND", "SDK", "CALLS", "CACHES", "GC", "INSTALL",
                                                 "SHIFT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        client_kind, kind, sdk, calls, caches, collector, install, shift = args.child
        workload(client_kind, kind, sdk, int(calls), caches == "cold", collector == "gc", install, int(shift))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind); this bench counts instructions with "
              "callgrind", file=sys.stderr)
        return 2
    if args.cold and args.client != "stub":
        ap.error("--cold takes the stub client (the real client's own work is what makes its caches cold)")
    if args.install == "instrument" and args.client != "real":
        ap.error("--install instrument takes the real client (the stub's own create overrides the patched one)")
    calls = args.calls or (200 if args.client == "stub" and not args.cold else 50)
    calls -= calls % BATCH
    if calls < BATCH:
        ap.error(f"--calls must be at least {BATCH}")
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or any(k not in ("plain", "stream") for k in kinds):
        ap.error("--kinds takes plain, stream or both")
    try:
        shifts = list(dict.fromkeys(int(v) for v in args.shifts.split(",") if v.strip()))  # each once
    except ValueError:
        shifts = []
    if not shifts or min(shifts) < 0:
        ap.error("--shifts takes comma-separated counts, 0 or more (e.g. 0,13,57)")
    arms = ("on", "through", "off") if args.through else ("on", "off")
    jobs = [(kind, sdk, shift, run)
            for kind in kinds for sdk in arms for shift in shifts for run in range(args.runs)]
    what = (f"{args.client} client{', cold caches' if args.cold else ''}"
            f"{', no garbage collection inside a count' if args.gc_off else ''}"
            f"{', installed by instrument_openai' if args.install == 'instrument' else ''}")
    print(f"callgrind, {what}, {calls} counted calls per run, {args.runs} run(s) per configuration, shifts "
          f"{', '.join(map(str, shifts))}; {len(jobs)} runs, {args.jobs} at a time", flush=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="iw-callgrind-") as tmp, ThreadPoolExecutor(args.jobs) as pool:
        futures = {job: pool.submit(count, args.client, job[0], job[1], calls, Path(tmp), str(job[3]),
                                   args.cold, not args.gc_off, args.install, job[2])
                   for job in jobs}
        results: dict[tuple[str, str, int, int], dict[str, int]] = {}
        for job, future in futures.items():
            results[job] = future.result()
            print(f"  [{job[0]}, SDK {job[1]}, shift {job[2]}, run {job[3] + 1}: "
                  f"{results[job]['Ir'] / calls:,.0f} instructions per call]", flush=True)
    print(f"  total {time.perf_counter() - started:.0f} s")
    through = "; wrapper only: installed, calling straight through - SDK off" if args.through else ""
    print(f"\nadded per call by the SDK (median of {args.runs} run(s); SDK on - SDK off{through}; {what}):")
    print(f"  {'call':33s} {'client alone':>13s} {'with the SDK':>13s} {'added':>9s} {'L1i miss':>9s} "
          f"{'L1d miss':>9s} {'L2 miss':>8s}   spread of the runs")
    for kind in kinds:
        for sdk in arms[:-1]:
            label = kind if sdk == "on" else f"{kind}, wrapper only"
            by_shift = []
            for shift in shifts:
                off = _median_run([results[(kind, "off", shift, r)] for r in range(args.runs)])
                runs = [results[(kind, sdk, shift, r)] for r in range(args.runs)]
                on = _median_run(runs)
                by_shift.append((off, on, added_per_call(on, off, calls)))
                spread = max(run["Ir"] for run in runs) - min(run["Ir"] for run in runs)
                shown = label if len(shifts) == 1 else f"{label}, shift {shift}"
                print(f"  {shown:33s} {_row(off, on, by_shift[-1][2], calls)}   "
                      f"{spread / calls:,.0f} instr. per call")
            if len(shifts) > 1:
                added_ir = [added["Ir"] for _, _, added in by_shift]
                added_l2 = [_l2(added) for _, _, added in by_shift]
                print(f"  {label + ', median':33s} {'':13s} {'':13s} {statistics.median(added_ir):9,.0f} "
                      f"{'':9s} {'':9s} {statistics.median(added_l2):8,.0f}   over the shifts: added "
                      f"{min(added_ir):,.0f} to {max(added_ir):,.0f}, "
                      f"L2 {min(added_l2):,.0f} to {max(added_l2):,.0f}")
    print("  (instructions per call; misses added per call, simulated: L1 as this CPU's, L2 of 512 KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
