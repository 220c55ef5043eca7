"""Scenarios of PyTorch's test/autograd/test_functional.py (class TestAutogradFunctional): vjp, jvp, jacobian,
hessian, vhp and hvp, their argument checks, strict mode, create_graph and vectorize, each run with retrograd and
with torch on the same numbers. See test_pytorch_suite_basics.py for the method.

PyTorch runs each twice, on plain tensors and on a LoggingTensor subclass; only the plain ones are restated.
Each check of an error becomes an entry of the scenario's result (the error's type and first sentence), so that
one scenario compares all of a test's checks. retrograd's ``vectorize=True`` batches the basis vectors by vmap as
PyTorch's does, in reverse mode (one batched backward pass) and in forward mode (one forward pass with batched
tangents, Note [Batched tangents]), so the scenarios of both run here as they are.
"""
import warnings

import numpy as np
import pytest

from errors_like_torch import first_sentence
from .test_pytorch_suite_basics import same_in_both

torch = pytest.importorskip("torch")



def rand(lib, *shape, dtype=None, requires_grad=False, seed=0):
    """Uniform numbers in [0, 1), the same for both libraries (float64 unless ``dtype``)."""
    data = np.random.default_rng(seed + 31 * len(shape) + int(np.prod(shape))).random(shape)
    return lib.tensor(data.tolist(), dtype=dtype or lib.float64, requires_grad=requires_grad)


def randn(lib, *shape, seed=0):
    data = np.random.default_rng(seed + 7 * len(shape) + int(np.prod(shape))).standard_normal(shape)
    return lib.tensor(data.tolist(), dtype=lib.float64)


def F(lib):
    return lib.autograd.functional


def tried(call):
    """What ``call()`` gives: ("ok", its value), or the error's type name and first sentence."""
    try:
        return ("ok", call())
    except Exception as e:  # noqa: BLE001 - the point is to compare whatever is raised
        return (type(e).__name__, first_sentence(e))


def struct(value):
    """The nesting of tuples and the shapes of the tensors in ``value``."""
    if isinstance(value, tuple):
        return tuple(struct(v) for v in value)
    if isinstance(value, list):
        return ["list"] + [struct(v) for v in value]
    return ("tensor", tuple(value.shape)) if hasattr(value, "grad_fn") else value


def agree(a, b):
    """Whether ``a`` and ``b`` hold the same tensors to float64's tolerance of PyTorch's ``assertEqual`` (a tuple
    and a list count as the same sequence)."""
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(agree(x, y) for x, y in zip(a, b))
    return (tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype
            and np.allclose(np.asarray(a.detach().tolist()), np.asarray(b.detach().tolist()), rtol=1e-7, atol=1e-7))


def shapes(value):
    """``struct`` with lists as tuples: PyTorch's forward-mode jacobian gives lists where its reverse mode gives
    tuples."""
    if isinstance(value, (tuple, list)):
        return tuple(shapes(v) for v in value)
    return struct(value)


def has_fn(value):
    """Whether each tensor of ``value`` (nested tuples) has a grad_fn."""
    if isinstance(value, (tuple, list)):
        return tuple(has_fn(v) for v in value)
    return value.grad_fn is not None


def _narrow3(a):
    return 3 * a.narrow(0, 0, 3)


def _narrow3_with_str(a):
    return 3 * a.narrow(0, 0, 3), "bar"


def _detached(a):
    return a.detach()


def _unconnected(a):
    # a non-leaf that requires grad but is not connected to the input
    return a.long().float().requires_grad_().clone()


# -- vjp ---------------------------------------------------------------------------------------------------
def test_vjp_err_check():
    def scenario(lib):
        f = F(lib)
        inp, v = rand(lib, 4), lib.ones(3, dtype=lib.float64)
        return (tried(lambda: f.vjp(_narrow3, (inp, 2), v)), tried(lambda: f.vjp(_narrow3_with_str, inp, v)),
                tried(lambda: f.vjp(_narrow3, inp)),
                tried(lambda: f.vjp(_narrow3, inp, (lib.ones_like(inp), lib.ones_like(inp)))),
                tried(lambda: f.vjp(_narrow3, inp, v[:2])), struct(f.vjp(_narrow3, inp, v)[1]))
    same_in_both(scenario)


