"""The frameworks a workload can run on: which are installed, how each is pinned, how results compare.

Thread policy (printed with every table):
  * ``torch1`` runs with ``torch.set_num_threads(1)``, ``torch`` with the process default
    (the number of cores); each is set right before its samples, outside the timed region.
  * Everything that runs on NumPy (retrograd, HIPS autograd, MyGrad, the NumPy floor) uses
    NumPy's BLAS pinned to 1 thread: by threadpoolctl when installed, else by
    ``OPENBLAS_NUM_THREADS=1`` set before NumPy loads (see ``bench/__init__.py``).
  * JAX (``jax`` eager, ``jaxjit`` with the whole step under ``jax.jit``) runs on XLA's CPU
    backend with one intra-op thread: ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false
    intra_op_parallelism_threads=1`` and ``JAX_PLATFORMS=cpu``, set before JAX loads (in
    ``bench/__init__.py``; a process that imported JAX earlier keeps its own setting). 64-bit
    types are switched on (``jax_enable_x64``) so float64 workloads stay float64; float32 ones
    pass float32 arrays. Every JAX step ends in ``jax.block_until_ready``, so the asynchronous
    dispatch is inside the timed region, and ``jaxjit`` compiles in its untimed first call.
    Both are optional: without JAX installed their columns are skipped with a note.
"""
from __future__ import annotations

import importlib
import os
import platform

import numpy as np

__all__ = ["FRAMEWORKS", "LABELS", "REFERENCE", "available", "enter", "to_numpy", "pin_numpy_blas",
           "machine_description", "import_jax"]

# Column order of every table; the reference column for the ratios is PyTorch with 1 thread.
FRAMEWORKS = ("retrograd", "torch1", "torch", "autograd", "mygrad", "jax", "jaxjit", "numpy")
REFERENCE = "torch1"
LABELS = {
    "retrograd": "retrograd",
    "torch1": "PyTorch (1 thread)",
    "torch": "PyTorch (default threads)",
    "autograd": "HIPS autograd",
    "mygrad": "MyGrad",
    "jax": "JAX (eager)",
    "jaxjit": "JAX (jax.jit)",
    "numpy": "NumPy floor (hand-written backward)",
}
_MODULES = {"retrograd": "retrograd", "torch1": "torch", "torch": "torch", "autograd": "autograd",
            "mygrad": "mygrad", "jax": "jax", "jaxjit": "jax", "numpy": "numpy"}

_default_torch_threads = None
_blas_note = None


def available(name: str) -> tuple[bool, str]:
    """(True, version) when framework ``name`` imports, else (False, why)."""
    try:
        mod = importlib.import_module(_MODULES[name])
    except ImportError as exc:
        return False, f"not installed ({exc.name or exc}); pip install -e '.[bench]'"
    version = getattr(mod, "__version__", None)
    if version is None:
        from importlib import metadata
        try:
            version = metadata.version(_MODULES[name])
        except metadata.PackageNotFoundError:
            version = "?"
    return True, str(version)


def enter(name: str) -> None:
    """Puts the process in the thread setting that framework ``name`` is measured under."""
    global _default_torch_threads
    if name in ("torch", "torch1"):
        import torch
        if _default_torch_threads is None:
            _default_torch_threads = torch.get_num_threads()
        want = 1 if name == "torch1" else _default_torch_threads
        if torch.get_num_threads() != want:
            torch.set_num_threads(want)


def import_jax():
    """``(jax, jax.numpy)`` with 64-bit types on; raises ImportError without JAX."""
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    return jax, jnp


def torch_default_threads() -> int | None:
    try:
        import torch
    except ImportError:
        return None
    return _default_torch_threads if _default_torch_threads is not None else torch.get_num_threads()


def pin_numpy_blas() -> str:
    """Pins NumPy's BLAS to one thread for the rest of the process; returns how it was done."""
    global _blas_note
    if _blas_note is not None:
        return _blas_note
    torch_default_threads()  # read PyTorch's default before anything could change it
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        env = os.environ.get("OPENBLAS_NUM_THREADS")
        _blas_note = f"OPENBLAS_NUM_THREADS={env} (threadpoolctl not installed)"
        return _blas_note
    libs = [d for d in threadpool_info() if d["user_api"] == "blas"]
    # Keep the limiter object alive for the whole process: the limits hold while it exists.
    global _limiter
    _limiter = threadpool_limits(limits=1, user_api="blas")
    names = ", ".join(sorted({f"{d['internal_api']} {d.get('version') or ''}".strip() for d in libs})) or "none"
    _blas_note = f"threadpoolctl: BLAS libraries loaded in this process ({names}) limited to 1 thread"
    return _blas_note


_limiter = None


def to_numpy(value) -> np.ndarray:
    """A result of any framework as a NumPy array, for the cross-framework check."""
    if isinstance(value, np.ndarray):
        return value
    module = type(value).__module__
    if module.startswith("mygrad"):
        return np.asarray(value.data)
    if module.startswith("jax"):
        return np.asarray(value)
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "cpu"):
        value = value.cpu()
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return np.asarray(value)


def machine_description() -> dict:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = None
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    except (ValueError, OSError, AttributeError):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = {}
    for name in ("retrograd", "torch", "autograd", "mygrad", "jax", "numpy"):
        ok, ver = available(name)
        versions[name] = ver if ok else None
    return {
        "cpu": cpu,
        "cores": cores,
        "memory_gib": None if mem is None else round(mem, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": versions,
        "torch_default_threads": torch_default_threads(),
        "load_average": [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None,
    }
