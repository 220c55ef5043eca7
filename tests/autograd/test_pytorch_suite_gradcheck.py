"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) on gradcheck and gradgradcheck, each in
both of gradcheck's modes where PyTorch's test runs both. See test_pytorch_suite_basics.py for the method.
"""
import importlib
import re
import warnings

import pytest

import retrograd as rg
from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")

MODES = pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])


def raised(call):
    """What ``call()`` returned, or the type and first sentence (of its first line) of what it raised."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the outcome is compared, whatever it is
        line = str(e).split("\n")[0].replace("torch.", "retrograd.")
        return type(e).__name__, re.split(r"(?<=\.)\s*(?=[A-Z])", line)[0]


def messages(caught):
    return [(w.category.__name__, str(w.message).split(".")[0]) for w in caught]


def adding_to_the_gradient(lib, amount=1e-2):
    """The identity, through a hook that adds ``amount`` to the gradient: a backward gradcheck must reject."""
    def fn(x):
        y = x.clone()
        y.register_hook(lambda g: g + amount)
        return y
    return fn


@MODES
def test_gradcheck_and_gradgradcheck_of_a_function_of_one_tensor(fast_mode):
    def scenario(lib):
        x = randn(lib, 10, requires_grad=True)
        return (lib.autograd.gradcheck(lambda t: t.mul(5), x, fast_mode=fast_mode),
                lib.autograd.gradgradcheck(lambda t: t.mul(5), x, fast_mode=fast_mode))
    assert same_in_both(scenario) == ("ok", (True, True))


def _jittery(lib):
    """The identity whose backward multiplies by 1 + jitter * noise, itself through this Function."""
    cls = []

    def forward(ctx, x, jitter=0.0):
        ctx._jitter = jitter
        return x

    def backward(ctx, g):
        return cls[0].apply(g, ctx._jitter) * (1 + lib.rand_like(g) * ctx._jitter), None
    cls.append(function(lib, forward, backward, name="NonDetFunc"))
    return cls[0]


@MODES
def test_gradcheck_of_a_backward_that_is_not_deterministic(fast_mode):
    def scenario(lib):
        f = _jittery(lib)
        inp = randn(lib, 5, 5, requires_grad=True)
        check = dict(check_batched_grad=False, fast_mode=fast_mode)
        return [lib.autograd.gradcheck(lambda x: f.apply(x, 0.0), inp, **check),
                raised(lambda: lib.autograd.gradcheck(lambda x: f.apply(x, 1e-6), inp, **check)),
                raised(lambda: lib.autograd.gradgradcheck(lambda x: f.apply(x, 1e-12), inp, **check)),
                lib.autograd.gradcheck(lambda x: f.apply(x, 0.0), inp, nondet_tol=1e-5, **check),
                lib.autograd.gradcheck(lambda x: f.apply(x, 1e-6), inp, nondet_tol=1e-5, **check),
                lib.autograd.gradgradcheck(lambda x: f.apply(x, 1e-12), inp, nondet_tol=1e-5, **check)]
    reentrant = ("GradcheckError", "Backward is not reentrant, i.e., running backward with same input and grad_output "
                                   "multiple times gives different values, although analytical gradient matches "
                                   "numerical gradient.")
    assert same_in_both(scenario) == ("ok", [True, reentrant, reentrant, True, True, True])


@MODES
def test_gradcheck_refuses_inputs_it_cannot_check_even_without_raise_exception(fast_mode):
    def scenario(lib):
        seen = [raised(lambda: lib.autograd.gradcheck(lambda x: x, (randn(lib, 10),), raise_exception=False,
                                                      fast_mode=fast_mode))]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seen.append(lib.autograd.gradcheck(lambda x: x, (lib.ones(1, requires_grad=True),), atol=1e-1,
                                               fast_mode=fast_mode))
        seen.append(messages(caught))
        expanded = lib.ones(1, dtype=lib.float64, requires_grad=True).expand((2, 2))
        seen.append(raised(lambda: lib.autograd.gradcheck(lambda x: x, (expanded,), raise_exception=False,
                                                          fast_mode=fast_mode)))
        return seen
    outcome = same_in_both(scenario)
    assert outcome[1][0][0] == "ValueError" and outcome[1][3][0] == "RuntimeError"
    assert outcome[1][2] == [("UserWarning", "Input #0 requires gradient and is not a double precision floating point "
                                             "or complex")]


