"""The Lazy modules and the uninitialized parameters, against torch.nn: reprs before and after the first
forward, the class each becomes, state_dict keys and loading, the shapes read from the input, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd import nn

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(5)

LAZY = [
    ("LazyLinear", (3,), {}, (2, 4)),
    ("LazyLinear", (2,), dict(bias=False), (5,)),
    ("LazyConv1d", (4, 3), dict(padding=1), (2, 3, 6)),
    ("LazyConv2d", (4, 2), dict(groups=2, bias=False), (2, 4, 3)),
    ("LazyConv3d", (2, 2), dict(stride=2), (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (2, 3), dict(stride=2), (1, 3, 4)),
    ("LazyConvTranspose2d", (4, 2), dict(groups=2), (1, 2, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), {}, (3, 2, 2, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), dict(affine=False), (2, 3, 2, 2)),
    ("LazyBatchNorm3d", (), dict(track_running_stats=False), (2, 2, 2, 1, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 4)),
    ("LazyInstanceNorm2d", (), dict(affine=True, track_running_stats=True), (2, 2, 3, 3)),
    ("LazyInstanceNorm3d", (), dict(affine=True), (1, 2, 2, 2, 3)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY, ids=[f"{m[0]}-{i}" for i, m in enumerate(LAZY)])
def test_lazy_module_materializes_as_torch(name, args, kwargs, shape):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [type(v).__name__ for v in ours.state_dict().values()] == \
        [type(v).__name__ for v in theirs.state_dict().values()]
    assert ours.has_uninitialized_params() and theirs.has_uninitialized_params()
    x = _rng.standard_normal(shape)
    theirs.double()(torch.from_numpy(x))
    first = ours(rg.from_numpy(x.astype(np.float32)))  # initializes in float32, as it was made
    assert first.dtype == rg.float32
    assert type(ours).__name__ == type(theirs).__name__ and repr(ours) == repr(theirs)
    assert not hasattr(ours, "_initialize_hook")
    assert [(k, tuple(v.shape), type(v).__name__) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape), type(v).__name__) for k, v in theirs.state_dict().items()]
    # the same numbers once the weights agree
    ours.double().load_state_dict({k: rg.from_numpy(v.detach().numpy().copy()) for k, v in
                                   theirs.state_dict().items()})
    np.testing.assert_allclose(ours(rg.from_numpy(x)).detach().numpy(),
                               theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make,source,shape", [
    (lambda lib: lib.nn.LazyLinear(3), lambda lib: lib.nn.Linear(4, 3), (1, 4)),
    (lambda lib: lib.nn.LazyConvTranspose2d(4, 2, groups=2), lambda lib: lib.nn.ConvTranspose2d(2, 4, 2, groups=2),
     (1, 2, 3, 3)),
    (lambda lib: lib.nn.LazyConv1d(4, 2, groups=2), lambda lib: lib.nn.Conv1d(6, 4, 2, groups=2), (1, 6, 3)),
    (lambda lib: lib.nn.LazyBatchNorm2d(), lambda lib: lib.nn.BatchNorm2d(3), (2, 3, 2, 2))],
    ids=["LazyLinear", "LazyConvTranspose2d", "LazyConv1d", "LazyBatchNorm2d"])
def test_loading_a_state_dict_materializes_a_lazy_module(make, source, shape):
    reprs = []
    for lib in (rg, torch):
        src, target = source(lib), make(lib)
        target.load_state_dict(src.state_dict())
        reprs.append(repr(target))
        for k, v in src.state_dict().items():
            np.testing.assert_array_equal(target.state_dict()[k].numpy(), v.numpy())
        target(lib.ones(*shape))
        reprs.append(repr(target))
    assert reprs[:2] == reprs[2:]


def test_the_optimizer_keeps_the_materialized_parameters():
    m = nn.LazyLinear(2)
    opt = rg.optim.SGD(m.parameters(), lr=0.1)
    m(rg.ones(3, 4)).sum().backward()
    before = m.weight.detach().numpy().copy()
    opt.step()
    np.testing.assert_allclose(m.weight.detach().numpy(), before - 0.1 * 3)


def _outcome(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - compared with PyTorch's
        return type(exc).__name__, str(exc).replace("retrograd.Size", "torch.Size").split(". ")[0]
    return None


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.LazyLinear(3).weight.shape,
    lambda lib: lib.nn.Linear(4, 3).load_state_dict(lib.nn.LazyLinear(3).state_dict()),
    lambda lib: lib.nn.LazyConv2d(2, 3)(lib.ones(3, 3)),
    lambda lib: lib.nn.LazyConv2d(2, 3, groups=2)(lib.ones(1, 3, 4, 4)),
], ids=["shape", "load into an initialized module", "conv rank", "conv groups"])
def test_errors_match_torch(call):
    assert _outcome(lambda: call(rg)) == _outcome(lambda: call(torch))


def test_an_uninitialized_parameter_refuses_ops_until_materialized():
    p = nn.UninitializedParameter()
    assert repr(p) == repr(torch.nn.UninitializedParameter()) == "<UninitializedParameter>"
    for use in (lambda: p + 1, lambda: p.detach(), lambda: rg.exp(p)):
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in "):
            use()
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and p.requires_grad and tuple(p.shape) == (2, 3)
    b = nn.UninitializedBuffer()
    b.materialize(4, dtype=rg.float64)
    assert type(b) is rg.Tensor and b.dtype == rg.float64 and not b.requires_grad
