"""Cost at ingest: the price table an ingest process uses, and the :data:`~..normalize.Pricer` built from it.

Each ingest worker process loads the table once and keeps it; :func:`pricer_for` re-reads the user's price file
only when its modification time or size changes (one ``stat`` per request, not per span), so an edited price
file applies to new calls without a restart, and :mod:`.recompute` re-prices the history.

A call answered from the application's own cache (``cache_hit``) cost nothing: its usage is priced as
``cost_avoided_usd`` and every cost column stays 0. An unknown model or a call without usage costs 0 with the
``unpriced`` / ``usage_missing`` flag set, never a silent zero.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from .call_cost import price_tokens
from ..normalize import Pricer
from .price_table import PriceTable, load_table

_lock = threading.Lock()
_cache: dict[str | None, tuple[tuple[int, int] | None, Pricer]] = {}


def make_pricer(table: PriceTable) -> Pricer:
    """The per-call pricing function :func:`~.normalize.normalize` calls for every LLM call."""

    def price(model: str, provider: str, input_tokens: int, output_tokens: int, cache_read: int,
              cache_write: int, cache_write_1h: int, reasoning: int, usage_missing: bool, cache_hit: bool
              ) -> tuple[float, str, tuple, float]:  # fmt: skip
        cost = price_tokens(table, model, input_tokens, output_tokens, cache_read, cache_write, reasoning,
                            cache_write_1h, usage_missing)  # fmt: skip
        if cache_hit:
            return 0.0, cost.price_version, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, cost.unpriced), cost.total
        return (
            cost.total,
            cost.price_version,
            (cost.input, cost.cache_read, cost.cache_write, cost.output, cost.reasoning, cost.cache_savings,
             cost.unpriced),
            0.0,
        )  # fmt: skip

    return price


def _stamp(path: str | None) -> tuple[int, int] | None:
    if path is None:
        return None
    info = os.stat(path)
    return info.st_mtime_ns, info.st_size


def pricer_for(prices_file: str | Path | None) -> Pricer:
    """The pricer for the bundled table plus ``prices_file`` (None: bundled only), reloaded when the file
    changes. Raises :class:`~.price_table.PriceFileError` (or ``OSError``) when the file cannot be used."""
    key = None if prices_file is None else str(prices_file)
    stamp = _stamp(key)
    cached = _cache.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    with _lock:
        pricer = make_pricer(load_table(key))
        _cache[key] = (stamp, pricer)
        return pricer
