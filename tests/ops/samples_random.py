"""Samples of random sampling (retrograd/ops/random.py); format in samples.py.

The numbers are NumPy's stream, not PyTorch's, so these samples skip the PyTorch comparison
(tests/ops/test_random.py compares shapes, dtypes and errors, and checks the distributions). Each
call draws from a freshly seeded generator, so that gradcheck's perturbed calls draw the same
numbers: the gradient is zero, as PyTorch's (normal's too, which gradcheck would dispute).
"""
import numpy as np

from samples import A, Const, P, Sample, add


def _gen(m):
    return m.Generator().manual_seed(3)


add("multinomial",
    Sample(lambda m, p: m.multinomial(p, 2, generator=_gen(m)), P(4), torch=False),
    Sample(lambda m, p: p.multinomial(5, True, generator=_gen(m)), P(2, 3), torch=False),
    Sample(lambda m, p: m.multinomial(p, 1, generator=_gen(m)), np.array([0., 0., 1.]), torch=False,
           ref=lambda p: np.array([2])))
add("bernoulli",
    Sample(lambda m, p: m.bernoulli(p, generator=_gen(m)), A(2, 3, low=0.1, high=0.9), torch=False),
    Sample(lambda m, x: x.bernoulli(0.5, generator=_gen(m)), A(3), torch=False),
    Sample(lambda m, p: m.bernoulli(p), np.array([0., 1., 1.]), torch=False, grad=False,
           ref=lambda p: np.array([0., 1., 1.])))
add("dropout_bernoulli",  # dropout's mask while an interposer watches: bernoulli's draws, in place into an empty tensor
    Sample(lambda m, x: m.ops.REGISTRY["dropout_bernoulli"](x, 1.0), Const(A(2, 3)), torch=False, grad=False,
           ref=np.ones_like),
    Sample(lambda m, x: m.ops.REGISTRY["dropout_bernoulli"](x, 0.0, _gen(m)), Const(A(4)), torch=False, grad=False,
           ref=np.zeros_like))
add("poisson",
    Sample(lambda m, r: m.poisson(r, _gen(m)), P(2, 3), torch=False),
    Sample(lambda m, r: m.poisson(r), np.array([0., 0.]), torch=False, grad=False, ref=lambda r: np.zeros(2)))
# PyTorch's gradient of normal is zero although the draw moves with mean and std: no gradcheck.
add("normal",
    Sample(lambda m, mean: m.normal(mean, 2., generator=_gen(m)), A(2, 3), torch=False, grad=False),
    Sample(lambda m, std: m.normal(1., std, generator=_gen(m)), P(3), torch=False, grad=False),
    Sample(lambda m, mean, std: m.normal(mean, std, generator=_gen(m)), A(2, 1), P(3), torch=False, grad=False,
           note="broadcasting"),
    Sample(lambda m, mean: m.normal(mean, 0.), A(3), torch=False, grad=False, ref=lambda mean: mean,
           note="std 0 gives the mean"))
