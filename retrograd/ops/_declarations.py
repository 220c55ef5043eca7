"""defop(): declares an op once, with its forward and per-input derivative formulas.

From one declaration come the public function (PyTorch's signature, generated so that argument
handling costs no more than a plain call: _signature.py), the ``<Name>Backward0`` node class
(_node.py) and the classes of Note [Node names per call], what each node saves, and the op's
Tensor methods. Every call of the op does what ``call_op`` (_call.py) defines.

Formula parameters, matched by name:
  ``grad``             the gradient of the (single) output
  ``grads``            the gradients of all outputs (undefined ones materialized as zeros)
  ``result``           the forward output (a tuple for several outputs), saved without a cycle
  ``<param>``          a forward argument (tensors are saved as ``SavedTensor``)
  ``<param>_shape``    only the shape of a forward tensor argument (likewise ``_dtype``, ``_device``, and
                       ``_strides``, its strides in elements: ``Tensor.stride()``)

Note [Forward derivatives]
~~~~~~~~~~~~~~~~~~~~~~~~~~
Beside its backward formulas an op declares its forward derivative (PyTorch's ``result:`` entries
of derivatives.yaml), used by forward-mode AD (ops/_forward.py), as ``defop(..., jvp=...)`` or on a
line of its own, ``defjvp(rule, *names)``. The rule is one of:
  ``LINEAR``          the op itself applied to the tangents in place of its differentiable inputs
                      (zeros for those without one, and 0 for a number): right for an op linear
                      in them jointly (views, reshapes, sum, cat, indexing, ``add``...)
  ``FROM_BACKWARD``   the sum, over inputs with a tangent, of the input's backward formula with
                      ``grad`` the tangent broadcast to the output's shape: right for an op whose
                      Jacobian is diagonal (elementwise with broadcasting), whose formulas are
                      ``grad`` times a derivative
  ``MULTILINEAR``     the sum, over inputs with a tangent, of the op with that input replaced by
                      its tangent: right for an op linear in each input apart (``mul``, ``mm``, ``einsum``)
  ``REDUCED_FROM_BACKWARD``  for a reduction over ``dim`` (``keepdim``) whose every input element
                      reaches one output: the input's formula with ``grad`` all ones (the partial
                      derivatives), times the tangent, summed over ``dim``
  a function          of ``<param>_t`` (the tangent of a forward argument, zeros where it has
                      none; a list for a list parameter), ``result``, forward arguments and
                      ``<param>_shape/_dtype/_device`` as formulas; it returns the output's tangent
                      (a tuple, None for an output without one, for several outputs)
The rule is written with retrograd ops, so that tangents are differentiable (forward-over-reverse).
An op with backward formulas but no forward derivative raises PyTorch's NotImplementedError under
forward-mode AD; an op without backward formulas gives its outputs no tangent.

Note [Declared shortcuts]
~~~~~~~~~~~~~~~~~~~~~~~~~
Some forwards are one NumPy ufunc call, and some formulas one call of another op (``grad *
other`` is ``mul``). Made by the constructors below, such a forward or formula carries that
fact (``same_as_ufunc`` and ``same_as_op``: the callee, how many leading arguments it takes,
and the ``(position, value)`` conditions under which the whole function is that call), which the
C code uses to call the ufunc or the op's C call without the Python function's frame (Note [The
compiled op call], Note [The compiled loop]). The declaration is never written by hand: it is
derived from how the function is built, so it cannot drift from what the function does.
  ``ufunc(name, *params)``             the forward ``xp.<name>(*params)``
  ``passthrough``                      the formula that returns the gradient itself
  ``op_call(name, *params)``           the formula that returns op ``name`` applied to ``params``
  ``shortcut(general, when, then)``    ``then`` where every condition of ``when`` holds, else ``general``

Note [Node names per call]
~~~~~~~~~~~~~~~~~~~~~~~~~~
PyTorch names a backward node after the overload a call resolved to (``SumBackward0`` for
``x.sum()``, ``SumBackward1`` for ``x.sum(1)``; ``PowBackward0/1/2`` for tensor ** scalar,
tensor ** tensor, scalar ** tensor), and ``grad_fn.name()`` is part of what users see. Where
retrograd declares one op for several overloads, the declaration says which names a call may
give: ``node_names={"SumBackward1": lambda dim: dim is not None}`` maps a node name to a
condition on the call's arguments (by parameter name, as formulas); the first that holds
names the node, else the op's own name. Each name is a node class of its own (as in PyTorch:
``type(grad_fn).__name__`` is the name), all sharing the op's ``apply``; ``OpInfo.node_class``
picks one, and every path that builds the op's nodes calls it: ``call_op``, the generated
public function, and the C op call, which finds that method in its spec where an op has such
names (Note [The compiled op call]).

An overload that takes an input as a Scalar records no edge for it (``x ** 2``: PyTorch's
``PowBackward0`` has one edge, and ``grad_fn(g)`` returns one gradient). ``node_edges={"PowBackward0":
("input",)}`` says which formula inputs a node class records edges for (default: all); its
condition must hold only where the others hold no tensor. Such a class has an ``apply`` of its
own, over those formulas (``edge_formulas``: their indices in ``op.formulas``), and every path
keeps only those edges once it has chosen the class (``OpInfo.node_edges``, by class). An op whose
in-place form PyTorch records under another name (``threshold_``: ``ThresholdBackward1``) declares
it, ``inplace_node_name=``; ``call_op``, the only path that writes in place, picks that class then.
"""
from __future__ import annotations

