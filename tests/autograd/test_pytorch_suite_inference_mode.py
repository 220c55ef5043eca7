"""Scenarios of PyTorch's test/test_autograd.py, class TestAutogradInferenceMode, written again and run with
retrograd and torch on the same numbers. See test_pytorch_suite_basics.py for the method.

PyTorch asks ``torch.is_inference(t)``; both libraries have it, and the method ``t.is_inference()``, which
these scenarios use.
"""
import pytest

from errors_like_torch import first_sentence
from .test_pytorch_suite_basics import same_in_both

torch = pytest.importorskip("torch")

GRADS = (True, False)


def caught(fn):
    """What calling ``fn`` raised, as (type name, first sentence), or "ok"."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the point is to compare whatever is raised
        return type(e).__name__, first_sentence(e)
    return "ok"


def ones(lib, requires_grad=False):
    return lib.ones(1, 2, 3, dtype=lib.float64, requires_grad=requires_grad)


def _inplace(op):
    return {"add_": lambda x: x.add_(2), "transpose_": lambda x: x.transpose_(0, 1)}[op]


def test_context_manager_nests_and_inference_mode_false_turns_it_off():
    def scenario(lib):
        seen = [lib.is_inference_mode_enabled()]
        with lib.inference_mode():
            seen.append(lib.is_inference_mode_enabled())
            with lib.inference_mode(False):
                seen.append(lib.is_inference_mode_enabled())
            seen.append(lib.is_inference_mode_enabled())
        seen.append(lib.is_inference_mode_enabled())
        return seen
    assert same_in_both(scenario) == ("ok", [False, True, False, True, False])


@pytest.mark.parametrize("mode", [True, False, None])
@pytest.mark.parametrize("use_kwarg", [True, False])
def test_decorator_with_a_mode_or_bare(mode, use_kwarg):
    def scenario(lib):
        seen = []

        def func(x):
            seen.append(lib.is_inference_mode_enabled())
            return x * x
        if mode is None:
            decorated = lib.inference_mode(mode=func) if use_kwarg else lib.inference_mode(func)
        else:
            decorated = lib.inference_mode(mode=mode)(func) if use_kwarg else lib.inference_mode(mode)(func)
        out = []
        for requires_grad in GRADS:
            d = decorated(ones(lib, requires_grad))
            out.append((d.is_inference(), d.requires_grad))
        return seen, out
    same_in_both(scenario)


def test_factories_in_inference_mode_make_inference_tensors():
    def scenario(lib):
        with lib.inference_mode():
            c = ones(lib)
            tmp = ones(lib, requires_grad=True)
            tmp2 = ones(lib).requires_grad_(False)
            return [(t.requires_grad, t.is_inference()) for t in (c, tmp, tmp2)]
    assert same_in_both(scenario) == ("ok", [(False, True), (True, True), (False, True)])


def test_inplace_in_inference_mode_on_a_saved_normal_tensor_fails_its_backward():
    def scenario(lib):
        s = ones(lib, requires_grad=True)
        a = s.clone()
        out = a * a
        with lib.inference_mode():
            a.add_(2)
        return a.is_inference(), caught(lambda: out.backward(lib.ones_like(out)))
    result = same_in_both(scenario)
    assert result[1][1][0] == "RuntimeError"


def test_functional_op_on_an_inference_tensor_in_inference_mode():
    def scenario(lib):
        with lib.inference_mode():
            out = []
            for requires_grad in GRADS:
                f = ones(lib, requires_grad) * ones(lib, requires_grad)
                out.append((f.is_inference(), f.requires_grad))
            return out
    assert same_in_both(scenario) == ("ok", [(True, False)] * 2)


@pytest.mark.parametrize("op", ["add_", "transpose_", "copy_"])
def test_inplace_op_on_an_inference_tensor_in_inference_mode(op):
    def scenario(lib):
        fn = {"add_": lambda x: x.add_(2), "transpose_": lambda x: x.transpose_(0, 1),
              "copy_": lambda x: x.copy_(ones(lib))}[op]
        out = []

        @lib.inference_mode()
        def run():
            for requires_grad in GRADS:
                c = ones(lib, requires_grad)
                fn(c)
                out.append((c.is_inference(), c.requires_grad, tuple(c.shape)))
        run()
        return out
    same_in_both(scenario)


@pytest.mark.parametrize("op", ["resize_", "resize_as_"])
def test_resize_of_an_inference_tensor_in_inference_mode(op):
    def scenario(lib):
        out = []
        with lib.inference_mode():
            for requires_grad in GRADS:
                c = ones(lib, requires_grad)
                c.resize_(1, 2) if op == "resize_" else c.resize_as_(lib.ones(1, 2, dtype=lib.float64))
                out.append((c.is_inference(), c.requires_grad, tuple(c.shape)))
        return out
    assert same_in_both(scenario) == ("ok", [(True, True, (1, 2)), (True, False, (1, 2))])


def test_view_of_an_inference_tensor_in_inference_mode():
    def scenario(lib):
        with lib.inference_mode():
            return [(v.is_inference(), v.requires_grad) for v in (ones(lib, g).view(-1) for g in GRADS)]
    assert same_in_both(scenario) == ("ok", [(True, False)] * 2)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("op", ["mul", "add", "exp"])
def test_functional_op_on_an_inference_tensor_outside_inference_mode(requires_grad, op):
    def scenario(lib):
        with lib.inference_mode():
            c = ones(lib, requires_grad)
        f = {"mul": lambda: c * c, "add": lambda: c + c, "exp": lambda: c.exp()}[op]()
        return f.is_inference(), f.requires_grad, f.is_leaf
    assert same_in_both(scenario) == ("ok", (False, False, True))


@pytest.mark.parametrize("op, requires_grad", [("add_", False), ("add_", True),
                                               ("transpose_", False), ("transpose_", True)])
def test_inplace_op_on_an_inference_tensor_outside_inference_mode_raises(op, requires_grad):
    def scenario(lib):
        with lib.inference_mode():
            c = ones(lib, requires_grad)
        _inplace(op)(c)
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError"


@pytest.mark.parametrize("requires_grad", [False, True])
def test_view_of_an_inference_tensor_outside_inference_mode_is_an_inference_leaf(requires_grad):
    def scenario(lib):
        with lib.inference_mode():
            c = ones(lib, requires_grad)
        v = c.view(-1)
        return v.is_inference(), v.requires_grad, v._is_view(), v.is_leaf
    assert same_in_both(scenario) == ("ok", (True, False, False, True))


@pytest.mark.parametrize("op", ["add_", "transpose_"])
def test_normal_tensor_modified_in_place_in_inference_mode_stays_normal(op):
    def scenario(lib):
        fn, out = _inplace(op), []
        for requires_grad in GRADS:
            a = ones(lib, requires_grad).clone()
            with lib.inference_mode():
                fn(a)
                out.append((a.is_inference(), a.requires_grad))
                fn(a)
                out.append((a.is_inference(), a.requires_grad))
                v = a.view(-1)
                out.append((v.is_inference(), v.requires_grad))
        return out
    same_in_both(scenario)


@pytest.mark.parametrize("op", ["add_", "transpose_"])
def test_normal_tensor_modified_in_place_in_inference_mode_then_outside(op):
    def scenario(lib):
        fn, out = _inplace(op), []
        for requires_grad in GRADS:
            a = ones(lib, requires_grad).clone()
            with lib.inference_mode():
                fn(a)
            out.append((a.is_inference(), a.requires_grad))
            fn(a)
            fn(a)
            out.append((a.is_inference(), a.requires_grad))
            v = a.view(-1)
            out.append((v.is_inference(), v.requires_grad, tuple(v.shape)))
        return out
    same_in_both(scenario)


def test_view_of_a_normal_tensor_in_inference_mode_is_a_normal_view():
    def scenario(lib):
        out = []
        for requires_grad in GRADS:
            a = ones(lib, requires_grad).clone()
            with lib.inference_mode():
                v = a.view(-1)
                vv = v.view(-1)
                out.append((v.is_inference(), v.requires_grad, v._is_view()))
                out.append((vv.is_inference(), vv.requires_grad, vv._is_view(), vv.is_leaf))
                vv.add_(2)
                out.append((vv.is_inference(), vv.requires_grad, a._version == vv._version))
        return out
    same_in_both(scenario)


def test_view_made_in_inference_mode_used_outside_it():
    def scenario(lib):
        out = []
        for requires_grad in GRADS:
            a = ones(lib, requires_grad).clone()
            with lib.inference_mode():
                v = a.view(-1)
                out.append((v.is_inference(), v.requires_grad, v._is_view(), v.is_leaf))
            f = v * v
            out.append((f.is_inference(), f.requires_grad))
            out.append(caught(lambda: v.add_(2)))
            t = v.view(2, 3)
            out.append((t.is_inference(), t.requires_grad))
        return out
    result = same_in_both(scenario)
    assert result[1][2] == ("RuntimeError", "A view was created in inference mode and is being modified inplace in "
                                            "normal mode.")


def test_functional_op_mixing_an_inference_and_a_normal_tensor():
    def scenario(lib):
        out = []
        for requires_grad in GRADS:
            s = ones(lib, requires_grad)
            with lib.inference_mode():
                c = ones(lib, requires_grad)
            o = c.add(s)
            out.append((o.is_inference(), o.requires_grad))
            if requires_grad:
                o.backward(lib.ones_like(o))
                out.append(c.grad)
                out.append(caught(lambda: c * s))
        return out
    result = same_in_both(scenario)
    assert result[1][2] == ("RuntimeError", "Inference tensors cannot be saved for backward.")


def test_inplace_op_mixing_an_inference_and_a_normal_tensor():
    def scenario(lib):
        out = []
        for requires_grad in GRADS:
            a = ones(lib, requires_grad).clone()
            with lib.inference_mode():
                c = ones(lib)
            out.append(c.is_inference())
            out.append(caught(lambda: a.mul_(c)))
        return out
    result = same_in_both(scenario)
    assert result[1][1][0] == "RuntimeError" and result[1][3] == "ok"


def test_out_argument_of_an_inference_tensor():
    def scenario(lib):
        out = []
        for requires_grad in GRADS:
            s = ones(lib, requires_grad)
            with lib.inference_mode():
                c = ones(lib)
            out.append(caught(lambda: lib.mul(s, s, out=c)))
        return out
    assert same_in_both(scenario) == ("ok", [
        ("RuntimeError", "mul(): functions with out=... arguments don't support automatic differentiation, but one "
                         "of the arguments requires grad."),
        ("RuntimeError", "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
                         "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
                         "for more details.")])


def test_view_op_mixing_an_inference_and_a_normal_tensor():
    def scenario(lib):
        out = []
        for requires_grad in GRADS:
            s = ones(lib, requires_grad)
            with lib.inference_mode():
                c = ones(lib)
            t1, t2 = c.view_as(s), s.view_as(c)
            out.append((t1.is_inference(), t1.requires_grad, t2.is_inference(), t2.requires_grad))
        return out
    same_in_both(scenario)


@pytest.mark.parametrize("op", ["add_", "transpose_"])
def test_inplace_on_a_view_made_in_inference_mode_raises_where_its_base_requires_grad(op):
    def scenario(lib):
        fn, out = _inplace(op), []
        for requires_grad in GRADS:
            a = ones(lib, requires_grad).clone()
            with lib.inference_mode():
                v = a.view_as(a)
            out.append(caught(lambda: fn(v)))
        return out
    result = same_in_both(scenario)
    assert result[1][0][0] == "RuntimeError" and result[1][1] == "ok"


@pytest.mark.parametrize("op", ["add_", "transpose_"])
def test_grad_fn_of_a_view_made_in_inference_mode_after_its_base_changed_raises(op):
    def scenario(lib):
        fn, out = _inplace(op), []
        for requires_grad in GRADS:
            a = ones(lib, requires_grad).clone()
            with lib.inference_mode():
                v = a.view(-1)
            fn(a)
            out.append(caught(lambda: v.grad_fn))
        return out
    result = same_in_both(scenario)
    assert result[1][0] == ("RuntimeError", "A view was created in inference mode and its base or another view of "
                                            "its base has been modified inplace in normal mode.")


def test_is_inference_as_a_function():
    def scenario(lib):
        with lib.inference_mode():
            c = ones(lib)
        return lib.is_inference(c), lib.is_inference(ones(lib))
    assert same_in_both(scenario) == ("ok", (True, False))
