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


# -- one node per call (Note [Foreach ops]) -------------------------------------------------------
C = [[0.7, 0.2, 1.1], [1.3, 0.9]]
_SAVED = ("self", "other", "result", "scalar", "scalars", "exponent", "ord", "alpha", "value", "weight")
# One call of each overload that records a node, on three lists of float64 leaves a, b, c.
OVERLOADS = {
    **{f"{op}_{kind}": (lambda op, arg: lambda lib, a, b, c: getattr(lib, f"_foreach_{op}")(a, arg(lib, b)))(op, arg)
       for op in ("mul", "div", "clamp_min", "clamp_max", "maximum", "minimum", "pow", "add", "sub")
       for kind, arg in (("scalar", lambda lib, b: 1.2), ("scalar_list", lambda lib, b: [1.2, 0.6]),
                         ("list", lambda lib, b: b))},
    **{f"{op}_0dim_tensor": (lambda op: lambda lib, a, b, c: getattr(lib, f"_foreach_{op}")(
        a, lib.tensor(1.7, dtype=lib.float64, requires_grad=False)))(op) for op in ("mul", "div", "add")},
    "add_0dim_tensor_alpha": lambda lib, a, b, c: lib._foreach_add(a, lib.tensor(1.7, dtype=lib.float64), alpha=2),
    "sub_list_alpha": lambda lib, a, b, c: lib._foreach_sub(a, b, alpha=3),
    "pow_of_a_scalar": lambda lib, a, b, c: lib._foreach_pow(2.0, a),
    "addcmul_scalar": lambda lib, a, b, c: lib._foreach_addcmul(a, b, c, 0.5),
    "addcmul_scalar_list": lambda lib, a, b, c: lib._foreach_addcmul(a, b, c, [0.5, -2.0]),
    "addcdiv_scalar": lambda lib, a, b, c: lib._foreach_addcdiv(a, b, c, 0.5),
    "addcdiv_scalar_list": lambda lib, a, b, c: lib._foreach_addcdiv(a, b, c, [0.5, -2.0]),
    "lerp_scalar": lambda lib, a, b, c: lib._foreach_lerp(a, b, 0.3),
    "lerp_scalar_list": lambda lib, a, b, c: lib._foreach_lerp(a, b, [0.3, 0.8]),
    "lerp_list": lambda lib, a, b, c: lib._foreach_lerp(a, b, c),
    "norm": lambda lib, a, b, c: lib._foreach_norm(a),
    "norm_3": lambda lib, a, b, c: lib._foreach_norm(a, 3.0),
    "max": lambda lib, a, b, c: lib._foreach_max(a),
    "clone": lambda lib, a, b, c: lib._foreach_clone(a),
    **{name: (lambda name: lambda lib, a, b, c: getattr(lib, f"_foreach_{name}")(a))(name)
       for name in ("abs", "exp", "log1p", "sigmoid", "sqrt", "tanh", "reciprocal", "sign")},
}


def _node_of(lib, call):
    """What a call's outputs show of their node, and the gradients of (a sum of squares of) all but the second
    output, first and second order (create_graph), of three lists of leaves."""
    a, b, c = _leaves(lib, A), _leaves(lib, B), _leaves(lib, C)
    out = call(lib, a, b, c)
    node = out[0].grad_fn
    saved = {}
    for name in _SAVED:
        try:
            value = getattr(node, f"_saved_{name}")
        except AttributeError:
            continue
        saved[name] = [v.tolist() for v in value] if isinstance(value, tuple) and value and hasattr(
            value[0], "tolist") else value.tolist() if hasattr(value, "tolist") else value
    seen = [node.name(), len(node.next_functions), [o.grad_fn is node for o in out], [o.output_nr for o in out],
            saved]
    leaves = a + b + c
    loss = sum((o * o).sum() for i, o in enumerate(out) if i != 1)  # the second output's gradient is undefined
    grads = lib.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    seen.append([None if g is None else g.tolist() for g in grads])
    differentiable = [g for g in grads if g is not None and g.requires_grad]
    if differentiable:
        second = lib.autograd.grad(sum((g * g).sum() for g in differentiable), leaves, allow_unused=True)
        seen.append([None if g is None else np.round(g.tolist(), 8).tolist() for g in second])
    return seen


