"""The gradients given to backward() and grad(): integer and bool ones, and batched ones (is_grads_batched)."""
import re

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

LIBS = [rg, torch]


def first_sentence(message):
    return re.split(r"(?<=\.)\s+(?=[A-Z])", str(message).split("\n")[0])[0]


def outcome(fn):
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return (type(e).__name__, first_sentence(e))
    if isinstance(result, tuple):
        return ("returned", [None if r is None else (r.dtype.__repr__().split(".")[-1], r.tolist()) for r in result])
    return ("returned", result)


def same_outcome(make):
    ours, theirs = outcome(lambda: make(rg)), outcome(lambda: make(torch))
    assert ours == theirs
    return ours


# -- integer and bool gradients --------------------------------------------------------------------------------
@pytest.mark.parametrize("values, dtype", [([1, 2], "int64"), ([1, 2], "int32"), ([True, False], "bool")])
def test_integer_gradient_is_cast_to_the_outputs_dtype(values, dtype):
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        g = lib.tensor(values, dtype=getattr(lib, dtype))
        (x * 3).backward(g)
        assert x.grad.dtype == lib.float32
        assert x.grad.tolist() == [3.0 * v for v in values]
        (gx,) = lib.autograd.grad(x * 3, x, g)
        assert gx.dtype == lib.float32 and gx.tolist() == [3.0 * v for v in values]


def test_integer_gradient_of_a_float64_scalar():
    def make(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        return lambda: lib.autograd.grad((x * x).sum(), x, lib.tensor(3))
    assert same_outcome(lambda lib: make(lib)()) == ("returned", [("float64", [6.0, 12.0])])


# -- is_grads_batched -----------------------------------------------------------------------------------------
def test_batched_grad_outputs_give_one_gradient_per_entry():
    def make(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return lib.autograd.grad(x * x, x, lib.eye(3), is_grads_batched=True)
    assert same_outcome(make) == ("returned", [("float32", [[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 6.0]])])


def test_batched_grad_of_a_scalar_and_of_several_outputs():
    def scalar(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return lib.autograd.grad((x * x).sum(), x, lib.tensor([1.0, 2.0]), is_grads_batched=True)

    def several(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return lib.autograd.grad([x * 2, (x * x).sum()], x, [lib.eye(3), lib.ones(3)], is_grads_batched=True)
    assert same_outcome(scalar)[0] == "returned"
    assert same_outcome(several)[0] == "returned"


def test_batched_grad_with_unused_inputs():
    def make(lib, **kwargs):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        z = lib.ones(2, requires_grad=True)
        return lib.autograd.grad(x * 2, [x, z], lib.eye(3), is_grads_batched=True, **kwargs)
    assert same_outcome(lambda lib: make(lib, allow_unused=True))[1][1] is None
    assert same_outcome(lambda lib: make(lib, materialize_grads=True))[1][1] == ("float32", [0.0, 0.0])
    assert same_outcome(make)[0] == "RuntimeError"


def test_batched_grad_casts_integer_grad_outputs():
    def make(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return lib.autograd.grad(x * 2, x, lib.eye(3, dtype=lib.int64), is_grads_batched=True)
    assert same_outcome(make)[1][0][0] == "float32"


def test_batched_grad_with_create_graph_is_differentiable():
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        g = lib.eye(3).requires_grad_()
        (r,) = lib.autograd.grad(x * x, x, g, is_grads_batched=True, create_graph=True)
        assert r.requires_grad
        (r * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        results.append((r.tolist(), x.grad.tolist(), g.grad.tolist()))
    assert results[0] == results[1]


def test_batched_grad_frees_the_graph_after_the_last_entry():
    def make(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp()
        lib.autograd.grad(y, x, lib.eye(3), is_grads_batched=True)
        return lib.autograd.grad(y, x, lib.eye(3), is_grads_batched=True)
    assert same_outcome(make)[0] == "RuntimeError"  # backward through the graph a second time


@pytest.mark.parametrize("case", ["wrong_shape", "no_batch_dim", "zero_dim", "empty_batch", "scalar_none",
                                  "unequal_batches", "none_for_output_without_grad"])
def test_batched_grad_errors_match_torch(case):
    def make(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        s = (x * x).sum()
        calls = {
            "wrong_shape": lambda: lib.autograd.grad(y, x, lib.ones(2, 4), is_grads_batched=True),
            "no_batch_dim": lambda: lib.autograd.grad(y, x, lib.ones(3), is_grads_batched=True),
            "zero_dim": lambda: lib.autograd.grad(s, x, lib.tensor(1.0), is_grads_batched=True),
            "empty_batch": lambda: lib.autograd.grad(y, x, lib.ones(0, 3), is_grads_batched=True),
            "scalar_none": lambda: lib.autograd.grad(s, x, None, is_grads_batched=True),
            "unequal_batches": lambda: lib.autograd.grad([y, s], x, [lib.eye(3), lib.ones(2)],
                                                         is_grads_batched=True),
            "none_for_output_without_grad": lambda: lib.autograd.grad([y, lib.ones(3)], x, [lib.eye(3), None],
                                                                      is_grads_batched=True),
        }
        return calls[case]()
    result = same_outcome(make)
    assert result[0] != "returned"


def test_batched_grad_shape_error_names_the_remaining_shape():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape("grad_output[0] has a shape of retrograd.Size([4]) and output[0] "
                                                     "has a shape of retrograd.Size([3])")):
        rg.autograd.grad(x * 2, x, rg.ones(2, 4), is_grads_batched=True)
    np.testing.assert_array_equal(rg.autograd.grad(x * 2, x, rg.ones(2, 3), is_grads_batched=True)[0].numpy(),
                                  np.full((2, 3), 2.0))


# -- what backward() and grad() take as their tensors and inputs ---------------------------------------------------
def _model_and_loss(lib):
    m = lib.nn.Linear(2, 1)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[0.5, -1.0]]))
        m.bias.fill_(0.25)
    x = lib.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    return m, x, (m(x) ** 2).sum()


@pytest.mark.parametrize("call", [
    lambda lib, m, x, loss: lib.autograd.grad(loss, m.parameters()),
    lambda lib, m, x, loss: lib.autograd.grad(iter([loss]), (p for p in [x, m.bias]),
                                              grad_outputs=iter([lib.tensor(2.0)])),
    lambda lib, m, x, loss: (lib.autograd.backward(iter([loss]), inputs=m.parameters()), m.weight.grad, x.grad)[1:],
    lambda lib, m, x, loss: (loss.backward(inputs=iter([x])), x.grad, m.weight.grad)[1:],
    lambda lib, m, x, loss: lib.autograd.grad(loss, 5),
    lambda lib, m, x, loss: lib.autograd.grad(loss, "ab"),
    lambda lib, m, x, loss: lib.autograd.backward(loss, inputs=iter([])),
    lambda lib, m, x, loss: lib.autograd.backward(5),
], ids=["grad over a generator of parameters", "grad over iterators", "backward over iterators",
        "Tensor.backward over an iterator", "grad of an int", "grad of a str", "backward over no inputs",
        "backward of an int"])
def test_any_iterable_of_tensors_is_taken_as_pytorchs(call):
    same_outcome(lambda lib: call(lib, *_model_and_loss(lib)))
