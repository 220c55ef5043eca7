"""Samples of PyTorch's top-level names of functional and linear-algebra ops (retrograd/_top_level.py), called as
``torch.<name>`` with PyTorch's own arguments; format in samples.py."""
import numpy as np

from samples import A, Const, I, P, Sample, add


def _spd(n):
    m = A(n, n)
    return m @ m.T + n * np.eye(n)


add("conv1d", Sample(lambda m, x, w, b: m.conv1d(x, w, b, 1, 1), A(1, 2, 5), A(3, 2, 3), A(3)))
add("conv2d", Sample(lambda m, x, w: m.conv2d(x, w, None, 2), A(1, 1, 4, 4), A(2, 1, 2, 2)))
add("conv_transpose1d", Sample(lambda m, x, w: m.conv_transpose1d(x, w, None, 2), A(1, 2, 3), A(2, 1, 2)))
add("conv_transpose2d", Sample(lambda m, x, w: m.conv_transpose2d(x, w), A(1, 1, 2, 2), A(1, 2, 2, 2)))
add("prelu", Sample(lambda m, x, w: m.prelu(x, w), A(2, 3), A(1)), Sample(lambda m, x, w: x.prelu(w), A(2, 3), A(3)))
add("hardshrink", Sample(lambda m, x: m.hardshrink(x, 0.3),
                         np.array([-1.0, -0.1, 0.2, 0.9])),
    Sample(lambda m, x: x.hardshrink(), np.array([-1.0, 0.7])))
add("pixel_shuffle", Sample(lambda m, x: m.pixel_shuffle(x, 2), A(1, 4, 2, 2)))
add("pixel_unshuffle", Sample(lambda m, x: m.pixel_unshuffle(x, 2), A(1, 1, 4, 2)))
add("cosine_similarity", Sample(lambda m, x, y: m.cosine_similarity(x, y, 0), A(3, 2), A(3, 2)))
add("pairwise_distance", Sample(lambda m, x, y: m.pairwise_distance(x, y, 1.5, 1e-6, True), A(2, 3), A(2, 3)))
add("avg_pool1d", Sample(lambda m, x: m.avg_pool1d(x, 2, 1, 1, False, False), A(1, 2, 5)))
add("adaptive_avg_pool1d", Sample(lambda m, x: m.adaptive_avg_pool1d(x, 3), A(1, 2, 5)))
add("adaptive_max_pool1d", Sample(lambda m, x: m.adaptive_max_pool1d(x, 2), A(1, 2, 5)))
add("max_pool1d", Sample(lambda m, x: m.max_pool1d(x, 2), A(1, 2, 6)),
    Sample(lambda m, x: m.max_pool1d(x, 3, 2, 1, 1, True), A(1, 1, 7), note="every argument"))
add("max_pool2d", Sample(lambda m, x: m.max_pool2d(x, (2, 2), (), 0, 1, False), A(1, 1, 4, 4)))
add("celu", Sample(lambda m, x: m.celu(x, 0.5), A(2, 3)))
add("selu", Sample(lambda m, x: m.selu(x), A(2, 3)))
add("rrelu", Sample(lambda m, x: m.rrelu(x), np.array([-1.5, -0.2, 0.3, 2.0]), note="evaluation: a fixed slope"))
add("celu_", Sample(lambda m, x: m.celu_(x * 1, 2.0), A(3)))
add("selu_", Sample(lambda m, x: m.selu_(x * 1), A(3)))
add("dropout", Sample(lambda m, x: m.dropout(x, 0.5, False), A(3), note="not training: the input"),
    Sample(lambda m, x: m.dropout(x, 0.0, True), A(3), note="p = 0"))
add("alpha_dropout", Sample(lambda m, x: m.alpha_dropout(x, 0.3, False), A(3)))
add("feature_dropout", Sample(lambda m, x: m.feature_dropout(x, 0.0, True), A(2, 2, 3)))
add("feature_alpha_dropout", Sample(lambda m, x: m.feature_alpha_dropout(x, 0.5, False), A(2, 2, 3)))
add("layer_norm", Sample(lambda m, x, w, b: m.layer_norm(x, (3,), w, b, 1e-5, True), A(2, 3), A(3), A(3)))
add("group_norm", Sample(lambda m, x: m.group_norm(x, 2), A(2, 4, 3)))
add("batch_norm", Sample(lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False), A(4, 3),
                         A(3), A(3)))