def test_vjp_err_check_strict():
    def scenario(lib):
        f = F(lib)
        inp, v = rand(lib, 4), rand(lib, 4, seed=1)
        out = [tried(lambda: f.vjp(_detached, inp, v, strict=True)), f.vjp(_detached, inp, v, strict=False)[1],
               tried(lambda: f.vjp(_unconnected, inp, v, strict=True)), f.vjp(_unconnected, inp, v, strict=False)[1]]
        inp.requires_grad_()
        out += [tried(lambda: f.vjp(lambda a: a.clone(), inp, v, create_graph=True, strict=True)),
                f.vjp(lambda a: a.clone(), inp, v, create_graph=True, strict=False)[1]]
        return out
    same_in_both(scenario)


def test_vjp_no_grad():
    def scenario(lib):
        f = F(lib)
        inputs, v = rand(lib, 4, 4), lib.ones(4, dtype=lib.float64)
        with lib.no_grad():
            first = f.vjp(lambda x: x.sum(dim=1), inputs, v)
        inputs.requires_grad_()
        v.requires_grad_()
        with lib.no_grad():
            second = f.vjp(lambda x: x.sum(dim=1), inputs, v, create_graph=True)
        return has_fn(first), first[1], has_fn(second), second[1]
    same_in_both(scenario)


def test_vjp_output():
    def scenario(lib):
        f = F(lib)
        res = f.vjp(lambda x: x.sum(dim=1), rand(lib, 4, 4), lib.ones(4, dtype=lib.float64))
        out = [struct(res), has_fn(res), res]
        inputs = (rand(lib, 2), rand(lib, 2, seed=1))
        res = f.vjp(lambda x, y: 2 * x + 3 * y, inputs, lib.ones(2, dtype=lib.float64))
        out += [struct(res), has_fn(res), res]
        v = (lib.tensor([1.0, 0.0], dtype=lib.float64), lib.tensor([1.0, 0.0], dtype=lib.float64))
        res = f.vjp(lambda x, y: (2 * x + 3 * y, x + y), inputs, v)
        return out + [struct(res), has_fn(res), res]
    same_in_both(scenario)


def test_vjp_scalar():
    def scenario(lib):
        f = F(lib)
        inputs = rand(lib, 4, 4)
        out = [struct(f.vjp(lambda x: x.sum(), inputs, lib.ones([], dtype=lib.float64))),
               struct(f.vjp(lambda x: x.sum(), inputs))]
        res = f.vjp(lambda x: x.unsqueeze(0).repeat(4), rand(lib), lib.ones(4, dtype=lib.float64))
        return out + [struct(res), res]
    same_in_both(scenario)


def _adder_mul(x, y):
    return 2 * x + 3 * y, x * y


def _create_graph_inputs(lib, api):
    """PyTorch's inputs of the create_graph checks: two leaves and two vectors, all requiring grad."""
    inputs = (rand(lib, 2, requires_grad=True), rand(lib, 2, requires_grad=True, seed=1))
    v = (lib.tensor([1.0, 0.0], dtype=lib.float64, requires_grad=True),
         lib.tensor([1.0, 0.0], dtype=lib.float64, requires_grad=True))
    return inputs, v


def _nested(lib, api, inner):
    """PyTorch's function of the create_graph checks that differentiates through ``api`` once more."""
    def foo(*args):
        x, y = args[:2]
        v = args[2:]
        x = x.cos()
        val, grad = getattr(F(lib), api)(inner, (x, y), v, create_graph=True)
        return val[0].exp() + val[1].exp() + grad[0].exp() + grad[1].exp() + x.exp() + y.exp()
    return foo


