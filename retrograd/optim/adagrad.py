"""Adagrad: each coordinate's step divided by the root of its accumulated squared gradients."""
from __future__ import annotations

import numpy as np

from .._creation import full_like, tensor
from ._arrays import add_, advance, counters_before_write, grad_array, plain_arrays, plain_scalar, scratch_like
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
        with self._update_mode():
            for group in self.param_groups:
                lr, lr_decay, eps = _scalar(group["lr"]), group["lr_decay"], group["eps"]
                arrays = self._arrays_allowed(group, lr, lr_decay, eps, group["weight_decay"])
                for p in group["params"]:
                    if p._grad is None or arrays and self._arrays_update(p, group, lr):
                        continue
                    grad = self._grad_of(p, group, group["weight_decay"])
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

    def _arrays_update(self, p, group, lr):
        """The update of ``p`` above on the arrays, where they allow it; returns whether it ran. See Note
        [Optimizer updates on arrays] in optimizer.py."""
        state = self.state[p]
        if not state:
            self._new_state(state, p, group)
        arrays = plain_arrays(p, state, _STATE)
        s = plain_scalar(state.get("step"))
        if arrays is None or s is None:
            return False
        a, g, state_sum = arrays
        counters = counters_before_write((p, state["step"], state["sum"]))
        g = grad_array(a, g, group["maximize"], group["weight_decay"])
        t = advance(s)
        counters[1].bump()
        clr = lr / (1 + (t - 1) * group["lr_decay"])
        scratch = np.multiply(g, g, out=scratch_like(a))
        np.add(state_sum, scratch, out=state_sum)
        counters[2].bump()
        std = np.add(np.sqrt(state_sum, out=scratch), group["eps"], out=scratch)
        add_(a, np.divide(g, std, out=scratch), -clr, scratch)
        counters[0].bump()
        return True


_STATE = ("sum",)
