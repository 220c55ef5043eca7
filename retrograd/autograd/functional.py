"""Higher-level derivatives of a function: vjp, jvp, jacobian, hessian, vhp and hvp.

Each takes a function of tensors and the point to differentiate at, and returns its results in
the shape of its arguments: a Tensor where a Tensor was given, a tuple where a tuple was given,
as ``torch.autograd.functional`` does.

Note [Double backward trick]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
As PyTorch's ``jvp`` and ``hvp``, a Jacobian-vector product ``J v`` is computed with two
reverse passes. With ``u`` a dummy cotangent that requires grad, ``g(u) = J^T u`` is linear in
``u``; differentiating ``g`` with respect to ``u`` in direction ``v`` gives ``(J^T)^T v = J v``.
The first pass must record its graph (``create_graph=True``) so the second can run through it.
``jvp`` and ``hvp`` use it; the forward-mode ``jacobian`` runs on forward-mode AD
(``forward_columns``).
"""
from __future__ import annotations

from .._creation import eye, zeros, zeros_like
from .._tensor import Tensor
from ..ops.joining import stack
from ._api import grad as _grad
from . import forward_ad as _fwad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# -- argument handling -------------------------------------------------------------------------------
def _as_tuple(inp, arg_name, fn_name):
    """``(was_tuple, tuple_of_tensors)``, with PyTorch's TypeError for anything else."""
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"the value at index {i} has" if is_tuple else f"the given {arg_name} has"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} type {type(el)}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Unwraps ``res`` where the user passed a bare Tensor (one flag, or (outer, inner) flags)."""
    if isinstance(to_unpack, tuple):
        outer, inner = to_unpack
        if not inner:
            res = tuple(el[0] for el in res)
        if not outer:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh tensors to differentiate at: views keeping the user's graph when ``create_graph``,
    detached leaves otherwise (so the user's graph is neither used nor extended)."""
    out = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            out.append(inp.view_as(inp))
        else:
            out.append(inp.detach().requires_grad_(need_graph))
    return tuple(out)


def _grad_postprocess(results, create_graph):
    """Detaches (nested tuples of) results unless the caller asked for a graph."""
    if len(results) and isinstance(results[0], Tensor):
        return results if create_graph else tuple(r.detach() for r in results)
    return tuple(_grad_postprocess(r, create_graph) for r in results)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if el_v.size() != el_other.size():
            prefix = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_STRICT_MESSAGES = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of the input. "
                "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
                "and that the hessian depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                 "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                 "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                 "would be violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the user-provided "
                    "function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must be "
                "computed in a differentiable manner from the input when running in strict mode."),
}


def _check_requires_grad(tensors, input_type, strict):
    """In strict mode, refuses results that do not depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:  # a gradient the outputs do not reach, whatever was checked (as PyTorch)
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT_MESSAGES[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad; None for inputs they do not reach."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs, strict=True) if out is not None and out.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs), allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph)


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian."
                         " This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Replaces None gradients by zeros shaped like ``refs`` (an error in strict mode)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _preprocess_v(v, reference, is_reference_tuple, fn_name, create_graph, none_message):
    if v is None:
        if len(reference) != 1 or reference[0].numel() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, reference, is_reference_tuple)
    return v


_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a single Tensor with a "
                  "single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a single Tensor "
                 "with a single element.")


# -- the steps the public functions share ----------------------------------------------------------
def _prepare_inputs(inputs, create_graph, fn_name):
    """``(was_tuple, inputs)``: the user's inputs, checked, as fresh tensors to differentiate at."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    return is_inputs_tuple, _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)


def _call_func(func, inputs, strict, fn_name):
    """``(was_tuple, outputs)`` of ``func(*inputs)``, checked to be Tensors (that require grad, if strict)."""
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return is_outputs_tuple, outputs


def _call_scalar_func(func, inputs, strict, fn_name):
    """``_call_func`` for hessian, vhp and hvp: ``func`` must return one one-element Tensor, given
    back as a 1-tuple."""
    is_outputs_tuple, outputs = _call_func(func, inputs, strict, fn_name)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outputs


def _dummy_vjp(outputs, inputs, like):
    """The first pass of the double backward trick (see Note [Double backward trick]): dummy
    cotangents ``u`` (zeros shaped like ``like``, requiring grad) and ``J^T u``, its graph recorded."""
    dummies = tuple(zeros_like(t, requires_grad=True) for t in like)
    return dummies, _autograd_grad(outputs, inputs, dummies, create_graph=True)


def _last_pass(outputs, wrt, v, refs, strict, create_graph, stage):
    """The backward pass that gives vjp, jvp, vhp and hvp their product: ``outputs`` differentiated
    with respect to ``wrt`` in direction ``v``, a graph recorded only when one is wanted, and zeros
    shaped like ``refs`` (an error if strict) where they do not depend on ``wrt``."""
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grad_res = _autograd_grad(outputs, wrt, v, create_graph=create_graph)
        return _fill_in_zeros(grad_res, refs, strict, create_graph, stage)


