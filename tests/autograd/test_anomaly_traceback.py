"""Anomaly mode's forward traceback ends at the user's line, whichever path (C or Python) made the node."""
import sys
import warnings

import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

LIBS = [rg, torch]
HERE = __file__


def recorded(make, lib):
    """The forward traceback stored on the grad_fn of ``make(lib)``'s result, made in anomaly mode."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.autograd.detect_anomaly():
            y = make(lib)
    return y.grad_fn.metadata["traceback_"]


def make_with_a_method(lib):
    x = lib.ones(2, requires_grad=True)
    return x.exp()  # the last recorded line


def make_with_an_operator(lib):
    x = lib.ones(2, requires_grad=True)
    return x * 2  # the last recorded line


def make_with_a_reduction(lib):
    x = lib.ones(2, 3, requires_grad=True)
    return lib.sum(x, 1)  # the last recorded line


def make_with_a_composite(lib):
    x = lib.ones(2, 3, requires_grad=True)
    return lib.var(x, 1)  # the last recorded line


def make_with_an_index(lib):
    x = lib.ones(2, 3, requires_grad=True)
    return x[0, 1:]  # the last recorded line


def make_with_an_inplace_op(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 1
    return y.mul_(3)  # the last recorded line


@pytest.mark.parametrize("make", [make_with_a_method, make_with_an_operator, make_with_a_reduction,
                                  make_with_a_composite, make_with_an_index, make_with_an_inplace_op])
def test_forward_traceback_ends_at_the_line_that_made_the_node(make):
    for lib in LIBS:
        stack = recorded(make, lib)
        last = stack[-1]
        assert f'File "{HERE}"' in last and f"in {make.__name__}" in last, (lib.__name__, last)
        assert "# the last recorded line" in last
        assert "in recorded" in stack[-2]


def test_forward_traceback_of_a_custom_function_ends_at_the_apply_call():
    class Twice(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    def make(lib):
        return Twice.apply(lib.ones(2, requires_grad=True))  # the apply line
    last = recorded(make, rg)[-1]
    assert f'File "{HERE}"' in last and "# the apply line" in last


def test_error_message_names_the_forward_line_and_its_callers():
    class Fails(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("bad backward")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rg.autograd.detect_anomaly():
            x = rg.ones(2, requires_grad=True)
            y = Fails.apply(x).exp().sum()  # the failing forward
            with pytest.warns(UserWarning) as record:
                with pytest.raises(ValueError, match="bad backward"):
                    y.backward()
    message = str(record[0].message)
    assert message.startswith("Error detected in FailsBackward. Traceback of forward call that caused the error:\n")
    assert message.rstrip().endswith("y = Fails.apply(x).exp().sum()  # the failing forward")
    assert f"in {sys._getframe().f_code.co_name}" in message


def test_error_detected_message_matches_torch():
    messages = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                x = lib.tensor([0.0], requires_grad=True)
                y = (x.sqrt() * 0).sum()  # NaN in SqrtBackward0
                with pytest.raises(RuntimeError) as info:
                    y.backward()
        detected = [str(w.message) for w in record if "Error detected" in str(w.message)]
        assert len(detected) == 1
        messages.append((str(info.value), detected[0].split("\n")[0], detected[0].split("\n")[-2].strip()))
    assert messages[0] == messages[1]
    assert messages[0][0] == "Function 'SqrtBackward0' returned nan values in its 0th output."
