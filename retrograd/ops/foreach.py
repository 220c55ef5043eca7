"""PyTorch's ``_foreach_*`` ops: one op over each tensor of a list (and the matching scalar or tensor of a second).

Note [Foreach ops]
~~~~~~~~~~~~~~~~~~
``_foreach_<op>(tensors, ...)`` computes what a list of op calls would, one per tensor, with
PyTorch's names, arguments and list checks; ``_foreach_<op>_`` calls the Tensor's in-place method
on each and returns the list it was given. The other argument of a binary op is a scalar, a list
of scalars, a list of tensors or a 0-dim tensor, as PyTorch's overloads. The in-place forms record
what the per-tensor in-place op records, as PyTorch's (``MulBackward0``, ``AddcmulBackward0``...).

An out-of-place form that records (grad mode on, an input that requires grad) records ONE node
for the whole call, as PyTorch's: every output's ``grad_fn`` is that node, output ``i`` its
``output_nr`` ``i``, and the node is named after the overload the call resolved to
(``ForeachMaximumBackward0`` for a scalar, ``ForeachMaximumBackward1`` for a list of them,
``ForeachMaximumBackward0List`` for a list of tensors, ``ForeachExpBackward0``...), with PyTorch's
names for what it saves (``_saved_self``, ``_saved_scalar(s)``, ``_saved_exponent``,
``_saved_result``, ``_saved_ord``). The outputs are computed by the per-tensor ops with grad mode
off, so no per-tensor node exists; the node is an ``OpNode`` of an ``OpInfo`` of its own (one per
overload, not in the op table, ``_overload``), whose formulas are the per-tensor op's formulas
applied to each tensor in turn (``_foreach_formula``): written with retrograd ops, they are
differentiable, so double backward works, and the graph they build holds no node of the forward.
A 0-dim tensor given for every tensor of the list (the ``Tensor`` overloads) gets the sum of what
each output gives it. Undefined output gradients are zeros, as for every node of several outputs.
Where nothing records (grad mode off: the optimizers) the per-tensor ops run as they are, and a
form whose per-tensor op (or in-place method) retrograd lacks is not defined.
"""
from __future__ import annotations

import inspect

from .._errors import _internal_assert
from .._tensor import Tensor
from ..autograd import grad_mode
from . import arithmetic, trig  # noqa: F401 - their ops exist before the forms are built
from . import pointwise, reduction
from ._call import all_inference, record_outputs
from ._declarations import REGISTRY, OpInfo, _camel, _node_class
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
    """The public op ``name`` of the op table, or None where retrograd has none."""
    op = REGISTRY.get(name)
    return None if op is None or not op.public else op.function


def _define(name, fn, summary):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = summary + "\n\nSee Note [Foreach ops]."
    globals()[name] = fn
    __all__.append(name)


# -- one node per call (Note [Foreach ops]) -------------------------------------------------------
_grad_state = grad_mode.state
_census = grad_mode.census
_PER_OUTPUT = ("list", "each")  # kinds of parameter with one entry per output


def _signed(fn, names):
    """``fn`` (which takes its arguments positionally) with the signature of parameters ``names``."""
    fn.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                          for n in names])
    return fn


def _foreach_formula(fn, argnames, to_foreach, kinds, defaults, summed):
    """The foreach form of a per-tensor formula ``fn`` (of ``argnames``): ``fn`` applied to each output's gradient
    and values, a list of what it gives each tensor (``summed``: their sum, for a 0-dim tensor every output used).

    ``to_foreach`` maps the per-tensor op's parameters to the foreach op's, ``kinds`` gives each of those its kind
    (see ``_overload``), ``defaults`` the values of the per-tensor parameters the foreach op does not take.
    """
    needed = ["grads"]  # the foreach formula's parameters
    sources = []  # per argument of fn: (index in needed or None, indexed per output, constant)
    for a in argnames:
        if a == "grad":
            src, indexed = "grads", True
        elif a == "result":
            src, indexed = "result", True
        elif a in to_foreach:
            src = to_foreach[a]
            indexed = kinds[src] in _PER_OUTPUT
        else:
            base, _, suffix = a.rpartition("_")
            if suffix in ("shape", "dtype", "device") and base in to_foreach:
                src = f"{to_foreach[base]}_{suffix}"
                indexed = kinds[to_foreach[base]] == "list"  # the others' are described whole
            else:
                sources.append((None, False, defaults[a]))
                continue
        if src not in needed:
            needed.append(src)
        sources.append((needed.index(src), indexed, None))

    def formula(*values):
        out = [fn(*[const if k is None else values[k][i] if indexed else values[k] for k, indexed, const in sources])
               for i in range(len(values[0]))]
        if not summed:
            return out
        total = out[0].sum()
        for g in out[1:]:
            total = total + g.sum()
        return total
    return _signed(formula, needed)


