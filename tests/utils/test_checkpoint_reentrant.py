"""Reentrant checkpointing and checkpoint_sequential against torch on the same numbers.

PyTorch's own checkpoint tests (test_utils.py, test_autograd.py) re-run with both libraries:
how often each segment runs, gradients equal to the un-checkpointed model's, non-tensor inputs
and outputs, the random state, and the errors of the reentrant form.
"""
import re
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.timeout(120)

LIBS = {"retrograd": rg, "torch": torch}


def first_sentence(text):
    match = re.match(r"(.*?[.!?])(\s|$)", text, re.S)
    return match.group(1) if match else text


def outcome(fn):
    """What ``fn()`` returns, or the type and first sentence of what it raises."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return (type(e).__name__, first_sentence(str(e)))


def _mlp(lib, sizes=(20, 12, 8, 5), seed=0):
    """Linear and ReLU layers with the same float64 weights in both libraries."""
    rs = np.random.RandomState(seed)
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=False):
        lin = lib.nn.Linear(n_in, n_out).to(lib.float64)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(rs.randn(n_out, n_in) / np.sqrt(n_in)))
            lin.bias.copy_(lib.tensor(rs.randn(n_out)))
        layers += [lin, lib.nn.ReLU()]
    return lib.nn.Sequential(*layers)


INPUT = np.random.RandomState(1).randn(3, 20)


def _sequential_run(lib, model, to_run, use_reentrant):
    """Output, input gradient and parameter gradients of ``checkpoint_sequential(to_run, 2, x)``."""
    x = lib.tensor(INPUT, requires_grad=True)
    out = lib.utils.checkpoint.checkpoint_sequential(to_run, 2, x, use_reentrant=use_reentrant)
    model.zero_grad()
    out.sum().backward()
    return [out.detach().numpy(), x.grad.numpy()] + [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("form", ["sequential", "children", "module_list"])
def test_checkpoint_sequential_gives_the_plain_outputs_and_gradients(use_reentrant, form):
    results = {}
    for name, lib in LIBS.items():
        model = _mlp(lib)
        x = lib.tensor(INPUT, requires_grad=True)
        out = model(x)
        out.sum().backward()
        plain = [out.detach().numpy(), x.grad.numpy()] + [p.grad.numpy().copy() for p in model.parameters()]
        to_run = {"sequential": model, "children": list(model.children()),
                  "module_list": lib.nn.ModuleList(list(model.children()))}[form]
        got = _sequential_run(lib, model, to_run, use_reentrant)
        for g, p in zip(got, plain, strict=True):
            np.testing.assert_allclose(g, p, rtol=1e-12, atol=1e-14)
        results[name] = got
    for r, t in zip(results["retrograd"], results["torch"], strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential_reruns_the_checkpointed_segments_only(use_reentrant):
    counts = {}
    for name, lib in LIBS.items():
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.counter = 0

            def forward(self, x):
                self.counter += 1
                return x * lib.tensor(2.0)  # saves a tensor, so that the non-reentrant form recomputes

        modules = [Net() for _ in range(10)]
        out = lib.utils.checkpoint.checkpoint_sequential(modules, 2, lib.randn(3, 4, requires_grad=True),
                                                         use_reentrant=use_reentrant)
        after_forward = [m.counter for m in modules]
        out.sum().backward()
        counts[name] = after_forward, [m.counter for m in modules]
    assert counts["retrograd"] == counts["torch"] == ([1] * 10, [2] * 5 + [1] * 5)


def test_checkpoint_sequential_refuses_grad_when_reentrant_and_matches_plain_grad_otherwise():
    results = {}
    for name, lib in LIBS.items():
        model = _mlp(lib)
        modules = list(model.children())
        x = lib.tensor(INPUT, requires_grad=True)
        ones = lib.ones(3, 5, dtype=lib.float64)
        out = lib.utils.checkpoint.checkpoint_sequential(modules, 2, x, use_reentrant=True)
        refused = outcome(lambda: lib.autograd.grad(outputs=[out], grad_outputs=[ones], inputs=[x],
                                                    create_graph=True))
        (plain,) = lib.autograd.grad(outputs=[model(x)], grad_outputs=[ones], inputs=[x], create_graph=True)
        out = lib.utils.checkpoint.checkpoint_sequential(modules, 2, x, use_reentrant=False)
        (got,) = lib.autograd.grad(outputs=[out], grad_outputs=[ones], inputs=[x], create_graph=True)
        np.testing.assert_allclose(got.detach().numpy(), plain.detach().numpy(), rtol=1e-12)
        assert got.requires_grad
        results[name] = refused, got.detach().numpy()
    assert results["retrograd"][0] == results["torch"][0] == (
        "RuntimeError", "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                        "`inputs` parameter to .backward().")
    np.testing.assert_allclose(results["retrograd"][1], results["torch"][1], rtol=1e-10)


def test_checkpoint_sequential_takes_one_input_only():
    for lib in LIBS.values():
        class Two(lib.nn.Module):
            def forward(self, a, b):
                return a, b

        class Nothing(lib.nn.Module):
            def forward(self):
                pass

        a, b = lib.randn(1, 5, requires_grad=True), lib.randn(1, 5, requires_grad=True)
        seq = lib.utils.checkpoint.checkpoint_sequential
        for use_reentrant in (True, False):
            with pytest.raises(TypeError):
                seq(lib.nn.Sequential(Two()), 1, a, b)
            with pytest.raises(TypeError):
                seq(lib.nn.Sequential(Nothing()), 1)


def test_checkpoint_sequential_with_more_segments_than_functions_raises_as_torch():
    def make(lib):
        return outcome(lambda: lib.utils.checkpoint.checkpoint_sequential(
            [lambda t: t.sin()], 3, lib.ones(2, requires_grad=True), use_reentrant=False))
    assert make(rg) == make(torch)
    assert make(rg)[0] == "ValueError"


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_dropout_inside_the_checkpoint_draws_the_forward_numbers_again(use_reentrant):
    for lib in LIBS.values():
        lib.manual_seed(3)
        inp = lib.randn(2000).requires_grad_()
        phase1, phase2 = lib.nn.Dropout(), lib.nn.Dropout()
        state = lib.get_rng_state()
        out = lib.utils.checkpoint.checkpoint(phase2, phase1(inp), use_reentrant=use_reentrant)
        out.sum().backward()
        with_checkpoint = inp.grad
        lib.set_rng_state(state)
        inp.grad = None
        phase2(phase1(inp)).sum().backward()
        np.testing.assert_array_equal(with_checkpoint.numpy(), inp.grad.numpy())


# -- the reentrant form ---------------------------------------------------------------------------
def ck(lib, fn, *args, **kwargs):
    return lib.utils.checkpoint.checkpoint(fn, *args, use_reentrant=True, **kwargs)


def test_a_none_input_passes_through():
    for lib in LIBS.values():
        x = lib.randn(1, 10, requires_grad=True)
        ck(lib, lambda a, b: a if b is None else a + b, x, None).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.ones((1, 10)))


def _foo(t1, t2, scale, t3):
    t4 = t1 + t2 * t3
    t5 = t1 * t2 + t3
    t4 *= scale
    t5 *= scale
    return scale, t4, None, True, t5, "bar", t1


def test_non_tensor_inputs_and_outputs_pass_through_and_backward_runs_until_freed():
    t1v, t2v, t3v = (np.random.RandomState(s).rand(10) for s in (4, 5, 6))
    results = {}
    for name, lib in LIBS.items():
        t1 = lib.tensor(t1v, requires_grad=True)
        t2 = lib.tensor(t2v, requires_grad=True)
        t3 = lib.tensor(t3v)
        res = ck(lib, _foo, t1, t2, 7, t3)
        assert (res[0], res[2], res[3], res[5]) == (7, None, True, "bar")
        np.testing.assert_allclose(res[1].detach().numpy(), (t1v + t2v * t3v) * 7, rtol=1e-12)
        np.testing.assert_allclose(res[4].detach().numpy(), (t1v * t2v + t3v) * 7, rtol=1e-12)
        np.testing.assert_array_equal(res[6].detach().numpy(), t1v)
        res[1].sum().backward(retain_graph=True)
        res[4].sum().backward(retain_graph=True)
        res[6].sum().backward()
        again = outcome(lambda: res[6].sum().backward())
        grads = t1.grad.numpy().copy(), t2.grad.numpy().copy()
        t1.grad = t2.grad = None
        plain = _foo(t1, t2, 7, t3)
        lib.autograd.backward([plain[1].sum(), plain[4].sum(), plain[6].sum()])
        np.testing.assert_allclose(grads[0], t1.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(grads[1], t2.grad.numpy(), rtol=1e-12)
        results[name] = again, grads
    assert results["retrograd"][0] == results["torch"][0] == (
        "RuntimeError", "Trying to backward through the graph a second time (or directly access saved tensors after "
                        "they have already been freed).")
    for r, t in zip(results["retrograd"][1], results["torch"][1], strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-12)


def test_no_tensor_inputs_return_the_values_and_warn():
    for lib in LIBS.values():
        with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True. Gradients will be None"):
            res = ck(lib, _foo, 0.5, 0.25, 3, 2.0)
        assert res == (3, (0.5 + 0.25 * 2.0) * 3, None, True, (0.5 * 0.25 + 2.0) * 3, "bar", 0.5)


def test_partial_outputs_and_no_output_that_requires_grad():
    results = {}
    for name, lib in LIBS.items():
        a = lib.randn(1, 4, requires_grad=True)
        b = lib.randn(1, 4)
        out = ck(lib, lambda t1, t2: (t1, t2), a, b)
        out[0].sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), np.ones((1, 4)))

        def none_requires_grad():
            c = lib.randn(1, 4)
            d = lib.randn(1, 4, requires_grad=True)
            ck(lib, lambda t1, t2: t1, c, d).sum().backward()
        results[name] = outcome(none_requires_grad)
    assert results["retrograd"] == results["torch"] == (
        "RuntimeError", "none of output has requires_grad=True, this checkpoint() is not necessary")


def test_no_grad_module_inside_raises_at_backward():
    results = {}
    for name, lib in LIBS.items():
        lin = lib.nn.Linear(2, 2, bias=False)

        def no_grad_module(x):
            with lib.no_grad():
                return lin(x)

        a = lib.randn(2, 2, requires_grad=True)
        got = []
        for _ in range(3):
            def run():
                out = ck(lib, no_grad_module, a)
                out += a
                out.sum().backward()
            got.append(outcome(run))
        results[name] = got
    assert results["retrograd"] == results["torch"] == [
        ("RuntimeError", "none of output has requires_grad=True, this checkpoint() is not necessary")] * 3


def test_many_checkpointed_calls_into_one_module_accumulate_the_plain_gradients():
    data = np.random.RandomState(7).rand(40, 1, 20)
    results = {}
    for name, lib in LIBS.items():
        module = _mlp(lib, sizes=(20, 16, 20))
        outs = [ck(lib, module, lib.tensor(row, requires_grad=True)) for row in data]
        lib.stack(outs).mean().backward()
        grads = [p.grad.numpy().copy() for p in module.parameters()]
        module.zero_grad()
        lib.stack([module(lib.tensor(row, requires_grad=True)) for row in data]).mean().backward()
        for g, p in zip(grads, module.parameters(), strict=True):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-12, atol=1e-15)
        results[name] = grads
    for r, t in zip(results["retrograd"], results["torch"], strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-10, atol=1e-14)


def test_checkpoint_valid_is_reset_after_the_grad_error():
    results = {}
    for name, lib in LIBS.items():
        a = lib.tensor(INPUT[:2, :2], requires_grad=True)
        refused = outcome(lambda: lib.autograd.grad(ck(lib, lib.exp, a).sum(), (a,)))
        ck(lib, lib.exp, a).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), np.exp(INPUT[:2, :2]), rtol=1e-12)
        results[name] = refused
    assert results["retrograd"] == results["torch"]
    assert results["retrograd"][0] == "RuntimeError"


def test_backward_with_inputs_is_refused():
    results = {}
    for name, lib in LIBS.items():
        a = lib.tensor(INPUT[0], requires_grad=True)
        b = lib.tensor(INPUT[1], requires_grad=True)
        out = ck(lib, lambda x, y: (x * y).sin(), a, b)
        results[name] = outcome(lambda: out.sum().backward(inputs=[a]))
    assert results["retrograd"] == results["torch"] == (
        "RuntimeError", "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                        "`inputs` parameter to .backward().")


def test_reentrant_forward_records_nothing_inside_and_one_node_outside():
    for lib in LIBS.values():
        x = lib.randn(3, requires_grad=True)
        seen = []

        def fn(t):
            y = t.sin()
            seen.append(y.requires_grad)
            return y.exp()

        out = ck(lib, fn, x)
        assert seen == [False]
        assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"
        out.sum().backward()
        assert seen == [False, True]


def test_without_preserved_rng_state_the_backward_does_not_restore_it():
    for lib in LIBS.values():
        x = lib.randn(5, requires_grad=True)
        lib.manual_seed(11)
        state = lib.get_rng_state()
        out = ck(lib, lambda t: t * lib.rand(5), x, preserve_rng_state=False)
        lib.set_rng_state(state)
        first = lib.rand(5)
        lib.set_rng_state(state)
        lib.rand(5)
        out.sum().backward()
        # the recomputation drew fresh numbers from the generator where the caller left it
        assert not np.array_equal(x.grad.numpy(), first.numpy())


def test_warnings_of_the_reentrant_form_are_torch_s():
    def make(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ck(lib, lambda t: t * 2, lib.ones(2))
        return [(w.category.__name__, first_sentence(str(w.message))) for w in caught]
    assert make(rg) == make(torch) == [("UserWarning", "None of the inputs have requires_grad=True.")]