@pytest.mark.parametrize("name", list(OVERLOADS))
def test_a_foreach_call_records_one_node_of_the_overloads_name_as_torch(name):
    ours, theirs = _node_of(rg, OVERLOADS[name]), _node_of(torch, OVERLOADS[name])
    assert ours[:5] == theirs[:5]  # name, edges, one node for all, output_nr, saved attributes
    for x, y in zip(ours[5:], theirs[5:]):
        for p, q in zip(x, y):
            if p is None or q is None:  # unused: None in one, zeros in the other
                assert not np.any(p or 0) and not np.any(q or 0)
            else:
                np.testing.assert_allclose(np.concatenate([np.ravel(p)]), np.ravel(q), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["mul_list", "div_scalar_list", "pow_list", "pow_of_a_scalar", "maximum_scalar",
                                  "add_0dim_tensor_alpha", "addcdiv_scalar_list", "lerp_list", "norm", "max",
                                  "sigmoid"])
def test_a_foreach_node_passes_gradcheck_and_gradgradcheck(name):
    call = OVERLOADS[name]

    def f(*leaves):
        a, b, c = list(leaves[0:2]), list(leaves[2:4]), list(leaves[4:6])
        return tuple(call(rg, a, b, c))
    leaves = tuple(_leaves(rg, A) + _leaves(rg, B) + _leaves(rg, C))
    assert rg.autograd.gradcheck(f, leaves)
    assert rg.autograd.gradgradcheck(f, leaves)


def test_a_0dim_tensor_for_every_tensor_gets_the_sum_of_its_gradients():
    a = _leaves(rg, A)
    other = rg.tensor(1.7, dtype=rg.float64, requires_grad=True)
    out = rg._foreach_mul(a, other)
    assert out[0].grad_fn.name() == "ForeachMulBackward0Tensor" and len(out[0].grad_fn.next_functions) == 3
    sum(o.sum() for o in out).backward()
    assert other.grad.shape == () and other.grad.item() == pytest.approx(sum(sum(v) for v in A))
    assert rg.autograd.gradcheck(lambda x, y, s: tuple(rg._foreach_div([x, y], s)),
                                 (*_leaves(rg, A), other.detach().requires_grad_()))


def test_a_foreach_node_frees_its_saved_tensors_and_records_nothing_without_grad():
    def scenario(lib):
        a = _leaves(lib, A)
        out = lib._foreach_pow(a, _leaves(lib, B))
        sum(o.sum() for o in out).backward(retain_graph=True)
        sum(o.sum() for o in out).backward()
        try:
            out[0].sum().backward()
            second = "ran"
        except RuntimeError as e:
            second = str(e).split(".")[0]
        with lib.no_grad():
            plain = lib._foreach_exp(a)
        b = [t.detach() for t in a]
        mixed = lib._foreach_exp([a[0], b[1]])
        return second, [t.grad.tolist() for t in a], [o.grad_fn for o in plain], lib._foreach_exp(b)[0].grad_fn, [
            o.requires_grad for o in mixed], mixed[1].grad_fn is mixed[0].grad_fn, mixed[0].grad_fn.next_functions[1]
    ours, theirs = scenario(rg), scenario(torch)
    assert ours[0] == theirs[0] and ours[0].startswith("Trying to backward through the graph a second time")
    np.testing.assert_allclose(np.concatenate(ours[1]), np.concatenate(theirs[1]), rtol=1e-12)
    assert ours[2:] == theirs[2:] == ([None, None], None, [True, True], True, (None, 0))