add("instance_norm", Sample(lambda m, x: m.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
                            A(2, 3, 4)))
add("embedding", Sample(lambda m, w, i: m.embedding(w, i), A(5, 3), I(5, 2, 2)),
    Sample(lambda m, w, i: m.embedding(w, i, 1), A(4, 2), np.array([1, 0, 1, 3]), grad=False,
           note="a padding index: no gradient to its row"))
add("kl_div", Sample(lambda m, x, t: m.kl_div(x, t), A(2, 3), P(2, 3)),
    Sample(lambda m, x, t: m.kl_div(x, t, 2, log_target=True), A(2, 3), A(2, 3), note="sum, log target"),
    Sample(lambda m, x, t: m.kl_div(x, t, 0), A(3), P(3), note="none"))
add("binary_cross_entropy_with_logits",
    Sample(lambda m, x, t, w: m.binary_cross_entropy_with_logits(x, t, None, w), A(2, 3), Const(P(2, 3) / 2),
           Const(P(3))),
    Sample(lambda m, x, t: m.binary_cross_entropy_with_logits(x, t, reduction=2), A(3), Const(P(3) / 2)))
add("margin_ranking_loss", Sample(lambda m, x, y, t: m.margin_ranking_loss(x, y, t, 0.1), A(4), A(4),
                                  Const(np.array([1.0, -1.0, 1.0, -1.0]))))
add("hinge_embedding_loss", Sample(lambda m, x, t: m.hinge_embedding_loss(x, t, 1.0, 0), A(4),
                                   Const(np.array([1.0, -1.0, 1.0, -1.0]))))
add("triplet_margin_loss", Sample(lambda m, a, p, n: m.triplet_margin_loss(a, p, n, 1.0, 2.0, 1e-6, True, 1),
                                  A(2, 3), A(2, 3), A(2, 3)))
add("cosine_embedding_loss", Sample(lambda m, x, y, t: m.cosine_embedding_loss(x, y, t, 0.2, 2), A(3, 4), A(3, 4),
                                    Const(np.array([1.0, -1.0, -1.0]))))
add("poisson_nll_loss", Sample(lambda m, x, t: m.poisson_nll_loss(x, t, True, False, 1e-8, 1), A(2, 3), Const(P(2, 3))),
    Sample(lambda m, x, t: m.poisson_nll_loss(x, t, False, True, 1e-8, 2), P(3), Const(P(3) * 3),
           note="rates, Stirling's term"))

# -- linear algebra under the old names ------------------------------------------------------------------------
add("det", Sample(lambda m, x: m.det(x), A(3, 3)), Sample(lambda m, x: x.det(), A(2, 2, 2), note="method, batched"))
add("inverse", Sample(lambda m, x: m.inverse(x), _spd(3)), Sample(lambda m, x: x.inverse(), _spd(2)))
add("pinverse", Sample(lambda m, x: m.pinverse(x), A(3, 2)), Sample(lambda m, x: x.pinverse(1e-3), A(2, 3)))
add("matrix_exp", Sample(lambda m, x: m.matrix_exp(x), A(2, 2) / 2), Sample(lambda m, x: x.matrix_exp(), A(3, 3) / 3))
add("cholesky", Sample(lambda m, x: m.cholesky(x @ x.mT + 3 * m.eye(3, dtype=x.dtype)), A(3, 3)),
    Sample(lambda m, x: (x @ x.mT + 2 * m.eye(2, dtype=x.dtype)).cholesky(upper=True), A(2, 2),
           note="upper, method"))
add("cholesky_solve",
    Sample(lambda m, b, l: m.cholesky_solve(b, l), A(3, 2), np.linalg.cholesky(_spd(3))),
    Sample(lambda m, b, u: b.cholesky_solve(u, True), A(2, 1), np.linalg.cholesky(_spd(2)).T, note="upper, method"))
