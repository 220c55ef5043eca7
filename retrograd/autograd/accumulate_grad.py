"""AccumulateGrad: the node at the end of every path to a leaf, which adds gradients into ``.grad``."""
from __future__ import annotations

import sys
import threading
import weakref

from .._creation import empty_strided, is_non_overlapping_and_dense, strided_empty
from .._tensor import Tensor
from . import grad_mode
from .graph import MAX_SEQUENCE_NR, _NodeBase as Node, call_post_accumulate_grad_hooks, input_metadata

__all__ = ["AccumulateGrad", "accumulate_grad", "leaf_input_metadata"]


class AccumulateGrad(Node):
    """Sink of a leaf: adds the incoming gradient into ``variable.grad``, then runs the leaf's
    post-accumulate-grad hooks.

    One per leaf, shared by every use of it. It refers to the leaf weakly, so the graph never
    keeps a leaf (or, with ``create_graph``, the leaf's own gradient graph) alive.
    """

    __slots__ = ("_variable", "lock")
    _leaf_hooks = True  # the leaf's tensor hooks run on the gradient it receives

    def __init__(self, variable):
        super().__init__((), (leaf_input_metadata(variable),), sequence_nr=MAX_SEQUENCE_NR)
        self._variable = weakref.ref(variable)
        self.lock = threading.RLock()  # See Note [Thread safety of nodes] in engine.py

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # PyTorch's hand-written nodes carry their C++ namespace

    @property
    def variable(self):
        """The leaf tensor, or None once it has been freed."""
        return self._variable()

    def tensor_pre_hooks(self):
        var = self._variable()
        hooks = None if var is None else var._hooks
        return [(0, hooks)] if hooks else []

    def apply(self, grads):
        grad = grads[0]
        del grads[0]  # drop the engine's reference so an unshared gradient can be taken without a copy
        var = self._variable()
        if grad is None or var is None or not var._requires_grad:
            return ()
        if var._node is not None:
            raise RuntimeError("leaf variable has been moved into the graph interior")
        with self.lock:
            extras = self._extras  # the engine keeps the gradients a post-hook is to see
            accumulate_grad(var, grad, 1 + (extras is not None and extras.post_hooks is not None))
            hooks = var._post_accumulate_grad_hooks
            if hooks:
                call_post_accumulate_grad_hooks(var, hooks)
        return ()


def leaf_input_metadata(var) -> tuple:
    """What a gradient reaching the leaf ``var`` must match: its shape, device, and grad_dtype (None: any dtype,
    which the engine leaves as it is). See Note [grad_dtype] in variable.py."""
    shape, np_dtype, device = input_metadata(var._data, var._device)
    wanted = var._grad_dtype
    return shape, np_dtype if wanted is Tensor.OWN_DTYPE else wanted, device


def accumulate_grad(var, grad, expected_refs: int) -> None:
    """Adds ``grad`` into ``var.grad`` with PyTorch's rules.

    Without grad mode: an undefined ``.grad`` takes ``grad`` itself when nothing else holds it
    (no copy), else a copy; a defined ``.grad`` is added to in place. In grad mode
    (``create_graph``): ``.grad`` becomes a new tensor that carries its own graph (a copy of the
    gradient, or the sum with the old ``.grad``).
    """
    old = var._grad
    if not grad_mode.state.grad_enabled:
        if old is None:
            t_refs, a_refs = _count_refs(grad)
            unshared = (t_refs <= _BASE_T_REFS + expected_refs - 1 and a_refs <= _BASE_A_REFS
                        and grad._data.base is None and grad._node is None and not grad._requires_grad
                        and grad._data.flags.writeable and obeys_layout_contract(grad, var))
            var._grad = grad if unshared else clone_obey_contract(grad, var)
        else:
            old._data += grad._data
            old._version_counter.bump()  # an inference .grad's counter counts as PyTorch's
    elif old is None:  # a copy into a new tensor, recorded (CopyBackwards), as PyTorch's clone_obey_contract
        var._grad = clone_obey_contract(grad, var)
    else:
        var._grad = old + grad


# Note [The gradient layout contract]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As PyTorch's AccumulateGrad, a leaf's new ``.grad`` has the leaf's strides where the leaf is dense and
# non-overlapping (a channels_last parameter gets a channels_last gradient), else it is row-major. A gradient
# that already has that layout (dims of size 1 aside) may be taken as it is; any other is copied into one
# that does. A defined ``.grad`` keeps its own layout: gradients are added into it. The compiled loop's
# AccumulateGrad (_C/_engine_loop.c) takes the first gradient itself only where the gradient and the leaf
# are both row-major, and leaves every other first gradient to ``accumulate_grad``.
def obeys_layout_contract(grad, var) -> bool:
    """Whether ``grad`` has the layout the gradient of ``var`` must have. See Note [The gradient layout contract]."""
    g, v = grad._data, var._data
    if g.flags.c_contiguous and v.flags.c_contiguous:
        return True
    shape, strides, var_strides = g.shape, grad.stride(), var.stride()
    if not is_non_overlapping_and_dense(v.shape, var_strides):
        return bool(g.flags.c_contiguous)
    return all(st == vs if n != 1 else st != 0 for n, st, vs in zip(shape, strides, var_strides))


def clone_obey_contract(grad, var):
    """A copy of ``grad`` with the layout the gradient of ``var`` must have: in grad mode a recorded ``copy_`` into
    a new tensor, else a new array. See Note [The gradient layout contract]."""
    v = var._data
    dense = v.flags.c_contiguous or is_non_overlapping_and_dense(v.shape, var.stride())
    strides = var.stride() if dense else _row_major(grad.shape)
    if grad_mode.state.grad_enabled:
        return empty_strided(grad.shape, strides, dtype=grad.dtype, device=grad.device).copy_(grad)
    out = strided_empty(grad._device.backend.xp, grad._data.shape, strides, grad._data.dtype)
    out[...] = grad._data
    copied = Tensor._make(out, grad._device)
    if dense:  # PyTorch's new_empty_strided(...).copy_(grad) (its clone of a non-dense one counts nothing)
        copied._version_counter.bump()  # See Note [The version of a summed gradient]
    return copied


def _row_major(shape):
    strides, step = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


# -- the reference baseline of an unshared gradient ----------------------------------------------
def _refs(obj) -> int:
    return sys.getrefcount(obj)


def _count_refs(grad):
    return _refs(grad), _refs(grad._data)


def _baseline_refs():
    """References to an unshared gradient and its array, as ``accumulate_grad`` counts them.

    They are counted through calls of the same shape as at run time (``_probe_apply`` stands
    for ``AccumulateGrad.apply``, ``_probe_accumulate`` for ``accumulate_grad``), because how
    many references a call adds depends on the Python version (3.10 keeps one more per call
    level than 3.11). Each expected holder beyond ``apply``'s own local (the engine keeps the
    inputs for post-hooks) adds one, hence ``expected_refs - 1``.
    """
    probe = type("_Probe", (), {"__slots__": ("_data",)})

    def make():
        grad = probe()
        grad._data = object()
        return grad
    return _probe_apply([make()])


def _probe_apply(grads):
    grad = grads[0]
    del grads[0]
    return _probe_accumulate(None, grad, 1)


def _probe_accumulate(var, grad, expected_refs):
    return _count_refs(grad)


_BASE_T_REFS, _BASE_A_REFS = _baseline_refs()