import inspect
import re

from .._tensor import Tensor
from ._call import call_op
from ._codegen import define, parameter_source
from ._forward import FROM_BACKWARD, LINEAR, MULTILINEAR, REDUCED_FROM_BACKWARD, check_jvp_names
from ._node import OpNode, build_fast_apply
from ._signature import make_public

__all__ = ["defop", "defjvp", "OpInfo", "REGISTRY", "tensor_method", "ufunc", "passthrough", "op_call", "shortcut",
           "LINEAR", "FROM_BACKWARD", "MULTILINEAR", "REDUCED_FROM_BACKWARD"]

REGISTRY: dict = {}


def _camel(name) -> str:
    """PyTorch's node-name stem of an op name: ``log_softmax`` -> ``LogSoftmax``, ``im2col`` -> ``Im2Col``."""
    stem = "".join(part.capitalize() for part in name.strip("_").split("_"))
    return re.sub(r"(?<=[0-9])[a-z]", lambda m: m.group().upper(), stem)


def _node_class(full_name, op):
    """The node class named ``full_name`` for ``op``; a ``ns::Name`` is class ``Name`` whose name() is all of it."""
    body = {"__slots__": (), "op": op}
    if "::" in full_name:  # PyTorch's hand-written nodes: name() is the C++ name, the class its last part
        body["name"] = lambda self: full_name
    return type(full_name.rpartition("::")[2], (OpNode,), body)


