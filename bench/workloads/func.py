"""W25 jacrev and W26 jacfwd: a Jacobian by ``func.jacrev`` and ``func.jacfwd``, against torch.func;
W28 vmap_jacfwd: W26's Jacobian at a batch of inputs by ``vmap(jacfwd)``.

Per-sample gradients by vmap are W20; a Hessian-vector product by forward-over-reverse is W27 (hvp.py).
"""
import numpy as np

from ._base import Workload

JACREV = Workload(
    "jacrev", "W25 jacrev",
    "MLP 32->64->32 (tanh), float64; the 32x32 Jacobian of its output in its input by jacrev",
    sizes={"full": {"reps": 20}, "quick": {"reps": 1}},
    unit="jacobian", count="reps", repeats=5)

JACFWD = Workload(
    "jacfwd", "W26 jacfwd",
    "the Jacobian of W25 by jacfwd (forward mode, the 32 basis tangents batched by vmap)",
    sizes={"full": {"reps": 20}, "quick": {"reps": 1}},
    unit="jacobian", count="reps", repeats=5)

VMAP_JACFWD = Workload(
    "vmap_jacfwd", "W28 vmap_jacfwd",
    "the Jacobians of W25's MLP at 16 inputs by vmap(jacfwd) (the basis tangents batched under the vmap)",
    sizes={"full": {"reps": 10, "batch": 16}, "quick": {"reps": 1, "batch": 2}},
    unit="batch", count="reps", repeats=5)


def _jac_data():
    rng = np.random.default_rng(15)
    return rng.standard_normal((32, 64)) / 6, rng.standard_normal((64, 32)) / 8, rng.standard_normal(32)


def _jacobian(lib, transform, p):
    w1a, w2a, xa = _jac_data()
    w1, w2, x = (lib.tensor(a, dtype=lib.float64) for a in (w1a, w2a, xa))
    jac = transform(lambda v: (v @ w1).tanh() @ w2)

    def step():
        for _ in range(p["reps"]):
            j = jac(x)
        return j
    return step


def _numpy(p):
    w1, w2, x = _jac_data()

    def step():
        for _ in range(p["reps"]):
            h = np.tanh(x @ w1)
            j = (w2.T * (1 - h ** 2)) @ w1.T
        return j
    return step


def _lib_builder(name, transform):
    def build(p):
        lib = __import__(name)
        if name == "torch":
            import torch.func  # noqa: F401
        return _jacobian(lib, getattr(lib.func, transform), p)
    return build


for _w, _t in ((JACREV, "jacrev"), (JACFWD, "jacfwd")):
    _w.impl("retrograd")(_lib_builder("retrograd", _t))
    _w.impl("torch")(_lib_builder("torch", _t))
    _w.impl("numpy")(_numpy)


def _batch(p):
    w1, w2, _ = _jac_data()
    return w1, w2, np.random.default_rng(16).standard_normal((p["batch"], 32))


def _vmap_jacfwd(name):
    def build(p):
        lib = __import__(name)
        if name == "torch":
            import torch.func  # noqa: F401
        w1, w2, xs = (lib.tensor(a, dtype=lib.float64) for a in _batch(p))
        jac = lib.func.vmap(lib.func.jacfwd(lambda v: (v @ w1).tanh() @ w2))

        def step():
            for _ in range(p["reps"]):
                j = jac(xs)
            return j
        return step
    return build


@VMAP_JACFWD.impl("numpy")
def _numpy_batch(p):
    w1, w2, xs = _batch(p)

    def step():
        for _ in range(p["reps"]):
            h = np.tanh(xs @ w1)
            j = (w2.T[None] * (1 - h ** 2)[:, None, :]) @ w1.T
        return j
    return step


VMAP_JACFWD.impl("retrograd")(_vmap_jacfwd("retrograd"))
VMAP_JACFWD.impl("torch")(_vmap_jacfwd("torch"))
