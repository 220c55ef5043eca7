"""Function transforms: per-sample gradients by vmap(grad) and a Jacobian by jacrev, against torch.func."""
import numpy as np

from ._base import Workload

PERSAMPLE = Workload(
    "persample_vmap", "per-sample grads (vmap)",
    "MLP 32-64-10 (tanh), float32, batch 64; per-sample gradients of the cross-entropy of every parameter by "
    "vmap(grad(loss), in_dims=(None, 0, 0))",
    sizes={"full": {"batch": 64, "reps": 10}, "quick": {"batch": 4, "reps": 1}},
    unit="batch", count="reps", repeats=5, rtol=1e-4, atol=1e-6)

JACREV = Workload(
    "jacrev", "jacrev MLP",
    "MLP 32->64->32 (tanh), float64; the 32x32 Jacobian of its output in its input by jacrev",
    sizes={"full": {"reps": 20}, "quick": {"reps": 1}},
    unit="jacobian", count="reps", repeats=5)


def _mlp_data(p):
    rng = np.random.default_rng(14)
    params = {"w1": rng.standard_normal((32, 64)) / 6, "b1": rng.standard_normal(64) / 10,
              "w2": rng.standard_normal((64, 10)) / 8, "b2": rng.standard_normal(10) / 10}
    x = rng.standard_normal((p["batch"], 32))
    y = rng.integers(0, 10, p["batch"])
    return params, x, y


def _persample(lib, func, p):
    params, xa, ya = _mlp_data(p)
    params = {k: lib.tensor(v, dtype=lib.float32) for k, v in params.items()}
    x, y = lib.tensor(xa, dtype=lib.float32), lib.tensor(ya)

    def loss(q, xs, ys):
        h = (xs @ q["w1"] + q["b1"]).tanh()
        return lib.nn.functional.cross_entropy((h @ q["w2"] + q["b2"]).unsqueeze(0), ys.unsqueeze(0))

    per_sample = func.vmap(func.grad(loss), in_dims=(None, 0, 0))

    def step():
        for _ in range(p["reps"]):
            g = per_sample(params, x, y)
        return g["w1"]
    return step


@PERSAMPLE.impl("retrograd")
def _persample_retrograd(p):
    import retrograd as rg
    return _persample(rg, rg.func, p)


@PERSAMPLE.impl("torch")
def _persample_torch(p):
    import torch
    import torch.func
    return _persample(torch, torch.func, p)


def _jac_data():
    rng = np.random.default_rng(15)
    return rng.standard_normal((32, 64)) / 6, rng.standard_normal((64, 32)) / 8, rng.standard_normal(32)


def _jacrev(lib, func, p):
    w1a, w2a, xa = _jac_data()
    w1, w2, x = (lib.tensor(a, dtype=lib.float64) for a in (w1a, w2a, xa))
    jac = func.jacrev(lambda v: (v @ w1).tanh() @ w2)

    def step():
        for _ in range(p["reps"]):
            j = jac(x)
        return j
    return step


@JACREV.impl("retrograd")
def _jacrev_retrograd(p):
    import retrograd as rg
    return _jacrev(rg, rg.func, p)


@JACREV.impl("torch")
def _jacrev_torch(p):
    import torch
    import torch.func
    return _jacrev(torch, torch.func, p)


@JACREV.impl("numpy")
def _jacrev_numpy(p):
    w1, w2, x = _jac_data()

    def step():
        for _ in range(p["reps"]):
            h = np.tanh(x @ w1)
            j = (w2.T * (1 - h ** 2)) @ w1.T
        return j
    return step
