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


def test_jacfwd_inside_vmap_gives_each_samples_jacobian():
    xs = _rng.standard_normal((2, 4))
    ours = rg.func.vmap(rg.func.jacfwd(_mlp(rg)))(rg.tensor(xs))
    theirs = torch.func.vmap(torch.func.jacfwd(_mlp(torch)))(torch.tensor(xs))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)