@pytest.mark.parametrize("api", ["vjp", "jvp"])
def test_vjp_and_jvp_create_graph(api):
    def scenario(lib):
        f = F(lib)
        fn = getattr(f, api)
        gc, ggc = lib.autograd.gradcheck, lib.autograd.gradgradcheck
        inputs = rand(lib, 2, 2, requires_grad=True)
        v = lib.ones(2 if api == "vjp" else (2, 2), dtype=lib.float64, requires_grad=True)
        res = fn(lambda x: x.sum(dim=1), inputs, v, create_graph=True)
        out = [struct(res), has_fn(res), res]
        # PyTorch's vjp check passes ``inputs`` (not ``inp``) to the inner call; so does this one.
        first = inputs if api == "vjp" else None
        call = lambda inp, v: fn(lambda x: x.sum(dim=1), first if first is not None else inp, v,  # noqa: E731
                                 create_graph=True)
        out += [gc(call, (inputs, v)), ggc(call, (inputs, v))]
        inputs, v = _create_graph_inputs(lib, api)
        call = lambda *args: fn(_adder_mul, args[:2], args[2:], create_graph=True)[1]  # noqa: E731
        out += [gc(call, inputs + v), ggc(call, inputs + v)]
        foo = _nested(lib, api, _adder_mul)
        return out + [gc(foo, inputs + v), ggc(foo, inputs + v)]
    same_in_both(scenario)


# -- jvp ---------------------------------------------------------------------------------------------------
def test_jvp_err_check():
    def scenario(lib):
        f = F(lib)
        inp, v = rand(lib, 4), rand(lib, 4, seed=1)
        return (tried(lambda: f.jvp(_narrow3, (inp, 2), v)), tried(lambda: f.jvp(_narrow3_with_str, inp, v)),
                tried(lambda: f.jvp(_narrow3, inp)), tried(lambda: f.jvp(_narrow3, inp, (v, v))),
                tried(lambda: f.jvp(_narrow3, inp, v[:2])), struct(f.jvp(_narrow3, inp, v)[1]))
    same_in_both(scenario)


def test_jvp_err_check_strict():
    def scenario(lib):
        f = F(lib)
        inp, v = rand(lib, 4), rand(lib, 4, seed=1)
        out = [tried(lambda: f.jvp(_detached, inp, v, strict=True)), f.jvp(_detached, inp, v, strict=False),
               tried(lambda: f.jvp(_unconnected, inp, v, strict=True)), f.jvp(_unconnected, inp, v, strict=False)]
        inp.requires_grad_()
        out += [tried(lambda: f.jvp(lambda a: a.clone(), inp, v, create_graph=True, strict=True)),
                f.jvp(lambda a: a.clone(), inp, v, create_graph=True, strict=False)[1]]
        return out
    same_in_both(scenario)


def test_jvp_no_grad():
    def scenario(lib):
        f = F(lib)
        inputs, v = rand(lib, 4, 4), lib.ones(4, 4, dtype=lib.float64)
        with lib.no_grad():
            first = f.jvp(lambda x: x.sum(dim=1), inputs, v)
        inputs.requires_grad_()
        v.requires_grad_()
        with lib.no_grad():
            second = f.jvp(lambda x: x.sum(dim=1), inputs, v, create_graph=True)
        return has_fn(first), first[1], has_fn(second), second[1]
    same_in_both(scenario)


def test_jvp_output():
    def scenario(lib):
        f = F(lib)
        res = f.jvp(lambda x: x.sum(dim=1), rand(lib, 4, 4), lib.ones(4, 4, dtype=lib.float64))
        out = [struct(res), has_fn(res), res]
        inputs = (rand(lib, 2), rand(lib, 2, seed=1))
        res = f.jvp(lambda x, y: 2 * x + 3 * y, inputs, (lib.ones(2, dtype=lib.float64),) * 2)
        out += [struct(res), has_fn(res), res]
        v = (lib.tensor([1.0, 0.0], dtype=lib.float64), lib.tensor([1.0, 0.0], dtype=lib.float64))
        res = f.jvp(lambda x, y: (2 * x + 3 * y, x + y), inputs, v)
        return out + [struct(res), has_fn(res), res]
    same_in_both(scenario)


