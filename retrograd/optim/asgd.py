"""ASGD: averaged stochastic gradient descent, keeping a running average ``ax`` of the iterates."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._creation import tensor, zeros_like
from ._arrays import FLOATS, add_, advance, counters_before_write, grad_array, plain_arrays, plain_scalar, scratch_like
from .optimizer import Optimizer, _check_differentiable, _check_hyper, _check_lr, _scalar, _scalar_dtype

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD, as ``torch.optim.ASGD``.

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``, with ``eta``
    and ``mu`` float32 scalars in the state (starting at ``lr`` and 1)::

        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = ax + mu * (p - ax)              (ax = p while mu is 1)
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)

    Args:
        params (iterable): tensors or parameter groups to optimize.
        lr (float): learning rate (default 1e-2).
        lambd (float): decay term (default 1e-4).
        alpha (float): power of the ``eta`` update (default 0.75).
        t0 (float): the step at which averaging starts (default 1e6).
        weight_decay (float): L2 penalty (default 0).
        foreach, differentiable, capturable: PyTorch's implementation switches; see ``_check_differentiable``.
        maximize (bool): ascend the objective instead of descending it.

    Raises:
        ValueError: a negative ``lr`` or ``weight_decay``.

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.ASGD([w], lr=0.25, lambd=0.0)
        >>> w.grad = rg.tensor([2.0]); opt.step(); w
        tensor([0.5000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_hyper(weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check_differentiable("ASGD", differentiable)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["eta"] = tensor(_scalar(group["lr"]), dtype=_scalar_dtype())
        state["mu"] = tensor(1.0, dtype=_scalar_dtype())
        state["ax"] = zeros_like(p)

    def step(self, closure=None):
        """Performs one ASGD update. See Note [Optimizer updates] in optimizer.py.

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self._eval_closure(closure)
        with self._update_mode():
            for group in self.param_groups:
                lr, lambd, alpha, t0 = _scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"]
                arrays = self._arrays_allowed(group, lr, lambd, alpha, t0, group["weight_decay"])
                for p in group["params"]:
                    if p._grad is None or arrays and self._arrays_update(p, group, lr):
                        continue
                    grad = self._grad_of(p, group, group["weight_decay"])
                    state = self._stepped_state(p, group)
                    eta, mu, ax = state["eta"].item(), state["mu"].item(), state["ax"]
                    p.mul_(1 - lambd * eta)
                    p.add_(grad, alpha=-eta)
                    if mu != 1:
                        ax.add_(p.sub(ax).mul_(mu))
                    else:
                        ax.copy_(p)
                    t = state["step"].item()
                    # The new values pass through a tensor of the default dtype, as in PyTorch (so a state
                    # loaded as float64 still holds float32-rounded values).
                    state["eta"].copy_(tensor(lr / (1 + lambd * lr * t) ** alpha))
                    state["mu"].copy_(tensor(1 / max(1, t - t0)))
        return loss

    def _arrays_update(self, p, group, lr):
        """The update of ``p`` above on the arrays, where they allow it; returns whether it ran. See Note
        [Optimizer updates on arrays] in optimizer.py."""
        state = self._state_of(p, group)
        arrays = plain_arrays(p, state, _STATE)
        s, eta_array, mu_array = (plain_scalar(state.get(name)) for name in ("step", "eta", "mu"))
        default = _dtype.get_default_dtype().np
        if arrays is None or s is None or eta_array is None or mu_array is None or default not in FLOATS:
            return False
        lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
        t = np.add(s, 1).item()  # the step's new count, written below
        new_eta, new_mu = lr / (1 + lambd * lr * t) ** alpha, 1 / max(1, t - t0)
        if type(new_eta) is not float or type(new_mu) is not float:  # a complex power, say: the op path's error
            return False
        a, g, ax = arrays
        counters = counters_before_write((p, state["step"], state["ax"], state["eta"], state["mu"]))
        g = grad_array(a, g, group["maximize"], group["weight_decay"])
        advance(s)
        counters[1].bump()
        eta, mu = eta_array.item(), mu_array.item()
        np.multiply(a, 1 - lambd * eta, out=a)
        counters[0].bump()
        add_(a, g, -eta)
        counters[0].bump()
        if mu != 1:
            update = np.subtract(a, ax, out=scratch_like(a))
            np.add(ax, np.multiply(update, mu, out=update), out=ax)
        else:
            np.copyto(ax, a)
        counters[2].bump()
        # as ``copy_(tensor(value))``: the value rounded to the default dtype, then cast to the state's
        np.copyto(eta_array, np.asarray(new_eta, dtype=default))
        counters[3].bump()
        np.copyto(mu_array, np.asarray(new_mu, dtype=default))
        counters[4].bump()
        return True


_STATE = ("ax",)
