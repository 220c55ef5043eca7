"""Samples of the neural-network primitives (retrograd/ops/nn.py); format in samples.py.

The calls go through ``m.nn.functional``, the API both libraries share. The two ops that are
gradients of others (gelu_backward, max_pool2d_backward) are reached the way PyTorch reaches
them: by differentiating their forward op with ``create_graph=True``.
"""
import numpy as np

from samples import A, Const, I, P, Sample, add, nc


def _F(m):
    return m.nn.functional


def _grad_of(m, f, x, g):
    """The vector-Jacobian product of ``f`` at ``x``, recorded (gradcheck evaluates it under no_grad)."""
    with m.enable_grad():
        return m.autograd.grad(f(x), x, g, create_graph=True)[0]


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


add("im2col",
    Sample(lambda m, x: _F(m).unfold(x, 2), A(1, 2, 3, 3)),
    Sample(lambda m, x: _F(m).unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), A(2, 1, 4, 5)),
    Sample(lambda m, x: _F(m).unfold(x, 2), nc(A(1, 1, 3, 4)), note="non-contiguous"),
    Sample(lambda m, x: _F(m).unfold(x, 2), A(0, 2, 3, 3), note="empty batch"))
add("col2im",
    Sample(lambda m, x: _F(m).fold(x, (3, 3), 2), A(1, 8, 4)),
    Sample(lambda m, x: _F(m).fold(x, (4, 5), (2, 3), padding=1, stride=(2, 1)), A(2, 6, 15)),
    Sample(lambda m, x: _F(m).fold(x, 3, 2, dilation=1), nc(A(1, 4, 4)), note="non-contiguous"))
add("convolution",
    Sample(lambda m, x, w, b: _F(m).conv2d(x, w, b), A(2, 2, 4, 4), A(3, 2, 2, 2), A(3)),
    Sample(lambda m, x, w: _F(m).conv2d(x, w, stride=2, padding=1, dilation=(1, 2)), A(1, 2, 5, 5),
           A(2, 2, 3, 2)),
    Sample(lambda m, x, w, b: _F(m).conv2d(x, w, b, groups=2), A(1, 4, 3, 3), A(4, 2, 2, 2), A(4), note="groups"),
    Sample(lambda m, x, w: _F(m).conv1d(x, w, padding=1), A(2, 2, 5), nc(A(3, 2, 3)), note="conv1d"),
    Sample(lambda m, x, w: _F(m).conv2d(x, w), A(2, 3, 3), Const(A(1, 2, 2, 2)), note="unbatched"),
    Sample(lambda m, x, w, b: _F(m).conv2d(x, w, b), A(0, 1, 3, 3), A(2, 1, 2, 2), A(2), note="empty batch"),
    Sample(lambda m, x, w: _F(m).conv2d(x, w), I(3, 1, 1, 3, 3).astype(np.float64), I(3, 1, 1, 2, 2)
           .astype(np.float64), ref=None, note="integral values"),
    Sample(lambda m, x, w, b: _F(m).conv1d(x, w, b, stride=2, dilation=2, groups=2), A(1, 4, 7), A(2, 2, 2), A(2),
           note="conv1d: stride, dilation, groups"),
    Sample(lambda m, x, w: _F(m).conv1d(x, w, padding="same"), A(2, 6), A(3, 2, 2), note="conv1d unbatched, same"))
add("convolution_transpose",
    Sample(lambda m, x, w, b: _F(m).conv_transpose2d(x, w, b), A(2, 2, 3, 3), A(2, 3, 2, 2), A(3)),
    Sample(lambda m, x, w: _F(m).conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, dilation=(1, 2)),
           A(1, 2, 3, 2), A(2, 1, 3, 2), note="stride, padding, output_padding, dilation"),
    Sample(lambda m, x, w, b: _F(m).conv_transpose2d(x, w, b, stride=(2, 1), groups=2), A(1, 4, 2, 3),
           nc(A(4, 1, 2, 2)), A(2), note="groups"),
    Sample(lambda m, x, w, b: _F(m).conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2), A(2, 2, 4),
           A(2, 3, 3), A(3), note="conv_transpose1d"),
    Sample(lambda m, x, w: _F(m).conv_transpose1d(x, w, groups=2, dilation=2), A(4, 3), A(4, 1, 2),
           note="1-d unbatched, groups, dilation"),
    Sample(lambda m, x, w: _F(m).conv_transpose2d(x, w), A(0, 1, 2, 2), A(1, 2, 2, 2), note="empty batch"))
