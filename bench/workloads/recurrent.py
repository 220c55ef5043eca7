"""W11 lstm, W12 lstm2, W13 gru: forward and backward of a recurrent layer (nn.LSTM, nn.GRU) over a sequence.

Not in the default table; ``python -m bench --only lstm,lstm2,gru`` runs them. PyTorch (1 thread)
is the reference of the check: both libraries start from the same weights and inputs.
"""
import numpy as np

from ._base import Workload


def _workload(key, title, cls, layers):
    return Workload(
        key, title,
        f"float32 nn.{cls}(64, 128, num_layers={layers}) over 32 steps of a batch of 16: forward, a weighted sum "
        "of the outputs, backward (gradients of the input and every parameter)",
        sizes={"full": {"input": 64, "hidden": 128, "steps": 32, "batch": 16, "layers": layers},
               "quick": {"input": 8, "hidden": 16, "steps": 4, "batch": 2, "layers": layers}},
        unit="step", repeats=5, rtol=1e-4, atol=1e-5)


W11 = _workload("lstm", "W11 lstm", "LSTM", 1)
W12 = _workload("lstm2", "W12 lstm2", "LSTM", 2)
W13 = _workload("gru", "W13 gru", "GRU", 1)
_CLASS = {"lstm": "LSTM", "lstm2": "LSTM", "gru": "GRU"}


def _data(p, key):
    rng = np.random.default_rng(9)
    gates = 4 if _CLASS[key] == "LSTM" else 3
    bound = 1 / np.sqrt(p["hidden"])
    weights = []
    for layer in range(p["layers"]):
        width = p["input"] if layer == 0 else p["hidden"]
        for shape in ((gates * p["hidden"], width), (gates * p["hidden"], p["hidden"]), (gates * p["hidden"],),
                      (gates * p["hidden"],)):
            weights.append(rng.uniform(-bound, bound, shape).astype(np.float32))
    x = rng.standard_normal((p["steps"], p["batch"], p["input"])).astype(np.float32)
    seed = rng.standard_normal((p["steps"], p["batch"], p["hidden"])).astype(np.float32)
    return weights, x, seed


def _build(lib, p, key):
    weights, xa, seeda = _data(p, key)
    m = getattr(lib.nn, _CLASS[key])(p["input"], p["hidden"], num_layers=p["layers"])
    m.load_state_dict(dict(zip(m.state_dict(), (lib.tensor(w) for w in weights), strict=True)))
    x = lib.tensor(xa, requires_grad=True)
    seed = lib.tensor(seeda)
    first = m.weight_ih_l0

    def step():
        m.zero_grad()
        x.grad = None
        out, _ = m(x)
        (out * seed).sum().backward()
        return first.grad
    return step


for _w in (W11, W12, W13):
    @_w.impl("retrograd")
    def _retrograd(p, _key=_w.key):
        import retrograd as rg
        return _build(rg, p, _key)

    @_w.impl("torch")
    def _torch(p, _key=_w.key):
        import torch
        return _build(torch, p, _key)
