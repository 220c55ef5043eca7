"""The array seam: each device type maps to a backend that owns its array namespace.

Nothing outside this package touches a specific array library except through a backend:
``backend.xp`` is the NumPy-compatible namespace that op forwards receive as ``xp``.
``cudnn`` and ``mps`` hold PyTorch's switches of those libraries, which retrograd does not use.
"""
from . import cudnn, mps  # noqa: F401 - torch.backends' switches
from .numpy_backend import NumpyBackend

__all__ = ["NumpyBackend", "get_backend", "register_backend"]

_BACKENDS = {"cpu": NumpyBackend(), "fake": NumpyBackend()}


def register_backend(device_type: str, backend) -> None:
    """Makes ``device_type`` available to ``retrograd.device``, backed by ``backend``."""
    _BACKENDS[device_type] = backend


def get_backend(device_type: str):
    """Returns the backend of ``device_type``, loading CuPy for ``cuda`` on first use."""
    backend = _BACKENDS.get(device_type)
    if backend is None and device_type == "cuda":
        from .cupy_backend import CupyBackend
        backend = _BACKENDS["cuda"] = CupyBackend.load()
    if backend is None:
        raise RuntimeError(f"Expected one of cpu, cuda, fake device type at start of device string: {device_type}")
    return backend
