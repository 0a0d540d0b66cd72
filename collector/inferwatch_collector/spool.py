"""Bounded on-disk spool: accepted batches that could not be written to ClickHouse, replayed in order later.

Why: a collector that answers 503 for the length of a database outage pushes the outage onto every exporter
(and the SDK's bounded queue drops spans after a while). With a spool the collector keeps acknowledging: a batch
whose insert failed (or that arrives while older batches are still spooled) is written to a segment file and
fsync'd, and only then are its requests acknowledged. The writer thread replays segments oldest first when the
database answers again, with the dedup tokens the batch was first tried with, so a batch whose first insert did
land (reply lost) or a replay cut short by a crash lands once: ClickHouse drops a repeated
``insert_deduplication_token`` (``non_replicated_deduplication_window`` on single-node tables, Replicated* by
default; migrations/0001).

Layout: one segment file per writer batch, ``<seq:016d>.seg`` in the spool directory, written as ``.tmp``,
fsync'd, renamed and the directory fsync'd: a crash leaves either a whole segment or an ignored ``.tmp``, never
a torn one. A segment holds ``MAGIC | u32 header length | JSON header (batch id, per table: columns, rows,
bytes) | the tables' Native blocks | u32 CRC32`` of everything before it. A replayed segment is unlinked; one
that fails its checksum (disk corruption) is moved to ``corrupt/`` and counted as dropped. The total size is
bounded by ``max_bytes``: beyond it :meth:`Spool.append` raises :class:`SpoolFull` and ingest answers 503.
A lock file (``flock``) keeps a second collector from sharing the directory: give each replica its own.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import struct
import time
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .private_dir import private_directory

log = logging.getLogger(__name__)

MAGIC = b"IWSPOOL1"
_U32 = struct.Struct("<I")
_SUFFIX = ".seg"
SEGMENT_GLOB = f"*{_SUFFIX}"


class SpoolFull(Exception):
    """Appending this batch would exceed the spool's size limit."""


class SpoolLocked(RuntimeError):
    """Another process holds the spool directory."""


@dataclass(frozen=True)
class SpoolPart:
    """One table's Native blocks of a batch."""

    table: str
    columns: tuple[str, ...]
    data: bytes
    rows: int


@dataclass(frozen=True)
class SpoolRecord:
    """One spooled batch, as read back from its segment."""

    seq: int
    batch_id: str
    created: float
    parts: tuple[SpoolPart, ...]
    path: Path
    size: int

    @property
    def rows(self) -> int:
        return sum(part.rows for part in self.parts)

    def token(self, table: str) -> str:
        """The ``insert_deduplication_token`` of this batch's insert into ``table`` (same as the first try)."""
        return dedup_token(self.batch_id, table)


def dedup_token(batch_id: str, table: str) -> str:
    """Dedup token of one table insert of a batch; the writer and the replay must agree on it."""
    return f"{batch_id}:{table}"


@dataclass
class SpoolStats:
    """Counters for /metrics (updated by the writer thread only)."""

    spooled_batches: int = 0
    spooled_rows: int = 0
    replayed_batches: int = 0
    replayed_rows: int = 0
    replay_failures: int = 0
    rejected_full: int = 0
    dropped_batches: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))


def encode_segment(batch_id: str, parts: Sequence[SpoolPart], created: float | None = None) -> bytes:
    """A segment's bytes (exposed for tests that forge damaged segments)."""
    header = json.dumps({
        "batch_id": batch_id,
        "created": time.time() if created is None else created,
        "parts": [{"table": p.table, "columns": list(p.columns), "rows": p.rows, "bytes": len(p.data)}
                  for p in parts],
    }, separators=(",", ":")).encode()
    body = b"".join([MAGIC, _U32.pack(len(header)), header, *(p.data for p in parts)])
    return body + _U32.pack(zlib.crc32(body))