class OpInfo:
    """Everything the registry knows about one op."""

    def __init__(self, name, forward, formulas, *, promote, view, tensors, lists, nondiff_outputs,
                 node_name, multi_output, device_param=None, node_names=None, node_edges=None, saved_lists=(),
                 inplace_node_name=None, wide=True):
        self.name = name
        self.wide = wide and not view  # a call with bfloat16 computes in float32 (Note [bfloat16 arrays] in _dtype.py)
        self.bfloat16_scalars = False  # its Python numbers rounded to bfloat16 first (ops/bfloat16.py)
        self.forward = forward
        sig = inspect.signature(forward)
        params = list(sig.parameters.values())
        if not params or params[0].name != "xp":
            raise TypeError(f"defop({name!r}): the forward's first parameter must be 'xp'")
        self.params = [p.name for p in params[1:]]
        for reserved in ("grads", "result"):  # in a formula these names mean the gradients, the output
            if reserved in self.params:
                raise TypeError(f"defop({name!r}): {reserved!r} is reserved for formulas; rename the parameter")
        kwonly = [p.name for p in params[1:] if p.kind is inspect.Parameter.KEYWORD_ONLY]
        self.kernel, self.kwonly = forward, tuple(kwonly)  # the forward as written, and its keyword-only names
        if kwonly:  # call_op passes every argument positionally: generate the keyword call once
            npos = len(self.params) - len(kwonly)
            args = [f"a{i}" for i in range(len(self.params))]
            call = ", ".join(args[:npos] + [f"{k}={a}" for k, a in zip(kwonly, args[npos:], strict=True)])
            self.forward = define(f"def forward(xp, {', '.join(args)}):\n    return _forward(xp, {call})\n",
                                  f"{name}.forward", {"_forward": forward}, "forward")
        self.signature = sig.replace(parameters=params[1:])
        index = {p: i for i, p in enumerate(self.params)}
        self.index = index
        self.lists = frozenset(lists)
        self.shown_saves = None  # the saved names a node shows as ``_saved_<name>`` where not all (ops/foreach.py)
        self.saved_lists = frozenset(saved_lists)
        if tensors is None:  # formula inputs, and required parameters, may hold tensors
            tensors = [p.name for p in params[1:] if p.name in formulas or p.default is inspect.Parameter.empty]
        self.tensor_pos = tuple(index[p] for p in tensors)
        self.promote = promote
        self.view = view
        self.multi_output = multi_output
        self.device_pos = None if device_param is None else index[device_param]
        self.nondiff_outputs = frozenset(nondiff_outputs)
        self.formulas = []  # (param index, is_list, fn, [arg names]) in forward parameter order
        for pname in self.params:
            if pname not in formulas:
                continue
            fn = formulas[pname]
            argnames = list(inspect.signature(fn).parameters)
            for a in argnames:
                if a in ("grad", "grads", "result") or a in index:
                    continue
                base, _, suffix = a.rpartition("_")
                if suffix in ("shape", "dtype", "device", "strides") and base in index:
                    continue
                raise TypeError(f"defop({name!r}): formula for {pname!r} asks for unknown name {a!r}")
            self.formulas.append((index[pname], pname in self.lists, fn, argnames))
        unknown = set(formulas) - set(self.params)
        if unknown:
            raise TypeError(f"defop({name!r}): formulas for unknown parameters {sorted(unknown)}")
        self.differentiable = bool(self.formulas)
        # What each formula needs saved: tensor arguments, shapes, other arguments, the result.
        self.saves = [[a for a in argnames if a not in ("grad", "grads")] for _, _, _, argnames in self.formulas]
        self.all_saves = tuple(dict.fromkeys(a for s in self.saves for a in s))
        # A node keeps what it saved in a tuple, one slot per name (a dict per node cost about
        # 200 bytes): the names, then the length of each list parameter ("#<index>").
        self.save_slots = self.all_saves + tuple(f"#{pidx}" for pidx, is_list, _, _ in self.formulas if is_list)
        self.save_index = {name: i for i, name in enumerate(self.save_slots)}
        stem = node_name or _camel(name)
        self.node_cls = _node_class(stem if re.search(r"Backward\d+(_copy)?$|::", stem) else f"{stem}Backward0", self)
        # See Note [Node names per call]: (class, condition, argument positions), first match first.
        self.node_choices = tuple(
            (self.node_cls if full == self.node_cls.__name__ else _node_class(full, self), when,
             tuple(index[a] for a in inspect.signature(when).parameters))
            for full, when in (node_names or {}).items())
        self.node_classes = tuple(dict.fromkeys((self.node_cls,) + tuple(cls for cls, _, _ in self.node_choices)))
        self.inplace_node_cls = None if inplace_node_name is None else _node_class(inplace_node_name, self)
        if self.inplace_node_cls is not None:
            self.node_classes += (self.inplace_node_cls,)
        if self.node_choices:  # the loop of node_class unrolled: it runs for every recorded call
            params = [f"a{i}" for i in range(len(self.params))]
            lines = [f"def node_class({', '.join(params)}):"]
            env = {"_default": self.node_cls}
            for k, (cls, when, pos) in enumerate(self.node_choices):
                env[f"_when{k}"], env[f"_cls{k}"] = when, cls
                lines += [f"    if _when{k}({', '.join(params[i] for i in pos)}):", f"        return _cls{k}"]
            lines.append("    return _default")
            self.node_class = define("\n".join(lines) + "\n", f"{name}.node_class", env, "node_class")
        self.node_edges = None  # {node class: indices in self.formulas of the edges it records}, where not all
        if node_edges:
            by_name = {cls.__name__: cls for cls in self.node_classes}
            formula_params = [self.params[pidx] for pidx, _, _, _ in self.formulas]
            self.node_edges = {}
            for full, inputs in node_edges.items():
                cls = by_name.get(full.rpartition("::")[2])
                if cls is None or set(inputs) - set(formula_params) or self.lists:
                    raise TypeError(f"defop({name!r}): node_edges names a node class of node_names and formula "
                                    f"inputs of an op without tensor lists, not {full!r}: {inputs!r}")
                cls.edge_formulas = tuple(k for k, p in enumerate(formula_params) if p in inputs)
                self.node_edges[cls] = cls.edge_formulas

    def node_class(self, *args):
        """The node class of a call with these arguments (all, positionally). See Note [Node names per call].

        Where the op has ``node_names``, its own generated function of the same arguments replaces this one.
        """
        for cls, when, pos in self.node_choices:
            if when(*[args[i] for i in pos]):
                return cls
        return self.node_cls

    def __call__(self, *args):
        """Runs the op on its arguments, positionally: ``call_op(self, args)`` (a view's history replays so)."""
        return call_op(self, args)

    def __repr__(self):
        return f"<op {self.name}{self.signature}>"