def _unused_forward(xp, *args):
    raise RuntimeError("a foreach node's outputs are computed by the per-tensor ops")


# What PyTorch's foreach nodes show as ``_saved_<name>``: the nodes of its derivatives.yaml's own foreach entries; the
# nodes it generates from the per-tensor formulas show nothing.
_SHOWN = {"ForeachMaximumBackward0": ("self", "scalar"), "ForeachMinimumBackward0": ("self", "scalar"),
          "ForeachMaximumBackward1": ("self", "scalars"), "ForeachMinimumBackward1": ("self", "scalars"),
          "ForeachPowBackward0": ("self", "exponent", "result"), "ForeachPowBackward1": ("self", "exponent"),
          "ForeachPowBackward2": ("self", "exponent", "result"), "ForeachDivBackward0": ("self", "other"),
          "ForeachNormBackward0": ("self", "result", "ord")}


def _overload(node_name, params, per_op, formulas=None):
    """The (unregistered) OpInfo whose node a foreach overload records, named ``node_name``.

    ``params``: the foreach op's parameters, in order, as ``(name, per-tensor parameter or None, kind)``; a kind is
    ``"list"`` (tensors, one per output), ``"each"`` (numbers, one per output), ``"same"`` (one number for every
    output) or ``"tensor"`` (one 0-dim tensor for every output). ``per_op``: the per-tensor op's name, whose
    formulas and defaults are used, or None with ``formulas``: ``{per-tensor parameter: formula}``.
    """
    if formulas is None:
        op = REGISTRY[per_op]
        formulas = {op.params[pidx]: fn for pidx, _, fn, _ in op.formulas}
        defaults = {n: p.default for n, p in op.signature.parameters.items()}
    else:
        defaults = {}
    kinds = {name: kind for name, _, kind in params}
    to_foreach = {per: name for name, per, _ in params if per is not None}
    foreach_formulas = {}
    for name, per, kind in params:
        if kind in ("list", "tensor") and per in formulas:
            fn = formulas[per]
            foreach_formulas[name] = _foreach_formula(fn, list(inspect.signature(fn).parameters), to_foreach, kinds,
                                                      defaults, summed=kind == "tensor")
    names = [name for name, _, _ in params]
    info = OpInfo(node_name, _signed(_unused_forward, ["xp"] + names), foreach_formulas, promote=None, view=False,
                  tensors=[n for n, _, kind in params if kind in ("list", "tensor")],
                  lists=[n for n, _, kind in params if kind == "list"], nondiff_outputs=(), node_name="Foreach",
                  multi_output=True)
    info.shown_saves = frozenset(_SHOWN.get(node_name, ()))
    info.node_cls = _node_class(node_name, info)
    info.node_classes = (info.node_cls,)
    info.index_lists = frozenset(info.index[n] for n in info.lists)
    info.jvp = info.jvp_names = None
    info.inplace = info.public = False
    return info


def _requires_grad(*groups) -> bool:
    """Whether a tensor among these arguments requires grad: with grad mode on, the foreach call records (its
    callers read grad mode first, so that a call under no_grad, an optimizer's, costs one test more)."""
    for group in groups:
        for t in group if type(group) in (list, tuple) else (group,):
            if isinstance(t, Tensor) and (t._requires_grad or (t._base is not None and t._base._requires_grad)):
                return True
    return False


def _arrays(arg):
    return arg._data if isinstance(arg, Tensor) else [
        a._data if isinstance(a, Tensor) else a for a in arg] if type(arg) is list else arg


