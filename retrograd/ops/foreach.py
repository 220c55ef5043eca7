"""PyTorch's ``_foreach_*`` ops: one op over each tensor of a list (and the matching scalar or tensor of a second).

Note [Foreach ops]
~~~~~~~~~~~~~~~~~~
``_foreach_<op>(tensors, ...)`` is a list of op calls, one per tensor, with PyTorch's names,
arguments and list checks; ``_foreach_<op>_`` calls the Tensor's in-place method on each and
returns the list it was given. The other argument of a binary op is a scalar, a list of
scalars, a list of tensors or a 0-dim tensor, as PyTorch's overloads. The in-place forms record
what the per-tensor in-place op records, as PyTorch's (``MulBackward0``...), but ``addcmul_`` and
``addcdiv_``, which are an ``add_`` here (``AddBackward0``, PyTorch's ``AddcmulBackward0``); an
out-of-place form records one node per tensor, the op's own (``ExpBackward0``), where PyTorch's
records one ``ForeachExpBackward0`` shared by the outputs: the same gradients. A form whose
per-tensor op (or in-place method) retrograd lacks is not defined.
"""
from __future__ import annotations

from .._tensor import Tensor
from . import pointwise, reduction
from .copy import clone

__all__ = []

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
          "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("mul", "div", "clamp_min", "clamp_max", "maximum", "minimum", "pow")
_WITH_ALPHA = ("add", "sub")


