"""W8 convnet: one SGD training step of a small conv net on 8x8 images."""
import numpy as np

from ._base import Skip, Workload

W8 = Workload(
    "convnet", "W8 convnet",
    "float64, batch 32 of 1x8x8: conv 1->16 3x3 pad 1, relu, maxpool 2, conv 16->32 3x3 pad 1, relu, "
    "maxpool 2, flatten, linear 128->10, cross-entropy; forward, backward, SGD update per step",
    sizes={"full": {"batch": 32, "steps": 10}, "quick": {"batch": 4, "steps": 1}},
    unit="step", count="steps", repeats=7, rtol=1e-6, atol=1e-9)

LR = 0.01


def _data(p):
    rng = np.random.default_rng(8)
    params = [rng.standard_normal((16, 1, 3, 3)) / 3.0, 0.01 * rng.standard_normal(16),
              rng.standard_normal((32, 16, 3, 3)) / 12.0, 0.01 * rng.standard_normal(32),
              rng.standard_normal((128, 10)) / np.sqrt(128), 0.01 * rng.standard_normal(10)]
    x = rng.standard_normal((p["batch"], 1, 8, 8))
    y = rng.integers(0, 10, p["batch"])
    return params, x, y


def _conv3x3(x, w, b, pad, stack):
    """3x3 convolution, padding 1, as shifted slices times the reshaped filter bank (im2col)."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    xp = pad(x)
    cols = stack([xp[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)], 2)
    out = w.reshape(o, c * 9) @ cols.reshape(n, c * 9, h * wd)
    return out.reshape(n, o, h, wd) + b.reshape(1, o, 1, 1)


def _pool2(x, amax):
    n, c, h, w = x.shape
    return amax(x.reshape(n, c, h // 2, 2, w // 2, 2), (3, 5))


def _sgd_torchlike(params, no_grad):
    with no_grad():
        for t in params:
            t -= LR * t.grad


@W8.impl("retrograd")
def _retrograd(p):
    import retrograd as rg
    try:
        from retrograd.nn.functional import conv2d
    except ImportError:
        raise Skip("retrograd.nn.functional.conv2d is not available yet") from None
    import retrograd.nn.functional as F
    arrays, xa, ya = _data(p)
    params = [rg.tensor(a, dtype=rg.float64, requires_grad=True) for a in arrays]
    x, y = rg.tensor(xa, dtype=rg.float64), rg.tensor(ya, dtype=rg.int64)
    pool = getattr(F, "max_pool2d", None) or (lambda h, k: _pool2(h, lambda a, d: a.amax(dim=d)))
    cross_entropy = getattr(F, "cross_entropy", None) or (
        lambda z, t: -rg.gather(rg.log_softmax(z, dim=1), 1, t[:, None]).mean())

    def step():
        for _ in range(p["steps"]):
            w1, b1, w2, b2, w3, b3 = params
            h = pool(rg.relu(conv2d(x, w1, b1, padding=1)), 2)
            h = pool(rg.relu(conv2d(h, w2, b2, padding=1)), 2)
            loss = cross_entropy(h.reshape(h.shape[0], -1) @ w3 + b3, y)
            loss.backward()
            g = params[0].grad
            _sgd_torchlike(params, rg.no_grad)
            for t in params:
                t.grad = None
        return g
    return step


@W8.impl("torch")
def _torch(p):
    import torch
    import torch.nn.functional as F
    arrays, xa, ya = _data(p)
    params = [torch.tensor(a, requires_grad=True) for a in arrays]
    x, y = torch.tensor(xa), torch.tensor(ya)

    def step():
        for _ in range(p["steps"]):
            w1, b1, w2, b2, w3, b3 = params
            h = F.max_pool2d(torch.relu(F.conv2d(x, w1, b1, padding=1)), 2)
            h = F.max_pool2d(torch.relu(F.conv2d(h, w2, b2, padding=1)), 2)
            F.cross_entropy(h.flatten(1) @ w3 + b3, y).backward()
            g = params[0].grad
            _sgd_torchlike(params, torch.no_grad)
            for t in params:
                t.grad = None
        return g
    return step


@W8.impl("autograd")
def _autograd(p):
    import autograd
    import autograd.numpy as anp
    params, x, y = _data(p)
    rows = np.arange(len(y))

    def pad(a):
        return anp.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="constant")

    def loss(params):
        w1, b1, w2, b2, w3, b3 = params
        h = _pool2(anp.maximum(_conv3x3(x, w1, b1, pad, anp.stack), 0.0), lambda a, d: anp.max(a, axis=d))
        h = _pool2(anp.maximum(_conv3x3(h, w2, b2, pad, anp.stack), 0.0), lambda a, d: anp.max(a, axis=d))
        z = anp.reshape(h, (h.shape[0], -1)) @ w3 + b3
        m = anp.max(z, axis=1, keepdims=True)
        logp = z - m - anp.log(anp.sum(anp.exp(z - m), axis=1, keepdims=True))
        return -anp.mean(logp[rows, y])
    g = autograd.grad(loss)
    state = {"params": params}

    def step():
        for _ in range(p["steps"]):
            grads = g(state["params"])
            state["params"] = [a - LR * da for a, da in zip(state["params"], grads, strict=True)]
        return grads[0]
    return step


@W8.impl("mygrad")
def _mygrad(p):
    import mygrad as mg
    arrays, x, y = _data(p)
    state = {"params": [mg.tensor(a) for a in arrays]}

    def step():
        for _ in range(p["steps"]):
            w1, b1, w2, b2, w3, b3 = params = state["params"]
            h = mg.nnet.max_pool(mg.nnet.relu(mg.nnet.conv_nd(x, w1, stride=1, padding=1) + b1.reshape(1, -1, 1, 1)),
                                 (2, 2), 2)
            h = mg.nnet.max_pool(mg.nnet.relu(mg.nnet.conv_nd(h, w2, stride=1, padding=1) + b2.reshape(1, -1, 1, 1)),
                                 (2, 2), 2)
            mg.nnet.softmax_crossentropy(h.reshape(h.shape[0], -1) @ w3 + b3, y).backward()
            g = w1.grad
            state["params"] = [mg.tensor(t.data - LR * t.grad) for t in params]
        return g
    return step


def _pad(a):
    return np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))


def _conv_backward(d, cols, w, x_shape, need_dx=True):
    """Gradients of ``_conv3x3`` given the output gradient ``d`` (N, O, H, W) and the saved columns."""
    n, c, h, wd = x_shape
    o = w.shape[0]
    d = d.reshape(n, o, h * wd)
    dw = np.einsum("noq,nkq->ok", d, cols, optimize=True).reshape(w.shape)
    db = d.sum(axis=(0, 2))
    if not need_dx:
        return None, dw, db
    dcols = (w.reshape(o, c * 9).T @ d).reshape(n, c, 9, h, wd)
    dxp = np.zeros((n, c, h + 2, wd + 2))
    for k in range(9):
        i, j = divmod(k, 3)
        dxp[:, :, i:i + h, j:j + wd] += dcols[:, :, k]
    return dxp[:, :, 1:-1, 1:-1], dw, db


def _pool_forward(x):
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
    idx = win.argmax(axis=-1)[..., None]
    return np.take_along_axis(win, idx, -1)[..., 0], idx


def _pool_backward(d, idx, x_shape):
    n, c, h, w = x_shape
    win = np.zeros((n, c, h // 2, w // 2, 4))
    np.put_along_axis(win, idx, d[..., None], -1)
    return win.reshape(n, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(x_shape)


@W8.impl("numpy")
def _numpy(p):
    params, x, y = _data(p)
    rows = np.arange(len(y))
    n = len(y)
    state = {"params": params}

    def conv_forward(a, w, b):
        nn, c, h, wd = a.shape
        ap = _pad(a)
        cols = np.stack([ap[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)], 2)
        cols = cols.reshape(nn, c * 9, h * wd)
        out = (w.reshape(w.shape[0], c * 9) @ cols).reshape(nn, w.shape[0], h, wd) + b.reshape(1, -1, 1, 1)
        return out, cols

    def step():
        for _ in range(p["steps"]):
            w1, b1, w2, b2, w3, b3 = state["params"]
            c1, cols1 = conv_forward(x, w1, b1)
            r1 = np.maximum(c1, 0)
            p1, i1 = _pool_forward(r1)
            c2, cols2 = conv_forward(p1, w2, b2)
            r2 = np.maximum(c2, 0)
            p2, i2 = _pool_forward(r2)
            f = p2.reshape(n, -1)
            z = f @ w3 + b3
            e = np.exp(z - z.max(axis=1, keepdims=True))
            sm = e / e.sum(axis=1, keepdims=True)
            -np.log(sm[rows, y]).mean()
            dz = sm
            dz[rows, y] -= 1
            dz /= n
            dw3, db3 = f.T @ dz, dz.sum(0)
            d = _pool_backward((dz @ w3.T).reshape(p2.shape), i2, r2.shape) * (c2 > 0)
            d, dw2, db2 = _conv_backward(d, cols2, w2, p1.shape)
            d = _pool_backward(d, i1, r1.shape) * (c1 > 0)
            _, dw1, db1 = _conv_backward(d, cols1, w1, x.shape, need_dx=False)
            grads = (dw1, db1, dw2, db2, dw3, db3)
            state["params"] = [a - LR * da for a, da in zip(state["params"], grads, strict=True)]
        return dw1
    return step
