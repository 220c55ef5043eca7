"""retrograd.nn.functional: gradcheck in float64, and forward and gradients equal to PyTorch's.

Each case is one call written once for both libraries (``F`` is ``retrograd.nn.functional`` or
``torch.nn.functional``) on NumPy inputs; floating inputs require grad unless wrapped in ``Const``.
"""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as RF
from retrograd.autograd import gradcheck, gradgradcheck

_rng = np.random.default_rng(7)


def A(*shape, low=-2.0, high=2.0):
    return _rng.uniform(low, high, shape)


def I(high, *shape):  # noqa: E743
    return _rng.integers(0, high, shape).astype(np.int64)


class Const:
    def __init__(self, array):
        self.array = np.asarray(array, dtype=np.float64)


def case(name, call, *inputs, grad=True, gradgrad=True, atol=1e-5):
    """``grad=False``: no finite-difference check (the op's gradient is not the derivative by design)."""
    return pytest.param(call, inputs, (grad, gradgrad), atol, id=name)


CASES = [
    case("conv2d", lambda F, x, w, b: F.conv2d(x, w, b), A(2, 3, 5, 5), A(4, 3, 3, 3), A(4)),
    case("conv2d_stride_pad_dil", lambda F, x, w: F.conv2d(x, w, stride=2, padding=(1, 2), dilation=(2, 1)),
         A(2, 2, 6, 5), A(3, 2, 2, 3)),
    case("conv2d_groups", lambda F, x, w, b: F.conv2d(x, w, b, padding=1, groups=2), A(1, 4, 4, 4), A(6, 2, 3, 3),
         A(6)),
    case("conv2d_same", lambda F, x, w: F.conv2d(x, w, padding="same"), A(1, 1, 4, 5), A(2, 1, 2, 3)),
    case("conv2d_unbatched", lambda F, x, w: F.conv2d(x, w), A(2, 4, 4), A(1, 2, 2, 2)),
    case("conv1d", lambda F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1), A(2, 3, 7), A(2, 3, 3), A(2)),
    case("conv1d_groups_dil", lambda F, x, w: F.conv1d(x, w, dilation=2, groups=3), A(1, 3, 8), A(3, 1, 3)),
    case("unfold", lambda F, x: F.unfold(x, (2, 3), dilation=1, padding=1, stride=(2, 1)), A(2, 2, 4, 5)),
    case("fold", lambda F, x: F.fold(x, (4, 5), (2, 3), padding=1, stride=(2, 1)), A(2, 12, 15)),
    case("max_pool2d", lambda F, x: F.max_pool2d(x, 2), A(2, 3, 4, 6)),
    case("max_pool2d_opts", lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1, dilation=1, ceil_mode=True),
         A(1, 2, 6, 7)),
    case("max_pool2d_dilation", lambda F, x: F.max_pool2d(x, (2, 2), stride=1, dilation=2), A(1, 1, 5, 5)),
    case("max_pool2d_indices", lambda F, x: F.max_pool2d(x, 2, return_indices=True), A(1, 2, 4, 4)),
    case("avg_pool2d", lambda F, x: F.avg_pool2d(x, 2), A(2, 2, 4, 6)),
    case("avg_pool2d_pad", lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1), A(1, 2, 5, 6)),
    case("avg_pool2d_nopadcount_ceil", lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                                                  count_include_pad=False), A(1, 1, 6, 6)),
    case("avg_pool2d_ceil", lambda F, x: F.avg_pool2d(x, 2, ceil_mode=True), A(1, 1, 5, 5)),
    case("avg_pool2d_divisor", lambda F, x: F.avg_pool2d(x, 2, divisor_override=3), A(1, 1, 4, 4)),
    case("adaptive_avg_pool2d", lambda F, x: F.adaptive_avg_pool2d(x, (3, 2)), A(2, 2, 5, 7)),
    case("adaptive_avg_pool2d_even", lambda F, x: F.adaptive_avg_pool2d(x, 2), A(1, 2, 4, 6)),
    case("embedding", lambda F, w, i: F.embedding(i, w), A(5, 3), I(5, 2, 4)),
    case("embedding_padding", lambda F, w, i: F.embedding(i, w, padding_idx=1), A(5, 3),
         np.array([[1, 2, 1], [0, 4, 2]]), grad=False),  # the padding row gets no gradient
    case("embedding_scale_freq", lambda F, w, i: F.embedding(i, w, scale_grad_by_freq=True), A(4, 2),
         np.array([0, 0, 3, 1, 0]), grad=False),  # gradients scaled by 1/frequency by design
    case("normalize", lambda F, x: F.normalize(x), A(3, 4)),
    case("normalize_p1_dim0", lambda F, x: F.normalize(x, p=1.0, dim=0), A(3, 4)),
    case("normalize_dims_eps", lambda F, x: F.normalize(x, dim=(1, 2), eps=10.0), A(2, 2, 3)),  # eps binds
    case("layer_norm", lambda F, x, w, b: F.layer_norm(x, (4,), w, b), A(3, 4), A(4), A(4)),
    case("layer_norm_2d_noaffine", lambda F, x: F.layer_norm(x, (2, 3), eps=1e-3), A(2, 2, 3)),
    case("batch_norm_train", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
         A(4, 3), A(3), A(3)),
    case("batch_norm_train_4d", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True, eps=1e-3),
         A(2, 2, 3, 2), A(2), A(2)),
    case("batch_norm_eval", lambda F, x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False),
         A(3, 2, 2), Const(A(2)), Const(A(2, low=0.5, high=2.0)), A(2), A(2)),
    case("linear", lambda F, x, w, b: F.linear(x, w, b), A(2, 3, 4), A(5, 4), A(5)),
    case("linear_nobias_1d", lambda F, x, w: F.linear(x, w), A(4), A(2, 4)),
    case("linear_2d", lambda F, x, w, b: F.linear(x, w, b), A(3, 4), A(5, 4), A(5)),
    case("linear_1d_bias", lambda F, x, w, b: F.linear(x, w, b), A(4), A(5, 4), A(5)),
    case("linear_4d_bias", lambda F, x, w, b: F.linear(x, w, b), A(2, 1, 3, 4), A(2, 4), A(2)),
    case("linear_strided_input", lambda F, x, w, b: F.linear(x.transpose(0, 1), w, b), A(3, 2, 4), A(5, 4), A(5)),
    case("layer_norm_weight_only_3d", lambda F, x, w: F.layer_norm(x, (3,), w), A(2, 4, 3), A(3)),
    case("layer_norm_bias_only", lambda F, x, b: F.layer_norm(x, (3,), None, b), A(4, 3), A(3)),
    case("pad_constant", lambda F, x: F.pad(x, (1, 2, 0, 1), value=0.5), A(2, 3, 3)),
    case("pad_negative", lambda F, x: F.pad(x, (-1, 2, 1, -2)), A(2, 4, 5)),
    case("pad_reflect", lambda F, x: F.pad(x, (2, 1, 1, 2), mode="reflect"), A(1, 2, 4, 4)),
    case("pad_replicate", lambda F, x: F.pad(x, (2, 1, 1, 3), mode="replicate"), A(1, 2, 3, 4)),
    case("pad_circular", lambda F, x: F.pad(x, (2, 1, 1, 0), mode="circular"), A(1, 2, 3, 4)),
    case("softplus", lambda F, x: F.softplus(x), A(3, 4, low=-5, high=5)),
    case("softplus_beta", lambda F, x: F.softplus(x, beta=2.0, threshold=3.0), np.array([-3., -0.5, 0.3, 1.4, 2.5])),
    case("gelu", lambda F, x: F.gelu(x), A(3, 4, low=-4, high=4)),
    case("gelu_tanh", lambda F, x: F.gelu(x, approximate="tanh"), A(3, 4, low=-4, high=4)),
    case("silu", lambda F, x: F.silu(x), A(3, 4, low=-5, high=5)),
    case("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2), np.array([-2., -0.5, 0.3, 1.5])),
    case("elu", lambda F, x: F.elu(x, alpha=1.5), np.array([-2., -0.5, 0.3, 1.5])),
    case("relu", lambda F, x: F.relu(x), np.array([-2., -0.5, 0.3, 1.5])),
    case("softmax", lambda F, x: F.softmax(x, dim=1), A(2, 3)),
    case("log_softmax", lambda F, x: F.log_softmax(x, dim=-1), A(2, 3)),
    case("cross_entropy", lambda F, x, t: F.cross_entropy(x, t), A(4, 5), I(5, 4)),
    case("cross_entropy_opts", lambda F, x, t, w: F.cross_entropy(x, t, w, ignore_index=2, label_smoothing=0.2),
         A(5, 4), np.array([0, 2, 3, 1, 2]), Const(A(4, low=0.5, high=1.5))),
    case("cross_entropy_smoothing", lambda F, x, t: F.cross_entropy(x, t, ignore_index=1, label_smoothing=0.1),
         A(4, 3), np.array([0, 1, 2, 2])),
    case("cross_entropy_sum_nd", lambda F, x, t: F.cross_entropy(x, t, reduction="sum"), A(2, 3, 2, 2),
         I(3, 2, 2, 2)),
    case("cross_entropy_none_smooth_w", lambda F, x, t, w: F.cross_entropy(x, t, w, reduction="none",
                                                                          label_smoothing=0.3),
         A(3, 4), np.array([3, 0, 1]), Const(A(4, low=0.5, high=1.5))),
    case("cross_entropy_probs", lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.1), A(3, 4),
         Const(_rng.dirichlet(np.ones(4), 3))),
    case("cross_entropy_unbatched", lambda F, x, t: F.cross_entropy(x, t), A(4), np.array(2)),
    case("nll_loss", lambda F, x, t, w: F.nll_loss(x, t, w, ignore_index=0), A(4, 3), np.array([0, 1, 2, 1]),
         Const(A(3, low=0.5, high=1.5))),
    case("nll_loss_none", lambda F, x, t: F.nll_loss(x, t, reduction="none"), A(3, 3, 2), I(3, 3, 2)),
    case("mse_loss", lambda F, x, y: F.mse_loss(x, y), A(3, 4), A(3, 4)),
    case("mse_loss_sum", lambda F, x, y: F.mse_loss(x, y, reduction="sum"), A(3, 4), A(3, 4)),
    case("l1_loss", lambda F, x, y: F.l1_loss(x, y, reduction="none"), A(3, 4), A(3, 4)),
    case("binary_cross_entropy", lambda F, x, y, w: F.binary_cross_entropy(x, y, w),
         A(3, 4, low=0.05, high=0.95), A(3, 4, low=0, high=1), Const(A(3, 4, low=0.5, high=1.5))),
    case("bce_with_logits", lambda F, x, y: F.binary_cross_entropy_with_logits(x, y), A(3, 4, low=-4, high=4),
         A(3, 4, low=0, high=1)),
    case("bce_with_logits_pos_weight", lambda F, x, y, w, p: F.binary_cross_entropy_with_logits(
        x, y, w, pos_weight=p, reduction="sum"), A(3, 4, low=-4, high=4), A(3, 4, low=0, high=1), Const(A(4)), Const(A(4, low=0.5, high=3))),
    case("mse_loss_weight", lambda F, x, y, w: F.mse_loss(x, y, weight=w), A(3, 4), A(3, 4), Const(A(3, 4, low=0.5))),
    case("l1_loss_weight", lambda F, x, y, w: F.l1_loss(x, y, weight=w, reduction="sum"), A(3, 4), A(3, 4),
         Const(A(3, 4, low=0.5))),
    case("smooth_l1_loss", lambda F, x, y: F.smooth_l1_loss(x, y, reduction="none", beta=0.7), A(3, 4), A(3, 4)),
    case("smooth_l1_loss_mean", lambda F, x, y: F.smooth_l1_loss(x, y), A(3, 4), A(3, 4)),
    case("smooth_l1_loss_beta0", lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.0, reduction="sum"), A(5), A(5)),
    case("huber_loss", lambda F, x, y: F.huber_loss(x, y, delta=0.8, reduction="none"), A(3, 4), A(3, 4)),
    case("huber_loss_weight", lambda F, x, y, w: F.huber_loss(x, y, weight=w), A(3, 4), A(3, 4),
         Const(A(3, 4, low=0.5))),
    case("kl_div_batchmean", lambda F, x, t: F.kl_div(x, t, reduction="batchmean"), A(3, 4, low=-3, high=-0.1),
         A(3, 4, low=0.01, high=1)),
    case("kl_div_zero_target", lambda F, x, t: F.kl_div(x, t, reduction="sum"), A(2, 3, low=-3, high=-0.1),
         Const(np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]))),
    case("kl_div_log_target", lambda F, x, t: F.kl_div(x, t, reduction="none", log_target=True),
         A(3, 4, low=-3, high=-0.1), A(3, 4, low=-3, high=-0.1)),
    case("margin_ranking_loss", lambda F, a, b, t: F.margin_ranking_loss(a, b, t, margin=0.3), A(6), A(6),
         Const(np.array([1., -1., 1., 1., -1., -1.]))),
    case("hinge_embedding_loss", lambda F, x, t: F.hinge_embedding_loss(x, t, margin=1.5, reduction="none"),
         A(2, 3, low=0.1, high=2.5), Const(np.array([[1., -1., -1.], [-1., 1., -1.]]))),
    case("soft_margin_loss", lambda F, x, t: F.soft_margin_loss(x, t), A(3, 4),
         Const(np.sign(A(3, 4)))),
    case("logsigmoid", lambda F, x: F.logsigmoid(x), A(3, 4, low=-30, high=30)),
    case("multilabel_soft_margin_loss", lambda F, x, t, w: F.multilabel_soft_margin_loss(x, t, w), A(3, 4),
         Const(_rng.integers(0, 2, (3, 4))), Const(A(4, low=0.5))),
    case("poisson_nll_loss", lambda F, x, t: F.poisson_nll_loss(x, t), A(3, 4), Const(I(5, 3, 4))),
    case("poisson_nll_loss_full", lambda F, x, t: F.poisson_nll_loss(x, t, log_input=False, full=True,
                                                                    reduction="sum"),
         A(3, 4, low=0.2, high=3), Const(I(5, 3, 4))),
    case("gaussian_nll_loss", lambda F, x, t, v: F.gaussian_nll_loss(x, t, v), A(3, 4), A(3, 4),
         A(3, 4, low=0.2, high=2)),
    case("gaussian_nll_loss_shared_var", lambda F, x, t, v: F.gaussian_nll_loss(x, t, v, full=True, reduction="none"),
         A(3, 4), A(3, 4), A(3, low=0.2, high=2)),
    case("gaussian_nll_loss_var_1", lambda F, x, t, v: F.gaussian_nll_loss(x, t, v, reduction="sum"),
         A(3, 4), A(3, 4), A(3, 1, low=0.2, high=2)),
    case("pairwise_distance", lambda F, a, b: F.pairwise_distance(a, b), A(4, 3), A(4, 3)),
    case("pairwise_distance_p1_keepdim", lambda F, a, b: F.pairwise_distance(a, b, p=3.0, keepdim=True),
         A(4, 3), A(3)),
    case("cosine_similarity", lambda F, a, b: F.cosine_similarity(a, b), A(4, 3), A(4, 3)),
    case("cosine_similarity_dim0", lambda F, a, b: F.cosine_similarity(a, b, dim=0), A(5, 2), A(5, 2)),
    case("cosine_embedding_loss", lambda F, a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.2), A(4, 3), A(4, 3),
         Const(np.array([1., -1., -1., 1.]))),
    case("cosine_embedding_loss_1d", lambda F, a, b, t: F.cosine_embedding_loss(a, b, t), A(3), A(3),
         Const(np.array(-1.))),
    case("triplet_margin_loss", lambda F, a, p, n: F.triplet_margin_loss(a, p, n, margin=2.0), A(4, 3), A(4, 3),
         A(4, 3)),
    case("triplet_margin_loss_swap_p1", lambda F, a, p, n: F.triplet_margin_loss(a, p, n, p=1, swap=True,
                                                                                 reduction="none"),
         A(4, 3), A(4, 3), A(4, 3)),
]


