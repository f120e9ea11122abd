"""Give freed memory back to the operating system between the audit's phases.

Both allocators the audit uses keep memory they were handed back: arrow's pool (mimalloc)
keeps freed pages per thread, and glibc's malloc, which numpy uses, keeps freed arrays in its
heaps once they are smaller than its moving mmap threshold (up to 32 MB: one array per
membership row of a 1M-entity index is 28 MB). A phase's temporary arrays then stay resident
while the next phase allocates its own, and the peak RSS is their sum (300 MB more at 1M
entities). :func:`release_freed_memory` hands both back; the next phase pays page faults
instead, which is cheap next to the arrays' own work.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache

import pyarrow as pa


def release_freed_memory() -> None:
    """Return arrow's and malloc's freed memory to the OS (no-op where unsupported)."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (other C libraries, other systems)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim
