"""Samples of the functional ops added beside the others (retrograd/nn/_functional_more.py, ops/shuffle.py,
_top_level_more.py), called as ``torch.<name>`` / ``nn.functional.<name>`` with PyTorch's arguments; format in
samples.py."""
import numpy as np

from samples import A, Const, Sample, add

add("channel_shuffle", Sample(lambda m, x: m.nn.functional.channel_shuffle(x, 2), A(2, 4, 3)),
    Sample(lambda m, x: m.channel_shuffle(x, 3), A(1, 6, 2, 2), note="4-d, top level"),
    Sample(lambda m, x: m.nn.functional.channel_shuffle(x, 1), A(1, 3, 2), note="one group"))
add("bilinear", Sample(lambda m, x, y, w, b: m.bilinear(x, y, w, b), A(2, 3), A(2, 4), A(5, 3, 4), A(5)),
    Sample(lambda m, x, y, w: m.nn.functional.bilinear(x, y, w), A(2, 2, 2), A(2, 2, 3), A(2, 2, 3),
           note="batch dims, no bias"),
    Sample(lambda m, x, y, w, b: m.nn.functional.bilinear(x, y, w, b), A(3), A(2), A(2, 3, 2), A(2), note="1-d"))
add("constant_pad_nd", Sample(lambda m, x: m.constant_pad_nd(x, (1, 2), 0.5), A(2, 3), torch_call=lambda m, x:
                              m.constant_pad_nd(x, (1, 2), 0.5)),
    Sample(lambda m, x: m.constant_pad_nd(x, (1, -1, 0, 1)), A(2, 3), note="negative: crops"))
add("rms_norm", Sample(lambda m, x, w: m.rms_norm(x, (3,), w), A(2, 3), A(3)),
    Sample(lambda m, x: m.rms_norm(x, [2, 3], eps=1e-3), A(2, 2, 3), note="two dims, eps"))
add("multi_margin_loss",
    Sample(lambda m, x, t: m.nn.functional.multi_margin_loss(x, t), A(3, 4), np.array([0, 3, 1]), gradgrad=False,
           note="PyTorch has no second derivative (tests/nn/test_names.py checks ours)"),
    Sample(lambda m, x, t, w: m.nn.functional.multi_margin_loss(x, t, p=2, margin=0.5, weight=w, reduction="none"),
           A(3, 4), np.array([2, 3, 1]), Const(A(4) + 3), gradgrad=False, note="p = 2, a weight"),
    Sample(lambda m, x, t: m.nn.functional.multi_margin_loss(x, t, reduction="sum"), A(4), np.array(1),
           gradgrad=False, note="one sample"))
add("multilabel_margin_loss",
    Sample(lambda m, x, t: m.nn.functional.multilabel_margin_loss(x, t), A(3, 4),
           np.array([[3, 0, -1, 1], [1, 1, 2, -1], [2, 0, 1, 3]]), gradgrad=False),
    Sample(lambda m, x, t: m.nn.functional.multilabel_margin_loss(x, t, reduction="none"), A(4),
           np.array([2, -1, 0, 0]), gradgrad=False, note="one sample"))
add("triplet_margin_with_distance_loss",
    Sample(lambda m, a, p, n: m.nn.functional.triplet_margin_with_distance_loss(a, p, n), A(3, 4), A(3, 4), A(3, 4)),
    Sample(lambda m, a, p, n: m.nn.functional.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda x, y: 1 - m.nn.functional.cosine_similarity(x, y), margin=0.7, swap=True,
        reduction="none"), A(3, 4), A(3, 4), A(3, 4), note="a distance function, swap"))
add("cumulative_trapezoid", Sample(lambda m, y: m.cumulative_trapezoid(y), A(2, 4)),
    Sample(lambda m, y, x: m.cumulative_trapezoid(y, x, dim=0), A(3, 2), Const(np.array([0.0, 0.5, 2.0])),
           note="sample points"),
    Sample(lambda m, y: m.cumulative_trapezoid(y, dx=0.5, dim=0), A(3, 2), note="spacing"))
add("column_stack", Sample(lambda m, x, y, z: m.column_stack([x, y, z]), A(3), A(3, 2), A(3)))
add("adjoint", Sample(lambda m, x: m.adjoint(x), A(2, 3)), Sample(lambda m, x: x.adjoint(), A(2, 2, 3)))
add("fill", Sample(lambda m, x: m.fill(x, 2.5), A(2, 3)))


