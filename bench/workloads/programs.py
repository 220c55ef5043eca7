"""W22 polyfit, W23 vae, W24 makemore: training steps of three well-known small PyTorch programs.

- polyfit: the PyTorch tutorial's ``y = a + b x + c x^2 + d x^3`` fit of sin on 2000 points,
  ``nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1))``, ``MSELoss(reduction="sum")``, SGD.
- vae: pytorch/examples' VAE (as ``examples/vae.py``, which is bound to retrograd, so a compact
  equal copy here) on 8x8 images, with its noise drawn once up front so that all sides agree.
- makemore: Karpathy's makemore GRU language model (its own ``GRUCell`` of three Linears,
  a learned start state, ``ignore_index=-1`` padding), AdamW.

``--only programs`` runs the three. PyTorch (1 thread) is the reference of the check of vae and
makemore (no NumPy floor); polyfit has one.
"""
import math

import numpy as np

from ._base import Workload
from ._optim import jax_trainer

W22 = Workload(
    "polyfit", "W22 polyfit",
    "float32, the PyTorch tutorial's polynomial fit: x^1..x^3 of 2000 points in [-pi, pi] -> nn.Linear(3, 1) -> "
    "Flatten(0, 1), MSELoss(reduction='sum') against sin(x), SGD lr 1e-6; `iters` steps per sample",
    sizes={"full": {"points": 2000, "iters": 100}, "quick": {"points": 20, "iters": 2}},
    unit="step", count="iters", repeats=5, rtol=1e-3, atol=1e-3)

W23 = Workload(
    "vae", "W23 vae",
    "float32 VAE step (pytorch/examples' model): 64 -> 128 relu -> (mu, logvar) 8 -> reparameterize with fixed noise "
    "-> 128 relu -> 64 sigmoid, summed BCE + KL, batch 128, Adam",
    sizes={"full": {"batch": 128, "pixels": 64, "hidden": 128, "latent": 8},
           "quick": {"batch": 4, "pixels": 6, "hidden": 5, "latent": 2}},
    unit="step", repeats=5, rtol=2e-3, atol=1e-4)

W24 = Workload(
    "makemore", "W24 makemore",
    "float32 makemore GRU step: embedding (vocab 27, 64), makemore's GRUCell (hidden 64) over 16 positions of a batch "
    "of 32 names padded with ignore_index -1, linear head, cross-entropy, AdamW",
    sizes={"full": {"vocab": 27, "embed": 64, "hidden": 64, "block": 16, "batch": 32},
           "quick": {"vocab": 7, "embed": 4, "hidden": 5, "block": 3, "batch": 2}},
    unit="step", repeats=5, rtol=2e-3, atol=1e-6)

POLY_LR = 1e-6


def _poly_data(p):
    x = np.linspace(-math.pi, math.pi, p["points"]).astype(np.float32)
    xx = x[:, None] ** np.array([1, 2, 3], np.float32)
    rng = np.random.default_rng(22)
    w = rng.uniform(-1 / math.sqrt(3), 1 / math.sqrt(3), (1, 3)).astype(np.float32)
    b = rng.uniform(-1 / math.sqrt(3), 1 / math.sqrt(3), (1,)).astype(np.float32)
    return [w, b], xx, np.sin(x)


