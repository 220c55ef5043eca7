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


# -- activations -------------------------------------------------------------------------------------
ACTIVATIONS = [
    ("Hardtanh", (), {}), ("Hardtanh", (-2, 3), {}), ("ReLU6", (), {}), ("PReLU", (), {}), ("PReLU", (3, 0.1), {}),
    ("RReLU", (), {}), ("RReLU", (0.1, 0.3), {}), ("Mish", (), {}), ("Hardswish", (), {}), ("Hardsigmoid", (), {}),
    ("Softsign", (), {}), ("Tanhshrink", (), {}), ("Threshold", (0.1, 20.0), {}), ("GLU", (), {}), ("GLU", (2,), {}),
    ("Softmin", (1,), {}), ("CELU", (), {}), ("CELU", (2.0,), {}), ("SELU", (), {}), ("Hardshrink", (), {}),
    ("Softshrink", (0.3,), {}), ("Softmax2d", (), {}), ("LogSigmoid", (), {}), ("SiLU", (), {}), ("ELU", (0.5,), {}),
    ("LeakyReLU", (0.2,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", ACTIVATIONS, ids=[f"{a[0]}{a[1]}" for a in ACTIVATIONS])
def test_activation_module_matches_torch(name, args, kwargs):
    ours, theirs = _pair_modules(getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs))
    ours.eval(), theirs.eval()
    assert repr(ours) == repr(theirs)
    _check(ours, theirs, _a(2, 3, 4, 2) * 3)
    if name == "LogSigmoid":  # a composite here (-softplus(-x)), one op in PyTorch
        return
    x = _a(2, 3, 4, 2)
    names = []
    for lib, m in ((rg, ours), (torch, theirs)):
        names.append(m(lib.from_numpy(x.copy()).requires_grad_(True)).grad_fn.name())
    assert names[0] == names[1]


@pytest.mark.parametrize("name,args", [("Hardtanh", ()), ("ReLU6", ()), ("RReLU", ()), ("Mish", ()),
                                       ("Hardswish", ()), ("Hardsigmoid", ()), ("Threshold", (0.1, 2.0)),
                                       ("CELU", ()), ("SELU", ()), ("SiLU", ()), ("ELU", ()), ("LeakyReLU", ())])
def test_inplace_activation_writes_into_its_input_as_torch(name, args):
    x = _a(3, 4)
    results = []
    assert repr(getattr(nn, name)(*args, inplace=True)) == repr(getattr(torch.nn, name)(*args, inplace=True))
    for lib in (rg, torch):
        m = getattr(lib.nn, name)(*args, inplace=True)
        m.eval()
        leaf = lib.from_numpy(x.copy()).requires_grad_(True)
        y = leaf * 1
        out = m(y)
        assert out is y
        out.sum().backward()
        results.append((out.detach().numpy(), leaf.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


def test_rrelu_in_training_draws_slopes_in_its_range_from_the_seed():
    x = rg.full((1000,), -1.0, dtype=rg.float64, requires_grad=True)
    m = nn.RReLU(0.1, 0.3)
    rg.manual_seed(4)
    out = m(x)
    slopes = -out.detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes)
    rg.manual_seed(4)
    np.testing.assert_array_equal(m(x).detach().numpy(), out.detach().numpy())
    np.testing.assert_array_equal(m(rg.ones(3)).numpy(), [1., 1., 1.])


def test_activation_errors_match_torch():
    for fn in (lambda lib: lib.nn.functional.hardtanh(lib.ones(2), 2., 1.),
               lambda lib: lib.nn.Softmax2d()(lib.ones(2, 2)),
               lambda lib: lib.nn.functional.celu(lib.ones(2), 0.),
               lambda lib: lib.nn.functional.glu(lib.ones(3, 3)),
               lambda lib: lib.nn.functional.glu(lib.tensor(1.)),
               lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(2)),
               lambda lib: lib.nn.functional.prelu(lib.ones(3), lib.ones(3))):
        _raises_like(fn)


# -- padding -------------------------------------------------------------------------------------------
PADS = [("ZeroPad1d", (2,)), ("ZeroPad2d", ((1, 0, 2, 1),)), ("ZeroPad3d", (1,)), ("ConstantPad1d", ((1, 2), 3.5)),
        ("ConstantPad2d", (1, -1.0)), ("ConstantPad3d", ((1, 0, 0, 1, 1, 1), 2.0)), ("ReflectionPad1d", (2,)),
        ("ReflectionPad2d", ((1, 2, 0, 1),)), ("ReflectionPad3d", (1,)), ("ReplicationPad1d", ((3, 1),)),
        ("ReplicationPad2d", (2,)), ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),)), ("CircularPad1d", (2,)),
        ("CircularPad2d", ((1, 0, 2, 1),)), ("CircularPad3d", (1,))]


