"""W17 jacobian and W18 hessian: ``autograd.functional.jacobian`` and ``hessian`` of small functions.

Both run the library's own function (retrograd.autograd.functional vs torch.autograd.functional,
default ``vectorize=False``: one backward per output row), HIPS autograd's ``jacobian`` and
``hessian``, JAX's ``jacrev`` and ``hessian``; the NumPy floor is the closed form.
"""
import numpy as np

from ._base import Workload

W17 = Workload(
    "jacobian", "W17 jacobian",
    "float64, autograd.functional.jacobian of f(x) = tanh(x @ W1 + b1) @ W2 + b2, a 32->64->32 MLP, at x of shape "
    "(32,): a 32x32 Jacobian; `reps` Jacobians per sample",
    sizes={"full": {"n": 32, "hidden": 64, "reps": 20}, "quick": {"n": 4, "hidden": 6, "reps": 2}},
    unit="jacobian", count="reps", repeats=5, rtol=1e-9, atol=1e-12)

W18 = Workload(
    "hessian", "W18 hessian",
    "float64, autograd.functional.hessian of f(x) = tanh(x @ W1 + b1) @ w2, a 16->32->1 MLP (a scalar), at x of "
    "shape (16,): a 16x16 Hessian; `reps` Hessians per sample",
    sizes={"full": {"n": 16, "hidden": 32, "reps": 20}, "quick": {"n": 3, "hidden": 5, "reps": 2}},
    unit="hessian", count="reps", repeats=5, rtol=1e-9, atol=1e-12)


def _data(p, outputs):
    rng = np.random.default_rng(17)
    n, h = p["n"], p["hidden"]
    w1 = rng.standard_normal((n, h)) / np.sqrt(n)
    b1 = 0.1 * rng.standard_normal(h)
    w2 = rng.standard_normal((h, outputs) if outputs else h) / np.sqrt(h)
    b2 = 0.1 * rng.standard_normal(outputs) if outputs else None
    return w1, b1, w2, b2, rng.standard_normal(n)


def _arrays(p, key):
    return _data(p, p["n"] if key == "jacobian" else 0)


def _func(key, tanh, w1, b1, w2, b2):
    if key == "jacobian":
        return lambda x: tanh(x @ w1 + b1) @ w2 + b2
    return lambda x: tanh(x @ w1 + b1) @ w2


def _lib_builder(name, key):
    def build(p):
        lib = __import__(name)
        w1, b1, w2, b2, xa = (None if a is None else lib.tensor(a, dtype=lib.float64) for a in _arrays(p, key))
        f = _func(key, lib.tanh, w1, b1, w2, b2)
        op = getattr(lib.autograd.functional, key)

        def step():
            for _ in range(p["reps"]):
                out = op(f, xa)
            return out
        return step
    return build


def _autograd_builder(key):
    def build(p):
        import autograd
        import autograd.numpy as anp
        w1, b1, w2, b2, x = _arrays(p, key)
        op = getattr(autograd, key)(_func(key, anp.tanh, w1, b1, w2, b2))

        def step():
            for _ in range(p["reps"]):
                out = op(x)
            return out
        return step
    return build


def _jax_builder(key, jit):
    def build(p):
        from .. import frameworks as fws
        jax, jnp = fws.import_jax()
        w1, b1, w2, b2, x = (None if a is None else jnp.asarray(a) for a in _arrays(p, key))
        op = (jax.jacrev if key == "jacobian" else jax.hessian)(_func(key, jnp.tanh, w1, b1, w2, b2))
        if jit:
            op = jax.jit(op)

        def step():
            for _ in range(p["reps"]):
                out = jax.block_until_ready(op(x))
            return out
        return step
    return build


def _numpy_builder(key):
    def build(p):
        w1, b1, w2, b2, x = _arrays(p, key)

        def step():
            for _ in range(p["reps"]):
                h = np.tanh(x @ w1 + b1)
                if key == "jacobian":  # J = W2^T diag(1 - h^2) W1^T
                    h @ w2 + b2
                    out = (w2.T * (1 - h * h)) @ w1.T
                else:  # H = W1 diag(w2 (-2 h (1 - h^2))) W1^T
                    h @ w2
                    out = (w1 * (w2 * (-2 * h * (1 - h * h)))) @ w1.T
            return out
        return step
    return build


for _w in (W17, W18):
    _w.impl("retrograd")(_lib_builder("retrograd", _w.key))
    _w.impl("torch")(_lib_builder("torch", _w.key))
    _w.impl("autograd")(_autograd_builder(_w.key))
    _w.impl("jax")(_jax_builder(_w.key, False))
    _w.impl("jaxjit")(_jax_builder(_w.key, True))
    _w.impl("numpy")(_numpy_builder(_w.key))