add("max_pool2d_with_indices",
    Sample(lambda m, x: _F(m).max_pool2d(x, 2, return_indices=True), A(1, 2, 4, 4)),
    Sample(lambda m, x: _F(m).max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), A(2, 1, 5, 6)),
    Sample(lambda m, x: _F(m).max_pool2d(x, 2, stride=1, dilation=2, return_indices=True), nc(A(1, 1, 5, 5))),
    Sample(lambda m, x: _F(m).max_pool2d(x, 2), A(2, 4, 4), note="unbatched"),
    Sample(lambda m, x: _F(m).max_pool2d(x, 2), np.array([[[[1., 1.], [1., 0.]]]]), grad=False,
           note="ties: the first maximum wins"),
    Sample(lambda m, x: _F(m).max_pool2d(x, 2, return_indices=True), np.array([[[[1., np.nan], [3., np.nan]]]]),
           grad=False, note="NaN propagates, the last NaN's index"))
add("max_pool2d_backward",
    Sample(lambda m, x, g: _grad_of(m, lambda t: _F(m).max_pool2d(t, 2), x, g),
           A(1, 2, 4, 4), A(1, 2, 2, 2), note="non-overlapping windows"),
    Sample(lambda m, x, g: _grad_of(m, lambda t: _F(m).max_pool2d(t, 3, stride=1, padding=1), x, g),
           A(1, 1, 4, 4), A(1, 1, 4, 4), note="overlapping windows"))
add("adaptive_max_pool2d_backward",
    Sample(lambda m, x, g: _grad_of(m, lambda t: _F(m).adaptive_max_pool2d(t, (2, 3)), x, g),
           A(1, 2, 4, 5), A(1, 2, 2, 3)),
    Sample(lambda m, x, g: _grad_of(m, lambda t: _F(m).adaptive_max_pool2d(t, 2), x, g),
           A(2, 3, 3), A(2, 2, 2), note="unbatched, overlapping windows"))
add("constant_pad_nd",
    Sample(lambda m, x: _F(m).pad(x, (1, 2)), A(2, 3)),
    Sample(lambda m, x: _F(m).pad(x, (1, 0, 2, 1), value=1.5), A(2, 2, 3)),
    Sample(lambda m, x: _F(m).pad(x, (-1, 1, 0, -1)), nc(A(3, 4)), note="negative padding crops"),
    Sample(lambda m, x: _F(m).pad(x, (1, 1)), A(0, 2), note="empty"))
add("layer_norm",
    Sample(lambda m, x, w, b: _F(m).layer_norm(x, (3,), w, b), A(2, 3), A(3), A(3)),
    Sample(lambda m, x: _F(m).layer_norm(x, (2, 2), eps=1e-3), nc(A(3, 2, 2))),
    Sample(lambda m, x, w: _F(m).layer_norm(x, [4], w), A(4), A(4), note="1-d, weight only"),
    Sample(lambda m, x, w, b: _F(m).layer_norm(x, (2, 2), w, b), A(2, 4, 2, 2), A(2, 2), A(2, 2),
           note="8 rows: the row kernels of Note [Row reductions as products]"))
add("native_batch_norm",
    Sample(lambda m, x, w, b: _F(m).batch_norm(x, None, None, w, b, training=True), A(4, 3), A(3), A(3)),
    Sample(lambda m, x: _F(m).batch_norm(x, None, None, training=True, eps=1e-3), nc(A(2, 2, 3))),
    Sample(lambda m, x, w, b: _F(m).batch_norm(x, None, None, w, b, training=True), A(2, 2, 2, 2), A(2), A(2),
           note="4-d"))
add("embedding",
    Sample(lambda m, w, i: _F(m).embedding(i, w), A(4, 3), I(4, 2, 3)),
    Sample(lambda m, w, i: _F(m).embedding(i, w), nc(A(3, 2)), I(3, 5), note="repeated rows accumulate"),
    Sample(lambda m, w, i: _F(m).embedding(i, w), A(3, 2), np.array(1), note="0-d index"),
    Sample(lambda m, w, i: _F(m).embedding(i, w, padding_idx=0), A(3, 2), np.array([0, 2, 0]), grad=False,
           note="the padding row gets no gradient (not the derivative), compared with torch"))
