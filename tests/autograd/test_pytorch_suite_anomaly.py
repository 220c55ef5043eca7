"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd), eighth part: anomaly detection, gradients
not copied, gradcheck's checks, version counters. See test_pytorch_suite_basics.py for the method.
"""
import contextlib
import gc
import io
import warnings
import weakref

import pytest

import retrograd as rg
from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")


def _nan_function(lib, size=10):
    def forward(ctx, a, b, fail_0th):
        ctx.fail_0th = fail_0th
        return a.sum(0, keepdim=True)

    def backward(ctx, g):
        gi = g.clone().expand(size).clone()
        gi[0] = 0
        gi[0] /= 0
        return (gi, None, None) if ctx.fail_0th else (None, gi, None)
    return function(lib, forward, backward, name="MyFunc")


@pytest.mark.parametrize("case", ["off", "0th_after_forward", "1th_inside"])
def test_anomaly_mode_names_the_function_that_returned_nan(case):
    def scenario(lib):
        f = _nan_function(lib)
        inp = randn(lib, 10, requires_grad=True).abs()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if case == "off":
                f.apply(inp, inp, True).backward()
                return None
            if case == "0th_after_forward":
                out = f.apply(inp, inp, True)
                try:
                    with lib.autograd.detect_anomaly():
                        out.backward()
                except RuntimeError as e:
                    return str(e), any("No forward pass information" in str(w.message) for w in caught)
            with lib.autograd.detect_anomaly():
                try:
                    f.apply(inp, inp, False).backward()
                except RuntimeError as e:
                    return str(e), any("MyFunc.apply" in str(w.message) or "f.apply" in str(w.message)
                                       for w in caught)
    same_in_both(scenario)


def test_anomaly_mode_in_a_double_backward_names_the_inner_function():
    def scenario(lib):
        size = 10

        def f2_forward(ctx, a, b, fail_0th):
            ctx.fail_0th = fail_0th
            return a * 2.0 + b

        def f2_backward(ctx, g):
            g1, g2 = g.clone(), g.clone()
            g1[0] = 0
            g2[0] = 0
            if ctx.fail_0th:
                g1[0] /= 0
            else:
                g2[0] /= 0
            return g1, g2, None
        f2 = function(lib, f2_forward, f2_backward, name="MyFunc2")

        def f1_forward(ctx, a, fail_0th):
            ctx.fail_0th = fail_0th
            ctx.inp = a
            return a.sum(0, keepdim=True)

        def f1_backward(ctx, g):
            g = g.clone().expand(size)
            return f2.apply(g * ctx.inp, g + ctx.inp, ctx.fail_0th), None
        f1 = function(lib, f1_forward, f1_backward, name="MyFunc")
        out = []
        inp = randn(lib, size, requires_grad=True)
        ginp, = lib.autograd.grad(f1.apply(inp, True), (inp,), create_graph=True)
        ginp.sum().backward()
        for fail_0th in (True, False):
            inp = randn(lib, size, requires_grad=True)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    with lib.autograd.detect_anomaly():
                        ginp, = lib.autograd.grad(f1.apply(inp, fail_0th), (inp,), create_graph=True)
                        ginp.sum().backward()
                except RuntimeError as e:
                    out.append(str(e))
            # a warning for the inner node's forward trace, made in the outer backward, then one for the outer's
            messages = [str(w.message) for w in caught[1:]]
            out.append([(m.split(".")[0], "f2.apply" in m, "f1.apply" in m) for m in messages])
        return out
    same_in_both(scenario)


def test_anomaly_mode_warns_where_the_failing_backward_was_made():
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with lib.autograd.detect_anomaly():
                    a = randn(lib, 5, requires_grad=True)
                    d1 = a + 1
                    d2 = d1 ** 2
                    d1 += 1
                    lib.autograd.grad(d2.sum(), a)
            except RuntimeError as e:
                error = "modified by an inplace operation" in str(e)
        messages = [str(w.message) for w in caught]
        return (error, len(messages), "Anomaly Detection has been enabled" in messages[0],
                "Error detected in PowBackward0" in messages[1])
    assert same_in_both(scenario) == ("ok", (True, 2, True, True))


def test_gradient_is_not_copied_where_nothing_else_holds_it():
    def scenario(lib):
        ptr = [None]

        def backward(ctx, g):
            ptr[0] = g.data_ptr()
            return g, g
        add = function(lib, lambda ctx, a, b: a + b, backward, name="MyFunc")
        noncont = function(lib, lambda ctx, a: (ctx.__setattr__("size", a.size()), lib.tensor([1.0]))[1],
                           lambda ctx, g: lib.ones(1).expand(ctx.size), name="NonContGradFunc")
        a, b = randn(lib, 5, 6).float().requires_grad_(), randn(lib, 5, 6, seed=1).float().requires_grad_()
        noncont.apply(add.apply(a, b)).backward()
        copied = (a.grad.data_ptr() != ptr[0], b.grad.data_ptr() != ptr[0])
        a.grad = b.grad = None
        add.apply(a, b)[1][0].backward()
        pa, pb = a.grad.data_ptr(), b.grad.data_ptr()
        return copied, pa != pb, pa == ptr[0] or pb == ptr[0]
    assert same_in_both(scenario) == ("ok", ((True, True), True, True))


def test_gradcheck_of_a_single_tensor_input():
    def scenario(lib):
        f = lambda t: t.mul(5)  # noqa: E731
        x = randn(lib, 10, requires_grad=True)
        return lib.autograd.gradcheck(f, x), lib.autograd.gradgradcheck(f, x)
    assert same_in_both(scenario) == ("ok", (True, True))


def test_gradcheck_detects_a_non_reentrant_backward():
    def scenario(lib):
        def forward(ctx, x, jitter=0.0):
            ctx._jitter = jitter
            return x
        cls = []

        def backward(ctx, g):
            return cls[0].apply(g, ctx._jitter) * (1 + lib.rand_like(g) * ctx._jitter), None
        cls.append(function(lib, forward, backward, name="NonDetFunc"))
        f = cls[0]
        inp = randn(lib, 5, 5, requires_grad=True)
        out = [lib.autograd.gradcheck(lambda x: f.apply(x, 0.0), inp)]
        for check, jitter in ((lib.autograd.gradcheck, 1e-6), (lib.autograd.gradgradcheck, 1e-12)):
            try:
                check(lambda x: f.apply(x, jitter), inp)
            except RuntimeError as e:
                out.append("Backward is not reentrant" in str(e))
        out += [lib.autograd.gradcheck(lambda x: f.apply(x, 0.0), inp, nondet_tol=1e-5),
                lib.autograd.gradcheck(lambda x: f.apply(x, 1e-6), inp, nondet_tol=1e-5),
                lib.autograd.gradgradcheck(lambda x: f.apply(x, 1e-12), inp, nondet_tol=1e-5)]
        return out
    assert same_in_both(scenario) == ("ok", [True] * 6)


def test_version_counter_is_shared_by_views_and_kept_by_data_assignment():
    def scenario(lib):
        x = randn(lib, 1, 2)
        seen = [x._version]
        x.add_(1).add_(1)
        seen.append(x._version)
        xz = x[:]
        seen.append(xz._version)
        xz.add_(1)
        seen += [x._version, xz._version]
        x.data = randn(lib, 2, 3)
        seen.append(x._version)
        x.add_(1)
        seen += [x._version, xz._version]
        xz.add_(1)
        seen += [x._version, xz._version]
        return seen
    same_in_both(scenario)


def test_data_assignment_keeps_the_python_object():
    def scenario(lib):
        a, b = randn(lib, 1, 2), randn(lib, 1, 2, seed=1)
        before = id(b)
        b.data = a
        return id(b) == before, b
    same_in_both(scenario)


def test_anomaly_warning_made_an_error_by_a_filter_is_printed_and_the_pass_error_raised():
    def scenario(lib):
        printed = io.StringIO()
        with warnings.catch_warnings(record=True) as caught:
            try:
                with lib.autograd.detect_anomaly():
                    warnings.simplefilter("error")  # after the "enabled" warning: only the node's would raise
                    with contextlib.redirect_stderr(printed):
                        a = randn(lib, 5, requires_grad=True)
                        d1 = a + 1
                        d2 = d1 ** 2
                        d1 += 1
                        lib.autograd.grad(d2.sum(), a)
            except RuntimeError as e:
                error = "modified by an inplace operation" in str(e)
        return (error, len(caught), "Anomaly Detection has been enabled" in str(caught[0].message),
                "Error detected in PowBackward0" in printed.getvalue())
    assert same_in_both(scenario) == ("ok", (True, 1, True, True))


def test_check_nan_turned_on_inside_a_block_that_turned_it_off():
    def scenario(lib):
        nan = function(lib, lambda ctx, x: x.clone(), lambda ctx, g: lib.tensor(float("nan")).expand(4, 4),
                       name="MyFunc")
        seen = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(check_nan=False):
                inp = randn(lib, 4, 4, requires_grad=True)
                out = nan.apply(inp).sum()
                out.backward(retain_graph=True)
                seen.append(bool(inp.grad.isnan().all()))
                with lib.autograd.detect_anomaly(check_nan=True):
                    try:
                        out.backward(retain_graph=True)
                    except RuntimeError as e:
                        seen.append(str(e))
                out.backward()
                seen.append(lib.is_anomaly_check_nan_enabled())
        return seen, lib.is_anomaly_enabled()
    assert same_in_both(scenario) == ("ok", ([True, "Function 'MyFuncBackward' returned nan values in its 0th "
                                              "output.", False], False))


def _alive_after_dropping(make):
    """Whether the object ``make`` tags on its tensor's node lives, while it holds the tensor and once it is
    dropped, with the cyclic collector off (what a reference cycle keeps would stay)."""
    gc.disable()
    try:
        kept, ref = make()
        alive = ref() is not None
        del kept
        return alive, ref() is not None
    finally:
        gc.enable()


class _Tag:
    pass


def test_anomaly_records_of_a_double_backward_are_freed_with_the_graph():
    def scenario(lib):
        def make():
            x = randn(lib, 2, 2, requires_grad=True)
            t = x.exp()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with lib.autograd.detect_anomaly():
                    # the node of the second derivative records ExpBackward0 as the node that made it
                    grad = lib.autograd.grad(t, x, lib.ones_like(t), create_graph=True)
            tag = _Tag()
            t.grad_fn.metadata[0] = tag
            del grad
            return t, weakref.ref(tag)
        return _alive_after_dropping(make)
    assert same_in_both(scenario) == ("ok", (True, False))


def test_anomaly_failure_in_a_nested_backward_frees_the_records_with_the_graph():
    def scenario(lib):
        inner = function(lib, lambda ctx, x: x, lambda ctx, g: g + float("nan"), name="MyFunc2")

        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x

        def backward(ctx, g):
            x, = ctx.saved_tensors
            return inner.apply(x)
        outer = function(lib, forward, backward, name="MyFunc")
        message = []

        def make():
            inp = randn(lib, 1, requires_grad=True)
            out = outer.apply(inp)
            ginp, = lib.autograd.grad(out, (inp,), create_graph=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    with lib.autograd.detect_anomaly():
                        ginp.backward()
                except RuntimeError as e:
                    message.append(str(e))
            tag = _Tag()
            out.grad_fn.metadata[0] = tag
            return out, weakref.ref(tag)
        return _alive_after_dropping(make), message
    assert same_in_both(scenario) == ("ok", ((True, False), ["Function 'MyFunc2Backward' returned nan values in "
                                                            "its 0th output."]))


def test_data_assignment_to_a_tensor_requiring_grad_takes_only_floating_point():
    def scenario(lib):
        a = lib.tensor(1.0, requires_grad=True)
        a.data = lib.tensor(2.0)
        seen = [a.requires_grad, a]
        try:
            a.data = lib.tensor(3, dtype=lib.int64)
        except RuntimeError as e:
            seen.append(str(e))
        return seen, a.dtype == lib.float32
    assert same_in_both(scenario) == ("ok", ([True, 2.0, "data set to a tensor that requires gradients must be "
                                                         "floating point or complex dtype"], True))
