"""jacfwd and forward-mode Jacobians with their basis tangents batched by vmap (Note [Batched tangents]), against torch."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.ops._call import interposition

torch = pytest.importorskip("torch")
import torch.func  # noqa: E402

_rng = np.random.default_rng(23)
W1 = _rng.standard_normal((4, 6)) / 2
W2 = _rng.standard_normal((6, 3)) / 2
X = _rng.standard_normal(4)
IDX = np.array([2, 0, 2])
EMB = _rng.standard_normal((3, 2))


@pytest.fixture(autouse=True)
def _no_level_left():
    yield
    assert interposition.stack == ()


def _counted(make):
    """``(f(lib), calls)`` for both libraries: the function of ``make`` counting its calls."""
    calls = []

    def of(lib):
        inner = make(lib)

        def f(*args):
            calls.append(lib)
            return inner(*args)
        return f
    return of, calls


def _mlp(lib):
    w1, w2 = lib.tensor(W1), lib.tensor(W2)
    return lambda x: (lib.nn.functional.gelu((x @ w1).tanh()) @ w2).sigmoid()


def test_jacfwd_runs_the_function_once_with_the_basis_batched():
    of, calls = _counted(_mlp)
    ours = rg.func.jacfwd(of(rg))(rg.tensor(X))
    assert len(calls) == 1  # one forward pass for all 4 columns, as torch.func's
    theirs = torch.func.jacfwd(_mlp(torch))(torch.tensor(X))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_jacfwd_of_two_inputs_and_outputs_matches_torch_func():
    def f(lib):
        return lambda x, w: ((x @ w).tanh(), (x * x).sum() * w)
    ours = rg.func.jacfwd(f(rg), argnums=(0, 1))(rg.tensor(X), rg.tensor(W1))
    theirs = torch.func.jacfwd(f(torch), argnums=(0, 1))(torch.tensor(X), torch.tensor(W1))
    for ro, to in zip(ours, theirs, strict=True):
        for r, t in zip(ro, to, strict=True):
            assert tuple(r.shape) == tuple(t.shape)
            np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-12, atol=1e-14)


def test_jacfwd_computes_the_columns_one_by_one_where_an_op_refuses_to_batch():
    # embedding has no rule for a batched weight: the weight's tangent columns run one pass each
    def make(lib):
        idx = lib.tensor(IDX)
        return lambda w: lib.nn.functional.embedding(idx, w).sin()
    of, calls = _counted(make)
    ours = rg.func.jacfwd(of(rg))(rg.tensor(EMB))
    assert len(calls) == 1 + EMB.size  # the batched pass that refused, then one per column
    theirs = torch.func.jacfwd(make(torch))(torch.tensor(EMB))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_hessian_by_jacfwd_of_jacrev_with_batched_tangents_matches_torch_func():
    def make(lib):
        w1, w2 = lib.tensor(W1), lib.tensor(W2)
        return lambda x: ((x @ w1).tanh() @ w2).sin().sum()
    of, calls = _counted(make)
    ours = rg.func.hessian(of(rg))(rg.tensor(X))
    assert len(calls) <= 2  # not once per column: jacrev's passes under one batched jacfwd pass
    theirs = torch.autograd.functional.hessian(make(torch), torch.tensor(X))  # torch.func's first call: seconds
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_vectorized_forward_mode_jacobian_and_hessian_are_one_pass_and_torchs():
    of, calls = _counted(_mlp)
    ours = rg.autograd.functional.jacobian(of(rg), rg.tensor(X), strategy="forward-mode", vectorize=True)
    assert len(calls) == 2  # the outputs, then one forward pass for every column
    # torch's own (legacy vmap) refuses a vector-matrix product with a batched tangent: torch.func's numbers
    theirs = torch.func.jacfwd(_mlp(torch))(torch.tensor(X))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)

    def g(lib):
        return lambda x: (x.sin() * x).exp().sum()
    ours = rg.autograd.functional.hessian(g(rg), rg.tensor(X), outer_jacobian_strategy="forward-mode",
                                          vectorize=True)
    theirs = torch.autograd.functional.hessian(g(torch), torch.tensor(X))  # its forward mode's first call: seconds
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_jacfwd_inside_vmap_batches_the_basis_under_the_vmap_as_torch_func():
    xs = _rng.standard_normal((2, 4))
    of, calls = _counted(_mlp)
    ours = rg.func.vmap(rg.func.jacfwd(of(rg)))(rg.tensor(xs))
    assert len(calls) == 1  # one forward pass for every column of every sample
    theirs = torch.func.vmap(torch.func.jacfwd(_mlp(torch)))(torch.tensor(xs))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def _leaves(tree):
    return [leaf for item in tree for leaf in (_leaves(item) if isinstance(item, tuple) else [item])]


@pytest.mark.parametrize("w_dim", [0, None])
def test_jacfwd_of_two_arguments_under_two_vmaps_matches_torch_func(w_dim):
    # w_dim None: w is mapped by the inner vmap only, so are the tangents of what it alone makes
    xa = _rng.standard_normal((3, 2, 4))
    wa = _rng.standard_normal((3, 2, 4, 5) if w_dim == 0 else (2, 4, 5))

    def run(lib, calls):
        def f(x, w):
            calls.append(lib)
            return (x @ w).tanh(), w.cos() * (x * x).sum()
        inner = lib.func.vmap(lib.func.jacfwd(f, argnums=(0, 1)))
        return lib.func.vmap(inner, in_dims=(0, w_dim), out_dims=1)(lib.tensor(xa), lib.tensor(wa))
    calls = []
    ours = run(rg, calls)
    assert len(calls) == 2  # one forward pass per differentiated argument, not one per column
    theirs = run(torch, [])
    for r, t in zip(_leaves(ours), _leaves(theirs), strict=True):
        assert tuple(r.shape) == tuple(t.shape)
        np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-12, atol=1e-14)


def test_hessian_inside_vmap_is_one_batched_forward_pass_as_torch_func():
    def make(lib):
        w1, w2 = lib.tensor(W1), lib.tensor(W2)
        return lambda x: ((x @ w1).tanh() @ w2).sin().sum()
    xs = _rng.standard_normal((3, 4))
    of, calls = _counted(make)
    ours = rg.func.vmap(rg.func.hessian(of(rg)))(rg.tensor(xs))
    assert len(calls) <= 2  # jacrev's passes under one batched jacfwd pass
    theirs = [torch.autograd.functional.hessian(make(torch), torch.tensor(x)) for x in xs]  # torch.func's: seconds
    np.testing.assert_allclose(ours.numpy(), np.stack([t.numpy() for t in theirs]), rtol=1e-12, atol=1e-14)
