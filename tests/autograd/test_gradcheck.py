"""gradcheck and gradgradcheck: each check and its message, against PyTorch's on the same functions."""
import importlib
import re
import warnings

import numpy as np
import pytest

import retrograd as rg

gradcheck_module = importlib.import_module("retrograd.autograd.gradcheck")  # the attribute is the function

torch = pytest.importorskip("torch")

LIBS = [rg, torch]


def first_sentence(message):
    """The first line of ``message`` up to its first period followed by a capital letter."""
    line = str(message).split("\n")[0]
    return re.split(r"(?<=\.)\s*(?=[A-Z])", line)[0]


def outcome(fn):
    """``fn()``'s result, or the type and first sentence of what it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("returned", fn())
    except Exception as e:  # noqa: BLE001 - the outcome is compared, whatever it is
        return (type(e).__name__, first_sentence(e))


def same_outcome(make):
    """``make(lib)`` builds a call; it gives the same outcome in retrograd and in PyTorch."""
    ours, theirs = outcome(make(rg)), outcome(make(torch))
    assert ours == theirs
    return ours


def x64(lib, values=(1.0, 2.0, 3.0)):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


# Functions with a deliberately wrong backward, in each library.
def doubling(lib):
    """The identity whose backward doubles the gradient."""
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    return Double.apply


def noisy(lib):
    """The identity whose backward differs a little on every call."""
    calls = [0]

    class Noisy(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            calls[0] += 1
            return grad * (1 + 1e-9 * calls[0])
    return Noisy.apply


def ignoring_zero_grad(lib):
    """The identity, except that a zero grad_output gives ones."""
    class Ignores(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad + (grad == 0).to(grad.dtype).prod()
    return Ignores.apply


def rejecting_undefined(lib, nonzero=False):
    """The identity whose backward raises on an undefined gradient (or returns ones for it)."""
    class Strict(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            if grad is None:
                if nonzero:
                    return lib.ones(3, dtype=lib.float64)
                raise RuntimeError("undefined gradient")
            return grad
    return Strict.apply


# -- Jacobian comparisons --------------------------------------------------------------------------
def test_gradcheck_passes_correct_gradients_of_several_outputs():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(
        lambda t, u: ((t * u).sin(), t.sum() * 2), (x64(lib), x64(lib, (0.5, -1.0, 2.0))))) == ("returned", True)


def test_gradcheck_wrong_backward_reports_jacobian_mismatch_with_both_matrices():
    result = same_outcome(lambda lib: lambda: lib.autograd.gradcheck(doubling(lib), (x64(lib),)))
    assert result == ("GradcheckError", "Jacobian mismatch for output 0 with respect to input 0,")
    with pytest.raises(gradcheck_module.GradcheckError) as info:
        rg.autograd.gradcheck(doubling(rg), (x64(rg),))
    message = str(info.value)
    numerical = message.split("numerical:")[1].split("analytical:")[0]
    analytical = message.split("analytical:")[1]
    assert "[1.0000, 0.0000, 0.0000]" in numerical and "[0.0000, 0.0000, 1.0000]" in numerical
    assert "[2., 0., 0.]" in analytical and "[0., 0., 2.]" in analytical


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(gradcheck_module.GradcheckError, RuntimeError)
    with pytest.raises(RuntimeError):
        rg.autograd.gradcheck(doubling(rg), (x64(rg),))


def test_gradcheck_raise_exception_false_returns_false():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(doubling(lib), (x64(lib),),
                                                                    raise_exception=False)) == ("returned", False)
    assert same_outcome(lambda lib: lambda: lib.autograd.gradgradcheck(lambda t: doubling(lib)(t * t).sum(),
                                                                        (x64(lib),), raise_exception=False)) == \
        ("returned", True)  # doubling's backward is linear in grad: its second derivative is consistent


def test_gradcheck_mismatch_counts_only_inputs_that_require_grad():
    def make(lib):
        b = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
        return lambda: lib.autograd.gradcheck(lambda a, c, b: (doubling(lib)(b), a * c), (x64(lib), 3, b))
    assert same_outcome(make) == ("GradcheckError", "Jacobian mismatch for output 0 with respect to input 1,")


def test_gradcheck_mismatch_in_a_later_output():
    def make(lib):
        b = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
        return lambda: lib.autograd.gradcheck(lambda a, b: (a * 1, doubling(lib)(b)), (x64(lib), b))
    assert same_outcome(make) == ("GradcheckError", "Jacobian mismatch for output 1 with respect to input 1,")


def test_gradcheck_leaves_the_inputs_unchanged():
    x = x64(rg)
    version = x._version
    assert rg.autograd.gradcheck(lambda t: t.exp(), (x,))
    assert x._version == version
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0, 3.0])


# -- non-determinism -----------------------------------------------------------------------------
@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_nondeterministic_backward_is_not_reentrant(fast_mode):
    result = same_outcome(lambda lib: lambda: lib.autograd.gradcheck(noisy(lib), (x64(lib),), fast_mode=fast_mode))
    assert result == ("GradcheckError", "Backward is not reentrant, i.e., running backward with same input and "
                                        "grad_output multiple times gives different values, although analytical "
                                        "gradient matches numerical gradient.")
    with pytest.raises(gradcheck_module.GradcheckError, match="The tolerance for nondeterminism was 0.0."):
        rg.autograd.gradcheck(noisy(rg), (x64(rg),), fast_mode=fast_mode)


def test_gradcheck_nondet_tol_accepts_small_differences():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(noisy(lib), (x64(lib),), nondet_tol=1e-6)) == \
        ("returned", True)


def test_gradgradcheck_nondet_tol_reaches_the_second_derivative():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradgradcheck(
        lambda t: noisy(lib)(t * t).sum(), (x64(lib),), nondet_tol=1e-6, atol=1e-3)) == ("returned", True)


# -- no differentiable output ----------------------------------------------------------------------------
@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_without_differentiable_outputs_requires_zero_numerical_gradient(fast_mode):
    result = same_outcome(lambda lib: lambda: lib.autograd.gradcheck(lambda t: t.detach() * 2, (x64(lib),),
                                                                      fast_mode=fast_mode))
    assert result == ("GradcheckError", "Numerical gradient for function expected to be zero")
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(lambda t: t.detach().sum() * 0 + 1, (x64(lib),),
                                                                    fast_mode=fast_mode)) == ("returned", True)


# -- fast mode --------------------------------------------------------------------------------------------
def test_gradcheck_fast_mode_passes_correct_gradients():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(
        lambda t, u: ((t * u).sin(), (t ** 2).sum()), (x64(lib), x64(lib, (0.5, -1.0, 2.0))), fast_mode=True)) == \
        ("returned", True)


def test_gradcheck_fast_mode_mismatch_shows_the_slow_mode_jacobians():
    result = same_outcome(lambda lib: lambda: lib.autograd.gradcheck(doubling(lib), (x64(lib),), fast_mode=True))
    assert result == ("GradcheckError", "Jacobian mismatch for output 0 with respect to input 0,")
    with pytest.raises(gradcheck_module.GradcheckError) as info:
        rg.autograd.gradcheck(doubling(rg), (x64(rg),), fast_mode=True)
    message = str(info.value)
    numerical, analytical = (float(v) for v in re.findall(r"(?:numerical|analytical):(\S+)", message))
    assert analytical == pytest.approx(2 * numerical)  # v^T J u of the doubled Jacobian
    assert "Numerical:\n tensor([[1.0000, 0.0000, 0.0000]" in message
    assert "Analytical:\ntensor([[2., 0., 0.]" in message
    assert "The max per-element difference (slow mode) is: 1.0" in message


def test_gradgradcheck_fast_mode():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradgradcheck(lambda t: (t ** 3).sum(), (x64(lib),),
                                                                        fast_mode=True)) == ("returned", True)


# -- the checks without finite differences ---------------------------------------------------------------
def test_gradcheck_backward_not_multiplied_by_grad_output():
    result = same_outcome(lambda lib: lambda: lib.autograd.gradcheck(ignoring_zero_grad(lib), (x64(lib),)))
    assert result == ("GradcheckError", "backward not multiplied by grad_output")


def test_gradcheck_backward_that_rejects_undefined_grads():
    result = same_outcome(lambda lib: lambda: lib.autograd.gradcheck(rejecting_undefined(lib), (x64(lib),)))
    assert result == ("GradcheckError", "Expected backward function to handle undefined output grads.")
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support checking"):
        with pytest.raises(gradcheck_module.GradcheckError):
            rg.autograd.gradcheck(rejecting_undefined(rg), (x64(rg),))


def test_gradcheck_backward_that_returns_nonzero_for_undefined_grads():
    result = same_outcome(lambda lib: lambda: lib.autograd.gradcheck(rejecting_undefined(lib, nonzero=True),
                                                                      (x64(lib),)))
    assert result == ("GradcheckError", "Expected all input grads to be undefined or zero when all output grads are "
                                        "undefined or zero.")


def test_gradcheck_check_undefined_grad_false_skips_the_check():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(rejecting_undefined(lib), (x64(lib),),
                                                                    check_undefined_grad=False)) == ("returned", True)


def test_gradcheck_undefined_grad_of_each_output_in_turn():
    def make(lib):
        strict = rejecting_undefined(lib)
        return lambda: lib.autograd.gradcheck(lambda t: (t * 2, strict(t)), (x64(lib),))
    assert same_outcome(make) == ("GradcheckError", "Expected backward function to handle undefined output grads.")


def test_gradcheck_check_batched_grad_passes():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(
        lambda t, u: ((t * u).sin(), t.sum()), (x64(lib), x64(lib, (0.5, -1.0, 2.0))), check_batched_grad=True)) \
        == ("returned", True)
    assert same_outcome(lambda lib: lambda: lib.autograd.gradgradcheck(
        lambda t: (t ** 3).sum(), (x64(lib),), check_batched_grad=True)) == ("returned", True)


def test_gradcheck_check_batched_grad_reports_a_wrong_batched_gradient(monkeypatch):
    original = gradcheck_module.autograd_grad

    def wrong_when_batched(*args, **kwargs):
        result = original(*args, **kwargs)
        return tuple(g * 2 for g in result) if kwargs.get("is_grads_batched") else result
    monkeypatch.setattr(gradcheck_module, "autograd_grad", wrong_when_batched)
    with pytest.raises(gradcheck_module.GradcheckError, match=r"^For output 0 and input 0:"):
        rg.autograd.gradcheck(lambda t: t.sin(), (x64(rg),), check_batched_grad=True)


def test_gradcheck_check_grad_dtypes_reports_a_gradient_of_another_dtype(monkeypatch):
    # PyTorch's engine casts every gradient to its input's dtype, and so does retrograd's: make
    # autograd.grad return float32 to reach the check. PyTorch's own code reports this case as
    # "Analytical gradient has incorrect size" (it swaps its two flags); retrograd reports what
    # the check is for.
    original = gradcheck_module.autograd_grad
    monkeypatch.setattr(gradcheck_module, "autograd_grad",
                        lambda *a, **k: tuple(None if g is None else g.float() for g in original(*a, **k)))
    with pytest.raises(gradcheck_module.GradcheckError, match="^Gradient has dtype mismatch$"):
        rg.autograd.gradcheck(lambda t: t * 2, (x64(rg),), check_grad_dtypes=True)
    with pytest.raises(gradcheck_module.GradcheckError, match="^grad is incorrect type$"):
        rg.autograd.gradcheck(lambda t: t * 2, (x64(rg),))


# -- arguments --------------------------------------------------------------------------------------------
def test_gradcheck_needs_backward_or_forward_ad():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(lambda t: t * 2, (x64(lib),),
                                                                    check_backward_ad=False)) == \
        ("AssertionError", "Expected at least one of check_forward_ad or check_backward_ad to be True")
    assert same_outcome(lambda lib: lambda: lib.autograd.gradgradcheck(lambda t: t * 2, (x64(lib),),
                                                                        check_rev_over_rev=False)) == \
        ("AssertionError", "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")


def _wrong_jvp(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 3
    return Double.apply


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_forward_ad_checks_forward_mode_jacobians_as_pytorch(fast_mode):
    x = lambda lib: lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)  # noqa: E731
    for backward in (True, False):
        assert rg.autograd.gradcheck(lambda t: (t.sin() * t).cumsum(0), (x(rg),), check_forward_ad=True,
                                     check_backward_ad=backward, fast_mode=fast_mode)
    outcome = same_outcome(lambda lib: lambda: lib.autograd.gradcheck(
        _wrong_jvp(lib), (x(lib),), check_forward_ad=True, check_backward_ad=False, fast_mode=fast_mode))
    assert outcome[0] == "GradcheckError"
    assert outcome[1].startswith("Jacobian computed with forward mode mismatch for output 0 with respect to input 0")
    assert not rg.autograd.gradcheck(_wrong_jvp(rg), (x(rg),), check_forward_ad=True, raise_exception=False)


def _jvp_reading_a_value(lib):
    """A Function whose jvp is right one tangent at a time and calls ``.item()``, which vmap cannot batch."""
    class Double(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2 + t.sum().item() * 0
    return Double.apply


def test_gradcheck_batched_forward_grad_vmaps_forward_mode_over_tangents_as_pytorch():
    for lib in LIBS:
        assert lib.autograd.gradcheck(lambda t, u: ((t.sin() * u).cumsum(0), u.exp(), (t * 0).detach()),
                                      (x64(lib), x64(lib, (0.5, -1.0, 2.0))), check_forward_ad=True,
                                      check_batched_forward_grad=True)
    for lib in LIBS:  # the error vmap raised follows (vmap's own words differ)
        kind, sentence = outcome(lambda: lib.autograd.gradcheck(_jvp_reading_a_value(lib), (x64(lib),),
                                                                check_forward_ad=True, check_batched_forward_grad=True))
        assert kind == "GradcheckError" and sentence.startswith("While computing batched gradients, got: ")
    assert not rg.autograd.gradcheck(_jvp_reading_a_value(rg), (x64(rg),), check_forward_ad=True,
                                     check_batched_forward_grad=True, raise_exception=False)


def test_gradcheck_batched_forward_grad_reports_a_batched_tangent_that_differs():
    calls = []

    class Double(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):  # right but for the one batched call, the last
            calls.append(None)
            return t * 2 if len(calls) <= 6 else t * 3
    with pytest.raises(gradcheck_module.GradcheckError, match=r"^For output 0 and input 0:\n"):
        rg.autograd.gradcheck(Double.apply, (x64(rg),), check_forward_ad=True, check_batched_forward_grad=True)
    # three basis tangents, a tangent of zeros (check_undefined_grad), two tangents one at a time, one batch of both
    assert len(calls) == 7


def test_gradcheck_input_errors_and_warnings():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(lambda t: t * 2, (x64(lib).detach(),))) == \
        ("ValueError", "gradcheck expects at least one input tensor to require gradient, but none of them have "
                       "requires_grad=True.")
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(
        lambda t: t * 2, (lib.ones(1, dtype=lib.float64).expand(3).requires_grad_(),))) == \
        ("RuntimeError", "The 0th input has a dimension with stride 0. gradcheck only supports inputs that are "
                         "non-overlapping to be able to compute the numerical gradients correctly.")
    for lib in LIBS:
        with pytest.warns(UserWarning, match=r"Input #0 requires gradient and is not a double precision floating "
                                             r"point or complex\."):
            lib.autograd.gradcheck(lambda t: t * 2, (lib.ones(2, requires_grad=True),), eps=1e-2, atol=1e-2)


# -- gradgradcheck ------------------------------------------------------------------------------------------
def wrong_second_derivative(lib):
    """x ** 2 with a correct first derivative whose own derivative is wrong (its backward doubles)."""
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * doubling(lib)(x) * grad
    return Square.apply


def test_gradgradcheck_wrong_second_derivative_reports_mismatch():
    assert same_outcome(lambda lib: lambda: lib.autograd.gradcheck(wrong_second_derivative(lib), (x64(lib),))) == \
        ("returned", True)
    result = same_outcome(lambda lib: lambda: lib.autograd.gradgradcheck(wrong_second_derivative(lib), (x64(lib),)))
    assert result == ("GradcheckError", "Jacobian mismatch for output 0 with respect to input 0,")


def test_gradgradcheck_with_given_and_noncontiguous_grad_outputs():
    def make(lib):
        go = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        return lambda: lib.autograd.gradgradcheck(lambda t: t.sin() * t, (x64(lib),), (go,))
    assert same_outcome(make) == ("returned", True)
    assert same_outcome(lambda lib: lambda: lib.autograd.gradgradcheck(
        lambda t: (t.sin() * t).reshape(3, 1).expand(3, 2), (x64(lib),), gen_non_contig_grad_outputs=True)) == \
        ("returned", True)
