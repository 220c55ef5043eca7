"""Reductions over dimensions: sum, mean, max/min, norms, softmax and friends."""
from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype, return_types
from .._creation import ones, zeros
from .._tensor import Tensor, _wrap_dim
from . import pointwise
from .pointwise import formula_arrays
from ._declarations import defop, tensor_method
from ._grad_utils import expand_reduced, normalize_dims, reduced_numel, unsqueeze_reduced
from ._node import DIM_UNSET
from ._rows import fast_rows, log_softmax_rows, row_sum, rows_apply, softmax_rows
from .joining import cat


def _axis(dim, ndim):
    if dim is DIM_UNSET or dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return None
    return normalize_dims(dim, ndim) if ndim else None


_add_reduce = np.add.reduce


def _sum(xp, input, dim=DIM_UNSET, keepdim=False, *, dtype=None):  # See Note [An explicit dim of None]
    if dtype is None and xp is np and input.dtype.kind == "f":
        # what ndarray.sum runs (numpy's _methods._sum), without that Python frame
        return _add_reduce(input, None if dim is DIM_UNSET or dim is None else _axis(dim, input.ndim), None, None,
                           keepdim)
    out = input.sum(axis=_axis(dim, input.ndim), keepdims=keepdim)  # the method: a microsecond less than xp.sum
    if dtype is not None:
        return out.astype(dtype.np)
    if input.dtype.kind in "bi" or input.dtype.kind == "u":  # integers accumulate in int64, as PyTorch
        return out.astype("int64")
    return out


sum = defop("sum", _sum, method=True,  # noqa: A001
            node_names={"SumBackward1": lambda dim: dim is not DIM_UNSET},  # See Note [Node names per call]
            input=expand_reduced)


def _mean(xp, input, dim=DIM_UNSET, keepdim=False, *, dtype=None):  # See Note [An explicit dim of None]
    if input.dtype.kind != "f" and dtype is None:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtype.scalar_type_name(input.dtype)}")
    out = _mean_array(xp, input, _axis(dim, input.ndim), keepdim)
    return out.astype(dtype.np if dtype is not None else input.dtype, copy=False)


def _mean_array(xp, input, axis, keepdims):
    """NumPy's mean, without its "Mean of empty slice" warning: nan where nothing is reduced, as PyTorch."""
    if input.size:
        return xp.mean(input, axis=axis, keepdims=keepdims)
    total = xp.sum(input, axis=axis, keepdims=keepdims)  # empty input: every mean is of nothing
    return xp.full(total.shape, xp.nan, dtype=total.dtype if total.dtype.kind in "fc" else xp.float64)


mean = defop("mean", _mean, method=True, node_names={"MeanBackward1": lambda dim: dim is not DIM_UNSET},
             input=lambda grad, input_shape, dim, keepdim:
             expand_reduced(grad, input_shape, dim, keepdim) / reduced_numel(input_shape, dim))


def _var_args(dim, unbiased, correction):
    """``(dim, correction)`` of a var/std call as PyTorch's overloads take (and its nodes save) them.

    ``var(x, False)`` passes ``unbiased`` as ``dim``; a dim becomes a tuple; ``correction`` is
    ``unbiased``'s 1 or 0 where that is given, 1 where only a dim is (the ``dim, unbiased``
    overload), else None (1 in the formulas).
    """
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if correction is None and (unbiased is not None or dim is not None):
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


