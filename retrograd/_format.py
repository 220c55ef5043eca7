"""Printing tensors the way PyTorch does: ``tensor([1., 2.], requires_grad=True)``, under PyTorch's print options
(``set_printoptions``)."""
import math

import numpy as np

from . import _dtype
from ._tensor import Tensor
from .ops._forward import current_level, tangent_of

_INDENT = len("tensor(")


# PyTorch's print options (``set_printoptions``): the digits after the point, the element count above which a
# tensor is summarized with its ``edgeitems`` first and last per dim, the line width, and the notation (None: chosen
# from the values).
PRINT_OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Sets how tensors print, as PyTorch's: ``precision`` (digits after the point, default 4), ``threshold`` (the
    element count above which a tensor is summarized, default 1000), ``edgeitems`` (the elements kept at each end of
    a summarized dim, default 3), ``linewidth`` (default 80), ``profile`` (``"default"``, ``"short"`` or ``"full"``,
    applied first) and ``sci_mode`` (True or False: always or never scientific notation; None: chosen by the values,
    and reset by every call that does not pass it).

    Example::
        >>> import retrograd as rg
        >>> rg.set_printoptions(precision=2)
        >>> rg.tensor([1.12345])
        tensor([1.12])
        >>> rg.set_printoptions(profile="default")
        >>> rg.tensor([1.12345])
        tensor([1.1235])
    """
    if profile in _PROFILES:
        for key, value in zip(("precision", "threshold", "edgeitems", "linewidth"), _PROFILES[profile], strict=True):
            PRINT_OPTIONS[key] = value
    for key, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                       ("linewidth", linewidth)):
        if value is not None:
            PRINT_OPTIONS[key] = value
    PRINT_OPTIONS["sci_mode"] = sci_mode


def _float_formatter(values):
    """PyTorch's choice of notation: integers as ``1.``, else ``precision`` decimals, else scientific (where the
    magnitudes span more than 1000, or reach 1e8, or go below 1e-4, unless ``sci_mode`` says otherwise)."""
    precision, forced = PRINT_OPTIONS["precision"], PRINT_OPTIONS["sci_mode"]
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    if nonzero.size == 0:
        return lambda v: _special(v) or f"{v:.0f}."
    absmax, absmin = nonzero.max(), nonzero.min()
    sci = (absmax / absmin > 1000.0 or absmax > 1e8 or absmin < 1e-4) if forced is None else forced
    if sci:
        return lambda v: _special(v) or f"{v:.{precision}e}"
    if np.all(finite == np.round(finite)):
        return lambda v: _special(v) or f"{v:.0f}."
    return lambda v: _special(v) or f"{v:.{precision}f}"


def _special(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def _summarized(arr, edge):
    """The ``edge`` first and last entries of each dim longer than ``2 * edge``: what a summary prints."""
    for d in range(arr.ndim):
        n = arr.shape[d]
        if n > 2 * edge:
            arr = np.concatenate([np.take(arr, np.arange(edge), d), np.take(arr, np.arange(n - edge, n), d)], d)
    return arr


def _layout(arr, element, width, indent, edge):
    """PyTorch's layout of the elements of ``arr`` (nested brackets, as many ``width``-wide elements a line as
    ``linewidth`` holds, each row indented under its bracket), the middle of each dim longer than ``2 * edge``
    elided where ``edge`` is set (a summary). Recursive over the dims, not the data."""
    n = arr.shape[0]
    cut = bool(edge) and n > 2 * edge
    rows = (list(range(edge)), list(range(n - edge, n))) if cut else (list(range(n)), [])
    if arr.ndim == 1:
        items = [element(arr[i]) for i in rows[0]] + ([" ..."] if cut else []) + [element(arr[i]) for i in rows[1]]
        per_line = max(1, int((PRINT_OPTIONS["linewidth"] - indent) // (width + 2)))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    slices = ([_layout(arr[i], element, width, indent + 1, edge) for i in rows[0]] + (["..."] if cut else []) +
              [_layout(arr[i], element, width, indent + 1, edge) for i in rows[1]])
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def format_tensor(t) -> str:
    """Returns PyTorch's repr of tensor ``t``, with its dtype, device and autograd suffixes."""
    arr = t._host()
    if arr.dtype.kind == "V":  # bfloat16 (Note [bfloat16 arrays] in _dtype.py): its values, printed as floats
        arr = arr.astype(np.float64)
    summarize = arr.size > PRINT_OPTIONS["threshold"]
    edge = PRINT_OPTIONS["edgeitems"]
    shown = _summarized(arr, edge) if summarize else arr  # PyTorch picks the notation and width from these
    kind = arr.dtype.kind
    if kind == "f":
        values = shown.astype(np.float64).ravel()
        fmt = _float_formatter(values)
        finite = values[np.isfinite(values) & (values != 0)]  # PyTorch's width: of the nonzero finite values
        width = max((len(fmt(float(v))) for v in finite), default=1)

        def element(v):
            return fmt(float(v)).rjust(width)
    elif kind == "b":
        width = 5 if shown.size > 1 and not shown.all() else 4

        def element(v):
            return ("True" if v else "False").rjust(width)
    else:
        width = max((len(str(int(v))) for v in shown.ravel()), default=1)

        def element(v):
            return str(int(v)).rjust(width)
    if arr.ndim == 0:
        body = element(arr.item()).strip()
    elif arr.size == 0:
        body = "[]"
    else:
        body = _layout(arr, element, width, _INDENT, summarize and edge)
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
        if used + width + 2 > PRINT_OPTIONS["linewidth"]:
            parts.append(",\n" + " " * _INDENT + suffix)
            used = _INDENT + width
        else:
            parts.append(", " + suffix)
            used += width + 2
    return "".join(parts) + ")"


Tensor.__repr__ = Tensor.__str__ = format_tensor