@pytest.mark.parametrize("name,args", PADS, ids=[p[0] for p in PADS])
def test_padding_module_matches_torch(name, args):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    n = int(name[-2])
    _check(ours, theirs, _a(*(2, 3, 4, 3, 4)[:n + 2]))
    _check(ours, theirs, _a(*(3, 4, 3, 4)[:n + 1]))


def test_pad_modes_name_their_node_and_raise_as_torch():
    x = _a(2, 3, 4, 5)
    for fn in (lambda lib, x: lib.nn.functional.pad(x[0, 0], (1, 1), mode="reflect"),
               lambda lib, x: lib.nn.functional.pad(x, (1, 1, 2, 1, 1, 1), mode="replicate"),
               lambda lib, x: lib.nn.functional.pad(x[0], (1, 2, 2, 1), mode="reflect")):
        names = [fn(lib, lib.from_numpy(x.copy()).requires_grad_(True)).grad_fn.name() for lib in (rg, torch)]
        assert names[0] == names[1]
    for fn in (lambda lib, x: lib.nn.functional.pad(x, (1, 1), mode="reflect"),
               lambda lib, x: lib.nn.functional.pad(x[0, 0, 0], (1, 1), mode="replicate"),
               lambda lib, x: lib.nn.functional.pad(x[0], (5, 1), mode="reflect"),
               lambda lib, x: lib.nn.functional.pad(x[0], (6, 1), mode="circular"),
               lambda lib, x: lib.nn.functional.pad(x[0], (1,), mode="reflect"),
               lambda lib, x: lib.nn.functional.pad(x[0], (1, 1), mode="reflect", value=1.0),
               lambda lib, x: lib.nn.functional.pad(x[0], (1, 1), mode="foo"),
               lambda lib, x: lib.nn.functional.pad(x[0], (1,) * 8, mode="replicate"),
               lambda lib, x: lib.nn.CircularPad2d(1)(x[0, 0])):
        _raises_like(lambda lib: fn(lib, lib.from_numpy(x.copy())))


# -- pooling, unpooling, pixel shuffle -------------------------------------------------------------------
POOLS = [("MaxPool1d", (2,), (2, 3, 7)), ("MaxPool1d", (3, 2, 1, 2, True), (3, 9)), ("AvgPool1d", (3,), (2, 3, 7)),
         ("AvgPool1d", (3, 2, 1, True, False), (3, 8)), ("AdaptiveAvgPool1d", (3,), (2, 3, 7)),
         ("AdaptiveAvgPool1d", (4,), (3, 8)), ("AdaptiveMaxPool1d", (3,), (2, 3, 7)),
         ("AdaptiveMaxPool2d", ((2, None),), (2, 3, 5, 4)), ("AdaptiveMaxPool2d", (3,), (3, 7, 5)),
         ("PixelShuffle", (2,), (2, 8, 3, 2)), ("PixelUnshuffle", (2,), (3, 4, 6))]


@pytest.mark.parametrize("name,args,shape", POOLS, ids=[f"{p[0]}{p[1]}" for p in POOLS])
def test_pooling_module_matches_torch(name, args, shape):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    _check(ours, theirs, _a(*shape))


@pytest.mark.parametrize("name,args,shape", [("MaxPool1d", (2,), (2, 3, 7)), ("AdaptiveMaxPool1d", (3,), (3, 7)),
                                             ("AdaptiveMaxPool2d", (3,), (2, 2, 7, 5))])
def test_pooling_return_indices_match_torch(name, args, shape):
    x = _a(*shape)
    ours = getattr(nn, name)(*args, return_indices=True)(rg.from_numpy(x))
    theirs = getattr(torch.nn, name)(*args, return_indices=True)(torch.from_numpy(x))
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    assert ours[1].dtype == rg.int64


def test_max_unpool2d_inverts_max_pool2d_as_torch():
    x, x4 = _a(2, 3, 5, 5), _a(3, 4, 4)
    results = []
    for lib in (rg, torch):
        pool, unpool = lib.nn.MaxPool2d(2, return_indices=True), lib.nn.MaxUnpool2d(2)
        out, idx = pool(lib.from_numpy(x.copy()))
        results.append((unpool(*pool(lib.from_numpy(x4.copy()))).numpy(), unpool(out, idx, output_size=(5, 5)).numpy(),
                        repr(unpool)))
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)
    out, idx = F.max_pool2d(rg.from_numpy(x), 2, return_indices=True)
    with pytest.raises(ValueError, match=r'invalid output_size "\(7, 5\)" \(dim 0 must be between 2 and 6\)'):
        F.max_unpool2d(out, idx, 2, output_size=(7, 5))
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 18 \(output volumes are of size 2x2\)"):
        F.max_unpool2d(out[:, :, :1, :1], rg.full((2, 3, 1, 1), 18), 2)


