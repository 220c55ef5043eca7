"""Adadelta: steps scaled by the ratio of running RMS of past updates to running RMS of gradients."""
from __future__ import annotations

import numpy as np

from .._creation import zeros_like
from ._arrays import add_, advance, counters_before_write, grad_array, plain_arrays, plain_scalar, scratch_like
from .optimizer import Optimizer, _check_differentiable, _check_hyper, _check_lr, _scalar

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, as ``torch.optim.Adadelta``.

    Per parameter with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    Args:
        params (iterable): tensors or parameter groups to optimize.
        lr (float): the factor applied to ``delta`` (default 1.0).
        rho (float): the decay of both running averages (default 0.9).
        eps (float): added inside the square roots (default 1e-6).
        weight_decay (float): L2 penalty (default 0).
        foreach, capturable, differentiable: PyTorch's implementation switches; see ``_check_differentiable``.
        maximize (bool): ascend the objective instead of descending it.

    Raises:
        ValueError: a negative ``lr``, ``eps`` or ``weight_decay``, or ``rho`` outside [0, 1].

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.Adadelta([w])
        >>> w.grad = rg.tensor([2.0]); opt.step(); w
        tensor([0.9968], requires_grad=True)
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_hyper(eps, f"Invalid epsilon value: {eps}")
        _check_hyper(weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check_differentiable("Adadelta", differentiable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["square_avg"] = zeros_like(p)
        state["acc_delta"] = zeros_like(p)

    def step(self, closure=None):
        """Performs one Adadelta update. See Note [Optimizer updates] in optimizer.py.

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self._eval_closure(closure)
        with self._update_mode():
            for group in self.param_groups:
                lr, rho, eps = _scalar(group["lr"]), group["rho"], group["eps"]
                arrays = self._arrays_allowed(group, lr, rho, eps, group["weight_decay"])
                for p in group["params"]:
                    if p._grad is None or arrays and self._arrays_update(p, group, lr):
                        continue
                    grad = self._grad_of(p, group, group["weight_decay"])
                    state = self._stepped_state(p, group)
                    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                    square_avg.mul_(rho).add_(grad * grad, alpha=1 - rho)
                    std = square_avg.add(eps).sqrt_()
                    delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                    acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
                    p.add_(delta, alpha=-lr)
        return loss

    def _arrays_update(self, p, group, lr):
        """The update of ``p`` above on the arrays, where they allow it; returns whether it ran. See Note
        [Optimizer updates on arrays] in optimizer.py."""
        state = self._state_of(p, group)
        arrays = plain_arrays(p, state, _STATE)
        s = plain_scalar(state.get("step"))
        if arrays is None or s is None:
            return False
        rho, eps = group["rho"], group["eps"]
        a, g, square_avg, acc_delta = arrays
        counters = counters_before_write((p, state["step"], state["square_avg"], state["acc_delta"]))
        g = grad_array(a, g, group["maximize"], group["weight_decay"])
        advance(s)
        counters[1].bump()
        np.multiply(square_avg, rho, out=square_avg)
        counters[2].bump()
        scratch = np.multiply(g, g, out=scratch_like(a))
        add_(square_avg, scratch, 1 - rho, scratch)
        counters[2].bump()
        std = np.sqrt(np.add(square_avg, eps, out=scratch), out=scratch)
        delta = np.add(acc_delta, eps, out=scratch_like(a))
        np.sqrt(delta, out=delta)
        np.multiply(np.divide(delta, std, out=delta), g, out=delta)
        np.multiply(acc_delta, rho, out=acc_delta)
        counters[3].bump()
        add_(acc_delta, np.multiply(delta, delta, out=scratch), 1 - rho, scratch)
        counters[3].bump()
        add_(a, delta, -lr, scratch)
        counters[0].bump()
        return True


_STATE = ("square_avg", "acc_delta")