add("one_hot",
    Sample(lambda m, i: _F(m).one_hot(i), I(4, 2, 3), ref=lambda i: np.eye(max(int(i.max()) + 1, 1),
                                                                              dtype=np.int64)[i]),
    Sample(lambda m, i: _F(m).one_hot(i, 5), I(3, 4), ref=lambda i: np.eye(5, dtype=np.int64)[i]),
    Sample(lambda m, i: _F(m).one_hot(i, 3), np.array(2), ref=lambda i: np.eye(3, dtype=np.int64)[i], note="0-d"))
add("softplus",
    Sample(lambda m, x: _F(m).softplus(x), A(2, 3, low=-4, high=4), ref=lambda x: np.log1p(np.exp(x))),
    Sample(lambda m, x: _F(m).softplus(x, beta=2, threshold=1), np.array([-2., 0.3, 0.6, 1.5]),
           ref=lambda x: np.where(2 * x > 1, x, np.log1p(np.exp(2 * x)) / 2), note="beta, threshold"),
    Sample(lambda m, x: _F(m).softplus(x), A(), ref=lambda x: np.log1p(np.exp(x)), note="0-d"),
    Sample(lambda m, x: _F(m).softplus(x), nc(A(0, 2)), note="empty"))
add("gelu",
    Sample(lambda m, x: _F(m).gelu(x), A(2, 3, low=-3, high=3)),
    Sample(lambda m, x: _F(m).gelu(x, approximate="tanh"), A(2, 3, low=-3, high=3),
           ref=lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    Sample(lambda m, x: _F(m).gelu(x), nc(A(3)), note="non-contiguous"),
    Sample(lambda m, x: _F(m).gelu(x), A(), note="0-d"))
add("gelu_backward",
    Sample(lambda m, x, g: _grad_of(m, _F(m).gelu, x, g), A(2, 3, low=-3, high=3), A(2, 3)),
    Sample(lambda m, x, g: _grad_of(m, lambda t: _F(m).gelu(t, approximate="tanh"), x, g), A(4, low=-3, high=3),
           A(4), note="tanh"))
add("silu",
    Sample(lambda m, x: _F(m).silu(x), A(2, 3, low=-4, high=4), ref=lambda x: x * _sigmoid(x)),
    Sample(lambda m, x: _F(m).silu(x), nc(A(3)), ref=lambda x: x * _sigmoid(x)),
    Sample(lambda m, x: _F(m).silu(x), A(), note="0-d"))
add("leaky_relu",
    Sample(lambda m, x: _F(m).leaky_relu(x), np.array([[-1.5, 0.5], [2.0, -0.1]]),
           ref=lambda x: np.where(x > 0, x, 0.01 * x)),
    Sample(lambda m, x: _F(m).leaky_relu(x, 0.3), nc(np.array([-1.0, 0.7, -0.2]))),
    Sample(lambda m, x: _F(m).leaky_relu(x), np.array([0.0, 1.0]), grad=False, note="at the kink: PyTorch's 0 side"))
add("elu",
    Sample(lambda m, x: _F(m).elu(x), np.array([[-1.5, 0.5], [2.0, -0.1]]),
           ref=lambda x: np.where(x > 0, x, np.expm1(x))),
    Sample(lambda m, x: _F(m).elu(x, alpha=0.5), nc(np.array([-1.0, 0.7, -0.2]))),
    Sample(lambda m, x: _F(m).elu(x), np.array(-0.3), note="0-d"))
add("binary_cross_entropy",
    Sample(lambda m, x, y: _F(m).binary_cross_entropy(x, y), A(2, 3, low=0.1, high=0.9), A(2, 3, low=0, high=1)),
    Sample(lambda m, x, y: _F(m).binary_cross_entropy(x, y, reduction="none"), nc(A(3, low=0.1, high=0.9)),
           Const(A(3, low=0, high=1))),
    Sample(lambda m, x, y, w: _F(m).binary_cross_entropy(x, y, w, reduction="sum"), A(2, 2, low=0.2, high=0.8),
           A(2, 2, low=0, high=1), Const(P(2, 2)), note="weight"))
add("binary_cross_entropy_with_logits",
    Sample(lambda m, x, y: _F(m).binary_cross_entropy_with_logits(x, y), A(2, 3, low=-4, high=4),
           A(2, 3, low=0, high=1)),
    Sample(lambda m, x, y, p: _F(m).binary_cross_entropy_with_logits(x, y, pos_weight=p, reduction="none"),
           nc(A(2, 3)), A(2, 3, low=0, high=1), Const(P(3)), note="pos_weight"),
    Sample(lambda m, x, y: _F(m).binary_cross_entropy_with_logits(x, y, reduction="sum"), A(), A(low=0, high=1),
           note="0-d"),
    Sample(lambda m, x, y, w, p: _F(m).binary_cross_entropy_with_logits(x, y, w, pos_weight=p), A(2, 3),
           A(2, 3, low=0, high=1), Const(P(3)), Const(P(2, 3)), note="weight and pos_weight, mean"),
    Sample(lambda m, x, y, w: _F(m).binary_cross_entropy_with_logits(x, y, w, reduction="sum"), A(3, 2),
           Const(A(3, 2, low=0, high=1)), Const(P(3, 1)), note="broadcast weight"),
    Sample(lambda m, x, y: _F(m).binary_cross_entropy_with_logits(x, y), A(0, 2), A(0, 2), grad=False,
           note="the mean of nothing"))
add("binary_cross_entropy",
    Sample(lambda m, x, y, w: _F(m).binary_cross_entropy(x, y, w), A(2, 3, low=0.1, high=0.9),
           A(2, 3, low=0, high=1), Const(P(3)), note="broadcast weight, mean"),
    Sample(lambda m, x, y: _F(m).binary_cross_entropy(x, y, reduction="sum"), A(low=0.1, high=0.9),
           Const(A(low=0, high=1)), note="0-d"))
add("nll_loss",
    Sample(lambda m, x, t: _F(m).nll_loss(x, t), A(4, 3), I(3, 4)),
    Sample(lambda m, x, t, w: _F(m).nll_loss(x, t, w, ignore_index=1, reduction="sum"), nc(A(5, 3)),
           np.array([0, 1, 2, 1, 2]), Const(A(3, low=0.5, high=1.5)), note="weight, ignore_index"),
    Sample(lambda m, x, t: _F(m).nll_loss(x, t, reduction="none"), A(2, 3, 2, 2), I(3, 2, 2, 2), note="(N, C, d1, d2)"),
    Sample(lambda m, x, t, w: _F(m).nll_loss(x, t, w), A(3), np.array(2), Const(A(3, low=0.5, high=1.5)),
           note="unbatched"),
    Sample(lambda m, x, t: _F(m).nll_loss(x, t, ignore_index=0), A(2, 3), np.array([0, 0]), grad=False,
           note="every target ignored: nan"))
add("nll_loss_backward",
    Sample(lambda m, x, t, g: _grad_of(m, lambda v: _F(m).nll_loss(v, t, reduction="none"), x, g),
           A(3, 4), I(4, 3), A(3), note="reduction='none'"),
    Sample(lambda m, x, t, w, g: _grad_of(m, lambda v: _F(m).nll_loss(v, t, w, ignore_index=2), x, g),
           A(4, 3), np.array([0, 2, 1, 1]), Const(A(3, low=0.5, high=1.5)), A(), note="weighted mean"))


def _away(*shape, low=0.1):
    """Values in [-2, 2) at least ``low`` from 0 and from ±1, ±3 (the kinks of the piecewise activations)."""
    x = A(*shape)
    for kink in (0., 1., -1., 3., -3., 0.5, -0.5):
        x = np.where(np.abs(x - kink) < low, kink + low * np.sign(x - kink + 1e-9) * 1.5, x)
    return x


add("hardtanh",
    Sample(lambda m, x: _F(m).hardtanh(x), _away(2, 3), ref=lambda x: np.clip(x, -1, 1)),
    Sample(lambda m, x: _F(m).relu6(x * 4), nc(_away(3, 2)), ref=lambda x: np.clip(4 * x, 0, 6), note="relu6"),
    Sample(lambda m, x: _F(m).hardtanh(x, -0.5, 0.5), np.array([-0.5, 0.5, 0.2]), grad=False,
           note="on the bounds: gradient 0, as PyTorch"),
    Sample(lambda m, x: _F(m).hardtanh(x), A(0, 2), note="empty"))
add("threshold",
    Sample(lambda m, x: _F(m).threshold(x, 0.5, -2.), _away(2, 3), ref=lambda x: np.where(x > 0.5, x, -2.)),
    Sample(lambda m, x: _F(m).threshold(x, 0., 1.5), nc(_away(3, 2)), note="non-contiguous"))
add("hardshrink",
    Sample(lambda m, x: _F(m).hardshrink(x), _away(2, 3), ref=lambda x: np.where(np.abs(x) > 0.5, x, 0.)),
    Sample(lambda m, x: _F(m).hardshrink(x, 1.0), nc(_away(4)), note="lambd"))
add("softshrink",
    Sample(lambda m, x: _F(m).softshrink(x), _away(2, 3),
           ref=lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0.))),
    Sample(lambda m, x: _F(m).softshrink(x, 1.0), nc(_away(4)), note="lambd"))
