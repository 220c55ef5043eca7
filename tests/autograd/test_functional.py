"""autograd.functional: the same results as torch.autograd.functional on the same numbers."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import functional as F

torch = pytest.importorskip("torch")
TF = torch.autograd.functional


# Each function is written with methods both libraries share, so one body serves both.
def f_single(x):
    return (x.sin() * x.exp()).reshape(2, 3)


def f_multi(x, y):
    return (x.tanh() @ y).exp(), (x * x).sum(0) + y.sum(1)


def f_scalar(x, y):
    return ((x @ y).pow(3).sum() + (x.exp() * x).sum()).reshape(1)


def f_scalar_single(x):
    return (x.sin() * x.pow(2)).sum()


def _inputs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(s) * 0.5 for s in shapes]
    return tuple(rg.tensor(v, dtype=rg.float64) for v in values), tuple(torch.tensor(v) for v in values)


def _close(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _close(a, b)
        return
    assert isinstance(ours, rg.Tensor) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


CASES = [  # (function, input shapes, output shapes, bare tensor input)
    (f_single, [(6,)], [(2, 3)], True),
    (f_multi, [(3, 2), (2, 4)], [(3, 4), (2,)], False),
]


@pytest.mark.parametrize("fn,in_shapes,out_shapes,bare", CASES)
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_and_jvp_match_torch(fn, in_shapes, out_shapes, bare, create_graph):
    ours, theirs = _inputs(*in_shapes)
    (v_out, tv_out), (v_in, tv_in) = _inputs(*out_shapes, seed=1), _inputs(*in_shapes, seed=2)
    if bare:
        ours, theirs, v_out, tv_out, v_in, tv_in = ours[0], theirs[0], v_out[0], tv_out[0], v_in[0], tv_in[0]
    _close(F.vjp(fn, ours, v_out, create_graph=create_graph), TF.vjp(fn, theirs, tv_out, create_graph=create_graph))
    _close(F.jvp(fn, ours, v_in, create_graph=create_graph), TF.jvp(fn, theirs, tv_in, create_graph=create_graph))


@pytest.mark.parametrize("fn,in_shapes,out_shapes,bare", CASES + [(f_scalar, [(2, 3), (3, 2)], [(1,)], False)])
@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_matches_torch(fn, in_shapes, out_shapes, bare, strategy):
    ours, theirs = _inputs(*in_shapes)
    if bare:
        ours, theirs = ours[0], theirs[0]
    # torch's forward mode needs vmap (vectorize=True); retrograd gives the same numbers either way.
    expected = TF.jacobian(fn, theirs, strategy=strategy, vectorize=strategy == "forward-mode")
    _close(F.jacobian(fn, ours, strategy=strategy), expected)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_hessian_matches_torch(strategy):
    ours, theirs = _inputs((2, 3), (3, 2))
    vec = strategy == "forward-mode"
    _close(F.hessian(f_scalar, ours, outer_jacobian_strategy=strategy),
           TF.hessian(f_scalar, theirs, outer_jacobian_strategy=strategy, vectorize=vec))
    _close(F.hessian(f_scalar_single, ours[0]), TF.hessian(f_scalar_single, theirs[0]))


@pytest.mark.parametrize("name", ["vhp", "hvp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vhp_and_hvp_match_torch(name, create_graph):
    ours, theirs = _inputs((2, 3), (3, 2))
    v, tv = _inputs((2, 3), (3, 2), seed=3)
    _close(getattr(F, name)(f_scalar, ours, v, create_graph=create_graph),
           getattr(TF, name)(f_scalar, theirs, tv, create_graph=create_graph))
    _close(getattr(F, name)(f_scalar_single, ours[0], v[0]), getattr(TF, name)(f_scalar_single, theirs[0], tv[0]))


def test_create_graph_results_can_be_differentiated_again():
    x = rg.tensor([0.3, -0.7], dtype=rg.float64, requires_grad=True)
    tx = torch.tensor([0.3, -0.7], dtype=torch.float64, requires_grad=True)
    _, h = F.hvp(f_scalar_single, x, rg.ones(2, dtype=rg.float64), create_graph=True)
    _, th = TF.hvp(f_scalar_single, tx, torch.ones(2, dtype=torch.float64), create_graph=True)
    assert h.requires_grad
    (g,) = rg.autograd.grad(h.sum(), x)
    (tg,) = torch.autograd.grad(th.sum(), tx)
    _close(g, tg)


def test_results_are_detached_without_create_graph():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    out, grad = F.vjp(lambda t: (t * t).sum(), x)
    assert not out.requires_grad and not grad.requires_grad and x.grad is None
    jac = F.jacobian(lambda t: t * t, x)
    assert not jac.requires_grad


def test_unused_inputs_give_zeros_or_raise_in_strict_mode():
    x, y = rg.ones(2, dtype=rg.float64), rg.ones(3, dtype=rg.float64)

    def fn(a, b):
        return a * 2

    jac = F.jacobian(fn, (x, y))
    assert jac[1].shape == (2, 3) and jac[1].abs().sum().item() == 0.0
    assert F.vjp(fn, (x, y), rg.ones(2, dtype=rg.float64))[1][1].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1. "
                                           "This is not allowed in strict mode."):
        F.jacobian(fn, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 1"):
        F.vjp(fn, (x, y), rg.ones(2, dtype=rg.float64), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients"):
        F.vjp(lambda a: rg.ones(2), x, rg.ones(2), strict=True)


def test_argument_errors_match_torch():
    x = rg.ones(3)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided function returns a "
                                           "single Tensor with a single element."):
        F.vjp(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the user-provided function "
                                           "is a single Tensor with a single element."):
        F.jvp(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be retrograd.Size\(\[3\]\) but got "):
        F.jvp(lambda t: t * 2, x, rg.ones(2))
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor or a tuple of Tensors"):
        F.jacobian(lambda t: t, [1.0])
    with pytest.raises(ValueError, match='Expected strategy to be either "forward-mode" or "reverse-mode".'):
        F.jacobian(lambda t: t, x, strategy="sideways")
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hessian should contain a "
                                           "single element"):
        F.hessian(lambda t: t * t, x)
    with pytest.raises(RuntimeError, match="The function given to vhp should return a single Tensor"):
        F.vhp(lambda t: (t.sum(), t.sum()), x, x)


@pytest.mark.parametrize("create_graph", [False, True])
def test_vectorized_jacobian_and_hessian_are_pytorchs(create_graph):
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as tf

    def f(lib):
        return lambda a, b: ((a[:, None] * b).sin(), a.exp().sum(), lib.block_diag(a[:2], b))
    xa, ya = np.linspace(-1, 1, 3), np.array([0.3, -0.7])
    ours = F.jacobian(f(rg), (rg.tensor(xa, requires_grad=True), rg.tensor(ya)), vectorize=True,
                      create_graph=create_graph)
    theirs = tf.jacobian(f(torch), (torch.tensor(xa, requires_grad=True), torch.tensor(ya)), vectorize=True,
                         create_graph=create_graph)
    for o_row, t_row in zip(ours, theirs, strict=True):
        for o, t in zip(o_row, t_row, strict=True):
            np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)
    # (PyTorch batches all outputs as one, so its constant blocks carry the others' history: compare one block)
    assert ours[0][0].requires_grad == theirs[0][0].requires_grad == create_graph

    def g(a):
        return (a.sin() * a.sum()).sum()
    np.testing.assert_allclose(F.hessian(g, rg.tensor(xa), vectorize=True).numpy(),
                               tf.hessian(g, torch.tensor(xa), vectorize=True).numpy(), rtol=1e-12, atol=1e-12)
