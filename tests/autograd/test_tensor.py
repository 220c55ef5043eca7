"""Tensor basics: dtypes, autograd metadata, conversion, creation functions and printing."""
import numpy as np
import pytest

import retrograd as rg


# -- dtypes ---------------------------------------------------------------------------------------
def test_python_floats_become_float32():
    assert rg.tensor([1.0, 2.0]).dtype is rg.float32
    assert rg.tensor(1.5).dtype is rg.float32


def test_python_ints_become_int64_and_bools_bool():
    assert rg.tensor([1, 2]).dtype is rg.int64
    assert rg.tensor(True).dtype is rg.bool


def test_numpy_arrays_keep_their_dtype():
    assert rg.tensor(np.zeros(2, dtype=np.float64)).dtype is rg.float64
    assert rg.tensor(np.zeros(2, dtype=np.int32)).dtype is rg.int32


def test_set_default_dtype_changes_python_float_inference():
    rg.set_default_dtype(rg.float64)
    assert rg.tensor([1.0]).dtype is rg.float64
    assert rg.zeros(2).dtype is rg.float64


def test_tensor_wraps_a_backend_array_copying_its_data():
    a = np.array([1.0, 2.0], dtype=np.float32)
    t = rg.tensor(a)
    a[0] = 9.0
    assert type(t._data) is np.ndarray
    assert t.tolist() == [1.0, 2.0]


# -- requires_grad ------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: rg.tensor([1, 2]), lambda: rg.tensor([True])])
def test_only_floating_tensors_may_require_grad(make):
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients"):
        make().requires_grad_()
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients"):
        rg.tensor([1, 2], requires_grad=True)  # a factory's words are not requires_grad_()'s, as in PyTorch


def test_leaf_metadata():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None and x.grad is None
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward0"


def test_tensor_not_requiring_grad_is_a_leaf():
    y = rg.tensor([1.0]) * 2
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None


def test_requires_grad_false_on_non_leaf_raises():
    y = rg.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="^you can only change requires_grad flags of leaf variables."):
        y.requires_grad_(False)


# -- _version, detach ------------------------------------------------------------------------
def test_version_starts_at_zero_and_counts_inplace_ops():
    x = rg.zeros(3)
    assert x._version == 0
    x.add_(1)
    x.mul_(2)
    assert x._version == 2


def test_version_is_shared_by_views_and_detached_aliases():
    x = rg.zeros(4)
    view, detached = x[1:3], x.detach()
    x.add_(1)
    assert (view._version, detached._version) == (1, 1)
    view.mul_(2)
    detached.sub_(1)
    assert (x._version, view._version, detached._version) == (3, 3, 3)
    assert x.tolist() == [0.0, 1.0, 1.0, 0.0]


def test_data_has_its_own_version_counter():
    x = rg.zeros(2)
    d = x.data
    d.add_(1)
    assert x._version == 0 and x.tolist() == [1.0, 1.0]


def test_detach_shares_memory_and_leaves_the_graph():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert np.shares_memory(d._data, y._data)


def test_detach_inplace_makes_a_leaf():
    y = rg.tensor([1.0], requires_grad=True) * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad


# -- conversion ------------------------------------------------------------------------------
def test_numpy_of_tensor_requiring_grad_raises_pytorch_message():
    x = rg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^Can't call numpy\(\) on Tensor that requires grad. "
                                           r"Use tensor.detach\(\).numpy\(\) instead."):
        x.numpy()


def test_numpy_shares_memory_with_the_tensor():
    t = rg.zeros(3)
    a = t.numpy()
    a[1] = 5.0
    assert t.tolist() == [0.0, 5.0, 0.0]
    assert a.dtype == np.float32


def test_numpy_of_detached_tensor_shares_memory():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    x.detach().numpy()[0] = 7.0
    assert x.tolist() == [7.0, 2.0]


def test_item_returns_a_python_number():
    assert rg.tensor([2.5]).item() == 2.5 and type(rg.tensor([2.5]).item()) is float
    assert rg.tensor(3).item() == 3 and type(rg.tensor(3).item()) is int
    with pytest.raises(RuntimeError, match="^a Tensor with 2 elements cannot be converted to Scalar"):
        rg.tensor([1.0, 2.0]).item()


