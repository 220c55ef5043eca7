"""Formulas that compute on arrays when nothing is recorded (Note [Formulas on arrays]) and the one-buffer
forwards beside them: the same numbers as PyTorch, in float64 the derivatives finite differences give, and,
recorded (create_graph), exact second derivatives.

``gradcheck`` differentiates without recording (the array form); ``gradgradcheck`` records the first
backward (the form in ops).
"""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import gradcheck, gradgradcheck
from retrograd.ops import nn as _nn_ops

_rng = np.random.default_rng(11)

# (name, the call for either library, input shapes); every input requires grad.
CASES = [
    ("softmax_last", lambda m, x: m.softmax(x, -1), [(3, 5)]),
    ("softmax_first_of_3d", lambda m, x: m.softmax(x, 0), [(2, 3, 4)]),
    ("softmax_1d", lambda m, x: m.softmax(x, 0), [(4,)]),
    ("log_softmax_last", lambda m, x: m.log_softmax(x, -1), [(3, 5)]),
    ("log_softmax_middle", lambda m, x: m.log_softmax(x, 1), [(2, 3, 4)]),
    ("sigmoid", lambda m, x: m.sigmoid(x), [(3, 4)]),
    ("sigmoid_0d", lambda m, x: m.sigmoid(x), [()]),
    ("tanh", lambda m, x: m.tanh(x), [(3, 4)]),
    ("tanh_0d", lambda m, x: m.tanh(x), [()]),
    ("addmm", lambda m, b, x, w: m.addmm(b, x, w), [(4,), (3, 2), (2, 4)]),
    ("addmm_matrix_input", lambda m, b, x, w: m.addmm(b, x, w), [(3, 4), (3, 2), (2, 4)]),
    ("addmm_scaled", lambda m, b, x, w: m.addmm(b, x, w, beta=0.5, alpha=2.0), [(4,), (3, 2), (2, 4)]),
    ("layer_norm_affine", lambda m, x, w, b: m.nn.functional.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    ("layer_norm_two_dims_no_affine", lambda m, x: m.nn.functional.layer_norm(x, (3, 4)), [(2, 3, 4)]),
    ("gelu", lambda m, x: m.nn.functional.gelu(x), [(3, 4)]),
    # 8 rows and more: the row kernels of Note [Row reductions as products]
    ("softmax_rows", lambda m, x: m.softmax(x, -1), [(2, 4, 3)]),
    ("log_softmax_rows", lambda m, x: m.log_softmax(x, 1), [(8, 3)]),
    ("layer_norm_rows", lambda m, x, w, b: m.nn.functional.layer_norm(x, (3,), w, b), [(2, 4, 3), (3,), (3,)]),
    ("addmm_transposed_mat2", lambda m, b, x, w: m.addmm(b, x, w.t()), [(4,), (3, 2), (4, 2)]),
    ("addmm_transposed_mat2_scaled", lambda m, b, x, w: m.addmm(b, x, w.t(), alpha=2.0), [(4,), (3, 2), (4, 2)]),
    ("masked_fill_broadcast_mask", lambda m, x: x.masked_fill(m.tensor([[True], [False]]), -0.5) * x, [(2, 2, 3)]),
    ("masked_fill_of_a_transpose", lambda m, x: x.t().masked_fill(m.tensor([False, True, True]), 2.0), [(3, 4)]),
    ("matmul_stack_times_transposed", lambda m, a, b: a @ b.t(), [(2, 3, 4), (5, 4)]),
    ("matmul_strided_stack_times_matrix", lambda m, a, b: a.transpose(0, 1) @ b, [(3, 2, 4), (4, 5)]),
    ("addmm_one_element_bias", lambda m, b, x, w: m.addmm(b, x, w), [(1,), (3, 2), (2, 4)]),
    ("cat_middle_dim", lambda m, a, b: m.cat([a, b * 2], 1), [(2, 3, 2), (2, 1, 2)]),
    ("view_then_reshape", lambda m, x: x.view(6, 2).reshape(3, 4) * x.reshape(3, 4), [(2, 6)]),
    ("reshape_of_a_transpose", lambda m, x: x.t().reshape(-1) * 2, [(3, 4)]),
    ("matmul_matrices", lambda m, a, b: m.matmul(a, b), [(3, 2), (2, 4)]),
    ("matmul_broadcast_batch", lambda m, a, b: a @ b, [(2, 3, 2), (2, 4)]),
    ("matmul_batched", lambda m, a, b: a @ b, [(2, 3, 2), (2, 2, 4)]),
    ("chunk_all_used", lambda m, x: (lambda i, f, g: m.sigmoid(i) * f + g)(*x.chunk(3, 1)), [(2, 6)]),
    ("chunk_one_used", lambda m, x: x.chunk(2, 0)[1] * 2, [(4, 3)]),
    ("select_middle_dim", lambda m, x: x[:, 1] * x[:, 2], [(3, 4, 2)]),
    ("slice_rows", lambda m, x: x[1:3] * 3, [(4, 3)]),
]


def _inputs(lib, shapes, dtype):
    arrays = [_rng.uniform(-2, 2, s) for s in shapes]
    return [lib.tensor(a, dtype=dtype, requires_grad=True) for a in arrays], arrays


@pytest.mark.parametrize("name,call,shapes", CASES, ids=[c[0] for c in CASES])
def test_array_formula_passes_gradcheck_and_its_recorded_form_gradgradcheck(name, call, shapes):
    xs, _ = _inputs(rg, shapes, rg.float64)
    fn = lambda *a: call(rg, *a)  # noqa: E731
    assert gradcheck(fn, xs)
    assert gradgradcheck(fn, xs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,call,shapes", CASES, ids=[c[0] for c in CASES])
def test_array_formula_matches_torch(name, call, shapes, dtype):
    torch = pytest.importorskip("torch")
    arrays = [_rng.uniform(-2, 2, s) for s in shapes]
    xs = [rg.tensor(a, dtype=getattr(rg, dtype), requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in arrays]
    out, tout = call(rg, *xs), call(torch, *ts)
    assert out.dtype == getattr(rg, dtype)
    seed = _rng.standard_normal(tuple(tout.shape))
    grads = rg.autograd.grad(out, xs, rg.tensor(seed, dtype=out.dtype))
    tgrads = torch.autograd.grad(tout, ts, torch.tensor(seed, dtype=tout.dtype))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=tol, atol=tol)
    for g, tg in zip(grads, tgrads, strict=True):
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,call,shapes", CASES, ids=[c[0] for c in CASES])
def test_array_formula_leaves_a_broadcast_incoming_gradient_unchanged(name, call, shapes):
    # sum's backward hands on an expanded (read-only, zero-stride) gradient: the formulas must not write into it
    torch = pytest.importorskip("torch")
    arrays = [_rng.uniform(-2, 2, s) for s in shapes]
    xs = [rg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    call(rg, *xs).sum().backward()
    call(torch, *ts).sum().backward()
    for x, t in zip(xs, ts, strict=True):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_sigmoid_saturates_without_overflow_in_float32():
    x = rg.tensor([-1000.0, -20.0, 0.0, 20.0, 1000.0], requires_grad=True)
    y = rg.sigmoid(x)
    y.sum().backward()
    assert np.isfinite(y.detach().numpy()).all() and y.tolist()[0] == 0.0 and y.tolist()[-1] == 1.0
    assert x.grad.tolist()[0] == 0.0 and x.grad.tolist()[2] == 0.25


def test_addmm_adds_a_broadcast_input_into_the_product_and_keeps_a_full_input_intact():
    b = rg.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = rg.addmm(b, rg.eye(2), rg.eye(2))
    assert out.tolist() == [[2.0, 2.0], [3.0, 5.0]]
    assert b.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    out = rg.addmm(rg.tensor([1.0, 2.0]), rg.eye(2), rg.eye(2))
    assert out.tolist() == [[2.0, 2.0], [1.0, 3.0]]


def test_a_hook_sees_the_array_formulas_gradient_and_can_replace_it():
    x = rg.tensor(_rng.uniform(-1, 1, (2, 3)), requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.clone()) or g * 2)
    rg.softmax(x, -1).mul(rg.tensor(_rng.standard_normal((2, 3)))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * seen[0].numpy(), rtol=1e-15)


@pytest.mark.parametrize("exp2", [True, False])
def test_float32_gelu_and_its_gradient_are_within_float32_rounding_of_the_exact_ones(exp2, monkeypatch):
    # See Note [float32 GELU]: PyTorch's own float32 erf; compared here with the float64 (SciPy) gelu, with the
    # exponential of either CPU
    monkeypatch.setattr(_nn_ops, "_VECTOR_EXP2", exp2)
    x = np.concatenate([np.linspace(-9, 9, 721), [0.0, -0.0, 1e-30, -1e-30, 50.0, -50.0]])
    exact = rg.tensor(x, requires_grad=True)
    rg.nn.functional.gelu(exact).sum().backward()
    ours = rg.tensor(x, dtype=rg.float32, requires_grad=True)
    out = rg.nn.functional.gelu(ours)
    out.sum().backward()
    assert out.dtype == rg.float32 and ours.grad.dtype == rg.float32
    want = rg.nn.functional.gelu(exact).detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-6, atol=5e-7)
    np.testing.assert_allclose(ours.grad.numpy(), exact.grad.numpy(), rtol=1e-6, atol=5e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_at_infinities_nan_and_far_below_zero_matches_torch(dtype):
    # float32 exact gelu is NaN at +inf in PyTorch (x * Phi(x) with its erf), float64 is inf; -0.0 far below zero
    torch = pytest.importorskip("torch")
    values = [float("-inf"), float("inf"), float("nan"), -50.0, -0.0, 0.0, 50.0]
    x = rg.tensor(values, dtype=getattr(rg, dtype), requires_grad=True)
    t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
    y, ty = rg.nn.functional.gelu(x), torch.nn.functional.gelu(t)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    numbers = ~np.isnan(ty.detach().numpy())  # a NaN's sign bit is no part of the contract
    np.testing.assert_array_equal(np.signbit(y.detach().numpy()[numbers]), np.signbit(ty.detach().numpy()[numbers]))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_sigmoid_overflows_quietly_inside_a_raising_numpy_errstate():
    x = rg.tensor([-1000.0, 0.0, 1000.0], requires_grad=True)
    with np.errstate(all="raise"):
        y = rg.sigmoid(x)
        y.sum().backward()
    assert y.tolist() == [0.0, 0.5, 1.0] and x.grad.tolist() == [0.0, 0.25, 0.0]


def test_cat_backward_gives_no_gradient_to_a_legacy_empty_input():
    torch = pytest.importorskip("torch")
    a = _rng.standard_normal((2, 3))
    x, tx = rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    e, te = rg.zeros(0, requires_grad=True), torch.zeros(0, requires_grad=True)
    seed = _rng.standard_normal((2, 6))
    gx, ge = rg.autograd.grad(rg.cat([x, e, x], 1), [x, e], rg.tensor(seed), allow_unused=True)
    tgx, tge = torch.autograd.grad(torch.cat([tx, te, tx], 1), [tx, te], torch.tensor(seed), allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-12)
    assert (ge is None) == (tge is None)


@pytest.mark.parametrize("rows", [5, 20])  # See Note [A small embedding's gradient as a product]: 5 rows take it
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_gradient_sums_the_rows_of_repeated_indices_as_torch(padding_idx, dtype, rows):
    torch = pytest.importorskip("torch")
    w = _rng.standard_normal((rows, 3))
    idx = np.array([[4, 2, 4, 0], [2, 4, 1, 4]])
    seed = _rng.standard_normal((2, 4, 3))
    x = rg.tensor(w, dtype=getattr(rg, dtype), requires_grad=True)
    t = torch.tensor(w, dtype=getattr(torch, dtype), requires_grad=True)
    rg.nn.functional.embedding(rg.tensor(idx), x, padding_idx=padding_idx).backward(rg.tensor(seed, dtype=x.dtype))
    torch.nn.functional.embedding(torch.tensor(idx), t, padding_idx=padding_idx).backward(
        torch.tensor(seed, dtype=t.dtype))
    assert x.grad.dtype == x.dtype
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)
    if dtype == "float64" and padding_idx is None:  # the padding row's zero gradient is not its derivative
        assert gradcheck(lambda v: rg.nn.functional.embedding(rg.tensor(idx), v), [x])


def test_a_small_embeddings_non_finite_gradient_stays_in_its_rows_as_torch():
    # See Note [A small embedding's gradient as a product]: 0 * inf in the product would reach every row
    torch = pytest.importorskip("torch")
    idx = np.array([[1, 0, 1], [3, 0, 2]])
    seed = _rng.standard_normal((2, 3, 4)).astype(np.float32)
    seed[0, 1, 2], seed[1, 2, 0] = np.inf, np.nan
    x = rg.zeros(4, 4, requires_grad=True)
    t = torch.zeros(4, 4, requires_grad=True)
    rg.nn.functional.embedding(rg.tensor(idx), x).backward(rg.tensor(seed))
    torch.nn.functional.embedding(torch.tensor(idx), t).backward(torch.tensor(seed))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-6)  # equal_nan: the same places


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_few_rows_times_a_transposed_matrix_matches_torch_and_is_contiguous(dtype):
    # Note [Products on a few rows]: x @ w.t() (forward) and h @ v (the backward's grad @ v.t()) on these shapes
    # take the product the other way round
    torch = pytest.importorskip("torch")
    arrays = [_rng.standard_normal(s) for s in ((16, 256), (128, 256), (16, 128), (128, 256))]
    seed = _rng.standard_normal((16, 128))
    rs = [rg.tensor(a, dtype=getattr(rg, dtype), requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in arrays]
    (rx, rw, rh, rv), (tx, tw, th, tv) = rs, ts
    out, tout = rx @ rw.t(), tx @ tw.t()
    assert out.is_contiguous()
    r_loss = (out * rg.tensor(seed, dtype=out.dtype)).sum() + (rh @ rv).square().sum()
    t_loss = (tout * torch.tensor(seed, dtype=tout.dtype)).sum() + (th @ tv).square().sum()
    r_loss.backward()
    t_loss.backward()
    tol = 1e-3 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=tol, atol=tol)
    for r, t in zip(rs, ts, strict=True):
        assert r.grad.dtype == r.dtype and r.grad.is_contiguous()
        np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("create_graph", [False, True])
