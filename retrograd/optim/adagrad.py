"""Adagrad: each coordinate's step divided by the root of its accumulated squared gradients."""
from __future__ import annotations

from .._creation import full_like, tensor
from ..autograd import grad_mode
from .optimizer import Optimizer, _check_differentiable, _check_fused, _check_hyper, _check_lr, _scalar, _scalar_dtype

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad``.

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                       (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    Unlike the other optimizers, the state (``"step"`` and ``"sum"``) of every parameter given
    to the constructor is made at once, as in PyTorch; groups added later get theirs on their
    first step.

    Args:
        params (iterable): tensors or parameter groups to optimize.
        lr (float): learning rate (default 1e-2).
        lr_decay (float): learning-rate decay per step (default 0).
        weight_decay (float): L2 penalty (default 0).
        initial_accumulator_value (float): the starting value of the sums of squares (default 0).
        eps (float): added to the denominator for stability (default 1e-10).
        foreach, differentiable, fused: PyTorch's implementation switches; see ``_check_differentiable``.
        maximize (bool): ascend the objective instead of descending it.

    Raises:
        ValueError: a negative hyper-parameter.
        RuntimeError: ``fused`` together with ``foreach``.

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.Adagrad([w], lr=0.5)
        >>> w.grad = rg.tensor([2.0]); opt.step(); w
        tensor([0.5000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check_hyper(lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check_hyper(weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check_hyper(initial_accumulator_value, f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check_hyper(eps, f"Invalid epsilon value: {eps}")
        _check_fused(fused, foreach, differentiable)
        _check_differentiable("Adagrad", differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._new_state(self.state[p], p, group)

    def _new_state(self, state, p, group):
        """Fills a parameter's empty state: a zero step count and the initial sums."""
        state["step"] = tensor(0.0, dtype=_scalar_dtype())
        state["sum"] = full_like(p, group["initial_accumulator_value"])

    def step(self, closure=None):
        """Performs one Adagrad update. See Note [Optimizer updates] in optimizer.py.

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self._eval_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, lr_decay, eps = _scalar(group["lr"]), group["lr_decay"], group["eps"]
                for p, grad in self._params_with_grad(group, group["weight_decay"]):
                    state = self.state[p]
                    if not state:
                        self._new_state(state, p, group)
                    state["step"].add_(1)
                    clr = lr / (1 + (state["step"].item() - 1) * lr_decay)
                    state_sum = state["sum"]
                    state_sum.add_(grad * grad)
                    std = state_sum.sqrt().add_(eps)
                    p.add_(grad / std, alpha=-clr)
        return loss