def _one_node(info, args, compute):
    """``compute()``'s outputs, with ``info``'s node recorded for them. See Note [Foreach ops]."""
    with grad_mode.no_grad():
        out = compute()
    if _census.threads and _grad_state.inference or _census.made and all_inference(info, args):
        return out  # See Note [Inference tensors]
    inputs = {id(t) for a in args if type(a) is list for t in a}
    _internal_assert(not any(id(o) in inputs or o._base is not None for o in out),
                     "a foreach op's per-tensor op gave back an input or a view")
    record_outputs(info, args, [_arrays(a) for a in args], out)
    return out


# -- the ops --------------------------------------------------------------------------------------
def _unary(op_name):
    op = _op(op_name)
    if op is not None:
        info = _overload(f"Foreach{_camel(op_name)}Backward0", [("self", "input", "list")], op_name)

        def outplace(self):
            tensors = _tensor_list(self)
            if _grad_state.grad_enabled and _requires_grad(tensors):
                return _one_node(info, (tensors,), lambda: [op(t) for t in tensors])
            return [op(t) for t in tensors]
        _define(f"_foreach_{op_name}", outplace, f"``[{op_name}(t) for t in self]``.")
    if hasattr(Tensor, op_name + "_"):
        def inplace(self):
            for t in _tensor_list(self):
                getattr(t, op_name + "_")()
            return self
        _define(f"_foreach_{op_name}_", inplace, f"``t.{op_name}_()`` for each ``t`` of ``self``; returns ``self``.")


# PyTorch's node of each overload of a binary op: (Scalar, ScalarList, List, Tensor), and the foreach parameters'
# names of the first three (the Tensor overload's is "other").
_BINARY_NODES = {
    "mul": ("ForeachMulBackward1Scalar", "ForeachMulBackward1ScalarList", "ForeachMulBackward0List",
            "ForeachMulBackward0Tensor"),
    "div": ("ForeachDivBackward1Scalar", "ForeachDivBackward1ScalarList", "ForeachDivBackward0",
            "ForeachDivBackward0Tensor"),
    "clamp_min": ("ForeachClampMinBackward0Scalar", "ForeachClampMinBackward0ScalarList",
                  "ForeachClampMinBackward1List", None),
    "clamp_max": ("ForeachClampMaxBackward0Scalar", "ForeachClampMaxBackward0ScalarList",
                  "ForeachClampMaxBackward1List", None),
    "maximum": ("ForeachMaximumBackward0", "ForeachMaximumBackward1", "ForeachMaximumBackward0List", None),
    "minimum": ("ForeachMinimumBackward0", "ForeachMinimumBackward1", "ForeachMinimumBackward0List", None),
    "pow": ("ForeachPowBackward0Scalar", "ForeachPowBackward1", "ForeachPowBackward0", None),
    "add": ("ForeachAddBackward1Scalar", "ForeachAddBackward1ScalarList", "ForeachAddBackward0List",
            "ForeachAddBackward0Tensor"),
    "sub": ("ForeachSubBackward1Scalar", "ForeachSubBackward1ScalarList", "ForeachSubBackward0List", None),
}
_OTHER_NAMES = {"pow": ("exponent", "exponent", "exponent")}


def _binary_overloads(op_name, alpha):
    """The four overloads' OpInfos of binary op ``op_name`` (None where PyTorch has no such overload)."""
    per = REGISTRY[op_name]
    other = per.params[1]
    names = _OTHER_NAMES.get(op_name, ("scalar", "scalars", "other"))
    rest = [("alpha", "alpha", "same")] if alpha else []
    kinds = ("same", "each", "list", "tensor")
    return tuple(None if node is None else _overload(node, [("self", "input", "list"), (name, other, kind)] + rest,
                                                     op_name)
                 for node, name, kind in zip(_BINARY_NODES[op_name], names + ("other",), kinds))


def _which(other, overloads, alpha=1):
    """The overload a call with this ``other`` resolved to, or None where PyTorch has none."""
    if isinstance(other, Tensor):
        if overloads[3] is not None and overloads[3].name == "ForeachAddBackward0Tensor" and alpha == 1 and not (
                other._requires_grad):
            return overloads[0]  # PyTorch's binding takes it as a Scalar then
        return overloads[3]
    if isinstance(other, (list, tuple)):
        return overloads[2] if any(isinstance(o, Tensor) for o in other) else overloads[1]
    return overloads[0]