def test_jvp_scalar():
    def scenario(lib):
        f = F(lib)
        out = [struct(f.jvp(lambda x: x.sum(), rand(lib, 4, 4), lib.ones(4, 4, dtype=lib.float64)))]
        expander = lambda x: x.unsqueeze(0).repeat(4)  # noqa: E731
        inputs = rand(lib)
        return out + [f.jvp(expander, inputs, lib.ones([], dtype=lib.float64)), f.jvp(expander, inputs)]
    same_in_both(scenario)


# -- jacobian ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("api", ["jacobian", "hessian"])
def test_vectorize_raises_no_warnings(api):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(F(lib), api)(lambda a: (a ** 2).sum(), randn(lib, 3), vectorize=True)
        return len(caught)
    assert same_in_both(scenario) == ("ok", 0)


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_err_check(vectorize):
    def scenario(lib):
        f = F(lib)
        inp = rand(lib, 4)
        out = [tried(lambda: f.jacobian(_narrow3, (inp, 2), vectorize=vectorize)),
               tried(lambda: f.jacobian(_narrow3_with_str, inp, vectorize=vectorize))]
        res = f.jacobian(_narrow3, inp, vectorize=vectorize)
        inp = (rand(lib, 4), rand(lib, 5))
        res2 = f.jacobian(lambda a, b: (b, 3 * a.narrow(0, 0, 3)), inp, vectorize=vectorize)
        return out + [struct(res), res, struct(res2), res2]
    same_in_both(scenario)


def test_jacobian_err_check_strict():
    def scenario(lib):
        f = F(lib)
        inp = rand(lib, 4)
        out = [tried(lambda: f.jacobian(_detached, inp, strict=True)), f.jacobian(_detached, inp, strict=False),
               tried(lambda: f.jacobian(_unconnected, inp, strict=True)), f.jacobian(_unconnected, inp, strict=False)]
        inp.requires_grad_()
        return out + [tried(lambda: f.jacobian(lambda a: a.clone(), inp, create_graph=True, strict=True)),
                      f.jacobian(lambda a: a.clone(), inp, create_graph=True, strict=False)]
    same_in_both(scenario)


@pytest.mark.parametrize("api", ["jacobian", "hessian"])
def test_strict_and_vectorize_are_not_supported_together(api):
    def scenario(lib):
        getattr(F(lib), api)(lambda x: (x ** 3).sum(), rand(lib, 4), strict=True, vectorize=True)
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError" and "not supported together" in result[1]


