"""Anomaly mode: forward tracebacks on errors, NaN checks, and no cost when off."""
import warnings

import numpy as np

import pytest

import retrograd as rg
from retrograd.autograd import detect_anomaly, set_detect_anomaly


class Fails(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("bad backward")


def make_failing_graph():  # this name must appear in the recorded forward traceback
    x = rg.ones(2, requires_grad=True)
    return Fails.apply(x).sum()


def test_detect_anomaly_warns_when_enabled():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with detect_anomaly():
            pass


def test_error_carries_forward_traceback():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with detect_anomaly():
            y = make_failing_graph()
            with pytest.warns(UserWarning, match="Error detected in FailsBackward. Traceback of forward call "
                                                 "that caused the error"):
                with pytest.raises(ValueError, match="bad backward") as info:
                    y.backward()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "make_failing_graph" in notes
    assert "Error detected in FailsBackward" in notes


def test_nan_in_backward_output_raises_naming_node():
    x = rg.tensor([0.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with detect_anomaly():
            y = (x.sqrt() * 0).sum()
            with pytest.raises(RuntimeError, match=r"^Function 'SqrtBackward0' returned nan values in its 0th output\."):
                y.backward()


def test_check_nan_false_lets_nan_through():
    x = rg.tensor([0.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with detect_anomaly(check_nan=False):
            (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_off_by_default_records_nothing():
    assert not rg.autograd.is_anomaly_enabled()
    y = rg.ones(2, requires_grad=True) * 2
    assert y.grad_fn._metadata is None
    x = rg.tensor([0.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()  # no NaN check when off
    assert np.isnan(x.grad.numpy()).all()


def test_no_forward_information_message():
    y = make_failing_graph()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with set_detect_anomaly(True):
            with pytest.warns(UserWarning, match="No forward pass information available"):
                with pytest.raises(ValueError):
                    y.backward()
    assert not rg.autograd.is_anomaly_enabled()


def test_nested_backward_records_parent():
    class Parent(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            with rg.enable_grad():
                t = rg.ones(1, requires_grad=True)
                Fails.apply(t * 2).sum().backward()
            return grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with detect_anomaly():
            y = Parent.apply(rg.ones(1, requires_grad=True)).sum()
            with pytest.raises(ValueError) as info:
                y.backward()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Previous calculation was induced by ParentBackward" in notes


def test_inplace_error_hint_changes_with_anomaly_mode():
    a = rg.ones(2, requires_grad=True)
    b = a * 2
    c = b * b  # MulBackward0 saves b
    b.add_(1)
    with pytest.raises(RuntimeError, match="Hint: enable anomaly detection"):
        c.sum().backward(retain_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with set_detect_anomaly(True):
            with pytest.raises(RuntimeError, match="Good luck!"):
                c.sum().backward()
