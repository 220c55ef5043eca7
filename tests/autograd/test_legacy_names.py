"""The old names PyTorch keeps: autograd.Variable, Tensor.data, backward(grad_variables=...)."""
import re
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import Variable

torch = pytest.importorskip("torch")

LIBS = [rg, torch]


def first_sentence(message):
    return re.split(r"(?<=\.)\s+(?=[A-Z])", str(message).split("\n")[0])[0]


def outcome(fn):
    try:
        return ("returned", fn())
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return (type(e).__name__, first_sentence(e))


# -- Variable -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("lib", LIBS, ids=["retrograd", "torch"])
def test_variable_returns_a_detached_tensor_sharing_data_and_version(lib):
    x = lib.ones(2)
    v = lib.autograd.Variable(x)
    assert type(v) is lib.Tensor and v is not x
    x.add_(1)
    assert v._version == x._version == 1
    assert v.tolist() == [2.0, 2.0]
    assert not v.requires_grad and v.is_leaf


@pytest.mark.parametrize("lib", LIBS, ids=["retrograd", "torch"])
def test_variable_of_a_non_leaf_is_a_leaf(lib):
    y = lib.ones(2, requires_grad=True) * 2
    v = lib.autograd.Variable(y)
    assert v.grad_fn is None and not v.requires_grad
    w = lib.autograd.Variable(y, requires_grad=True)
    assert w.is_leaf and w.requires_grad
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("lib", LIBS, ids=["retrograd", "torch"])
def test_every_tensor_is_a_variable(lib):
    Var = lib.autograd.Variable
    assert isinstance(lib.ones(1), Var) and isinstance(lib.ones(1, requires_grad=True) * 2, Var)
    assert not isinstance(3, Var) and not isinstance(np.ones(1), Var)


def test_variable_without_data_is_empty():
    ours, theirs = Variable(), torch.autograd.Variable()
    assert tuple(ours.shape) == tuple(theirs.shape) == (0,)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")


def test_variable_errors_match_torch():
    cases = [lambda lib: lib.autograd.Variable([1, 2]),
             lambda lib: lib.autograd.Variable(lib.tensor([1, 2]), requires_grad=True),
             lambda lib: lib.autograd.Variable(lib.ones(1), _grad_fn=3)]
    for make in cases:
        ours, theirs = outcome(lambda: make(rg)), outcome(lambda: make(torch))
        assert ours[0] == theirs[0] != "returned"
        assert ours[1] == theirs[1]


def test_variable_volatile_warns_and_has_no_effect():
    for lib in LIBS:
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            v = lib.autograd.Variable(lib.ones(1), volatile=True)
        assert not v.requires_grad


def test_variable_execution_engine_queues_callbacks():
    for lib in LIBS:
        calls = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, grad):
                lib.autograd.Variable._execution_engine.queue_callback(lambda: calls.append("done"))
                return grad
        Probe.apply(lib.ones(1, requires_grad=True)).sum().backward()
        assert calls == ["done"]
    ours = outcome(lambda: Variable._execution_engine.queue_callback(lambda: None))
    theirs = outcome(lambda: torch.autograd.Variable._execution_engine.queue_callback(lambda: None))
    assert ours == theirs and ours[0] == "RuntimeError"


# -- Tensor.data ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lib", LIBS, ids=["retrograd", "torch"])
def test_data_shares_memory_but_not_the_version_counter(lib):
    x = lib.ones(3, requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d.add_(1)
    assert x.tolist() == [2.0, 2.0, 2.0]
    assert (d._version, x._version) == (1, 0)


@pytest.mark.parametrize("lib", LIBS, ids=["retrograd", "torch"])
def test_changing_data_in_place_is_invisible_to_autograd(lib):
    w = lib.ones(2, requires_grad=True)
    z = w.sin()  # saves w
    w.data.add_(1)  # no version bump: backward uses the changed values without complaint
    z.sum().backward()
    np.testing.assert_allclose(w.grad.tolist(), np.cos([2.0, 2.0]), rtol=1e-6)


@pytest.mark.parametrize("lib", LIBS, ids=["retrograd", "torch"])
def test_assigning_data_replaces_the_values_and_keeps_the_autograd_fields(lib):
    x = lib.ones(3, requires_grad=True)
    y = lib.zeros(2, dtype=lib.float64)
    x.data = y
    assert x.dtype == lib.float64 and tuple(x.shape) == (2,) and x.requires_grad and x._version == 0
    y.add_(1)
    assert x.tolist() == [1.0, 1.0]  # shares y's memory
    (x * 2).sum().backward()
    assert x.grad.dtype == lib.float64 and x.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("lib", LIBS, ids=["retrograd", "torch"])
def test_assigning_data_of_a_non_leaf_keeps_its_grad_fn(lib):
    a = lib.ones(2, requires_grad=True)
    b = a * 2
    b.data = lib.zeros(2)
    assert b.tolist() == [0.0, 0.0] and type(b.grad_fn).__name__ == "MulBackward0"
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]


def test_assigning_data_errors_match_torch():
    def not_a_tensor(lib):
        x = lib.ones(3)
        x.data = 5

    def integer_data_for_a_tensor_that_requires_grad(lib):
        x = lib.ones(3, requires_grad=True)
        x.data = lib.tensor([1, 2])

    for make in (not_a_tensor, integer_data_for_a_tensor_that_requires_grad):
        ours, theirs = outcome(lambda: make(rg)), outcome(lambda: make(torch))
        assert ours == theirs and ours[0] != "returned"
    for lib in LIBS:  # without requires_grad any dtype goes
        x = lib.ones(3)
        x.data = lib.tensor([1, 2])
        assert x.tolist() == [1, 2]


# -- backward(grad_variables=...) ----------------------------------------------------------------------------
def test_backward_grad_variables_is_grad_tensors():
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.autograd.backward(x * 2, grad_variables=lib.tensor([1.0, 3.0]))
        assert x.grad.tolist() == [2.0, 6.0]


def test_backward_grad_variables_and_grad_tensors_together_raise():
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="and .grad_variables. \\(deprecated\\) arguments both passed to"):
                lib.autograd.backward(x * 2, lib.ones(2), grad_variables=lib.ones(2))
