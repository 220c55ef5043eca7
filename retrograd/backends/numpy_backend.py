"""The NumPy backend: arrays in host memory.

Note [Reusing freed array memory]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A training step allocates and frees the same large temporaries (activations, columns of a
convolution, gradients) again and again. With glibc's defaults, large blocks come from fresh
``mmap``s or are trimmed from the heap as soon as they are freed, so every step pays the page
faults of touching new memory: that doubled the time of a small convolutional step here. Like
the caching allocators of other frameworks, retrograd asks glibc at import to serve blocks
up to 32 MiB from the heap and to keep up to 256 MiB of freed heap memory for reuse
(``mallopt``). Set ``RETROGRAD_MALLOC_TUNING=0`` to keep the C library's defaults.
"""
import ctypes
import os
import platform
import sys

import numpy as np

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def reuse_freed_memory() -> bool:
    """Applies Note [Reusing freed array memory] on glibc; returns whether it did."""
    if os.environ.get("RETROGRAD_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(_M_TRIM_THRESHOLD, 256 << 20))


reuse_freed_memory()


class NumpyBackend:
    """Host arrays through NumPy; also backs the ``fake`` test device, which has its own worker thread."""

    xp = np
    ndarray = np.ndarray

    def asarray(self, data, dtype=None):
        """Returns ``data`` as an ndarray of NumPy dtype ``dtype`` (no copy when it already is one)."""
        return np.asarray(data, dtype=dtype)

    def to_numpy(self, array):
        """Returns a NumPy array with the contents of ``array`` (the array itself on the host)."""
        return array

    def from_numpy(self, array):
        """Returns ``array`` as this backend's array (shared, on the host)."""
        return array

    def device_count(self) -> int:
        return 1
