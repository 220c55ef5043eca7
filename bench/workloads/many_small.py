"""W6 many-small: thousands of separate tiny graphs; measures fixed cost per graph (build + backward)."""
import numpy as np

from ._base import Workload

W6 = Workload(
    "many_small", "W6 many-small",
    "`graphs` separate graphs (x * x).sum().backward() on one leaf x of shape (4,), float64 "
    "(x.grad reset before each); time per graph, build included",
    sizes={"full": {"graphs": 2000}, "quick": {"graphs": 20}},
    unit="graph", count="graphs", repeats=7)


def _x0():
    return np.array([0.5, -1.0, 2.0, 3.0])


@W6.impl("retrograd")
def _retrograd(p):
    import retrograd as rg
    x = rg.tensor(_x0(), dtype=rg.float64, requires_grad=True)
    n = p["graphs"]

    def step():
        for _ in range(n):
            x.grad = None
            (x * x).sum().backward()
        return x.grad
    return step


@W6.impl("torch")
def _torch(p):
    import torch
    x = torch.tensor(_x0(), dtype=torch.float64, requires_grad=True)
    n = p["graphs"]

    def step():
        for _ in range(n):
            x.grad = None
            (x * x).sum().backward()
        return x.grad
    return step


@W6.impl("autograd")
def _autograd(p):
    import autograd
    g = autograd.grad(lambda x: (x * x).sum())
    x = _x0()
    n = p["graphs"]

    def step():
        for _ in range(n):
            r = g(x)
        return r
    return step


@W6.impl("mygrad")
def _mygrad(p):
    import mygrad as mg
    x = mg.tensor(_x0())
    n = p["graphs"]

    def step():
        for _ in range(n):
            (x * x).sum().backward()
        return x.grad
    return step


@W6.impl("numpy")
def _numpy(p):
    x = _x0()
    n = p["graphs"]

    def step():
        for _ in range(n):
            y = x * x
            y.sum()
            gy = np.ones_like(y)  # sum's backward: broadcast the seed 1
            g = gy * x  # mul's backward for the first operand ...
            g = g + gy * x  # ... plus the second, summed into the leaf
        return g
    return step