def _pack(outputs, is_outputs_tuple, result, is_result_tuple, create_graph):
    """``(func_output, product)``, each a Tensor or a tuple as the user gave it, detached unless
    ``create_graph``."""
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_result_tuple))


# -- the public functions --------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``, as ``torch.autograd.functional.vjp``.

    Args:
        func (callable): takes the input tensors, returns a Tensor or a tuple of Tensors.
        inputs (Tensor or tuple of Tensor): the point to differentiate at.
        v (Tensor or tuple of Tensor, optional): shaped like the outputs; may be None for a
            single one-element output.
        create_graph (bool): make the results differentiable.
        strict (bool): raise instead of returning zeros for an input the outputs do not depend on.

    Returns:
        tuple: ``(func_output, vjp)``, ``vjp`` shaped like ``inputs``.

    Raises:
        RuntimeError: ``v`` is missing or mis-shaped, or (strict) an output or input is independent.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.autograd.functional import vjp
        >>> vjp(lambda x: x ** 2, rg.tensor([1., 2.]), rg.tensor([1., 1.]))[1]
        tensor([2., 4.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _prepare_inputs(inputs, create_graph, "vjp")
        is_outputs_tuple, outputs = _call_func(func, inputs, strict, "vjp")
        v = _preprocess_v(v, outputs, is_outputs_tuple, "vjp", create_graph, _V_NONE_OUTPUT)
    result = _last_pass(outputs, inputs, v, inputs, strict, create_graph, "back")
    return _pack(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs``, as ``torch.autograd.functional.jvp``.

    Computed with two reverse passes; see Note [Double backward trick].

    Args:
        func (callable): takes the input tensors, returns a Tensor or a tuple of Tensors.
        inputs (Tensor or tuple of Tensor): the point to differentiate at.
        v (Tensor or tuple of Tensor, optional): shaped like the inputs; may be None for a single
            one-element input.
        create_graph (bool): make the results differentiable.
        strict (bool): raise instead of returning zeros for an independent output.

    Returns:
        tuple: ``(func_output, jvp)``, ``jvp`` shaped like the outputs.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.autograd.functional import jvp
        >>> jvp(lambda x: x ** 2, rg.tensor([1., 2.]), rg.tensor([1., 0.]))[1]
        tensor([2., 0.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _prepare_inputs(inputs, create_graph, "jvp")
        v = _preprocess_v(v, inputs, is_inputs_tuple, "jvp", create_graph, _V_NONE_INPUT)
        is_outputs_tuple, outputs = _call_func(func, inputs, strict, "jvp")
        # See Note [Double backward trick]
        grad_outputs, grad_inputs = _dummy_vjp(outputs, inputs, like=outputs)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    result = _last_pass(grad_inputs, grad_outputs, v, outputs, strict, create_graph, "back_trick")
    return _pack(outputs, is_outputs_tuple, result, is_outputs_tuple, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``, as ``torch.autograd.functional.jacobian``.

    Entry ``[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``; a bare Tensor input or
    output drops its level of tuple.

    Args:
        func (callable): takes the input tensors, returns a Tensor or a tuple of Tensors.
        inputs (Tensor or tuple of Tensor): the point to differentiate at.
        create_graph (bool): make the Jacobian differentiable.
        strict (bool): raise instead of returning zeros for an output independent of an input.
        vectorize (bool): in reverse mode, compute all the rows of an output in one backward pass
            batched over the basis vectors (``autograd.grad(is_grads_batched=True)``, which runs on
            ``retrograd.func.vmap``) instead of one pass per row; in forward mode, all the columns of
            an input in one forward pass with its basis tangents batched (Note [Batched tangents]);
            the numbers are the same.
        strategy (str): ``"reverse-mode"`` (one backward pass per output element) or
            ``"forward-mode"`` (one forward-mode AD pass per input element, see
            ``autograd.forward_ad``), cheaper when there are more outputs than inputs.

    Returns:
        Tensor, or tuple (of tuples) of Tensor.

    Raises:
        ValueError: an unknown ``strategy``.
        NotImplementedError: ``strategy="forward-mode"`` with ``create_graph=True``, as in PyTorch.
        RuntimeError: ``strict=True`` with ``vectorize=True`` or ``strategy="forward-mode"``, as in PyTorch.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.autograd.functional import jacobian
        >>> jacobian(lambda x: x ** 2, rg.tensor([1., 2.]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has '
                         'more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to '
                         'use "reverse-mode".')
    if strategy == "forward-mode" and create_graph:
        raise NotImplementedError('retrograd.autograd.functional.jacobian: `create_graph=True` and '
                                  '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                  '`create_graph=False` or `strategy="reverse-mode"`.')
    if strategy == "forward-mode" and strict:
        raise RuntimeError('retrograd.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
                           'not supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    with enable_grad():
        is_inputs_tuple, inputs = _prepare_inputs(inputs, create_graph, "jacobian")
        is_outputs_tuple, outputs = _call_func(func, inputs, strict, "jacobian")
        if vectorize and strict:  # PyTorch refuses it once the outputs are checked
            raise RuntimeError("retrograd.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        if strategy == "reverse-mode" and vectorize:
            result = _jacobian_rows_batched(outputs, inputs, create_graph)
        elif strategy == "reverse-mode":
            result = _jacobian_rows(outputs, inputs, create_graph, strict)
        else:
            result = _jacobian_columns(func, outputs, inputs, vectorize)
    return _tuple_postprocess(_grad_postprocess(result, create_graph), (is_outputs_tuple, is_inputs_tuple))


def _jacobian_rows(outputs, inputs, create_graph, strict):
    """Reverse mode: row ``k`` of ``d out_i / d inputs`` is the gradient of ``out_i.flatten()[k]``."""
    result = []
    for i, out in enumerate(outputs):
        rows = [[] for _ in inputs]
        flat = out.reshape(-1)
        for k in range(out.numel()):
            grads = _autograd_grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
            for j, (g, inp) in enumerate(zip(grads, inputs, strict=True)):
                if g is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. "
                                           "This is not allowed in strict mode.")
                    g = zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {j}. "
                                       "This is not allowed in strict mode when create_graph=True.")
                rows[j].append(g)
        result.append(tuple(
            stack(r, 0).reshape(tuple(out.shape) + tuple(inp.shape)) if r else
            zeros(tuple(out.shape) + tuple(inp.shape), dtype=inp.dtype, device=inp.device)
            for r, inp in zip(rows, inputs, strict=True)))
    return tuple(result)


def _jacobian_rows_batched(outputs, inputs, create_graph):
    """Reverse mode, vectorized: every row of ``d out_i / d inputs`` from one backward pass batched over the basis."""
    result = []
    for out in outputs:
        n = out.numel()
        shapes = [tuple(out.shape) + tuple(inp.shape) for inp in inputs]
        if n == 0 or not out.requires_grad:
            result.append(tuple(zeros(s, dtype=inp.dtype, device=inp.device) for s, inp in zip(shapes, inputs)))
            continue
        basis = eye(n, dtype=out.dtype, device=out.device).reshape((n,) + tuple(out.shape))
        grads = _grad((out,), inputs, (basis,), retain_graph=True, create_graph=create_graph, allow_unused=True,
                      is_grads_batched=True)
        result.append(tuple(zeros(s, dtype=inp.dtype, device=inp.device) if g is None else g.reshape(s)
                            for g, s, inp in zip(grads, shapes, inputs, strict=True)))
    return tuple(result)


def basis_directions(inputs, j):
    """One tangent tuple per element of ``inputs[j]``: that element's basis vector, zeros for the other inputs."""
    inp = inputs[j]
    directions = []
    for k in range(inp.numel()):
        e_k = zeros(inp.numel(), dtype=inp.dtype, device=inp.device)
        e_k[k] = 1
        directions.append(tuple(e_k.reshape(inp.shape) if m == j else zeros_like(x) for m, x in enumerate(inputs)))
    return directions


batched_jvp = None  # forward_columns' batched pass, attached by retrograd.func (Note [Batched tangents])


def forward_columns(func, inputs, j, vectorize=False, randomness="error", check=None):
    """``func``'s outputs at ``inputs`` and its Jacobian-vector products along each basis direction of
    ``inputs[j]``, by forward-mode AD.

    Returns ``(outputs, columns)``: the outputs as a tuple and, per output, its tangents stacked,
    of shape ``(inputs[j].numel(),) + output.shape`` (zeros where it has none). With
    ``vectorize``, one forward pass with the basis tangents batched (Note [Batched tangents]);
    else, or where they cannot be batched, one pass per direction. ``check(outputs)`` may refuse
    the outputs of each pass.
    """
    if vectorize and batched_jvp is not None:
        done = batched_jvp(func, inputs, j, randomness, check)
        if done is not None:
            return done
    outs = None
    columns = []
    for tangents in basis_directions(inputs, j):
        with _fwad.dual_level():
            duals = tuple(_fwad.make_dual(x, t) for x, t in zip(inputs, tangents, strict=True))
            outs = func(*duals)
            outs = outs if isinstance(outs, tuple) else (outs,)
            if check is not None:
                check(outs)
            columns.append(tuple(_fwad.unpack_dual(o).tangent for o in outs))
    if outs is None:  # an empty input: no direction; the outputs' shapes from one call
        outs = func(*inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        if check is not None:
            check(outs)
    stacked = [stack([zeros_like(o) if c[i] is None else c[i] for c in columns], 0) if columns else
               zeros((0,) + tuple(o.shape), dtype=o.dtype, device=o.device) for i, o in enumerate(outs)]
    return outs, stacked


def _jacobian_columns(func, outputs, inputs, vectorize):
    """Forward mode: column ``k`` of ``d outputs / d in_j`` is ``J e_k`` (``forward_columns``)."""
    result = [[] for _ in outputs]
    for j, inp in enumerate(inputs):
        _, cols = forward_columns(func, inputs, j, vectorize)
        for i, (out, col) in enumerate(zip(outputs, cols, strict=True)):
            result[i].append(col.detach().movedim(0, -1).reshape(tuple(out.shape) + tuple(inp.shape)))
    return tuple(tuple(r) for r in result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function, as ``torch.autograd.functional.hessian``.

    Entry ``[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``.

    Args:
        func (callable): takes the input tensors, returns a one-element Tensor.
        inputs (Tensor or tuple of Tensor): the point to differentiate at.
        create_graph (bool): make the Hessian differentiable.
        strict (bool): raise instead of returning zeros where the Hessian is independent of an input.
        vectorize (bool): batch the outer Jacobian's basis vectors (see ``jacobian``).
        outer_jacobian_strategy (str): the ``strategy`` of the outer ``jacobian``.

    Returns:
        Tensor, or tuple of tuples of Tensor.

    Raises:
        RuntimeError: ``func`` does not return a single one-element Tensor.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.autograd.functional import hessian
        >>> hessian(lambda x: (x ** 3).sum(), rg.tensor([1., 2.]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        return _call_scalar_func(func, inp, strict, "hessian")[0].squeeze()

    def jac_func(*inp):
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_grad(func, inputs, v, create_graph, strict, fn_name):
    """Shared start of vhp/hvp: preprocessed inputs and v, the output, and its gradient with a graph."""
    is_inputs_tuple, inputs = _prepare_inputs(inputs, create_graph, fn_name)
    v = _preprocess_v(v, inputs, is_inputs_tuple, fn_name, create_graph, _V_NONE_INPUT)
    outputs = _call_scalar_func(func, inputs, strict, fn_name)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Hessian product ``v^T H`` of a scalar function, as ``torch.autograd.functional.vhp``.

    Args:
        func (callable): takes the input tensors, returns a one-element Tensor.
        inputs (Tensor or tuple of Tensor): the point to differentiate at.
        v (Tensor or tuple of Tensor, optional): shaped like the inputs; may be None for a
            single one-element input.
        create_graph (bool): make the results differentiable.
        strict (bool): raise instead of returning zeros where the Hessian is independent of an input.

    Returns:
        tuple: ``(func_output, vhp)``, ``vhp`` shaped like ``inputs``.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.autograd.functional import vhp
        >>> vhp(lambda x: (x ** 3).sum(), rg.tensor([1., 2.]), rg.tensor([1., 1.]))[1]
        tensor([ 6., 12.])
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _scalar_function_grad(func, inputs, v, create_graph, strict, "vhp")
    result = _last_pass(jac, inputs, v, inputs, strict, create_graph, "double_back")
    return _pack(outputs, False, result, is_inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Hessian-vector product ``H v`` of a scalar function, as ``torch.autograd.functional.hvp``.

    Equal to ``vhp`` for twice continuously differentiable functions (the Hessian is then
    symmetric); computed with the double backward trick, see Note [Double backward trick].

    Args:
        func (callable): takes the input tensors, returns a one-element Tensor.
        inputs (Tensor or tuple of Tensor): the point to differentiate at.
        v (Tensor or tuple of Tensor, optional): shaped like the inputs; may be None for a
            single one-element input.
        create_graph (bool): make the results differentiable.
        strict (bool): raise instead of returning zeros where the Hessian is independent of an input.

    Returns:
        tuple: ``(func_output, hvp)``, ``hvp`` shaped like ``inputs``.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.autograd.functional import hvp
        >>> hvp(lambda x: (x ** 3).sum(), rg.tensor([1., 2.]), rg.tensor([1., 0.]))[1]
        tensor([6., 0.])
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _scalar_function_grad(func, inputs, v, create_graph, strict, "hvp")
        # See Note [Double backward trick]; the dummies are shaped like the inputs because an entry
        # of jac may be None.
        grad_jac, double_back = _dummy_vjp(jac, inputs, like=inputs)
        _check_requires_grad(jac, "hessian", strict)
    result = _last_pass(double_back, grad_jac, v, inputs, strict, create_graph, "double_back_trick")
    return _pack(outputs, False, result, is_inputs_tuple, create_graph)