def _binary(op_name, alpha: bool):
    op = _op(op_name)
    overloads = _binary_overloads(op_name, alpha) if op is not None else None
    if alpha:
        def outplace(self, other, *, alpha=1):
            tensors = _tensor_list(self)
            others = _per_tensor(other, len(tensors))
            compute = lambda: [op(t, o, alpha=alpha) for t, o in zip(tensors, others)]  # noqa: E731
            info = None
            if _grad_state.grad_enabled and _requires_grad(tensors, other):
                info = _which(other, overloads, alpha)
            if info is not None:
                return _one_node(info, (tensors, list(other) if type(other) in (list, tuple) else other, alpha),
                                 compute)
            return compute()

        def inplace(self, other, *, alpha=1):
            tensors = _tensor_list(self)
            for t, o in zip(tensors, _per_tensor(other, len(tensors))):
                getattr(t, op_name + "_")(o, alpha=alpha)
            return self
    else:
        def outplace(self, other):
            if not isinstance(self, (list, tuple)):  # pow's (Scalar self, TensorList exponent)
                tensors = _tensor_list(other)
                if op_name == "pow" and _grad_state.grad_enabled and _requires_grad(tensors):
                    return _one_node(_POW_OF_A_SCALAR, (self, tensors), lambda: [op(self, o) for o in tensors])
                return [op(self, o) for o in tensors]
            tensors = _tensor_list(self)
            others = _per_tensor(other, len(tensors))
            if _grad_state.grad_enabled and _requires_grad(tensors, other):
                info = _which(other, overloads)
                if info is not None:
                    return _one_node(info, (tensors, list(other) if type(other) in (list, tuple) else other),
                                     lambda: [op(t, o) for t, o in zip(tensors, others)])
            return [op(t, o) for t, o in zip(tensors, others)]

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


_POW_OF_A_SCALAR = _overload("ForeachPowBackward2", [("self", "input", "same"), ("exponent", "exponent", "list")],
                             "pow")
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


# addcmul's and addcdiv's formulas, per tensor (PyTorch's derivatives.yaml)
_ADDC_FORMULAS = {
    "addcmul": {"input": lambda grad: grad,
                "tensor1": lambda grad, tensor2, value: grad * (tensor2 * value),
                "tensor2": lambda grad, tensor1, value: grad * (tensor1 * value)},
    "addcdiv": {"input": lambda grad: grad,
                "tensor1": lambda grad, tensor2, value: grad * (value / tensor2),
                "tensor2": lambda grad, tensor1, tensor2, value: -grad * (value * tensor1) / (tensor2 * tensor2)},
}


def _addc_overloads(name):
    stem = f"Foreach{_camel(name)}Backward0"
    lists = [("self", "input", "list"), ("tensor1", "tensor1", "list"), ("tensor2", "tensor2", "list")]
    return (_overload(stem + "Scalar", lists + [("value", "value", "same")], None, _ADDC_FORMULAS[name]),
            _overload(stem + "ScalarList", lists + [("scalars", "value", "each")], None, _ADDC_FORMULAS[name]))


def _addc(name, combine, inplace: bool):
    overloads = None if inplace else _addc_overloads(name)

    def run(self, tensor1, tensor2, value=1):
        tensors = _tensor_list(self)
        t1, t2 = _per_tensor(tensor1, len(tensors)), _per_tensor(tensor2, len(tensors))
        values = _scalars(value, len(tensors))
        if inplace:
            for t, a, b, v in zip(tensors, t1, t2, values):
                getattr(t, f"{name}_")(a, b, value=v)
            return self

        def compute():
            return [pointwise.add(t, combine(a, b), alpha=v) for t, a, b, v in zip(tensors, t1, t2, values)]
        if _grad_state.grad_enabled and _requires_grad(tensors, t1, t2):
            scalar = not isinstance(value, (list, tuple, Tensor))
            return _one_node(overloads[0 if scalar else 1], (tensors, t1, t2, value if scalar else values), compute)
        return compute()
    return run


