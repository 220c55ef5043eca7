"""Printing tensors the way PyTorch does: ``tensor([1., 2.], requires_grad=True)``."""
import numpy as np

from . import _dtype
from ._tensor import Tensor
from .ops._forward import current_level, tangent_of

_INDENT = len("tensor(")
_WIDTH = 80


def _float_formatter(values):
    """PyTorch's choice of notation: integers as ``1.``, else 4 decimals, else scientific."""
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    if nonzero.size == 0:
        return lambda v: _special(v) or f"{v:.0f}."
    absmax, absmin = nonzero.max(), nonzero.min()
    if np.all(finite == np.round(finite)):
        if absmax > 1e8:
            return lambda v: _special(v) or f"{v:.4e}"
        return lambda v: _special(v) or f"{v:.0f}."
    if absmax / absmin > 1000.0 or absmax > 1e8 or absmin < 1e-4:
        return lambda v: _special(v) or f"{v:.4e}"
    return lambda v: _special(v) or f"{v:.4f}"


def _special(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def format_tensor(t) -> str:
    """Returns PyTorch's repr of tensor ``t``, with its dtype, device and autograd suffixes."""
    arr = t._host()
    if arr.dtype.kind == "V":  # bfloat16 (Note [bfloat16 arrays] in _dtype.py): its values, printed as floats
        arr = arr.astype(np.float64)
    kind = arr.dtype.kind
    if kind == "f":
        fmt = _float_formatter(arr.astype(np.float64).ravel())
        width = max((len(fmt(float(v))) for v in arr.ravel()), default=0)
        formatter = {"float_kind": lambda v: fmt(float(v)).rjust(width)}
    elif kind == "b":
        formatter = {"bool": lambda v: ("True" if v else "False").rjust(5 if arr.size > 1 and not arr.all() else 4)}
    else:
        width = max((len(str(int(v))) for v in arr.ravel()), default=0)
        formatter = {"int": lambda v: str(int(v)).rjust(width)}
    if arr.ndim == 0:
        body = formatter[next(iter(formatter))](arr.item()).strip()
    else:
        body = np.array2string(arr, separator=", ", prefix="tensor(", formatter=formatter,
                               threshold=1000, edgeitems=3, max_line_width=80)
    extras = []
    if arr.size == 0 and arr.ndim != 1:
        extras.append(f"size={tuple(arr.shape)}")
    if t._device.type != "cpu":
        extras.append(f"device='{t._device}'")
    dt = t.dtype
    if dt not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool) or (arr.size == 0 and dt is not _dtype.get_default_dtype()):
        extras.append(f"dtype={dt!r}")
    if t.is_mkldnn:
        extras.append(f"layout={t.layout!r}")
    try:
        fn = t.grad_fn  # a view's, regenerated if its base changed in place
        fn_name = None if fn is None else fn.name().rpartition("::")[2]  # PyTorch prints a C++ node unqualified
    except RuntimeError:  # a view that may no longer be used with grad (PyTorch prints it so)
        fn_name = "Invalid"
    if fn_name is not None:
        extras.append(f"grad_fn=<{fn_name}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    level = current_level()
    tangent = None if level is None else tangent_of(t, level)
    if tangent is not None:
        extras.append(f"tangent={tangent}")
    return _closed("tensor(" + body, extras)


_LONGER = len("retrograd.") - len("torch.")


def _closed(text, suffixes):
    """``text``, then ``, suffix`` for each suffix, then ``)``, as PyTorch lays them out: a suffix that would take
    its line past the width (counting two more for the separator and two for the parenthesis's side) starts a
    line of its own, indented under the first element."""
    parts = [text]
    used = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        width = len(suffix) - suffix.count("retrograd.") * _LONGER  # laid out as PyTorch's, which says "torch."
        if used + width + 2 > _WIDTH:
            parts.append(",\n" + " " * _INDENT + suffix)
            used = _INDENT + width
        else:
            parts.append(", " + suffix)
            used += width + 2
    return "".join(parts) + ")"


Tensor.__repr__ = Tensor.__str__ = format_tensor
