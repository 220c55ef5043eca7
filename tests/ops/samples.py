"""Sample inputs for every op, swept by tests/ops/test_op_table.py.

Format
------
``SAMPLES`` maps an op name to a list of ``Sample``. The name is a key of
``retrograd.ops._declarations.REGISTRY`` (every registered op, public or private, needs at least
one sample, or the sweep fails), or the name of a public composite function (``var``,
``chunk``...) that has no registry entry of its own.

A ``Sample`` is a call plus its tensor inputs::

    Sample(lambda m, x, y: m.add(x, y, alpha=2), A(2, 3), A(3))

- ``call(m, *tensors)`` runs the op. ``m`` is the ``retrograd`` module, or ``torch`` for the
  PyTorch comparison, so write the call once in the API both share (methods, operators and
  indexing work too). Non-tensor arguments (dims, shapes, scalars) live inside the lambda.
  When PyTorch spells the call differently, give ``torch_call`` as well.
- Each input is a NumPy array, turned into a tensor of the same dtype and strides (so a
  non-contiguous array gives a non-contiguous tensor). Floating arrays require grad (they are
  checked with gradcheck, in float64); integer and bool arrays never do; wrap a floating array
  in ``Const(...)`` to keep it out of the gradient checks. Build them with the helpers
  ``A`` (uniform in [-2, 2)), ``P`` (positive), ``I`` (int64), ``B`` (bool), ``nc``
  (the same values, non-contiguous) and ``perm_index`` (unique indices, for scatter).
- ``ref(*arrays)``: optional NumPy reference for the forward result (a tuple for several).
- ``grad=False``: skip the gradient checks (e.g. a sample placed on a kink, or a
  non-differentiable op). ``gradgrad=False``: skip only the second-order ones.
- ``torch=False``: skip the PyTorch comparison (say why in ``note``).
- ``eps``/``atol``: gradcheck's step and tolerance, for ops that round their input.

Cover, where the op allows them: broadcasting, 0-d, empty and non-contiguous inputs, negative
dims, tuple dims and the edge cases PyTorch users rely on. Keep shapes small: every floating
input element costs a few forward and backward passes in gradgradcheck.

Where samples live: each op family keeps its samples in a file of its own,
``tests/ops/samples_<family>.py`` (``samples_pointwise.py``, ``samples_nn.py``...). Every such
file is imported at the end of this module; it starts with ``from samples import *`` and calls
``add(name, *samples)``. A new family needs only a new file.
"""
from __future__ import annotations

import importlib.util
import pathlib
import zlib

import numpy as np

__all__ = ["SAMPLES", "Sample", "Const", "add", "A", "P", "I", "B", "nc", "perm_index"]

SAMPLES: dict[str, list] = {}
_rng = np.random.default_rng(20240601)


class Const:
    """A floating input that does not require grad."""

    def __init__(self, array):
        self.array = np.asarray(array, dtype=np.float64)


class Sample:
    """One call of an op on concrete inputs; see the module docstring."""

    def __init__(self, call, *inputs, ref=None, torch_call=None, grad=True, gradgrad=True, torch=True,
                 eps=1e-6, atol=1e-5, note=""):
        self.call = call
        self.inputs = inputs
        self.ref = ref
        self.torch_call = torch_call or call
        self.grad = grad
        self.gradgrad = gradgrad and grad
        self.torch = torch
        self.eps = eps
        self.atol = atol
        self.note = note

    def __repr__(self):
        shapes = ", ".join(str(getattr(i, "array", i).shape) for i in self.inputs)
        return f"Sample({shapes}{', ' + self.note if self.note else ''})"


def add(name, *samples):
    """Appends ``samples`` to the samples of op ``name``."""
    SAMPLES.setdefault(name, []).extend(samples)


# -- input helpers --------------------------------------------------------------------------------------
def A(*shape, low=-2.0, high=2.0):
    """A float64 array of ``shape``, uniform in [low, high)."""
    return _rng.uniform(low, high, size=shape)


def P(*shape):
    """A positive float64 array (in [0.5, 2)), for log, sqrt and friends."""
    return _rng.uniform(0.5, 2.0, size=shape)


def I(high, *shape, low=0):  # noqa: E743
    """An int64 array of ``shape`` in [low, high)."""
    return _rng.integers(low, high, size=shape, dtype=np.int64)


def B(*shape):
    """A bool array of ``shape``."""
    return _rng.random(size=shape) < 0.5


def nc(array):
    """The same values as ``array`` in a non-contiguous array (every other element of a buffer)."""
    array = np.asarray(array)
    buf = np.zeros(array.shape + (2,), dtype=array.dtype)
    buf[..., 0] = array
    return buf[..., 0]


def perm_index(n, shape, dim):
    """An int64 index of ``shape`` holding distinct positions in [0, n) along ``dim`` (scatter without clashes)."""
    shape = tuple(shape)
    moved = shape[:dim] + shape[dim + 1:] + (shape[dim],)
    out = np.empty(moved, dtype=np.int64)
    for idx in np.ndindex(*moved[:-1]):
        out[idx] = _rng.permutation(n)[:shape[dim]]
    return np.moveaxis(out, -1, dim)


def _load_extensions():
    """Imports every ``samples_*.py`` beside this file (they register with ``add``)."""
    here = pathlib.Path(__file__).parent
    global _rng
    for path in sorted(here.glob("samples_*.py")):
        _rng = np.random.default_rng(zlib.crc32(path.name.encode()))  # each file's numbers are its own
        spec = importlib.util.spec_from_file_location(f"_op_samples_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_load_extensions()
