"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about a tensor's autograd attributes as
Python sees them: ``.grad`` and its warning, ``grad_dtype``, ``shape``, ``dir()``, the legacy tensor types.
See test_pytorch_suite_basics.py for the method.
"""
import warnings

import pytest

from errors_like_torch import first_sentence
from .test_pytorch_suite_basics import same_in_both

torch = pytest.importorskip("torch")


def test_reading_grad_warns_only_on_a_non_leaf_that_does_not_retain_it():
    def scenario(lib):
        counts = []
        t = lib.empty(1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t.requires_grad_()
            t.grad
            counts.append(len(caught))
            t = t.clone()
            t.grad
            counts.append(len(caught))
            t.retain_grad()
            t.grad
            counts.append(len(caught))
        return counts, [(w.category.__name__, first_sentence(w.message)) for w in caught]
    assert same_in_both(scenario)[1][0] == [0, 1, 1]


def test_volatile_is_always_false_and_warns_that_it_was_removed():
    def scenario(lib):
        v = lib.randn(3, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            before = v.volatile
            v.volatile = True
            after = v.volatile
        return before, after, [(w.category.__name__, first_sentence(w.message)) for w in caught]
    assert same_in_both(scenario)[1][:2] == (False, False)


def _error(call):
    try:
        return call()
    except RuntimeError as e:
        return ("RuntimeError", first_sentence(e))


def _name(dtype):
    return None if dtype is None else str(dtype).split(".")[1]


def test_grad_dtype_of_leaves_and_what_it_allows_to_assign_to_grad():
    def scenario(lib):
        seen = []
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        seen.append(_name(leaf.grad_dtype))  # the tensor's own dtype by default
        leaf.grad_dtype = lib.float16
        seen.append(_name(leaf.grad_dtype))
        leaf.grad_dtype = None  # any dtype
        seen.append(leaf.grad_dtype)
        non_leaf = leaf * 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's getter reads the non-leaf's .grad, which warns
            seen += [_error(lambda: non_leaf.grad_dtype), _error(lambda: setattr(non_leaf, "grad_dtype", lib.float16)),
                     _error(lambda: leaf[:1].grad_dtype), _error(lambda: setattr(leaf, "grad_dtype", 3)),
                     _name(lib.ones(2).grad_dtype)]
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.grad = lib.tensor([1.0, 1.0])
        x.grad = None
        x.grad_dtype = lib.float16
        seen.append(_error(lambda: setattr(x, "grad", lib.tensor([1.0, 1.0]))))
        x.grad = None
        x.grad_dtype = None
        x.grad = lib.tensor([1.0, 1.0], dtype=lib.float64)
        seen.append(_name(x.grad.dtype))
        g = lib.tensor([1.0, 2.0], requires_grad=True)
        g.grad = lib.tensor([1.0, 1.0])
        g.grad_dtype = lib.float32  # the dtype of the gradient already there: allowed
        seen += [_name(g.grad_dtype), _error(lambda: setattr(g, "grad_dtype", lib.float16))]
        g.grad_dtype = None
        seen.append(g.grad_dtype)
        g.grad = None
        g.grad_dtype = lib.float16
        seen.append(_name(g.grad_dtype))
        return seen
    result = same_in_both(scenario)
    assert result[1][:3] == ["float32", "float16", None]


def test_gradients_reaching_a_leaf_are_cast_to_its_grad_dtype_or_taken_as_they_come():
    def scenario(lib):
        mismatched = type("MismatchedGradientFunction", (lib.autograd.Function,), {
            "forward": staticmethod(lambda ctx, x: x * 2),
            "backward": staticmethod(lambda ctx, g: g.to(lib.float64))})
        seen = []
        for wanted in ("default", None, lib.float16):
            leaf = lib.tensor([1.0, 2.0], requires_grad=True)
            if wanted != "default":
                leaf.grad_dtype = wanted
            mismatched.apply(leaf).sum().backward()
            seen.append((_name(leaf.grad.dtype), leaf.grad))
        h = lib.tensor([1.0, 2.0], requires_grad=True)
        _ = h.clone()  # its AccumulateGrad exists before grad_dtype changes
        h.grad_dtype = None
        mismatched.apply(h).sum().backward()
        seen.append(_name(h.grad.dtype))
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        p.grad_dtype = lib.float64  # set before any op makes its AccumulateGrad
        (p * 2).sum().backward()
        seen.append((_name(p.grad.dtype), p.grad))
        # a gradient added into an existing .grad keeps that .grad's dtype (float16 where PyTorch's test has bfloat16)
        k = lib.tensor([1.0, 2.0], requires_grad=True)
        k.grad_dtype = None
        (k * 2).sum().backward()
        k.grad = k.grad.to(lib.float16)
        (k * 3).sum().backward()
        low = lib.tensor([3.0, 4.0], dtype=lib.float16, requires_grad=True)
        low.grad_dtype = None
        (low * 2).sum().backward()
        low.grad = low.grad.to(lib.float32)
        (low * 3).sum().backward()
        seen += [(_name(k.grad.dtype), k.grad), (_name(low.grad.dtype), low.grad)]
        return seen
    result = same_in_both(scenario)
    assert [r[0] for r in result[1][:3]] == ["float32", "float64", "float16"]


def test_legacy_tensor_types_classify_convert_and_construct():
    def scenario(lib):
        x = lib.randn(5, 5)
        seen = [isinstance(x.float(), lib.FloatTensor), isinstance(x.int(), lib.IntTensor),
                isinstance(x, lib.DoubleTensor), x.type().split(".", 1)[1], x.double().type().split(".", 1)[1]]
        for t in (lib.DoubleTensor, lib.FloatTensor, lib.IntTensor, lib.ByteTensor):
            for as_variable in (True, False):
                y = lib.randint(5, (5, 5), dtype=t.dtype)
                y = lib.autograd.Variable(y) if as_variable else y
                t_dtype = t().dtype
                seen += [isinstance(x.type(t), t), isinstance(x.type_as(y), t), isinstance(x.type(t_dtype), t),
                         x.type(t_dtype).dtype is t_dtype, y.data_ptr() == y.type(t).data_ptr(),
                         x.type(y.type()).type() == y.type()]
        seen += [tuple(lib.FloatTensor(2, 3).shape), lib.LongTensor([1, 2]).tolist(), tuple(lib.FloatTensor().shape),
                 lib.BoolTensor([True]).dtype is lib.bool]
        return seen
    result = same_in_both(scenario)
    assert result[1][3:5] == ["FloatTensor", "DoubleTensor"]


@pytest.mark.parametrize("source", ["float32", "float64"])
def test_the_gradient_through_a_type_conversion_has_the_leafs_legacy_type(source):
    def scenario(lib):
        v = lib.randn(5, 5, dtype=getattr(lib, source), requires_grad=True)
        (v.double() if source == "float32" else v.float()).sum().backward()
        return v.grad, v.grad.type() == v.type(), type(v.grad) is type(v)
    assert same_in_both(scenario)[1][1:] == (True, True)


def test_increment_version_counts_a_change_except_of_an_inference_tensor():
    def scenario(lib):
        seen = []
        for t in (lib.rand(5, requires_grad=True), lib.zeros(5, dtype=lib.int32)):
            before = t._version
            lib.autograd.graph.increment_version(t)
            seen.append(t._version - before)
        with lib.inference_mode():
            inference = lib.rand(5, requires_grad=True)
            lib.autograd.graph.increment_version(inference)
        lib.autograd.graph.increment_version(inference)  # outside the mode too: no error
        lib.autograd.graph.increment_version([lib.ones(1), inference])
        return seen, inference.is_inference()
    assert same_in_both(scenario) == ("ok", ([1, 1], True))


def test_shape_is_a_size_of_the_dims():
    def scenario(lib):
        x = lib.randn(3, 4)
        return len(x.shape), x.shape[0], x.shape[1], type(x.shape).__name__, tuple(x.shape[::-1])
    assert same_in_both(scenario) == ("ok", (2, 3, 4, "Size", (4, 3)))


def test_versions_kept_by_unsafe_preserve_version_counter():
    def scenario(lib):
        x = lib.ones(2, requires_grad=True).clone()
        x.add_(1)
        x.add_(2)
        seen = [x._version]
        with lib.autograd._unsafe_preserve_version_counter(x):
            x.mul_(2)
            x.mul_(3)
        seen.append(x._version)
        y = lib.ones(2, requires_grad=True).clone()
        with lib.autograd._unsafe_preserve_version_counter((x, y)):
            x.mul_(2)
            y.mul_(3)
        seen += [x._version, y._version]
        leaf = lib.ones(2, requires_grad=True)
        saved = leaf * 1
        product = saved * saved  # saves `saved`
        with lib.autograd._unsafe_preserve_version_counter(saved):
            with lib.no_grad():
                saved.mul_(5)
        product.sum().backward()  # the change is hidden: the new values are used
        return seen, leaf.grad
    assert same_in_both(scenario) == ("ok", ([2, 2, 2, 0], [10.0, 10.0]))


def test_every_name_dir_lists_can_be_read():
    def scenario(lib):
        x = lib.randn(10, 10)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            unreadable = [key for key in dir(x) if key != "imag" and not hasattr(x, key)]
        try:
            hasattr(x, "imag")  # listed, but a real tensor has no imaginary part: an error, not False
        except RuntimeError as e:
            imag = str(e)
        y = lib.ones(2, requires_grad=True).clone()
        y.real = lib.tensor([2.0, 3.0])  # a real tensor is its own real part
        return "shape" in dir(x), unreadable, imag, x.real is x, x.is_complex(), y, y.grad_fn.name()
    assert same_in_both(scenario) == ("ok", (True, [], "imag is not implemented for tensors with non-complex dtypes.",
                                             True, False, [2.0, 3.0], "torch::autograd::CopyBackwards"))