def test_pooling_errors_match_torch():
    x = _a(2, 3, 7)
    for fn in (lambda lib, x: lib.nn.functional.max_pool1d(x[0, 0], 2),
               lambda lib, x: lib.nn.functional.max_pool1d(x, 2, padding=2),
               lambda lib, x: lib.nn.functional.avg_pool1d(x[None], 2),
               lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x[0, 0], 2),
               lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x, (2, 3)),
               lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x[None], 2),
               lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x[0, 0], 2),
               lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2),
               lambda lib, x: lib.nn.functional.pixel_shuffle(x[0], 2),
               lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2)):
        _raises_like(lambda lib: fn(lib, lib.from_numpy(x.copy())))


# -- interpolation -------------------------------------------------------------------------------------
UPSAMPLES = [((), dict(scale_factor=2), (1, 2, 3, 4)), ((), dict(size=(5, 7), mode="bilinear"), (2, 1, 3, 4)),
             ((), dict(scale_factor=(1.5, 2.5), mode="bilinear", align_corners=True), (1, 2, 3, 3)),
             ((), dict(size=9, mode="linear"), (2, 2, 4)), ((), dict(scale_factor=3, mode="nearest"), (1, 2, 3)),
             ((), dict(size=(3, 2), mode="area"), (1, 2, 6, 5)),
             ((), dict(scale_factor=1.3, mode="bilinear", recompute_scale_factor=True), (1, 1, 5, 4))]


@pytest.mark.parametrize("args,kwargs,shape", UPSAMPLES)
def test_upsample_module_matches_torch(args, kwargs, shape):
    ours, theirs = nn.Upsample(*args, **kwargs), torch.nn.Upsample(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    _check(ours, theirs, _a(*shape))


@pytest.mark.parametrize("name", ["UpsamplingNearest2d", "UpsamplingBilinear2d"])
def test_upsampling_2d_modules_match_torch(name):
    ours, theirs = getattr(nn, name)(scale_factor=2), getattr(torch.nn, name)(scale_factor=2)
    assert repr(ours) == repr(theirs)
    _check(ours, theirs, _a(1, 2, 3, 4))


def test_interpolate_errors_match_torch():
    x = _a(1, 2, 3, 4)
    for fn in (lambda lib, x: lib.nn.functional.interpolate(x, size=3, scale_factor=2),
               lambda lib, x: lib.nn.functional.interpolate(x),
               lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, align_corners=True),
               lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 3, 4)),
               lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=(2, 3, 4)),
               lambda lib, x: lib.nn.functional.interpolate(x, size=3, recompute_scale_factor=True),
               lambda lib, x: lib.nn.functional.interpolate(x, size=3, mode="linear"),
               lambda lib, x: lib.nn.functional.interpolate(x[0], size=3, mode="bilinear"),
               lambda lib, x: lib.nn.functional.interpolate(x[0, 0], size=3)):
        _raises_like(lambda lib: fn(lib, lib.from_numpy(x.copy())))


# -- normalization -------------------------------------------------------------------------------------
NORMS = [("GroupNorm", (2, 4), {}, (2, 4, 3)), ("GroupNorm", (1, 3), dict(affine=False), (2, 3, 2, 2)),
         ("GroupNorm", (3, 3), dict(bias=False, eps=1e-3), (2, 3, 5)),
         ("InstanceNorm1d", (3,), {}, (2, 3, 5)), ("InstanceNorm1d", (3,), dict(affine=True), (3, 5)),
         ("InstanceNorm2d", (2,), dict(affine=True, track_running_stats=True), (3, 2, 3, 4)),
         ("InstanceNorm3d", (2,), {}, (2, 2, 2, 3, 2)),
         ("RMSNorm", (4,), {}, (2, 3, 4)), ("RMSNorm", ((2, 3),), dict(eps=1e-3, elementwise_affine=False), (4, 2, 3)),
         ("LocalResponseNorm", (3,), {}, (2, 5, 4)), ("LocalResponseNorm", (2, 1e-2, 0.5, 2.0), {}, (2, 4, 3, 2))]


