"""PyTorch's ``_foreach_*`` ops (Note [Foreach ops]): values, gradients, in-place forms and list checks, against
torch on the same numbers."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

A = [[0.5, 1.5, 2.0], [0.25, 3.0]]
B = [[1.0, 2.0, 0.5], [4.0, 0.75]]


def _leaves(lib, values):
    return [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]


def _run(lib, call):
    """``call(lib, a, b)`` on two lists of float64 leaves: the outputs, and the gradients of the sum of them all."""
    a, b = _leaves(lib, A), _leaves(lib, B)
    out = call(lib, a, b)
    sum(o.sum() for o in out).backward()
    return [o.detach().numpy() for o in out], [t.grad.numpy() if t.grad is not None else None for t in a + b]


def _same(call):
    ours, theirs = _run(rg, call), _run(torch, call)
    for x, y in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        if y is None:
            assert x is None
        else:
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


CALLS = {
    "exp": lambda lib, a, b: lib._foreach_exp(a),
    "sqrt": lambda lib, a, b: lib._foreach_sqrt(a),
    "sigmoid_neg": lambda lib, a, b: lib._foreach_neg(lib._foreach_sigmoid(a)),
    "add_list_alpha": lambda lib, a, b: lib._foreach_add(a, b, alpha=-2.0),
    "add_scalar": lambda lib, a, b: lib._foreach_add(a, 3.0),
    "sub_scalar_list": lambda lib, a, b: lib._foreach_sub(a, [1.0, -2.0]),
    "mul_list": lambda lib, a, b: lib._foreach_mul(a, b),
    "mul_0dim_tensor": lambda lib, a, b: lib._foreach_mul(a, lib.tensor(2.5, dtype=lib.float64)),
    "div_list": lambda lib, a, b: lib._foreach_div(a, b),
    "pow_scalar": lambda lib, a, b: lib._foreach_pow(a, 3.0),
    "pow_of_a_scalar": lambda lib, a, b: lib._foreach_pow(2.0, a),
    "maximum_list": lambda lib, a, b: lib._foreach_maximum(a, b),
    "clamp_min_scalar": lambda lib, a, b: lib._foreach_clamp_min(a, 1.0),
    "addcmul_scalar_list": lambda lib, a, b: lib._foreach_addcmul(a, b, a, [0.5, -1.0]),
    "addcdiv_value": lambda lib, a, b: lib._foreach_addcdiv(a, a, b, value=2.0),
    "lerp_scalar": lambda lib, a, b: lib._foreach_lerp(a, b, 0.25),
    "norm": lambda lib, a, b: lib._foreach_norm(a),
    "max": lambda lib, a, b: lib._foreach_max(b),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_foreach_op_values_and_gradients_match_torch(name):
    _same(CALLS[name])


def _inplace(lib, a, b):
    x = [t * 1.0 for t in a]
    assert lib._foreach_mul_(x, b) is x
    lib._foreach_add_(x, b, alpha=0.5)
    lib._foreach_addcmul_(x, a, b, value=0.25)
    lib._foreach_lerp_(x, b, 0.5)
    lib._foreach_clamp_max_(x, 3.0)
    lib._foreach_exp_(x)  # last: its backward reads its output
    return x


def test_inplace_foreach_ops_change_each_tensor_and_record_its_in_place_node_as_torch():
    _same(_inplace)
    names = []
    for lib in (rg, torch):
        x = [t * 1.0 for t in _leaves(lib, A)]
        lib._foreach_mul_(x, _leaves(lib, B))
        names.append([t.grad_fn.name() for t in x] + [t._version for t in x])
    assert names[0] == names[1] == ["MulBackward0", "MulBackward0", 1, 1]


def test_foreach_zero_and_copy_write_into_each_tensor():
    for lib in (rg, torch):
        x = [lib.ones(2), lib.ones(3)]
        lib._foreach_zero_(x)
        assert [t.tolist() for t in x] == [[0.0, 0.0], [0.0, 0.0, 0.0]]
        lib._foreach_copy_(x, [lib.full((2,), 2.0), lib.full((3,), 3.0)])
        assert [t.tolist() for t in x] == [[2.0, 2.0], [3.0, 3.0, 3.0]]


def test_inplace_foreach_op_on_a_leaf_that_requires_grad_raises_torchs_error():
    for lib in (rg, torch):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "):
            lib._foreach_exp_(_leaves(lib, A))


@pytest.mark.parametrize("call", [
    lambda lib: lib._foreach_add([], 1.0),
    lambda lib: lib._foreach_add([lib.ones(1), lib.ones(1)], [lib.ones(1)]),
    lambda lib: lib._foreach_add([lib.ones(1), lib.ones(1)], [1.0]),
    lambda lib: lib._foreach_mul([lib.ones(1)], lib.ones(2)),
], ids=["empty", "tensor_lists", "scalar_list", "not_0dim"])
def test_foreach_list_checks_raise_torchs_error(call):
    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    with pytest.raises(RuntimeError) as ours:
        call(rg)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def test_foreach_of_a_composite_passes_gradcheck():
    def f(x, y):
        return tuple(rg._foreach_addcdiv(rg._foreach_exp([x, y]), [x, y], [y, x], value=0.5))
    x = rg.tensor([0.3, 0.7], dtype=rg.float64, requires_grad=True)
    y = rg.tensor([1.2, 0.9], dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(f, (x, y))
