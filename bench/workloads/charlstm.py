"""W14 charlstm: one training step of a character-level LSTM language model with a hand-written cell.

Embedding -> an LSTM cell written out (one fused gate matmul per input, ``chunk`` into four gates)
unrolled over the sequence -> a linear head -> cross-entropy over every position -> Adam. Every
framework starts from the same weights and tokens; the check compares the recurrent weight's
gradient of the first step against the NumPy floor's.
"""
import numpy as np

from ._base import Workload
from ._optim import NumpyAdam, jax_trainer

W14 = Workload(
    "charlstm", "W14 charlstm",
    "float32 char-level LM step: embedding (vocab 65, 32) -> hand-written LSTM cell (hidden 128) unrolled over 32 "
    "steps of a batch of 16 -> linear head -> cross-entropy -> Adam",
    sizes={"full": {"vocab": 65, "embed": 32, "hidden": 128, "steps": 32, "batch": 16},
           "quick": {"vocab": 11, "embed": 4, "hidden": 8, "steps": 3, "batch": 2}},
    unit="step", repeats=5, rtol=2e-3, atol=1e-6)

LR = 1e-3


def _data(p):
    """``[emb, w_x, w_h, b, w_y, b_y]``, input tokens (batch, steps) and targets (batch, steps)."""
    rng = np.random.default_rng(14)
    v, e, h = p["vocab"], p["embed"], p["hidden"]
    bound = 1 / np.sqrt(h)
    shapes = ((e, 4 * h), (h, 4 * h), (4 * h,), (h, v), (v,))
    arrays = [rng.standard_normal((v, e))] + [rng.uniform(-bound, bound, s) for s in shapes]
    tokens = rng.integers(0, v, (p["batch"], p["steps"] + 1))
    return [a.astype(np.float32) for a in arrays], tokens[:, :-1], tokens[:, 1:]


def make(lib, p):
    """``(loss, params, optimizer)`` on ``lib`` (retrograd or torch): ``loss()`` runs the forward (bench.profile)."""
    F = lib.nn.functional
    arrays, xa, ya = _data(p)
    params = [lib.tensor(a, requires_grad=True) for a in arrays]
    emb, w_x, w_h, b, w_y, b_y = params
    x = lib.tensor(xa, dtype=lib.int64)
    y = lib.tensor(ya.reshape(-1), dtype=lib.int64)
    batch, hidden, vocab = p["batch"], p["hidden"], p["vocab"]

    def loss():
        e = F.embedding(x, emb)
        h = c = lib.zeros(batch, hidden)
        hs = []
        for t in range(p["steps"]):
            i, f, g, o = (e[:, t] @ w_x + h @ w_h + b).chunk(4, 1)
            c = lib.sigmoid(f) * c + lib.sigmoid(i) * lib.tanh(g)
            h = lib.sigmoid(o) * lib.tanh(c)
            hs.append(h)
        logits = lib.stack(hs, 1) @ w_y + b_y
        return F.cross_entropy(logits.reshape(-1, vocab), y)
    return loss, params, lib.optim.Adam(params, lr=LR)


def _lib_builder(name):
    def build(p):
        loss, params, opt = make(__import__(name), p)
        w_h = params[2]

        def step():
            opt.zero_grad()
            loss().backward()
            opt.step()
            return w_h.grad
        return step
    return build


W14.impl("retrograd")(_lib_builder("retrograd"))
W14.impl("torch")(_lib_builder("torch"))


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


@W14.impl("numpy")
def _numpy(p):
    arrays, x, y = _data(p)
    emb, w_x, w_h, b, w_y, b_y = arrays
    opt = NumpyAdam(arrays, lr=LR)
    batch, hidden, vocab, steps = p["batch"], p["hidden"], p["vocab"], p["steps"]
    rows = np.arange(batch * steps)
    flat_y = y.reshape(-1)

    def step():
        e = emb[x]
        h = c = np.zeros((batch, hidden), np.float32)
        saved, hs = [], []
        for t in range(steps):
            z = e[:, t] @ w_x + h @ w_h + b
            i, f, o = _sigmoid(z[:, :hidden]), _sigmoid(z[:, hidden:2 * hidden]), _sigmoid(z[:, 3 * hidden:])
            g = np.tanh(z[:, 2 * hidden:3 * hidden])
            c_prev, h_prev = c, h
            c = f * c + i * g
            tc = np.tanh(c)
            h = o * tc
            saved.append((i, f, g, o, c_prev, tc, h_prev))
            hs.append(h)
        hs = np.stack(hs, 1).reshape(-1, hidden)
        logits = hs @ w_y + b_y
        m = logits.max(axis=1, keepdims=True)
        ex = np.exp(logits - m)
        prob = ex / ex.sum(axis=1, keepdims=True)
        # Backward: d loss / d logits = (softmax - onehot) / n, then the head, then the cell in reverse.
        d = prob
        d[rows, flat_y] -= 1
        d /= len(rows)
        g_wy, g_by = hs.T @ d, d.sum(axis=0)
        dhs = (d @ w_y.T).reshape(batch, steps, hidden)
        g_wx, g_wh, g_b = np.zeros_like(w_x), np.zeros_like(w_h), np.zeros_like(b)
        de = np.empty_like(e)
        dh_next = np.zeros((batch, hidden), np.float32)
        dc = np.zeros((batch, hidden), np.float32)
        for t in range(steps - 1, -1, -1):
            i, f, g, o, c_prev, tc, h_prev = saved[t]
            dh = dhs[:, t] + dh_next
            dc = dc + dh * o * (1 - tc * tc)
            dz = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
                                 dh * tc * o * (1 - o)], axis=1)
            dc = dc * f
            g_wx += e[:, t].T @ dz
            g_wh += h_prev.T @ dz
            g_b += dz.sum(axis=0)
            dh_next = dz @ w_h.T
            de[:, t] = dz @ w_x.T
        g_emb = np.zeros_like(emb)
        np.add.at(g_emb, x, de)
        opt.step([g_emb, g_wx, g_wh, g_b, g_wy, g_by])
        return g_wh
    return step


def _jax_builder(jit):
    def build(p):
        from .. import frameworks as fws
        jax, jnp = fws.import_jax()
        arrays, x, y = _data(p)
        hidden, vocab = p["hidden"], p["vocab"]

        def loss(params, x, y):
            emb, w_x, w_h, b, w_y, b_y = params
            e = emb[x]
            h = c = jnp.zeros((p["batch"], hidden), jnp.float32)
            hs = []
            for t in range(p["steps"]):
                i, f, g, o = jnp.split(e[:, t] @ w_x + h @ w_h + b, 4, axis=1)
                c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
                h = jax.nn.sigmoid(o) * jnp.tanh(c)
                hs.append(h)
            logits = (jnp.stack(hs, 1) @ w_y + b_y).reshape(-1, vocab)
            logp = jax.nn.log_softmax(logits, axis=1)
            return -jnp.take_along_axis(logp, y.reshape(-1, 1), axis=1).mean()
        return jax_trainer(jax, jnp, loss, arrays, (x, y), pick=2, jit=jit, lr=LR)
    return build


W14.impl("jax")(_jax_builder(False))
W14.impl("jaxjit")(_jax_builder(True))
