"""More of PyTorch's top-level names: the functional ops ``torch.bilinear``, ``torch.channel_shuffle``,
``torch.constant_pad_nd``, ``torch.rms_norm``; ``column_stack``, ``range``, ``randint_like``, ``asarray``, ``fill``,
``histogram``, ``cumulative_trapezoid``, ``adjoint``, ``typename``, ``is_complex``; and the process-wide settings
``use_deterministic_algorithms`` (with its debug mode) and ``set_float32_matmul_precision``, which are recorded
and read back as PyTorch's (retrograd's kernels are deterministic, and its float32 matmul is always "highest").
"""
from __future__ import annotations

import warnings
import numpy as np

from . import _creation, _dtype, return_types
from ._device import device as _device
from ._format import set_printoptions
from ._tensor import Tensor
from ._top_level import exporter
from .nn import functional as F
from .ops import cat as _cat, lu as _lu, shape as _shape

__all__ = ["set_printoptions"]


_export = exporter(globals())


# -- functional ops under their top-level names ---------------------------------------------------------------------
for _name in ("bilinear", "channel_shuffle", "native_channel_shuffle", "rms_norm"):
    globals()[_name] = getattr(F, _name)
    __all__.append(_name)


_MODES, _PADDINGS = tuple(F.GRID_SAMPLE_INTERPOLATION_MODES), tuple(F.GRID_SAMPLE_PADDING_MODES)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``nn.functional.grid_sample`` with PyTorch's enums: ``interpolation_mode`` 0 bilinear, 1 nearest, 2 bicubic;
    ``padding_mode`` 0 zeros, 1 border, 2 reflection.

    Example::
        >>> import retrograd as rg
        >>> rg.grid_sampler(rg.ones(1, 1, 2, 2), rg.zeros(1, 1, 1, 2), 0, 0, False)
        tensor([[[[1.]]]])
    """
    return F.grid_sample(input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode], align_corners)


def affine_grid_generator(theta, size, align_corners):
    """``nn.functional.affine_grid`` with ``align_corners`` required.

    Example::
        >>> import retrograd as rg
        >>> rg.affine_grid_generator(rg.tensor([[[1., 0., 0.], [0., 1., 0.]]]), [1, 1, 1, 1], False)
        tensor([[[[0., 0.]]]])
    """
    return F.affine_grid(theta, size, align_corners)


def constant_pad_nd(input, pad, value=0):
    """Pads the last ``len(pad) // 2`` dims of ``input`` with ``value`` (``nn.functional.pad``'s constant mode).

    Example::
        >>> import retrograd as rg
        >>> rg.constant_pad_nd(rg.tensor([1., 2.]), (1, 0), 9.)
        tensor([9., 1., 2.])
    """
    return F.pad(input, pad, "constant", value)


# -- joining, ranges, conversions ---------------------------------------------------------------------------------
def column_stack(tensors):
    """Stacks ``tensors`` as columns: 0-d and 1-d ones become ``(n, 1)`` columns, then ``hstack``.

    Example::
        >>> import retrograd as rg
        >>> rg.column_stack([rg.tensor([1, 2]), rg.tensor([[3, 4], [5, 6]])])
        tensor([[1, 3, 4],
                [2, 5, 6]])
    """
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return _cat(columns, 1)


def range(start, end, step=1, *, dtype=None, device=None, requires_grad=False):  # noqa: A001 - PyTorch's
    """``start, start + step, ...`` up to and including ``end``, in the default floating dtype (deprecated in
    PyTorch for ``arange``, whose end is excluded; it warns as PyTorch).

    Example::
        >>> import retrograd as rg, warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     rg.range(1, 4)
        tensor([1., 2., 3., 4.])
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = int(np.floor((end - start) / step)) + 1
    dtype = dtype or _dtype.get_default_dtype()
    values = start + step * np.arange(size, dtype=np.float64)
    return _creation.tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, generator=None):
    """A tensor of ``input``'s shape (and dtype, unless given) of integers drawn uniformly from ``[low, high)``
    (``randint_like(input, high)`` draws from ``[0, high)``).

    Example::
        >>> import retrograd as rg
        >>> rg.randint_like(rg.zeros(2, 3), 1, 2)
        tensor([[1., 1., 1.],
                [1., 1., 1.]])
    """
    if high is None:
        low, high = 0, low
    return _creation.randint(low, high, tuple(input.shape), generator=generator, dtype=dtype or input.dtype,
                             device=device or input.device, requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, sharing its memory where it can (a tensor, a NumPy array of the dtype asked for):
    ``copy=True`` always copies, ``copy=False`` raises where a copy is needed.

    Example::
        >>> import numpy as np, retrograd as rg
        >>> a = np.array([1., 2.])
        >>> t = rg.asarray(a)
        >>> a[0] = 5.
        >>> t
        tensor([5., 2.], dtype=retrograd.float64)
    """
    if isinstance(obj, Tensor):
        out = obj
        if (dtype is not None and dtype is not obj.dtype) or (device is not None and
                                                              _device(device) != obj.device):
            if copy is False:
                raise ValueError("can't alias tensor from device or dtype conversion")
            out = obj.to(device=device, dtype=dtype)
        elif copy:
            out = obj.clone()
        return out.requires_grad_(requires_grad) if requires_grad else out
    if isinstance(obj, np.ndarray) and copy is not True and obj.dtype.kind in "biuf" and (
            dtype is None or np.dtype(dtype.np) == obj.dtype):
        out = _creation.from_numpy(obj)
        if device is not None:
            out = out.to(device)
        return out.requires_grad_(requires_grad) if requires_grad else out
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor")
    return _creation.tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)


def fill(input, value):
    """A tensor of ``input``'s shape and dtype, every element ``value`` (out of place ``fill_``).

    Example::
        >>> import retrograd as rg
        >>> rg.fill(rg.zeros(2), 3.)
        tensor([3., 3.])
    """
    return input.clone().fill_(value)


# -- histograms and integrals -------------------------------------------------------------------------------------
def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002 - PyTorch's names
    """The histogram of ``input``'s values: ``(hist, bin_edges)``; ``bins`` a count (equal bins over ``range``,
    default the values' min and max) or a 1-d tensor of edges; ``weight`` per value; ``density``: normalized so
    that the integral over the range is 1.

    Example::
        >>> import retrograd as rg
        >>> rg.histogram(rg.tensor([1., 2., 1.]), bins=4, range=(0., 3.)).hist
        tensor([0., 2., 1., 0.])
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, but got "
                           f"input {_dtype.scalar_type_name(input.dtype).lower()} and bins "
                           f"{_dtype.scalar_type_name(input.dtype).lower()}")
    values = np.asarray(input.detach().numpy(), dtype=np.float64).ravel()
    w = None if weight is None else np.asarray(weight.detach().numpy(), dtype=np.float64).ravel()
    if isinstance(bins, Tensor):
        edges = np.asarray(bins.detach().numpy(), dtype=np.float64)
    else:
        if bins <= 0:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got 0 for dimension 0")
        lo, hi = (float(values.min()), float(values.max())) if range is None and values.size else (
            (0.0, 0.0) if range is None else tuple(float(v) for v in range))
        if lo > hi:
            raise RuntimeError(f"torch.histogram(): min should not exceed max, but got min {lo} max {hi}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5  # PyTorch widens an empty range as NumPy does
        edges = np.linspace(lo, hi, int(bins) + 1).astype(input.dtype.np).astype(np.float64)
    hist, _ = np.histogram(values, bins=edges, weights=w)
    if density:
        hist = hist / (np.diff(edges) * hist.sum())
    return return_types.histogram(_creation.tensor(hist, dtype=input.dtype, device=input.device),
                            _creation.tensor(edges, dtype=input.dtype, device=input.device))


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The cumulative integral of ``y`` along ``dim`` by the trapezoid rule, with sample points ``x`` or a
    spacing ``dx`` (default 1): one fewer element along ``dim``.

    Example::
        >>> import retrograd as rg
        >>> rg.cumulative_trapezoid(rg.tensor([1., 2., 3.]), dx=2.)
        tensor([3., 8.])
    """
    if y.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    n = y.shape[dim]
    if n == 0:
        return y.narrow(dim, 0, 0)
    pairs = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) / 2
    if x is not None:
        spacing = x.diff(dim=-1 if x.dim() == 1 else dim)
        if x.dim() == 1:
            spacing = spacing.reshape((n - 1,) + (1,) * (y.dim() - 1 - (dim % y.dim())))
        pairs = pairs * spacing
    elif dx is not None:
        pairs = pairs * dx
    return pairs.cumsum(dim)


# -- queries ------------------------------------------------------------------------------------------------------
def adjoint(input):
    """The conjugate transpose of the last two dims (a view; the transpose of real matrices).

    Example::
        >>> import retrograd as rg
        >>> rg.adjoint(rg.tensor([[1., 2.]]))
        tensor([[1.],
                [2.]])
    """
    if input.dim() < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                           f"{input.dim()}-D tensor.")
    return _shape.transpose(input, -2, -1)


def typename(obj):
    """The type of ``obj`` as a string: a tensor's ``type()`` (``retrograd.FloatTensor``), else its class's
    qualified name.

    Example::
        >>> import retrograd as rg
        >>> rg.typename(rg.zeros(1)), rg.typename(3)
        ('retrograd.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None or not isinstance(qualname, str):
        module, qualname = type(obj).__module__, type(obj).__qualname__
    elif not isinstance(obj, type) and not callable(obj):
        module, qualname = type(obj).__module__, type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_complex(input):
    """Whether ``input``'s dtype is complex (never, in retrograd, which has no complex dtypes).

    Example::
        >>> import retrograd as rg
        >>> rg.is_complex(rg.zeros(1))
        False
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"is_complex(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.is_complex()


# -- process-wide settings ----------------------------------------------------------------------------------------
_settings = {"deterministic": False, "warn_only": False, "matmul_precision": "highest"}
_DEBUG_MODES = ("default", "warn", "error")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Asks for deterministic algorithms (retrograd's kernels all are): the setting is recorded for
    ``are_deterministic_algorithms_enabled`` and the debug mode.

    Example::
        >>> import retrograd as rg
        >>> rg.use_deterministic_algorithms(True); rg.are_deterministic_algorithms_enabled()
        True
        >>> rg.use_deterministic_algorithms(False)
    """
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    _settings["deterministic"], _settings["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return _settings["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """Whether ``use_deterministic_algorithms`` was asked only to warn (``warn_only=True``)."""
    return _settings["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """``use_deterministic_algorithms`` by a mode: ``"default"`` or 0 (off), ``"warn"`` or 1, ``"error"`` or 2."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The debug mode as an int: 0 (off), 1 (warn), 2 (error)."""
    if not _settings["deterministic"]:
        return 0
    return 1 if _settings["warn_only"] else 2


def set_float32_matmul_precision(precision):
    """Records the float32 matmul precision asked for (``"highest"``, ``"high"`` or ``"medium"``); retrograd's
    float32 products are always computed at the highest."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      f"setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _settings["matmul_precision"] = precision


def get_float32_matmul_precision():
    """The float32 matmul precision last set: ``"highest"`` (the default), ``"high"`` or ``"medium"``."""
    return _settings["matmul_precision"]


for _fn in (use_deterministic_algorithms, are_deterministic_algorithms_enabled,
            is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode, get_deterministic_debug_mode,
            set_float32_matmul_precision, get_float32_matmul_precision):
    _export(_fn)
globals()["grid_sampler_2d"] = grid_sampler
__all__.append("grid_sampler_2d")
for _fn in (grid_sampler, affine_grid_generator, constant_pad_nd, column_stack, range, randint_like, asarray, fill, cumulative_trapezoid, typename,
            is_complex):
    _export(_fn)
_export(histogram, method=True)
_export(adjoint, method=True)
Tensor.ger = Tensor.outer

# -- the LU decomposition under its old names (ops/lu.py) --------------------------------------------------------------
lu_unpack = _lu.lu_unpack
_export(_lu.old_lu, "lu")
_export(_lu.old_lu_solve, "lu_solve")
__all__.append("lu_unpack")
Tensor.lu = _lu.old_lu
Tensor.lu_solve = _lu.old_lu_solve