# -- the LU decomposition (retrograd/ops/lu.py) --------------------------------------------------------------------
def _well_conditioned(*shape):
    n = shape[-1]
    return A(*shape) + 3 * np.eye(n)[::-1]  # pivoting swaps rows: the anti-diagonal dominates


add("linalg_lu_factor_ex", Sample(lambda m, a: m.linalg.lu_factor_ex(a).LU, _well_conditioned(3, 3)),
    Sample(lambda m, a: m.linalg.lu_factor(a).LU, _well_conditioned(2, 3, 3), note="batched"),
    Sample(lambda m, a: m.lu(a)[0], _well_conditioned(3, 3), note="torch.lu"))
add("linalg_lu", Sample(lambda m, a: m.linalg.lu(a), _well_conditioned(3, 3)),
    Sample(lambda m, a: m.linalg.lu(a)[1:], _well_conditioned(2, 2, 2), note="batched"),
    Sample(lambda m, a: m.linalg.lu(a), A(4, 2) + np.eye(4, 2)[::-1] * 3, note="tall"),
    Sample(lambda m, a: m.linalg.lu(a)[1:], A(2, 4) + np.eye(2, 4)[::-1] * 3, note="wide"))
add("linalg_lu_factor_ex", Sample(lambda m, a: m.linalg.lu_factor(a).LU, A(4, 2) + np.eye(4, 2)[::-1] * 3,
                                  note="tall"),
    Sample(lambda m, a: m.linalg.lu_factor(a).LU, A(2, 4) + np.eye(2, 4)[::-1] * 3, note="wide"))
add("lu_unpack", Sample(lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a)), _well_conditioned(3, 3)),
    Sample(lambda m, lu, p: m.lu_unpack(lu, p), A(3, 2), np.array([3, 3], dtype=np.int32), note="tall"),
    Sample(lambda m, lu, p: m.lu_unpack(lu, p), A(2, 3), np.array([2, 2], dtype=np.int32), note="wide"),
    Sample(lambda m, lu, p: m.lu_unpack(lu, p, unpack_pivots=False)[1:], A(2, 2), np.array([2, 2], dtype=np.int32),
           note="without the permutation"))
add("linalg_lu_solve",
    Sample(lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b), _well_conditioned(2, 2), A(2, 2)),
    Sample(lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, adjoint=True), _well_conditioned(2, 2, 2),
           A(2, 1), note="adjoint, batched LU"),
    Sample(lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, left=False), _well_conditioned(2, 2),
           A(2, 1, 2), note="right, batched B"),
    Sample(lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, left=False, adjoint=True),
           _well_conditioned(2, 2), A(1, 2), note="right, adjoint"),
    Sample(lambda m, b, a: m.lu_solve(b, *m.linalg.lu_factor(a)), A(2, 1), _well_conditioned(2, 2),
           note="torch.lu_solve"))


# -- spatial transformers (retrograd/nn/_grid.py) ----------------------------------------------------------------
def _grid(*shape):
    return A(*shape, low=-1.2, high=1.2)


add("grid_sample",
    Sample(lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False), A(1, 2, 3, 3), _grid(1, 2, 2, 2),
           gradgrad=False, note="PyTorch has no second derivative (tests/nn/test_names.py checks ours)"),
    Sample(lambda m, x, g: m.nn.functional.grid_sample(x, g, "bilinear", "border", True), A(1, 1, 3, 2),
           _grid(1, 2, 2, 2), gradgrad=False, note="border, corners aligned"),
    Sample(lambda m, x, g: m.nn.functional.grid_sample(x, g, "bilinear", "reflection", False), A(2, 1, 2, 3),
           _grid(2, 1, 3, 2), gradgrad=False, note="reflection"),
    Sample(lambda m, x, g: m.nn.functional.grid_sample(x, g, "nearest", "zeros", False), A(1, 1, 3, 3),
           _grid(1, 2, 2, 2), gradgrad=False, note="nearest"),
    Sample(lambda m, x, g: m.grid_sampler(x, g, 2, 2, True), A(1, 1, 3, 3), _grid(1, 1, 2, 2), gradgrad=False,
           note="bicubic, reflection, torch.grid_sampler"))
add("affine_grid",
    Sample(lambda m, t: m.nn.functional.affine_grid(t, (2, 1, 2, 3), align_corners=False), A(2, 2, 3)),
    Sample(lambda m, t: m.affine_grid_generator(t, [1, 1, 2, 2, 3], True), A(1, 3, 4), note="3-d, corners aligned"))
