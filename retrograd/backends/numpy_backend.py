"""The NumPy backend: arrays in host memory (see Note [Reusing freed array memory] in _runtime.py)."""
import numpy as np


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
