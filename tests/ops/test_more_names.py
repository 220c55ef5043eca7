"""The names added beside the others (retrograd/nn/_functional_more.py, nn/_grid.py, ops/shuffle.py, ops/lu.py,
_top_level_more.py) where the op sweep (tests/ops/samples_names.py) cannot show them, against torch on the same
numbers: module reprs, node names, errors, random draws, in-place forms, second derivatives PyTorch lacks,
warnings, settings and printing."""
import warnings

import numpy as np
import pytest
from errors_like_torch import first_sentence

import retrograd as rg
from retrograd.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def same_error(call):
    """``call(lib)`` raises the same error type and first sentence in retrograd as in torch (retrograd's dtypes
    named as torch's)."""
    raised = []
    for lib in (rg, torch):
        with pytest.raises(Exception) as info:  # any type: it is compared with PyTorch's
            call(lib)
        raised.append((type(info.value), first_sentence(info.value).replace("retrograd.", "torch.")))
    assert raised[0] == raised[1]


def _pair(values, dtype="float64", requires_grad=False):
    """The same numbers as a retrograd and a torch tensor."""
    values = np.asarray(values, dtype=dtype)
    return (rg.tensor(values, requires_grad=requires_grad), torch.tensor(values, requires_grad=requires_grad))


# -- modules ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda nn: nn.Bilinear(3, 4, 5), lambda nn: nn.Bilinear(2, 2, 1, bias=False), lambda nn: nn.ChannelShuffle(3),
    lambda nn: nn.MultiMarginLoss(p=2, margin=0.5), lambda nn: nn.MultiLabelMarginLoss(reduction="sum"),
    lambda nn: nn.TripletMarginWithDistanceLoss(), lambda nn: nn.TripletMarginWithDistanceLoss(margin=0.5, swap=True),
], ids=["Bilinear", "Bilinear no bias", "ChannelShuffle", "MultiMarginLoss", "MultiLabelMarginLoss",
        "TripletMarginWithDistanceLoss", "TripletMarginWithDistanceLoss swap"])
def test_module_reprs_match_torch(make):
    assert repr(make(rg.nn)) == repr(make(torch.nn))


def test_modules_compute_as_torch():
    ours, theirs = rg.nn.Bilinear(3, 2, 4, dtype=rg.float64), torch.nn.Bilinear(3, 2, 4, dtype=torch.float64)
    for name in ("weight", "bias"):
        getattr(ours, name).data = rg.tensor(getattr(theirs, name).detach().numpy().copy())
    assert tuple(ours.weight.shape) == (4, 3, 2) and float(ours.weight.abs().max()) <= 1 / np.sqrt(3)
    x1, y1 = _pair(np.random.default_rng(0).standard_normal((5, 3)))
    x2, y2 = _pair(np.random.default_rng(1).standard_normal((5, 2)))
    np.testing.assert_allclose(ours(x1, x2).detach().numpy(), theirs(y1, y2).detach().numpy(), atol=1e-12)
    scores, target = np.random.default_rng(2).standard_normal((4, 3)), np.array([0, 2, 1, 2])
    weight = np.array([0.5, 1.0, 2.0])
    for make in (lambda nn, w: nn.MultiMarginLoss(weight=w), lambda nn, w: nn.MultiMarginLoss(p=2, reduction="none")):
        a = make(rg.nn, rg.tensor(weight))(rg.tensor(scores), rg.tensor(target))
        b = make(torch.nn, torch.tensor(weight))(torch.tensor(scores), torch.tensor(target))
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-12)
    a, p, n = (np.random.default_rng(k).standard_normal((3, 4)) for k in (3, 4, 5))
    ours = rg.nn.TripletMarginWithDistanceLoss(swap=True)(*(rg.tensor(v) for v in (a, p, n)))
    theirs = torch.nn.TripletMarginWithDistanceLoss(swap=True)(*(torch.tensor(v) for v in (a, p, n)))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.MultiMarginLoss(p=3),
    lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
    lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=0),
], ids=["p", "weight", "margin"])
def test_module_errors_match_torch(call):
    same_error(call)


# -- node names ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.channel_shuffle(x.reshape(1, 4, 3), 2),
    lambda lib, x: lib.nn.functional.bilinear(x[:2], x[:2], x.reshape(3, 2, 2), x[:3]),
    lambda lib, x: lib.bilinear(x[:2], x[:2], x.reshape(3, 2, 2), None),
    lambda lib, x: lib.constant_pad_nd(x, (1, 1)),
    lambda lib, x: lib.adjoint(x.reshape(3, 4)),
    lambda lib, x: lib.cumulative_trapezoid(x),
    lambda lib, x: lib.linalg.lu_factor(x[:9].reshape(3, 3)).LU,
    lambda lib, x: lib.linalg.lu(x[:9].reshape(3, 3)).U,
    lambda lib, x: lib.lu_unpack(*lib.linalg.lu_factor(x[:4].reshape(2, 2) + 3)).L,
    lambda lib, x: lib.linalg.lu_solve(*lib.linalg.lu_factor(x[:4].reshape(2, 2) + 3), x[:2].reshape(2, 1)),
], ids=["channel_shuffle", "bilinear", "bilinear without bias", "constant_pad_nd", "adjoint", "cumulative_trapezoid",
        "lu_factor", "lu", "lu_unpack", "lu_solve"])