add("hardsigmoid",
    Sample(lambda m, x: _F(m).hardsigmoid(x * 2), _away(2, 3), ref=lambda x: np.clip(2 * x / 6 + 0.5, 0, 1),
           gradgrad=False, note="PyTorch has no second derivative of hardsigmoid (it would be 0)"),
    Sample(lambda m, x: _F(m).hardsigmoid(x), np.array([-3., 3., 0.]), grad=False, note="at the kinks"))
add("hardswish",
    Sample(lambda m, x: _F(m).hardswish(x * 2), _away(2, 3), ref=lambda x: 2 * x * np.clip(2 * x / 6 + 0.5, 0, 1)),
    Sample(lambda m, x: _F(m).hardswish(x), np.array([-3., 3., 0.]), grad=False, note="at the kinks"))
add("celu",
    Sample(lambda m, x: _F(m).celu(x), _away(2, 3), ref=lambda x: np.where(x > 0, x, np.expm1(x))),
    Sample(lambda m, x: _F(m).celu(x, alpha=2.), nc(_away(4)), note="alpha"))
add("elu",
    Sample(lambda m, x: _F(m).selu(x), _away(2, 3), note="selu: scale"))
add("mish",
    Sample(lambda m, x: _F(m).mish(x), A(2, 3, low=-4, high=4), ref=lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    Sample(lambda m, x: _F(m).mish(x), nc(A(3)), note="non-contiguous"),
    Sample(lambda m, x: _F(m).mish(x), A(), note="0-d"))
add("rrelu_with_noise",
    Sample(lambda m, x: _F(m).rrelu(x), _away(2, 3), ref=lambda x: np.where(x >= 0, x, x * (1 / 8 + 1 / 3) / 2)),
    Sample(lambda m, x: _F(m).rrelu(x, 0.1, 0.3), nc(_away(4)), note="lower, upper"))
add("prelu",
    Sample(lambda m, x, w: _F(m).prelu(x, w), _away(2, 3, 2), A(3), note="a slope per channel"),
    Sample(lambda m, x, w: _F(m).prelu(x, w), _away(4), A(1), note="1-d: one slope"),
    Sample(lambda m, x, w: _F(m).prelu(x, w), nc(_away(2, 2)), A(1), note="one slope for all"))
add("glu",
    Sample(lambda m, x: _F(m).glu(x), A(2, 4), ref=lambda x: x[:, :2] * _sigmoid(x[:, 2:])),
    Sample(lambda m, x: _F(m).glu(x, 0), nc(A(4, 3)), note="dim 0"),
    Sample(lambda m, x: _F(m).glu(x, -2), A(2, 2, 3), note="negative dim"))
add("reflection_pad",
    Sample(lambda m, x: _F(m).pad(x, (2, 1), mode="reflect"), A(2, 4), ref=lambda x: np.pad(x, ((0, 0), (2, 1)),
                                                                                            mode="reflect")),
    Sample(lambda m, x: _F(m).pad(x, (2, 1, 1, 2), mode="reflect"), nc(A(1, 2, 4, 4)), note="2-d"),
    Sample(lambda m, x: _F(m).pad(x, (1, 1, 0, 1, 1, 0), mode="reflect"), A(1, 2, 2, 3), note="3-d, unbatched"),
    Sample(lambda m, x: _F(m).pad(x, (-1, 2), mode="reflect"), A(1, 2, 5), note="negative amount"))
add("replication_pad",
    Sample(lambda m, x: _F(m).pad(x, (2, 1), mode="replicate"), A(2, 3), ref=lambda x: np.pad(x, ((0, 0), (2, 1)),
                                                                                              mode="edge")),
    Sample(lambda m, x: _F(m).pad(x, (2, 1, 1, 3), mode="replicate"), nc(A(1, 2, 3, 4)), note="2-d"),
    Sample(lambda m, x: _F(m).pad(x, (1, 0, 1, 1, 0, 2), mode="replicate"), A(1, 1, 2, 2, 3), note="3-d"))
add("max_pool2d_with_indices",
    Sample(lambda m, x: _F(m).max_pool1d(x, 2, return_indices=True), A(2, 3, 5), note="max_pool1d"),
    Sample(lambda m, x: _F(m).max_pool1d(x, 3, stride=2, padding=1, dilation=1, ceil_mode=True), nc(A(2, 6)),
           note="max_pool1d unbatched, ceil_mode"))
add("adaptive_max_pool2d",
    Sample(lambda m, x: _F(m).adaptive_max_pool2d(x, 2, return_indices=True), A(1, 2, 5, 4)),
    Sample(lambda m, x: _F(m).adaptive_max_pool2d(x, (3, None)), nc(A(2, 4, 3)), note="unbatched, None keeps a dim"),
    Sample(lambda m, x: _F(m).adaptive_max_pool1d(x, 3, return_indices=True), A(2, 2, 7), note="1-d"),
    Sample(lambda m, x: _F(m).adaptive_max_pool2d(x, 1), np.array([[[1., np.nan], [3., 2.]]]), grad=False,
           note="NaN propagates"))
add("max_unpool2d",
    Sample(lambda m, x: _F(m).max_unpool2d(*_F(m).max_pool2d(x, 2, return_indices=True), 2), A(1, 2, 4, 4)),
    Sample(lambda m, x: _F(m).max_unpool2d(*_F(m).max_pool2d(x, 2, return_indices=True), 2, output_size=(5, 5)),
           nc(A(2, 5, 5)), note="unbatched, output_size"))
add("pixel_shuffle",
    Sample(lambda m, x: _F(m).pixel_shuffle(x, 2), A(1, 8, 2, 3)),
    Sample(lambda m, x: _F(m).pixel_shuffle(x, 3), nc(A(9, 2, 1)), note="unbatched"),
    Sample(lambda m, x: _F(m).pixel_shuffle(x, 2), A(2, 1, 4, 1, 2), note="two leading dims"))
add("pixel_unshuffle",
    Sample(lambda m, x: _F(m).pixel_unshuffle(x, 2), A(1, 2, 4, 6)),
    Sample(lambda m, x: _F(m).pixel_unshuffle(x, 3), nc(A(1, 3, 6)), note="unbatched"))
add("avg_pool2d",
    Sample(lambda m, x: _F(m).avg_pool1d(x, 2), A(2, 3, 5), note="avg_pool1d"))
add("adaptive_avg_pool2d",
    Sample(lambda m, x: _F(m).adaptive_avg_pool1d(x, 2), nc(A(3, 4)), note="adaptive_avg_pool1d, unbatched"))
add("upsample_nearest",
    Sample(lambda m, x: _F(m).interpolate(x, scale_factor=2), A(1, 2, 3)),
    Sample(lambda m, x: _F(m).interpolate(x, size=(5, 3)), nc(A(1, 2, 3, 4)), note="2-d, size, shrinking a dim"),
    Sample(lambda m, x: _F(m).interpolate(x, scale_factor=1.7), A(2, 1, 4), note="fractional scale"),
    Sample(lambda m, x: _F(m).interpolate(x, scale_factor=(1.5, 2.3), recompute_scale_factor=True), A(1, 1, 3, 3),
           note="recompute_scale_factor"),
    Sample(lambda m, x: _F(m).interpolate(x, size=7, mode="nearest-exact"), A(1, 2, 3), note="nearest-exact"),
    Sample(lambda m, x: _F(m).interpolate(x, scale_factor=1.5, mode="nearest-exact"), A(1, 1, 3, 2),
           note="nearest-exact 2-d"))
add("upsample_linear",
    Sample(lambda m, x: _F(m).interpolate(x, scale_factor=2, mode="linear"), A(1, 2, 3)),
    Sample(lambda m, x: _F(m).interpolate(x, size=7, mode="linear", align_corners=True), nc(A(2, 1, 4)),
           note="align_corners"),
    Sample(lambda m, x: _F(m).interpolate(x, size=(5, 7), mode="bilinear"), A(1, 2, 3, 4), note="bilinear"),
    Sample(lambda m, x: _F(m).interpolate(x, scale_factor=(1.5, 0.6), mode="bilinear", align_corners=True),
           A(1, 1, 4, 5), note="bilinear, align_corners, shrinking"),
    Sample(lambda m, x: _F(m).interpolate(x, scale_factor=1.7, mode="bilinear"), nc(A(1, 1, 3, 3)),
           note="fractional scale used as given"),
    Sample(lambda m, x: _F(m).interpolate(x, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
           A(1, 1, 3, 3), note="recomputed scale"))
add("group_norm",
    Sample(lambda m, x, w, b: _F(m).group_norm(x, 2, w, b), A(2, 4, 3), A(4), A(4)),
    Sample(lambda m, x: _F(m).group_norm(x, 1, eps=1e-3), nc(A(2, 3, 2, 2)), note="one group, 4-d"),
    Sample(lambda m, x, w: _F(m).group_norm(x, 3, w), A(2, 3, 4), A(3), note="a group per channel, weight only"))
add("embedding_bag",
    Sample(lambda m, w, i, o: _F(m).embedding_bag(i, w, o), A(4, 3), np.array([0, 2, 1, 2, 3]), np.array([0, 2]),
           gradgrad=False, note="mean (PyTorch has no second derivative of embedding_bag)"),
    Sample(lambda m, w, i: _F(m).embedding_bag(i, w, mode="sum"), nc(A(3, 2)), I(3, 2, 4),
           gradgrad=False, note="2-d input, sum"),
    Sample(lambda m, w, i, o, p: _F(m).embedding_bag(i, w, o, mode="sum", per_sample_weights=p), A(4, 2),
           np.array([1, 0, 3, 1]), np.array([0, 1, 1]), A(4), gradgrad=False, note="per_sample_weights, an empty bag"),
    Sample(lambda m, w, i, o: _F(m).embedding_bag(i, w, o, mode="max"), A(4, 3), np.array([0, 2, 1, 2, 3, 1]),
           np.array([0, 3, 3]), gradgrad=False, note="max, an empty bag"),
    Sample(lambda m, w, i, o: _F(m).embedding_bag(i, w, o, mode="mean", padding_idx=1, include_last_offset=True),
           A(3, 2), np.array([1, 0, 1, 2, 2]), np.array([0, 2, 4]), gradgrad=False,
           note="padding_idx, include_last_offset"),
    Sample(lambda m, w, i: _F(m).embedding_bag(i, w, mode="max", padding_idx=0), A(3, 2), np.array([[0, 2], [0, 0]]),
           gradgrad=False, note="max, padding_idx, a bag of padding only"))
add("ctc_loss",
    Sample(lambda m, x, t: _F(m).ctc_loss(x.log_softmax(2), t, [6, 5, 4], [3, 2, 1], reduction="none"), A(6, 3, 5),
           np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]]), gradgrad=False,
           note="log_softmax first: PyTorch's gradient for log_probs assumes it (and has no second derivative)"),
    Sample(lambda m, x, t: _F(m).ctc_loss(x.log_softmax(2), t, (4, 3), (2, 2), blank=4), nc(A(4, 2, 5)),
           np.array([1, 1, 0, 2]), gradgrad=False, note="1-d targets, blank, mean"),
    Sample(lambda m, x, t: _F(m).ctc_loss(x.log_softmax(1), t, [5], [2], reduction="none"), A(5, 3),
           np.array([1, 2]), gradgrad=False, note="unbatched"),
    Sample(lambda m, x, t: _F(m).ctc_loss(x.log_softmax(2), t, [2, 3], [3, 1], reduction="none", zero_infinity=True),
           A(3, 2, 4), np.array([[1, 1, 1], [2, 0, 0]]), gradgrad=False, note="an impossible target, zero_infinity"))
add("ctc_loss_backward",
    Sample(lambda m, x, t, g: _grad_of(m, lambda v: _F(m).ctc_loss(v, t, [4, 3], [2, 1], reduction="none"), x, g),
           A(4, 2, 3), np.array([[1, 2], [2, 0]]), A(2), grad=False, torch=False,
           note="the true derivative for log_probs; PyTorch's adds exp(log_probs), the log_softmax part"))