def _var_forward(xp, input, dim, correction, keepdim, name, caller):
    """The variance of ``input`` and its mean, both over ``dim``, the mean with its dims kept.

    With no degrees of freedom left it warns as PyTorch does, naming ``caller`` (var, std, ...)."""
    if input.dtype.kind not in "fc":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    axis = _axis(dim, input.ndim)
    mean = _mean_array(xp, input, axis, True)
    diff = input - mean
    dof = (input.size // mean.size if mean.size else 0) - (1 if correction is None else correction)
    if dof <= 0:
        warnings.warn(f"{caller}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    with np.errstate(divide="ignore", invalid="ignore"):  # no degrees of freedom: inf or nan, as PyTorch
        var = xp.sum(diff * diff, axis=axis, keepdims=keepdim) / (dof if dof > 0 else 0)
    return var.astype(input.dtype, copy=False), mean


def _var(xp, input, dim=None, correction=None, keepdim=False):
    return _var_forward(xp, input, dim, correction, keepdim, "std and var", "var")[0]


def _std(xp, input, dim=None, correction=None, keepdim=False):
    return xp.sqrt(_var_forward(xp, input, dim, correction, keepdim, "std and var", "std")[0])


def _var_mean(xp, input, dim=None, correction=None, keepdim=False):
    var, mean = _var_forward(xp, input, dim, correction, keepdim, "var_mean", "var_mean")
    return var, mean.reshape(var.shape)


def _std_mean(xp, input, dim=None, correction=None, keepdim=False):
    var, mean = _var_forward(xp, input, dim, correction, keepdim, "std_mean", "std_mean")
    return xp.sqrt(var), mean.reshape(var.shape)


def _var_backward(grad, input, dim, correction, keepdim):
    """PyTorch's var_backward: ``2 (x - mean) / (N - correction)`` times the gradient, spread over ``dim``."""
    dof = reduced_numel(input.shape, dim) - (1 if correction is None else correction)
    g = unsqueeze_reduced(grad, input.shape, dim, keepdim)
    return g * (input - input.mean(dim, keepdim=True)) * (2.0 / dof if dof > 0 else float("inf"))


def _std_backward(grad, input, result, dim, correction, keepdim):
    """PyTorch's std_backward: var's, of the gradient over ``2 std`` (0 where the std is 0)."""
    return _var_backward(_where(result == 0, 0., grad / (result * 2)), input, dim, correction, keepdim)


def _var_mean_backward(grads, input, dim, correction, keepdim):
    return (_var_backward(grads[0], input, dim, correction, keepdim) +
            expand_reduced(grads[1], input.shape, dim, keepdim) / reduced_numel(input.shape, dim))


def _std_mean_backward(grads, input, result, dim, correction, keepdim):
    return (_std_backward(grads[0], input, result[0], dim, correction, keepdim) +
            expand_reduced(grads[1], input.shape, dim, keepdim) / reduced_numel(input.shape, dim))


# Ops of their own, as PyTorch's (one node each, and faster than the chain of five ops they were),
# called with PyTorch's arguments by the functions below.
_var_op = defop("var", _var, public=False, input=_var_backward)
_std_op = defop("std", _std, public=False, input=_std_backward)
_var_mean_op = defop("var_mean", _var_mean, multi_output=True, public=False, input=_var_mean_backward)
_std_mean_op = defop("std_mean", _std_mean, multi_output=True, public=False, input=_std_mean_backward)


@tensor_method
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, correction = _var_args(dim, unbiased, correction)
    return _var_op(input, dim, correction, keepdim)


@tensor_method
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, correction = _var_args(dim, unbiased, correction)
    return _std_op(input, dim, correction, keepdim)


@tensor_method
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The variance and the mean of ``input`` over ``dim``, as ``var`` and ``mean`` (one node).

    Returns:
        A named tuple ``(var, mean)``.

    Example::
        >>> import retrograd as rg
        >>> rg.var_mean(rg.tensor([1., 2., 3., 4.]))
        var_mean(var=tensor(1.6667), mean=tensor(2.5000))
    """
    dim, correction = _var_args(dim, unbiased, correction)
    return return_types.var_mean(*_var_mean_op(input, dim, correction, keepdim))


@tensor_method
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The standard deviation and the mean of ``input`` over ``dim``, as ``std`` and ``mean`` (one node).

    Returns:
        A named tuple ``(std, mean)``.

    Example::
        >>> import retrograd as rg
        >>> rg.std_mean(rg.tensor([1., 3.]))
        std_mean(std=tensor(1.4142), mean=tensor(2.))
    """
    dim, correction = _var_args(dim, unbiased, correction)
    return return_types.std_mean(*_std_mean_op(input, dim, correction, keepdim))


def _evenly_distribute(grad, input, result, dim=None, keepdim=False):
    """Gradient of amax/amin and aminmax: shared evenly among the values equal to the result.

    As PyTorch's, the share is the gradient over their count, times the mask: where the result is
    NaN, nothing equals it and the whole reduced slice gets NaN (0 / 0)."""
    r = unsqueeze_reduced(result, input.shape, dim, keepdim)
    mask = (input == r)
    count = mask.sum(dim=dim, keepdim=True) if dim is not None else mask.sum()
    g = unsqueeze_reduced(grad, input.shape, dim, keepdim)
    return g / count * mask


def _evenly_distribute_all(grad, input, result):
    """Gradient of the full max/min: shared evenly among the values equal to the result, NaN equal to NaN."""
    mask = (input == result) | (input.isnan() & result.isnan())
    return _where(mask, grad / mask.sum(), 0.)


def _empty_reduction(name, input, axis, error=RuntimeError):
    """Raises PyTorch's error for a max-like reduction of the empty ``input`` over ``axis`` (None: all of it), which
    has no identity: ``error`` over everything, IndexError over an empty dim; returns where the result is empty."""
    if axis is None:
        if error is IndexError:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                    "dim with the 'dim' argument.")
    for d in (axis,) if isinstance(axis, int) else axis:
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _amax(xp, input, dim=(), keepdim=False):
    axis = None if dim == () or dim is None else _axis(dim, input.ndim)
    if not input.size:
        _empty_reduction("amax", input, axis)
    return xp.amax(input, axis=axis, keepdims=keepdim)


def _amin(xp, input, dim=(), keepdim=False):
    axis = None if dim == () or dim is None else _axis(dim, input.ndim)
    if not input.size:
        _empty_reduction("amin", input, axis)
    return xp.amin(input, axis=axis, keepdims=keepdim)


amax = defop("amax", _amax, method=True,
             input=lambda grad, input, result, dim, keepdim:
             _evenly_distribute(grad, input, result, None if dim == () else dim, keepdim))
amin = defop("amin", _amin, method=True,
             input=lambda grad, input, result, dim, keepdim:
             _evenly_distribute(grad, input, result, None if dim == () else dim, keepdim))


def _logsumexp(xp, input, dim, keepdim=False):
    axis = _axis(dim, input.ndim)
    m = xp.amax(input, axis=axis, keepdims=True) if input.size else xp.zeros((1,) * input.ndim, input.dtype)
    m = xp.where(xp.isfinite(m), m, 0)
    out = xp.log(xp.sum(xp.exp(input - m), axis=axis, keepdims=True)) + m
    return out if keepdim else xp.squeeze(out, axis=axis) if axis is not None else out.reshape(())


logsumexp = defop("logsumexp", _logsumexp, method=True, promote="float",
                  input=lambda grad, input, result, dim, keepdim:  # a dedicated formula: stable, one exp
                  unsqueeze_reduced(grad, input.shape, dim, keepdim) *
                  (input - unsqueeze_reduced(result, input.shape, dim, keepdim)).exp())


def _last(dim, ndim):
    return dim == ndim - 1 or dim == -1


def _keep_max(xp, x, dim):
    """``xp.amax(x, axis=dim, keepdims=True)``; on NumPy the ufunc's own reduce, which amax calls after a
    Python wrapper and its dispatch that cost more than the reduction of a small array (about 13,000
    instructions of a (1, 10) log_softmax's 79,000)."""
    return np.maximum.reduce(x, axis=dim, keepdims=True) if xp is np else xp.amax(x, axis=dim, keepdims=True)


def _keep_sum(xp, x, dim):
    """``xp.sum(x, axis=dim, keepdims=True)`` of a float array; on NumPy ``add.reduce`` (see ``_keep_max``)."""
    return np.add.reduce(x, axis=dim, keepdims=True) if xp is np else xp.sum(x, axis=dim, keepdims=True)


def _softmax(xp, input, dim, dtype=None):
    x = input.astype(dtype.np) if dtype is not None else input
    if x.ndim == 0:
        return xp.ones_like(x)
    if _last(dim, x.ndim) and fast_rows(x):  # See Note [Row reductions as products]
        return softmax_rows(x)
    e = x - _keep_max(xp, x, dim)  # a fresh buffer: exp and the division go into it
    xp.exp(e, out=e)
    e /= _keep_sum(xp, e, dim)
    return e


def _log_softmax(xp, input, dim, dtype=None):
    x = input.astype(dtype.np) if dtype is not None else input
    if x.ndim == 0:
        return xp.zeros_like(x)
    if _last(dim, x.ndim) and fast_rows(x):  # See Note [Row reductions as products]
        return log_softmax_rows(x)
    shifted = x - _keep_max(xp, x, dim)
    shifted -= xp.log(_keep_sum(xp, xp.exp(shifted), dim))
    return shifted


def _softmax_grad(grad, result, dim):
    if result.dim() == 0:
        return grad * 0
    xp = formula_arrays(grad)
    if xp is not None and grad.dtype == result.dtype:  # See Note [Formulas on arrays]
        g, y = grad._data, result._data
        out = g * y  # result * (grad - sum(grad * result)), in this one buffer
        if _last(dim, y.ndim) and fast_rows(out) and g.flags.c_contiguous:  # Note [Row reductions as products]
            rows_apply(xp.subtract, g, row_sum(out), out)
        else:
            xp.subtract(g, _keep_sum(xp, out, dim), out=out)
        out *= y
        return Tensor._make(out, grad._device)
    return result * (grad - (grad * result).sum(dim, keepdim=True))


def _log_softmax_grad(grad, result, dim):
    if result.dim() == 0:
        return grad * 0
    xp = formula_arrays(grad)
    if xp is not None and grad.dtype == result.dtype:  # See Note [Formulas on arrays]
        g = grad._data
        out = xp.exp(result._data)  # grad - exp(result) * sum(grad), in this one buffer
        if _last(dim, g.ndim) and fast_rows(g):  # See Note [Row reductions as products]
            rows_apply(xp.multiply, out, row_sum(g), out)
        else:
            out *= _keep_sum(xp, g, dim)
        xp.subtract(g, out, out=out)
        return Tensor._make(out, grad._device)
    return grad - result.exp() * grad.sum(dim, keepdim=True)


# softmax and log_softmax have dedicated nodes in PyTorch, and their composed gradients are unstable.
softmax = defop("softmax", _softmax, method=True, promote="float", input=_softmax_grad)
log_softmax = defop("log_softmax", _log_softmax, method=True, promote="float", input=_log_softmax_grad)


def _argmax(xp, input, dim=None, keepdim=False):
    if not input.size:
        _empty_reduction("argmax", input, None if dim is None else _wrap(dim, input.ndim), IndexError)
    if dim is None:
        out = xp.argmax(input.reshape(-1))
        return out.reshape((1,) * input.ndim) if keepdim else out
    out = xp.argmax(input, axis=dim)
    return xp.expand_dims(out, dim) if keepdim else out


def _argmin(xp, input, dim=None, keepdim=False):
    if not input.size:
        _empty_reduction("argmin", input, None if dim is None else _wrap(dim, input.ndim), IndexError)
    if dim is None:
        out = xp.argmin(input.reshape(-1))
        return out.reshape((1,) * input.ndim) if keepdim else out
    out = xp.argmin(input, axis=dim)
    return xp.expand_dims(out, dim) if keepdim else out


argmax = defop("argmax", _argmax, method=True)
argmin = defop("argmin", _argmin, method=True)


def _extreme_along(arg):
    """The forward of max/min along a dim: (values, indices), with ``arg`` NumPy's argmax or argmin."""
    def forward(xp, input, dim, keepdim=False):
        if not input.size:
            _empty_reduction(arg[3:], input, _wrap(dim, input.ndim))
        idx = getattr(xp, arg)(input, axis=dim) if input.ndim else xp.asarray(0)
        idx_k = xp.expand_dims(idx, dim) if input.ndim else idx
        values = xp.take_along_axis(input, idx_k, axis=dim) if input.ndim else input
        return (values if keepdim or not input.ndim else xp.squeeze(values, axis=dim),
                idx_k if keepdim else idx)
    return forward


_max_dim = _extreme_along("argmax")
_min_dim = _extreme_along("argmin")


def _select_backward(grads, input_shape, result, dim, keepdim):
    """Gradient of max/min along a dim: the gradient goes to the selected index."""
    grad = grads[0]
    indices = result[1]
    if not input_shape:
        return grad
    if not keepdim:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return zeros(input_shape, dtype=grad.dtype, device=grad.device).scatter_add(dim, indices, grad)


_max_dim_op = defop("max_dim", _max_dim, multi_output=True, public=False, node_name="Max",
                    input=_select_backward)
_min_dim_op = defop("min_dim", _min_dim, multi_output=True, public=False, node_name="Min",
                    input=_select_backward)
def _max_all_forward(xp, input):
    if not input.size:
        _empty_reduction("max", input, None)
    return xp.amax(input)


def _min_all_forward(xp, input):
    if not input.size:
        _empty_reduction("min", input, None)
    return xp.amin(input)


_max_all = defop("max_all", _max_all_forward, public=False, node_name="MaxBackward1",
                 input=lambda grad, input, result: _evenly_distribute_all(grad, input, result))
_min_all = defop("min_all", _min_all_forward, public=False, node_name="MinBackward1",
                 input=lambda grad, input, result: _evenly_distribute_all(grad, input, result))


def _extreme(all_op, dim_op, elementwise, result_type, input, dim, keepdim, other):
    """max/min: over everything, along a dim as (values, indices), or elementwise with ``other``."""
    if other is not None:
        dim = other
    if dim is None:
        return all_op(input)
    if isinstance(dim, Tensor):
        return elementwise(input, dim)
    return result_type(*dim_op(input, dim, keepdim))


@tensor_method
def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """The largest element; along ``dim``, the largest values and their indices.

    Args:
        input: the tensor.
        dim: the dim to reduce (None: all of them, returning a 0-d tensor).
        keepdim: keep each reduced dim with size 1.
        other: a tensor: then the elementwise maximum, as ``maximum`` (keyword-only).

    Returns:
        A tensor, or with ``dim`` a named tuple ``(values, indices)``.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([[1., 5.], [3., 2.]])
        >>> rg.max(x)
        tensor(5.)
        >>> rg.max(x, dim=1)
        max(values=tensor([5., 3.]), indices=tensor([1, 0]))
    """
    return _extreme(_max_all, _max_dim_op, pointwise.maximum, return_types.max, input, dim, keepdim, other)


@tensor_method
def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """The smallest element; along ``dim``, the smallest values and their indices.

    Args:
        input: the tensor.
        dim: the dim to reduce (None: all of them, returning a 0-d tensor).
        keepdim: keep each reduced dim with size 1.
        other: a tensor: then the elementwise minimum, as ``minimum`` (keyword-only).

    Returns:
        A tensor, or with ``dim`` a named tuple ``(values, indices)``.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([[1., 5.], [3., 2.]])
        >>> rg.min(x)
        tensor(1.)
        >>> rg.min(x, dim=1)
        min(values=tensor([1., 2.]), indices=tensor([0, 1]))
    """
    return _extreme(_min_all, _min_dim_op, pointwise.minimum, return_types.min, input, dim, keepdim, other)


def _scan(xp_fn, input, dim, dtype):
    """cumsum/cumprod along ``dim``: a 0-d input stays 0-d; integers accumulate in int64, as PyTorch."""
    d = _wrap(dim, input.ndim)
    if dtype is not None:
        input = input.astype(dtype.np)
    elif input.dtype.kind in "biu":
        input = input.astype("int64")
    return xp_fn(input, axis=d) if input.ndim else input.copy()


def _wrap(dim, ndim):
    return _wrap_dim(dim, ndim)


cumsum = defop("cumsum", lambda xp, input, dim, *, dtype=None: _scan(xp.cumsum, input, dim, dtype), method=True,
               input=lambda grad, dim: grad.flip(dim).cumsum(dim).flip(dim) if grad.dim() else grad)


def _prod(xp, input, dim=None, keepdim=False, *, dtype=None):
    out = xp.prod(input, axis=_axis(dim, input.ndim) if dim is not None else None, keepdims=keepdim)
    if dtype is not None:
        return out.astype(dtype.np)
    return out.astype("int64") if input.dtype.kind in "biu" else out


def _prod_backward(grad, input, result, dim, keepdim):
    # Where the input has no zeros, d prod / d x_i = prod / x_i. With zeros this divides by zero,
    # so use the product of the other elements, computed with exclusive cumulative products.
    if dim is None:
        flat = input.reshape(-1)
        g = _prod_other(flat, 0).reshape(input.shape) * grad
        return g
    g = unsqueeze_reduced(grad, input.shape, dim, keepdim)
    return g * _prod_other(input, dim)


def _prod_other(x, dim):
    """The product of all elements along ``dim`` except the one at each position."""
    n = x.shape[dim] if x.dim() else 1
    if x.dim() == 0:
        return x * 0 + 1
    ones_shape = list(x.shape)
    ones_shape[dim] = 1
    one = ones(tuple(ones_shape), dtype=x.dtype, device=x.device)
    left = cat([one, x.narrow(dim, 0, n - 1).cumprod(dim)], dim) if n > 1 else one
    rev = x.flip(dim)
    right = cat([one, rev.narrow(dim, 0, n - 1).cumprod(dim)], dim).flip(dim) if n > 1 else one
    return left * right


prod = defop("prod", _prod, method=True, node_names={"ProdBackward1": lambda dim: dim is not None},
             input=_prod_backward)


def _cumprod_backward(grad, input, result, dim):
    """Gradient of cumprod: sum_{j >= k} grad_j * prod_{i <= j, i != k} x_i.

    Without zeros that is ``reverse_cumsum(grad * result) / x``. With zeros the division is
    undefined, so build the products explicitly (quadratic in the scanned length, as PyTorch's
    exact path); both branches are written with ops, so they differentiate again.
    """
    if input.dim() == 0 or input.numel() == 0:
        return grad
    if not (input._data == 0).any():  # a branch on the data, as PyTorch takes
        return (grad * result).flip(dim).cumsum(dim).flip(dim) / input
    x = input.movedim(dim, -1)
    g = grad.movedim(dim, -1)
    n = x.shape[-1]
    after = ones((n, n), dtype=_bool(), device=x.device).triu(1)  # [k, j]: j > k
    upto = ones((n, n), dtype=_bool(), device=x.device).triu(0)   # [k, j]: j >= k
    # prods[..., k, j] = prod_{k < i <= j} x_i for j >= k
    prods = _where(after, x.unsqueeze(-2).expand(x.shape[:-1] + (n, n)), 1.).cumprod(-1)
    one = ones(x.shape[:-1] + (1,), dtype=x.dtype, device=x.device)
    before = cat([one, x.narrow(-1, 0, n - 1).cumprod(-1)], -1) if n > 1 else one  # prod_{i < k} x_i
    terms = _where(upto, prods * g.unsqueeze(-2), 0.)
    return (before * terms.sum(-1)).movedim(-1, dim)


def _bool():
    return _dtype.bool


cumprod = defop("cumprod", lambda xp, input, dim, *, dtype=None: _scan(xp.cumprod, input, dim, dtype), method=True,
                input=_cumprod_backward)


def _norm_forward(xp, input, p="fro", dim=None, keepdim=False):
    axis = _axis(dim, input.ndim) if dim is not None else None
    x = xp.abs(input)
    if p in ("fro", 2):
        return xp.sqrt(xp.sum(x * x, axis=axis, keepdims=keepdim))
    if p == float("inf"):
        return xp.amax(x, axis=axis, keepdims=keepdim)
    if p == float("-inf"):
        return xp.amin(x, axis=axis, keepdims=keepdim)
    if p == 0:
        return xp.sum(x != 0, axis=axis, keepdims=keepdim).astype(input.dtype)
    if p == 1:
        return xp.sum(x, axis=axis, keepdims=keepdim)
    return xp.power(xp.sum(x ** p, axis=axis, keepdims=keepdim), 1.0 / p)


def _norm_backward(grad, input, result, p, dim, keepdim):
    g = unsqueeze_reduced(grad, input.shape, dim, keepdim)
    r = unsqueeze_reduced(result, input.shape, dim, keepdim)
    if p in ("fro", 2):
        return _where(r == 0, 0., g * input / r)  # PyTorch's subgradient 0 at the origin
    if p == 1:
        return g * input.sign()
    if p == 0:
        return g.expand(input.shape) * 0
    if p in (float("inf"), float("-inf")):
        mask = input.abs() == r
        count = mask.sum(dim=dim, keepdim=True) if dim is not None else mask.sum()
        return _where(mask, g * input.sign() / count, 0.)
    return _where(r == 0, 0., g * input * input.abs() ** (p - 2) / r ** (p - 1))


norm = defop("norm", _norm_forward, method=True, promote="float", input=_norm_backward,
             node_name="LinalgVectorNorm")  # PyTorch's norm of these p runs linalg.vector_norm


_where = pointwise.where


# -- running extremes, log-space scans, NaN-ignoring reductions, differences and integrals ----------------
def _cumulative_extreme(accumulate, takes_over):
    """The forward of cummax/cummin: running values, and the index of the element each one came from.

    An element takes over where ``takes_over(x, running value before it)`` holds or it is NaN, so ties
    give the later index and a NaN stays, as PyTorch's kernels do.
    """
    def forward(xp, input, dim):
        d = _wrap(dim, input.ndim)
        if input.ndim == 0:
            return input.copy(), xp.zeros((), dtype="int64")
        if input.size == 0:
            return input.copy(), xp.zeros(input.shape, dtype="int64")
        values = accumulate(input, axis=d)
        before = xp.concatenate([xp.take(input, [0], axis=d), xp.take(values, xp.arange(input.shape[d] - 1), axis=d)],
                                axis=d)
        new = takes_over(input, before) | xp.isnan(input) if input.dtype.kind == "f" else takes_over(input, before)
        where = xp.arange(input.shape[d]).reshape((-1,) + (1,) * (input.ndim - d - 1))
        indices = xp.maximum.accumulate(xp.where(new, where, 0), axis=d)
        return values, indices.astype("int64")
    return forward


def _cumulative_extreme_backward(grads, input, result, dim):
    """The gradient of cummax/cummin: each output's gradient goes to the element it came from."""
    if input.dim() == 0:
        return grads[0]
    return zeros(input.shape, dtype=grads[0].dtype, device=grads[0].device).scatter_add(dim, result[1], grads[0])


_cummax = defop("cummax", _cumulative_extreme(np.maximum.accumulate, np.greater_equal), multi_output=True,
                public=False, input=_cumulative_extreme_backward)
_cummin = defop("cummin", _cumulative_extreme(np.minimum.accumulate, np.less_equal), multi_output=True,
                public=False, input=_cumulative_extreme_backward)


@tensor_method
def cummax(input, dim):
    """The running maximum of ``input`` along ``dim``, and the index each value came from.

    Example::
        >>> import retrograd as rg
        >>> rg.cummax(rg.tensor([1., 3., 2., 3.]), 0)
        cummax(values=tensor([1., 3., 3., 3.]), indices=tensor([0, 1, 1, 3]))
    """
    return return_types.cummax(*_cummax(input, dim))


@tensor_method
def cummin(input, dim):
    """The running minimum of ``input`` along ``dim``, and the index each value came from.

    Example::
        >>> import retrograd as rg
        >>> rg.cummin(rg.tensor([2., 1., 3.]), 0)
        cummin(values=tensor([2., 1., 1.]), indices=tensor([0, 1, 1]))
    """
    return return_types.cummin(*_cummin(input, dim))


def _logcumsumexp(xp, input, dim):
    d = _wrap(dim, input.ndim)
    return xp.logaddexp.accumulate(input, axis=d) if input.ndim and input.size else input.copy()


def _logcumsumexp_backward(grad, input, result, dim):
    # d result_j / d x_k = exp(x_k - result_j) for k <= j: a reversed cumulative sum along dim
    if input.dim() == 0:
        return grad
    return (grad * (-result).exp()).flip(dim).cumsum(dim).flip(dim) * input.exp()


logcumsumexp = defop("logcumsumexp", _logcumsumexp, method=True, promote="float", input=_logcumsumexp_backward)


def _nansum(xp, input, dim=None, keepdim=False, *, dtype=None):
    out = xp.nansum(input, axis=_axis(dim, input.ndim), keepdims=keepdim)
    if dtype is not None:
        return out.astype(dtype.np)
    return out.astype("int64") if input.dtype.kind in "biu" else out.astype(input.dtype, copy=False)


nansum = defop("nansum", _nansum, method=True,
               input=lambda grad, input, dim, keepdim:
               expand_reduced(grad, input.shape, dim, keepdim) * input.isnan().logical_not())


@tensor_method
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the elements of ``input`` that are not NaN, over ``dim``.

    Example::
        >>> import retrograd as rg
        >>> rg.nanmean(rg.tensor([1., float("nan"), 3.]))
        tensor(2.)
    """
    if not input.is_floating_point():
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_dtype.scalar_type_name(input._data.dtype)}")
    count = input.isnan().logical_not().sum(dim=dim, keepdim=keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _aminmax(xp, input, *, dim=None, keepdim=False):
    if input.size == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    axis = None if dim is None else _wrap(dim, input.ndim)
    if axis is not None and not input.ndim:
        axis = None
    lo, hi = xp.amin(input, axis=axis, keepdims=keepdim), xp.amax(input, axis=axis, keepdims=keepdim)
    if dim is None and keepdim:
        lo, hi = lo.reshape((1,) * input.ndim), hi.reshape((1,) * input.ndim)
    return lo, hi


def _aminmax_backward(grads, input, result, dim, keepdim):
    total = None
    for g, r in zip(grads, result, strict=True):
        if g is None:
            continue
        part = _evenly_distribute(g, input, r, dim, keepdim)
        total = part if total is None else total + part
    return total


_aminmax_op = defop("aminmax", _aminmax, multi_output=True, public=False, input=_aminmax_backward)


@tensor_method
def aminmax(input, *, dim=None, keepdim=False):
    """The minimum and maximum of ``input`` (over ``dim``, or all of it), as a named tuple ``(min, max)``.

    Example::
        >>> import retrograd as rg
        >>> rg.aminmax(rg.tensor([3., 1., 2.]))
        aminmax(min=tensor(1.), max=tensor(3.))
    """
    return return_types.aminmax(*_aminmax_op(input, dim=dim, keepdim=keepdim))


@tensor_method
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference of ``input`` along ``dim``, after joining ``prepend`` and ``append``.

    Example::
        >>> import retrograd as rg
        >>> rg.diff(rg.tensor([1., 4., 9., 16.]))
        tensor([3., 5., 7.])
        >>> rg.diff(rg.tensor([1., 4., 9., 16.]), n=2)
        tensor([2., 2.])
    """
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap(dim, input.dim())
    if n == 0:
        return input.clone()
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, input, append) if p is not None]
        input = cat([p if p.dim() else p.expand(input.shape[:d] + (1,) + input.shape[d + 1:]) for p in parts], d)
    for _ in range(n):
        size = input.shape[d]
        if size == 0:
            break
        after, before = input.narrow(d, 1, size - 1), input.narrow(d, 0, size - 1)
        input = pointwise.logical_xor(after, before) if input.dtype == _dtype.bool else after - before
    return input


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, at points ``x`` or spaced ``dx`` (1) apart.

    Example::
        >>> import retrograd as rg
        >>> rg.trapezoid(rg.tensor([1., 2., 3.]))
        tensor(4.)
    """
    d = _wrap(dim, y.dim())
    n = y.shape[d]
    if x is not None:
        if dx is not None:
            raise TypeError("trapezoid() received an invalid combination of arguments - got both x and dx")
        if n == 0:  # as PyTorch: zeros that do not require grad
            return y.new_zeros(y.shape[:d] + y.shape[d + 1:])
        gaps = diff(x, dim=-1 if x.dim() == 1 else d)
        if x.dim() == 1:
            gaps = gaps.reshape((-1,) + (1,) * (y.dim() - d - 1))
        return ((y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * gaps).sum(d) / 2
    spacing = 1 if dx is None else dx
    if n == 0:
        return y.new_zeros(y.shape[:d] + y.shape[d + 1:])
    return (y.sum(d) - (y.select(d, 0) + y.select(d, n - 1)) * 0.5) * spacing


def trapz(y, x=None, *, dx=None, dim=-1):
    """PyTorch's older name of :func:`trapezoid` (a function of its own, as there): ``trapz(y, x, *, dim)`` or
    ``trapz(y, *, dx, dim)``.

    Raises:
        TypeError: for both ``x`` and ``dx``.

    Example::
        >>> import retrograd as rg
        >>> rg.trapz(rg.tensor([1., 2., 3.]), dx=2.)
        tensor(8.)
    """
    if x is not None and dx is not None:
        raise TypeError("trapz() received an invalid combination of arguments - got both x and dx")
    return trapezoid(y, x, dx=dx, dim=dim)


# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import LINEAR, REDUCED_FROM_BACKWARD, defjvp  # noqa: E402


def _gather_reduced(t, dim, indices, keepdim):
    """``t``'s elements at a reduction's ``indices`` along ``dim`` (the tangent of its values)."""
    if t.dim() == 0:
        return t.clone()
    if keepdim:
        return t.gather(dim, indices)
    return t.gather(dim, indices.unsqueeze(dim)).squeeze(dim)


def _var_partials(input, dim, correction, keepdim):
    """d var / d input: ``2 (input - mean) / (N - correction)``."""
    n = reduced_numel(tuple(input.shape), dim) - (1 if correction is None else correction)
    return (input - input.mean(dim, True)) * (2 / n)


def _std_mean_jvp(input_t, input, dim, correction, keepdim, result):
    var_t = (_var_partials(input, dim, correction, keepdim) * input_t).sum(dim, keepdim)
    return var_t / (result[0] * 2), input_t.mean(dim, keepdim)


def _var_mean_jvp(input_t, input, dim, correction, keepdim, result):
    return (_var_partials(input, dim, correction, keepdim) * input_t).sum(dim, keepdim), input_t.mean(dim, keepdim)


def _softmax_jvp(input_t, dim, result):
    return result * (input_t - (input_t * result).sum(dim, True))


def _log_softmax_jvp(input_t, dim, result):
    return input_t - (input_t * result.exp()).sum(dim, True)


def _logcumsumexp_jvp(input_t, input, dim, result):
    if input.numel() == 0:
        return input_t.clone()
    m = input.detach().amax()
    return (input_t * (input - m).exp()).cumsum(dim) / (result - m).exp()


defjvp(LINEAR, "sum", "mean", "cumsum")
defjvp(REDUCED_FROM_BACKWARD, "var", "std", "amax", "amin", "logsumexp", "prod", "norm", "nansum")
defjvp(_var_mean_jvp, "var_mean")
defjvp(_std_mean_jvp, "std_mean")
defjvp(_softmax_jvp, "softmax")
defjvp(_log_softmax_jvp, "log_softmax")
defjvp(_logcumsumexp_jvp, "logcumsumexp")
defjvp(lambda input_t, dim, keepdim, result: (_gather_reduced(input_t, dim, result[1], keepdim), None),
       "max_dim", "min_dim")
defjvp(lambda input_t, dim, result: (_gather_reduced(input_t, dim, result[1], True), None), "cummax", "cummin")


def _extreme_jvp(input_t, input, value, dim, keepdim):
    """The tangent of a min or max ``value`` over ``dim``: the mean of the input's tangent where it is reached."""
    hit = input == unsqueeze_reduced(value, tuple(input.shape), dim, keepdim)
    return (input_t * hit).sum(dim, keepdim) / hit.sum(dim, keepdim)


