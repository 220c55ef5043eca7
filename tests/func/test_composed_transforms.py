"""Forward-over-reverse under vmap, against torch.func on the same numbers (float64).

See Note [The order of transform levels] and Note [Reverse transforms of dual tensors].
"""
import numpy as np
import pytest

import retrograd as rg
from retrograd.func._batched import levels
from retrograd.ops._call import interposition

torch = pytest.importorskip("torch")
_rng = np.random.default_rng(11)
X = _rng.standard_normal((3, 4))  # a batch of 3 points in R^4
T = _rng.standard_normal((3, 4))  # a batch of tangents
V = _rng.standard_normal(4)
A = _rng.standard_normal((4, 4)) / 2
LIN_W, LIN_B = _rng.standard_normal((2, 4)) / 2, _rng.standard_normal(2) / 2
TOL = dict(rtol=1e-10, atol=1e-12)


@pytest.fixture(autouse=True)
def _no_level_left():
    yield
    assert interposition.stack == ()
    assert levels() == []


def _f(lib):
    """A scalar function of a 4-vector made of matmul, tanh, exp, indexing and sum."""
    a = lib.tensor(A)

    def f(x):
        h = (a @ x).tanh()
        return (h * x.exp()).sum() + x[1] * x[2:].sum()
    return f


def _lin(lib):
    """The squared output of an nn.Linear(4, 2), through functional_call, as a function of its weight and bias."""
    model = lib.nn.Linear(4, 2).double()

    def loss(w, b, x):
        out = lib.func.functional_call(model, {"weight": w, "bias": b}, (x,))
        return (out.tanh() ** 2).sum()
    return loss


def _check(ours, theirs):
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.requires_grad is t.requires_grad is False
        assert o.grad_fn is None
        np.testing.assert_allclose(o.numpy(), t.detach().numpy(), **TOL)


@pytest.mark.parametrize("in_dims", [(0, 0), (0, None), (None, 0), (1, 1)])
def test_vmap_of_jvp_of_grad_matches_torch_func(in_dims):
    def run(lib):
        primal = X if in_dims[0] == 0 else X.T if in_dims[0] == 1 else X[0]
        tangent = T if in_dims[1] == 0 else T.T if in_dims[1] == 1 else V
        return lib.func.vmap(lambda x, v: lib.func.jvp(lib.func.grad(_f(lib)), (x,), (v,)), in_dims=in_dims)(
            lib.tensor(primal), lib.tensor(tangent))
    _check(run(rg), run(torch))


def test_jvp_of_vmap_of_grad_matches_torch_func():
    def run(lib):
        return lib.func.jvp(lib.func.vmap(lib.func.grad(_f(lib))), (lib.tensor(X),), (lib.tensor(T),))
    _check(run(rg), run(torch))


def test_vmap_of_hessian_gives_per_sample_hessians_of_torch_func():
    _check(rg.func.vmap(rg.func.hessian(_f(rg)))(rg.tensor(X)),
           torch.func.vmap(torch.func.hessian(_f(torch)))(torch.tensor(X)))


def test_vmap_of_jacfwd_of_jacrev_matches_torch_func():
    def run(lib):
        g = lambda x: (lib.tensor(A) @ x).tanh() * x[0]  # noqa: E731 - a vector output
        return lib.func.vmap(lib.func.jacfwd(lib.func.jacrev(g)))(lib.tensor(X))
    _check(run(rg), run(torch))


def test_jacfwd_of_vmap_of_grad_matches_torch_func():
    def run(lib):
        return lib.func.jacfwd(lib.func.vmap(lib.func.grad(_f(lib))))(lib.tensor(X))
    _check(run(rg), run(torch))


def test_vmap_of_hvp_over_tangents_matches_torch_func():
    def run(lib):
        f = _f(lib)
        x = lib.tensor(X[0])
        hvp = lambda v: lib.func.jvp(lambda y: lib.func.vjp(f, y)[1](lib.tensor(1.0))[0], (x,), (v,))[1]  # noqa: E731
        return lib.func.vmap(hvp)(lib.tensor(T))
    _check(run(rg), run(torch))


def test_vmap_of_jvp_of_grad_of_a_linear_through_functional_call_matches_torch_func():
    def run(lib):
        loss = _lin(lib)
        w, b, tw, tb = (lib.tensor(a) for a in (LIN_W, LIN_B, LIN_W[::-1].copy(), LIN_B[::-1].copy()))

        def per_sample(x):
            return lib.func.jvp(lambda w_, b_: lib.func.grad(loss, argnums=(0, 1))(w_, b_, x), (w, b), (tw, tb))[1]
        return lib.func.vmap(per_sample)(lib.tensor(X))
    _check(run(rg), run(torch))


def test_vmap_of_hessian_of_a_linear_through_functional_call_matches_torch_func():
    def run(lib):
        loss = _lin(lib)
        return lib.func.vmap(lib.func.hessian(loss, argnums=1), in_dims=(None, None, 0))(
            lib.tensor(LIN_W), lib.tensor(LIN_B), lib.tensor(X))
    _check(run(rg), run(torch))


def _square(lib):
    class Square(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            return 2 * ctx.saved_tensors[0] * g

        @staticmethod
        def jvp(ctx, t):
            return 2 * ctx.saved_tensors[0] * t
    return Square


@pytest.mark.parametrize("order", ["vmap_jvp", "jvp_vmap"])
def test_a_custom_functions_jvp_under_vmap_matches_torch_func(order):
    def run(lib):
        f = lambda y: _square(lib).apply(y).sin()  # noqa: E731
        x, t = lib.tensor(X), lib.tensor(T)
        if order == "vmap_jvp":
            return lib.func.vmap(lambda a, v: lib.func.jvp(f, (a,), (v,))[1])(x, t)
        return lib.func.jvp(lib.func.vmap(f), (x,), (t,))[1]
    _check(run(rg), run(torch))


def test_vjp_under_jvp_returns_plain_tensors_with_torch_funcs_numbers():
    def run(lib):
        seen = []

        def g(x):
            out, vjp_fn, aux = lib.func.vjp(lambda y: ((y.sin() * y).sum(), y.exp()), x, has_aux=True)
            seen.extend([out, vjp_fn(lib.tensor(2.0))[0], aux])
            return seen[-1] * seen[-2]
        result = lib.func.jvp(g, (lib.tensor(X[0]),), (lib.tensor(V),))
        return seen, result
    ours, theirs = run(rg), run(torch)
    _check(tuple(ours[0]), tuple(theirs[0]))
    _check(ours[1], theirs[1])


def test_a_failed_composition_raises_torchs_error_and_leaves_the_transforms_working():
    def run(lib):
        with pytest.raises(RuntimeError) as info:
            lib.func.vmap(lambda x, v: lib.func.jvp(lib.func.grad(lambda y: y.exp()), (x,), (v,)))(
                lib.tensor(X), lib.tensor(T))
        return str(info.value).split(". ")[0]
    assert run(rg) == run(torch) == ("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                     "tensor with 1 dims")
    assert interposition.stack == () and levels() == []
    _check(rg.func.vmap(rg.func.hessian(_f(rg)))(rg.tensor(X)),
           torch.func.vmap(torch.func.hessian(_f(torch)))(torch.tensor(X)))
