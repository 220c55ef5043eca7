"""Process-wide settings: the two retrograd makes once, at import (the collector's thresholds and the
reuse of freed array memory, each with a Note and an environment variable that keeps the default),
and the thread counts a program may set (``set_num_threads``, as ``torch.set_num_threads``).

Note [Collector thresholds]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every recorded op leaves a few GC-tracked objects in the graph (the node, its edges), and a
forward pass allocates many short-lived ones. With CPython's default thresholds (700, 10, 10) a
full collection runs every 100 young collections, and each one rescans every tracked object of
the process, the growing graph and whatever the program imported: on a 42,000-node chain that
was two thirds of the forward time. Full collections every 1,000 young collections instead free
exactly the same garbage, only later. retrograd makes that change at import, if the thresholds
are still CPython's defaults; set ``RETROGRAD_GC_TUNING=0`` to keep them.

Note [Reusing freed array memory]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A training step allocates and frees the same large temporaries (activations, columns of a
convolution, gradients) again and again. With glibc's defaults, large blocks come from fresh
``mmap``s or are trimmed from the heap as soon as they are freed, so every step pays the page
faults of touching new memory: that doubled the time of a small convolutional step here. Like
the caching allocators of other frameworks, retrograd asks glibc at import to serve blocks up to
32 MiB from the heap and to keep up to 256 MiB of freed heap memory for reuse (``mallopt``). Set
``RETROGRAD_MALLOC_TUNING=0`` to keep the C library's defaults.

Note [Large arrays apart]
~~~~~~~~~~~~~~~~~~~~~~~~~
A heap that keeps freed memory (Note [Reusing freed array memory]) still lets it go unused: a
freed 8 MiB block of attention scores is carved up by the smaller arrays allocated next (a
block's MLP activations, the next block's q, k and v, all kept for backward), and the next
block's 8 MiB scores no longer fit in what is left, so the heap grows again. In W15's step at
sequence 256 that left 7 to 8 MiB of free but unusable heap at the peak (50.5 MiB of growth for
about 43 MiB of live arrays). retrograd therefore installs a NumPy memory handler at import
(``_C/_array_pool.c``, where it is built): arrays of ``POOL_THRESHOLD`` bytes and more get
mappings of their own, smaller ones go to NumPy's own handler as before. A freed mapping is
cached and serves the next large request from its resident pages: the smallest cached mapping
that holds the request serves it (its tail stays cached), and where none is large enough the
largest is lengthened and the rest returned to the system. New pages are thus mapped only while
nothing is cached, and the pool's resident memory never exceeds the most its live arrays held at
once, whatever order they come and go in. At most ``POOL_CACHE_LIMIT`` bytes stay cached, as
with the heap's trim threshold. ``RETROGRAD_MALLOC_TUNING=0`` also keeps NumPy's own handler.
The handler is NumPy's per context: it serves the thread that imported retrograd (and contexts
copied from it); arrays keep the handler that made them, so each is freed by its own.
"""
from __future__ import annotations

import ctypes
import gc
import os
import platform
import sys

import threadpoolctl

from . import _C

__all__ = ["tune_collector", "reuse_freed_memory", "set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
POOL_THRESHOLD, POOL_CACHE_LIMIT = 256 << 10, 256 << 20  # See Note [Large arrays apart]


def tune_collector() -> bool:
    """Applies Note [Collector thresholds]; returns whether it changed them."""
    if os.environ.get("RETROGRAD_GC_TUNING", "1") == "0" or gc.get_threshold() != (700, 10, 10):
        return False
    gc.set_threshold(700, 10, 100)
    return True


def reuse_freed_memory() -> bool:
    """Applies Note [Reusing freed array memory] on glibc and Note [Large arrays apart] where the pool
    is built; returns whether it did the first."""
    if os.environ.get("RETROGRAD_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    if _C.array_pool is not None:
        _C.array_pool.install(POOL_THRESHOLD, POOL_CACHE_LIMIT)
    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(_M_TRIM_THRESHOLD, 256 << 20))


def set_num_threads(num: int) -> None:
    """Sets how many threads the BLAS library (matrix products) uses, as ``torch.set_num_threads``.

    retrograd's other kernels are NumPy's, single-threaded; the engine's threads are its own.

    Raises:
        RuntimeError: if ``num`` is not positive.
    """
    _check_count("set_num_threads", num)
    _thread_limits.append(threadpoolctl.threadpool_limits(limits=num, user_api="blas"))
    del _thread_limits[:-1]  # the newest limit stands; earlier objects need not be kept


def get_num_threads() -> int:
    """How many threads the BLAS library uses (the CPU count where no BLAS reports one)."""
    counts = [info["num_threads"] for info in threadpoolctl.threadpool_info() if info.get("user_api") == "blas"]
    return max(counts) if counts else (os.cpu_count() or 1)


_interop_threads = [os.cpu_count() or 1]
_thread_limits = []


def _check_count(name, num):
    if type(num) is not int:
        raise RuntimeError(f"{name} expects an int, but got {type(num).__name__}")
    if num <= 0:
        raise RuntimeError(f"{name} expects a positive integer")


def set_num_interop_threads(num: int) -> None:
    """Records the inter-op thread count, as ``torch.set_num_interop_threads``; retrograd runs no inter-op pool.

    Raises:
        RuntimeError: if ``num`` is not positive.
    """
    _check_count("set_num_interop_threads", num)
    _interop_threads[0] = num


def get_num_interop_threads() -> int:
    """The inter-op thread count last set (the CPU count by default)."""
    return _interop_threads[0]


tune_collector()
reuse_freed_memory()
