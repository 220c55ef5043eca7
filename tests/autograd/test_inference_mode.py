"""Inference mode and inference tensors, against PyTorch: nesting, what is made in it, version counters, the errors."""
import re
import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops import REGISTRY

torch = pytest.importorskip("torch")

LIBS = [pytest.param(rg, id="retrograd"), pytest.param(torch, id="torch")]


def first_sentence(message):
    """The first sentence of an error message: up to the first period that ends a word."""
    return re.match(r"(.*?\.)(?=\s|[A-Z]|$)", message, re.S).group(1)


def raised(fn):
    """(type, first sentence) of the error ``fn()`` raises, or None if it returns."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any error, compared between the libraries
        return type(e), first_sentence(str(e))
    return None


def both(scenario):
    """Runs ``scenario(lib)`` with retrograd and with torch and checks that they observe the same."""
    ours, theirs = scenario(rg), scenario(torch)
    assert ours == theirs
    return ours


def test_inference_mode_false_inside_inference_mode_turns_it_off_and_grad_mode_on():
    def scenario(lib):
        seen = []

        def look():
            seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        with lib.no_grad():
            with lib.inference_mode(False):
                look()
        with lib.inference_mode():
            look()
            with lib.inference_mode(False):
                look()
                with lib.inference_mode(True):
                    look()
                look()
            with lib.enable_grad():
                look()
            look()
        look()
        return seen
    assert both(scenario)[:3] == [(True, False), (False, True), (True, False)]


def test_inference_mode_as_decorator_nests_both_ways():
    def scenario(lib):
        @lib.inference_mode(False)
        def normal():
            return lib.is_grad_enabled(), lib.is_inference_mode_enabled(), lib.ones(1).is_inference()

        @lib.inference_mode()
        def inference():
            return lib.is_inference_mode_enabled(), lib.ones(1).is_inference(), normal()

        @lib.inference_mode
        def bare():
            return inference()
        return normal(), inference(), bare(), lib.is_inference_mode_enabled()
    assert both(scenario)[1] == (True, True, (True, False, False))


def test_tensors_made_in_inference_mode_are_inference_tensors():
    def scenario(lib):
        w = lib.ones(3, requires_grad=True)
        with lib.inference_mode():
            made = [lib.ones(3), lib.tensor([1.0, 2.0, 3.0]), lib.from_numpy(np.ones(3)), w * 2, (w * 2).clone(),
                    lib.ones(3, requires_grad=True), w.exp().sum(), lib.stack([w, w])]
            with lib.enable_grad():
                made.append(w * 3)  # nothing is recorded in inference mode, even here
        return [(t.is_inference(), t.requires_grad, t.is_leaf, t.grad_fn is None) for t in made]
    seen = both(scenario)
    assert seen[3] == (True, False, True, True) and seen[5] == (True, True, True, True)


def test_inference_tensors_track_no_version():
    def scenario(lib):
        with lib.inference_mode():
            x = lib.ones(3)
            inside = raised(lambda: x._version)
            x.add_(1)  # allowed inside: no version to bump
        return inside, raised(lambda: x._version), x.tolist()
    assert both(scenario)[0] == (RuntimeError, "Inference tensors do not track version counter.")


def test_inplace_on_inference_tensor_outside_inference_mode_raises_pytorchs_error():
    def scenario(lib):
        with lib.inference_mode():
            x = lib.ones(3)
        return [raised(lambda: x.add_(1)), raised(lambda: x.zero_()), raised(lambda: x.__setitem__(0, 5.0)),
                raised(lambda: x[:2].mul_(2)), raised(lambda: x.copy_(lib.zeros(3)))]
    seen = both(scenario)
    assert seen[0] == (RuntimeError, "Inplace update to inference tensor outside InferenceMode is not allowed.")
    with rg.inference_mode():
        x = rg.ones(3)
    with pytest.raises(RuntimeError):
        x.add_(1)
    assert x.tolist() == [1.0, 1.0, 1.0]  # raised before writing (PyTorch writes, then raises)


def test_inference_tensor_cannot_be_saved_for_backward():
    def scenario(lib):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.inference_mode():
            x = lib.tensor([4.0, 5.0, 6.0])
        saved = [raised(lambda: w * x), raised(lambda: x * w), raised(lambda: lib.exp(w) @ x)]
        y = w + x  # nothing is saved: recorded as usual
        (y * y).sum().backward()
        return saved, y.is_inference(), y.grad_fn.name(), w.grad.tolist()
    seen = both(scenario)
    assert seen[0][0] == (RuntimeError, "Inference tensors cannot be saved for backward.")


def test_inference_tensor_works_as_a_plain_value_outside_inference_mode():
    def scenario(lib):
        with lib.inference_mode():
            x = lib.tensor([1.0, -2.0, 3.0])
        y = (x * 2).relu()
        return y.is_inference(), y.tolist(), x.clone().is_inference(), x.sum().item()
    assert both(scenario)[0] is False


def test_requires_grad_on_inference_tensor_outside_inference_mode_raises():
    def scenario(lib):
        with lib.inference_mode():
            x = lib.ones(2)
            x.requires_grad_()
            inside = x.requires_grad
            y = lib.ones(2)
        return inside, raised(lambda: y.requires_grad_()), raised(lambda: y.requires_grad_(False)), y.requires_grad
    assert both(scenario)[1] == (RuntimeError, "Setting requires_grad=True on inference tensor outside InferenceMode "
                                               "is not allowed.")


def test_views_and_aliases_of_inference_tensors_are_inference_tensors_not_tracked_as_views():
    def scenario(lib):
        with lib.inference_mode():
            x = lib.arange(6.0).reshape(2, 3)
            inside = [x[0], x.t(), x.detach(), x.data]
        outside = [x[:, 1:], x.view(6), x.transpose(0, 1), x.unsqueeze(0), x.detach(), x.data]
        made = inside + outside + list(x.unbind(0))
        return [(t.is_inference(), t._is_view(), t._base is None) for t in made]
    assert set(both(scenario)) == {(True, False, True)}


def test_inference_tensor_detached_outside_inference_mode_counts_its_own_versions():
    def scenario(lib):
        with lib.inference_mode():
            x = lib.ones(3)
            inside = x.detach()
        d = x.detach()
        d.mul_(2)
        d.data.mul_(2)  # .data: a fresh counter too
        d.mul_(2)
        again = d.detach()
        again.add_(1)  # its own counter: d's does not move
        with lib.inference_mode():
            d.add_(1)  # allowed inside, not counted
        w = lib.ones(3, requires_grad=True)
        return ([t.is_inference() for t in (inside, d, d.data, again, d[:2])], raised(lambda: inside._version),
                raised(lambda: inside.add_(1)), d._version, again._version, raised(lambda: d[:2].add_(1)),
                raised(lambda: w * d), raised(lambda: d.requires_grad_()))
    seen = both(scenario)
    assert seen[0] == [True] * 5 and seen[3:5] == (2, 1)
    assert seen[5] == (RuntimeError, "Inplace update to inference tensor outside InferenceMode is not allowed.")


def test_backward_in_inference_mode_accumulates_into_an_inference_grad():
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        seen = []
        for _ in range(2):
            y = (x * x).sum()
            with lib.inference_mode():
                y.backward()
            seen.append((x.grad.tolist(), x.grad.is_inference()))
        outside = raised(lambda: (x * x).sum().backward())  # adds in place to an inference .grad: refused
        x.grad = None
        (x * x).sum().backward()
        return seen, outside, x.grad.is_inference(), x.grad.tolist()
    seen = both(scenario)
    assert seen[0] == [([2.0, 2.0, 2.0], True), ([4.0, 4.0, 4.0], True)]
    assert seen[1] == (RuntimeError, "Inplace update to inference tensor outside InferenceMode is not allowed.")


def test_views_of_normal_tensors_made_in_inference_mode_are_normal_views():
    def scenario(lib):
        n = lib.zeros(3)
        leaf = lib.ones(3, requires_grad=True)
        inner = leaf * 2
        with lib.inference_mode():
            views = [n[:2], leaf[1:], inner[:2], n.detach()]
            n.add_(1)
            facts = [(v.is_inference(), v._is_view(), v.requires_grad, v.is_leaf, v._version) for v in views]
        return facts, views[0]._base is n, views[1]._base is leaf, views[3]._base is None
    seen = both(scenario)
    assert seen[0][1] == (False, True, True, True, 0)  # requires grad through its base, no grad_fn


def test_normal_tensor_modified_in_place_in_inference_mode():
    def scenario(lib):
        leaf = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        mid = leaf * 2
        out = mid * mid  # saves mid
        view = mid[:2]
        with lib.inference_mode():
            leaf.mul_(2)  # allowed: nothing is recorded
            mid.add_(1)
        facts = (leaf._version, leaf.is_leaf, leaf.requires_grad, leaf.is_inference(), mid._version,
                 mid.grad_fn.name(), view.requires_grad, view.is_leaf)
        kind, message = raised(lambda: out.sum().backward())
        (view * 1).sum().backward()  # the view's history is regenerated from the base's (unchanged) one
        return facts, kind, message.split(":")[0], leaf.grad.tolist()
    seen = both(scenario)
    assert seen[0][:2] == (1, True)
    assert seen[2] == "one of the variables needed for gradient computation has been modified by an inplace operation"


def test_view_made_in_inference_mode_cannot_be_modified_in_place_outside_it():
    def scenario(lib):
        mid = lib.ones(3, requires_grad=True) * 1
        plain = lib.ones(3)
        with lib.inference_mode():
            v = mid[:2]
            u = plain[:2]
            v.mul_(2)  # inside: allowed, not recorded
        direct = raised(lambda: v.mul_(2))
        u.mul_(2)  # nothing requires grad: allowed
        return direct, raised(lambda: v.grad_fn), raised(lambda: v * 2), u.tolist()
    seen = both(scenario)
    assert seen[0] == (RuntimeError, "A view was created in inference mode and is being modified inplace in normal "
                                     "mode.")
    assert seen[1][1] == ("A view was created in inference mode and its base or another view of its base has been "
                          "modified inplace in normal mode.")


def test_view_grad_fn_regenerated_inside_inference_mode_is_recorded():
    def scenario(lib):
        leaf = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        mid = leaf * 3
        view = mid[:2]
        mid.mul_(2)
        with lib.inference_mode():
            inside = view.grad_fn is not None
        (view * 1).sum().backward()
        return inside, leaf.grad.tolist()
    assert both(scenario) == (True, [6.0, 6.0, 0.0])


def test_inference_mode_is_thread_local():
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def other():
        with rg.inference_mode():
            seen["inside"] = rg.ones(1).is_inference()
            entered.set()
            release.wait(10)
    t = threading.Thread(target=other)
    t.start()
    try:
        assert entered.wait(10)
        x = rg.ones(2, requires_grad=True)
        y = x * 2
        assert not rg.is_inference_mode_enabled() and not y.is_inference() and y.grad_fn is not None
    finally:
        release.set()
        t.join()
    assert seen["inside"] and rg.autograd.grad_mode.census.threads == 0


def test_compiled_call_in_inference_mode_makes_what_the_python_path_makes():
    x = rg.ones(2, 3, requires_grad=True)
    mid = x * 1
    with rg.inference_mode():
        inf = rg.ones(2, 3)
    cases = [("mul", (x, mid)), ("tanh", (mid,)), ("transpose", (mid, 0, 1)), ("transpose", (inf, 0, 1)),
             ("expand", (mid[0:1], (4, 3))), ("mul", (inf, inf)), ("mul", (inf, x))]
    creation = rg.autograd.variable.CreationMeta
    for inference in (True, False):
        for name, args in cases:
            op = REGISTRY[name]
            python_path = getattr(op.function, "python_call", op.function)
            with rg.inference_mode(inference):
                if name == "mul" and args[1] is x and not inference:
                    with pytest.raises(RuntimeError, match="^Inference tensors cannot be saved for backward."):
                        op.function(*args)
                    continue
                made = [op.function(*args), python_path(*args)]
            expected = args[0].is_inference() if op.view else inference
            for t in made:
                assert t.is_inference() == expected, (name, inference)
                assert (t._base is None, t.grad_fn is None) == (made[0]._base is None, made[0].grad_fn is None)
                if t._base is not None:
                    assert t._base is mid and t._version_counter is mid._version_counter
                    assert t._view_creation is (creation.INFERENCE_MODE if inference else creation.DEFAULT)


def _inference_leaf(lib, values=(1.0, 2.0)):
    with lib.inference_mode():
        return lib.tensor(list(values), dtype=lib.float64, requires_grad=True)


def _what_records(lib):
    c, d = _inference_leaf(lib), _inference_leaf(lib, (3.0, 4.0))
    x = lib.tensor([0.5, 0.25], dtype=lib.float64)
    out = []
    for f in (lambda: lib.cat([c, d]), lambda: lib.stack([c, d]).sum(), lambda: (c * d).sum(), lambda: c.exp(),
              lambda: c[0], lambda: c * x):
        r = f()
        out.append((r.requires_grad, r.is_leaf, r.is_inference(), type(r.grad_fn).__name__))
    return out


def test_ops_of_inference_tensors_alone_record_nothing_outside_inference_mode_and_with_a_normal_one_record():
    assert _what_records(rg) == _what_records(torch)
    assert _what_records(rg)[-1] == (True, False, False, "MulBackward0")


def test_op_of_an_inference_tensor_with_a_normal_one_that_requires_grad_cannot_save_it():
    def run(lib):
        return raised(lambda: _inference_leaf(lib) * lib.ones(2, dtype=lib.float64, requires_grad=True))
    assert run(rg) == run(torch) == (RuntimeError, "Inference tensors cannot be saved for backward.")


@pytest.mark.parametrize("grad_mode", [True, False])
def test_inplace_op_on_an_inference_leaf_that_requires_grad_raises_torchs_first_error(grad_mode):
    def run(lib):
        c = _inference_leaf(lib)
        with lib.set_grad_enabled(grad_mode):
            return raised(lambda: c.mul_(2.0))
    assert run(rg) == run(torch)


@pytest.mark.parametrize("lib", LIBS)
def test_is_inference_as_a_function_refuses_a_non_tensor(lib):
    with pytest.raises(TypeError, match=r"^is_inference\(\): argument 'input' \(position 1\) must be Tensor, not list$"):
        lib.is_inference([1.0])
    assert lib.is_inference(_inference_leaf(lib)) and not lib.is_inference(lib.ones(1))
