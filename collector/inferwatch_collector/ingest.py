"""The CPU half of ingest: request bytes → decoded OTLP → typed rows → Native blocks, one call per request.

This runs in ingest worker processes (see :mod:`ingest_pool`) so that decoding and normalising, which are pure
Python and hold the GIL, do not compete with the HTTP server and the database writer in the collector process.
Everything here is a plain function of its arguments, and its result pickles cheaply (bytes and counts).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .cost.ingest_pricer import pricer_for
from .native import EncodedRows, encode_rows
from .normalize import normalize
from .otlp_decode import decode_traces_fast
from .pairing import HeldCall, split_held, to_held_row
from .user_ids import UserHasher


@dataclass(frozen=True)
class IngestResult:
    """What one OTLP request turned into."""

    tables: dict[str, EncodedRows]  # table -> Native blocks (only tables with rows)
    accepted: int  # spans that became rows
    rejected: int
    errors: list[str]
    redactions: dict[str, int] = field(default_factory=dict)
    held: list[HeldCall] = field(default_factory=list)  # LLM calls for the pairing window (in llm_calls_held)

    @property
    def rows(self) -> int:
        return sum(part.rows for part in self.tables.values())


def process_request(body: bytes, content_type: str, content_encoding: str | None, project_id: str, *,
                    max_bytes: int, content_capture: str, retention_days: int,
                    prices_file: str | None = None, hold_calls: bool = True,
                    user_hash_key: bytes | None = None) -> IngestResult:
    """Decode, normalise, price and encode one request. Raises ``OtlpDecodeError`` for a body that cannot be
    read.

    Spans older than the retention window are rejected (ClickHouse's TTL would silently drop them on insert).
    Every LLM call is priced with the bundled table plus ``prices_file`` (see :mod:`pricing`). With
    ``hold_calls``, LLM calls that may have a twin span (:mod:`.pairing.held`) are not written to llm_calls but
    to llm_calls_held, and returned in ``held`` for the pairing window. User ids are hashed with
    ``user_hash_key`` (the deployment's key; None: a process-wide random one).
    """
    message = decode_traces_fast(body, content_type, content_encoding, max_bytes)
    batch = normalize(message, project_id, content_capture=content_capture, retention_days=retention_days,
                      price=pricer_for(prices_file), user_hasher=hasher_for(user_hash_key))
    llm_calls, prompt_logs, held = batch.llm_calls, batch.prompt_logs, []
    if hold_calls:
        llm_calls, prompt_logs, held = split_held(llm_calls, prompt_logs)
    received_ms = time.time_ns() // 1_000_000
    tables = {}
    for table, rows in (("llm_calls", llm_calls), ("spans", batch.spans), ("prompt_logs", prompt_logs),
                        ("llm_calls_held", [to_held_row(call, received_ms) for call in held])):
        if rows:
            tables[table] = encode_rows(table, rows)
    return IngestResult(tables, len(batch.llm_calls) + len(batch.spans), batch.rejected, batch.errors,
                        batch.redactions, held)


_HASHERS: dict[bytes, UserHasher] = {}


def hasher_for(key: bytes | None) -> UserHasher | None:
    """One :class:`UserHasher` per key in this process (its memo outlives a request); None for None."""
    if key is None:
        return None
    hasher = _HASHERS.get(key)
    if hasher is None:
        if len(_HASHERS) >= 4:
            _HASHERS.clear()
        hasher = _HASHERS[key] = UserHasher(key)
    return hasher
