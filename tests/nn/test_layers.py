"""The layers beyond the basics (transposed convolution, pools, interpolation, norms, activations,
padding), module and functional, against torch.nn on the same weights and numbers."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd import nn

torch = pytest.importorskip("torch")


def _pair_modules(ours, theirs):
    """``ours`` with ``theirs``'s parameters and buffers, both in float64."""
    theirs = theirs.double()
    ours.double()
    ours.load_state_dict({k: rg.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _check(ours, theirs, *arrays, grad=True, call=None, rtol=1e-7):
    """Same outputs and same gradients (inputs and parameters) for ``ours`` and ``theirs`` on ``arrays``."""
    call = call or (lambda m, *xs: m(*xs))
    results = []
    for lib, mod in ((rg, ours), (torch, theirs)):
        xs = [lib.from_numpy(a.copy()) for a in arrays]
        for x in xs:
            if grad and x.is_floating_point():
                x.requires_grad_(True)
        out = call(mod, *xs)
        outs = list(out) if isinstance(out, tuple) else [out]
        grads = []
        if grad:
            params = [p for p in (mod.parameters() if hasattr(mod, "parameters") else []) if p.requires_grad]
            leaves = [x for x in xs if x.requires_grad] + params
            seeds = [np.random.default_rng(3).standard_normal(tuple(o.shape)) for o in outs if o.requires_grad]
            diff = [o for o in outs if o.requires_grad]
            gs = lib.autograd.grad(diff, leaves, [lib.from_numpy(s) for s in seeds], allow_unused=True)
            grads = [None if g is None else g.detach().numpy() for g in gs]
        results.append(([o.detach().numpy() for o in outs], grads))
    (o1, g1), (o2, g2) = results
    for a, b in zip(o1, o2, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-10)
    for a, b in zip(g1, g2, strict=True):
        if a is None or b is None:
            assert a is None and b is None or not np.any(a if b is None else b)
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-10)


def _raises_like(fn):
    """``fn(lib)`` raises the same error type, with the same first sentence, in retrograd and torch."""
    errors = []
    for lib in (rg, torch):
        with pytest.raises(Exception) as info:
            fn(lib)
        errors.append(info.value)
    assert type(errors[0]).__name__ == type(errors[1]).__name__
    first = [str(e).replace("retrograd.Size", "torch.Size").split(". ")[0] for e in errors]
    assert first[0] == first[1]


_rng = np.random.default_rng(0)


def _a(*shape):
    return _rng.standard_normal(shape)


# -- transposed convolution -----------------------------------------------------------------------------
@pytest.mark.parametrize("args,kwargs,shape", [
    ((2, 3, 3), {}, (2, 2, 4, 5)),
    ((4, 2, (2, 3)), dict(stride=2, padding=1, output_padding=1, groups=2, dilation=(2, 1)), (1, 4, 3, 4)),
    ((2, 4, 2), dict(bias=False, stride=(1, 2)), (2, 3, 3)),
])
def test_conv_transpose2d_module_matches_torch(args, kwargs, shape):
    ours, theirs = _pair_modules(nn.ConvTranspose2d(*args, **kwargs), torch.nn.ConvTranspose2d(*args, **kwargs))
    assert repr(ours) == repr(theirs)
    _check(ours, theirs, _a(*shape))


@pytest.mark.parametrize("args,kwargs,shape", [
    ((2, 3, 3), {}, (2, 2, 5)),
    ((4, 2, 2), dict(stride=3, padding=1, output_padding=2, groups=2, dilation=2), (1, 4, 4)),
    ((2, 4, 3), dict(bias=False), (2, 6)),
])
def test_conv_transpose1d_module_matches_torch(args, kwargs, shape):
    ours, theirs = _pair_modules(nn.ConvTranspose1d(*args, **kwargs), torch.nn.ConvTranspose1d(*args, **kwargs))
    assert repr(ours) == repr(theirs)
    _check(ours, theirs, _a(*shape))


def test_conv_transpose_output_size_picks_the_output_padding():
    ours, theirs = _pair_modules(nn.ConvTranspose2d(2, 3, 3, stride=2), torch.nn.ConvTranspose2d(2, 3, 3, stride=2))
    for size in ([9, 11], [10, 12], [2, 3, 10, 11]):
        _check(ours, theirs, _a(2, 2, 4, 5), call=lambda m, x: m(x, output_size=size))
    for size in ([9, 13], [2, 9, 11]):
        _raises_like(lambda lib: (ours if lib is rg else theirs)(lib.ones(2, 2, 4, 5, dtype=lib.float64),
                                                                 output_size=size))


def test_conv_transpose_errors_match_torch():
    x = _a(2, 4, 4, 5)
    for fn in (lambda lib, x: lib.nn.functional.conv_transpose2d(x, lib.ones(3, 2, 2, 2, dtype=lib.float64)),
               lambda lib, x: lib.nn.functional.conv_transpose2d(x, lib.ones(4, 2, 2, 2, dtype=lib.float64),
                                                                 output_padding=2),
               lambda lib, x: lib.nn.functional.conv_transpose2d(x[0, 0], lib.ones(4, 2, 2, 2, dtype=lib.float64)),
               lambda lib, x: lib.nn.functional.conv_transpose1d(x[0], lib.ones(4, 2, 2, dtype=lib.float64),
                                                                 output_padding=2),
               lambda lib, x: lib.nn.functional.conv_transpose2d(x, lib.ones(4, 2, 2, 2, dtype=lib.float64),
                                                                 groups=3),
               lambda lib, x: lib.nn.functional.conv_transpose2d(x, lib.ones(4, 2, 2, 2, dtype=lib.float64),
                                                                 stride=0),
               lambda lib, x: lib.nn.functional.conv1d(x[0], lib.ones(4, 2, 2, dtype=lib.float64)),
               lambda lib, x: lib.nn.functional.conv1d(x[0], lib.ones(4, 4, 9, dtype=lib.float64)),
               lambda lib, x: lib.nn.functional.conv1d(x[0], lib.ones(4, 4, 2, 2, dtype=lib.float64)),
               lambda lib, x: lib.nn.functional.conv2d(x, lib.ones(4, 4, 2, dtype=lib.float64))):
        _raises_like(lambda lib: fn(lib, lib.from_numpy(x)))
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(1, 1, 2, padding_mode="reflect")


def test_conv1d_and_unbatched_max_pool2d_are_one_node_as_torch():
    for fn in (lambda lib, x: lib.nn.functional.conv1d(x, lib.ones(2, 3, 2, dtype=lib.float64)),
               lambda lib, x: lib.nn.functional.conv_transpose1d(x, lib.ones(3, 2, 2, dtype=lib.float64)),
               lambda lib, x: lib.nn.functional.max_pool2d(x, 2)):
        names = [fn(lib, lib.from_numpy(_a(2, 3, 4)).requires_grad_(True)).grad_fn.name() for lib in (rg, torch)]
        assert names[0] == names[1]
