"""jvp over grad against torch.func: plain outputs at the caller's level, alone and under vmap.

See Note [Reverse transforms of dual tensors]; more compositions in test_composed_transforms.py.
"""
import numpy as np
import pytest

import retrograd as rg
from retrograd.func import grad, hessian, jvp
from retrograd.ops._call import interposition

torch = pytest.importorskip("torch")
_rng = np.random.default_rng(5)
X = _rng.standard_normal((3, 4))
V = _rng.standard_normal(4)
W = _rng.standard_normal(4)


@pytest.fixture(autouse=True)
def _no_level_left():
    yield
    assert interposition.stack == ()


def _f(x):
    return (x.sin() * x).sum()


def _g(w, x):
    return (x.sin() * w * w).sum()


def test_jvp_of_grad_returns_plain_tensors_with_torch_funcs_numbers():
    out, tangent = jvp(grad(_f), (rg.tensor(X[0]),), (rg.tensor(V),))
    t_out, t_tangent = torch.func.jvp(torch.func.grad(_f), (torch.tensor(X[0]),), (torch.tensor(V),))
    for ours, theirs in ((out, t_out), (tangent, t_tangent)):
        assert ours.requires_grad is theirs.requires_grad is False
        assert ours.grad_fn is None and theirs.grad_fn is None
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_jvp_of_grad_keeps_the_graph_for_a_caller_differentiating_it():
    def run(lib):
        x = lib.tensor(X[0], requires_grad=True)
        _, tangent = lib.func.jvp(lib.func.grad(_f), (x,), (lib.tensor(V),))
        tangent.sum().backward()
        return x.grad.numpy()
    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-12, atol=1e-12)


def test_grad_of_jvp_of_grad_matches_torch_func():
    def run(lib):
        fn = lambda x: lib.func.jvp(lib.func.grad(_f), (x,), (lib.tensor(V),))[1].sum()  # noqa: E731
        return lib.func.grad(fn)(lib.tensor(X[0])).numpy()
    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("composition", ["vmap_jvp_grad", "jvp_vmap_grad", "vmap_hessian", "vmap_jacfwd_jacrev",
                                         "vmap_jvp_grad_of_unbatched_primal"])
def test_forward_over_reverse_under_vmap_matches_torch_func(composition):
    def run(lib):
        F = lib.func
        x, v = lib.tensor(X), lib.tensor(V)
        out = {
            "vmap_jvp_grad": lambda: F.vmap(lambda a: F.jvp(F.grad(_f), (a,), (v,))[1])(x),
            "jvp_vmap_grad": lambda: F.jvp(F.vmap(F.grad(_f)), (x,), (lib.tensor(np.tile(V, (3, 1))),))[1],
            "vmap_hessian": lambda: F.vmap(F.hessian(_f))(x),
            "vmap_jacfwd_jacrev": lambda: F.vmap(F.jacfwd(F.jacrev(_f)))(x),
            "vmap_jvp_grad_of_unbatched_primal": lambda: F.vmap(lambda a: F.jvp(lambda w: F.grad(_g)(w, a),
                                                                                (lib.tensor(W),), (v,))[1])(x),
        }[composition]()
        assert out.grad_fn is None
        return out.detach().numpy()
    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-12, atol=1e-12)
    # the transforms still work afterwards, alone
    expected = torch.func.vmap(torch.func.hessian(_f))(torch.tensor(X)).numpy()
    np.testing.assert_allclose(np.stack([hessian(_f)(rg.tensor(r)).numpy() for r in X]), expected,
                               rtol=1e-12, atol=1e-12)


def test_vmap_of_grad_and_vmap_of_jvp_still_match_torch_func():
    def run(lib):
        x, v = lib.tensor(X), lib.tensor(V)
        g = lib.func.vmap(lib.func.grad(_f))(x)
        j = lib.func.vmap(lambda a: lib.func.jvp(_f, (a,), (v,))[1])(x)
        return g.detach().numpy(), j.detach().numpy()
    for ours, theirs in zip(run(rg), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_jvp_of_vmap_of_grad_in_an_unbatched_argument_matches_torch_func():
    def run(lib):
        per_sample = lib.func.vmap(lib.func.grad(_g), in_dims=(None, 0))
        return lib.func.jvp(lambda w: per_sample(w, lib.tensor(X)), (lib.tensor(W),), (lib.tensor(V),))[1].numpy()
    np.testing.assert_allclose(run(rg), run(torch), rtol=1e-12, atol=1e-12)