@MODES
def test_gradcheck_of_a_function_whose_outputs_are_not_differentiable(fast_mode):
    def scenario(lib):
        x = lib.ones((1,), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tensor() of a tensor that requires grad
            return (raised(lambda: lib.autograd.gradcheck(lambda t: lib.tensor([t.item()]), x, fast_mode=fast_mode)),
                    lib.autograd.gradcheck(lambda t: lib.tensor([t.item()]), x, raise_exception=False,
                                           fast_mode=fast_mode),
                    lib.autograd.gradcheck(lambda t: (), (x,), fast_mode=fast_mode))
    assert same_in_both(scenario) == ("ok", (("GradcheckError", "Numerical gradient for function expected to be zero"),
                                             False, True))


@MODES
def test_gradcheck_of_a_backward_not_multiplied_by_grad_output(fast_mode):
    def scenario(lib):
        x = lib.ones(1, dtype=lib.float64, requires_grad=True)
        fn = adding_to_the_gradient(lib)
        return (raised(lambda: lib.autograd.gradcheck(fn, (x,), atol=1e-1, fast_mode=fast_mode)),
                lib.autograd.gradcheck(fn, (x,), atol=1e-1, raise_exception=False, fast_mode=fast_mode))
    assert same_in_both(scenario) == ("ok", (("GradcheckError", "backward not multiplied by grad_output"), False))


@MODES
def test_gradcheck_of_a_backward_that_fails_on_an_undefined_gradient(fast_mode):
    def scenario(lib):
        def fn(x):
            def hook(g):
                if g is None:
                    raise RuntimeError("x is undefined")
            y = x.clone()
            y.register_hook(hook)
            return y
        x = lib.ones(1, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seen = (raised(lambda: lib.autograd.gradcheck(fn, (x,), fast_mode=fast_mode)),
                    lib.autograd.gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode))
        return seen, messages(caught)
    assert same_in_both(scenario) == ("ok", ((("GradcheckError", "Expected backward function to handle undefined "
                                                                 "output grads."), False),
                                             [("UserWarning", "Backwards compatibility: New undefined gradient support "
                                                              "checking feature is enabled by default, but it may break "
                                                              "existing callers of this function")] * 2))


@MODES
def test_gradcheck_jacobian_mismatch_is_a_gradcheck_error_and_other_errors_pass_through(fast_mode):
    def scenario(lib):
        gradcheck_module = importlib.import_module(lib.__name__ + ".autograd.gradcheck")
        x = lib.ones(2, 2, requires_grad=True)
        fn = adding_to_the_gradient(lib)
        try:
            lib.autograd.gradcheck(fn, (x,), fast_mode=fast_mode)
        except gradcheck_module.GradcheckError as e:
            error = (isinstance(e, RuntimeError), str(e).split(",")[0])

        def fails(t):
            raise RuntimeError("Not a GradcheckError!")
        return (error, lib.autograd.gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode),
                raised(lambda: lib.autograd.gradcheck(fails, (x,), raise_exception=False, fast_mode=fast_mode)))
    assert same_in_both(scenario) == ("ok", ((True, "Jacobian mismatch for output 0 with respect to input 0"), False,
                                             ("RuntimeError", "Not a GradcheckError!")))


@MODES
def test_gradcheck_of_outputs_whose_shape_or_dtype_depend_on_the_values(fast_mode):
    def scenario(lib):
        a = lib.ones(1, dtype=lib.float64, requires_grad=True)
        grows = lambda x: lib.cat([x, x]) if lib.all(x >= 1) else x  # noqa: E731
        casts = lambda x: x.to(lib.float32) if lib.all(x >= 1) else x  # noqa: E731
        return [raised(lambda: lib.autograd.gradcheck(f, (a,), fast_mode=fast_mode)) for f in (grows, casts)]
    outcome = same_in_both(scenario)
    assert [kind for kind, _ in outcome[1]] == ["AssertionError"] * 2
    assert "return outputs with the same shape when inputs are perturbed" in outcome[1][0][1]
    assert "return outputs with the same dtype when inputs are perturbed" in outcome[1][1][1]


def test_deprecated_numerical_and_analytical_jacobians():
    def scenario(lib):
        gradcheck_module = importlib.import_module(lib.__name__ + ".autograd.gradcheck")
        numerical, analytical = gradcheck_module.get_numerical_jacobian, gradcheck_module.get_analytical_jacobian
        a, b = randn(lib, 2, 2, requires_grad=True), randn(lib, 2, 2, requires_grad=True, seed=1)
        twice = lambda xy: (2 * xy[0] + xy[1], xy[0] + 2 * xy[1])  # noqa: E731 - takes its inputs as one tuple
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seen = [numerical(twice, (a, b), target=a, eps=1e-6), numerical(twice, (a, b), eps=1e-6),
                    raised(lambda: numerical(twice, (a, b), eps=1e-6, grad_out=2.0)),
                    analytical((a, b), twice((a, b))[0]),
                    analytical((a,), _jittery(lib).apply(a, 1e-6))[1:],
                    raised(lambda: analytical((a,), a * 2, grad_out=2.0))]
        seen[:2] = [[round(float(v), 6) for j in jacobians for v in j.flatten()] + [len(jacobians)]
                    for jacobians in seen[:2]]
        return seen, messages(caught)
    outcome = same_in_both(scenario)
    (numerical_a, numerical_ab, _, analytical_ab, nondet, _), warned = outcome[1]
    assert numerical_a == [2.0 * (i % 5 == 0) for i in range(16)] + [1]
    assert analytical_ab[1:] == (True, True, True) and nondet == (False, True, True)
    assert {w for w in warned} == {("FutureWarning", "`get_numerical_jacobian` was part of PyTorch's private API and "
                                                     "not meant to be exposed"),
                                   ("FutureWarning", "`get_analytical_jacobian` was part of PyTorch's private API and "
                                                     "not meant to be exposed")}