def test_node_names_match_torch(call):
    values = np.random.default_rng(6).standard_normal(12)
    names = []
    for lib in (rg, torch):
        x = lib.tensor(values, requires_grad=True)
        names.append(call(lib, x).grad_fn.name())
    assert names[0] == names[1]


# -- errors ----------------------------------------------------------------------------------------------------------
def _singular(lib):
    a = lib.zeros(2, 2, 2)
    a[0] = lib.eye(2)
    a[1, 0, 0] = 1
    return a


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.channel_shuffle(lib.ones(1, 4, 2), 3),
    lambda lib: lib.nn.functional.channel_shuffle(lib.ones(1, 4, 2), 0),
    lambda lib: lib.channel_shuffle(lib.ones(4, 2), 2),
    lambda lib: lib.nn.functional.bilinear(lib.ones(2, 3), lib.ones(2, 4), lib.ones(5, 3, 3)),
    lambda lib: lib.nn.functional.bilinear(lib.ones(2, 3), lib.ones(3, 4), lib.ones(5, 3, 4)),
    lambda lib: lib.nn.functional.bilinear(lib.ones(2, 3), lib.ones(2, 4), lib.ones(5, 3, 4), lib.ones(4)),
    lambda lib: lib.nn.functional.bilinear(lib.ones(2, 3, dtype=lib.float64), lib.ones(2, 4), lib.ones(5, 3, 4)),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 5])),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1, 2])),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(2, 3), lib.zeros(2)),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1]), p=3),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1]),
                                                    weight=lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1]),
                                                    weight=lib.ones(3, requires_grad=True)),
    lambda lib: lib.nn.functional.multilabel_margin_loss(lib.ones(2, 3), lib.tensor([0, 1, 2])),
    lambda lib: lib.nn.functional.multilabel_margin_loss(lib.ones(2, 3), lib.tensor([[0, 1, 5], [0, 1, 2]])),
    lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(lib.ones(3), lib.ones(3), lib.ones(3),
                                                                    margin=-1.0),
    lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(lib.ones(3), lib.ones(3), lib.ones(3),
                                                                    reduction="avg"),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), mode="linear"),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), padding_mode="wrap"),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2, dtype=lib.float64),
                                              align_corners=False),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(2, 1, 1, 2), align_corners=False),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 3), align_corners=False),
    lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 2, 2), lib.zeros(1, 1, 2), align_corners=False),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 2, 3), (1, 1, 2, 2, 2), align_corners=False),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 2, 3), (1, 2), align_corners=False),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 2, 3, dtype=lib.int64), (1, 1, 2, 2), align_corners=False),
    lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 2, 3), (1, 1, 0, 2), align_corners=False),
    lambda lib: lib.linalg.lu_factor(_singular(lib)),
    lambda lib: lib.linalg.lu_factor(lib.ones(3)),
    lambda lib: lib.linalg.lu_factor(lib.eye(2), pivot=False),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(2)), lib.ones(3, 1)),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(2)), lib.ones(1, 3), left=False),
    lambda lib: lib.linalg.lu_solve(lib.eye(2), lib.tensor([1, 2]), lib.ones(2, 1)),
    lambda lib: lib.linalg.lu_solve(lib.eye(2), lib.tensor([1, 2], dtype=lib.int32), lib.ones(2, 1, dtype=lib.float64)),
    lambda lib: lib.adjoint(lib.ones(3)),
    lambda lib: lib.range(0, 3, 0),
    lambda lib: lib.range(3, 0),
    lambda lib: lib.cumulative_trapezoid(lib.tensor(1.0)),
    lambda lib: lib.set_deterministic_debug_mode("bogus"),
    lambda lib: lib.set_deterministic_debug_mode(3),
    lambda lib: lib.set_deterministic_debug_mode(1.5),
    lambda lib: lib.use_deterministic_algorithms(1),
    lambda lib: lib.is_complex(3),
], ids=["channel_shuffle groups", "channel_shuffle 0 groups", "channel_shuffle 2-d", "bilinear input2",
        "bilinear batch", "bilinear bias", "bilinear dtypes", "multi_margin target range", "multi_margin target size",
        "multi_margin float target", "multi_margin p", "multi_margin weight dtype", "multi_margin weight grad",
        "multilabel target size", "multilabel target range", "triplet dims", "triplet margin", "triplet reduction",
        "grid_sample mode", "grid_sample padding", "grid_sample dtypes", "grid_sample batch", "grid_sample grid",
        "grid_sample 3-d", "affine_grid theta", "affine_grid size", "affine_grid dtype", "affine_grid empty",
        "lu_factor singular", "lu_factor 1-d", "lu_factor no pivots", "lu_solve shapes", "lu_solve right shapes",
        "lu_solve pivots dtype", "lu_solve dtypes", "adjoint 1-d", "range step", "range sign",
        "cumulative_trapezoid 0-d", "debug mode name", "debug mode int", "debug mode type", "deterministic type",
        "is_complex"])
