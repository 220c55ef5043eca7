"""``retrograd.func``: composable function transforms, as ``torch.func``.

``grad``, ``grad_and_value``, ``vjp`` and ``jacrev`` differentiate a function of tensors (reverse
mode, on the autograd engine); ``vmap`` maps one over a batch (Note [Batched tensors]);
``functional_call`` runs a Module with given parameters and buffers, and ``stack_module_state``
stacks the states of several Modules for ``vmap`` over an ensemble. ``jvp``, ``jacfwd``,
``linearize`` and ``hessian`` run on forward-mode AD (``retrograd.autograd.forward_ad``).
"""
from ._vmap import vmap
from ._eager import grad, grad_and_value, vjp, jacrev
from ._functional_call import functional_call, stack_module_state
from ._forward import jvp, jacfwd, linearize, hessian
from . import _batched_grad  # noqa: F401 - autograd.grad(is_grads_batched=True) vmaps its pass

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jacrev", "jvp", "jacfwd", "linearize", "hessian",
           "functional_call", "stack_module_state"]
