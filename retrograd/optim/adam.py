"""Adam and AdamW: adaptive moment estimation, with L2 or decoupled weight decay and AMSGrad."""
from __future__ import annotations

import math

import numpy as np

from .._creation import zeros_like
from ..ops import maximum
from ._arrays import add_, advance, counters_before_write, grad_array, plain_arrays, plain_scalar, scratch_like
from .optimizer import Optimizer, _check_fused, _check_hyper

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``.

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)      if decoupled_weight_decay (AdamW)
        g = g + weight_decay * p             otherwise
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                with amsgrad (then v_max replaces v below)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params (iterable): tensors or parameter groups to optimize.
        lr (float): learning rate (default 1e-3).
        betas (tuple of float): decay rates of the first and second moments (default (0.9, 0.999)).
        eps (float): added to the denominator for stability (default 1e-8).
        weight_decay (float): weight decay (default 0).
        amsgrad (bool): use the running maximum of the second moment (default False).
        maximize (bool): ascend the objective instead of descending it.
        decoupled_weight_decay (bool): decay the weights directly, as AdamW (default False).
        differentiable (bool): record the step in the graph (see Note [Optimizer updates] in optimizer.py).
        foreach, capturable, fused: PyTorch's implementation switches; they change nothing here.

    Raises:
        ValueError: a negative ``lr``, ``eps`` or ``weight_decay``, or a beta outside [0, 1).

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step(); w
        tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_hyper(lr, f"Invalid learning rate: {lr}")
        _check_hyper(eps, f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        _check_hyper(weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check_fused(fused, foreach, differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_like(p)

    def step(self, closure=None):
        """Performs one Adam update. See Note [Optimizer updates] in optimizer.py.

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self._eval_closure(closure)
        with self._update_mode():
            for group in self.param_groups:
                lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
                beta1, beta2 = group["betas"]
                decoupled = group["decoupled_weight_decay"]
                arrays = self._arrays_allowed(group, lr, eps, weight_decay, beta1, beta2)
                for p in group["params"]:
                    if p._grad is None or arrays and self._arrays_update(p, group):
                        continue
                    grad = self._grad_of(p, group, 0 if decoupled else weight_decay)
                    state = self._stepped_state(p, group)
                    t = state["step"].item()
                    if decoupled and weight_decay != 0:
                        p.mul_(1 - lr * weight_decay)
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    exp_avg.add_(grad - exp_avg, alpha=1 - beta1)
                    exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
                    if group["amsgrad"]:
                        second = state["max_exp_avg_sq"]
                        second.copy_(maximum(second.clone() if group["differentiable"] else second, exp_avg_sq))
                    else:
                        second = exp_avg_sq
                    if group["differentiable"]:  # See Note [Optimizer updates] in optimizer.py
                        # PyTorch's differentiable formula, its rounding too: the bias corrections are tensors of
                        # the step's dtype, and the step size divides the denominator.
                        step = state["step"]
                        neg_step_size = (lr / (1 - beta1 ** step)).neg()
                        denom = (second.sqrt() / ((1 - beta2 ** step).sqrt() * neg_step_size)).add_(eps / neg_step_size)
                        p.add_(exp_avg.clone() / denom)
                        continue
                    step_size = lr / (1 - beta1 ** t)
                    denom = (second.sqrt() / math.sqrt(1 - beta2 ** t)).add_(eps)
                    p.add_(exp_avg / denom, alpha=-step_size)
        return loss

    def _arrays_update(self, p, group):
        """The update of ``p`` above (not differentiable) on the arrays, where they allow it; returns whether
        it ran. See Note [Optimizer updates on arrays] in optimizer.py."""
        state = self._state_of(p, group)
        amsgrad = group["amsgrad"]
        arrays = plain_arrays(p, state, _AMSGRAD_STATE if amsgrad else _STATE)
        s = plain_scalar(state.get("step"))
        if arrays is None or s is None:
            return False
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        decoupled = group["decoupled_weight_decay"]
        a, g, exp_avg, exp_avg_sq = arrays[:4]
        tensors = [p, state["exp_avg"], state["exp_avg_sq"], state["step"]]
        if amsgrad:
            tensors.append(state["max_exp_avg_sq"])
        counters = counters_before_write(tensors)
        g = grad_array(a, g, group["maximize"], 0 if decoupled else weight_decay)
        t = advance(s)
        counters[3].bump()
        if decoupled and weight_decay != 0:
            np.multiply(a, 1 - lr * weight_decay, out=a)
            counters[0].bump()
        scratch = np.subtract(g, exp_avg, out=scratch_like(a))
        add_(exp_avg, scratch, 1 - beta1, scratch)
        counters[1].bump()
        np.multiply(exp_avg_sq, beta2, out=exp_avg_sq)
        counters[2].bump()
        add_(exp_avg_sq, np.multiply(g, g, out=scratch), 1 - beta2, scratch)
        counters[2].bump()
        if amsgrad:
            second = np.maximum(arrays[4], exp_avg_sq, out=arrays[4])
            counters[4].bump()
        else:
            second = exp_avg_sq
        step_size = lr / (1 - beta1 ** t)
        denom = np.divide(np.sqrt(second, out=scratch), math.sqrt(1 - beta2 ** t), out=scratch)
        np.add(denom, eps, out=denom)
        add_(a, np.divide(exp_avg, denom, out=scratch), -step_size, scratch)
        counters[0].bump()
        return True


_STATE = ("exp_avg", "exp_avg_sq")
_AMSGRAD_STATE = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")


class AdamW(Adam):
    """AdamW: Adam with decoupled weight decay, as ``torch.optim.AdamW``.

    Same arguments as ``Adam`` (without ``decoupled_weight_decay``, which is always on), except
    that ``weight_decay`` defaults to 1e-2.

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> (w * w).sum().backward(); opt.step(); w
        tensor([0.8500], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
