"""W9 attention and W10 encoder: multi-head self-attention, and a whole Transformer encoder layer, each
forward + backward with the library's own modules (retrograd.nn vs torch.nn) from the same weights.

Neither is in the default table (``WORKLOADS``); ``--only attention,encoder`` runs them. There is
no NumPy floor: PyTorch with one thread is the reference value.
"""
import numpy as np

from ._base import Workload

_SIZES = {"full": {"batch": 8, "seq": 32, "d": 64, "heads": 4, "ff": 256, "steps": 20},
          "quick": {"batch": 2, "seq": 5, "d": 8, "heads": 2, "ff": 16, "steps": 2}}

W9 = Workload(
    "attention", "W9 attention",
    "float32, nn.MultiheadAttention(d 64, 4 heads, batch_first) self-attention on batch 8 x seq 32 with a causal "
    "mask, need_weights=False; forward + backward of the sum of squares",
    sizes=_SIZES, unit="step", count="steps", repeats=5, rtol=1e-4, atol=1e-5)

W10 = Workload(
    "encoder", "W10 encoder",
    "float32, nn.TransformerEncoderLayer(d 64, 4 heads, feed-forward 256, dropout 0, batch_first) on batch 8 x "
    "seq 32 with a causal mask; forward + backward of the sum of squares",
    sizes=_SIZES, unit="step", count="steps", repeats=5, rtol=1e-4, atol=1e-5)


def _data(p):
    rng = np.random.default_rng(9)
    return rng.standard_normal((p["batch"], p["seq"], p["d"])).astype(np.float32)


def _model(lib, workload, p):
    """The module, its weights drawn from one seeded NumPy generator (the same for both libraries)."""
    nn = lib.nn
    if workload == "attention":
        model = nn.MultiheadAttention(p["d"], p["heads"], batch_first=True)
    else:
        model = nn.TransformerEncoderLayer(p["d"], p["heads"], dim_feedforward=p["ff"], dropout=0.0,
                                           batch_first=True)
    rng = np.random.default_rng(10)
    state = {k: lib.tensor((0.1 * rng.standard_normal(tuple(v.shape))).astype(np.float32))
             for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    return model


def _builder(lib_name, workload):
    def build(p):
        lib = __import__(lib_name)
        model = _model(lib, workload, p)
        x = lib.tensor(_data(p))
        mask = lib.nn.Transformer.generate_square_subsequent_mask(p["seq"])
        params = list(model.parameters())

        def step():
            for _ in range(p["steps"]):
                for t in params:
                    t.grad = None
                if workload == "attention":
                    out = model(x, x, x, attn_mask=mask, need_weights=False, is_causal=True)[0]
                else:
                    out = model(x, src_mask=mask, is_causal=True)
                (out * out).sum().backward()
            return params[0].grad
        return step
    return build


for _w in (W9, W10):
    _w.impl("retrograd")(_builder("retrograd", _w.key))
    _w.impl("torch")(_builder("torch", _w.key))
