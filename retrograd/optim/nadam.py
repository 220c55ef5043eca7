"""NAdam: Adam with Nesterov momentum, the momentum warmed up by ``momentum_decay``."""
from __future__ import annotations

import numpy as np

from .._creation import tensor, zeros_like
from ._arrays import (add_, advance, counters_before_write, grad_array, lerp_arrays, plain_arrays, plain_scalar,
                      scratch_like)
from .optimizer import (Optimizer, _check_betas, _check_differentiable, _check_hyper, _check_lr, _lerp_, _scalar,
                        _scalar_dtype)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, as ``torch.optim.NAdam``.

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)          if decoupled_weight_decay
        g = g + weight_decay * p                 otherwise
        mu_t = beta1 * (1 - 0.96 ** (t * momentum_decay) / 2)
        P = P * mu_t                             (the running product of the mu's, a float32 scalar)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        d = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - P) * g / d - lr * mu_{t+1} / (1 - P * mu_{t+1}) * m / d

    Args:
        params (iterable): tensors or parameter groups to optimize.
        lr (float): learning rate (default 2e-3).
        betas (tuple of float): decay rates of the first and second moments (default (0.9, 0.999)).
        eps (float): added to the denominator for stability (default 1e-8).
        weight_decay (float): weight decay (default 0).
        momentum_decay (float): how fast the momentum warms up (default 4e-3).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW does (default False).
        foreach, capturable, differentiable: PyTorch's implementation switches; see ``_check_differentiable``.
        maximize (bool): ascend the objective instead of descending it.

    Raises:
        ValueError: a negative ``lr``, ``eps``, ``weight_decay`` or ``momentum_decay``, or a beta
            outside [0, 1).

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.NAdam([w], lr=0.1)
        >>> w.grad = rg.tensor([2.0]); opt.step(); w
        tensor([0.8944], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check_hyper(eps, f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        _check_hyper(weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check_hyper(momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        _check_differentiable("NAdam", differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["mu_product"] = tensor(1.0, dtype=_scalar_dtype())
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)

    def step(self, closure=None):
        """Performs one NAdam update. See Note [Optimizer updates] in optimizer.py.

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
                momentum_decay, decoupled = group["momentum_decay"], group["decoupled_weight_decay"]
                arrays = self._arrays_allowed(group, lr, eps, weight_decay, beta1, beta2, momentum_decay)
                for p in group["params"]:
                    if p._grad is None or arrays and self._arrays_update(p, group, lr, beta1, beta2):
                        continue
                    grad = self._grad_of(p, group, 0 if decoupled else weight_decay)
                    state = self._stepped_state(p, group)
                    t = state["step"].item()
                    if decoupled and weight_decay != 0:
                        p.mul_(1 - lr * weight_decay)
                    mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * momentum_decay))
                    mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
                    mu_product = state["mu_product"].mul_(mu).item()  # rounded to float32, as PyTorch's
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    _lerp_(exp_avg, grad, 1 - beta1)
                    exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
                    denom = exp_avg_sq.div(1 - beta2 ** t).sqrt_().add_(eps)
                    p.add_(grad / denom, alpha=-lr * (1.0 - mu) / (1.0 - mu_product))
                    p.add_(exp_avg / denom, alpha=-lr * mu_next / (1.0 - mu_product * mu_next))
        return loss

    def _arrays_update(self, p, group, lr, beta1, beta2):
        """The update of ``p`` above on the arrays, where they allow it; returns whether it ran. See Note
        [Optimizer updates on arrays] in optimizer.py."""
        state = self._state_of(p, group)
        arrays = plain_arrays(p, state, _STATE)
        s, product = plain_scalar(state.get("step")), plain_scalar(state.get("mu_product"))
        if arrays is None or s is None or product is None:
            return False
        eps, weight_decay = group["eps"], group["weight_decay"]
        momentum_decay, decoupled = group["momentum_decay"], group["decoupled_weight_decay"]
        a, g, exp_avg, exp_avg_sq = arrays
        counters = counters_before_write((p, state["step"], state["mu_product"], state["exp_avg"], state["exp_avg_sq"]))
        g = grad_array(a, g, group["maximize"], 0 if decoupled else weight_decay)
        t = advance(s)
        counters[1].bump()
        if decoupled and weight_decay != 0:
            np.multiply(a, 1 - lr * weight_decay, out=a)
            counters[0].bump()
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_product = np.multiply(product, mu, out=product).item()
        counters[2].bump()
        scratch = scratch_like(a)
        lerp_arrays(exp_avg, g, 1 - beta1, scratch)
        counters[3].bump()
        np.multiply(exp_avg_sq, beta2, out=exp_avg_sq)
        counters[4].bump()
        add_(exp_avg_sq, np.multiply(g, g, out=scratch), 1 - beta2, scratch)
        counters[4].bump()
        denom = np.divide(exp_avg_sq, 1 - beta2 ** t, out=scratch_like(a))
        np.add(np.sqrt(denom, out=denom), eps, out=denom)
        add_(a, np.divide(g, denom, out=scratch), -lr * (1.0 - mu) / (1.0 - mu_product), scratch)
        counters[0].bump()
        add_(a, np.divide(exp_avg, denom, out=scratch), -lr * mu_next / (1.0 - mu_product * mu_next), scratch)
        counters[0].bump()
        return True


_STATE = ("exp_avg", "exp_avg_sq")
