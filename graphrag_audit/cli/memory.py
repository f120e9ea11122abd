"""How the command-line process uses memory: small pages only, and freed memory given back to
the operating system between the audit's phases.

**Small pages.** Linux may back large allocations with 2 MB transparent huge pages (numpy asks
for them on its large arrays), and every first touch of one has the kernel clear 2 MB at once.
The audit makes and frees many large temporary arrays: on a 2-core virtual machine 55% of a
1M-entity audit's CPU samples were the kernel clearing huge pages, and the same audit's kernel
time ranged from 1.2 to 8.5 s between runs. :func:`avoid_huge_pages` turns them off for this
process (``prctl(PR_SET_THP_DISABLE)``): that audit's kernel time was then 2.3-2.8 s, with four
times as many (small) page faults (docs/performance.md, S16).

**Freed memory.** Both allocators the audit uses keep memory they were handed back: arrow's pool
(mimalloc) keeps freed pages per thread, and glibc's malloc, which numpy uses, keeps freed arrays
in its heaps once they are smaller than its moving mmap threshold (up to 32 MB: one array per
membership row of a 1M-entity index is 28 MB). A phase's temporary arrays then stay resident
while the next phase allocates its own, and the peak RSS is their sum (300 MB more at 1M
entities). :func:`release_freed_memory` hands both back; the next phase pays page faults
instead. Keeping the memory (no release, glibc's thresholds raised) gave up to 30% fewer faults
but no wall time outside the runs' own spread, measured with huge pages on (S14, S16).

Only the CLI calls these: a library caller's process is left as it is. Nothing here imports
pyarrow before it is used, so the start-up (``--help``) stays light; both calls reach the C
library the process already has loaded (no library search).
"""

from __future__ import annotations

import ctypes
import sys
from functools import lru_cache

#: linux/prctl.h: set the process's "no transparent huge pages" flag (Linux >= 3.15)
_PR_SET_THP_DISABLE = 41


def avoid_huge_pages() -> bool:
    """Ask Linux not to back this process's memory with transparent huge pages from now on;
    True when it did (False elsewhere, or when the kernel refuses). Children inherit the flag."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = _libc().prctl
        return (
            prctl(
                ctypes.c_int(_PR_SET_THP_DISABLE),
                ctypes.c_ulong(1),
                ctypes.c_ulong(0),
                ctypes.c_ulong(0),
                ctypes.c_ulong(0),
            )
            == 0
        )
    except (OSError, AttributeError, TypeError):
        return False


def release_freed_memory() -> None:
    """Return arrow's and malloc's freed memory to the OS (no-op where unsupported)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=1)
def _libc():
    """The C library this process already runs on (no search: ``CDLL(None)``), or None."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except (OSError, TypeError):
        return None


@lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (other C libraries, other systems)."""
    try:
        trim = _libc().malloc_trim
    except AttributeError:  # (also: no C library at all)
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim
