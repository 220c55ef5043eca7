"""``grad``, ``grad_and_value``, ``vjp`` and ``jacrev``: reverse-mode transforms on the autograd engine.

Note [Differentiating under vmap]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A transform marks its inputs for differentiation on their physical tensors (Note [Batched
tensors]), each first lifted to the batch of every active vmap level (an unbatched one is
broadcast): the leaf is batched as the function's result will be, so one backward pass on the
physical tensors gives each sample's gradient apart. ``vmap(grad(f), in_dims=(None, 0))(params,
x)`` so gives per-sample gradients of the unbatched ``params``. The graph is recorded (for another
transform outside) where grad mode is on and a transform is already running or an input requires
grad. A ``vjp_fn`` called with cotangents batched at a vmap level newer than its ``vjp`` (vmap of
a vjp, as ``jacrev`` does) runs the function again with its primals lifted to the new level: the
engine's passes are never batched themselves.

Note [Reverse transforms of dual tensors]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Under ``jvp`` (a dual level), a reverse transform whose inputs carry tangents records its pass
and differentiates it with ``create_graph``, so that forward mode sees the backward's ops and the
gradient gets its tangent (``jvp(grad(f))``, ``jacfwd(jacrev(f))``). Where nothing else wants that
graph (no transform outside, no input requiring grad), ``grad``'s results are detached, keeping
their tangents, detached too: the caller gets plain tensors, as torch.func's; so do ``vjp``'s
outputs and its ``vjp_fn``'s gradients. Under vmap the tangents live on the physical tensors the
pass runs on, batched or not, wherever the dual level was entered (Note [The order of transform
levels]), so ``vmap(jvp(grad(f)))``, ``jvp(vmap(grad(f)))`` and ``vmap(hessian(f))`` compose.
"""
from __future__ import annotations

import functools
import threading

from .._creation import eye, ones_like, zeros_like
from .._tensor import Tensor
from ..autograd import forward_ad as _fwad
from ..autograd._api import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..ops import _call
from ..ops._forward import current_level, tangent_of
from ._batched import BatchedTensor, from_full_physical, primal_levels, to_full_physical
from ._pytree import tree_flatten, tree_unflatten
from ._vmap import _VmapInterposer, vmap

__all__ = ["grad", "grad_and_value", "vjp", "jacrev"]


class _Depth(threading.local):
    n = 0


_depth = _Depth()  # how many transforms are running on this thread (their graphs are recorded)


def _check_argnums(argnums, nargs):
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        items = (argnums,)
    elif isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if not all(isinstance(a, int) and not isinstance(a, bool) for a in argnums):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {argnums}")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        items = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for a in items:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
    return tuple(a % nargs for a in items)


def _check_tensors(leaves):
    for t in leaves:
        if not isinstance(t, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")


def _has_tangent(t) -> bool:
    """Whether ``t`` is a dual tensor of the active forward-mode level (jacfwd over a reverse transform)."""
    level = current_level()
    return level is not None and tangent_of(t, level) is not None


def _wants_graph(leaves) -> bool:
    """Whether the transform must build a graph of its own pass: under another transform, or for a
    caller differentiating through it, backward (inputs that require grad) or forward (dual inputs)."""
    return is_grad_enabled() and (_depth.n > 0 or any(t.requires_grad or _has_tangent(t) for t in leaves))


def _mark(t, active, graph):
    """The differentiation leaf of tensor ``t`` (its full physical tensor) and what the function sees of it.

    A tensor that requires grad, or has a tangent, is marked through a view, which keeps its history
    and its tangent; any other is detached."""
    full = to_full_physical(t, active)  # its tangent with it: See Note [The order of transform levels]
    if graph and (full.requires_grad or _has_tangent(full)):
        leaf = full.view_as(full)
        if not leaf.requires_grad:
            leaf.requires_grad_()
    else:
        leaf = full.detach().requires_grad_()
    return leaf, from_full_physical(leaf, active)


def _detach_dual(t):
    """``t`` detached from every graph, with its tangent at the current level (if any) detached too."""
    level = current_level()
    tangent = None if level is None else tangent_of(t, level)
    if tangent is None:
        return t.detach()
    return _fwad.make_dual(t.detach(), tangent.detach())


def _private(graph, flat) -> bool:
    """Whether the graph of a transform's pass is its own: built (for forward mode) with no transform running
    outside and none of the tensors ``flat`` requiring grad. See Note [Reverse transforms of dual tensors]."""
    return graph and _depth.n == 0 and not any(isinstance(t, Tensor) and t.requires_grad for t in flat)


def _detach_dual_tree(tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_detach_dual(t) if isinstance(t, Tensor) else t for t in leaves], spec)


def _detach_tree(tree, graph):
    if graph:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([t.detach() if isinstance(t, Tensor) else t for t in leaves], spec)


class _past_vmap:
    """``with _past_vmap():`` this thread's op calls skip the outermost run of vmap levels' interposers.

    The graph a transform differentiates holds physical tensors only (Note [Batched tensors]), so
    its backward pass has nothing for those vmap levels to batch; the interposers inside them
    still see its calls: a profiler's, and forward-mode AD's, whose tangents may be batched at a
    tangents-only level inside it (Note [Batched tangents]).
    """

    def __enter__(self):
        stack = _call.interposition.stack
        first = len(stack)
        while first and isinstance(stack[first - 1], _VmapInterposer):
            first -= 1
        self.saved = getattr(_call._local, "depth", None)
        if first < len(stack):
            _call._local.depth = first if self.saved is None else min(self.saved, first)

    def __exit__(self, *exc):
        _call._local.depth = self.saved
        return False


def _backward(outs, leaves, cotangents, graph, retain):
    """The gradients of the physical ``outs`` (with ``cotangents``) for each physical leaf; zeros where unused."""
    pairs = [(o, c) for o, c in zip(outs, cotangents, strict=True) if o.requires_grad]
    if not pairs:
        return [zeros_like(leaf) for leaf in leaves]
    with enable_grad(), _past_vmap():
        grads = _autograd_grad([o for o, _ in pairs], leaves, [c for _, c in pairs], retain_graph=retain,
                               create_graph=graph, allow_unused=True)
    return [zeros_like(leaf) if g is None else g for g, leaf in zip(grads, leaves, strict=True)]


def _call_marked(func, args, kwargs, argnums, active, graph):
    """Runs ``func`` with the arguments ``argnums`` marked; returns the output, the leaves and the arguments' specs."""
    args = list(args)
    all_leaves = []
    specs = []
    for a in argnums:
        flat, spec = tree_flatten(args[a])
        _check_tensors(flat)
        marked = [_mark(t, active, graph) for t in flat]
        all_leaves.extend(leaf for leaf, _ in marked)
        specs.append((spec, len(flat)))
        args[a] = tree_unflatten([w for _, w in marked], spec)
    _depth.n += 1
    try:
        with enable_grad():
            out = func(*args, **kwargs)
    finally:
        _depth.n -= 1
    return out, all_leaves, specs


def _regroup(flat_grads, specs, single):
    """The gradients as the pytrees of the differentiated arguments (one, or a tuple of them)."""
    trees = []
    k = 0
    for spec, n in specs:
        trees.append(tree_unflatten(flat_grads[k:k + n], spec))
        k += n
    return trees[0] if single else tuple(trees)


def grad_and_value(func, argnums=0, has_aux=False):
    """Returns a function computing the gradient of ``func`` (a scalar) and its value, as ``torch.func``.

    Args:
        func: a function of tensors returning a 0-d tensor (and an auxiliary output with ``has_aux``).
        argnums (int or tuple of int): the positional arguments to differentiate (each a pytree of tensors).
        has_aux (bool): ``func`` returns ``(output, aux)``; aux is returned as is.

    Returns:
        A function returning ``(gradients, value)`` (``(gradients, (value, aux))`` with ``has_aux``).

    Raises:
        RuntimeError: bad ``argnums``, or ``func`` returning a non-scalar or a non-tensor.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import grad_and_value
        >>> grad_and_value(lambda x: (x ** 2).sum())(rg.tensor([1., 2.]))
        (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        active = primal_levels()
        flat_in = [t for a in nums for t in tree_flatten(args[a])[0]]
        _check_tensors(flat_in)
        graph = _wants_graph(flat_in)
        # See Note [Reverse transforms of dual tensors]
        private = _private(graph, flat_in)
        out, leaves, specs = _call_marked(func, args, kwargs, nums, active, graph)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            out, aux = out
        if not isinstance(out, Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        po = to_full_physical(out, active)
        grads = _backward([po], leaves, [ones_like(po)], graph, graph)
        if private:
            grads = [_detach_dual(g) for g in grads]
            out = _detach_dual(out)
        grads = _regroup([from_full_physical(g, active) for g in grads], specs, isinstance(argnums, int))
        value = _detach_tree(out, graph)
        if has_aux:
            return grads, (value, _detach_dual_tree(aux) if private else _detach_tree(aux, graph))
        return grads, value

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """Returns a function computing the gradient of ``func`` (a scalar) with respect to ``argnums``, as ``torch.func``.

    Composes with ``vmap`` (per-sample gradients: Note [Differentiating under vmap]) and with itself.

    Args:
        func: a function of tensors returning a 0-d tensor (and an auxiliary output with ``has_aux``).
        argnums (int or tuple of int): the positional arguments to differentiate (each a pytree of tensors).
        has_aux (bool): ``func`` returns ``(output, aux)``; the gradient function then returns ``(grads, aux)``.

    Returns:
        The gradient function: the gradients shaped as the arguments (a tuple for a tuple ``argnums``).

    Raises:
        RuntimeError: bad ``argnums``, or ``func`` returning a non-scalar or a non-tensor.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import grad
        >>> grad(lambda x: (x ** 3).sum())(rg.tensor([1., 2.]))
        tensor([ 3., 12.])
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = gv(*args, **kwargs)
        if has_aux:
            return grads, value[1]
        return grads

    return wrapper


def _vjp_outputs(out, has_aux):
    """``(output, aux, flat output, its spec)`` of a function under vjp or jacrev, with torch.func's checks."""
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) if has_aux "
                               "is True")
        out, aux = out
    flat_out, out_spec = tree_flatten(out)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(o)}")
    return out, aux, flat_out, out_spec


def vjp(func, *primals, has_aux=False):
    """Runs ``func`` on ``primals``; returns its output and a function of cotangents giving the vjp, as ``torch.func``.

    Args:
        func: a function of tensors (pytrees of them) returning a pytree of tensors.
        *primals: the inputs.
        has_aux (bool): ``func`` returns ``(output, aux)``; aux is returned third.

    Returns:
        ``(output, vjp_fn)`` (``(output, vjp_fn, aux)``): ``vjp_fn(cotangents)``, with cotangents
        shaped as the output, returns a tuple with one gradient per primal.

    Raises:
        RuntimeError: ``func`` returning something else than tensors, or cotangents of another structure.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import vjp
        >>> out, vjp_fn = vjp(lambda x: x * 3, rg.tensor([1., 2.]))
        >>> vjp_fn(rg.tensor([1., 10.]))
        (tensor([ 3., 30.]),)
    """
    flat_in, in_spec = tree_flatten(primals)
    _check_tensors(flat_in)
    active = primal_levels()
    graph = _wants_graph(flat_in)
    private = _private(graph, flat_in)
    out, leaves, specs = _call_marked(func, primals, {}, tuple(range(len(primals))), active, graph)
    out, aux, flat_out, out_spec = _vjp_outputs(out, has_aux)
    outs = [to_full_physical(o, active) for o in flat_out]
    shapes = [tuple(o.shape) for o in flat_out]

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {ct_spec}, primal output: {out_spec}")
        _check_tensors(flat_ct)
        for i, (c, s) in enumerate(zip(flat_ct, shapes, strict=True)):
            if tuple(c.shape) != s:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and output[{i}] "
                                   f"has a shape of {flat_out[i].shape}.")
        if any(_newer_levels(c, active) for c in flat_ct):  # See Note [Differentiating under vmap]
            return _vjp_again(func, primals, has_aux, cotangents)
        cts = [to_full_physical(c, active) for c in flat_ct]
        g = graph if create_graph is None else create_graph
        grads = _backward(outs, leaves, cts, g or _depth.n > 0 and is_grad_enabled(), retain_graph)
        if private and _private(graph, flat_ct):  # See Note [Reverse transforms of dual tensors]
            grads = [_detach_dual(x) for x in grads]
        return tree_unflatten([from_full_physical(x, active) for x in grads], in_spec)

    if private:
        return (_detach_dual_tree(out), vjp_fn) + ((_detach_dual_tree(aux),) if has_aux else ())
    value = _detach_tree(out, graph)
    if has_aux:
        return value, vjp_fn, _detach_tree(aux, graph)
    return value, vjp_fn


def _newer_levels(t, active) -> bool:
    """Whether ``t`` is batched at a vmap level not in ``active``."""
    while type(t) is BatchedTensor:
        if not any(t.level is lv for lv in active):
            return True
        t = t.inner
    return False


def _vjp_again(func, primals, has_aux, cotangents):
    """``vjp_fn(cotangents)`` by a new pass of ``func``, its primals lifted to the levels active now."""
    active = primal_levels()
    flat_in, in_spec = tree_flatten(primals)
    graph = _wants_graph(flat_in)
    out, leaves, _ = _call_marked(func, primals, {}, tuple(range(len(primals))), active, graph)
    if has_aux:
        out = out[0]
    flat_out, _ = tree_flatten(out)
    flat_ct, _ = tree_flatten(cotangents)
    outs = [to_full_physical(o, active) for o in flat_out]
    cts = [to_full_physical(c, active) for c in flat_ct]
    grads = _backward(outs, leaves, cts, graph, graph)
    if _private(graph, flat_in + flat_ct):  # See Note [Reverse transforms of dual tensors]
        grads = [_detach_dual(x) for x in grads]
    return tree_unflatten([from_full_physical(x, active) for x in grads], in_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """Returns a function computing the Jacobian of ``func`` by reverse mode, as ``torch.func.jacrev``.

    The vector-Jacobian products of all the basis vectors run as one ``vmap`` (``chunk_size`` at a time).

    Args:
        func: a function of tensors returning a tensor or a pytree of them (and aux with ``has_aux``).
        argnums (int or tuple of int): the positional arguments to differentiate.
        has_aux (bool): ``func`` returns ``(output, aux)``; the Jacobian function then returns ``(jac, aux)``.
        chunk_size (int, optional): how many basis vectors to map at once.

    Returns:
        The Jacobian function: for an output of shape ``O`` and an input of shape ``I``, a tensor of
        shape ``O + I`` (pytrees of them for several outputs or inputs).

    Raises:
        ValueError: ``chunk_size`` not positive.
        RuntimeError: bad ``argnums``, or ``func`` returning something else than tensors.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import jacrev
        >>> jacrev(lambda x: x ** 2)(rg.tensor([1., 2.]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        flat_in = [t for a in nums for t in tree_flatten(args[a])[0]]
        _check_tensors(flat_in)

        def partial(*diff):
            full = list(args)
            for a, d in zip(nums, diff, strict=True):
                full[a] = d
            return func(*full, **kwargs)

        primals = tuple(args[a] for a in nums)
        with no_grad():  # the output's shapes: the Jacobian's rows come from one vmapped pass below
            out = partial(*primals)
        out, aux, flat_out, out_spec = _vjp_outputs(out, has_aux)
        sizes = [o.numel() for o in flat_out]
        n = sum(sizes)
        basis = eye(n, dtype=flat_out[0].dtype) if flat_out else None
        cts = []
        start = 0
        for o, k in zip(flat_out, sizes, strict=True):
            cts.append(basis[:, start:start + k].reshape((n,) + tuple(o.shape)))
            start += k
        def vjp_fn(cotangents):  # See Note [Differentiating under vmap]
            return _vjp_again(partial, primals, has_aux, cotangents)

        rows = vmap(vjp_fn, chunk_size=chunk_size)(tree_unflatten(cts, out_spec))  # a tuple over primals
        flat_rows = [tree_flatten(r)[0] for r in rows]
        per_out = []
        start = 0
        for o, k in zip(flat_out, sizes, strict=True):
            trees = []
            for r, p in zip(flat_rows, primals, strict=True):
                _, pspec = tree_flatten(p)
                trees.append(tree_unflatten([j[start:start + k].reshape(tuple(o.shape) + tuple(j.shape[1:]))
                                             for j in r], pspec))
            start += k
            per_out.append(trees[0] if isinstance(argnums, int) else tuple(trees))
        jac = tree_unflatten(per_out, out_spec)
        if has_aux:
            return jac, aux
        return jac

    return wrapper