def test_tolist_returns_nested_lists_and_numbers():
    assert rg.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert rg.tensor(1.5).tolist() == 1.5


# -- creation functions ------------------------------------------------------------------------
def test_zeros_ones_empty_take_varargs_or_a_tuple():
    assert rg.zeros(2, 3).shape == (2, 3) and rg.zeros((2, 3)).shape == (2, 3)
    assert rg.ones(2).tolist() == [1.0, 1.0] and rg.ones(2).dtype is rg.float32
    assert rg.zeros(2).tolist() == [0.0, 0.0]
    assert rg.empty(4, 1).shape == (4, 1) and rg.empty(1).dtype is rg.float32
    assert rg.zeros(2, dtype=rg.int64).dtype is rg.int64


def test_full_infers_dtype_from_the_fill_value():
    assert rg.full((2,), 3.0).dtype is rg.float32
    assert rg.full((2,), 3).dtype is rg.int64
    assert rg.full((2,), True).dtype is rg.bool
    assert rg.full((2, 1), 4.0).tolist() == [[4.0], [4.0]]


def test_like_functions_copy_shape_dtype_and_take_requires_grad():
    base = rg.zeros(2, 3, dtype=rg.float64)
    for t in (rg.zeros_like(base), rg.ones_like(base), rg.full_like(base, 2.0), rg.empty_like(base)):
        assert t.shape == (2, 3) and t.dtype is rg.float64 and not t.requires_grad
    assert rg.ones_like(base).tolist()[0] == [1.0] * 3
    assert rg.full_like(base, 2.0).tolist()[1] == [2.0] * 3
    assert rg.zeros_like(base, requires_grad=True).requires_grad


def test_arange_dtypes_and_values():
    assert rg.arange(4).tolist() == [0, 1, 2, 3] and rg.arange(4).dtype is rg.int64
    assert rg.arange(1, 7, 2).tolist() == [1, 3, 5]
    r = rg.arange(0, 1, 0.25)
    assert r.dtype is rg.float32 and r.tolist() == [0.0, 0.25, 0.5, 0.75]


def test_linspace_includes_both_ends():
    r = rg.linspace(0, 1, 5)
    assert r.dtype is rg.float32 and r.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_eye_square_and_rectangular():
    assert rg.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert rg.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def test_rand_randn_randint_shapes_dtypes_and_ranges():
    u = rg.rand(1000)
    assert u.dtype is rg.float32 and 0.0 <= u.numpy().min() and u.numpy().max() < 1.0
    n = rg.randn(2, 3)
    assert n.shape == (2, 3) and n.dtype is rg.float32
    i = rg.randint(3, 7, (500,))
    assert i.dtype is rg.int64 and set(i.tolist()) == {3, 4, 5, 6}


def test_manual_seed_makes_random_draws_reproducible():
    rg.manual_seed(123)
    a = (rg.rand(3).tolist(), rg.randn(3).tolist(), rg.randint(0, 100, (3,)).tolist())
    rg.manual_seed(123)
    b = (rg.rand(3).tolist(), rg.randn(3).tolist(), rg.randint(0, 100, (3,)).tolist())
    assert a == b
    assert rg.rand(3).tolist() != a[0]


def test_from_numpy_shares_memory_both_ways():
    a = np.array([1.0, 2.0])
    t = rg.from_numpy(a)
    assert t.dtype is rg.float64
    a[0] = 5.0
    assert t.tolist() == [5.0, 2.0]
    t.add_(1)
    assert a.tolist() == [6.0, 3.0]


def test_creation_with_requires_grad_makes_a_leaf():
    x = rg.ones(2, requires_grad=True)
    assert x.requires_grad and x.is_leaf


# -- printing -------------------------------------------------------------------------------
def test_repr_of_leaf_requiring_grad():
    assert repr(rg.tensor([1.0, 2.0], requires_grad=True)) == "tensor([1., 2.], requires_grad=True)"