def test_jacobian_no_grad():
    def scenario(lib):
        f = F(lib)
        inputs = rand(lib, 4, 4)
        exp_reducer = lambda x: x.exp().sum(dim=1)  # noqa: E731
        with lib.no_grad():
            first = f.jacobian(exp_reducer, inputs)
        with lib.no_grad():
            second = f.jacobian(exp_reducer, inputs, create_graph=True)
        return has_fn(first), first, has_fn(second), second
    same_in_both(scenario)


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_output(vectorize):
    def scenario(lib):
        f = F(lib)
        res = f.jacobian(lambda x: x.exp().sum(dim=1), rand(lib, 4, 4), vectorize=vectorize)
        out = [struct(res), has_fn(res), res]
        res = f.jacobian(lambda x: x.clone(), rand(lib, 4), vectorize=vectorize)
        out += [struct(res), has_fn(res), res]
        res = f.jacobian(lambda x, y: (x + y.exp()).sum(dim=1), (rand(lib, 4, 4), rand(lib, 4, 4, seed=1)),
                         vectorize=vectorize)
        return out + [struct(res), has_fn(res), res]
    same_in_both(scenario)


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_scalar(vectorize):
    def scenario(lib):
        f = F(lib)
        return (struct(f.jacobian(lambda x: x.sum(), rand(lib, 4, 4), vectorize=vectorize)),
                f.jacobian(lambda x: x.unsqueeze(0).repeat(4), rand(lib), vectorize=vectorize))
    same_in_both(scenario)


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_create_graph(vectorize):
    def scenario(lib):
        f = F(lib)
        gc, ggc = lib.autograd.gradcheck, lib.autograd.gradgradcheck
        exp_reducer = lambda x: x.exp().sum(dim=1)  # noqa: E731
        inputs = rand(lib, 4, 4, requires_grad=True)
        res = f.jacobian(exp_reducer, inputs, create_graph=True, vectorize=vectorize)
        out = [struct(res), has_fn(res)]
        call = lambda inp: f.jacobian(exp_reducer, inp, create_graph=True, vectorize=vectorize)  # noqa: E731
        out += [gc(call, inputs), ggc(call, inputs)]
        add_exp_reducer = lambda x, y: (x + y).exp().sum(dim=1)  # noqa: E731
        inputs = (rand(lib, 4, 4, requires_grad=True), rand(lib, 4, 4, requires_grad=True, seed=1))
        res = f.jacobian(add_exp_reducer, inputs, create_graph=True, vectorize=vectorize)
        out += [struct(res), has_fn(res)]
        call = lambda *inp: f.jacobian(add_exp_reducer, inp, create_graph=True, vectorize=vectorize)  # noqa: E731
        out += [gc(call, inputs), ggc(call, inputs)]

        def foo(x, y):
            x = x.cos()
            val, jac = f.jacobian(add_exp_reducer, (x, y), create_graph=True, vectorize=vectorize)
            res = val[0].exp().sum() + val[1].exp().sum() + jac[0].exp().sum()
            return res + jac[1].exp().sum() + x.exp().sum() + y.exp().sum()
        return out + [gc(foo, inputs), ggc(foo, inputs)]
    same_in_both(scenario)


def _jacobian_vectorize_cases(lib):
    return {
        "simple": (lambda x: 3 * x ** 2, randn(lib, 2, 3, 5)),
        "multi_input": (lambda x, y: (x.cos() * x) @ y.sin(), (randn(lib, 2, 3), randn(lib, 3, 5, seed=1))),
        "multi_input_multi_output": (lambda x, y: ((x * x) @ y, x @ (x.sum(1) * y), y.sum()),
                                     (randn(lib, 5, 3), randn(lib, 3, 5, seed=1))),
        "unrelated_outputs": (lambda x, y: (x, y, x, y), (randn(lib, 2), randn(lib, 3))),
        "zero_dim_output": (lambda x, y: (x.sum(), y.sum(), x * y), (randn(lib, 3), randn(lib, 3, seed=1))),
        "zero_dim_input": (lambda x: lib.stack([x, x, x]), randn(lib)),
        "zero_dim_mixed": (lambda x, y: (y.sum(), x * y), (randn(lib), randn(lib, 1))),
        "different_dtype": (lambda x, y: ((x * y).float(), (x * y).double()), (randn(lib, 3), randn(lib, 3, seed=1))),
    }


_JACOBIAN_CASES = ["different_dtype", "multi_input", "multi_input_multi_output", "simple", "unrelated_outputs",
                   "zero_dim_input", "zero_dim_mixed", "zero_dim_output"]


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
@pytest.mark.parametrize("case", _JACOBIAN_CASES)
def test_jacobian_vectorize_correctness(case, strategy):
    if strategy == "forward-mode" and case == "different_dtype":
        pytest.skip("PyTorch does not compare it: a forward-mode Jacobian has the outputs' dtypes")

    def scenario(lib):
        f, inputs = _jacobian_vectorize_cases(lib)[case]
        expected = F(lib).jacobian(f, inputs, vectorize=False)
        result = F(lib).jacobian(f, inputs, strategy=strategy, vectorize=True)
        return shapes(result), agree(result, expected)
    assert same_in_both(scenario)[1][1] is True


