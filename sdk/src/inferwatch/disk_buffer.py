"""Optional on-disk buffer for span export requests the collector could not take (off by default).

Enabled by ``inferwatch.init(disk_buffer_dir=...)`` (or ``INFERWATCH_DISK_BUFFER_DIR``), bounded by
``disk_buffer_max_bytes`` (``INFERWATCH_DISK_BUFFER_MAX_BYTES``, default 64 MiB). Only the export thread touches it,
never the caller's thread (architecture §4 rule 7).

Layout: one *segment* file per OTLP ``ExportTraceServiceRequest`` (the serialized, uncompressed protobuf bytes,
exactly what would have been POSTed), named ``seg-<seq:016d>-<spans>.otlp`` so that order and span counts are known
from a directory listing alone. A segment is written to ``<name>.part``, fsync'd, renamed into place and the
directory fsync'd: after a crash a segment is either complete or absent (stray ``.part`` files are removed on
open). A 4-byte CRC32 header guards against a torn or corrupted file on filesystems that do not honour fsync;
such a segment is dropped and counted.

Order: segments are replayed oldest first, and while any segment is pending every new request is appended
behind it (the pipeline never sends around the buffer), so the collector receives requests in the order they
were made. A segment is deleted only after the collector acknowledged it; a crash between the acknowledgement and
the delete re-sends that one request on the next start (at-least-once; spans carry their ids).

When full, the **oldest** segments are dropped (counted as ``disk_buffer_full`` by span count) to make room for
the new one: the buffer keeps the most recent window of telemetry, which is what describes the app's state when
the collector comes back, and a long outage costs its beginning rather than its end. A request larger than the
whole buffer is dropped on its own.

One process per directory: the directory is locked (``flock`` on ``.lock``) by the pipeline that opened it. A
second process (or a forked child) that finds it locked runs without a disk buffer (drops counted as before) and
says so in ``stats()["disk_buffer"]["state"]``. Give each worker of a pre-fork server its own directory.
"""

from __future__ import annotations

import logging
import os
import re
import struct
import zlib
from collections import deque
from dataclasses import dataclass

log = logging.getLogger("inferwatch")

DEFAULT_MAX_BYTES = 64 << 20
_NAME = re.compile(r"^seg-(\d{16})-(\d+)\.otlp$")
_HEADER = struct.Struct(">I")  # crc32 of the payload


@dataclass(frozen=True)
class Segment:
    seq: int
    spans: int
    size: int  # bytes on disk

    @property
    def name(self) -> str:
        return f"seg-{self.seq:016d}-{self.spans}.otlp"


class DiskBufferLocked(RuntimeError):
    """Another process holds the directory."""


class DiskBuffer:
    """Bounded FIFO of serialized export requests in a directory. Not thread-safe: the export thread owns it."""

    def __init__(self, directory: str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.directory = os.path.abspath(directory)
        self.max_bytes = max(int(max_bytes), 1)
        os.makedirs(self.directory, exist_ok=True)
        self._lock_fd = self._lock()
        self._segments: deque[Segment] = deque()
        self._bytes = 0
        self._spans = 0  # kept as counters: stats() reads them from other threads while this one changes them
        self.dropped_full = 0  # spans dropped to stay under max_bytes
        self.dropped_corrupt = 0  # segments that failed their CRC (span count from the name)
        for entry in sorted(os.listdir(self.directory)):
            path = os.path.join(self.directory, entry)
            if entry.endswith(".part"):
                _unlink(path)  # a write interrupted by a crash: never acknowledged as buffered
                continue
            m = _NAME.match(entry)
            if m:
                seg = Segment(int(m.group(1)), int(m.group(2)), os.path.getsize(path))
                self._segments.append(seg)
                self._bytes += seg.size
                self._spans += seg.spans
        self._next_seq = self._segments[-1].seq + 1 if self._segments else 0

    def _lock(self) -> int:
        fd = os.open(os.path.join(self.directory, ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # not POSIX: no cross-process protection
            return fd
        except OSError as exc:
            os.close(fd)
            raise DiskBufferLocked(f"{self.directory} is in use by another process") from exc
        return fd

    # --- state ----------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._segments)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    @property
    def pending_spans(self) -> int:
        return self._spans

    # --- FIFO -----------------------------------------------------------------------------------------------
    def append(self, payload: bytes, spans: int) -> int:
        """Persist one request behind the others; returns how many spans were dropped (oldest first, or this
        request itself when it alone exceeds the buffer). Raises OSError when the disk write fails."""
        size = _HEADER.size + len(payload)
        if size > self.max_bytes:
            self.dropped_full += spans
            return spans
        dropped = 0
        while self._segments and self._bytes + size > self.max_bytes:
            oldest = self._segments.popleft()
            self._bytes -= oldest.size
            self._spans -= oldest.spans
            _unlink(os.path.join(self.directory, oldest.name))
            dropped += oldest.spans
        self.dropped_full += dropped
        seg = Segment(self._next_seq, spans, size)
        final = os.path.join(self.directory, seg.name)
        part = final + ".part"
        try:
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, _HEADER.pack(zlib.crc32(payload)) + payload)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(part, final)
            self._fsync_dir()
        except OSError:
            _unlink(part)
            raise
        self._next_seq += 1
        self._segments.append(seg)
        self._bytes += size
        self._spans += spans
        return dropped

    def peek(self) -> tuple[Segment, bytes | None] | None:
        """The oldest segment and its payload (None when it is corrupt: call :meth:`pop` to drop it)."""
        while self._segments:
            seg = self._segments[0]
            try:
                with open(os.path.join(self.directory, seg.name), "rb") as f:
                    raw = f.read()
            except FileNotFoundError:  # removed behind our back: forget it
                self._segments.popleft()
                self._bytes -= seg.size
                self._spans -= seg.spans
                continue
            if len(raw) < _HEADER.size or _HEADER.unpack_from(raw)[0] != zlib.crc32(raw[_HEADER.size:]):
                return seg, None
            return seg, raw[_HEADER.size:]
        return None

    def pop(self, corrupt: bool = False) -> Segment | None:
        """Remove the oldest segment (after the collector acknowledged it, or because it is corrupt)."""
        if not self._segments:
            return None
        seg = self._segments.popleft()
        self._bytes -= seg.size
        self._spans -= seg.spans
        if corrupt:
            self.dropped_corrupt += seg.spans
        _unlink(os.path.join(self.directory, seg.name))
        return seg

    def _fsync_dir(self) -> None:
        try:
            fd = os.open(self.directory, os.O_RDONLY)
        except OSError:
            return  # e.g. Windows: directories cannot be opened
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    def close(self) -> None:
        if self._lock_fd >= 0:
            try:
                os.close(self._lock_fd)  # releases the flock
            except OSError:
                pass
            self._lock_fd = -1

    def abandon_after_fork(self) -> None:
        """In a forked child: the parent keeps the directory (and the lock, shared through the inherited fd)."""
        try:
            os.close(self._lock_fd)  # closing our copy of the descriptor does not release the parent's flock
        except OSError:
            pass
        self._lock_fd = -1
        self._segments.clear()
        self._bytes = 0
        self._spans = 0


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