def _cumprod_jvp(input_t, input, dim, dtype):
    """``sum_k t_k prod_{j <= i, j != k} x_j``: cumprod is linear in each element apart, so the sum over k of
    the cumprod with element k replaced by its tangent, less the one with it replaced by 0 (zeros are exact)."""
    if input.dim() == 0:
        return input_t.to(dtype) if dtype is not None else input_t.clone()
    d = dim % input.dim()
    n = input.shape[d]
    shape = [1] * (input.dim() + 1)
    shape[0] = shape[d + 1] = n
    own = ones((n,), dtype=input.dtype).diag_embed().bool().reshape(tuple(shape))
    x, t = input.unsqueeze(0), input_t.unsqueeze(0)
    with_t = pointwise.where(own, t, x).cumprod(d + 1, dtype=dtype)
    without = pointwise.where(own, x * 0, x).cumprod(d + 1, dtype=dtype)
    return (with_t - without).sum(0)


defjvp(lambda input_t, input, result: _extreme_jvp(input_t, input, result, None, False),  # NaN where it is NaN
       "max_all", "min_all")
defjvp(lambda input_t, input, dim, keepdim, result: (_extreme_jvp(input_t, input, result[0], dim, keepdim),
                                                     _extreme_jvp(input_t, input, result[1], dim, keepdim)),
       "aminmax")
defjvp(_cumprod_jvp, "cumprod")
