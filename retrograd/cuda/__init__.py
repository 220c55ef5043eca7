"""``retrograd.cuda``: the CUDA device's helpers, as ``torch.cuda``, over the optional CuPy backend.

CUDA tensors exist where the ``cuda`` extra (CuPy) is installed and a GPU is present
(``is_available()``). Without them, as in a CPU build of PyTorch, the queries answer (no GPU,
zero devices), seeding is silently ignored, and whatever needs a device raises AssertionError.
"""
from __future__ import annotations

from ..backends import get_backend

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "synchronize", "current_device", "get_device_name", "get_device_capability", "empty_cache",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "is_bf16_supported", "device"]

_NO_CUDA = "Torch not compiled with CUDA enabled (retrograd needs the 'cuda' extra, CuPy, and a GPU)"


_missing = []  # the reason CUDA is unavailable, once found: looking again would retry the import


def _backend():
    """The CuPy backend, or None where CuPy or a GPU is missing."""
    if _missing:
        return None
    try:
        return get_backend("cuda")
    except RuntimeError as exc:
        _missing.append(str(exc))
        return None


def _require():
    backend = _backend()
    if backend is None:
        raise AssertionError(_NO_CUDA)
    return backend


def is_available() -> bool:
    """Whether CUDA tensors can be made: CuPy is installed and sees a GPU.

    Example::
        >>> import retrograd as rg
        >>> isinstance(rg.cuda.is_available(), bool)
        True
    """
    return _backend() is not None


def device_count() -> int:
    """The number of GPUs CuPy sees (0 without CuPy or a GPU)."""
    backend = _backend()
    return 0 if backend is None else backend.device_count()


def is_initialized() -> bool:
    """Whether the CUDA backend has been loaded in this process."""
    return is_available()


def manual_seed(seed: int) -> None:
    """Seeds the current GPU's generator; silently ignored without CUDA, as in PyTorch."""
    backend = _backend()
    if backend is not None:
        backend.xp.random.seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds every GPU's generator; silently ignored without CUDA, as in PyTorch."""
    backend = _backend()
    if backend is None:
        return
    for index in range(backend.device_count()):
        with backend.xp.cuda.Device(index):
            backend.xp.random.seed(int(seed))


def seed() -> None:
    """Seeds the current GPU's generator from entropy; silently ignored without CUDA."""
    backend = _backend()
    if backend is not None:
        backend.xp.random.seed()


def seed_all() -> None:
    """Seeds every GPU's generator from entropy; silently ignored without CUDA."""
    backend = _backend()
    if backend is None:
        return
    for index in range(backend.device_count()):
        with backend.xp.cuda.Device(index):
            backend.xp.random.seed()


def synchronize(device=None) -> None:
    """Waits for the GPU's queued work to finish; AssertionError without CUDA."""
    _require().xp.cuda.Device(_index(device)).synchronize()


def current_device() -> int:
    """The index of the current GPU; AssertionError without CUDA."""
    return int(_require().xp.cuda.runtime.getDevice())


def get_device_name(device=None) -> str:
    """The name of a GPU (the current one by default); AssertionError without CUDA."""
    props = _require().xp.cuda.runtime.getDeviceProperties(_index(device))
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None) -> tuple:
    """``(major, minor)`` compute capability of a GPU; AssertionError without CUDA."""
    props = _require().xp.cuda.runtime.getDeviceProperties(_index(device))
    return int(props["major"]), int(props["minor"])


def empty_cache() -> None:
    """Frees the memory CuPy holds in its pool but no array uses; nothing without CUDA."""
    backend = _backend()
    if backend is not None:
        backend.xp.get_default_memory_pool().free_all_blocks()


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory that arrays use (0 without CUDA)."""
    backend = _backend()
    return 0 if backend is None else int(backend.xp.get_default_memory_pool().used_bytes())


def max_memory_allocated(device=None) -> int:
    """Bytes of GPU memory CuPy's pool has held at most (0 without CUDA)."""
    backend = _backend()
    return 0 if backend is None else int(backend.xp.get_default_memory_pool().total_bytes())


def memory_reserved(device=None) -> int:
    """Bytes of GPU memory CuPy's pool holds (0 without CUDA)."""
    backend = _backend()
    return 0 if backend is None else int(backend.xp.get_default_memory_pool().total_bytes())


def is_bf16_supported() -> bool:
    """False: retrograd's CUDA arrays (CuPy's) have no bfloat16; its bfloat16 tensors are on the CPU (ml_dtypes)."""
    return False


def _index(device) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    index = getattr(device, "index", None)
    if index is None and isinstance(device, str):
        _, _, idx = device.partition(":")
        index = int(idx) if idx else None
    return current_device() if index is None else int(index)


class device:
    """Context manager that makes GPU ``idx`` current; does nothing for None or without CUDA."""

    def __init__(self, idx):
        self.idx = idx
        self._context = None

    def __enter__(self):
        backend = _backend()
        if backend is not None and self.idx is not None and self.idx != -1:
            self._context = backend.xp.cuda.Device(_index(self.idx))
            self._context.__enter__()
        return self

    def __exit__(self, *exc):
        if self._context is not None:
            self._context.__exit__(*exc)
            self._context = None
