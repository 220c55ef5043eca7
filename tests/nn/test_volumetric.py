"""The volumetric (3-d) layers, the folding layers, power-average pooling and the ``*_with_indices`` names, module
and functional, against torch.nn on the same weights and numbers: outputs, gradients, reprs, state_dict keys,
node names and errors. The ops' own sweep (tests/ops/samples_volumetric.py) runs gradcheck and gradgradcheck."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd import nn

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(11)


def _a(*shape):
    return _rng.standard_normal(shape)


def _paired(ours, theirs):
    """``ours`` with ``theirs``'s parameters and buffers, both in float64."""
    theirs = theirs.double()
    ours.double()
    ours.load_state_dict({k: rg.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _run(lib, call, arrays):
    """``call(lib, *tensors)`` and the gradients of its floating outputs (seeded) for the inputs that require grad."""
    xs = [lib.from_numpy(a.copy()) for a in arrays]
    for x in xs:
        if x.is_floating_point():
            x.requires_grad_(True)
    out = call(lib, *xs)
    outs = list(out) if isinstance(out, tuple) else [out]
    diff = [o for o in outs if o.requires_grad]
    leaves = [x for x in xs if x.requires_grad] + [p for p in getattr(call, "params", lambda lib: [])(lib)]
    seeds = [lib.from_numpy(np.random.default_rng(3).standard_normal(tuple(o.shape))) for o in diff]
    grads = lib.autograd.grad(diff, leaves, seeds, allow_unused=True) if diff else []
    name = outs[0].grad_fn.name() if outs[0].grad_fn is not None else None
    return [o.detach().numpy() for o in outs], [None if g is None else g.numpy() for g in grads], name


def _same(call, *arrays):
    (o1, g1, n1), (o2, g2, n2) = _run(rg, call, arrays), _run(torch, call, arrays)
    assert n1 == n2
    for a, b in zip(o1 + g1, o2 + g2, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)


def _raises_like(fn):
    """``fn(lib)`` raises the same error type, with the same first sentence, in retrograd and torch."""
    errors = []
    for lib in (rg, torch):
        with pytest.raises(Exception) as info:  # any type: compared with PyTorch's
            fn(lib)
        errors.append(info.value)
    assert type(errors[0]).__name__ == type(errors[1]).__name__
    first = [str(e).replace("retrograd.Size", "torch.Size").split(". ")[0] for e in errors]
    assert first[0] == first[1]


# -- functional ----------------------------------------------------------------------------------------------
def _F(lib):
    return lib.nn.functional


CALLS = {
    "conv3d": (lambda lib, x, w, b: _F(lib).conv3d(x, w, b, stride=(1, 2, 1), padding=1, dilation=(2, 1, 1)),
               (1, 2, 4, 5, 3), (3, 2, 2, 2, 2), (3,)),
    "conv3d_same_groups": (lambda lib, x, w: _F(lib).conv3d(x, w, padding="same", groups=2), (4, 3, 2, 3),
                           (2, 2, 2, 1, 2)),
    "conv3d_valid": (lambda lib, x, w: lib.conv3d(x, w, None, 1, "valid"), (1, 1, 3, 3, 3), (1, 1, 2, 2, 2)),
    "conv_transpose3d": (lambda lib, x, w, b: _F(lib).conv_transpose3d(x, w, b, stride=2, padding=(1, 0, 0),
                                                                       output_padding=(1, 0, 1), groups=2),
                         (1, 4, 2, 3, 2), (4, 1, 2, 2, 2), (2,)),
    "torch.conv_transpose3d": (lambda lib, x, w: lib.conv_transpose3d(x, w, None, 1, 0, 0, 1, 2), (2, 2, 2, 2),
                               (2, 1, 2, 1, 2)),
    "max_pool3d": (lambda lib, x: _F(lib).max_pool3d(x, (2, 3, 2), stride=(1, 2, 2), padding=1, ceil_mode=True,
                                                      return_indices=True), (1, 2, 3, 5, 4)),
    "max_pool3d_dilation": (lambda lib, x: _F(lib).max_pool3d(x, 2, dilation=(1, 2, 1)), (2, 3, 5, 4)),
    "torch.max_pool3d": (lambda lib, x: lib.max_pool3d(x, 2), (1, 1, 2, 4, 4)),
    "max_pool1d_with_indices": (lambda lib, x: _F(lib).max_pool1d_with_indices(x, 2), (2, 2, 5)),
    "max_pool2d_with_indices": (lambda lib, x: _F(lib).max_pool2d_with_indices(x, 2, 1), (1, 3, 3)),
    "max_pool3d_with_indices": (lambda lib, x: _F(lib).max_pool3d_with_indices(x, 2), (1, 1, 2, 2, 4)),
    "avg_pool3d": (lambda lib, x: _F(lib).avg_pool3d(x, (3, 2, 2), stride=2, padding=1, ceil_mode=True,
                                                      count_include_pad=False), (1, 2, 5, 4, 5)),
    "avg_pool3d_divisor": (lambda lib, x: _F(lib).avg_pool3d(x, 2, 1, divisor_override=5), (2, 3, 3, 3)),
    "adaptive_avg_pool3d": (lambda lib, x: _F(lib).adaptive_avg_pool3d(x, (2, 3, None)), (1, 2, 5, 4, 3)),
    "adaptive_avg_pool3d_even": (lambda lib, x: _F(lib).adaptive_avg_pool3d(x, (2, 1, None)), (1, 2, 4, 3, 2)),
    "adaptive_max_pool3d": (lambda lib, x: _F(lib).adaptive_max_pool3d(x, (2, 3, 2), True), (1, 2, 3, 5, 4)),
    "adaptive_max_pool1d_with_indices": (lambda lib, x: _F(lib).adaptive_max_pool1d_with_indices(x, 3),
                                         (2, 2, 7)),
    "adaptive_max_pool2d_with_indices": (lambda lib, x: _F(lib).adaptive_max_pool2d_with_indices(x, (2, 3)),
                                         (2, 5, 4)),
    "adaptive_max_pool3d_with_indices": (lambda lib, x: _F(lib).adaptive_max_pool3d_with_indices(x, 2),
                                         (1, 1, 3, 3, 3)),
    "max_unpool3d": (lambda lib, x: _F(lib).max_unpool3d(*_F(lib).max_pool3d(x, 2, return_indices=True), 2,
                                                          output_size=(1, 2, 5, 4, 5)), (1, 2, 5, 4, 5)),
    "max_unpool1d": (lambda lib, x: _F(lib).max_unpool1d(*_F(lib).max_pool1d(x, 3, 2, 1, return_indices=True), 3,
                                                          2, 1), (2, 7)),
    "lp_pool1d": (lambda lib, x: _F(lib).lp_pool1d(x, 2, 3, 2), (2, 2, 7)),
    "lp_pool2d": (lambda lib, x: _F(lib).lp_pool2d(x.abs(), 1.5, (2, 3), ceil_mode=True), (1, 2, 5, 7)),
    "lp_pool3d": (lambda lib, x: _F(lib).lp_pool3d(x, 4, 2, (1, 2, 2)), (2, 3, 4, 4)),
    "unfold_unbatched": (lambda lib, x: _F(lib).unfold(x, (2, 3), padding=1, stride=2), (2, 4, 5)),
    "fold_unbatched": (lambda lib, x: _F(lib).fold(x, (3, 4), 2), (8, 6)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_functional_matches_torch(name):
    call, *shapes = CALLS[name]
    _same(call, *[_a(*s) for s in shapes])


def test_double_backward_of_3d_max_pools_records_pytorchs_nodes():
    x = _a(1, 2, 3, 3, 3)
    for f in (lambda lib, t: _F(lib).max_pool3d(t, 2, 1), lambda lib, t: _F(lib).adaptive_max_pool3d(t, 2)):
        names = []
        for lib in (rg, torch):
            t = lib.from_numpy(x.copy()).requires_grad_()
            y = f(lib, t)
            g, = lib.autograd.grad(y, t, lib.ones_like(y), create_graph=True)
            names.append(g.grad_fn.name())
        assert names[0] == names[1]


ERRORS = [
    lambda lib, x: _F(lib).conv3d(x[0, 0], lib.ones(1, 2, 2, 2, 2, dtype=lib.float64)),
    lambda lib, x: _F(lib).conv3d(x, lib.ones(1, 2, 5, 2, 2, dtype=lib.float64)),
    lambda lib, x: _F(lib).conv3d(x, lib.ones(1, 3, 2, 2, 2, dtype=lib.float64)),
    lambda lib, x: _F(lib).conv3d(x, lib.ones(1, 2, 2, 2, 2, dtype=lib.float64), stride=2, padding="same"),
    lambda lib, x: _F(lib).conv3d(x, lib.ones(1, 2, 2, 2, dtype=lib.float64)),
    lambda lib, x: _F(lib).conv_transpose3d(x, lib.ones(2, 2, 2, 2, 2, dtype=lib.float64), stride=2,
                                            output_padding=2),
    lambda lib, x: _F(lib).conv_transpose3d(x, lib.ones(3, 2, 2, 2, 2, dtype=lib.float64)),
    lambda lib, x: _F(lib).max_pool3d(x[0, 0], 2),
    lambda lib, x: _F(lib).max_pool3d(x, 2, padding=2),
    lambda lib, x: _F(lib).avg_pool3d(x[0, 0, 0], 2),
    lambda lib, x: _F(lib).avg_pool3d(x, 2, divisor_override=0),
    lambda lib, x: _F(lib).adaptive_avg_pool3d(x[0, 0], 2),
    lambda lib, x: _F(lib).adaptive_max_pool3d(x[0, 0], 2),
    lambda lib, x: _F(lib).max_unpool3d(*_F(lib).max_pool3d(x, 2, return_indices=True), 2, output_size=(9, 4, 4)),
    lambda lib, x: _F(lib).max_unpool3d(*_F(lib).max_pool3d(x, 2, return_indices=True), 2, output_size=(4, 4)),
    lambda lib, x: _F(lib).max_unpool3d(x[:, :, :2, :2, :2], lib.full((1, 2, 2, 2, 2), 70), 2),
    lambda lib, x: _F(lib).unfold(x, 2),
    lambda lib, x: _F(lib).unfold(x[0, 0, 0], 2),
    lambda lib, x: _F(lib).fold(x, 2, 2),
    lambda lib, x: lib.nn.BatchNorm3d(2).double()(x[0]),
    lambda lib, x: lib.nn.Conv3d(2, 2, 2, stride=2, padding="same"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    x = _a(1, 2, 4, 4, 4)
    _raises_like(lambda lib: ERRORS[i](lib, lib.from_numpy(x.copy())))


# -- modules -------------------------------------------------------------------------------------------------
MODULES = [
    ("Conv3d", (2, 4, (2, 3, 2)), dict(stride=(1, 2, 1), padding=(1, 0, 1), bias=False), (2, 2, 3, 5, 4)),
    ("Conv3d", (4, 2, 2), dict(padding=1, padding_mode="circular", groups=2, dilation=(1, 1, 2)), (4, 3, 3, 4)),
    ("Conv3d", (2, 2, 3), dict(padding="same", padding_mode="reflect"), (1, 2, 3, 4, 4)),
    ("ConvTranspose3d", (2, 3, 2), dict(stride=2, output_padding=(1, 0, 1), dilation=1), (1, 2, 2, 3, 2)),
    ("MaxPool3d", (2,), dict(stride=1, padding=1, ceil_mode=True), (1, 2, 3, 4, 3)),
    ("AvgPool3d", ((1, 2, 2),), dict(count_include_pad=False, padding=(0, 1, 1)), (2, 3, 3, 4)),
    ("AdaptiveAvgPool3d", ((1, None, 2),), {}, (1, 2, 3, 4, 4)),
    ("AdaptiveMaxPool3d", (2,), {}, (1, 2, 3, 4, 5)),
    ("LPPool1d", (2, 3), dict(stride=2), (2, 3, 8)),
    ("LPPool2d", (3, 2), dict(ceil_mode=True), (2, 3, 5)),
    ("LPPool3d", (1, (1, 2, 2)), {}, (1, 2, 2, 4, 4)),
    ("Fold", ((4, 5), (2, 3)), dict(padding=1, stride=(2, 1)), (2, 12, 15)),
    ("Unfold", ((2, 3),), dict(dilation=(2, 1), stride=2), (2, 2, 5, 5)),
    ("BatchNorm3d", (2,), dict(momentum=None), (3, 2, 2, 2, 3)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", MODULES, ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_module_matches_torch(name, args, kwargs, shape):
    ours, theirs = _paired(getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    call = lambda lib, x: (ours if lib is rg else theirs)(x)  # noqa: E731
    call.params = lambda lib: list((ours if lib is rg else theirs).parameters())
    _same(call, _a(*shape))
    if "BatchNorm" in name:
        np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.detach().numpy())


def test_unpool_modules_invert_pooling_as_torch():
    x1, x3 = _a(2, 3, 7), _a(1, 2, 4, 4, 5)
    results = []
    for lib in (rg, torch):
        pool1, unpool1 = lib.nn.MaxPool1d(2, return_indices=True), lib.nn.MaxUnpool1d(2)
        pool3, unpool3 = lib.nn.MaxPool3d(2, return_indices=True), lib.nn.MaxUnpool3d(2)
        results.append([unpool1(*pool1(lib.from_numpy(x1.copy())), output_size=[2, 3, 7]).numpy(),
                        unpool3(*pool3(lib.from_numpy(x3.copy())), output_size=(4, 4, 5)).numpy(), repr(unpool1),
                        repr(unpool3),
                        repr(pool3)])
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)


def test_unknown_padding_string_is_a_value_error():  # PyTorch's message prints a set, in no fixed order
    with pytest.raises(ValueError, match="Invalid padding string 'full', should be one of "):
        nn.Conv3d(2, 2, 2, padding="full")


def test_conv_transpose3d_output_size_as_torch():
    x = _a(1, 2, 2, 3, 2)
    ours, theirs = _paired(nn.ConvTranspose3d(2, 3, 3, stride=2), torch.nn.ConvTranspose3d(2, 3, 3, stride=2))
    out = ours(rg.from_numpy(x.copy()), output_size=[6, 7, 6])
    np.testing.assert_allclose(out.detach().numpy(), theirs(torch.from_numpy(x), output_size=[6, 7, 6]).detach()
                               .numpy(), rtol=1e-10)
    _raises_like(lambda lib: (ours if lib is rg else theirs)(lib.from_numpy(x.copy()), output_size=[9, 7, 6]))


def test_float32_volumetric_layers_stay_float32():
    x = rg.randn(1, 2, 3, 4, 4)
    for m in (nn.Conv3d(2, 3, 2), nn.ConvTranspose3d(2, 3, 2), nn.AvgPool3d(2), nn.MaxPool3d(2), nn.LPPool3d(2, 2),
              nn.BatchNorm3d(2), nn.AdaptiveMaxPool3d(2), nn.AdaptiveAvgPool3d(3)):
        assert m(x).dtype == rg.float32
