"""W15 gpt: one training step of a minGPT-like model with the attention written out.

Token and position embeddings; per block (pre-norm): LayerNorm, causal self-attention from three
``nn.Linear`` (q, k, v), ``masked_fill`` of the future with -inf, softmax, no dropout, an output
projection; LayerNorm and an exact-GELU MLP (4x); then a final LayerNorm, a bias-free head,
cross-entropy over every position and AdamW. Every framework starts from the same weights and
tokens; the check compares the first block's query weight gradient against the NumPy floor's.
"""
import math

import numpy as np

from ._base import Skip, Workload
from ._optim import NumpyAdam, jax_trainer

W15 = Workload(
    "gpt", "W15 gpt",
    "float32 minGPT-like step: 2 pre-norm blocks (d 64, 4 heads, hand-written causal self-attention with q/k/v "
    "Linear, masked_fill, softmax; LayerNorm; exact-GELU MLP 256), seq 32, batch 8, vocab 65, cross-entropy, AdamW",
    sizes={"full": {"vocab": 65, "d": 64, "heads": 4, "layers": 2, "seq": 32, "batch": 8},
           "quick": {"vocab": 11, "d": 8, "heads": 2, "layers": 1, "seq": 4, "batch": 2}},
    unit="step", repeats=5, rtol=2e-3, atol=1e-6)

LR, WEIGHT_DECAY, EPS = 1e-3, 0.01, 1e-5
_BLOCK = ("ln1.weight", "ln1.bias", "q.weight", "q.bias", "k.weight", "k.bias", "v.weight", "v.bias",
          "proj.weight", "proj.bias", "ln2.weight", "ln2.bias", "fc.weight", "fc.bias", "fc2.weight", "fc2.bias")


def _names(p):
    names = ["tok.weight", "pos.weight"]
    for layer in range(p["layers"]):
        names += [f"blocks.{layer}.{n}" for n in _BLOCK]
    return names + ["ln_f.weight", "ln_f.bias", "head.weight"]


def _data(p):
    """``{parameter name: array}`` in the model's order, input tokens (batch, seq) and targets."""
    rng = np.random.default_rng(15)
    v, d, s = p["vocab"], p["d"], p["seq"]
    shapes = {"tok.weight": (v, d), "pos.weight": (s, d), "head.weight": (v, d), "fc.weight": (4 * d, d),
              "fc.bias": (4 * d,), "fc2.weight": (d, 4 * d)}
    arrays = {}
    for name in _names(p):
        leaf = name.split(".", 2)[-1] if name.startswith("blocks.") else name
        shape = shapes.get(leaf, (d, d) if leaf.endswith("weight") and not leaf.startswith("ln") else (d,))
        base = 1.0 if leaf.startswith("ln") and leaf.endswith("weight") else 0.0
        arrays[name] = (base + 0.05 * rng.standard_normal(shape)).astype(np.float32)
    tokens = rng.integers(0, v, (p["batch"], s + 1))
    return arrays, tokens[:, :-1], tokens[:, 1:]


PICK = "blocks.0.q.weight"


