"""W19 persample and W20 persample_vmap: per-sample gradients of a small MLP's loss.

W19 is a Python loop over the batch, one ``autograd.grad`` of a one-sample cross-entropy per
example, on every framework (retrograd, PyTorch, HIPS autograd, JAX eager and jit-compiled per
sample). W20 is the same gradients by ``vmap(grad)`` (``retrograd.func``, ``torch.func`` and
JAX). The NumPy floor of both is the batched closed form.
"""
import numpy as np

from ._base import Skip, Workload

_SIZES = {"full": {"batch": 64, "sizes": (32, 64, 10)}, "quick": {"batch": 3, "sizes": (4, 5, 3)}}

W19 = Workload(
    "persample", "W19 persample",
    "float32 per-sample gradients by a Python loop: for each of 64 examples, autograd.grad of the cross-entropy of a "
    "32-64-10 relu MLP on that one example w.r.t. the 4 parameters; the 64 weight gradients stacked",
    sizes=_SIZES, unit="batch", repeats=5, rtol=1e-4, atol=1e-6)

W20 = Workload(
    "persample_vmap", "W20 persample_vmap",
    "the per-sample gradients of W19 by vmap(grad) over the batch (retrograd.func.vmap, torch.func.vmap, jax.vmap)",
    sizes=_SIZES, unit="batch", repeats=5, rtol=1e-4, atol=1e-6)


def _data(p):
    rng = np.random.default_rng(19)
    n, h, k = p["sizes"]
    arrays = [rng.standard_normal((n, h)) / np.sqrt(n), 0.1 * rng.standard_normal(h),
              rng.standard_normal((h, k)) / np.sqrt(h), 0.1 * rng.standard_normal(k)]
    x = rng.standard_normal((p["batch"], n))
    y = rng.integers(0, k, p["batch"])
    return [a.astype(np.float32) for a in arrays], x.astype(np.float32), y


def _mlp(params, x, relu):
    w1, b1, w2, b2 = params
    return relu(x @ w1 + b1) @ w2 + b2


def _lib_builder(name):
    def build(p):
        lib = __import__(name)
        F = lib.nn.functional
        arrays, xa, ya = _data(p)
        params = [lib.tensor(a, requires_grad=True) for a in arrays]
        x = lib.tensor(xa)
        y = lib.tensor(ya, dtype=lib.int64)

        def step():
            grads = []
            for i in range(p["batch"]):
                loss = F.cross_entropy(_mlp(params, x[i:i + 1], lib.relu), y[i:i + 1])
                grads.append(lib.autograd.grad(loss, params)[0])
            return lib.stack(grads)
        return step
    return build


W19.impl("retrograd")(_lib_builder("retrograd"))
W19.impl("torch")(_lib_builder("torch"))


@W19.impl("autograd")
def _autograd(p):
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp
    params, x, y = _data(p)

    def loss(params, xi, yi):
        z = _mlp(params, xi, lambda h: anp.maximum(h, 0.0))
        return logsumexp(z) - z[yi]
    g = autograd.grad(loss)

    def step():
        return np.stack([g(params, x[i], y[i])[0] for i in range(p["batch"])])
    return step


def _jax_loss(jax, jnp):
    def loss(params, xi, yi):
        z = _mlp(params, xi, jax.nn.relu)
        return jax.nn.logsumexp(z) - z[yi]
    return loss


def _jax_builder(vmap, jit):
    def build(p):
        from .. import frameworks as fws
        jax, jnp = fws.import_jax()
        arrays, xa, ya = _data(p)
        params = [jnp.asarray(a) for a in arrays]
        x, y = jnp.asarray(xa), jnp.asarray(ya)
        g = jax.grad(_jax_loss(jax, jnp))
        if vmap:
            g = jax.vmap(g, in_axes=(None, 0, 0))
        if jit:
            g = jax.jit(g)

        def step():
            if vmap:
                return jax.block_until_ready(g(params, x, y)[0])
            return jax.block_until_ready(jnp.stack([g(params, x[i], y[i])[0] for i in range(p["batch"])]))
        return step
    return build


W19.impl("jax")(_jax_builder(False, False))
W19.impl("jaxjit")(_jax_builder(False, True))
W20.impl("jax")(_jax_builder(True, False))
W20.impl("jaxjit")(_jax_builder(True, True))


def _vmap_builder(name):
    def build(p):
        lib = __import__(name)
        if not hasattr(lib, "func"):
            raise Skip(f"this {name} has no {name}.func")
        F = lib.nn.functional
        arrays, xa, ya = _data(p)
        params = tuple(lib.tensor(a) for a in arrays)
        x, y = lib.tensor(xa), lib.tensor(ya, dtype=lib.int64)

        def loss(params, xi, yi):
            return F.cross_entropy(_mlp(params, xi[None], lib.relu), yi[None])
        g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))

        def step():
            return g(params, x, y)[0]
        return step
    return build


W20.impl("retrograd")(_vmap_builder("retrograd"))
W20.impl("torch")(_vmap_builder("torch"))


def _numpy(p):
    (w1, b1, w2, b2), x, y = _data(p)
    rows = np.arange(p["batch"])

    def step():
        pre = x @ w1 + b1
        z = np.maximum(pre, 0) @ w2 + b2
        e = np.exp(z - z.max(axis=1, keepdims=True))
        d = e / e.sum(axis=1, keepdims=True)
        d[rows, y] -= 1  # each example's own loss: no 1/n
        dh = (d @ w2.T) * (pre > 0)
        return x[:, :, None] * dh[:, None, :]
    return step


W19.impl("numpy")(_numpy)
W20.impl("numpy")(_numpy)