def _tensors(lib, inputs, requires_grad=True):
    out = []
    for a in inputs:
        if isinstance(a, Const):
            out.append(lib.tensor(a.array.copy()))
        elif np.asarray(a).dtype.kind == "f":
            out.append(lib.tensor(np.array(a, dtype=np.float64), requires_grad=requires_grad))
        else:
            out.append(lib.tensor(np.array(a)))
    return out


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("call,inputs,gradgrad,atol", CASES)
def test_gradcheck(call, inputs, gradgrad, atol):
    grad, gradgrad = gradgrad
    if not grad:
        pytest.skip("gradient differs from the derivative by design")
    xs = _tensors(rg, inputs)
    fn = lambda *a: call(RF, *a)  # noqa: E731
    assert gradcheck(fn, xs, atol=atol)
    if gradgrad:
        assert gradgradcheck(fn, xs, atol=atol)


@pytest.mark.parametrize("call,inputs,gradgrad,atol", CASES)
def test_matches_torch(call, inputs, gradgrad, atol):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    xs = _tensors(rg, inputs)
    ts = _tensors(torch, inputs)
    outs = _outputs(call(RF, *xs))
    touts = _outputs(call(TF, *ts))
    assert len(outs) == len(touts)
    for o, t in zip(outs, touts, strict=True):
        assert tuple(o.shape) == tuple(t.shape)
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    # Gradients of every differentiable input, for the same random output gradient.
    diff = [i for i, a in enumerate(inputs) if not isinstance(a, Const) and np.asarray(a).dtype.kind == "f"]
    seeds = [_rng.standard_normal(tuple(t.shape)) for t in touts if t.requires_grad]
    rg_outs = [o for o in outs if o.requires_grad]
    t_outs = [t for t in touts if t.requires_grad]
    grads = rg.autograd.grad(rg_outs, [xs[i] for i in diff], [rg.tensor(s) for s in seeds], allow_unused=True)
    tgrads = torch.autograd.grad(t_outs, [ts[i] for i in diff], [torch.tensor(s) for s in seeds],
                                 allow_unused=True)
    for g, tg in zip(grads, tgrads, strict=True):
        if tg is None:
            assert g is None or not np.any(g.numpy())
            continue
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("arg", ["weight", "pos_weight"])
@pytest.mark.parametrize("fn", ["binary_cross_entropy", "binary_cross_entropy_with_logits"])
def test_bce_weight_that_requires_grad_raises_as_torch(fn, arg):
    # PyTorch differentiates neither weight nor pos_weight, and refuses one that requires grad.
    torch = pytest.importorskip("torch")
    if fn == "binary_cross_entropy" and arg == "pos_weight":
        pytest.skip("binary_cross_entropy takes no pos_weight")
    errors = []
    for lib, F in ((rg, RF), (torch, torch.nn.functional)):
        x = lib.tensor(A(3, 4, low=0.1, high=0.9), requires_grad=True)
        y, w = lib.tensor(A(3, 4, low=0, high=1)), lib.tensor(A(4, low=0.5, high=3), requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            getattr(F, fn)(x, y, **{arg: w})
        errors.append(str(info.value).replace("torch.", "retrograd."))
        with lib.no_grad():
            getattr(F, fn)(x, y, **{arg: w})  # nothing recorded: nothing refused
    assert errors[0] == errors[1]


def test_bce_with_logits_gradient_at_zero_logit():
    x = rg.tensor([0.0], dtype=rg.float64, requires_grad=True)
    RF.binary_cross_entropy_with_logits(x, rg.tensor([0.25], dtype=rg.float64)).backward()
    assert x.grad.tolist() == [0.25]  # sigmoid(0) - target


def test_softplus_and_bce_logits_do_not_overflow():
    x = rg.tensor([-1000.0, 1000.0], requires_grad=True)
    out = RF.softplus(x)
    out.sum().backward()
    assert out.tolist() == [0.0, 1000.0]
    assert x.grad.tolist() == [0.0, 1.0]
    loss = RF.binary_cross_entropy_with_logits(x, rg.tensor([1.0, 0.0]), reduction="none")
    assert loss.tolist() == [1000.0, 1000.0]


def test_gelu_erf_is_double_precision():
    torch = pytest.importorskip("torch")
    x = np.linspace(-7, 7, 141)
    np.testing.assert_allclose(RF.gelu(rg.tensor(x)).numpy(), torch.nn.functional.gelu(torch.tensor(x)).numpy(),
                               rtol=1e-13, atol=1e-14)  # 1 + erf cancels for x << 0, in both


def test_grad_fn_names_match_pytorch():
    x = rg.randn(1, 2, 4, 4, requires_grad=True)
    w = rg.randn(3, 2, 3, 3, requires_grad=True)
    assert RF.conv2d(x, w).grad_fn.name() == "ConvolutionBackward0"
    assert RF.max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert RF.layer_norm(x, (4,)).grad_fn.name() == "NativeLayerNormBackward0"
    assert RF.embedding(rg.tensor([0]), w.reshape(3, -1)).grad_fn.name() == "EmbeddingBackward0"
    assert RF.gelu(x).grad_fn.name() == "GeluBackward0"
    logp = RF.log_softmax(x.reshape(4, 8), dim=1)
    loss = RF.nll_loss(logp, rg.tensor([0, 3, 7, 1]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    seed = rg.ones((), requires_grad=True)
    (g,) = rg.autograd.grad(loss, logp, seed, create_graph=True)
    assert g.grad_fn.name() == "NllLossBackwardBackward0"


def _node_tree(fn, depth=4):
    """``Name(child, ...)`` of a grad_fn and what it leads to, ``depth`` levels down."""
    if fn is None or depth == 0:
        return str(fn and fn.name())
    return fn.name() + "(" + ", ".join(_node_tree(n, depth - 1) for n, _ in fn.next_functions) + ")"


def _graph_desc(fn):
    """``Name(child, ...)`` of a grad_fn and everything it leads to (None where an edge has no node)."""
    if fn is None:
        return "None"
    return type(fn).__name__ + "(" + ", ".join(_graph_desc(n) for n, _ in fn.next_functions) + ")"


_TARGETS = {(3, 4): [0, 3, 1], (2, 3, 2, 2): [[[0, 2], [1, 1]], [[2, 0], [0, 1]]], (4,): 2}


@pytest.mark.parametrize("name,call,shape", [
    ("nll_loss", lambda F, x, t: F.nll_loss(x, t), (3, 4)),
    ("nll_loss_sum", lambda F, x, t: F.nll_loss(x, t, reduction="sum"), (3, 4)),
    ("nll_loss_2d", lambda F, x, t: F.nll_loss(x, t, reduction="none"), (2, 3, 2, 2)),
    ("nll_loss_unbatched", lambda F, x, t: F.nll_loss(x, t), (4,)),
    ("max_pool2d", lambda F, x, t: F.max_pool2d(x, 2), (2, 3, 2, 2)),
    ("max_pool2d_overlapping", lambda F, x, t: F.max_pool2d(x, 2, stride=1), (2, 3, 2, 2)),
    ("adaptive_max_pool2d", lambda F, x, t: F.adaptive_max_pool2d(x, (1, 2)), (2, 3, 2, 2))])
def test_double_backward_of_nll_loss_and_max_pool_records_pytorchs_graph(name, call, shape):
    # PyTorch's backward ops take the forward's input and record an edge for it (a zero gradient): the
    # gradient requires grad even where the seed does not, and the second derivative in the input is zero.
    torch = pytest.importorskip("torch")
    x, gg = _rng.standard_normal(shape), _rng.standard_normal(shape)
    seen = []
    for lib in (rg, torch):
        xt = lib.tensor(x, requires_grad=True)
        out = call(lib.nn.functional, xt, lib.tensor(_TARGETS.get(shape, 0)))
        seed = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        (g,) = lib.autograd.grad(out, xt, seed, create_graph=True)
        (second,) = lib.autograd.grad((g * lib.tensor(gg)).sum(), xt, allow_unused=True)
        seen.append((_graph_desc(g.grad_fn), g.detach().numpy(), None if second is None else second.numpy()))
    assert seen[0][0] == seen[1][0]
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(seen[0][2], seen[1][2])
    assert not seen[0][2].any()


@pytest.mark.parametrize("shape,bias,layout", [((4,), True, "plain"), ((4,), False, "plain"), ((3, 4), True, "plain"),
                                               ((3, 4), False, "plain"), ((2, 3, 4), True, "plain"),
                                               ((2, 2, 3, 4), True, "plain"), ((3, 2, 4), True, "strided"),
                                               ((3, 4), True, "constant"), ((2, 3, 4), True, "constant")])
def test_linear_records_pytorchs_nodes_for_each_input_layout(shape, bias, layout):
    # PyTorch: addmm for 2-d input, a view of addmm over the flattened rows for any contiguous input, else
    # matmul and add
    torch = pytest.importorskip("torch")
    x, w, b = _rng.standard_normal(shape), _rng.standard_normal((5, 4)), _rng.standard_normal(5)
    trees = []
    for lib in (rg, torch):
        xt = lib.tensor(x, requires_grad=layout != "constant")
        if layout == "strided":
            xt = lib.tensor(x.transpose(1, 0, 2).copy(), requires_grad=True).transpose(0, 1)
        out = lib.nn.functional.linear(xt, lib.tensor(w, requires_grad=True),
                                       lib.tensor(b, requires_grad=True) if bias else None)
        trees.append(_node_tree(out.grad_fn))
    if not bias or layout == "strided":  # retrograd's matmul is one node where PyTorch's composes several
        assert trees[0].split("(")[0] == trees[1].split("(")[0]
    else:
        assert trees[0] == trees[1]


@pytest.mark.parametrize("shapes", [{"weight": (2, 4)}, {"bias": (3,)}, {"weight": (4,), "bias": (1,)}])
def test_layer_norm_with_an_affine_parameter_of_another_shape_raises_pytorchs_error(shapes):
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (rg, torch):
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.layer_norm(lib.ones(2, 4), (4,), **{k: lib.ones(*v) for k, v in shapes.items()})
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("bias", [True, False])
def test_linear_of_a_0d_input_raises_pytorchs_error(bias):
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (rg, torch):
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.linear(lib.tensor(1.0), lib.ones(2, 3), lib.ones(2) if bias else None)
        messages.append(str(info.value).split(",")[0])
    assert messages[0] == messages[1] == "both arguments to linear need to be at least 1D"


@pytest.mark.parametrize("name,call", [
    ("linear_3d", lambda F, x, w, b: F.linear(x, w, b)),
    ("layer_norm", lambda F, x, w, b: F.layer_norm(x, (4,), w, b)),
    ("layer_norm_two_dims", lambda F, x, w, b: F.layer_norm(x, (3, 4), w.reshape(1, 4).expand(3, 4),
                                                                       b.reshape(1, 4).expand(3, 4))),
    ("gelu", lambda F, x, w, b: F.gelu(x) * w + b),
    ("gelu_tanh", lambda F, x, w, b: F.gelu(x, approximate="tanh") * w + b),
    ("silu", lambda F, x, w, b: F.silu(x) * w + b),
])
def test_fused_forms_match_torch_in_float32_and_with_a_broadcast_gradient(name, call):
    torch = pytest.importorskip("torch")
    x, w, b = _rng.uniform(-3, 3, (2, 3, 4)), _rng.standard_normal(4), _rng.standard_normal(4)
    if name == "linear_3d":
        w = _rng.standard_normal((4, 4))
    for dtype, tol in (("float32", 2e-5), ("float64", 1e-12)):
        results = []
        for lib in (rg, torch):
            ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in (x, w, b)]
            out = call(lib.nn.functional, *ts)
            out.sum().backward()  # sum's backward hands on an expanded gradient
            results.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
        assert results[0][0].dtype == np.dtype(dtype)
        for ours, theirs in zip(*results, strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


def test_nll_loss_with_a_weight_that_requires_grad_differentiates_the_weight_too():
    x = rg.tensor(np.random.default_rng(1).standard_normal((5, 3)), requires_grad=True)
    w = rg.tensor([0.5, 1.5, 1.0], dtype=rg.float64, requires_grad=True)
    t = rg.tensor([0, 2, 1, 2, 0])
    for reduction in ("mean", "sum", "none"):
        assert gradcheck(lambda a, b: RF.nll_loss(a, t, b, ignore_index=1, reduction=reduction), (x, w))


def test_dropout_reproducible_with_seed_and_rng_state():
    x = rg.ones(1000, requires_grad=True)
    rg.manual_seed(3)
    a = RF.dropout(x, 0.3)
    state = rg.get_rng_state()
    b = RF.dropout(x, 0.3)
    rg.set_rng_state(state)
    c = RF.dropout(x, 0.3)
    rg.manual_seed(3)
    d = RF.dropout(x, 0.3)
    assert np.array_equal(b.detach().numpy(), c.detach().numpy())
    assert np.array_equal(a.detach().numpy(), d.detach().numpy())
    assert not np.array_equal(a.detach().numpy(), b.detach().numpy())
    kept = a.detach().numpy()
    assert set(np.unique(kept).tolist()) == {0.0, np.float32(1 / 0.7).item()}
    assert 0.2 < (kept == 0).mean() < 0.4
    a.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), kept)
    assert RF.dropout(x, 0.3, training=False) is x


def test_dropout_rejects_bad_probability():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        RF.dropout(rg.ones(2), 1.5)


def test_batch_norm_updates_running_stats_like_torch():
    torch = pytest.importorskip("torch")
    x = A(5, 3, 2)
    rm, rv = rg.zeros(3, dtype=rg.float64), rg.ones(3, dtype=rg.float64)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    for _ in range(2):
        RF.batch_norm(rg.tensor(x), rm, rv, training=True, momentum=0.2)
        torch.nn.functional.batch_norm(torch.tensor(x), trm, trv, training=True, momentum=0.2)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-12)


def test_conv2d_shape_errors_match_pytorch():
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[2, 3, 3, 3\], expected input"
                                           r"\[1, 2, 5, 5\] to have 3 channels, but got 2 channels instead"):
        RF.conv2d(rg.ones(1, 2, 5, 5), rg.ones(2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        RF.conv2d(rg.ones(1, 1, 2, 2), rg.ones(1, 1, 3, 3))


def test_one_hot_matches_torch():
    torch = pytest.importorskip("torch")
    idx = np.array([[0, 3], [2, 1]])
    out = RF.one_hot(rg.tensor(idx))
    assert out.dtype == rg.int64 and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), torch.nn.functional.one_hot(torch.tensor(idx)).numpy())
    np.testing.assert_array_equal(RF.one_hot(rg.tensor(idx), 6).numpy(),
                                  torch.nn.functional.one_hot(torch.tensor(idx), 6).numpy())


def test_float32_conv_stays_float32():
    out = RF.conv2d(rg.randn(1, 1, 4, 4), rg.randn(2, 1, 3, 3), rg.randn(2))
    assert out.dtype == rg.float32