def _hessian_vectorize_cases(lib):
    return {
        "simple": (lambda x: (3 * x ** 2).sum(), randn(lib, 2, 3, 5)),
        "multi_input": (lambda x, y, z: ((x.relu() * x) @ y.sin() @ z).sum(),
                        (randn(lib, 2, 3), randn(lib, 3, 5, seed=1), randn(lib, 5, 5, seed=2))),
        "output_unrelated_to_one_input": (lambda x, y: (x ** 2).sum(), (randn(lib, 2), randn(lib, 3))),
        "output_unrelated_to_all_inputs": (lambda x, y: lib.ones([], dtype=lib.float64),
                                           (randn(lib, 2), randn(lib, 3))),
    }


_HESSIAN_CASES = ["multi_input", "output_unrelated_to_all_inputs", "output_unrelated_to_one_input", "simple"]


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
@pytest.mark.parametrize("case", _HESSIAN_CASES)
def test_hessian_vectorize_correctness(case, strategy):
    def scenario(lib):
        f, inputs = _hessian_vectorize_cases(lib)[case]
        expected = F(lib).hessian(f, inputs, vectorize=False)
        result = F(lib).hessian(f, inputs, outer_jacobian_strategy=strategy, vectorize=True)
        return shapes(result), agree(result, expected)
    assert same_in_both(scenario)[1][1] is True


# -- hessian -----------------------------------------------------------------------------------------------
def _exp_narrow3(a):
    return 3 * a.narrow(0, 0, 3).exp().sum()


def _narrow3_pair(a):
    return 3 * a.narrow(0, 0, 3), 3 * a.narrow(0, 0, 3)


def _product_of_narrowed(a, b):
    return (3 * b.narrow(0, 0, 3) * a.narrow(0, 0, 3)).sum()


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_err_check(vectorize):
    def scenario(lib):
        f = F(lib)
        inp = rand(lib, 4)
        out = [tried(lambda: f.hessian(g, a, vectorize=vectorize))
               for g, a in ((_exp_narrow3, (inp, 2)), (_narrow3_with_str, inp), (_narrow3, inp), (_narrow3_pair, inp))]
        res = f.hessian(_exp_narrow3, inp, vectorize=vectorize)
        res2 = f.hessian(_product_of_narrowed, (rand(lib, 4), rand(lib, 5)), vectorize=vectorize)
        return out + [struct(res), res, struct(res2), res2]
    same_in_both(scenario)


def _strict_scalar_cases():
    return {"detached": lambda a: a.detach().sum(), "unconnected": lambda a: _unconnected(a).sum(),
            "linear": lambda a: (3 * a).sum()}  # the last one's Jacobian is independent of the input


def test_hessian_err_check_strict():
    def scenario(lib):
        f = F(lib)
        inp = rand(lib, 4)
        out = []
        for g in _strict_scalar_cases().values():
            out += [tried(lambda: f.hessian(g, inp, strict=True)), f.hessian(g, inp, strict=False)]  # noqa: B023
        return out
    same_in_both(scenario)