def defop(name, forward, *, method=None, inplace=False, promote=None, view=False, tensor_args=None, lists=(),
          nondiff_outputs=(), node_name=None, node_names=None, node_edges=None, multi_output=False, public=True,
          device_param=None, doc=None, jvp=None, saved_lists=(), inplace_node_name=None, wide=True, **formulas):
    """Declares op ``name``: its forward ``forward(xp, ...)`` and a formula per differentiable input.

    Args:
        name: the public name (``retrograd.<name>``), and the node's name (``<Name>Backward0``).
        node_name: the node's name where PyTorch's differs: a stem (``"ToCopy"``: ``ToCopyBackward0``),
            a full name (``"MaxBackward1"``), or PyTorch's ``ns::Name`` of a hand-written node.
        node_names: ``{name: condition}``, the names a call may give its node instead; see Note
            [Node names per call].
        node_edges: ``{name: inputs}``, the formula inputs whose edges a node class of ``node_names``
            records, where not all (PyTorch's Scalar overloads); see Note [Node names per call].
        inplace_node_name: the full name of the node of an in-place call, where PyTorch's differs.
        wide: a call with a bfloat16 argument computes in float32 and rounds its results once (Note [bfloat16
            arrays] in _dtype.py); False: the forward takes the bfloat16 arrays themselves (a view always does).
        forward: ``forward(xp, <params>)`` on backend arrays; its parameters after ``xp`` define
            the public signature, with PyTorch's names and defaults.
        method: also attach as ``Tensor.<method>`` (True: same name).
        inplace: the op has an in-place form, ``Tensor.<name>_`` (its result written into self),
            which _methods.py attaches once every op exists.
        promote: None; ``"binary"`` (PyTorch's type promotion over the arguments); or
            ``"float"`` (promotion, then integers become the default float dtype).
        view: the outputs share memory with the first argument (views share its version counter).
        tensor_args: names of parameters that may hold tensors (default: formula inputs and
            required parameters).
        lists: parameters holding sequences of tensors (their formula returns a list).
        saved_lists: parameters without formulas holding a sequence, as given to the forward, whose
            tensors the node saves as saved tensors (released with the graph): a list for the formulas.
        nondiff_outputs: output indices that never require grad. A single-output op whose output is one
            records nothing out of place; its in-place form records where the target is floating.
        multi_output: the forward returns a tuple of arrays.
        device_param: a parameter naming the device the forward moved its result to.
        public: export from ``retrograd``.
        doc: the public function's docstring (default: the forward's, else its signature).
        jvp: the forward derivative: ``LINEAR``, ``FROM_BACKWARD`` or a function; see Note [Forward
            derivatives] (``defjvp`` declares one on a line of its own).
        **formulas: ``input=lambda grad, other: ...``, see the module docstring.

    Returns:
        The public function.
    """
    op = OpInfo(name, forward, formulas, promote=promote, view=view, tensors=tensor_args, lists=lists,
                nondiff_outputs=nondiff_outputs, node_name=node_name, multi_output=multi_output,
                device_param=device_param, node_names=node_names, node_edges=node_edges, saved_lists=saved_lists,
                inplace_node_name=inplace_node_name, wide=wide)
    op.index_lists = frozenset(op.index[p] for p in lists)
    op.jvp = op.jvp_names = None
    if jvp is not None:
        _set_jvp(op, jvp)
    REGISTRY[name] = op
    fast_apply = build_fast_apply(op) if op.differentiable else None
    if fast_apply is not None:
        for cls in op.node_classes:
            cls.apply = fast_apply
    for cls, keep in (op.node_edges or {}).items():  # See Note [Node names per call]
        cls.apply = build_fast_apply(op, keep)
        if cls.apply is None:
            raise TypeError(f"defop({name!r}): node_edges needs an op of one output whose formulas take one gradient")
    fn = make_public(op)
    if doc is not None:
        fn.__doc__ = doc
    op.function = fn
    if method:
        setattr(Tensor, name if method is True else method, fn)
    op.inplace = bool(inplace)
    op.public = public
    return fn


