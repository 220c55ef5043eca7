"""Samples of the neural-network primitives over three spatial dims (and the 1-d unpooling), which the ops of
retrograd/ops/nn.py take from the rank of their window; format in samples.py. Shapes are tiny: gradgradcheck
differentiates every element twice."""
import numpy as np

from samples import A, P, Sample, add, nc


def _F(m):
    return m.nn.functional


def _grad_of(m, f, x, g):
    """The vector-Jacobian product of ``f`` at ``x``, recorded (gradcheck evaluates it under no_grad)."""
    with m.enable_grad():
        return m.autograd.grad(f(x), x, g, create_graph=True)[0]


add("convolution",
    Sample(lambda m, x, w, b: _F(m).conv3d(x, w, b), A(1, 2, 3, 3, 2), A(2, 2, 2, 2, 1), A(2), note="conv3d"),
    Sample(lambda m, x, w: _F(m).conv3d(x, w, stride=(2, 1, 1), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2),
           nc(A(2, 3, 3, 2)), A(2, 1, 2, 1, 2), note="conv3d unbatched: stride, padding, dilation, groups"),
    Sample(lambda m, x, w: _F(m).conv3d(x, w, padding="same"), A(1, 1, 2, 3, 2), A(1, 1, 2, 1, 2),
           note="conv3d, same"))
add("avg_pool2d",
    Sample(lambda m, x: _F(m).avg_pool2d(x, 2), A(2, 2, 4, 4)),
    Sample(lambda m, x: _F(m).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
           nc(A(1, 4, 4)), note="unbatched, ceil_mode, count_include_pad=False"),
    Sample(lambda m, x: _F(m).avg_pool2d(x, (2, 1), stride=(1, 2), divisor_override=3), A(1, 1, 3, 3),
           note="divisor_override"),
    Sample(lambda m, x: _F(m).avg_pool3d(x, 2, stride=1, padding=1, count_include_pad=False), A(1, 1, 2, 2, 3),
           note="avg_pool3d"),
    Sample(lambda m, x: _F(m).avg_pool3d(x, (1, 2, 2), stride=2, ceil_mode=True), A(1, 3, 3, 3),
           note="avg_pool3d unbatched, ceil_mode"),
    Sample(lambda m, x: _F(m).avg_pool1d(x, 3, stride=2, padding=1, ceil_mode=True), A(1, 2, 6), note="avg_pool1d"),
    Sample(lambda m, x: _F(m).lp_pool3d(x, 2, (1, 2, 2), ceil_mode=True), P(1, 3, 3, 3), note="lp_pool3d"),
    Sample(lambda m, x: _F(m).lp_pool1d(x, 3, 2), P(2, 2, 5), note="lp_pool1d"),
    Sample(lambda m, x: _F(m).lp_pool2d(x, 1.5, (2, 3), stride=1), P(1, 2, 3, 4), note="lp_pool2d"))
add("convolution_transpose",
    Sample(lambda m, x, w, b: _F(m).conv_transpose3d(x, w, b, stride=2, padding=(0, 1, 0), output_padding=(1, 0, 0)),
           A(1, 2, 2, 2, 1), A(2, 1, 2, 2, 2), A(1), note="conv_transpose3d"),
    Sample(lambda m, x, w: _F(m).conv_transpose3d(x, w, groups=2, dilation=(1, 1, 2)), A(2, 1, 2, 2),
           A(2, 1, 1, 2, 2), note="conv_transpose3d unbatched, groups, dilation"))
add("max_pool2d_with_indices",
    Sample(lambda m, x: _F(m).max_pool3d(x, 2, return_indices=True), A(1, 2, 2, 4, 2), note="max_pool3d"),
    Sample(lambda m, x: _F(m).max_pool3d(x, (2, 1, 2), stride=1, padding=(1, 0, 0), dilation=(1, 1, 2),
                                         ceil_mode=True), nc(A(1, 3, 2, 3)),
           note="max_pool3d unbatched: stride, padding, dilation, ceil_mode"),
    Sample(lambda m, x: _F(m).max_pool3d(x, 2, return_indices=True),
           np.array([[[[[1., np.nan], [3., 2.]], [[np.nan, 0.], [1., 1.]]]]]), grad=False,
           note="max_pool3d: NaN propagates, the last NaN's index"))
add("max_pool2d_backward",
    Sample(lambda m, x, g: _grad_of(m, lambda t: _F(m).max_pool3d(t, 2, stride=1), x, g),
           A(1, 1, 3, 2, 3), A(1, 1, 2, 1, 2), note="max_pool3d, overlapping windows"))
add("adaptive_max_pool2d",
    Sample(lambda m, x: _F(m).adaptive_max_pool3d(x, (2, 1, 2), return_indices=True), A(1, 2, 3, 2, 3),
           note="adaptive_max_pool3d"),
    Sample(lambda m, x: _F(m).adaptive_max_pool3d(x, (None, 2, 1)), nc(A(1, 2, 3, 3)),
           note="adaptive_max_pool3d unbatched, None keeps a dim"))
add("adaptive_max_pool2d_backward",
    Sample(lambda m, x, g: _grad_of(m, lambda t: _F(m).adaptive_max_pool3d(t, 2), x, g),
           A(1, 3, 3, 2), A(1, 2, 2, 2), note="adaptive_max_pool3d unbatched, overlapping windows"))
add("max_unpool2d",
    Sample(lambda m, x: _F(m).max_unpool3d(*_F(m).max_pool3d(x, 2, return_indices=True), 2), A(1, 1, 2, 2, 4),
           note="max_unpool3d"),
    Sample(lambda m, x: _F(m).max_unpool3d(*_F(m).max_pool3d(x, 2, return_indices=True), 2, output_size=(3, 2, 3)),
           nc(A(1, 3, 2, 3)), note="max_unpool3d unbatched, output_size"),
    Sample(lambda m, x: _F(m).max_unpool1d(*_F(m).max_pool1d(x, 2, return_indices=True), 2, output_size=[2, 2, 5]),
           A(2, 2, 5), note="max_unpool1d"))
add("conv3d", Sample(lambda m, x, w, b: m.conv3d(x, w, b, 1, 1), A(1, 1, 2, 2, 2), A(2, 1, 2, 1, 2), A(2)))
add("conv_transpose3d", Sample(lambda m, x, w: m.conv_transpose3d(x, w, None, 2), A(1, 2, 1, 2, 2), A(2, 1, 2, 1, 2)))
add("max_pool3d", Sample(lambda m, x: m.max_pool3d(x, (2, 1, 2), (), 0, 1, True), A(1, 1, 3, 2, 3)))
add("adaptive_avg_pool2d",
    Sample(lambda m, x: _F(m).adaptive_avg_pool2d(x, (3, 2)), A(1, 2, 5, 4)),
    Sample(lambda m, x: _F(m).adaptive_avg_pool2d(x, (None, 1)), nc(A(2, 3, 3)), note="unbatched, None keeps a dim"),
    Sample(lambda m, x: _F(m).adaptive_avg_pool3d(x, (2, 1, 2)), A(1, 1, 3, 2, 4), note="adaptive_avg_pool3d"),
    Sample(lambda m, x: _F(m).adaptive_avg_pool3d(x, 2), A(1, 2, 2, 4), note="adaptive_avg_pool3d unbatched, even"))