def test_errors_match_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.range's deprecation
        same_error(call)
    rg.use_deterministic_algorithms(False)
    torch.use_deterministic_algorithms(False)


def test_the_ex_form_reports_singular_matrices_as_torch():
    ours, theirs = rg.linalg.lu_factor_ex(_singular(rg)), torch.linalg.lu_factor_ex(_singular(torch))
    assert ours.info.tolist() == theirs.info.tolist() == [0, 2] and ours.info.dtype is rg.int32
    np.testing.assert_array_equal(ours.LU.numpy(), theirs.LU.numpy())
    assert ours.pivots.tolist() == theirs.pivots.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.lu's deprecation
        lu, pivots, info = rg.lu(_singular(rg), get_infos=True)
        assert info.tolist() == [0, 2] and type(rg.lu(rg.eye(2))) is tuple
        assert rg.eye(2).lu()[1].tolist() == torch.eye(2).lu()[1].tolist()
    assert rg.zeros(0, 0).numel() == rg.linalg.lu_factor(rg.zeros(0, 0)).LU.numel()


# -- gumbel_softmax --------------------------------------------------------------------------------------------------
def test_gumbel_softmax_draws_the_categorical_distribution():
    rg.manual_seed(0)
    logits = rg.tensor([[1.0, 0.0, -1.0]], dtype=rg.float64).expand(4000, 3)
    hard = rg.nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
    assert set(np.unique(hard.numpy())) == {0.0, 1.0} and (hard.sum(-1) == 1).all()
    freq = hard.numpy().mean(0)  # the Gumbel-max draw: frequencies are softmax(logits)
    np.testing.assert_allclose(freq, np.exp([1, 0, -1]) / np.exp([1, 0, -1]).sum(), atol=0.03)
    soft = rg.nn.functional.gumbel_softmax(logits, tau=2.0, dim=1)
    np.testing.assert_allclose(soft.sum(-1).numpy(), 1.0)
    assert (soft > 0).all() and (soft < 1).all()
    rg.manual_seed(1)
    first = rg.nn.functional.gumbel_softmax(logits[:3])
    rg.manual_seed(1)
    assert (rg.nn.functional.gumbel_softmax(logits[:3]) == first).all()


def test_hard_gumbel_softmax_passes_the_soft_gradient_straight_through():
    logits = rg.tensor(np.random.default_rng(7).standard_normal((3, 4)), requires_grad=True)
    weights = rg.tensor(np.random.default_rng(8).standard_normal((3, 4)))
    grads = []
    for hard in (True, False):
        rg.manual_seed(4)
        out = rg.nn.functional.gumbel_softmax(logits, tau=0.7, hard=hard)
        (g,) = rg.autograd.grad((out * weights).sum(), logits)
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-12)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        rg.nn.functional.gumbel_softmax(logits, eps=1e-5)

    def sample(x):
        rg.manual_seed(5)  # the same noise at every evaluation
        return rg.nn.functional.gumbel_softmax(x, tau=0.7)
    assert gradcheck(sample, (logits,)) and gradgradcheck(sample, (logits,))


# -- in-place activations --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,args", [("relu_", ()), ("elu_", (0.5,)), ("celu_", (2.0,)), ("selu_", ()),
                                       ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.5)), ("rrelu_", (0.1, 0.3))])
def test_inplace_activations_write_their_input_as_torch(name, args):
    values = np.array([-1.5, -0.2, 0.3, 2.0])
    found = []
    for lib in (rg, torch):
        leaf = lib.tensor(values, requires_grad=True)
        x = leaf * 1
        out = getattr(lib.nn.functional, name)(x, *args)
        assert out is x
        out.backward(lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64))
        found.append((x.detach().numpy().copy(), leaf.grad.numpy().copy(), out.grad_fn.name()))
    np.testing.assert_allclose(found[0][0], found[1][0], atol=1e-12)
    np.testing.assert_allclose(found[0][1], found[1][1], atol=1e-12)
    assert found[0][2] == found[1][2]


# -- second derivatives PyTorch does not have ----------------------------------------------------------------------
def test_second_derivatives_of_the_margin_losses_and_grid_sample():
    rng = np.random.default_rng(9)
    x = rg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    target = rg.tensor([2, 0])
    labels = rg.tensor([[1, -1, 0], [0, 2, -1]])
    for fn in (lambda x: rg.nn.functional.multi_margin_loss(x, target, p=2),
               lambda x: rg.nn.functional.multilabel_margin_loss(x, labels)):
        assert gradgradcheck(fn, (x,))
    image = rg.tensor(rng.standard_normal((1, 1, 2, 3)), requires_grad=True)
    grid = rg.tensor(rng.uniform(-1.1, 1.1, (1, 1, 2, 2)), requires_grad=True)
    for mode in ("bilinear", "bicubic"):
        assert gradgradcheck(lambda i, g: rg.nn.functional.grid_sample(i, g, mode, "reflection", False), (image, grid))