def _set_jvp(op, rule):
    if rule is REDUCED_FROM_BACKWARD and (op.multi_output or len(op.formulas) != 1):
        raise TypeError(f"defop({op.name!r}): REDUCED_FROM_BACKWARD needs one output and one differentiable input")
    if rule not in (LINEAR, FROM_BACKWARD, MULTILINEAR, REDUCED_FROM_BACKWARD):
        op.jvp_names = check_jvp_names(op, rule)
    elif rule is FROM_BACKWARD and (op.multi_output or op.lists or any(
            "grads" in argnames for *_, argnames in op.formulas)):
        raise TypeError(f"defop({op.name!r}): FROM_BACKWARD needs one output and one gradient")
    op.jvp = rule


def defjvp(rule, *names):
    """Declares ``rule`` the forward derivative of each op of ``names`` (see Note [Forward derivatives])."""
    for name in names:
        _set_jvp(REGISTRY[name], rule)


def tensor_method(fn=None, *, name=None):
    """Declares a function written in Python (not by defop) as also the Tensor method ``name`` (default: its own)."""
    def attach(f):
        setattr(Tensor, name or f.__name__, f)
        return f
    return attach if fn is None else attach(fn)


# -- the constructors of Note [Declared shortcuts] ------------------------------------------------
def ufunc(name, *params):
    """The forward ``forward(xp, *params)`` that returns ``getattr(xp, name)(*params)``.

    Its parameter names are the op's public ones. Declared ``same_as_ufunc``: the C op call calls
    the NumPy ufunc itself while ``op.forward`` is this function.
    """
    _check_identifiers(name, *params)
    args = ", ".join(params)
    fn = define(f"def {name}(xp, {args}):\n    return xp.{name}({args})\n", f"ufunc.{name}", {}, name)
    fn.same_as_ufunc = (name, len(params), ())
    fn.expression = f"xp.{name}({args})"
    return fn