_define("_foreach_addcmul", _addc("addcmul", pointwise.mul, False), "``self + value * tensor1 * tensor2``, per "
                                                                    "tensor.")
_define("_foreach_addcmul_", _addc("addcmul", pointwise.mul, True), "``self += value * tensor1 * tensor2``, per "
                                                                    "tensor; returns ``self``.")
_define("_foreach_addcdiv", _addc("addcdiv", pointwise.div, False), "``self + value * tensor1 / tensor2``, per "
                                                                    "tensor.")
_define("_foreach_addcdiv_", _addc("addcdiv", pointwise.div, True), "``self += value * tensor1 / tensor2``, per "
                                                                    "tensor; returns ``self``.")


def _lerp(inplace: bool):
    overloads = None if inplace else {
        "same": _overload("ForeachLerpBackward0Scalar", [("self", "input", "list"), ("tensors1", "end", "list"),
                                                          ("weight", "weight", "same")], "lerp"),
        "each": _overload("ForeachLerpBackward0ScalarList", [("self", "input", "list"), ("tensors1", "end", "list"),
                                                              ("weight", "weight", "each")], "lerp"),
        "list": _overload("ForeachLerpBackward1List", [("self", "input", "list"), ("tensors1", "end", "list"),
                                                        ("weights", "weight", "list")], "lerp")}

    def run(self, tensors1, weight):
        tensors = _tensor_list(self)
        ends = _per_tensor(tensors1, len(tensors))
        weights = _per_tensor(weight, len(tensors))
        if inplace:
            for t, e, w in zip(tensors, ends, weights):
                t.lerp_(e, w)
            return self

        def compute():
            return [pointwise.lerp(t, e, w) for t, e, w in zip(tensors, ends, weights)]
        if _grad_state.grad_enabled and _requires_grad(tensors, ends, weights) and not isinstance(weight, Tensor):
            kind = "same" if not isinstance(weight, (list, tuple)) else "list" if any(
                isinstance(w, Tensor) for w in weight) else "each"
            return _one_node(overloads[kind], (tensors, ends, weight if kind == "same" else weights), compute)
        return compute()
    return run


if hasattr(pointwise, "lerp"):
    _define("_foreach_lerp", _lerp(False), "``lerp(t, end, weight)`` for each tensor of ``self``.")
if hasattr(Tensor, "lerp_"):
    _define("_foreach_lerp_", _lerp(True), "``t.lerp_(end, weight)`` for each tensor of ``self``; returns ``self``.")

_NORM = _overload("ForeachNormBackward0", [("self", "input", "list"), ("ord", "p", "same")], "norm")
_MAX = _overload("ForeachMaxBackward1", [("self", "input", "list")], "amax")
_CLONE = _overload("ForeachCloneBackward0", [("self", "input", "list")], "clone")


def _foreach_norm(self, ord=2, dtype=None):  # noqa: A002 - PyTorch's argument name
    """The ``ord``-norm of each tensor of ``self`` as a vector (cast to ``dtype`` first). See Note [Foreach ops]."""
    tensors = [t if dtype is None else t.to(dtype) for t in _tensor_list(self)]
    if _grad_state.grad_enabled and _requires_grad(tensors):
        return _one_node(_NORM, (tensors, ord), lambda: [reduction.norm(t, ord) for t in tensors])
    return [reduction.norm(t, ord) for t in tensors]


def _foreach_max(self):
    """The largest element of each tensor of ``self``. See Note [Foreach ops]."""
    tensors = _tensor_list(self)
    if _grad_state.grad_enabled and _requires_grad(tensors):
        return _one_node(_MAX, (tensors,), lambda: [reduction.amax(t) for t in tensors])
    return [reduction.amax(t) for t in tensors]


def _foreach_clone(self, *, memory_format=None):
    """A clone of each tensor of ``self``. See Note [Foreach ops]."""
    tensors = _tensor_list(self)
    if _grad_state.grad_enabled and _requires_grad(tensors):
        return _one_node(_CLONE, (tensors,), lambda: [clone(t) for t in tensors])
    return [clone(t) for t in tensors]


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