def _poly_lib(name):
    def build(p):
        lib = __import__(name)
        nn = lib.nn
        (w, b), xxa, ya = _poly_data(p)
        model = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1))
        model.load_state_dict({"0.weight": lib.tensor(w), "0.bias": lib.tensor(b)})
        xx, y = lib.tensor(xxa), lib.tensor(ya)
        loss_fn = nn.MSELoss(reduction="sum")
        opt = lib.optim.SGD(model.parameters(), lr=POLY_LR)

        def step():
            for _ in range(p["iters"]):
                loss = loss_fn(model(xx), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            return model[0].weight.grad
        return step
    return build


@W22.impl("numpy")
def _poly_numpy(p):
    (w, b), xx, y = _poly_data(p)

    def step():
        for _ in range(p["iters"]):
            r = (xx @ w.T + b).reshape(-1) - y
            (r * r).sum()
            d = 2 * r
            gw, gb = (d @ xx)[None], d.sum(keepdims=True)
            w[...] -= POLY_LR * gw
            b[...] -= POLY_LR * gb
        return gw
    return step


def _poly_jax(jit):
    def build(p):
        from .. import frameworks as fws
        jax, jnp = fws.import_jax()
        arrays, xx, y = _poly_data(p)

        def loss(params, xx, y):
            w, b = params
            r = (xx @ w.T + b).reshape(-1) - y
            return (r * r).sum()
        inner = jax_trainer(jax, jnp, loss, arrays, (xx, y), pick=0, jit=jit, lr=POLY_LR, optimizer="sgd")

        def step():
            for _ in range(p["iters"]):
                g = inner()
            return g
        return step
    return build


W22.impl("retrograd")(_poly_lib("retrograd"))
W22.impl("torch")(_poly_lib("torch"))
W22.impl("jax")(_poly_jax(False))
W22.impl("jaxjit")(_poly_jax(True))


def _vae_data(p):
    rng = np.random.default_rng(23)
    px, h, z = p["pixels"], p["hidden"], p["latent"]
    arrays = {}
    for name, (fan_in, fan_out) in (("fc1", (px, h)), ("fc21", (h, z)), ("fc22", (h, z)), ("fc3", (z, h)),
                                    ("fc4", (h, px))):
        bound = 1 / math.sqrt(fan_in)
        arrays[name + ".weight"] = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        arrays[name + ".bias"] = rng.uniform(-bound, bound, (fan_out,)).astype(np.float32)
    x = rng.uniform(0, 1, (p["batch"], px)).astype(np.float32)
    eps = rng.standard_normal((p["batch"], z)).astype(np.float32)
    return arrays, x, eps


def _vae_lib(name):
    def build(p):
        lib = __import__(name)
        nn, F = lib.nn, lib.nn.functional
        arrays, xa, epsa = _vae_data(p)
        px, h, zd = p["pixels"], p["hidden"], p["latent"]

        class VAE(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(px, h)
                self.fc21 = nn.Linear(h, zd)
                self.fc22 = nn.Linear(h, zd)
                self.fc3 = nn.Linear(zd, h)
                self.fc4 = nn.Linear(h, px)

            def forward(self, x, eps):
                h1 = F.relu(self.fc1(x.view(-1, px)))
                mu, logvar = self.fc21(h1), self.fc22(h1)
                z = mu + eps * lib.exp(0.5 * logvar)
                return lib.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar

        model = VAE()
        model.load_state_dict({k: lib.tensor(a) for k, a in arrays.items()})
        x, eps = lib.tensor(xa), lib.tensor(epsa)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)

        def step():
            opt.zero_grad()
            recon, mu, logvar = model(x, eps)
            bce = F.binary_cross_entropy(recon, x.view(-1, px), reduction="sum")
            kld = -0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
            (bce + kld).backward()
            opt.step()
            return model.fc1.weight.grad
        return step
    return build


def _vae_jax(jit):
    def build(p):
        from .. import frameworks as fws
        jax, jnp = fws.import_jax()
        arrays, x, eps = _vae_data(p)
        names = list(arrays)

        def loss(params, x, eps):
            P = dict(zip(names, params))

            def lin(n, a):
                return a @ P[n + ".weight"].T + P[n + ".bias"]
            h1 = jax.nn.relu(lin("fc1", x))
            mu, logvar = lin("fc21", h1), lin("fc22", h1)
            recon = jax.nn.sigmoid(lin("fc4", jax.nn.relu(lin("fc3", mu + eps * jnp.exp(0.5 * logvar)))))
            # PyTorch's binary_cross_entropy clamps each log at -100.
            bce = -(x * jnp.maximum(jnp.log(recon), -100) + (1 - x) * jnp.maximum(jnp.log(1 - recon), -100)).sum()
            return bce - 0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar))
        return jax_trainer(jax, jnp, loss, list(arrays.values()), (x, eps), pick=0, jit=jit, lr=1e-3)
    return build


W23.impl("retrograd")(_vae_lib("retrograd"))
W23.impl("torch")(_vae_lib("torch"))
W23.impl("jax")(_vae_jax(False))
W23.impl("jaxjit")(_vae_jax(True))

MM_LR, MM_BETAS, MM_WD = 5e-4, (0.9, 0.99), 0.01


