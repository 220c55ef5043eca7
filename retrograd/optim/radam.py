"""RAdam: Adam whose adaptive step is switched on, and rectified, once its variance is tractable."""
from __future__ import annotations

import math

import numpy as np

from .._creation import zeros_like
from ._arrays import (add_, advance, counters_before_write, grad_array, lerp_arrays, plain_arrays, plain_scalar,
                      scratch_like)
from .optimizer import Optimizer, _check_betas, _check_differentiable, _check_hyper, _check_lr, _lerp_, _scalar

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, as ``torch.optim.RAdam``.

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)          if decoupled_weight_decay
        g = g + weight_decay * p                 otherwise
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        r = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))
        p = p - lr * m / (1 - beta1**t) * r * sqrt(1 - beta2**t) / (sqrt(v) + eps)    if rho_t > 5
        p = p - lr * m / (1 - beta1**t)                                                otherwise

    Args:
        params (iterable): tensors or parameter groups to optimize.
        lr (float): learning rate (default 1e-3).
        betas (tuple of float): decay rates of the first and second moments (default (0.9, 0.999)).
        eps (float): added to the denominator for stability (default 1e-8).
        weight_decay (float): weight decay (default 0).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW does (default False).
        foreach, capturable, differentiable: PyTorch's implementation switches; see ``_check_differentiable``.
        maximize (bool): ascend the objective instead of descending it.

    Raises:
        ValueError: a negative ``lr``, ``eps`` or ``weight_decay``, or a beta outside [0, 1).

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.RAdam([w], lr=0.1)
        >>> w.grad = rg.tensor([2.0]); opt.step(); w
        tensor([0.8000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_hyper(eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check_hyper(weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check_differentiable("RAdam", differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)

    def step(self, closure=None):
        """Performs one RAdam update. See Note [Optimizer updates] in optimizer.py.

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self._eval_closure(closure)
        with self._update_mode():
            for group in self.param_groups:
                lr, eps, weight_decay = _scalar(group["lr"]), group["eps"], group["weight_decay"]
                beta1, beta2 = (_scalar(b) for b in group["betas"])
                decoupled = group["decoupled_weight_decay"]
                arrays = self._arrays_allowed(group, lr, eps, weight_decay, beta1, beta2)
                for p in group["params"]:
                    if p._grad is None or arrays and self._arrays_update(p, group, lr, beta1, beta2):
                        continue
                    grad = self._grad_of(p, group, 0 if decoupled else weight_decay)
                    state = self._stepped_state(p, group)
                    t = state["step"].item()
                    if decoupled and weight_decay != 0:
                        p.mul_(1 - lr * weight_decay)
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    _lerp_(exp_avg, grad, 1 - beta1)
                    exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
                    bias_correction2 = 1 - beta2 ** t
                    corrected = exp_avg / (1 - beta1 ** t)
                    rect = _rectification(t, beta2, bias_correction2)
                    if rect is not None:
                        adaptive = math.sqrt(bias_correction2) / exp_avg_sq.sqrt().add_(eps)
                        p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
                    else:
                        p.add_(corrected * lr, alpha=-1.0)
        return loss

    def _arrays_update(self, p, group, lr, beta1, beta2):
        """The update of ``p`` above on the arrays, where they allow it; returns whether it ran. See Note
        [Optimizer updates on arrays] in optimizer.py."""
        state = self._state_of(p, group)
        arrays = plain_arrays(p, state, _STATE)
        s = plain_scalar(state.get("step"))
        if arrays is None or s is None:
            return False
        weight_decay, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
        a, g, exp_avg, exp_avg_sq = arrays
        counters = counters_before_write((p, state["step"], state["exp_avg"], state["exp_avg_sq"]))
        g = grad_array(a, g, group["maximize"], 0 if decoupled else weight_decay)
        t = advance(s)
        counters[1].bump()
        if decoupled and weight_decay != 0:
            np.multiply(a, 1 - lr * weight_decay, out=a)
            counters[0].bump()
        scratch = scratch_like(a)
        lerp_arrays(exp_avg, g, 1 - beta1, scratch)
        counters[2].bump()
        np.multiply(exp_avg_sq, beta2, out=exp_avg_sq)
        counters[3].bump()
        add_(exp_avg_sq, np.multiply(g, g, out=scratch), 1 - beta2, scratch)
        counters[3].bump()
        bias_correction2 = 1 - beta2 ** t
        update = np.divide(exp_avg, 1 - beta1 ** t, out=scratch_like(a))
        np.multiply(update, lr, out=update)
        rect = _rectification(t, beta2, bias_correction2)
        if rect is not None:
            adaptive = np.add(np.sqrt(exp_avg_sq, out=scratch), group["eps"], out=scratch)
            np.multiply(np.reciprocal(adaptive, out=adaptive), math.sqrt(bias_correction2), out=adaptive)
            np.multiply(np.multiply(update, adaptive, out=update), rect, out=update)
        add_(a, update, -1.0, update)
        counters[0].bump()
        return True


def _rectification(t, beta2, bias_correction2):
    """RAdam's rectification term at step ``t``, or None while the variance is not tractable (rho_t <= 5)."""
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * t * beta2 ** t / bias_correction2
    if rho_t > 5.0:
        return ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
    return None


_STATE = ("exp_avg", "exp_avg_sq")