def test_the_gradient_of_a_transposed_mat2_has_torchs_layout(create_graph):
    # Note [The layout of a transposed operand's gradient]: linear's weight.t() gets its gradient column-major, so
    # that the weight's own arrives row-major
    torch = pytest.importorskip("torch")
    strides = []
    for m in (rg, torch):
        b, x, w = (m.tensor(_rng.standard_normal(s), requires_grad=True) for s in ((5,), (3, 4), (5, 4)))
        wt = w.t()
        out = m.addmm(b, x, wt)
        g_wt, = m.autograd.grad(out.sum(), wt, create_graph=create_graph)
        g_w, = m.autograd.grad(m.nn.functional.linear(x, w, b).sum(), w, create_graph=create_graph)
        stack = x.reshape(1, 3, 4).expand(2, 3, 4)
        g_stack_wt, = m.autograd.grad((stack @ wt).sum(), wt, create_graph=create_graph)  # linear without a bias
        strides.append((g_wt.stride(), g_w.stride(), out.grad_fn._saved_mat2_sym_strides, g_stack_wt.stride()))
    assert strides[0] == strides[1] == ((1, 4), (4, 1), (1, 4), (1, 4))


def test_masked_fill_zeroes_a_nonfinite_incoming_gradient_under_the_mask_and_gives_a_row_major_result_as_torch():
    # Note [masked_fill as a copy]: the forward and the input's formula copy, then write under the mask
    torch = pytest.importorskip("torch")
    x = _rng.standard_normal((4, 3))
    g = np.array([[np.nan, 1.0, np.inf, -2.0], [3.0, np.nan, 0.5, -np.inf], [1.0, 2.0, 3.0, 4.0]])
    got = []
    for m in (rg, torch):
        xt = m.tensor(x, requires_grad=True)
        out = xt.t().masked_fill(m.tensor([True, False, True, False]), float("-inf"))
        gx, = m.autograd.grad(out, xt, m.tensor(g))
        got.append((out.detach().numpy(), out.stride(), gx.numpy()))
    np.testing.assert_array_equal(got[0][0], got[1][0])
    assert got[0][1] == got[1][1] == (4, 1)  # row-major, whatever the input's layout
    np.testing.assert_array_equal(got[0][2], got[1][2])


