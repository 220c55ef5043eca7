"""Adadelta: steps scaled by the ratio of running RMS of past updates to running RMS of gradients."""
from __future__ import annotations

from .._creation import zeros_like
from ..autograd import grad_mode
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
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, rho, eps = _scalar(group["lr"]), group["rho"], group["eps"]
                for p, grad in self._params_with_grad(group, group["weight_decay"]):
                    state = self._stepped_state(p, group)
                    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                    square_avg.mul_(rho).add_(grad * grad, alpha=1 - rho)
                    std = square_avg.add(eps).sqrt_()
                    delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                    acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
                    p.add_(delta, alpha=-lr)
        return loss
