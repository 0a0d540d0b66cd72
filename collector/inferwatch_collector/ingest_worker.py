"""What an ingest worker process runs at its start: its lower priority and its warm-up.

Apart from :mod:`.ingest_pool` (asyncio, the executor, the per-project lanes): a spawned worker imports only the
modules its jobs name, so a worker holds the decode/normalise/encode pipeline (:mod:`.ingest`) and not the
collector's HTTP side, its settings or its database client (``tests/collector/test_runtime_imports.py``).
"""

from __future__ import annotations

import os

#: How much less CPU priority a worker has than the collector process (``nice``): when cores are short, the process
#: that answers HTTP (health checks, acknowledgements) and runs the writer is scheduled before a long decode.
WORKER_NICENESS = 10


def lower_priority() -> None:
    """Worker initializer: run at :data:`WORKER_NICENESS` (best effort), encoding rows without pandas."""
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