def _model(lib, p):
    nn, F = lib.nn, lib.nn.functional
    d, heads = p["d"], p["heads"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d, eps=EPS)
            self.q, self.k, self.v, self.proj = (nn.Linear(d, d) for _ in range(4))
            self.ln2 = nn.LayerNorm(d, eps=EPS)
            self.fc = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)

        def forward(self, x, mask):
            B, T, C = x.shape
            h = self.ln1(x)
            q = self.q(h).view(B, T, heads, C // heads).transpose(1, 2)
            k = self.k(h).view(B, T, heads, C // heads).transpose(1, 2)
            v = self.v(h).view(B, T, heads, C // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // heads))
            att = F.softmax(att.masked_fill(mask[:, :, :T, :T] == 0, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(p["vocab"], d)
            self.pos = nn.Embedding(p["seq"], d)
            self.blocks = nn.ModuleList([Block() for _ in range(p["layers"])])
            self.ln_f = nn.LayerNorm(d, eps=EPS)
            self.head = nn.Linear(d, p["vocab"], bias=False)
            self.register_buffer("mask", lib.tril(lib.ones(p["seq"], p["seq"])).view(1, 1, p["seq"], p["seq"]),
                                 persistent=False)

        def forward(self, idx):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(lib.arange(t))
            for block in self.blocks:
                x = block(x, self.mask)
            return self.head(self.ln_f(x))

    return GPT()


def make(lib, p):
    """``(loss, params, optimizer)`` on ``lib`` (retrograd or torch): ``loss()`` runs the forward (bench.profile)."""
    arrays, xa, ya = _data(p)
    model = _model(lib, p)
    model.load_state_dict({k: lib.tensor(a) for k, a in arrays.items()})
    x = lib.tensor(xa, dtype=lib.int64)
    y = lib.tensor(ya.reshape(-1), dtype=lib.int64)

    def loss():
        logits = model(x)
        return lib.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y)
    params = list(model.parameters())
    return loss, params, lib.optim.AdamW(params, lr=LR, weight_decay=WEIGHT_DECAY)


def _lib_builder(name):
    def build(p):
        loss, params, opt = make(__import__(name), p)
        pick = params[_names(p).index(PICK)]

        def step():
            opt.zero_grad()
            loss().backward()
            opt.step()
            return pick.grad
        return step
    return build


W15.impl("retrograd")(_lib_builder("retrograd"))
W15.impl("torch")(_lib_builder("torch"))


def _ln(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    rstd = 1 / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + EPS)
    xhat = xc * rstd
    return xhat * w + b, (xhat, rstd, w)


def _ln_back(dy, saved):
    xhat, rstd, w = saved
    axes = tuple(range(dy.ndim - 1))
    dxhat = dy * w
    dx = rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True) - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    return dx, (dy * xhat).sum(axis=axes), dy.sum(axis=axes)


def _lin_back(dy, x, w):
    """Gradients of ``x @ w.T + b``: input, weight, bias (x of shape (..., in))."""
    d2 = dy.reshape(-1, dy.shape[-1])
    return dy @ w, d2.T @ x.reshape(-1, x.shape[-1]), d2.sum(axis=0)


@W15.impl("numpy")
def _numpy(p):
    try:
        from scipy.special import erf
    except ImportError as exc:
        raise Skip("the NumPy floor's exact GELU needs scipy.special.erf") from exc
    arrays, idx, y = _data(p)
    names = list(arrays)
    params = list(arrays.values())
    P = arrays
    opt = NumpyAdam(params, lr=LR, weight_decay=WEIGHT_DECAY, decoupled=True)
    B, T, C, H, V = p["batch"], p["seq"], p["d"], p["heads"], p["vocab"]
    hd = C // H
    scale = 1.0 / math.sqrt(hd)
    future = ~np.tril(np.ones((T, T), bool))
    rows = np.arange(B * T)
    flat_y = y.reshape(-1)

    def heads(a):
        return a.reshape(B, T, H, hd).transpose(0, 2, 1, 3)

    def merge(a):
        return a.transpose(0, 2, 1, 3).reshape(B, T, C)

    def step():
        G = {}
        x = P["tok.weight"][idx] + P["pos.weight"][:T]
        saved = []
        for layer in range(p["layers"]):
            w = {n: P[f"blocks.{layer}.{n}"] for n in _BLOCK}
            h, s1 = _ln(x, w["ln1.weight"], w["ln1.bias"])
            q = heads(h @ w["q.weight"].T + w["q.bias"])
            k = heads(h @ w["k.weight"].T + w["k.bias"])
            v = heads(h @ w["v.weight"].T + w["v.bias"])
            s = (q @ k.transpose(0, 1, 3, 2)) * scale
            s[..., future] = -np.inf
            a = np.exp(s - s.max(axis=-1, keepdims=True))
            a /= a.sum(axis=-1, keepdims=True)
            yh = merge(a @ v)
            x = x + yh @ w["proj.weight"].T + w["proj.bias"]
            h2, s2 = _ln(x, w["ln2.weight"], w["ln2.bias"])
            u = h2 @ w["fc.weight"].T + w["fc.bias"]
            cdf = 0.5 * (1 + erf(u / math.sqrt(2)))
            gl = u * cdf
            x = x + gl @ w["fc2.weight"].T + w["fc2.bias"]
            saved.append((w, h, s1, q, k, v, a, yh, h2, s2, u, cdf, gl))
        hf, sf = _ln(x, P["ln_f.weight"], P["ln_f.bias"])
        logits = (hf @ P["head.weight"].T).reshape(-1, V)
        ex = np.exp(logits - logits.max(axis=1, keepdims=True))
        d = ex / ex.sum(axis=1, keepdims=True)
        # Backward: cross-entropy, head, final LayerNorm, then the blocks in reverse.
        d[rows, flat_y] -= 1
        d /= len(rows)
        d = d.reshape(B, T, V)
        dhf, G["head.weight"], _ = _lin_back(d, hf, P["head.weight"])
        dx, G["ln_f.weight"], G["ln_f.bias"] = _ln_back(dhf, sf)
        for layer in range(p["layers"] - 1, -1, -1):
            w, h, s1, q, k, v, a, yh, h2, s2, u, cdf, gl = saved[layer]
            pre = f"blocks.{layer}."
            dgl, G[pre + "fc2.weight"], G[pre + "fc2.bias"] = _lin_back(dx, gl, w["fc2.weight"])
            du = dgl * (cdf + u * np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi))
            dh2, G[pre + "fc.weight"], G[pre + "fc.bias"] = _lin_back(du, h2, w["fc.weight"])
            dln2, G[pre + "ln2.weight"], G[pre + "ln2.bias"] = _ln_back(dh2, s2)
            dx = dx + dln2
            dyh, G[pre + "proj.weight"], G[pre + "proj.bias"] = _lin_back(dx, yh, w["proj.weight"])
            dyh = heads(dyh)
            da = dyh @ v.transpose(0, 1, 3, 2)
            dv = a.transpose(0, 1, 3, 2) @ dyh
            ds = a * (da - (da * a).sum(axis=-1, keepdims=True)) * scale
            dq = ds @ k
            dk = ds.transpose(0, 1, 3, 2) @ q
            dh = np.zeros_like(h)
            for n, dz in (("q", dq), ("k", dk), ("v", dv)):
                dhn, G[pre + n + ".weight"], G[pre + n + ".bias"] = _lin_back(merge(dz), h, w[n + ".weight"])
                dh += dhn
            dln1, G[pre + "ln1.weight"], G[pre + "ln1.bias"] = _ln_back(dh, s1)
            dx = dx + dln1
        g_tok = np.zeros_like(P["tok.weight"])
        np.add.at(g_tok, idx, dx)
        G["tok.weight"] = g_tok
        g_pos = np.zeros_like(P["pos.weight"])
        g_pos[:T] = dx.sum(axis=0)
        G["pos.weight"] = g_pos
        grads = [G[n] for n in names]
        opt.step(grads)
        return G[PICK]
    return step


def _jax_builder(jit):
    def build(p):
        from .. import frameworks as fws
        jax, jnp = fws.import_jax()
        arrays, idx, y = _data(p)
        names = list(arrays)
        B, T, C, H, V = p["batch"], p["seq"], p["d"], p["heads"], p["vocab"]
        hd = C // H
        causal = jnp.asarray(np.tril(np.ones((T, T), bool)))

        def ln(x, w, b):
            mu = x.mean(axis=-1, keepdims=True)
            var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
            return (x - mu) / jnp.sqrt(var + EPS) * w + b

        def heads(a):
            return a.reshape(B, T, H, hd).transpose(0, 2, 1, 3)

        def loss(params, idx, y):
            P = dict(zip(names, params))
            x = P["tok.weight"][idx] + P["pos.weight"][:T]
            for layer in range(p["layers"]):
                w = {n: P[f"blocks.{layer}.{n}"] for n in _BLOCK}
                h = ln(x, w["ln1.weight"], w["ln1.bias"])
                q, k, v = (heads(h @ w[n + ".weight"].T + w[n + ".bias"]) for n in "qkv")
                att = jnp.where(causal, (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(hd)), -jnp.inf)
                yh = (jax.nn.softmax(att, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
                x = x + yh @ w["proj.weight"].T + w["proj.bias"]
                u = ln(x, w["ln2.weight"], w["ln2.bias"]) @ w["fc.weight"].T + w["fc.bias"]
                x = x + jax.nn.gelu(u, approximate=False) @ w["fc2.weight"].T + w["fc2.bias"]
            logits = (ln(x, P["ln_f.weight"], P["ln_f.bias"]) @ P["head.weight"].T).reshape(-1, V)
            logp = jax.nn.log_softmax(logits, axis=1)
            return -jnp.take_along_axis(logp, y.reshape(-1, 1), axis=1).mean()
        return jax_trainer(jax, jnp, loss, list(arrays.values()), (idx, y), pick=names.index(PICK), jit=jit, lr=LR,
                           weight_decay=WEIGHT_DECAY, decoupled=True)
    return build


W15.impl("jax")(_jax_builder(False))
W15.impl("jaxjit")(_jax_builder(True))