# -- forward mode ---------------------------------------------------------------------------------------
def test_gradcheck_forward_ad_reports_a_wrong_tangent():
    def scenario(lib):
        fw = lib.autograd.forward_ad

        def wrong(x, y):
            if fw._current_level >= 0:  # only inside the level gradcheck enters
                primal, tangent = fw.unpack_dual(y)
                y = fw.make_dual(primal, tangent * 1.1)
            return x + y, y
        seen = []
        for fast_mode in (True, False):
            x, y = randn(lib, 2, requires_grad=True), randn(lib, 2, requires_grad=True, seed=1)
            seen.append(lib.autograd.gradcheck(lambda a, b: (a + b, b), (x, y), check_forward_ad=True,
                                               fast_mode=fast_mode))
            seen.append(raised(lambda: lib.autograd.gradcheck(wrong, (x, y), check_forward_ad=True,
                                                              fast_mode=fast_mode)))
        return seen, fw._current_level
    mismatch = ("GradcheckError", "Jacobian computed with forward mode mismatch for output 0 with respect to input 1,")
    assert same_in_both(scenario) == ("ok", ([True, mismatch] * 2, -1))


def _identity_pair(lib, calls=None, seen=None):
    """``(x.clone(), y.clone())`` with a jvp, counting its jvp calls and recording what forward sees in a level."""
    def forward(ctx, x, y):
        if seen is not None and lib.autograd.forward_ad._current_level >= 0:
            seen.add((x.requires_grad, y.requires_grad))
        return x.clone(), y.clone()

    def jvp(ctx, x_t, y_t):
        if calls is not None:
            calls[0] += 1
        return x_t, y_t
    return function(lib, forward, lambda ctx, gx, gy: (gx, gy), name="UserFn", jvp=jvp)


FORWARD_ONLY = [dict(check_undefined_grad=False, check_batched_forward_grad=False),
                dict(check_undefined_grad=True, check_batched_forward_grad=False),
                dict(check_undefined_grad=True, check_batched_forward_grad=True)]


def test_gradcheck_forward_ad_passes_its_inputs_detached():
    def scenario(lib):
        seen = set()
        f = _identity_pair(lib, seen=seen)
        x, y = randn(lib, 2, requires_grad=True), randn(lib, 2, requires_grad=True, seed=1)
        checked = [lib.autograd.gradcheck(f.apply, (x, y), check_forward_ad=True, check_backward_ad=False,
                                          check_batched_grad=False, **kw) for kw in FORWARD_ONLY]
        checked.append(lib.autograd.gradcheck(f.apply, (x, y.detach()), check_forward_ad=True, check_backward_ad=False,
                                              check_batched_grad=False, **FORWARD_ONLY[2]))
        return checked, sorted(seen)
    assert same_in_both(scenario) == ("ok", ([True] * 4, [(False, False)]))


def test_gradcheck_forward_ad_calls_jvp_once_per_check_as_pytorch():
    def scenario(lib):
        calls = [0]
        f = _identity_pair(lib, calls=calls)
        x, y = randn(lib, 1, requires_grad=True), randn(lib, 1, requires_grad=True, seed=1)
        counts = []
        for kw, second in [(kw, y) for kw in FORWARD_ONLY] + [(FORWARD_ONLY[2], y.detach())]:
            calls[0] = 0
            lib.autograd.gradcheck(f.apply, (x, second), check_forward_ad=True, check_backward_ad=False,
                                   check_batched_grad=False, **kw)
            counts.append(calls[0])
        return counts
    # per input: the Jacobian (+1); a tangent of zeros and no tangent (+1 each where the other input is dual);
    # a batch of two tangents by vmap and by a loop (+3)
    assert same_in_both(scenario) == ("ok", [2, 6, 12, 5])


