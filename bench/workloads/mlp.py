"""W2 mlp and W21 bigmlp: training-step compute of an MLP; BLAS-bound, so they measure what the engine adds.

W21 is W2's code at 1024-2048-2048-10 and batch 256: three GEMMs forward and five backward of
up to 256x2048x2048, so that the step is the BLAS's and the framework's own time is noise.
"""
import numpy as np

from ._base import Workload

W2 = Workload(
    "mlp", "W2 mlp",
    "float32, batch 128, 784-256-256-10 with relu, log_softmax + nll_loss; forward + backward of "
    "all weights per step (BLAS pinned to 1 thread everywhere)",
    sizes={"full": {"batch": 128, "sizes": (784, 256, 256, 10), "steps": 20},
           "quick": {"batch": 8, "sizes": (20, 16, 16, 10), "steps": 2}},
    unit="step", count="steps", repeats=7, rtol=1e-4, atol=1e-6)

W21 = Workload(
    "bigmlp", "W21 bigmlp",
    "float32, batch 256, 1024-2048-2048-10 with relu, log_softmax + nll_loss; forward + backward of all weights "
    "per step (BLAS pinned to 1 thread everywhere: BLAS-bound)",
    sizes={"full": {"batch": 256, "sizes": (1024, 2048, 2048, 10), "steps": 1},
           "quick": {"batch": 4, "sizes": (24, 32, 32, 10), "steps": 1}},
    unit="step", count="steps", repeats=5, rtol=1e-3, atol=1e-6)


def _data(p):
    rng = np.random.default_rng(2)
    sizes = p["sizes"]
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32))
        params.append((0.01 * rng.standard_normal(fan_out)).astype(np.float32))
    x = rng.standard_normal((p["batch"], sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], p["batch"])
    return params, x, y


def _mlp(params, x, relu):
    h = x
    last = len(params) // 2 - 1
    for k in range(0, len(params), 2):
        h = h @ params[k] + params[k + 1]
        if k // 2 < last:
            h = relu(h)
    return h


@W2.impl("retrograd")
def _retrograd(p):
    import retrograd as rg
    arrays, xa, ya = _data(p)
    params = [rg.tensor(a, requires_grad=True) for a in arrays]
    x = rg.tensor(xa)
    try:  # the library's own loss once it has one
        from retrograd.nn.functional import log_softmax, nll_loss
        y = rg.tensor(ya, dtype=rg.int64)

        def loss_fn(logits):
            return nll_loss(log_softmax(logits, dim=1), y)
    except ImportError:  # inline: log_softmax, then the label's entry by gather
        idx = rg.tensor(ya[:, None], dtype=rg.int64)

        def loss_fn(logits):
            return -rg.gather(rg.log_softmax(logits, dim=1), 1, idx).mean()

    def step():
        for _ in range(p["steps"]):
            for t in params:
                t.grad = None
            loss_fn(_mlp(params, x, rg.relu)).backward()
        return params[0].grad
    return step


@W2.impl("torch")
def _torch(p):
    import torch
    import torch.nn.functional as F
    arrays, xa, ya = _data(p)
    params = [torch.tensor(a, requires_grad=True) for a in arrays]
    x = torch.tensor(xa)
    y = torch.tensor(ya)

    def step():
        for _ in range(p["steps"]):
            for t in params:
                t.grad = None
            F.nll_loss(F.log_softmax(_mlp(params, x, torch.relu), dim=1), y).backward()
        return params[0].grad
    return step


@W2.impl("autograd")
def _autograd(p):
    import autograd
    import autograd.numpy as anp
    params, x, y = _data(p)
    rows = np.arange(len(y))

    def loss(params):
        z = _mlp(params, x, lambda h: anp.maximum(h, 0.0))
        m = anp.max(z, axis=1, keepdims=True)
        logp = z - m - anp.log(anp.sum(anp.exp(z - m), axis=1, keepdims=True))
        return -anp.mean(logp[rows, y])
    g = autograd.grad(loss)

    def step():
        for _ in range(p["steps"]):
            grads = g(params)
        return grads[0]
    return step


@W2.impl("mygrad")
def _mygrad(p):
    import mygrad as mg
    arrays, x, y = _data(p)
    params = [mg.tensor(a) for a in arrays]
    rows = np.arange(len(y))

    def step():
        for _ in range(p["steps"]):
            logp = mg.nnet.logsoftmax(_mlp(params, x, mg.nnet.relu), axis=1)
            (-logp[rows, y].mean()).backward()
        return params[0].grad
    return step


@W2.impl("numpy")
def _numpy(p):
    params, x, y = _data(p)
    rows = np.arange(len(y))
    n = len(y)

    def step():
        for _ in range(p["steps"]):
            # Forward, keeping each layer's input and pre-activation.
            inputs, pre = [], []
            h = x
            last = len(params) // 2 - 1
            for k in range(0, len(params), 2):
                inputs.append(h)
                h = h @ params[k] + params[k + 1]
                pre.append(h)
                if k // 2 < last:
                    h = np.maximum(h, 0)
            m = h.max(axis=1, keepdims=True)
            e = np.exp(h - m)
            s = e.sum(axis=1, keepdims=True)
            logp = h - m - np.log(s)
            -logp[rows, y].mean()
            # Backward: d loss / d logits = (softmax - onehot) / n, then each layer in reverse.
            d = e / s
            d[rows, y] -= 1
            d /= n
            grads = [None] * len(params)
            for layer in range(len(params) // 2 - 1, -1, -1):
                if layer < last:
                    d = d * (pre[layer] > 0)
                grads[2 * layer] = inputs[layer].T @ d
                grads[2 * layer + 1] = d.sum(axis=0)
                if layer:
                    d = d @ params[2 * layer].T
        return grads[0]
    return step


def _jax_builder(jit):
    def build(p):
        from .. import frameworks as fws
        jax, jnp = fws.import_jax()
        arrays, xa, ya = _data(p)
        params = [jnp.asarray(a) for a in arrays]
        x, y = jnp.asarray(xa), jnp.asarray(ya)

        def loss(params, x, y):
            logp = jax.nn.log_softmax(_mlp(params, x, jax.nn.relu), axis=1)
            return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()
        g = jax.grad(loss)
        if jit:
            g = jax.jit(g)

        def step():
            for _ in range(p["steps"]):
                grads = g(params, x, y)
            return jax.block_until_ready(grads[0])
        return step
    return build


W2.impl("jax")(_jax_builder(False))
W2.impl("jaxjit")(_jax_builder(True))
W21.builders = W2.builders  # the same code at other sizes
