"""Special functions: rg.special as torch.special, their errors, and the kernels' choice per device."""
from __future__ import annotations

import types

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops import special as special_ops

torch = pytest.importorskip("torch")

NAMES = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e",
         "log1p", "log_ndtr", "logit", "ndtr", "ndtri", "psi", "round", "sinc"]


@pytest.mark.parametrize("name", NAMES)
def test_special_functions_match_torch_special(name):
    x = np.array([0.05, 0.3, 0.5, 0.9])
    ours = getattr(rg.special, name)(rg.tensor(x))
    theirs = getattr(torch.special, name)(torch.tensor(x))
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["logsumexp", "softmax", "log_softmax"])
def test_special_reductions_match_torch_special(name):
    x = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, 1.0]])
    np.testing.assert_allclose(getattr(rg.special, name)(rg.tensor(x), 1).numpy(),
                               getattr(torch.special, name)(torch.tensor(x), 1).numpy(), rtol=1e-12)


def test_special_namespace_names_exist_in_torch_special():
    assert set(rg.special.__all__) <= set(dir(torch.special))


def test_polygamma_of_negative_order_raises_as_torch():
    with pytest.raises(RuntimeError) as theirs:
        torch.polygamma(-1, torch.tensor([1.]))
    with pytest.raises(RuntimeError) as ours:
        rg.polygamma(-1, rg.tensor([1.]))
    assert str(ours.value) == str(theirs.value).split("\n")[0]


def test_polygamma_method_takes_the_order():
    x = rg.tensor([1.5, 2.0])
    assert rg.equal(x.polygamma(2), rg.polygamma(2, x))


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "lgamma", "digamma", "i0", "sinc", "logit", "xlogy"])
def test_inplace_forms_write_into_self(name):
    x = np.array([0.2, 0.7])
    args = (2.0,) if name == "xlogy" else ()
    t = rg.tensor(x)
    expected = getattr(rg, name)(rg.tensor(x), *args)
    assert getattr(t, f"{name}_")(*args) is t
    np.testing.assert_allclose(t.numpy(), expected.numpy())


def test_inplace_on_an_integer_tensor_raises_as_torch():
    with pytest.raises(RuntimeError, match="^result type .* can't be cast to the desired output type"):
        torch.tensor([1, 2]).erf_()
    with pytest.raises(RuntimeError, match="^result type .* can't be cast to the desired output type"):
        rg.tensor([1, 2]).erf_()


def test_xlog1py_gradient_is_zero_where_input_is_zero_and_other_at_most_minus_one():
    x = rg.tensor([0., 0., 2.], requires_grad=True)
    t = torch.tensor([0., 0., 2.], requires_grad=True)
    rg.special.xlog1py(x, rg.tensor([-1., -2., 3.])).sum().backward()
    torch.special.xlog1py(t, torch.tensor([-1., -2., 3.])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_xlogy_gradient_is_zero_where_input_is_zero_and_other_not_positive():
    x = rg.tensor([0., 0., 2.], requires_grad=True)
    t = torch.tensor([0., 0., 2.], requires_grad=True)
    rg.xlogy(x, rg.tensor([0., -1., 3.])).sum().backward()
    torch.xlogy(t, torch.tensor([0., -1., 3.])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_kernels_are_scipy_on_numpy_and_decline_without_cupyx():
    import scipy.special
    assert special_ops._kernels(np) is scipy.special
    try:
        import cupyx.scipy.special  # noqa: F401
    except ImportError:
        fake = types.SimpleNamespace(__name__="fakearrays")
        with pytest.raises(RuntimeError, match="cupyx.scipy.special"):
            special_ops._kernels(fake)
    else:
        pytest.skip("cupyx is installed: the CUDA kernels are there")
