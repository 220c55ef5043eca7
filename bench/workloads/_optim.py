"""PyTorch's Adam, AdamW and SGD re-stated for the NumPy floors and the JAX columns (same formulas, same order)."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["NumpyAdam", "jax_trainer"]


class NumpyAdam:
    """``torch.optim.Adam`` (``decoupled=False``) or ``AdamW`` (``decoupled=True``) over NumPy arrays, in place."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
        self.params, self.lr, self.betas, self.eps = params, lr, betas, eps
        self.weight_decay, self.decoupled = weight_decay, decoupled
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads):
        self.t += 1
        b1, b2 = self.betas
        step_size = self.lr / (1 - b1 ** self.t)
        bias2_sqrt = math.sqrt(1 - b2 ** self.t)
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            if self.weight_decay and self.decoupled:
                p *= 1 - self.lr * self.weight_decay
            elif self.weight_decay:
                g = g + self.weight_decay * p
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            p -= step_size * m / (np.sqrt(v) / bias2_sqrt + self.eps)


def jax_trainer(jax, jnp, loss, arrays, data, pick, jit, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                decoupled=False, optimizer="adam"):
    """A ``step()`` for the JAX columns: gradient of ``loss(params, *data)``, then Adam/AdamW/SGD.

    ``step()`` returns the gradient of ``params[pick]`` (before the update), after
    ``jax.block_until_ready``; with ``jit`` the whole update is one ``jax.jit`` function.
    """
    dtype = arrays[0].dtype
    b1, b2 = betas

    def update(params, m, v, step_size, bias2_sqrt, *batch):
        grads = jax.grad(loss)(params, *batch)
        if optimizer == "sgd":
            return tuple(p - lr * g for p, g in zip(params, grads)), m, v, grads[pick]
        new_p, new_m, new_v = [], [], []
        for p, g, mi, vi in zip(params, grads, m, v):
            if weight_decay and decoupled:
                p = p * (1 - lr * weight_decay)
            elif weight_decay:
                g = g + weight_decay * p
            mi = b1 * mi + (1 - b1) * g
            vi = b2 * vi + (1 - b2) * g * g
            new_p.append(p - step_size * mi / (jnp.sqrt(vi) / bias2_sqrt + eps))
            new_m.append(mi)
            new_v.append(vi)
        return tuple(new_p), tuple(new_m), tuple(new_v), grads[pick]

    fn = jax.jit(update) if jit else update
    state = {"p": tuple(jnp.asarray(a) for a in arrays), "t": 0}
    state["m"] = tuple(jnp.zeros_like(p) for p in state["p"])
    state["v"] = tuple(jnp.zeros_like(p) for p in state["p"])
    batch = tuple(jnp.asarray(d) for d in data)

    def step():
        state["t"] += 1
        t = state["t"]
        # Bias corrections computed here in Python, passed in the parameters' dtype (no retracing, no promotion).
        step_size = jnp.asarray(lr / (1 - b1 ** t), dtype)
        bias2_sqrt = jnp.asarray(math.sqrt(1 - b2 ** t), dtype)
        state["p"], state["m"], state["v"], g = fn(state["p"], state["m"], state["v"], step_size, bias2_sqrt,
                                                    *batch)
        return jax.block_until_ready(g)
    return step
