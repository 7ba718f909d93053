"""This process's resident memory, as the informer and metadata benchmarks measure it."""

from __future__ import annotations

import ctypes
import gc
import os

__all__ = ["rss", "settled_rss"]

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    """Resident set size in bytes (``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def settled_rss() -> int:
    """:func:`rss` after a full collection and ``malloc_trim``, so that freed memory the
    allocator still holds does not count."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    return rss()
