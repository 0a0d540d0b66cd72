"""Give back the pages of the embedded database's library that only its start touched.

Loading chDB (a ~530 MB shared object) and opening a database touches about 200 MiB of its code and read-only
data: the static initialisers of every ClickHouse function, format and engine, and the relocation tables the
dynamic loader applies once. Those pages are file-backed and clean, so the kernel may drop them at any time and
read them back on demand, but until memory runs short they count in the collector's resident set (RSS). Once the
collector has started, :func:`release_library_pages` asks the kernel to reclaim them now
(``madvise(MADV_PAGEOUT)``, Linux 5.4+) on the library's read-only mappings; what the collector then runs (the
insert and query paths) faults back in from the page cache or disk, a few milliseconds once. Writable and
anonymous memory (heaps, caches, relocated data) is never touched, nothing goes to swap, and where the advice is
unknown (other systems, older kernels) nothing happens. ``INFERWATCH_RELEASE_LIBRARY_PAGES=false`` turns it off.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import sys

log = logging.getLogger(__name__)

#: The shared object of the embedded engine, as it appears in ``/proc/self/maps``.
CHDB_LIBRARY = "_chdb.abi3.so"
MADV_PAGEOUT = 21  # linux/mman.h: reclaim these pages now


def resident_bytes() -> int:
    """This process's resident set size, in bytes (0 where ``/proc`` is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def read_only_mappings(library: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every mapping of a file named ``library`` that is neither writable nor shared."""
    found = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 6 or not parts[5].endswith("/" + library):
                    continue
                perms = parts[1]
                if "w" in perms or perms[3] != "p":
                    continue
                start, end = (int(x, 16) for x in parts[0].split("-"))
                found.append((start, end))
    except OSError:
        return []
    return found


def release_library_pages(library: str = CHDB_LIBRARY) -> int:
    """Ask the kernel to reclaim the resident pages of ``library``'s read-only mappings; returns how many bytes the
    resident set shrank by (0 when the library is not loaded or the advice is not supported here)."""
    if not sys.platform.startswith("linux"):
        return 0
    mappings = read_only_mappings(library)
    if not mappings:
        return 0
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    madvise = libc.madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    before = resident_bytes()
    for start, end in mappings:
        if madvise(start, end - start, MADV_PAGEOUT) != 0:
            log.debug("madvise(MADV_PAGEOUT) not available: errno %d", ctypes.get_errno())
            return 0
    released = max(0, before - resident_bytes())
    log.info("released %.0f MiB of start-up pages of the embedded database's library", released / 2**20)
    return released