def _tensor_list(tensors) -> list:
    """``tensors`` as a list, refused with PyTorch's error where empty."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return tensors


def _per_tensor(other, n: int) -> list:
    """The second argument of a foreach op, one entry per tensor: a scalar, a list of scalars or tensors, a 0-dim
    tensor."""
    if isinstance(other, Tensor):
        if other.dim() != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} dimensions and "
                               f"{other.numel()} elements.")
        return [other] * n
    if isinstance(other, (list, tuple)):
        if len(other) != n:
            if other and all(isinstance(o, Tensor) for o in other):
                raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(other)}")
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(other)
    return [other] * n


def _op(name):
    """The public op ``name`` (a pointwise or reduction one), or None where retrograd has none."""
    return getattr(pointwise, name, None) or getattr(reduction, name, None)


def _define(name, fn, summary):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = summary + "\n\nSee Note [Foreach ops]."
    globals()[name] = fn
    __all__.append(name)


def _unary(op_name):
    op = _op(op_name)
    if op is not None:
        _define(f"_foreach_{op_name}", lambda self: [op(t) for t in _tensor_list(self)],
                f"``[{op_name}(t) for t in self]``.")
    if hasattr(Tensor, op_name + "_"):
        def inplace(self):
            for t in _tensor_list(self):
                getattr(t, op_name + "_")()
            return self
        _define(f"_foreach_{op_name}_", inplace, f"``t.{op_name}_()`` for each ``t`` of ``self``; returns ``self``.")


def _binary(op_name, alpha: bool):
    op = _op(op_name)
    if alpha:
        def outplace(self, other, *, alpha=1):
            tensors = _tensor_list(self)
            return [op(t, o, alpha=alpha) for t, o in zip(tensors, _per_tensor(other, len(tensors)))]

        def inplace(self, other, *, alpha=1):
            tensors = _tensor_list(self)
            for t, o in zip(tensors, _per_tensor(other, len(tensors))):
                getattr(t, op_name + "_")(o, alpha=alpha)
            return self
    else:
        def outplace(self, other):
            if not isinstance(self, (list, tuple)):  # pow's (Scalar self, TensorList exponent)
                return [op(self, o) for o in _tensor_list(other)]
            tensors = _tensor_list(self)
            return [op(t, o) for t, o in zip(tensors, _per_tensor(other, len(tensors)))]

        def inplace(self, other):
            tensors = _tensor_list(self)
            for t, o in zip(tensors, _per_tensor(other, len(tensors))):
                getattr(t, op_name + "_")(o)
            return self
    if op is not None:
        _define(f"_foreach_{op_name}", outplace, f"``{op_name}`` of each tensor of ``self`` with its ``other``.")
    if hasattr(Tensor, op_name + "_"):
        _define(f"_foreach_{op_name}_", inplace, f"``t.{op_name}_(other)`` for each ``t`` of ``self``; returns "
                                                 "``self``.")


for _name in _UNARY:
    _unary(_name)
for _name in _BINARY:
    _binary(_name, alpha=False)
for _name in _WITH_ALPHA:
    _binary(_name, alpha=True)


def _scalars(value, n: int) -> list:
    """addcmul's and addcdiv's ``value``: a scalar, a list of them, or a 1-D tensor of them, one per tensor."""
    if isinstance(value, Tensor):
        if value.dim() != 1 or value.numel() != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return value.tolist()
    return _per_tensor(value, n)


def _addc(combine, inplace: bool):
    def run(self, tensor1, tensor2, value=1):
        tensors = _tensor_list(self)
        t1, t2 = _per_tensor(tensor1, len(tensors)), _per_tensor(tensor2, len(tensors))
        out = []
        for t, a, b, v in zip(tensors, t1, t2, _scalars(value, len(tensors))):
            out.append(t.add_(combine(a, b), alpha=v) if inplace else pointwise.add(t, combine(a, b), alpha=v))
        return self if inplace else out
    return run


_define("_foreach_addcmul", _addc(pointwise.mul, False), "``self + value * tensor1 * tensor2``, per tensor.")
_define("_foreach_addcmul_", _addc(pointwise.mul, True), "``self += value * tensor1 * tensor2``, per tensor; returns "
                                                         "``self``.")
_define("_foreach_addcdiv", _addc(pointwise.div, False), "``self + value * tensor1 / tensor2``, per tensor.")
_define("_foreach_addcdiv_", _addc(pointwise.div, True), "``self += value * tensor1 / tensor2``, per tensor; returns "
                                                         "``self``.")


def _lerp(inplace: bool):
    def run(self, tensors1, weight):
        tensors = _tensor_list(self)
        ends = _per_tensor(tensors1, len(tensors))
        weights = _per_tensor(weight, len(tensors))
        if inplace:
            for t, e, w in zip(tensors, ends, weights):
                t.lerp_(e, w)
            return self
        return [pointwise.lerp(t, e, w) for t, e, w in zip(tensors, ends, weights)]
    return run


if hasattr(pointwise, "lerp"):
    _define("_foreach_lerp", _lerp(False), "``lerp(t, end, weight)`` for each tensor of ``self``.")
if hasattr(Tensor, "lerp_"):
    _define("_foreach_lerp_", _lerp(True), "``t.lerp_(end, weight)`` for each tensor of ``self``; returns ``self``.")


def _foreach_norm(self, ord=2, dtype=None):  # noqa: A002 - PyTorch's argument name
    """The ``ord``-norm of each tensor of ``self`` as a vector (cast to ``dtype`` first). See Note [Foreach ops]."""
    return [reduction.norm(t if dtype is None else t.to(dtype), ord) for t in _tensor_list(self)]


def _foreach_max(self):
    """The largest element of each tensor of ``self``. See Note [Foreach ops]."""
    return [reduction.amax(t) for t in _tensor_list(self)]


def _foreach_clone(self, *, memory_format=None):
    """A clone of each tensor of ``self``. See Note [Foreach ops]."""
    return [clone(t) for t in _tensor_list(self)]


def _foreach_zero_(self):
    """Fills each tensor of ``self`` with zeros, in place; returns ``self``. See Note [Foreach ops]."""
    for t in _tensor_list(self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """Copies each tensor of ``src`` into the tensor of ``self`` at its place; returns ``self``. See Note [Foreach
    ops]."""
    tensors = _tensor_list(self)
    for t, s in zip(tensors, _per_tensor(list(src), len(tensors))):
        t.copy_(s, non_blocking=non_blocking)
    return self


__all__ += ["_foreach_norm", "_foreach_max", "_foreach_clone", "_foreach_zero_", "_foreach_copy_"]