def test_hessian_no_grad():
    def scenario(lib):
        f = F(lib)
        inputs = rand(lib, 2, 2)
        with lib.no_grad():
            first = f.hessian(lambda x: x.pow(3).sum(), inputs)
        with lib.no_grad():
            second = f.hessian(lambda x: x.pow(3).sum(), inputs, create_graph=True)
        return has_fn(first), first, has_fn(second), second
    same_in_both(scenario)


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_output(vectorize):
    def scenario(lib):
        f = F(lib)
        res = f.hessian(lambda x: x.pow(3).sum(), rand(lib, 2, 2), vectorize=vectorize)
        res2 = f.hessian(lambda x, y: (x + y).pow(3).sum(), (rand(lib, 2, 2), rand(lib, 2, 2, seed=1)),
                         vectorize=vectorize)
        return struct(res), has_fn(res), res, struct(res2), has_fn(res2), res2
    same_in_both(scenario)


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_scalar(vectorize):
    def scenario(lib):
        f = F(lib)
        return (struct(f.hessian(lambda x: x.sum(), rand(lib, 4, 4), vectorize=vectorize)),
                f.hessian(lambda x: x.sum(), rand(lib), vectorize=vectorize),
                struct(f.hessian(lambda x: x.sum().view(1, 1, 1), rand(lib, 4, 4), vectorize=vectorize)))
    same_in_both(scenario)


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_create_graph(vectorize):
    def scenario(lib):
        f = F(lib)
        gc, ggc = lib.autograd.gradcheck, lib.autograd.gradgradcheck
        pow_reducer = lambda x: x.pow(3).sum()  # noqa: E731
        inputs = rand(lib, 2, 2, requires_grad=True)
        res = f.hessian(pow_reducer, inputs, create_graph=True, vectorize=vectorize)
        call = lambda inp: f.hessian(pow_reducer, inp, create_graph=True, vectorize=vectorize)  # noqa: E731
        out = [struct(res), has_fn(res), gc(call, inputs), ggc(call, inputs)]
        add_pow_reducer = lambda x, y: (x + y).pow(3).sum()  # noqa: E731
        inputs = (rand(lib, 2, 2, requires_grad=True), rand(lib, 2, 2, requires_grad=True, seed=1))
        res = f.hessian(add_pow_reducer, inputs, create_graph=True, vectorize=vectorize)
        out += [struct(res), has_fn(res)]

        def flat(*inp):
            return tuple(e for row in f.hessian(add_pow_reducer, inp, create_graph=True, vectorize=vectorize)
                         for e in row)
        out += [gc(flat, inputs), ggc(flat, inputs)]

        def foo(x, y):
            x = x.cos()
            val, hess = f.hessian(add_pow_reducer, (x, y), create_graph=True, vectorize=vectorize)
            res = val[0].cos().sum() + val[1].cos().sum() + hess[0].cos().sum()
            return res + hess[1].cos().sum() + x.cos().sum() + y.cos().sum()
        return out + [gc(foo, inputs), ggc(foo, inputs)]
    same_in_both(scenario)


# -- vhp and hvp -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_and_hvp_err_check(api):
    def scenario(lib):
        fn = getattr(F(lib), api)
        inp, v = rand(lib, 4), rand(lib, 4, seed=1)
        out = [tried(lambda: fn(_exp_narrow3, (inp, 2), v)), tried(lambda: fn(_narrow3_with_str, inp, v)),
               tried(lambda: fn(_narrow3, inp, v)), tried(lambda: fn(_exp_narrow3, inp, rand(lib, 5))),
               tried(lambda: fn(_exp_narrow3, inp, (v, 2)))]
        res = fn(_exp_narrow3, inp, v)
        res2 = fn(_product_of_narrowed, (rand(lib, 4), rand(lib, 5)), (rand(lib, 4, seed=1), rand(lib, 5, seed=1)))
        return out + [struct(res), res, struct(res2), res2]
    same_in_both(scenario)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_and_hvp_err_check_strict(api):
    def scenario(lib):
        fn = getattr(F(lib), api)
        inp, v = rand(lib, 4), rand(lib, 4, seed=1)
        out = []
        for g in _strict_scalar_cases().values():
            out += [tried(lambda: fn(g, inp, v, strict=True)), fn(g, inp, v, strict=False)[1]]  # noqa: B023
        return out
    same_in_both(scenario)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_and_hvp_no_grad(api):
    def scenario(lib):
        fn = getattr(F(lib), api)
        inputs, v = rand(lib, 4, 4), lib.ones(4, 4, dtype=lib.float64)
        with lib.no_grad():
            first = fn(lambda x: x.exp().sum(), inputs, v)
        with lib.no_grad():
            second = fn(lambda x: x.exp().sum(), inputs, v, create_graph=True)
        return has_fn(first), first, has_fn(second), second
    same_in_both(scenario)


