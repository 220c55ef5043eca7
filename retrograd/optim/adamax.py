"""Adamax: Adam with the second moment replaced by a running infinity norm of the gradients."""
from __future__ import annotations

from .._creation import zeros_like
from ..autograd import grad_mode
from ..ops import maximum
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
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, eps = _scalar(group["lr"]), group["eps"]
                beta1, beta2 = (_scalar(b) for b in group["betas"])
                for p, grad in self._params_with_grad(group, group["weight_decay"]):
                    state = self._stepped_state(p, group)
                    exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                    _lerp_(exp_avg, grad, 1 - beta1)
                    exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
                    clr = lr / (1 - beta1 ** state["step"].item())
                    p.add_(exp_avg / exp_inf, alpha=-clr)
        return loss
