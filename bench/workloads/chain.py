"""W1 chain: a long chain of tiny pointwise ops; measures per-op overhead, forward and backward."""
import numpy as np

from ._base import Workload

W1 = Workload(
    "chain", "W1 chain",
    "x of shape (16,), float64; `steps` times y = y * 1.0001 + 0.0001 with a tanh every 10th step; "
    "y.sum().backward()",
    sizes={"full": {"steps": 20_000}, "quick": {"steps": 200}},
    unit="run", repeats=5)

A, B = 1.0001, 0.0001


def _x0():
    return np.linspace(-1.0, 1.0, 16)


def _graph(x, steps, tanh):
    y = x
    for i in range(steps):
        y = y * A + B
        if i % 10 == 9:
            y = tanh(y)
    return y


@W1.impl("retrograd")
def _retrograd(p):
    import retrograd as rg
    x = rg.tensor(_x0(), dtype=rg.float64, requires_grad=True)
    steps = p["steps"]

    def step():
        x.grad = None
        _graph(x, steps, rg.tanh).sum().backward()
        return x.grad
    return step


@W1.impl("torch")
def _torch(p):
    import torch
    x = torch.tensor(_x0(), dtype=torch.float64, requires_grad=True)
    steps = p["steps"]

    def step():
        x.grad = None
        _graph(x, steps, torch.tanh).sum().backward()
        return x.grad
    return step


@W1.impl("autograd")
def _autograd(p):
    import autograd
    import autograd.numpy as anp
    steps = p["steps"]
    g = autograd.grad(lambda x: anp.sum(_graph(x, steps, anp.tanh)))
    x = _x0()
    return lambda: g(x)


@W1.impl("mygrad")
def _mygrad(p):
    import mygrad as mg
    x = mg.tensor(_x0())
    steps = p["steps"]

    def step():
        _graph(x, steps, mg.tanh).sum().backward()
        return x.grad
    return step


@W1.impl("numpy")
def _numpy(p):
    x = _x0()
    steps = p["steps"]

    def step():
        # Forward, keeping what the backward needs: each tanh's output.
        saved = []
        y = x
        for i in range(steps):
            y = y * A + B
            if i % 10 == 9:
                y = np.tanh(y)
                saved.append(y)
        # Backward, node by node in reverse: d(y*A+B) = A, d tanh = 1 - t^2.
        g = np.ones_like(y)
        for i in range(steps - 1, -1, -1):
            if i % 10 == 9:
                t = saved.pop()
                g = g * (1.0 - t * t)
            g = g * A
        return g
    return step
