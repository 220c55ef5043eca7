"""The optimizers' updates on arrays: what each ``_arrays_update`` shares. See Note [Optimizer updates on arrays]
in optimizer.py."""
from __future__ import annotations

import numpy as np

from .._tensor import INFERENCE_COUNTER, Tensor
from ..autograd.saved_hooks import before_inplace_write
from ..nn.parameter import Parameter

_ndarray = np.ndarray
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_PLAIN = (Tensor, Parameter)


def python_numbers(values) -> bool:
    """Whether every value is a Python float or int (not a bool, a tensor or a NumPy scalar)."""
    for v in values:
        kind = type(v)
        if kind is not float and kind is not int:
            return False
    return True


def plain_arrays(p, state=None, names=()):
    """``[p's array, its gradient's array, state[name]'s array for each name]`` where ``p``'s update
    may compute on them directly, else None. See Note [Optimizer updates on arrays]."""
    grad = p._grad
    a = p._data
    if (type(p) not in _PLAIN or type(grad) not in _PLAIN or type(a) is not _ndarray or a.dtype not in FLOATS
            or p._vc is INFERENCE_COUNTER or not a.flags.writeable):
        return None
    g = grad._data
    if type(g) is not _ndarray or g.dtype != a.dtype or g.shape != a.shape:
        return None
    arrays = [a, g]
    for name in names:
        t = state.get(name)  # a missing one: the op path raises its KeyError where it reads it
        if type(t) not in _PLAIN or t._vc is INFERENCE_COUNTER:
            return None
        b = t._data
        if type(b) is not _ndarray or b.dtype != a.dtype or b.shape != a.shape or not b.flags.writeable:
            return None
        arrays.append(b)
    return arrays


def plain_scalar(t):
    """The array of a scalar state tensor (a step count, NAdam's ``mu_product``...) where the array path
    may write it, else None. See Note [Optimizer updates on arrays]."""
    if type(t) not in _PLAIN or t._vc is INFERENCE_COUNTER:
        return None
    s = t._data
    if type(s) is not _ndarray or s.dtype not in FLOATS or s.size != 1 or not s.flags.writeable:
        return None
    return s


def counters_before_write(tensors):
    """The version counters of the tensors an update is about to write, after ``before_inplace_write``
    on each (Note [Mutation of saved tensors]), as an in-place op does before its write."""
    counters = []
    for t in tensors:
        before_inplace_write(t)
        counters.append(t._version_counter)
    return counters


def advance(s):
    """``step.add_(1)`` on the array of a step count; returns its new value, as ``step.item()``."""
    np.add(s, 1, out=s)
    return s.item()


def add_(x, y, alpha, scratch=None):
    """``x.add_(y, alpha=alpha)`` on arrays, as the ``add`` op computes it: ``x + y * alpha`` (the
    product only where ``alpha != 1``, into ``scratch`` or a new array), into ``x``."""
    if alpha != 1:
        y = np.multiply(y, alpha, out=scratch)
    return np.add(x, y, out=x)


def lerp_arrays(start, end, weight, scratch):
    """``_lerp_(start, end, weight)`` on arrays (its two formulas); ``scratch`` is overwritten."""
    np.subtract(end, start, out=scratch)
    if weight < 0.5:
        return add_(start, scratch, weight, scratch)
    np.multiply(scratch, 1 - weight, out=scratch)
    return np.subtract(end, scratch, out=start)


def grad_array(a, g, maximize, weight_decay):
    """The gradient an update uses (``Optimizer._grad_of``) on arrays: ``g`` itself, or a new array."""
    if not maximize and weight_decay == 0:
        return g
    out = scratch_like(a)
    if maximize:
        g = np.negative(g, out=out)
    if weight_decay == 1:
        np.add(g, a, out=out)
    elif weight_decay != 0:
        np.add(g, np.multiply(a, weight_decay, out=None if maximize else out), out=out)
    return out


def scratch_like(a):
    """A new array like ``a``, for an update's intermediate results (an ufunc without ``out`` gives a
    NumPy scalar, not an array, for a 0-d input)."""
    return np.empty_like(a)
