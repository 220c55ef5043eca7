"""CPU autocast against PyTorch's (Note [CPU autocast] in retrograd/amp.py): the ops of its lists run in bfloat16
(or the region's float16), in float32, or in their inputs' widest dtype; the rest as they are; gradients flow back
to the float32 leaves in their dtype; and a region on one thread leaves another's calls alone."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def _t(m, *shape, seed=0, dtype=None):
    values = np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)
    t = m.from_numpy(values)
    return t if dtype is None else t.to(getattr(m, dtype))


CALLS = {  # each: the call in a region, on float32 inputs unless it says otherwise
    "matmul": lambda m, F: _t(m, 3, 4) @ _t(m, 4, 2, seed=1),
    "mm": lambda m, F: m.mm(_t(m, 3, 4), _t(m, 4, 2, seed=1)),
    "bmm": lambda m, F: m.bmm(_t(m, 2, 3, 4), _t(m, 2, 4, 2, seed=1)),
    "addmm": lambda m, F: m.addmm(_t(m, 2, seed=2), _t(m, 3, 4), _t(m, 4, 2, seed=1)),
    "baddbmm": lambda m, F: m.baddbmm(_t(m, 2, 3, 2, seed=2), _t(m, 2, 3, 4), _t(m, 2, 4, 2, seed=1)),
    "linear": lambda m, F: F.linear(_t(m, 3, 4), _t(m, 5, 4, seed=1), _t(m, 5, seed=2)),
    "linear 3-d": lambda m, F: F.linear(_t(m, 2, 3, 4), _t(m, 5, 4, seed=1)),
    "conv2d": lambda m, F: F.conv2d(_t(m, 1, 2, 5, 5), _t(m, 3, 2, 3, 3, seed=1), _t(m, 3, seed=2), padding=1),
    "conv_transpose2d": lambda m, F: F.conv_transpose2d(_t(m, 1, 2, 4, 4), _t(m, 2, 3, 3, 3, seed=1)),
    "prelu": lambda m, F: F.prelu(_t(m, 2, 3), _t(m, 3, seed=1)),
    "sdpa": lambda m, F: F.scaled_dot_product_attention(_t(m, 1, 3, 4), _t(m, 1, 3, 4, seed=1), _t(m, 1, 3, 4, seed=2)),
    "float64 stays": lambda m, F: _t(m, 3, 4).double() @ _t(m, 4, 2, seed=1).double(),
    "mul is in no list": lambda m, F: _t(m, 3) * _t(m, 3, seed=1),
    "bfloat16 softmax stays": lambda m, F: m.softmax(_t(m, 2, 3, dtype="bfloat16"), 1),
    "prod in float32": lambda m, F: m.prod(_t(m, 2, 3, dtype="bfloat16")),
    "cross_entropy in float32": lambda m, F: F.cross_entropy(_t(m, 3, 4, dtype="bfloat16"), m.tensor([0, 3, 1])),
    "mse_loss in float32": lambda m, F: F.mse_loss(_t(m, 3, 4, dtype="bfloat16"), _t(m, 3, 4, seed=1)),
    "nll_loss in float32": lambda m, F: F.nll_loss(_t(m, 3, 4, dtype="bfloat16"), m.tensor([0, 3, 1])),
    "bce in float32": lambda m, F: F.binary_cross_entropy(_t(m, 3, dtype="bfloat16").sigmoid(), _t(m, 3, seed=1) / 2
                                                          + 0.5),
    "cat promotes": lambda m, F: m.cat([_t(m, 2, dtype="bfloat16"), _t(m, 2, seed=1)]),
    "stack promotes to float64": lambda m, F: m.stack([_t(m, 2, dtype="bfloat16"), _t(m, 2, seed=1).double()]),
    "float16 region": lambda m, F: _region16(m, F),
}


def _region16(m, F):
    with m.autocast("cpu", dtype=m.float16):
        return F.linear(_t(m, 3, 4), _t(m, 5, 4, seed=1))


@pytest.mark.parametrize("name", list(CALLS))
def test_cpu_autocast_casts_as_pytorch_s(name):
    results = []
    for m, F in ((rg, rg.nn.functional), (torch, torch.nn.functional)):
        with m.autocast("cpu"):
            out = CALLS[name](m, F)
        results.append((str(out.dtype).split(".")[-1], out.detach().double().numpy()))
    (ours_dtype, ours), (their_dtype, theirs) = results
    assert ours_dtype == their_dtype
    np.testing.assert_allclose(ours, theirs, rtol=2 ** -7, atol=2 ** -8)


def _train_step(m):
    F = m.nn.functional
    x = _t(m, 4, 3)
    w1, w2 = _t(m, 5, 3, seed=1).requires_grad_(), _t(m, 2, 5, seed=2).requires_grad_()
    with m.autocast("cpu"):
        h = F.linear(x, w1).relu()
        loss = F.cross_entropy(F.linear(h, w2), m.tensor([0, 1, 1, 0]))
    loss.backward()
    return [(str(t.dtype).split(".")[-1], t.detach().double().numpy()) for t in (h, loss, w1.grad, w2.grad)]


def test_a_training_step_under_autocast_matches_pytorch_s_dtypes_and_values():
    for (ours_dtype, ours), (their_dtype, theirs) in zip(_train_step(rg), _train_step(torch), strict=True):
        assert ours_dtype == their_dtype
        np.testing.assert_allclose(ours, theirs, rtol=2 ** -6, atol=2 ** -7)


def test_a_region_on_one_thread_leaves_another_thread_s_calls_alone():
    inside, outside, go, done = [], [], threading.Event(), threading.Event()

    def other():
        go.wait(10)
        outside.append((_t(rg, 2, 2) @ _t(rg, 2, 2)).dtype)
        done.set()
    thread = threading.Thread(target=other)
    thread.start()
    with rg.autocast("cpu"):
        go.set()
        done.wait(10)
        inside.append((_t(rg, 2, 2) @ _t(rg, 2, 2)).dtype)
    thread.join(10)
    assert inside == [rg.bfloat16] and outside == [rg.float32]
    assert (_t(rg, 2, 2) @ _t(rg, 2, 2)).dtype is rg.float32  # the interposer is gone