def test_gradcheck_checks_only_the_modes_asked_for():
    def scenario(lib):
        def forward(ctx, foo, fwd_bad, bwd_bad):
            ctx.fwd_bad, ctx.bwd_bad = fwd_bad, bwd_bad
            return foo * 2

        def vjp(ctx, g):
            if ctx.bwd_bad:
                raise RuntimeError("FAIL BWD")
            return 2 * g, None, None

        def jvp(ctx, t, _1, _2):
            if ctx.fwd_bad:
                raise RuntimeError("FAIL FWD")
            return 2 * t
        body = {"forward": staticmethod(forward), "vjp": staticmethod(vjp), "jvp": staticmethod(jvp)}
        f = type("UserFn", (lib.autograd.Function,), body)
        seen = []
        for fast_mode in (True, False):
            for forward_ad in (True, False):
                for backward_ad in (True, False):
                    for fwd_bad in (True, False):
                        for bwd_bad in (True, False):
                            x = randn(lib, 2, requires_grad=True)
                            seen.append(raised(lambda: lib.autograd.gradcheck(
                                f.apply, (x, fwd_bad, bwd_bad), check_forward_ad=forward_ad,
                                check_backward_ad=backward_ad, check_undefined_grad=backward_ad,
                                check_batched_grad=backward_ad, fast_mode=fast_mode)))
        return seen
    outcome = same_in_both(scenario)
    assert outcome[1][:4] == [("RuntimeError", "FAIL BWD"), ("RuntimeError", "FAIL FWD"), ("RuntimeError", "FAIL BWD"),
                              True]  # both checks: a failing backward is found first


def test_gradcheck_batched_forward_grad_with_non_tensor_and_unrelated_inputs_and_a_random_jvp():
    def scenario(lib):
        x = randn(lib, 2, requires_grad=True)
        only = dict(check_forward_ad=True, check_backward_ad=False, check_batched_grad=False,
                    check_undefined_grad=False, check_batched_forward_grad=True)

        def jvp(ctx, t):
            lib.randn_like(t)
            return t * 2
        body = {"forward": staticmethod(lambda ctx, foo: foo * 2), "vjp": staticmethod(lambda ctx, g: g * 2),
                "jvp": staticmethod(jvp)}
        random_jvp = type("Fn", (lib.autograd.Function,), body)
        return (lib.autograd.gradcheck(lambda a, b: (a.clone(), a + 1), (x, 1), **only),
                lib.autograd.gradcheck(lambda a, c: a.clone(), (x, x.clone()), **only),
                raised(lambda: lib.autograd.gradcheck(random_jvp.apply, (x,), check_forward_ad=True,
                                                      check_batched_forward_grad=True)))
    assert same_in_both(scenario) == ("ok", (True, True, (
        "GradcheckError", "While computing batched gradients, got: vmap: We do not yet support calling random "
                          "operations inside of vmap.")))


def test_batched_gradients_refuse_a_random_backward_with_pytorchs_words():
    def scenario(lib):
        def backward(ctx, g):
            lib.randn_like(g)
            return g * 2
        f = function(lib, lambda ctx, a: a * 2, backward, name="F")
        x = randn(lib, 3, requires_grad=True)
        return raised(lambda: lib.autograd.grad(f.apply(x), x, lib.eye(3, dtype=lib.float64), is_grads_batched=True))
    assert same_in_both(scenario) == ("ok", ("RuntimeError", "vmap: We do not yet support calling random operations "
                                                             "inside of vmap."))


# -- MKL-DNN ----------------------------------------------------------------------------------------------
@MODES
def test_gradcheck_of_mkldnn_inputs_and_outputs(fast_mode):
    def scenario(lib):
        a = randn(lib, 10).float().requires_grad_()
        b = randn(lib, 10, seed=1).float().to_mkldnn().requires_grad_()
        c = randn(lib, 10, seed=2).float().to_mkldnn().requires_grad_()
        root = randn(lib, 4, 5, seed=3).float().requires_grad_()
        check = dict(check_batched_grad=False, fast_mode=fast_mode)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            return (lib.autograd.gradcheck(lambda x, y: x + y.to_dense(), (a, b), atol=1e-1, **check),
                    lib.autograd.gradcheck(lambda x, y: x.to_dense() + y.to_dense(), (b, c), atol=1e-1, **check),
                    raised(lambda: lib.autograd.gradcheck(lambda x: x.to_dense(), (b,), raise_exception=False,
                                                          check_forward_ad=True, atol=1e-1, rtol=1e-1,
                                                          fast_mode=fast_mode)),
                    raised(lambda: lib.autograd.gradcheck(lambda x: x.to_mkldnn(), (root,), raise_exception=False,
                                                          **check)),
                    sorted(set(messages(caught))))
    float32 = ("UserWarning", "Input #0 requires gradient and is not a double precision floating point or complex")
    assert same_in_both(scenario) == ("ok", (True, True, ("ValueError", "MKLDNN inputs are not support for forward AD "
                                                                        "gradcheck."),
                                             ("ValueError", "MKLDNN output is not supported at gradcheck yet."),
                                             [float32, ("UserWarning", "Input #1 requires gradient and is not a "
                                                                       "double precision floating point or complex")]))
