"""SGD: stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.saved_hooks import before_inplace_write
from ._arrays import add_, counters_before_write, grad_array, plain_arrays, scratch_like
from .optimizer import Optimizer, _check_fused, _check_hyper

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, as ``torch.optim.SGD``.

    Per parameter with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        buf = g                                   (first step)
        buf = momentum * buf + (1 - dampening) * g (later steps)
        g = g + momentum * buf if nesterov else buf   (when momentum != 0)
        p = p - lr * g

    Args:
        params (iterable): tensors or parameter groups to optimize.
        lr (float): learning rate (default 1e-3).
        momentum (float): momentum factor (default 0).
        dampening (float): dampening of the momentum (default 0).
        weight_decay (float): L2 penalty (default 0).
        nesterov (bool): use Nesterov momentum (default False).
        maximize (bool): ascend the objective instead of descending it.
        differentiable (bool): record the step in the graph (see Note [Optimizer updates] in optimizer.py).
        foreach, fused: PyTorch's implementation switches; they change nothing here.

    Raises:
        ValueError: a negative hyper-parameter, or ``nesterov`` without momentum or with dampening.

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward(); opt.step(); w
        tensor([0.8000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_hyper(lr, f"Invalid learning rate: {lr}")
        _check_hyper(momentum, f"Invalid momentum value: {momentum}")
        _check_hyper(weight_decay, f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_fused(fused, foreach, differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Performs one SGD update. See Note [Optimizer updates] in optimizer.py.

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self._eval_closure(closure)
        with self._update_mode():
            for group in self.param_groups:
                lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
                weight_decay, nesterov = group["weight_decay"], group["nesterov"]
                arrays = self._arrays_allowed(group, lr, momentum, dampening, weight_decay)
                for p in group["params"]:
                    if p._grad is None or arrays and self._arrays_update(p, group):
                        continue
                    grad = self._grad_of(p, group, weight_decay)
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = state["momentum_buffer"] = grad.detach().clone()  # as PyTorch's, recorded or not
                        else:
                            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                        grad = grad.add(buf, alpha=momentum) if nesterov else buf
                    if isinstance(lr, Tensor) and lr.requires_grad:  # differentiable: a meta-gradient for lr
                        p.sub_(grad * lr)
                    else:
                        p.add_(grad, alpha=-lr)
        return loss

    def _arrays_update(self, p, group):
        """The update of ``p`` above (not differentiable) on the arrays, where they allow it; returns whether
        it ran. A momentum buffer is made by the op path, on the parameter's first step. See Note
        [Optimizer updates on arrays] in optimizer.py."""
        momentum = group["momentum"]
        if momentum == 0:
            arrays = plain_arrays(p)
            if arrays is None:
                return False
            a = arrays[0]
            g = grad_array(a, arrays[1], group["maximize"], group["weight_decay"])
            before_inplace_write(p)
            add_(a, g, -group["lr"])
            p._version_counter.bump()
            return True
        state = self.state[p]
        if state.get("momentum_buffer") is None:
            return False
        arrays = plain_arrays(p, state, _STATE)
        if arrays is None:
            return False
        a, g, buf = arrays
        g = grad_array(a, g, group["maximize"], group["weight_decay"])
        p_counter, buf_counter = counters_before_write((p, state["momentum_buffer"]))
        np.multiply(buf, momentum, out=buf)
        buf_counter.bump()
        add_(buf, g, 1 - group["dampening"])
        buf_counter.bump()
        if not group["nesterov"]:
            g = buf
        elif momentum == 1:
            g = np.add(g, buf)
        else:
            scaled = np.multiply(buf, momentum, out=scratch_like(a))
            g = np.add(g, scaled, out=scaled)
        add_(a, g, -group["lr"])
        p_counter.bump()
        return True


_STATE = ("momentum_buffer",)