@pytest.mark.parametrize("wanted", [(0,), (1,), (2,), (0, 1), (1, 2), (0, 1, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_gradients_of_any_subset_of_its_inputs_match_torch(wanted, dtype):
    # Note [layer_norm's gradients from one centred input]: the node's apply computes the wanted edges together
    torch = pytest.importorskip("torch")
    arrays = [_rng.standard_normal(s) + 3.0 for s in ((4, 8, 16), (16,), (16,))]
    seed = _rng.standard_normal((4, 8, 16))
    got = []
    for m in (rg, torch):
        ts = [m.tensor(a, dtype=getattr(m, dtype), requires_grad=k in wanted) for k, a in enumerate(arrays)]
        out = m.nn.functional.layer_norm(ts[0], (16,), ts[1], ts[2])
        got.append([g.numpy() for g in m.autograd.grad(out, [ts[k] for k in wanted], m.tensor(seed, dtype=out.dtype))])
    tol = 1e-4 if dtype == "float32" else 1e-12
    for r, t in zip(*got, strict=True):
        np.testing.assert_allclose(r, t, rtol=tol, atol=tol)


def test_layer_norm_without_affine_over_many_rows_passes_gradcheck():
    x = rg.tensor(_rng.standard_normal((3, 4, 5)), requires_grad=True)
    assert gradcheck(lambda x: rg.nn.functional.layer_norm(x, (5,)), (x,))
    assert gradgradcheck(lambda x: rg.nn.functional.layer_norm(x, (5,)), (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_over_many_rows_matches_torch_on_masked_distant_and_nonfinite_rows(dtype):
    # See Note [Row reductions as products]: shifted by the array's maximum, rows far below it computed again
    torch = pytest.importorskip("torch")
    x = _rng.uniform(-3, 3, (12, 6))
    x[1, 2:] = -np.inf  # partly masked
    x[2] = -np.inf  # fully masked: NaN, as PyTorch
    x[3] -= 300.0  # far below the rest: its own maximum
    x[4, 0] = np.nan
    x[5, 1] = 1e4  # the array's maximum, far above every other row
    x[6, 3] = np.inf
    for fn in ("softmax", "log_softmax"):
        xs = rg.tensor(x, dtype=getattr(rg, dtype), requires_grad=True)
        ts = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
        out, tout = getattr(rg, fn)(xs, -1), getattr(torch, fn)(ts, -1)
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=tol, atol=tol)
        seed = np.where(np.isfinite(tout.detach().numpy()), _rng.standard_normal(x.shape), 0.0)
        (g,), (tg,) = rg.autograd.grad(out, [xs], rg.tensor(seed, dtype=out.dtype)), torch.autograd.grad(
            tout, [ts], torch.tensor(seed, dtype=tout.dtype))
        np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=tol, atol=tol)
    x[6, 3] = 0.0
    many = np.tile(x[:8], (3, 1))  # no infinity: rows 2 (all -inf) and 4 (NaN) go the exact way
    np.testing.assert_allclose(rg.softmax(rg.tensor(many), 1).numpy(), torch.softmax(torch.tensor(many), 1).numpy(),
                               rtol=1e-12, atol=1e-12)


def test_convolution_of_small_planes_keeps_nonfinite_values_where_torch_has_them():
    # See Note [Small planes as products]: a 0 times inf would be NaN over the plane, so such inputs take the copies
    torch = pytest.importorskip("torch")
    x = _rng.standard_normal((2, 2, 4, 4))
    x[0, 1, 2, 3], x[1, 0, 0, 0] = np.inf, np.nan
    w, seed = _rng.standard_normal((3, 2, 3, 3)), _rng.standard_normal((2, 3, 4, 4))
    seed[1, 2, 1, 1] = np.inf
    xs, ws = rg.tensor(x, requires_grad=True), rg.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    out, tout = rg.nn.functional.conv2d(xs, ws, padding=1), torch.nn.functional.conv2d(xt, wt, padding=1)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    (gx,), (tgx,) = rg.autograd.grad(out, [xs], rg.tensor(seed)), torch.autograd.grad(tout, [xt], torch.tensor(seed))
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-12, atol=1e-12)