@pytest.mark.parametrize("name,args,kwargs,shape", NORMS, ids=[f"{n[0]}{n[1]}" for n in NORMS])
def test_normalization_module_matches_torch(name, args, kwargs, shape):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(0.5, 1.5)
    ours, theirs = _pair_modules(ours, theirs)
    assert repr(ours) == repr(theirs)
    _check(ours, theirs, _a(*shape) * 2 + 1)
    for a, b in zip(ours.buffers(), theirs.buffers(), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7)
    if any(True for _ in theirs.buffers()):  # evaluation uses the running statistics
        ours.eval(), theirs.eval()
        _check(ours, theirs, _a(*shape))


def test_group_norm_is_one_node_as_torch():
    names = [lib.nn.functional.group_norm(lib.from_numpy(_a(2, 4, 3)).requires_grad_(True), 2).grad_fn.name()
             for lib in (rg, torch)]
    assert names[0] == names[1]


def test_normalization_errors_match_torch():
    for fn in (lambda lib: lib.nn.functional.group_norm(lib.ones(2, 3, 4), 2),
               lambda lib: lib.nn.GroupNorm(2, 3),
               lambda lib: lib.nn.functional.instance_norm(lib.ones(2, 3, 1)),
               lambda lib: lib.nn.InstanceNorm1d(3)(lib.ones(2, 3, 4, 5)),
               lambda lib: lib.nn.InstanceNorm1d(3, affine=True)(lib.ones(2, 4, 5)),
               lambda lib: lib.nn.functional.local_response_norm(lib.ones(2, 3), 2),
               lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3), (4,))):
        _raises_like(fn)


# -- embeddings ------------------------------------------------------------------------------------------
def test_embedding_padding_idx_and_max_norm_match_torch():
    w = _a(5, 3) * 2
    idx = np.array([[0, 2, 4], [4, 1, 0]])
    for kwargs in (dict(padding_idx=0), dict(padding_idx=-1), dict(max_norm=1.0), dict(max_norm=1.5, norm_type=1.0),
                   dict(scale_grad_by_freq=True)):
        mods = []
        for lib in (rg, torch):
            m = lib.nn.Embedding(5, 3, **kwargs).double()
            with lib.no_grad():
                m.weight.copy_(lib.from_numpy(w.copy()))
            mods.append(m)
        assert repr(mods[0]) == repr(mods[1])
        _check(mods[0], mods[1], idx, grad=True)
        np.testing.assert_allclose(mods[0].weight.detach().numpy(), mods[1].weight.detach().numpy(), rtol=1e-7)


@pytest.mark.parametrize("kwargs,inputs", [
    (dict(mode="mean"), (np.array([0, 2, 1, 2, 3]), np.array([0, 2]))),
    (dict(mode="sum", padding_idx=1), (np.array([[0, 1], [1, 1], [2, 3]]),)),
    (dict(mode="max"), (np.array([0, 2, 1, 2, 3, 1]), np.array([0, 3, 3]))),
    (dict(mode="mean", include_last_offset=True, max_norm=1.0), (np.array([1, 0, 1, 2, 2]), np.array([0, 2, 4]))),
])
def test_embedding_bag_module_matches_torch(kwargs, inputs):
    ours, theirs = _pair_modules(nn.EmbeddingBag(4, 3, **kwargs), torch.nn.EmbeddingBag(4, 3, **kwargs))
    assert repr(ours) == repr(theirs)
    _check(ours, theirs, *inputs)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-7)


def test_embedding_bag_per_sample_weights_match_torch_and_twice_differentiable():
    ours, theirs = _pair_modules(nn.EmbeddingBag(4, 2, mode="sum"), torch.nn.EmbeddingBag(4, 2, mode="sum"))
    idx, offsets, psw = np.array([1, 0, 3, 1]), np.array([0, 1, 1]), _a(4)
    _check(ours, theirs, idx, offsets, psw)
    w = rg.from_numpy(_a(4, 2)).requires_grad_(True)
    p = rg.from_numpy(psw.copy()).requires_grad_(True)
    for mode, weights in (("sum", p), ("mean", None), ("max", None)):
        def fn(w, *p, mode=mode):
            return F.embedding_bag(rg.from_numpy(idx), w, rg.from_numpy(offsets), mode=mode,
                                   per_sample_weights=p[0] if p else None)
        args = (w, weights) if weights is not None else (w,)
        assert rg.autograd.gradgradcheck(fn, args)


