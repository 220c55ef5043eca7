"""The CuPy backend: arrays in GPU memory (optional extra ``cuda``)."""


class CupyBackend:
    """GPU arrays through CuPy."""

    def __init__(self, cupy):
        self.xp = cupy
        self.ndarray = cupy.ndarray

    @classmethod
    def load(cls):
        """Imports CuPy and checks for a GPU; raises RuntimeError saying which of the two is missing."""
        try:
            import cupy
        except ImportError:
            raise RuntimeError("CUDA support needs CuPy, which is not installed. "
                               "Install it with: pip install 'retrograd[cuda]'") from None
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # CuPy raises its own runtime error type when no driver is present
            raise RuntimeError(f"CuPy is installed but no CUDA GPU is available: {exc}") from None
        if count == 0:
            raise RuntimeError("CuPy is installed but no CUDA GPU is available")
        return cls(cupy)

    def asarray(self, data, dtype=None):
        return self.xp.asarray(data, dtype=dtype)

    def to_numpy(self, array):
        return self.xp.asnumpy(array)

    def from_numpy(self, array):
        return self.xp.asarray(array)

    def device_count(self) -> int:
        return self.xp.cuda.runtime.getDeviceCount()