def _exp_of_sum(a, b):
    return (a + 3 * b.narrow(0, 0, 3)).exp().sum()


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_and_hvp_output(api):
    def scenario(lib):
        fn = getattr(F(lib), api)
        res = fn(_exp_narrow3, rand(lib, 4, 4), lib.ones(4, 4, dtype=lib.float64))
        res2 = fn(_exp_of_sum, (rand(lib, 3), rand(lib, 4)), (lib.ones(3, dtype=lib.float64),
                                                            lib.ones(4, dtype=lib.float64)))
        return struct(res), has_fn(res), res, struct(res2), has_fn(res2), res2
    same_in_both(scenario)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_and_hvp_scalar(api):
    def scenario(lib):
        fn = getattr(F(lib), api)
        reducer = (lambda x: x.sum()) if api == "vhp" else (lambda x: x.exp().sum())
        bad_reducer = (lambda x: x.sum().view(1, 1, 1)) if api == "vhp" else (lambda x: x.exp().sum().view(1, 1, 1))
        out = [fn(reducer, rand(lib, 4, 4), lib.ones(4, 4, dtype=lib.float64))]
        inputs = rand(lib)
        out += [fn(reducer, inputs, rand(lib, seed=1)), fn(reducer, inputs)]
        return out + [fn(bad_reducer, rand(lib, 4, 4), rand(lib, 4, 4, seed=1))]
    same_in_both(scenario)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_and_hvp_create_graph(api):
    def scenario(lib):
        fn = getattr(F(lib), api)
        gc, ggc = lib.autograd.gradcheck, lib.autograd.gradgradcheck
        inputs = rand(lib, 4, 4, requires_grad=True)
        v = lib.ones(4, 4, dtype=lib.float64, requires_grad=True)
        res = fn(_exp_narrow3, inputs, v, create_graph=True)
        call = lambda inp, v: fn(_exp_narrow3, inp, v, create_graph=True)  # noqa: E731
        out = [struct(res), has_fn(res), gc(call, (inputs, v)), ggc(call, (inputs, v))]
        inputs = (rand(lib, 3, requires_grad=True), rand(lib, 4, requires_grad=True))
        v = (lib.ones(3, dtype=lib.float64, requires_grad=True), lib.ones(4, dtype=lib.float64, requires_grad=True))
        res = fn(_exp_of_sum, inputs, v, create_graph=True)
        out += [struct(res), has_fn(res)]
        call = lambda *args: fn(_exp_of_sum, args[:2], args[2:], create_graph=True)[1]  # noqa: E731
        out += [gc(call, inputs + v), ggc(call, inputs + v)]

        def foo(*args):
            x, y = args[:2]
            x = x.cos()
            val, grad = fn(_exp_of_sum, (x, y), args[2:], create_graph=True)
            return val.cos() + grad[0].cos().sum() + grad[1].cos() + x.cos().sum() + y.cos()
        return out + [gc(foo, inputs + v), ggc(foo, inputs + v)]
    same_in_both(scenario)


# -- the products against the full matrices ----------------------------------------------------------------
def test_jacobian_match_vjp_jvp():
    def scenario(lib):
        f = F(lib)
        foo = lambda x: x ** 3 + x.sum()  # noqa: E731
        inputs, v = rand(lib, 4), rand(lib, 4, seed=1)
        jac = f.jacobian(foo, inputs)
        return (f.jvp(foo, inputs, v)[1], lib.mm(jac, v.unsqueeze(1)).squeeze(1),
                f.vjp(foo, inputs, v)[1], lib.mm(v.unsqueeze(0), jac).squeeze(0))
    out = same_in_both(scenario)[1]
    assert out[0] == out[1] and out[2] == out[3]


def test_hessian_match_vhp_hvp():
    def scenario(lib):
        f = F(lib)
        inputs, v = rand(lib, 4), rand(lib, 4, seed=1)
        hes = f.hessian(_exp_narrow3, inputs)
        return (f.hvp(_exp_narrow3, inputs, v)[1], lib.mm(hes, v.unsqueeze(1)).squeeze(1),
                f.vhp(_exp_narrow3, inputs, v)[1], lib.mm(v.unsqueeze(0), hes).squeeze(0))
    out = same_in_both(scenario)[1]
    assert out[0] == out[1] and out[2] == out[3]