def test_embedding_bag_errors_match_torch():
    for fn in (lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[0, 1]]), lib.ones(3, 2), lib.tensor([0])),
               lambda lib: lib.nn.functional.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2)),
               lambda lib: lib.nn.functional.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([[0]])),
               lambda lib: lib.nn.functional.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([0]),
                                                           mode="foo"),
               lambda lib: lib.nn.functional.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([0]),
                                                           per_sample_weights=lib.ones(2)),
               lambda lib: lib.nn.functional.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([0]),
                                                           padding_idx=5),
               lambda lib: lib.nn.functional.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([1])),
               lambda lib: lib.nn.EmbeddingBag(3, 2, padding_idx=4)):
        _raises_like(fn)


# -- dropout -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,shape,lead", [("Dropout1d", (4, 6, 50), 2), ("Dropout1d", (6, 50), 1),
                                             ("Dropout2d", (4, 6, 5, 10), 2), ("Dropout3d", (4, 6, 2, 5, 5), 2),
                                             ("Dropout3d", (6, 2, 5, 5), 1)])
def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest(name, shape, lead):
    m = getattr(nn, name)(0.4)
    assert repr(m) == repr(getattr(torch.nn, name)(0.4))
    rg.manual_seed(0)
    x = rg.ones(*shape, dtype=rg.float64, requires_grad=True)
    out = m(x)
    flat = out.detach().numpy().reshape(int(np.prod(shape[:lead])), -1)
    per_channel = np.unique(flat, axis=1)
    assert per_channel.shape[1] == 1  # one value per channel
    assert set(np.unique(flat)) <= {0.0, 1 / 0.6}
    assert 0 < (flat[:, 0] == 0).sum() < flat.shape[0]
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.detach().numpy())
    rg.manual_seed(0)
    np.testing.assert_array_equal(m(x).detach().numpy(), out.detach().numpy())
    m.eval()
    assert m(x) is x


def test_dropout_layer_errors_match_torch():
    for fn in (lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5)),
               lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3, 4, 5), p=1.5),
               lambda lib: lib.nn.Dropout2d(-0.1),
               lambda lib: lib.nn.functional.alpha_dropout(lib.ones(2), p=2.0, training=True)):
        _raises_like(fn)


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_keeps_zero_mean_unit_variance(name):
    m = getattr(nn, name)(0.3)
    assert repr(m) == repr(getattr(torch.nn, name)(0.3))
    rg.manual_seed(1)
    x = rg.randn(200, 50, 20, dtype=rg.float64)
    out = m(x).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    dropped = -1.7580993408473766 / np.sqrt((1.7580993408473766 ** 2 * 0.3 + 1) * 0.7) \
        + 1.7580993408473766 * 0.3 / np.sqrt((1.7580993408473766 ** 2 * 0.3 + 1) * 0.7)
    assert np.isclose(out, dropped).mean() == pytest.approx(0.3, abs=0.03)
    if name == "FeatureAlphaDropout":
        assert (np.isclose(out, dropped).all(-1) == np.isclose(out, dropped).any(-1)).all()
    m.eval()
    assert m(x) is x
    assert F.alpha_dropout(x, 0.3) is x  # training=False by default, as PyTorch


# -- CTC ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, dict(reduction="sum", blank=4), dict(reduction="none", zero_infinity=True)])
def test_ctc_loss_module_matches_torch(kwargs):
    x = _a(6, 3, 5)
    targets, il, tl = np.array([[1, 2, 2], [3, 1, 0], [2, 3, 3]]), np.array([6, 5, 2]), np.array([3, 2, 3])
    _check(nn.CTCLoss(**kwargs), torch.nn.CTCLoss(**kwargs), x, targets, il, tl,
           call=lambda m, x, t, i, n: m(x.log_softmax(2), t, i, n))
    assert repr(nn.CTCLoss(**kwargs)) == repr(torch.nn.CTCLoss(**kwargs))


def test_ctc_loss_has_no_second_derivative_as_torch():
    x = rg.from_numpy(_a(4, 1, 3)).requires_grad_(True)
    loss = F.ctc_loss(x.log_softmax(2), rg.tensor([[1, 2]]), [4], [2])
    (g,) = rg.autograd.grad(loss, x, create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for ctc_loss_backward is not implemented"):
        g.sum().backward()


def test_ctc_loss_errors_match_torch():
    lp = _a(4, 2, 3)
    for fn in (lambda lib, x: lib.nn.functional.ctc_loss(x, lib.tensor([[1], [2]]), [4], [1, 1]),
               lambda lib, x: lib.nn.functional.ctc_loss(x, lib.tensor([[1], [2]]), [4, 4], [1]),
               lambda lib, x: lib.nn.functional.ctc_loss(x, lib.tensor([[1], [2]]), [5, 4], [1, 1])):
        _raises_like(lambda lib: fn(lib, lib.from_numpy(lp.copy()).log_softmax(2)))
