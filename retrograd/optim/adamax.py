"""Adamax: Adam with the second moment replaced by a running infinity norm of the gradients."""
from __future__ import annotations

import numpy as np

from .._creation import zeros_like
from ..ops import maximum
from ._arrays import (add_, advance, counters_before_write, grad_array, lerp_arrays, plain_arrays, plain_scalar,
                      scratch_like)
from .optimizer import Optimizer, _check_betas, _check_differentiable, _check_hyper, _check_lr, _lerp_, _scalar

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax, as ``torch.optim.Adamax``.

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u

    Args:
        params (iterable): tensors or parameter groups to optimize.
        lr (float): learning rate (default 2e-3).
        betas (tuple of float): decay rates of the first moment and of the norm (default (0.9, 0.999)).
        eps (float): added to ``|g|`` for stability (default 1e-8).
        weight_decay (float): L2 penalty (default 0).
        foreach, differentiable, capturable: PyTorch's implementation switches; see ``_check_differentiable``.
        maximize (bool): ascend the objective instead of descending it.

    Raises:
        ValueError: a negative ``lr``, ``eps`` or ``weight_decay``, or a beta outside [0, 1).

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.Adamax([w], lr=0.1)
        >>> w.grad = rg.tensor([2.0]); opt.step(); w
        tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_hyper(eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check_hyper(weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check_differentiable("Adamax", differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["exp_avg"] = zeros_like(p)
        state["exp_inf"] = zeros_like(p)

    def step(self, closure=None):
        """Performs one Adamax update. See Note [Optimizer updates] in optimizer.py.

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self._eval_closure(closure)
        with self._update_mode():
            for group in self.param_groups:
                lr, eps = _scalar(group["lr"]), group["eps"]
                beta1, beta2 = (_scalar(b) for b in group["betas"])
                arrays = self._arrays_allowed(group, lr, eps, beta1, beta2, group["weight_decay"])
                for p in group["params"]:
                    if p._grad is None or arrays and self._arrays_update(p, group, lr, beta1, beta2):
                        continue
                    grad = self._grad_of(p, group, group["weight_decay"])
                    state = self._stepped_state(p, group)
                    exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                    _lerp_(exp_avg, grad, 1 - beta1)
                    exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
                    clr = lr / (1 - beta1 ** state["step"].item())
                    p.add_(exp_avg / exp_inf, alpha=-clr)
        return loss

    def _arrays_update(self, p, group, lr, beta1, beta2):
        """The update of ``p`` above on the arrays, where they allow it; returns whether it ran. See Note
        [Optimizer updates on arrays] in optimizer.py."""
        state = self._state_of(p, group)
        arrays = plain_arrays(p, state, _STATE)
        s = plain_scalar(state.get("step"))
        if arrays is None or s is None:
            return False
        a, g, exp_avg, exp_inf = arrays
        counters = counters_before_write((p, state["step"], state["exp_avg"], state["exp_inf"]))
        g = grad_array(a, g, group["maximize"], group["weight_decay"])
        t = advance(s)
        counters[1].bump()
        scratch = scratch_like(a)
        lerp_arrays(exp_avg, g, 1 - beta1, scratch)
        counters[2].bump()
        np.multiply(exp_inf, beta2, out=exp_inf)
        counters[3].bump()
        np.maximum(exp_inf, np.add(np.abs(g, out=scratch), group["eps"], out=scratch), out=exp_inf)
        counters[3].bump()
        clr = lr / (1 - beta1 ** t)
        add_(a, np.divide(exp_avg, exp_inf, out=scratch), -clr, scratch)
        counters[0].bump()
        return True


_STATE = ("exp_avg", "exp_inf")
