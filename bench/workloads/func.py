"""W25 jacrev: a Jacobian by ``func.jacrev``, against torch.func (per-sample gradients by vmap are W20)."""
import numpy as np

from ._base import Workload

JACREV = Workload(
    "jacrev", "W25 jacrev",
    "MLP 32->64->32 (tanh), float64; the 32x32 Jacobian of its output in its input by jacrev",
    sizes={"full": {"reps": 20}, "quick": {"reps": 1}},
    unit="jacobian", count="reps", repeats=5)


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