def passthrough(grad):
    """The formula of an input whose gradient is the output's own (``input`` of ``add``)."""
    return grad


passthrough.same_as_op = (None, 1, ())
passthrough.expression = "grad"


class _LateOp:
    """Stands in for op ``name``'s public function in a generated formula until its first call,
    which binds the function itself in the formula's namespace (ops may be declared in any order)."""

    def __init__(self, env, key, name):
        self.env, self.key, self.name = env, key, name

    def __call__(self, *args):
        fn = self.env[self.key] = REGISTRY[self.name].function
        return fn(*args)


def op_call(name, *params):
    """The formula ``lambda <params>: <op name>(*params)``: op ``name``'s public function on its arguments.

    Declared ``same_as_op``: the compiled loop calls that op's C call without this function's frame.
    """
    _check_identifiers(name, *params)
    args = ", ".join(params)
    env = {}
    env["_op"] = _LateOp(env, "_op", name)
    fn = define(f"def {name}_formula({args}):\n    return _op({args})\n", f"formula.{name}.{'_'.join(params)}", env,
                f"{name}_formula")
    fn.same_as_op = (name, len(params), ())
    fn.expression = f"_op({args})"
    return fn


def shortcut(general, when, then):
    """``then`` where every named condition of ``when`` holds, else ``general``, with ``general``'s signature.

    ``then`` is a ``ufunc``, ``passthrough`` or ``op_call`` whose parameters are the first ones of
    ``general``'s (after ``xp`` for a forward); ``when`` maps parameters of ``general`` to the
    value they must have (compared with ``is`` for None, True and False, else with ``==``). The
    result carries ``then``'s declaration, with the conditions' positions.
    """
    params = list(inspect.signature(general).parameters.values())
    is_forward = bool(params) and params[0].name == "xp"
    names = [p.name for p in params[1:]] if is_forward else [p.name for p in params]
    kind, declared = ("same_as_ufunc", then.same_as_ufunc) if is_forward else ("same_as_op", then.same_as_op)
    callee, nargs, then_when = declared
    then_params = list(inspect.signature(then).parameters)[1 if is_forward else 0:]
    if then_when or then_params != names[:nargs]:
        raise TypeError(f"shortcut(): {then.__name__} must take the first {nargs} parameters of {general.__name__}")
    unknown = set(when) - set(names)
    if unknown:
        raise TypeError(f"shortcut(): {general.__name__} has no parameters {sorted(unknown)}")
    env = {"_general": general}
    if callee is not None and not is_forward:
        env["_op"] = _LateOp(env, "_op", callee)  # then.expression calls _op
    text, call = parameter_source(params, env)
    tests = []
    for pname, value in when.items():
        if value is None or value is True or value is False:
            tests.append(f"{pname} is {value!r}")
        else:
            env[f"_w_{pname}"] = value
            tests.append(f"{pname} == _w_{pname}")
    fname = f"{general.__name__}_shortcut" if general.__name__.isidentifier() else "shortcut"
    src = (f"def {fname}({text}):\n"
           f"    if {' and '.join(tests)}:\n"
           f"        return {then.expression}\n"
           f"    return _general({call})\n")
    fn = define(src, f"shortcut.{callee}.{'_'.join(when)}", env, fname)
    fn.__doc__ = general.__doc__
    setattr(fn, kind, (callee, nargs, tuple((names.index(p), v) for p, v in when.items())))
    return fn


def _check_identifiers(*names):
    if not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise ValueError(f"names must be identifiers: {names!r}")
