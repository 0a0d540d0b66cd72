"""What an ingest worker process runs at its start: its signal disposition, its lower priority and its warm-up.

Apart from :mod:`.ingest_pool` (asyncio, the executor, the per-project lanes): a spawned worker imports only the
modules its jobs name, so a worker holds the decode/normalise/encode pipeline (:mod:`.ingest`) and not the
collector's HTTP side, its settings or its database client (``tests/collector/test_runtime_imports.py``).
"""

from __future__ import annotations

import os
import signal

#: How much less CPU priority a worker has than the collector process (``nice``): when cores are short, the process
#: that answers HTTP (health checks, acknowledgements) and runs the writer is scheduled before a long decode.
WORKER_NICENESS = 10


def start_worker() -> None:
    """Worker initializer: leave stopping to the parent, then :func:`lower_priority`.

    A terminal's Ctrl-C is SIGINT to its whole foreground process group, and ``kill -TERM -<pgid>`` (or a service
    manager stopping a process group) reaches every member too. A worker that died of either while the collector
    was still finishing its requests would print a ``KeyboardInterrupt`` traceback and break the pool. So a worker
    ignores SIGINT and moves to a process group of its own; the collector (the parent) stops its workers itself
    when it handles the signal (:meth:`IngestPool.close`), and can still terminate one directly.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.setpgid(0, 0)
    except (OSError, AttributeError):  # not permitted (a session leader) or not POSIX: SIGINT is still ignored
        pass
    lower_priority()


def lower_priority() -> None:
    """Run at :data:`WORKER_NICENESS` (best effort), encoding rows without pandas."""
    from .native import skip_dataframe_libraries

    skip_dataframe_libraries()
    try:
        os.nice(WORKER_NICENESS)
    except (OSError, AttributeError):
        pass


def warm() -> int:
    """Run once per worker at start, so the first real request does not pay for imports; returns its pid."""
    from . import ingest  # noqa: F401  (import cost is the point)
    from .cost import ingest_pricer

    ingest_pricer.pricer_for(None)  # parse the bundled price table now, not on the first request
    return os.getpid()
