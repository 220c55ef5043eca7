"""Calls that PyTorch runs as an op of its own, or as a composite of other ops: the same here, on the same numbers."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def _chain(node, depth):
    """The names of ``node`` and its first next function, ``depth`` deep (C++ namespaces left out)."""
    names = []
    while node is not None and len(names) < depth:
        names.append(node.name().rpartition("::")[2])
        node = node.next_functions[0][0] if node.next_functions else None
    return names


def test_t_of_more_than_two_dims_raises_as_torch():
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2, 3, 4).t()
    with pytest.raises(RuntimeError) as ours:
        rg.ones(2, 3, 4).t()
    assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_t_is_a_view_with_its_own_node(shape):
    x = rg.zeros(shape, requires_grad=True) * 1
    y = x.t()
    assert y._base is x and y.grad_fn.name() == "TBackward0"
    assert y.shape == torch.zeros(shape).t().shape


def test_number_over_tensor_is_reciprocal_times_number_as_torch():
    data = np.array([3., 7., 0.1, 11.], dtype=np.float32)
    ours, theirs = 1.3 / rg.from_numpy(data.copy()), 1.3 / torch.from_numpy(data.copy())
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())  # bit for bit: the same two roundings
    xs = [lib.tensor([3., 7.], requires_grad=True) for lib in (rg, torch)]
    names = [_chain((2 / x).grad_fn, 2) for x in xs]
    assert names[0] == names[1] == ["MulBackward0", "ReciprocalBackward0"]


def test_number_over_int_tensor_is_default_float_as_torch():
    assert (2 / rg.tensor([1, 2])).dtype.name == str((2 / torch.tensor([1, 2])).dtype).replace("torch.", "")


def test_zero_in_place_has_its_own_node_and_zero_gradient():
    grads = []
    for lib in (rg, torch):
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        y = x * 2
        before = y._version
        y.zero_()
        assert y._version == before + 1 and y.grad_fn.name() == "ZeroBackward0"
        (y + x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_ndtr_is_torchs_composite():
    data = np.linspace(-3, 3, 7)
    ours = rg.special.ndtr(rg.tensor(data, requires_grad=True))
    theirs = torch.special.ndtr(torch.tensor(data, requires_grad=True))
    assert _chain(ours.grad_fn, 4) == _chain(theirs.grad_fn, 4) == [
        "MulBackward1", "AddBackward1", "ErfBackward0", "MulBackward1"]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-15)


@pytest.mark.parametrize("shape,size", [((3, 4), (4,)), ((2, 3, 4), (3, 1)), ((2, 3, 4), (1, 3, 1)), ((2, 3), ()),
                                        ((2, 3), (2, 3)), ((2, 1, 3), (1, 3))])
def test_sum_to_size_records_torchs_nodes(shape, size):
    data = np.arange(float(np.prod(shape))).reshape(shape)
    outs = [lib.tensor(data, requires_grad=True).sum_to_size(size) for lib in (rg, torch)]
    np.testing.assert_array_equal(outs[0].detach().numpy(), outs[1].detach().numpy())
    assert _chain(outs[0].grad_fn, 2) == _chain(outs[1].grad_fn, 2)


@pytest.mark.parametrize("call", [lambda m, x: m.std(x), lambda m, x: m.std_mean(x, 0)[0]])
def test_std_of_constant_input_has_zero_gradient_as_torch(call):
    grads = []
    for lib in (rg, torch):
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        call(lib, x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_var_of_integers_raises_as_torch():
    for fn in ("var", "std", "var_mean", "std_mean"):
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch, fn)(torch.arange(3))
        with pytest.raises(RuntimeError) as ours:
            getattr(rg, fn)(rg.arange(3))
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("call", [lambda m, x: m.var(x, 1), lambda m, x: m.std(x, (0, 1), correction=0),
                                  lambda m, x: m.var_mean(x, 0, keepdim=True), lambda m, x: m.std_mean(x)])
def test_var_and_std_record_one_node_as_torch(call):
    data = np.arange(6.).reshape(2, 3) ** 1.5
    outs = [call(lib, lib.tensor(data, requires_grad=True)) for lib in (rg, torch)]
    ours, theirs = [o if isinstance(o, tuple) else (o,) for o in outs]
    assert [_chain(o.grad_fn, 2) for o in ours] == [_chain(o.grad_fn, 2) for o in theirs]
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-14)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_reduces_in_its_op_as_torch(reduction):
    rng = np.random.default_rng(1)
    x, t, w = rng.uniform(0.1, 0.9, (2, 3)), rng.uniform(0, 1, (2, 3)), rng.uniform(0.5, 2, 3)
    names = []
    for lib in (rg, torch):
        F = lib.nn.functional
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
        names.append([_chain(F.binary_cross_entropy(a, b, lib.tensor(w), reduction=reduction).grad_fn, 1),
                      _chain(F.binary_cross_entropy_with_logits(a, b, lib.tensor(w), reduction=reduction,
                                                                pos_weight=lib.tensor(w)).grad_fn, 1)])
    assert names[0] == names[1]


def test_binary_cross_entropy_gradients_with_weights_that_are_not_differentiated():
    # As PyTorch's, the weights get no gradient: a weight that requires grad is refused.
    rng = np.random.default_rng(2)
    F = rg.nn.functional
    x = rg.tensor(rng.uniform(0.1, 0.9, (2, 3)), requires_grad=True)
    t = rg.tensor(rng.uniform(0, 1, (2, 3)), requires_grad=True)
    w = rg.tensor(rng.uniform(0.5, 2, 3))
    p = rg.tensor(rng.uniform(0.5, 2, (2, 3)))
    for reduction in ("mean", "sum", "none"):
        assert rg.autograd.gradcheck(lambda x, t: F.binary_cross_entropy(x, t, w, reduction=reduction), (x, t))
        assert rg.autograd.gradgradcheck(lambda x, t: F.binary_cross_entropy(x, t, w, reduction=reduction), (x, t))
        def fn(x, t):
            return F.binary_cross_entropy_with_logits(x, t, w, reduction=reduction, pos_weight=p)
        assert rg.autograd.gradcheck(fn, (x, t))
        assert rg.autograd.gradgradcheck(fn, (x, t))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.binary_cross_entropy(x, t, w.requires_grad_())


@pytest.mark.parametrize("make,shape", [
    (lambda b: b, (3, 8)),                      # contiguous: a view (ViewBackward0)
    (lambda b: b[::2], (2, 2, 3)),              # strided, but a view would do (ReshapeAliasBackward0)
    (lambda b: b[:, 1:4], (4, 3, 1)),
    (lambda b: b.t(), (-1,)),                   # only a copy has that shape (UnsafeViewBackward0)
    (lambda b: b[:, ::2], (12,)),
])
@pytest.mark.parametrize("method", ["reshape", "flatten"])
def test_reshape_views_where_torch_does(make, shape, method):
    seen = []
    for lib in (rg, torch):
        leaf = lib.arange(24.).reshape(4, 6).requires_grad_(True)
        base = leaf * 1
        src = make(base)
        y = src.reshape(shape) if method == "reshape" else src.flatten()
        is_view = y._base is not None and y._base is base
        version = base._version
        y.mul_(2)
        base_node = base.grad_fn.name().rpartition("::")[2]
        (base * lib.arange(24.).reshape(4, 6)).sum().backward()
        seen.append((is_view, base._version - version, base_node, base.detach().numpy().tolist(),
                     leaf.grad.numpy().tolist(), y.shape == src.shape))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("make,shape", [(lambda b: b, (3, 8)), (lambda b: b[::2], (2, 2, 3)), (lambda b: b.t(), (-1,))])
def test_reshape_node_name_matches_torch(make, shape):
    names = [make(lib.ones(4, 6, requires_grad=True) * 1).reshape(shape).grad_fn.name() for lib in (rg, torch)]
    assert names[0] == names[1]


def test_flatten_of_one_dim_is_the_tensor_itself_as_torch():
    for lib in (rg, torch):
        x = lib.ones(2, 3, requires_grad=True)
        assert x.flatten(1, -1) is x and x[0].flatten() is not x


@pytest.mark.parametrize("index,value", [(1, [5., 6., 7.]), ((slice(None), 0), 2.5),
                                         ((Ellipsis, None, 1), [[9.], [8.]]), ((0, slice(1, None)), [[1., 2.]]),
                                         (Ellipsis, 0.5)])
def test_setitem_with_basic_indices_copies_into_the_view_as_torch(index, value):
    seen = []
    for lib in (rg, torch):
        leaf = lib.arange(6.).reshape(2, 3).requires_grad_(True)
        v = lib.tensor(value, requires_grad=True) if isinstance(value, list) else value
        y = leaf * 1
        version = y._version
        y[index] = v
        node = y.grad_fn.name().rpartition("::")[2]
        (y * lib.arange(1., 7.).reshape(2, 3)).sum().backward()
        seen.append((y.detach().numpy().tolist(), y._version - version, node, leaf.grad.numpy().tolist(),
                     None if isinstance(value, float) else v.grad.numpy().tolist()))
    assert seen[0] == seen[1]


def test_setitem_on_a_leaf_that_requires_grad_raises_as_torch():
    errors = []
    for lib in (rg, torch):
        x = lib.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            x[0] = 1.
        errors.append(str(info.value).split(".")[0])
        with lib.no_grad():
            x[1:] = lib.ones(2)
        assert x.tolist() == [0., 1., 1.] and x.is_leaf
    assert errors[0] == errors[1]


def test_sum_to_size_without_a_graph_gives_torchs_values():
    data = np.arange(24.).reshape(2, 3, 4)
    with rg.no_grad():
        ours = [rg.tensor(data, requires_grad=True).sum_to_size(s) for s in ((4,), (3, 1), (1, 3, 1), (1, 4))]
    theirs = [torch.tensor(data).sum_to_size(s) for s in ((4,), (3, 1), (1, 3, 1), (1, 4))]
    for o, t in zip(ours, theirs, strict=True):
        assert o.grad_fn is None and o.shape == t.shape
        np.testing.assert_array_equal(o.numpy(), t.numpy())