add("cholesky_inverse",
    Sample(lambda m, l: m.cholesky_inverse(l), np.linalg.cholesky(_spd(3))),
    Sample(lambda m, u: u.cholesky_inverse(upper=True), np.linalg.cholesky(_spd(2)).T, note="upper, method"))
add("qr", Sample(lambda m, x: m.qr(x), A(3, 2)), Sample(lambda m, x: x.qr(some=False), A(3, 3), note="complete"))
add("svd", Sample(lambda m, x: m.svd(x).S, A(3, 2), note="singular values"),
    Sample(lambda m, x: (lambda usv: usv[0] @ m.diag_embed(usv[1]) @ usv[2].mT)(m.svd(x)), A(2, 3),
           note="U S V^T, V itself"),
    Sample(lambda m, x: m.svd(x, compute_uv=False).S, A(3, 3), note="no U, V"))
add("triangular_solve",
    Sample(lambda m, b, a: m.triangular_solve(b, a.triu() + 3 * m.eye(3, dtype=a.dtype)).solution, A(3, 2),
           A(3, 3)),
    Sample(lambda m, b, a: b.triangular_solve(a.tril() + 3 * m.eye(2, dtype=a.dtype), upper=False,
                                              transpose=True).solution, A(2, 2), A(2, 2), note="lower, transposed"),
    Sample(lambda m, b, a: m.triangular_solve(b, a.triu(), unitriangular=True).solution, A(2, 1), A(2, 2),
           note="unit diagonal"))

# -- statistics ----------------------------------------------------------------------------------------------------
add("cov", Sample(lambda m, x: m.cov(x), A(3, 5), ref=np.cov),
    Sample(lambda m, x: x.cov(correction=0), A(6), ref=lambda x: np.cov(x, ddof=0), note="1-D, no correction"),
    Sample(lambda m, x, f: m.cov(x, fweights=f), A(2, 4), np.array([1, 2, 1, 3]),
           ref=lambda x, f: np.cov(x, fweights=f), note="frequency weights"),
    Sample(lambda m, x, a: m.cov(x, aweights=a), A(2, 4), Const(P(4)), ref=lambda x, a: np.cov(x, aweights=a),
           note="analytic weights"))
add("corrcoef", Sample(lambda m, x: m.corrcoef(x), A(3, 5), ref=np.corrcoef),
    Sample(lambda m, x: x.corrcoef(), A(4), note="one variable: 1"))


def _distinct(*shape):
    """Values far enough apart that finite differences do not reorder them."""
    return np.random.default_rng(11).permutation(np.prod(shape)).reshape(shape) * 0.25 - 1.0


add("quantile",
    Sample(lambda m, x: m.quantile(x, 0.3), _distinct(3, 4), ref=lambda x: np.quantile(x, 0.3)),
    Sample(lambda m, x: x.quantile(0.75, dim=1, keepdim=True), _distinct(3, 4),
           ref=lambda x: np.quantile(x, 0.75, axis=1, keepdims=True), note="dim, keepdim, method"),
    Sample(lambda m, x, q: m.quantile(x, q, 0), _distinct(5, 2), Const(np.array([0.1, 0.5, 1.0])),
           ref=lambda x, q: np.quantile(x, q, axis=0), note="a tensor of q"),
    Sample(lambda m, x: m.quantile(x, 0.4, -1, interpolation="nearest"), _distinct(2, 5), note="nearest"),
    Sample(lambda m, x: m.quantile(x, 0.4, interpolation="midpoint"), _distinct(6), note="midpoint"))
add("nanquantile",
    Sample(lambda m, x: m.nanquantile(x, 0.3, 1), np.array([[1.0, np.nan, 3.0, 0.5], [2.0, -1.0, 0.25, 4.0]]),
           ref=lambda x: np.nanquantile(x, 0.3, axis=1), note="a NaN skipped"),
    Sample(lambda m, x: x.nanquantile(0.6, interpolation="lower"), _distinct(4, 2), note="lower"),
    Sample(lambda m, x: m.nanquantile(x, 0.6, 0, interpolation="higher"), _distinct(3, 2), note="higher"))
