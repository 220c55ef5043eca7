"""Scenarios of PyTorch's test/test_autograd.py, class TestAutogradDeviceType, for the CPU and real dtypes, written
again and run with retrograd and torch on the same numbers. See test_pytorch_suite_basics.py for the method.

Out of scope: the CUDA, several-device, accelerator, profiler-range (nvtx, itt) and sparse scenarios, and the complex
ones (``copy_r_to_c``, ``to_r_to_c``, a complex scalar's backward, a complex exponent).
"""
import math
import sys
import warnings

import numpy as np
import pytest

import retrograd as rg

from errors_like_torch import first_sentence
from .test_pytorch_suite_basics import function, ones, outcome, randn, same_in_both

torch = pytest.importorskip("torch")


def caught(fn):
    """What calling ``fn`` raised, as (type name, first sentence), or "ok"."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the point is to compare whatever is raised
        return type(e).__name__, first_sentence(e)
    return "ok"


MASK = (np.random.default_rng(3).random((3, 3)) > 0.5).tolist()  # PyTorch's are 5 x 5: the CI clock


# -- reductions that pick a value ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name, data", [
    ("min", "ties"), ("max", "ties"), ("median", "ties"), ("median", "nans"), ("min", "nans"), ("max", "nans"),
    ("nanmedian", "ties")])
def test_min_max_median_spread_the_gradient_over_all_equal_values(name, data):
    def scenario(lib):
        values = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0] if data == "ties" else [float("nan")] * 3
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        getattr(lib, name)(x).backward()
        return float(x.grad.sum()), int((x.grad == 1 / 3).sum())
    assert same_in_both(scenario) == ("ok", (1.0, 3))


_EXTREMES = {"max": lambda lib, t: lib.max(t), "min": lambda lib, t: lib.min(t), "amax": lambda lib, t: lib.amax(t),
             "amin(dim)": lambda lib, t: lib.amin(t, 0), "amax(dim, keepdim)": lambda lib, t: t.amax(1, keepdim=True),
             "max(dim)": lambda lib, t: lib.max(t, 0)[0], "min(dim, keepdim)": lambda lib, t: t.min(1, True)[0],
             "aminmax": lambda lib, t: sum(lib.aminmax(t)), "aminmax(dim)": lambda lib, t: sum(lib.aminmax(t, dim=0))}


@pytest.mark.parametrize("name", sorted(_EXTREMES))
def test_min_max_amin_amax_backward_of_nans_as_torch(name):
    nan = float("nan")

    def scenario(lib):
        grads = []
        for values in ([[nan, 1.0], [nan, nan]], [[1.0, nan], [3.0, 3.0]], [[nan, nan], [nan, nan]]):
            x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
            _EXTREMES[name](lib, x).sum().backward()
            grads.append(x.grad)
        return grads
    ours, theirs = outcome(scenario, rg), outcome(scenario, torch)
    assert ours[0] == theirs[0] == "ok"
    np.testing.assert_array_equal(np.asarray(ours[1]), np.asarray(theirs[1]))  # NaN where torch has NaN, else equal


@pytest.mark.parametrize("name", ["max", "min", "amax"])
def test_min_max_amin_amax_forward_derivative_of_nans_as_torch(name):
    def scenario(lib):
        out = []
        for values in ([1.0, float("nan"), 1.0], [3.0, 1.0, 3.0]):
            with lib.autograd.forward_ad.dual_level():
                x = lib.autograd.forward_ad.make_dual(lib.tensor(values, dtype=lib.float64),
                                                      lib.tensor([1.0, 2.0, 4.0], dtype=lib.float64))
                out.append(repr(float(lib.autograd.forward_ad.unpack_dual(_EXTREMES[name](lib, x)).tangent)))
        return out
    assert same_in_both(scenario) == ("ok", ["nan", "2.0" if name == "min" else "2.5"])


def test_min_max_amin_amax_gradcheck_where_finite():
    # retrograd only (the CI clock): the formulas changed for NaN, checked by finite differences where finite
    x = rg.tensor([[0.5, -1.0, 2.0], [1.5, 3.0, -0.25]], dtype=rg.float64, requires_grad=True)
    for name in ("max", "amax(dim, keepdim)", "aminmax", "amin(dim)"):
        fn = lambda t: _EXTREMES[name](rg, t)  # noqa: E731
        assert rg.autograd.gradcheck(fn, (x,)) and rg.autograd.gradgradcheck(fn, (x,)), name


@pytest.mark.parametrize("reduction", ["amin", "amax"])
def test_scatter_reduce_amin_amax_gradcheck(reduction):
    def scenario(lib):
        inp = randn(lib, 2, 3, requires_grad=True)
        src = inp.clone().detach_().requires_grad_(True)  # equal values: the gradient is shared evenly
        idx = lib.arange(2).unsqueeze(-1).expand((2, 3))
        return lib.autograd.gradcheck(lib.scatter_reduce, (inp, 0, idx, src, reduction), check_batched_grad=False)
    assert same_in_both(scenario) == ("ok", True)


def _two_zeros(lib):
    return (lib.tensor([1.0], dtype=lib.float64, requires_grad=True), 0, lib.tensor([0, 0]),
            lib.tensor([0.0, 0.0], dtype=lib.float64, requires_grad=True), "prod")


@pytest.mark.parametrize("op", ["scatter_reduce", "index_reduce"])
def test_scatter_reduce_prod_of_two_zeros_gradcheck(op):
    def scenario(lib):
        return lib.autograd.gradcheck(getattr(lib, op), _two_zeros(lib), check_batched_grad=False)
    assert same_in_both(scenario) == ("ok", True)


@pytest.mark.parametrize("op", ["scatter_reduce", "index_reduce"])
def test_scatter_reduce_prod_of_two_zeros_has_no_double_backward(op):
    def scenario(lib):
        lib.autograd.gradgradcheck(getattr(lib, op), _two_zeros(lib))
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError" and "Double backward is unsupported for" in result[1]


def test_scatter_reduce_prod_gradgradcheck_without_two_zeros_of_src_at_one_position():
    # retrograd only (the CI clock): PyTorch's formula, checked by finite differences here
    inp = rg.tensor([1.5, 0.0], dtype=rg.float64, requires_grad=True)
    idx = rg.tensor([0, 0, 1])  # one zero of src at most per position; with include_self, input's zero meets one
    for include_self, src in ((True, [0.0, 2.0, 0.0]), (False, [0.0, 2.0, 0.0]), (True, [0.5, 2.0, 3.0])):
        fn = lambda i, t: rg.scatter_reduce(i, 0, idx, t, "prod", include_self=include_self)  # noqa: E731
        s = rg.tensor(src, dtype=rg.float64, requires_grad=True)
        assert rg.autograd.gradcheck(fn, (inp, s)) and rg.autograd.gradgradcheck(fn, (inp, s)), (include_self, src)


@pytest.mark.parametrize("reduction", ["amin", "amax", "prod"])
def test_index_reduce_gradcheck(reduction):
    def scenario(lib):
        inp = randn(lib, 2, 3, requires_grad=True)
        src = inp.clone().detach_().requires_grad_(True)
        return lib.autograd.gradcheck(lib.index_reduce, (inp, 0, lib.arange(2), src, reduction),
                                      check_batched_grad=False)
    assert same_in_both(scenario) == ("ok", True)


def test_parameter_set_to_a_slice_of_itself_then_backward():
    def scenario(lib):
        asd = lib.nn.Parameter(lib.ones(16, dtype=lib.float64))
        for _ in range(2):
            with lib.no_grad():
                asd.set_(asd[1:])
                asd.grad = None
            lib.cat((asd, asd)).sum().backward()
        return asd.grad
    same_in_both(scenario)


# -- Python scalars and requires_grad -------------------------------------------------------------------------------
def test_python_scalar_conversions():
    def scenario(lib):
        out = []
        big = 1234567890123456789
        long = lib.zeros(1, 1, 1, dtype=lib.int64)
        long[0] = -12345
        out.append(int(long))
        f = randn(lib, 1, 1)
        f[0] = -12345.1
        out.append(float(f))
        for value in (float("nan"), float("inf"), -float("inf")):
            f[0] = value
            out.append(repr(float(f)))
        long[0] = big
        out.append(float(long) == float(big))
        for value in (float("nan"), float("inf"), -float("inf")):
            f[0] = value
            out.append(caught(lambda: int(f[0]))[0])
        f[0] = sys.float_info.max
        out.append(int(f) == int(sys.float_info.max))
        for t, value in ((long, 0), (long, -2), (f, 0.0), (f, sys.float_info.min), (f, float("nan")),
                         (f, float("inf")), (f, -float("inf"))):
            t[0] = value
            out.append(bool(t))
        return out
    result = same_in_both(scenario)
    assert result[1][5:9] == [True, "ValueError", "OverflowError", "OverflowError"]
    assert math.isclose(result[1][1], -12345.1)


def _require_grad(lib, way, dt):
    if way == "method":
        lib.ones(1, dtype=dt).requires_grad_()
    elif way == "attribute":
        lib.ones(1, dtype=dt).requires_grad = True
    else:
        lib.ones(1, dtype=dt, requires_grad=True)


@pytest.mark.parametrize("dtype, way", [
    (dtype, way) for dtype in ("float32", "float64", "int8", "int16", "int32", "int64")
    for way in ("method", "attribute", "factory")])
def test_only_floating_point_tensors_may_require_grad(dtype, way):
    def scenario(lib):
        dt = getattr(lib, dtype)
        a = lib.ones(1, dtype=dt)
        a.requires_grad = False  # always allowed
        a.requires_grad_(False)
        _require_grad(lib, way, dt)
    result = same_in_both(scenario)
    assert result[0] == ("ok" if dtype.startswith("float") else "RuntimeError")


@pytest.mark.parametrize("make", ["tensor", "arange", "full", "randint", "new_zeros", "Parameter"])
def test_an_integer_tensor_made_to_require_grad_raises(make):
    def scenario(lib):
        {"tensor": lambda: lib.tensor([1, 2], requires_grad=True),
         "arange": lambda: lib.arange(3, requires_grad=True),
         "full": lambda: lib.full((2,), 1, requires_grad=True),
         "randint": lambda: lib.randint(3, (2,), requires_grad=True),
         "new_zeros": lambda: lib.ones(1).new_zeros(2, dtype=lib.int32, requires_grad=True),
         "Parameter": lambda: lib.nn.Parameter(lib.ones(1, dtype=lib.int64))}[make]()
    assert same_in_both(scenario)[0] == "RuntimeError"


@pytest.mark.parametrize("dtype", ["int8", "int64"])
def test_only_floating_point_tensors_may_require_grad_by_any_way(dtype):
    def scenario(lib):
        out = []
        for way in ("method", "attribute", "factory"):
            try:
                _require_grad(lib, way, getattr(lib, dtype))
                out.append("ok")
            except RuntimeError as e:
                out.append("floating point" in str(e))
        return out
    assert same_in_both(scenario) == ("ok", [True] * 3)


def test_advanced_indexing_backward_with_a_channels_last_index():
    def scenario(lib):
        i = lib.tensor(np.random.default_rng(1).integers(0, 2, (2, 8, 1, 2)).tolist()).contiguous(
            memory_format=lib.channels_last)
        x = randn(lib, 2, 8, 1, 2, requires_grad=True)
        x[i].sum().backward()
        return x.grad
    same_in_both(scenario)


# -- where ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [((3, 3), (3, 3)), ((3, 1, 3), (3, 3, 1))])
def test_where_gradcheck_and_gradgradcheck(shapes):
    def scenario(lib):
        cond = lib.tensor(MASK)
        x, y = randn(lib, *shapes[0], requires_grad=True), randn(lib, *shapes[1], requires_grad=True, seed=1)
        out_shape = lib.where(cond, x, y).shape
        return (lib.autograd.gradcheck(lib.where, (cond, x, y), raise_exception=True),
                lib.autograd.gradgradcheck(lib.where, (cond, x, y), (randn(lib, *out_shape, seed=2),)))
    assert same_in_both(scenario) == ("ok", (True, True))


def test_where_with_a_python_scalar_gradcheck_and_gradgradcheck():
    def scenario(lib):
        cond, x = lib.tensor(MASK), randn(lib, 3, 3, requires_grad=True)
        checks = []
        for fn in (lambda c, t: lib.where(c, 4.0, t), lambda c, t: lib.where(c, t, 4.0)):
            checks.append(lib.autograd.gradcheck(fn, (cond, x)))
            checks.append(lib.autograd.gradgradcheck(fn, (cond, x)))
        return checks
    assert same_in_both(scenario) == ("ok", [True] * 4)


# -- .grad assignment and factories -----------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["int", "shape", "dtype", "itself"])
def test_grad_assignment_of_a_wrong_type_shape_dtype_or_itself_raises(value):
    def scenario(lib):
        x = randn(lib, 5, 5)
        x.grad = {"int": lambda: 0, "shape": lambda: randn(lib, 2, 2), "itself": lambda: x,
                  "dtype": lambda: lib.zeros(5, 5, dtype=lib.int64)}[value]()
    assert same_in_both(scenario)[0] == ("TypeError" if value == "int" else "RuntimeError")


@pytest.mark.parametrize("dtypes", [("float64", "float32"), ("float16", "uint8"), ("int8", "bool"),
                                    ("int16", "int32"), ("float32", "float16")])
def test_grad_assignment_of_another_dtype_names_both_dtypes(dtypes):
    def scenario(lib):
        x = lib.zeros(2, 3, dtype=getattr(lib, dtypes[0]))
        x.grad = lib.zeros(2, 1, dtype=getattr(lib, dtypes[1]))  # of another size too: the dtype is checked first
    assert same_in_both(scenario)[0] == "RuntimeError"


def test_grad_assignment_on_another_device_type_raises():
    ours = caught(lambda: setattr(rg.zeros(2), "grad", rg.zeros(3, device="fake")))
    theirs = caught(lambda: setattr(torch.zeros(2), "grad", torch.zeros(3, device="meta")))
    assert ours == (theirs[0], theirs[1].replace("'meta'", "'fake'"))  # the device type before the size


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_like_factories_take_dtype_device_and_requires_grad(dtype):
    def scenario(lib):
        dt = getattr(lib, dtype)
        x = randn(lib, 2, 3).to(dt)
        out = []
        for fn in (lib.ones_like, lib.randn_like):
            for requires_grad in (True, False):
                o = fn(x, dtype=dt, device="cpu", requires_grad=requires_grad)
                out.append((o.requires_grad, str(o.dtype).split(".")[-1], str(x.device), tuple(o.shape)))
        return out
    same_in_both(scenario)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_copy_into_a_floating_point_tensor_of_any_precision_requires_grad(dtype):
    def scenario(lib):
        x = randn(lib, 10, requires_grad=True).float()
        y = lib.empty(10, dtype=getattr(lib, dtype))
        y.copy_(x)
        return y.requires_grad, x.to(getattr(lib, dtype)).requires_grad
    assert same_in_both(scenario) == ("ok", (True, True))


# -- forward mode through copy_ ------------------------------------------------------------------------------------
def test_forward_ad_copy_broadcasts_a_dual_source():
    def scenario(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(randn(lib, 3, 3), randn(lib, 3, 3, seed=1))
            non_dual = randn(lib, 1, 3, 3, seed=2)
            non_dual.copy_(dual)
            return non_dual, fw.unpack_dual(non_dual).tangent
    same_in_both(scenario)


def test_forward_ad_copy_copies_the_tangent():
    def scenario(lib):
        fw = lib.autograd.forward_ad
        tangent = lib.tensor([[5.0], [6.0]], dtype=lib.float64)
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([[3.0], [4.0]], dtype=lib.float64), tangent)
            non_dual = lib.tensor([[1.0], [2.0]], dtype=lib.float64)
            non_dual.copy_(x)
            t = fw.unpack_dual(non_dual).tangent
            return t is not tangent, t
    assert same_in_both(scenario) == ("ok", (True, [[5.0], [6.0]]))


# -- in-place ops on views ----------------------------------------------------------------------------------------
def test_inplace_on_a_view_backprop_through_the_base():
    def scenario(lib):
        root = randn(lib, 2, 2, requires_grad=True)
        x = root.clone()
        x.narrow(0, 0, 1).mul_(2)
        x.sum().backward()
        return root.grad
    assert same_in_both(scenario) == ("ok", [[2.0, 2.0], [1.0, 1.0]])


def test_inplace_on_a_view_backprop_through_another_view():
    def scenario(lib):
        root = randn(lib, 2, 2, requires_grad=True)
        x = root.clone()
        v1, v2 = x.narrow(0, 0, 1), x.narrow(0, 0, 1)
        v1.mul_(2)
        v2.sum().backward()
        return root.grad
    assert same_in_both(scenario) == ("ok", [[2.0, 2.0], [0.0, 0.0]])


@pytest.mark.parametrize("make_root", ["contiguous", "strided"])
def test_inplace_on_a_view_of_a_view_backprop_through_the_base(make_root):
    def scenario(lib):
        if make_root == "contiguous":
            root = randn(lib, 2, 2, requires_grad=True)
        else:
            root = ones(lib, 2, 3, 2).select(2, 1).t().requires_grad_(True)
        x = root.clone()
        x.narrow(0, 0, 1).narrow(1, 1, 1).mul_(2)
        x.sum().backward()
        return root.grad
    expected = [[1.0, 2.0], [1.0, 1.0]] if make_root == "contiguous" else [[1.0, 2.0], [1.0, 1.0], [1.0, 1.0]]
    assert same_in_both(scenario) == ("ok", expected)


def test_inplace_on_a_view_then_grad_fn_read_under_no_grad():
    def scenario(lib):
        a = ones(lib, 3, 1, requires_grad=True)
        c = (a * 2).view_as(a)
        c[0][0] = 3
        with lib.no_grad():
            c.grad_fn
        c.sum().backward()
        return a.grad
    same_in_both(scenario)


def _narrow_mul_(root, b):
    x = root.clone()
    x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
    x.narrow(1, 0, 2).narrow(0, 1, 2).mul_(b)
    return x


def test_inplace_on_views_gradcheck_and_gradgradcheck():
    def scenario(lib):
        a, b = randn(lib, 3, 4, requires_grad=True), randn(lib, 2, 2, requires_grad=True, seed=1)  # PyTorch's: 4 x 4
        return (lib.autograd.gradcheck(_narrow_mul_, [a, b], raise_exception=True),
                lib.autograd.gradgradcheck(_narrow_mul_, (a, b), (randn(lib, 3, 4, requires_grad=True, seed=2),)))
    assert same_in_both(scenario) == ("ok", (True, True))


def test_inplace_on_a_view_makes_the_base_require_grad():
    def scenario(lib):
        a, b = randn(lib, 3, 4), randn(lib, 3, 2, requires_grad=True, seed=1)
        seen = []

        def func(root, b):
            x = root.clone()
            seen.append(x.requires_grad)
            x.narrow(1, 2, 2).mul_(b)
            seen.append(x.requires_grad)
            return x
        checks = (lib.autograd.gradcheck(func, [a, b], raise_exception=True),
                  lib.autograd.gradgradcheck(func, (a, b), (randn(lib, 3, 4, requires_grad=True, seed=2),)))
        return checks, seen[:2]
    assert same_in_both(scenario) == ("ok", ((True, True), [False, True]))


def test_inplace_on_a_view_backprop_through_the_view():
    def scenario(lib):
        a = lib.tensor([2.0, 5.0], dtype=lib.float64)
        b = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
        a.narrow(0, 1, 1).mul_(b).sum().backward()
        return b.grad, a.grad
    assert same_in_both(scenario) == ("ok", ([5.0], None))


def test_inplace_on_the_base_makes_an_earlier_view_require_grad():
    def scenario(lib):
        r = ones(lib, 1, requires_grad=True)
        seen = []

        def fn(r):
            x = ones(lib, 5)
            v = x.select(0, 1)
            seen.append((v.requires_grad, v.grad_fn is None))
            x.add_(r)
            seen.append(v.requires_grad)
            return v
        return lib.autograd.gradcheck(fn, [r]), lib.autograd.gradgradcheck(fn, [r]), seen[:2]
    assert same_in_both(scenario) == ("ok", (True, True, [(False, True), True]))


def _view_then_base_add_(lib, r):
    x = ones(lib, 5)
    v = x.select(0, 1)
    x.add_(r)  # v now requires grad through its base
    return v


def test_custom_function_on_a_view_that_requires_grad_through_its_base_records():
    def scenario(lib):
        needs = []

        def backward(ctx, g):
            needs.append(ctx.needs_input_grad)
            return g * 2
        r = ones(lib, 1, requires_grad=True)
        out = function(lib, lambda ctx, t: t * 2, backward).apply(_view_then_base_add_(lib, r))
        requires_grad = out.requires_grad
        out.sum().backward()
        return requires_grad, needs, r.grad
    assert same_in_both(scenario) == ("ok", (True, [(True,)], [2.0]))


def test_implicit_backward_of_a_view_that_requires_grad_through_its_base():
    def scenario(lib):
        r = ones(lib, 1, requires_grad=True)
        _view_then_base_add_(lib, r).backward()
        return r.grad
    assert same_in_both(scenario) == ("ok", [1.0])


def test_implicit_grad_of_a_view_that_requires_grad_through_its_base():
    def scenario(lib):
        r = ones(lib, 1, requires_grad=True)
        return lib.autograd.grad(_view_then_base_add_(lib, r), r)
    assert same_in_both(scenario) == ("ok", ([1.0],))


def test_inplace_custom_function_on_views_gradcheck_and_gradgradcheck():
    def scenario(lib):
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            x.add_(y)
            return x
        py_add = function(lib, forward, lambda ctx, g: (g, g), name="PyAdd")

        def func(root, b):
            x = root.clone()
            py_add.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
            py_add.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
            return x
        a, b = randn(lib, 3, 4, requires_grad=True), randn(lib, 2, 2, requires_grad=True, seed=1)
        return (lib.autograd.gradcheck(func, [a, b], raise_exception=True),
                lib.autograd.gradgradcheck(func, (a, b), (randn(lib, 3, 4, requires_grad=True, seed=2),)))
    assert same_in_both(scenario) == ("ok", (True, True))


@pytest.mark.parametrize("make", ["unbind", "unbind of a view", "view of unbind"])
def test_inplace_on_a_view_from_a_multi_output_view_op_raises(make):
    def scenario(lib):
        a = randn(lib, 10, requires_grad=True).clone()
        if make == "unbind":
            target = lib.arange(9.0, dtype=lib.float64).reshape(3, 3).requires_grad_().clone().unbind()[0]
        elif make == "unbind of a view":
            target = a.view_as(a).unbind(0)[0]
        else:
            b = a.unbind(0)
            target = b[0].view_as(b[0])
        target.mul_(2)
    assert same_in_both(scenario)[0] == "RuntimeError"


@pytest.mark.parametrize("split", ["split", "split_with_sizes", "chunk"])
def test_inplace_on_an_output_of_split_or_chunk_raises(split):
    def scenario(lib):
        b = randn(lib, 3, 3, requires_grad=True) * 2
        s1, s2, _ = {"split": lambda: b.split(1), "split_with_sizes": lambda: b.split_with_sizes((1, 1, 1)),
                     "chunk": lambda: b.chunk(3)}[split]()
        s1.mul_(s2)
    node = "SplitWithSizes" if split == "split_with_sizes" else "Split"  # PyTorch's node of split_with_sizes
    assert same_in_both(scenario) == ("RuntimeError", f"Output 0 of {node} is a view and is being modified inplace.")


@pytest.mark.parametrize("split", ["unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"])
def test_inplace_on_an_output_of_an_unsafe_split_is_allowed(split):
    def scenario(lib):
        a = randn(lib, 3, 3, requires_grad=True)
        b = a + a
        arg = {"unsafe_split": 1, "unsafe_split_with_sizes": (1, 1, 1), "unsafe_chunk": 3}[split]
        s1, s2, _ = getattr(b, split)(arg)
        s1.mul_(s2)
        s1.sum().backward()
        return a.grad
    same_in_both(scenario)


def test_inplace_custom_function_on_a_view_with_an_unused_input():
    def scenario(lib):
        a = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        v = a.clone()[:]
        b = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)

        def forward(ctx, x, other):
            ctx.mark_dirty(x)
            return x.mul_(2)
        function(lib, forward, lambda ctx, g: (g * 2, None), name="InplaceFunc").apply(v, b).backward()
        return b.grad, a.grad
    assert same_in_both(scenario) == ("ok", (None, [2.0]))


def test_mv_with_an_expanded_vector_gradcheck_and_gradgradcheck():
    def scenario(lib):
        mat, vec = randn(lib, 2, 2), randn(lib, 1, requires_grad=True, seed=1)

        def fn(vec):
            return (mat @ vec.expand(2)).sum()
        return lib.autograd.gradcheck(fn, (vec,)), lib.autograd.gradgradcheck(fn, (vec,))
    assert same_in_both(scenario) == ("ok", (True, True))


def test_a_leaf_grad_has_the_strides_of_its_leaf():
    def scenario(lib):
        same = []
        for fa in (lib.contiguous_format, lib.channels_last):
            for fb in (lib.contiguous_format, lib.channels_last):
                a = randn(lib, 2, 3, 4, 5).to(memory_format=fa).requires_grad_()
                b = randn(lib, 2, 3, 4, 5, seed=1).to(memory_format=fb).requires_grad_()
                a.sum().backward()  # a broadcast gradient
                b.sum().backward()
                same += [a.grad.stride() == a.stride(), b.grad.stride() == b.stride()]
                a.grad = b.grad = None
                (a * b).sum().backward()  # one of the op's own
                same += [a.grad.stride() == a.stride(), b.grad.stride() == b.stride()]
        c = lib.empty_strided((2, 2), (4, 2), dtype=lib.float64).copy_(randn(lib, 2, 2)).requires_grad_()
        c.sum().backward()  # a leaf that is not dense gets a row-major gradient
        strides = [c.grad.stride()]
        c.grad = None
        (c * randn(lib, 2, 2, seed=2)).sum().backward()
        return all(same), strides + [c.grad.stride()]
    assert same_in_both(scenario) == ("ok", (True, [(2, 1), (2, 1)]))


# -- non-differentiable ops, warnings, versions ---------------------------------------------------------------------
def test_isin_and_signbit_outputs_do_not_require_grad():
    def scenario(lib):
        x = lib.tensor([[1, 2], [3, 4.0]], requires_grad=True)
        y = randn(lib, 3, 3, requires_grad=True)
        return lib.isin(x, lib.tensor([2, 3])).requires_grad, lib.signbit(y).requires_grad
    assert same_in_both(scenario) == ("ok", (False, False))


def test_warning_in_a_backward_reaches_python():
    def scenario(lib):
        def backward(ctx, g):
            warnings.warn("Warn from backward")
            return g
        a = lib.zeros((), dtype=lib.float64, requires_grad=True)
        b = function(lib, lambda ctx, x: x.clone(), backward).apply(a)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            b.backward()
        return [(c.category.__name__, str(c.message)) for c in w]
    assert same_in_both(scenario) == ("ok", [("UserWarning", "Warn from backward")])


def test_resize_bumps_the_version_only_when_the_shape_changes():
    def scenario(lib):
        x, y = lib.zeros(1), lib.zeros(3)
        seen = []
        for fn in (lambda: x.resize_((1, 2)), lambda: x.resize_as_(y), lambda: x.resize_((3,)),
                   lambda: x.resize_as_(y)):
            fn()
            seen.append(x._version)
        return seen
    assert same_in_both(scenario) == ("ok", [1, 2, 2, 2])


def test_backward_to_the_input_of_an_lstm_whose_parameters_are_frozen():
    def scenario(lib):
        lib.manual_seed(0)
        lstm = lib.nn.LSTM(2, 3)
        for p in lstm.parameters():
            p.requires_grad = False
        s = randn(lib, 1, 1, 2).float().requires_grad_()
        out, _ = lstm(s)
        out.sum().backward()
        return s.grad is None, float(s.grad.abs().sum()) == 0.0, [p.grad for p in lstm.parameters()]
    assert same_in_both(scenario) == ("ok", (False, False, [None] * 4))


def test_profiler_emit_itt_runs_an_op():
    pytest.importorskip("ittapi")  # the itt extra; without it, as PyTorch without ITT (tests/profiler/test_itt.py)

    def scenario(lib):
        a = lib.tensor([1, 2, 3], dtype=lib.float32)
        with lib.autograd.profiler.emit_itt():
            return a.add(1.0)
    assert same_in_both(scenario) == ("ok", [2.0, 3.0, 4.0])
