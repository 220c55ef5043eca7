"""RMSprop: gradient scaled by a running root mean square, with optional momentum and centering."""
from __future__ import annotations

import numpy as np

from .._creation import zeros_like
from ._arrays import add_, advance, counters_before_write, grad_array, plain_arrays, plain_scalar, scratch_like
from .optimizer import Optimizer, _check_differentiable, _check_hyper

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop``.

    Per parameter with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - m * m) + eps, with m = alpha * m + (1 - alpha) * g    if centered
        avg = sqrt(v) + eps                                                  otherwise
        buf = momentum * buf + g / avg;  p = p - lr * buf                    if momentum > 0
        p = p - lr * g / avg                                                 otherwise

    Args:
        params (iterable): tensors or parameter groups to optimize.
        lr (float): learning rate (default 1e-2).
        alpha (float): smoothing constant (default 0.99).
        eps (float): added to the denominator for stability (default 1e-8).
        weight_decay (float): L2 penalty (default 0).
        momentum (float): momentum factor (default 0).
        centered (bool): normalize by an estimate of the gradient's variance (default False).
        maximize (bool): ascend the objective instead of descending it.
        capturable, foreach, differentiable: PyTorch's implementation switches.

    Raises:
        ValueError: a negative hyper-parameter.

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.RMSprop([w], lr=0.01)
        >>> (w * w).sum().backward(); opt.step(); w
        tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_hyper(lr, f"Invalid learning rate: {lr}")
        _check_hyper(eps, f"Invalid epsilon value: {eps}")
        _check_hyper(momentum, f"Invalid momentum value: {momentum}")
        _check_hyper(weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check_hyper(alpha, f"Invalid alpha value: {alpha}")
        _check_differentiable("RMSprop", differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["square_avg"] = zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)

    def step(self, closure=None):
        """Performs one RMSprop update. See Note [Optimizer updates] in optimizer.py.

        Args:
            closure (callable, optional): re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """
        loss = self._eval_closure(closure)
        with self._update_mode():
            for group in self.param_groups:
                lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
                weight_decay, momentum = group["weight_decay"], group["momentum"]
                arrays = self._arrays_allowed(group, lr, alpha, eps, weight_decay, momentum)
                for p in group["params"]:
                    if p._grad is None or arrays and self._arrays_update(p, group):
                        continue
                    grad = self._grad_of(p, group, weight_decay)
                    state = self._stepped_state(p, group)
                    square_avg = state["square_avg"]
                    square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
                    if group["centered"]:
                        grad_avg = state["grad_avg"]
                        grad_avg.add_(grad - grad_avg, alpha=1 - alpha)
                        avg = (square_avg - grad_avg * grad_avg).sqrt_()
                    else:
                        avg = square_avg.sqrt()
                    avg.add_(eps)
                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).add_(grad / avg)
                        p.add_(buf, alpha=-lr)
                    else:
                        p.add_(grad / avg, alpha=-lr)
        return loss

    def _arrays_update(self, p, group):
        """The update of ``p`` above on the arrays, where they allow it; returns whether it ran. See Note
        [Optimizer updates on arrays] in optimizer.py."""
        state = self._state_of(p, group)
        momentum, centered = group["momentum"], group["centered"]
        names = ("square_avg",) + (("momentum_buffer",) if momentum > 0 else ()) + (("grad_avg",) if centered else ())
        arrays = plain_arrays(p, state, names)
        s = plain_scalar(state.get("step"))
        if arrays is None or s is None:
            return False
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        a, g, square_avg = arrays[0], arrays[1], arrays[2]
        counters = counters_before_write([p, state["step"]] + [state[name] for name in names])
        g = grad_array(a, g, group["maximize"], group["weight_decay"])
        advance(s)
        counters[1].bump()
        np.multiply(square_avg, alpha, out=square_avg)
        counters[2].bump()
        scratch = np.multiply(g, g, out=scratch_like(a))
        add_(square_avg, scratch, 1 - alpha, scratch)
        counters[2].bump()
        if centered:
            grad_avg = arrays[-1]
            np.subtract(g, grad_avg, out=scratch)
            add_(grad_avg, scratch, 1 - alpha, scratch)
            counters[-1].bump()
            avg = np.subtract(square_avg, np.multiply(grad_avg, grad_avg, out=scratch), out=scratch)
            np.sqrt(avg, out=avg)
        else:
            avg = np.sqrt(square_avg, out=scratch)
        np.add(avg, eps, out=avg)
        if momentum > 0:
            buf = arrays[3]
            np.multiply(buf, momentum, out=buf)
            counters[3].bump()
            np.add(buf, np.divide(g, avg, out=avg), out=buf)
            counters[3].bump()
            add_(a, buf, -lr, scratch)
        else:
            add_(a, np.divide(g, avg, out=avg), -lr, avg)
        counters[0].bump()
        return True