def _mm_data(p):
    """makemore's parameters by name, inputs (start token 0, then the name) and targets (-1 past the end)."""
    rng = np.random.default_rng(24)
    v, e, h, t = p["vocab"], p["embed"], p["hidden"], p["block"]
    arrays = {"start": np.zeros((1, h), np.float32), "wte.weight": rng.standard_normal((v, e)).astype(np.float32)}
    bound = 1 / math.sqrt(e + h)
    for n in ("xz_to_z", "xh_to_r", "xh_to_hbar"):
        arrays[f"cell.{n}.weight"] = rng.uniform(-bound, bound, (h, e + h)).astype(np.float32)
        arrays[f"cell.{n}.bias"] = rng.uniform(-bound, bound, (h,)).astype(np.float32)
    bound = 1 / math.sqrt(h)
    arrays["lm_head.weight"] = rng.uniform(-bound, bound, (v, h)).astype(np.float32)
    arrays["lm_head.bias"] = rng.uniform(-bound, bound, (v,)).astype(np.float32)
    names = rng.integers(1, v, (p["batch"], t))
    lengths = rng.integers(max(t // 4, 1), t, p["batch"])
    x = np.zeros((p["batch"], t), np.int64)
    y = np.full((p["batch"], t), -1, np.int64)
    for i, n in enumerate(lengths):
        x[i, 1:n + 1] = names[i, :n]
        y[i, :n] = names[i, :n]
        y[i, n] = 0  # the end token
    return arrays, x, y


def make_makemore(lib, p):
    """``(loss, params by name, optimizer)`` of makemore on ``lib`` (retrograd or torch): ``loss()`` runs the forward."""
    nn, F = lib.nn, lib.nn.functional
    arrays, xa, ya = _mm_data(p)
    e, h = p["embed"], p["hidden"]

    class GRUCell(nn.Module):
        def __init__(self):
            super().__init__()
            self.xz_to_z = nn.Linear(e + h, h)
            self.xh_to_r = nn.Linear(e + h, h)
            self.xh_to_hbar = nn.Linear(e + h, h)

        def forward(self, xt, hprev):
            xh = lib.cat([xt, hprev], dim=1)
            r = F.sigmoid(self.xh_to_r(xh))
            xhr = lib.cat([xt, r * hprev], dim=1)
            hbar = F.tanh(self.xh_to_hbar(xhr))
            z = F.sigmoid(self.xz_to_z(xh))
            return (1 - z) * hprev + z * hbar

    class RNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.start = nn.Parameter(lib.zeros(1, h))
            self.wte = nn.Embedding(p["vocab"], e)
            self.cell = GRUCell()
            self.lm_head = nn.Linear(h, p["vocab"])

        def forward(self, idx, targets):
            b, t = idx.size()
            emb = self.wte(idx)
            hprev = self.start.expand((b, -1))
            hiddens = []
            for i in range(t):
                hprev = self.cell(emb[:, i, :], hprev)
                hiddens.append(hprev)
            logits = self.lm_head(lib.stack(hiddens, 1))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

    model = RNN()
    model.load_state_dict({k: lib.tensor(a) for k, a in arrays.items()})
    x, y = lib.tensor(xa), lib.tensor(ya)
    opt = lib.optim.AdamW(model.parameters(), lr=MM_LR, weight_decay=MM_WD, betas=MM_BETAS, eps=1e-8)

    return (lambda: model(x, y)), dict(model.named_parameters()), opt


def _mm_lib(name):
    def build(p):
        loss, params, opt = make_makemore(__import__(name), p)
        w = params["cell.xh_to_r.weight"]

        def step():
            opt.zero_grad(set_to_none=True)
            loss().backward()
            opt.step()
            return w.grad
        return step
    return build


def _mm_jax(jit):
    def build(p):
        from .. import frameworks as fws
        jax, jnp = fws.import_jax()
        arrays, x, y = _mm_data(p)
        names = list(arrays)

        def loss(params, x, y):
            P = dict(zip(names, params))

            def lin(n, a):
                return a @ P[n + ".weight"].T + P[n + ".bias"]
            emb = P["wte.weight"][x]
            hprev = jnp.broadcast_to(P["start"], (x.shape[0], p["hidden"]))
            hiddens = []
            for i in range(x.shape[1]):
                xt = emb[:, i, :]
                xh = jnp.concatenate([xt, hprev], axis=1)
                r = jax.nn.sigmoid(lin("cell.xh_to_r", xh))
                hbar = jnp.tanh(lin("cell.xh_to_hbar", jnp.concatenate([xt, r * hprev], axis=1)))
                z = jax.nn.sigmoid(lin("cell.xz_to_z", xh))
                hprev = (1 - z) * hprev + z * hbar
                hiddens.append(hprev)
            logp = jax.nn.log_softmax(lin("lm_head", jnp.stack(hiddens, 1)).reshape(-1, p["vocab"]), axis=1)
            flat = y.reshape(-1)
            keep = flat != -1
            picked = jnp.take_along_axis(logp, jnp.where(keep, flat, 0)[:, None], axis=1)[:, 0]
            return -(picked * keep).sum() / keep.sum()
        return jax_trainer(jax, jnp, loss, list(arrays.values()), (x, y), pick=names.index("cell.xh_to_r.weight"),
                           jit=jit, lr=MM_LR, betas=MM_BETAS, weight_decay=MM_WD, decoupled=True)
    return build


W24.impl("retrograd")(_mm_lib("retrograd"))
W24.impl("torch")(_mm_lib("torch"))
W24.impl("jax")(_mm_jax(False))
W24.impl("jaxjit")(_mm_jax(True))
