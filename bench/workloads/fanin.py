"""W3 fan-in: many small reductions summed into one scalar; the gradient of x arrives over many edges."""
import numpy as np

from ._base import Workload

W3 = Workload(
    "fanin", "W3 fan-in",
    "x of shape (64,), float64; total = sum over i < `terms` of (x * i).sum() as a Python running "
    "sum; total.backward()",
    sizes={"full": {"terms": 2000}, "quick": {"terms": 50}},
    unit="run", repeats=7)


def _x0():
    return np.linspace(-1.0, 1.0, 64)


def _graph(x, terms):
    total = 0
    for i in range(terms):
        total = total + (x * i).sum()
    return total


@W3.impl("retrograd")
def _retrograd(p):
    import retrograd as rg
    x = rg.tensor(_x0(), dtype=rg.float64, requires_grad=True)

    def step():
        x.grad = None
        _graph(x, p["terms"]).backward()
        return x.grad
    return step


@W3.impl("torch")
def _torch(p):
    import torch
    x = torch.tensor(_x0(), dtype=torch.float64, requires_grad=True)

    def step():
        x.grad = None
        _graph(x, p["terms"]).backward()
        return x.grad
    return step


@W3.impl("autograd")
def _autograd(p):
    import autograd
    g = autograd.grad(lambda x: _graph(x, p["terms"]))
    x = _x0()
    return lambda: g(x)


@W3.impl("mygrad")
def _mygrad(p):
    import mygrad as mg
    x = mg.tensor(_x0())

    def step():
        _graph(x, p["terms"]).backward()
        return x.grad
    return step


@W3.impl("numpy")
def _numpy(p):
    x = _x0()
    terms = p["terms"]

    def step():
        total = 0.0
        for i in range(terms):
            total = total + (x * i).sum()
        # Backward of each term: the sum broadcasts 1 back, the mul scales it by i; the edges
        # into x are summed one by one, as an engine's input buffer does.
        g = np.zeros_like(x)
        ones = np.ones_like(x)
        for i in range(terms - 1, -1, -1):
            g += ones * i
        return g
    return step