def test_repr_of_non_leaf_names_its_grad_fn():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr((x * 2).sum()) == "tensor(6., grad_fn=<SumBackward0>)"


def test_repr_of_plain_tensors():
    assert repr(rg.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(rg.tensor(3.5)) == "tensor(3.5000)"
    assert repr(rg.tensor([1.0], dtype=rg.float64)) == "tensor([1.], dtype=retrograd.float64)"
    assert repr(rg.tensor([[1.5, 2.0], [3.0, 4.25]])) == "tensor([[1.5000, 2.0000],\n        [3.0000, 4.2500]])"


def test_repr_matches_pytorch():
    torch = pytest.importorskip("torch")
    for data in ([1.0, 2.0], [[0.1, 20.0], [3.0, -4.5]], [1e-5, 1.0], 2.0, [1, -20, 3]):
        assert repr(rg.tensor(data)) == repr(torch.tensor(data))
    assert repr(rg.tensor([1.0, 2.0], requires_grad=True)) == repr(torch.tensor([1.0, 2.0], requires_grad=True))


# -- API.md "Details users rely on": shape and reduction conventions ------------------------------
def test_squeeze_of_a_dimension_whose_size_is_not_one_is_unchanged():
    x = rg.ones(2, 3, requires_grad=True)
    y = x.squeeze(0)
    assert y.shape == (2, 3)
    assert rg.ones(2, 1).squeeze(1).shape == (2,)
    y.sum().backward()
    assert x.grad.shape == (2, 3)


def test_t_works_on_0d_and_1d_tensors():
    assert rg.tensor(2.0).t().shape == () and rg.tensor(2.0).t().item() == 2.0
    assert rg.tensor([1.0, 2.0]).t().tolist() == [1.0, 2.0]
    assert rg.ones(2, 3).t().shape == (3, 2)


def test_transpose_of_a_dimension_with_itself_is_allowed():
    x = rg.ones(2, 3, requires_grad=True)
    y = x.transpose(1, 1)
    assert y.shape == (2, 3)
    y.sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "var", "std"])
def test_reductions_take_a_tuple_of_dims(name):
    data = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    x = rg.tensor(data, requires_grad=True)
    y = getattr(rg, name)(x, dim=(0, 2))
    kwargs = {"ddof": 1} if name in ("var", "std") else {}
    np_name = {"amax": "max", "amin": "min"}.get(name, name)
    assert y.shape == (3,)
    assert np.allclose(y.detach().numpy(), getattr(np, np_name)(data, axis=(0, 2), **kwargs))
    y.sum().backward()
    assert x.grad.shape == (2, 3, 4)
    keep = getattr(rg, name)(x, dim=(0, 2), keepdim=True)
    assert keep.shape == (1, 3, 1)


@pytest.mark.parametrize("name", ["sign", "round"])
def test_piecewise_constant_ops_require_grad_and_get_zero_gradient(name):
    x = rg.tensor([-1.5, 0.3, 2.7], requires_grad=True)
    y = getattr(x, name)()
    assert y.requires_grad and y.grad_fn is not None
    (y * x).sum().backward()  # d(f(x) * x)/dx = f(x), the f'(x) term is zero
    assert x.grad.tolist() == y.tolist()


def test_comparisons_and_argmax_do_not_require_grad():
    x = rg.tensor([1.0, 3.0, 2.0], requires_grad=True)
    for out in (x > 1, x == 3, x <= x, x.argmax(), x.argmin(), rg.argmax(x, dim=0)):
        assert not out.requires_grad and out.grad_fn is None
    assert (x > 1).dtype is rg.bool and x.argmax().dtype is rg.int64


def test_size_concatenation_and_repetition_stay_sizes_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (rg, torch):
        a = lib.Size([2, 3])
        results = [a + lib.Size([4]), a + (4,), (1,) + a, a * 2, 2 * a, a[1:]]
        assert all(type(r) is lib.Size for r in results), lib.__name__
        assert [tuple(r) for r in results] == [(2, 3, 4), (2, 3, 4), (1, 2, 3), (2, 3, 2, 3), (2, 3, 2, 3), (3,)]
    with pytest.raises(TypeError):
        rg.Size([1]) + [2]