def decode_segment(raw: bytes, seq: int, path: Path) -> SpoolRecord:
    """Parse and verify a segment; ``ValueError`` when it is damaged."""
    if len(raw) < len(MAGIC) + 8 or not raw.startswith(MAGIC):
        raise ValueError("not a spool segment (bad magic or too short)")
    body, (crc,) = raw[:-4], _U32.unpack(raw[-4:])
    if zlib.crc32(body) != crc:
        raise ValueError("checksum mismatch")
    (header_len,) = _U32.unpack_from(body, len(MAGIC))
    start = len(MAGIC) + 4
    header = json.loads(body[start:start + header_len])
    offset = start + header_len
    parts = []
    for item in header["parts"]:
        data = body[offset:offset + item["bytes"]]
        if len(data) != item["bytes"]:
            raise ValueError("segment shorter than its header says")
        parts.append(SpoolPart(item["table"], tuple(item["columns"]), data, int(item["rows"])))
        offset += item["bytes"]
    if offset != len(body):
        raise ValueError("trailing bytes after the last part")
    return SpoolRecord(seq, header["batch_id"], float(header["created"]), tuple(parts), path, len(raw))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Spool:
    """The spool directory of one collector. Not thread-safe: the writer thread is its only user."""

    def __init__(self, directory: Path | str, max_bytes: int) -> None:
        self.directory = Path(directory).expanduser()
        self.max_bytes = max_bytes
        self.stats = SpoolStats()
        private_directory(self.directory)
        self._lock_fd = os.open(self.directory / "LOCK", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(self._lock_fd)
            raise SpoolLocked(f"the spool directory {self.directory} is in use by another collector; give each "
                              f"collector its own INFERWATCH_SPOOL_DIR") from exc
        for leftover in self.directory.glob("*.tmp"):  # a crash during append: never acknowledged
            leftover.unlink(missing_ok=True)
        self._segments: dict[int, int] = {}  # seq -> size, in order
        for path in sorted(self.directory.glob(f"*{_SUFFIX}")):
            if path.stem.isdigit():
                self._segments[int(path.stem)] = path.stat().st_size
        self._next_seq = max(self._segments, default=0) + 1
        self._bytes = sum(self._segments.values())
        self._oldest_created: float | None = None
        if self._segments:
            log.info("spool %s: %d batch(es), %d bytes left from an earlier run; replaying",
                     self.directory, len(self._segments), self._bytes)

    # --- state ---
    @property
    def pending(self) -> int:
        """Spooled batches not yet replayed."""
        return len(self._segments)

    @property
    def bytes(self) -> int:
        """Bytes on disk in segments."""
        return self._bytes

    @property
    def full(self) -> bool:
        return self._bytes >= self.max_bytes

    def oldest_age_s(self) -> float:
        """Seconds since the oldest pending batch was spooled (0 when empty)."""
        if not self._segments:
            return 0.0
        if self._oldest_created is None:
            try:
                first = self._path(next(iter(self._segments)))
                self._oldest_created = first.stat().st_mtime
            except OSError:
                return 0.0
        return max(0.0, time.time() - self._oldest_created)

    def _path(self, seq: int) -> Path:
        return self.directory / f"{seq:016d}{_SUFFIX}"

    # --- writing ---
    def append(self, batch_id: str, parts: Sequence[SpoolPart]) -> int:
        """Write one batch durably (fsync'd) and return its sequence number; :class:`SpoolFull` beyond the limit.

        A batch larger than the whole limit is still taken when the spool is empty, so one maximum-size batch
        can always be spooled.
        """
        raw = encode_segment(batch_id, parts)
        if self._bytes + len(raw) > self.max_bytes and self._segments:
            self.stats.rejected_full += 1
            raise SpoolFull(f"spool {self.directory} holds {self._bytes} of {self.max_bytes} bytes")
        seq = self._next_seq
        final = self._path(seq)
        tmp = final.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(raw)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, final)
        _fsync_dir(self.directory)
        self._next_seq += 1
        self._segments[seq] = len(raw)
        self._bytes += len(raw)
        self.stats.spooled_batches += 1
        self.stats.spooled_rows += sum(p.rows for p in parts)
        return seq

    # --- replaying ---
    def peek(self) -> SpoolRecord | None:
        """The oldest batch, verified; damaged segments are set aside (counted as dropped) and skipped."""
        while self._segments:
            seq = next(iter(self._segments))
            path = self._path(seq)
            try:
                record = decode_segment(path.read_bytes(), seq, path)
            except FileNotFoundError:
                self._forget(seq)
                continue
            except (ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
                self._set_aside(seq, path, str(exc))
                continue
            return record
        return None

    def remove(self, record: SpoolRecord) -> None:
        """The batch is in ClickHouse: delete its segment."""
        record.path.unlink(missing_ok=True)
        _fsync_dir(self.directory)
        self._forget(record.seq)
        self.stats.replayed_batches += 1
        self.stats.replayed_rows += record.rows

    def _forget(self, seq: int) -> None:
        self._bytes -= self._segments.pop(seq, 0)
        self._oldest_created = None

    def _set_aside(self, seq: int, path: Path, reason: str) -> None:
        log.error("spool segment %s is damaged (%s); moved to corrupt/ and not replayed", path.name, reason)
        corrupt = self.directory / "corrupt"
        corrupt.mkdir(exist_ok=True)
        try:
            os.replace(path, corrupt / path.name)
        except OSError:
            path.unlink(missing_ok=True)
        self._forget(seq)
        self.stats.dropped_batches["corrupt"] += 1

    def close(self) -> None:
        """Release the directory lock (segments stay for the next start)."""
        if self._lock_fd >= 0:
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            finally:
                os.close(self._lock_fd)
                self._lock_fd = -1

    def metric_lines(self) -> list[str]:
        """Prometheus exposition lines of the spool."""
        s = self.stats
        return [
            "# TYPE inferwatch_spool_batches_spooled_total counter",
            f"inferwatch_spool_batches_spooled_total {s.spooled_batches}",
            "# TYPE inferwatch_spool_rows_spooled_total counter",
            f"inferwatch_spool_rows_spooled_total {s.spooled_rows}",
            "# TYPE inferwatch_spool_batches_replayed_total counter",
            f"inferwatch_spool_batches_replayed_total {s.replayed_batches}",
            "# TYPE inferwatch_spool_rows_replayed_total counter",
            f"inferwatch_spool_rows_replayed_total {s.replayed_rows}",
            "# TYPE inferwatch_spool_replay_failures_total counter",
            f"inferwatch_spool_replay_failures_total {s.replay_failures}",
            "# TYPE inferwatch_spool_batches_rejected_full_total counter",
            f"inferwatch_spool_batches_rejected_full_total {s.rejected_full}",
            "# TYPE inferwatch_spool_batches_dropped_total counter",
            f'inferwatch_spool_batches_dropped_total{{reason="corrupt"}} {s.dropped_batches.get("corrupt", 0)}',
            "# TYPE inferwatch_spool_bytes gauge",
            f"inferwatch_spool_bytes {self._bytes}",
            "# TYPE inferwatch_spool_limit_bytes gauge",
            f"inferwatch_spool_limit_bytes {self.max_bytes}",
            "# TYPE inferwatch_spool_pending_batches gauge",
            f"inferwatch_spool_pending_batches {self.pending}",
            "# TYPE inferwatch_spool_oldest_age_seconds gauge",
            f"inferwatch_spool_oldest_age_seconds {self.oldest_age_s():.3f}",
        ]


def spool_dir_for(settings) -> Path:
    """The configured spool directory, else ``spool`` beside the embedded data directory."""
    if settings.spool_dir:
        return Path(settings.spool_dir).expanduser()
    return Path(settings.data_dir).expanduser().parent / "spool"


def open_spool(settings) -> Spool | None:
    """The collector's spool from settings, or ``None`` when spooling is off (``spool_max_bytes = 0``)."""
    if settings.spool_max_bytes <= 0:
        return None
    return Spool(spool_dir_for(settings), settings.spool_max_bytes)
