"""W4 hvp: a Hessian-vector product by double backward; measures create_graph and second-order graphs.

W27 hvp_fwdrev is the same product by forward-over-reverse, ``jvp(grad(f), (x,), (v,))`` of the
function transforms (``retrograd.func``, ``torch.func``): the recipe torch.func recommends.
"""
import numpy as np

from ._base import Workload

W4 = Workload(
    "hvp", "W4 hvp",
    "x of shape (256,), fixed W (256x256), float64; f(x) = tanh(W @ x).sum(); H v by double backward "
    "(grad with create_graph, then grad of (g * v).sum())",
    sizes={"full": {"n": 256, "reps": 50}, "quick": {"n": 8, "reps": 2}},
    unit="hvp", count="reps", repeats=7)

W27 = Workload(
    "hvp_fwdrev", "W27 hvp_fwdrev",
    "the H v of W4 by forward-over-reverse: jvp(grad(f), (x,), (v,)) (retrograd.func, torch.func)",
    sizes={"full": {"n": 256, "reps": 50}, "quick": {"n": 8, "reps": 2}},
    unit="hvp", count="reps", repeats=7)


def _data(p):
    rng = np.random.default_rng(4)
    n = p["n"]
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n), rng.standard_normal(n)


@W4.impl("retrograd")
def _retrograd(p):
    import retrograd as rg
    wa, xa, va = _data(p)
    w, v = rg.tensor(wa, dtype=rg.float64), rg.tensor(va, dtype=rg.float64)
    x = rg.tensor(xa, dtype=rg.float64, requires_grad=True)

    def step():
        for _ in range(p["reps"]):
            (g,) = rg.autograd.grad(rg.tanh(w @ x).sum(), x, create_graph=True)
            (hv,) = rg.autograd.grad((g * v).sum(), x)
        return hv
    return step


@W4.impl("torch")
def _torch(p):
    import torch
    wa, xa, va = _data(p)
    w, v = torch.tensor(wa), torch.tensor(va)
    x = torch.tensor(xa, requires_grad=True)

    def step():
        for _ in range(p["reps"]):
            (g,) = torch.autograd.grad(torch.tanh(w @ x).sum(), x, create_graph=True)
            (hv,) = torch.autograd.grad((g * v).sum(), x)
        return hv
    return step


@W4.impl("autograd")
def _autograd(p):
    import autograd
    import autograd.numpy as anp
    w, x, v = _data(p)
    hvp = autograd.hessian_vector_product(lambda x: anp.sum(anp.tanh(anp.dot(w, x))))

    def step():
        for _ in range(p["reps"]):
            hv = hvp(x, v)
        return hv
    return step


W4.notes["mygrad"] = "MyGrad has no higher-order derivatives (no create_graph)"


def _fwdrev_builder(name):
    def build(p):
        lib = __import__(name)
        if name == "torch":
            import torch.func  # noqa: F401
        wa, xa, va = _data(p)
        w, x, v = (lib.tensor(a, dtype=lib.float64) for a in (wa, xa, va))
        fn = lib.func

        def hvp(f, primals, tangents):  # torch.func's recipe
            return fn.jvp(fn.grad(f), primals, tangents)[1]

        def step():
            for _ in range(p["reps"]):
                hv = hvp(lambda x: lib.tanh(w @ x).sum(), (x,), (v,))
            return hv
        return step
    return build


W27.impl("retrograd")(_fwdrev_builder("retrograd"))
W27.impl("torch")(_fwdrev_builder("torch"))


@W4.impl("numpy")
@W27.impl("numpy")
def _numpy(p):
    w, x, v = _data(p)

    def step():
        for _ in range(p["reps"]):
            t = np.tanh(w @ x)
            s = 1.0 - t * t
            w.T @ s  # the gradient, as the first backward computes it
            hv = w.T @ (-2.0 * t * s * (w @ v))  # its derivative along v
        return hv
    return step
