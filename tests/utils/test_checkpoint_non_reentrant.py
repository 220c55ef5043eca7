"""Non-reentrant checkpointing (use_reentrant=False) against torch on the same numbers.

Gradients through backward() and autograd.grad(), keyword and non-tensor arguments, inputs that
do not require grad, how often the segment is recomputed (early stop, retain_graph, unpacks
outside backward, GraphExecGroup), context_fn, and the errors: their types and first sentences.
"""
import contextlib
import logging
import re

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


def ck(lib, fn, *args, **kwargs):
    return lib.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False, **kwargs)


def _same_in_both(make):
    """``make(lib)`` for both libraries; asserts the results are equal (arrays to 1e-12) and returns retrograd's."""
    got = {name: make(lib) for name, lib in LIBS.items()}
    _assert_same(got["retrograd"], got["torch"])
    return got["retrograd"]


def _assert_same(a, b):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-14)
    else:
        assert a == b


X0 = np.random.RandomState(0).randn(3, 4)
W0 = np.random.RandomState(1).randn(4, 2)


# -- gradients ---------------------------------------------------------------------------------
def test_gradients_equal_the_plain_ones_through_backward_and_grad():
    def make(lib):
        a = lib.tensor(X0, requires_grad=True)
        lib.exp(a).sum().backward()
        plain = a.grad.numpy().copy()
        a.grad = None
        ck(lib, lib.exp, a).sum().backward()
        through_backward = a.grad.numpy().copy()
        (through_grad,) = lib.autograd.grad(ck(lib, lib.exp, a).sum(), (a,))
        np.testing.assert_array_equal(through_backward, plain)
        np.testing.assert_array_equal(through_grad.numpy(), plain)
        return plain
    _same_in_both(make)


def test_keyword_arguments_reach_the_function_and_get_their_gradients():
    def make(lib):
        x = lib.tensor(X0, requires_grad=True)
        w = lib.tensor(W0, requires_grad=True)

        def fn(x, *, weight, scale=1.0):
            return ((x @ weight).tanh() * scale).sin()

        out = ck(lib, fn, x, weight=w, scale=3.0)
        gx, gw = lib.autograd.grad(out.sum(), (x, w))
        px, pw = lib.autograd.grad(fn(x, weight=w, scale=3.0).sum(), (x, w))
        np.testing.assert_array_equal(gx.numpy(), px.numpy())
        np.testing.assert_array_equal(gw.numpy(), pw.numpy())
        return gx.numpy(), gw.numpy()
    _same_in_both(make)


def _linear_stack(lib):
    """Linear(4, 8), ReLU, Linear(8, 4), with the same weights in both libraries."""
    rs = np.random.RandomState(5)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 4))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rs.randn(*p.shape).astype(np.float32)))
    return model


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_parameter_gradients_equal_the_plain_ones_whether_or_not_the_input_requires_grad(input_requires_grad):
    data = np.random.RandomState(6).rand(6, 1, 4).astype(np.float32)

    def make(lib):
        class Holder(lib.nn.Module):
            def __init__(self, mod):
                super().__init__()
                self.module = mod

            def forward(self, data):
                return self.module(data)

        checkpointed, plain = Holder(_linear_stack(lib)), Holder(_linear_stack(lib))
        outs, plain_outs = [], []
        for row in data:
            r = lib.tensor(row, requires_grad=input_requires_grad)
            outs.append(ck(lib, checkpointed, data=r))
            plain_outs.append(plain(r))
        lib.stack(outs).mean().backward()
        lib.stack(plain_outs).mean().backward()
        grads = [p.grad.numpy().copy() for p in checkpointed.parameters()]
        for g, p in zip(grads, plain.parameters(), strict=True):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-6)
        return [g.astype(np.float64) for g in grads]
    got = {name: make(lib) for name, lib in LIBS.items()}
    for r, t in zip(got["retrograd"], got["torch"], strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-5, atol=1e-7)


def test_a_dict_input_and_output_pass_through():
    def make(lib):
        model = _linear_stack(lib)[0]
        x = lib.tensor(X0.astype(np.float32))
        out = ck(lib, lambda d: {"result": model(d["tensor"])}, {"tensor": x})["result"].sum()
        plain = model(x).sum()
        assert out.item() == plain.item()
        out.backward()
        grads = [p.grad.numpy().copy() for p in model.parameters()]
        model.zero_grad()
        plain.backward()
        for g, p in zip(grads, model.parameters(), strict=True):
            np.testing.assert_array_equal(g, p.grad.numpy())
        return [g.astype(np.float64) for g in grads]
    got = {name: make(lib) for name, lib in LIBS.items()}
    for r, t in zip(got["retrograd"], got["torch"], strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-5, atol=1e-7)


def test_non_tensor_outputs_come_back_and_tensor_ones_get_gradients():
    def make(lib):
        a = lib.tensor(X0, requires_grad=True)
        scale, out, none, text = ck(lib, lambda t, k: (k, t.sin() * k, None, "bar"), a, 3)
        assert (scale, none, text) == (3, None, "bar")
        out.sum().backward()
        return a.grad.numpy()
    _same_in_both(make)


def test_tensor_that_does_not_require_grad_reaches_a_saving_function_as_itself():
    def make(lib):
        seen = []

        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(y)
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                seen.extend(ctx.saved_tensors)
                return g, None

        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(1.0)
        ck(lib, Keep.apply, a, b).backward()
        return seen[0] is b
    assert _same_in_both(make) is True


def test_parameter_used_inside_and_outside_runs_its_hook_once():
    def make(lib):
        w = lib.tensor(X0, requires_grad=True)
        count = [0]
        w.register_hook(lambda g: count.__setitem__(0, count[0] + 1))
        h = w * lib.tensor(X0 + 1.0, requires_grad=True)
        ck(lib, lambda t: w * t, h).sum().backward()
        return count[0], w.grad.numpy()
    assert _same_in_both(make)[0] == 1


def test_no_grad_segment_inside_the_checkpoint_works():
    def make(lib):
        lin = _linear_stack(lib)[2]

        def no_grad_module(x):
            with lib.no_grad():
                return lin(x)

        a = lib.tensor(np.random.RandomState(7).randn(3, 8).astype(np.float32), requires_grad=True)
        for _ in range(2):
            out = ck(lib, no_grad_module, a)
            assert not out.requires_grad
            out = out + a[:, :4]
            out.sum().backward()
        return a.grad.numpy().astype(np.float64)
    _same_in_both(make)


def test_second_derivative_through_the_checkpoint():
    def make(lib):
        x = lib.tensor(X0[0], requires_grad=True)
        (g,) = lib.autograd.grad(ck(lib, lambda t: (t.sin() * t ** 3).sum(), x), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        return g.detach().numpy(), h.numpy()
    _same_in_both(make)


def test_backward_with_inputs_reaches_only_those_inputs():
    def make(lib):
        a = lib.tensor(X0[0], requires_grad=True)
        b = lib.tensor(X0[1], requires_grad=True)
        ck(lib, lambda x, y: (x * y).sin(), a, b).sum().backward(inputs=[a])
        assert b.grad is None
        return a.grad.numpy()
    _same_in_both(make)


def test_input_modified_in_place_after_the_forward_raises_at_backward():
    def make(lib):
        a = lib.tensor([0.5, 1.0], requires_grad=True)
        b = a * 2
        out = ck(lib, lambda t: t.sin().exp(), b)
        with lib.no_grad():
            b.add_(1)
        kind, sentence = outcome(lambda: out.sum().backward())
        return kind, sentence.split(": [")[0]
    assert _same_in_both(make) == ("RuntimeError", "one of the variables needed for gradient computation has been "
                                                   "modified by an inplace operation")


# -- how often the segment runs ------------------------------------------------------------------
def _counting(calls, body):
    def fn(*args):
        calls.append(1)
        return body(*args)
    return fn


def test_each_backward_with_retain_graph_recomputes_and_accumulates():
    def make(lib):
        calls = []
        a = lib.tensor(X0, requires_grad=True)
        out = ck(lib, _counting(calls, lambda t: t.sin().exp().cos()), a)
        counts = [len(calls)]
        out.sum().backward(retain_graph=True)
        counts.append(len(calls))
        once = a.grad.numpy().copy()
        out.sum().backward(retain_graph=True)
        counts.append(len(calls))
        lib.autograd.grad(out.sum(), a)
        counts.append(len(calls))
        np.testing.assert_allclose(a.grad.numpy(), 2 * once, rtol=1e-12)
        return counts, a.grad.numpy()
    assert _same_in_both(make)[0] == [1, 2, 3, 4]


def test_backward_twice_without_retain_graph_raises_the_second_time():
    def make(lib):
        a = lib.tensor(X0, requires_grad=True)
        out = ck(lib, lambda t: t.sin().exp(), a).sum()
        out.backward()
        return outcome(lambda: out.backward())
    assert _same_in_both(make) == ("RuntimeError", "Trying to backward through the graph a second time (or directly "
                                                   "access saved tensors after they have already been freed).")


def test_each_access_of_a_saved_tensor_outside_backward_recomputes():
    def make(lib):
        calls = []

        def foo(a):
            calls.append(1)
            b = a * a
            a * b
            return lib.exp(a)

        d = ck(lib, foo, lib.tensor(X0[0], requires_grad=True))
        counts = [len(calls)]
        for _ in range(2):
            np.testing.assert_allclose(d.grad_fn._saved_result.detach().numpy(), np.exp(X0[0]), rtol=1e-12)
            counts.append(len(calls))
        d.sum().backward()
        counts.append(len(calls))
        return counts, outcome(lambda: d.grad_fn._saved_result)
    counts, after = _same_in_both(make)
    assert counts == [1, 2, 3, 4]
    assert after[0] == "RuntimeError"


def test_a_recomputed_tensor_is_handed_out_once_per_backward():
    def make(lib):
        second = []

        class SavesFive(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, z):
                w = x * y * z
                out = w + w
                ctx.save_for_backward(x, y, z, w, out)
                return out

            @staticmethod
            def backward(ctx, grad_out):
                x, y, z, w, out = ctx.saved_tensors
                second.append(outcome(lambda: ctx.saved_tensors))
                return x, y, z

        x, y, z = (lib.tensor(v, requires_grad=True) for v in (1.0, 2.0, 3.0))

        def foo(x, y, z):
            return SavesFive.apply(x * y * z, y * y * z, z * z)

        ck(lib, foo, x, y, z).sum().backward()
        return second, [x.grad.item(), y.grad.item(), z.grad.item()]
    second, _ = _same_in_both(make)
    assert second == [("CheckpointError", "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                                          "already unpacked once.")]


def _early_stop_counts(lib, fn):
    """How many times ``fn`` runs (forward included) under each way of setting early stop."""
    settings = [
        (None, None), (None, False), (None, True), (False, None), (True, None),
        (False, True), (True, False),  # the context manager wins over the argument
    ]
    counts = []
    for context, argument in settings:
        calls = []
        a = lib.tensor(1.0, requires_grad=True)
        kwargs = {} if argument is None else {"early_stop": argument}
        early_stop_context = lib.utils.checkpoint.set_checkpoint_early_stop
        manager = contextlib.nullcontext() if context is None else early_stop_context(context)
        with manager:
            out = ck(lib, _counting(calls, fn), a, **kwargs)
        out.backward()
        counts.append(len(calls))
    with lib.utils.checkpoint.set_checkpoint_early_stop(False), \
            lib.utils.checkpoint.set_checkpoint_early_stop(True):
        calls = []
        out = ck(lib, _counting(calls, fn), lib.tensor(1.0, requires_grad=True), early_stop=False)
    out.backward()
    counts.append(len(calls))  # the innermost context manager is the one in force
    return counts


def test_early_stop_skips_what_follows_the_last_saved_tensor():
    def clone_at_the_end(lib):
        inner_calls = []

        def fn(x):
            return _counting(inner_calls, lambda t: t.clone())(x.sin().cos())
        return fn, inner_calls

    def make(lib):
        calls = []
        fn, inner_calls = clone_at_the_end(lib)
        for context, argument in [(None, None), (None, False), (None, True), (False, None), (True, None),
                                  (False, True), (True, False)]:
            inner_calls.clear()
            kwargs = {} if argument is None else {"early_stop": argument}
            manager = (contextlib.nullcontext() if context is None
                       else lib.utils.checkpoint.set_checkpoint_early_stop(context))
            with manager:
                out = ck(lib, fn, lib.tensor(1.0, requires_grad=True), **kwargs)
            out.backward()
            calls.append(len(inner_calls))
        return calls
    assert _same_in_both(make) == [1, 2, 1, 2, 1, 2, 1]


def test_segment_is_rerun_once_if_it_saves_anything_and_never_if_not():
    def make(lib):
        return (_early_stop_counts(lib, lambda x: x.sin()),  # saves its input: one rerun, early stop or not
                _early_stop_counts(lib, lambda x: x.clone()))  # saves nothing: no rerun at all
    sin_counts, clone_counts = _same_in_both(make)
    assert sin_counts == [2] * 8
    assert clone_counts == [1] * 8


def test_graph_exec_group_shares_one_recomputation_between_backward_calls():
    def make(lib):
        counts = []
        for use_group in (True, False):
            calls = []

            def fn(x):
                calls.append(1)
                y = x.sin().cos()
                return y, y.sin().cos()

            x = lib.tensor(X0, requires_grad=True)
            y, z = ck(lib, fn, x)
            group = lib.utils.checkpoint.GraphExecGroup() if use_group else contextlib.nullcontext()
            with group:
                (grad_y,) = lib.autograd.grad(z, inputs=(y,), grad_outputs=(lib.ones(3, 4, dtype=lib.float64),))
                (grad_x,) = lib.autograd.grad(y, inputs=(x,), grad_outputs=(grad_y,))
            counts.append(len(calls))
        return counts, grad_x.numpy()
    assert _same_in_both(make)[0] == [2, 3]


def test_graph_exec_group_refuses_overlapping_backward_calls_and_nesting():
    def make(lib):
        x = lib.tensor(X0, requires_grad=True)
        out = ck(lib, lambda t: t.sin().cos(), x)
        group_cls = lib.utils.checkpoint.GraphExecGroup
        with group_cls():
            out.sum().backward(retain_graph=True)
            overlap = outcome(lambda: out.sum().backward())
            nested = outcome(lambda: group_cls().__enter__())
        return overlap, nested
    overlap, nested = _same_in_both(make)
    assert overlap == ("CheckpointError", "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                                          "already unpacked once.")
    assert nested == ("RuntimeError", "GraphExecGroup contexts cannot be nested.")


def test_graph_exec_group_message_names_the_overlap():
    x = rg.tensor(X0, requires_grad=True)
    out = ck(rg, lambda t: t.sin().cos(), x)
    with rg.utils.checkpoint.GraphExecGroup():
        out.sum().backward(retain_graph=True)
        with pytest.raises(rg.utils.checkpoint.CheckpointError, match="Performing two backward calls that overlap"):
            out.sum().backward()


# -- context_fn ----------------------------------------------------------------------------------
class _Logged:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def __enter__(self):
        self.log.append(self.name + "+")

    def __exit__(self, *exc):
        self.log.append(self.name + "-")


def test_context_fn_wraps_the_forward_and_each_recomputation_but_not_a_no_grad_call():
    def make(lib):
        log = []

        def context_fn():
            return _Logged(log, "forward"), _Logged(log, "recompute")

        def fn(x):
            log.append("fn")
            return x.sin().exp()

        a = lib.tensor(X0[0], requires_grad=True)
        out = ck(lib, fn, a, context_fn=context_fn)
        out.sum().backward(retain_graph=True)
        out.sum().backward()
        with lib.no_grad():
            ck(lib, fn, a, context_fn=context_fn)
        return log
    assert _same_in_both(make) == ["forward+", "fn", "forward-", "recompute+", "fn", "recompute-", "recompute+", "fn",
                                   "recompute-", "fn"]


def test_forward_context_that_swallows_the_error_raises():
    class Swallow:
        def __enter__(self):
            pass

        def __exit__(self, *exc):
            return True

    def make(lib):
        def fn(x):
            raise ValueError("boom")
        a = lib.tensor(1.0, requires_grad=True)
        plain = outcome(lambda: ck(lib, fn, a))
        swallowed = outcome(lambda: ck(lib, fn, a, context_fn=lambda: (Swallow(), contextlib.nullcontext())))
        return plain, swallowed
    assert _same_in_both(make) == (
        ("ValueError", "boom"),
        ("RuntimeError", "torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception "
                         "raised during the checkpointed forward."))


# -- the determinism check -----------------------------------------------------------------------
def _changing(first, later):
    calls = [0]

    def fn(x):
        calls[0] += 1
        return first(x) if calls[0] == 1 else later(x)
    return fn


def _non_determinism_outcomes(lib, **kwargs):
    def save_3(x):
        return x.sin().exp().sin()

    def save_2(x):
        return x.sin().exp()

    def save_2_other_shape(x):
        return x.sin() * lib.tensor([1.0, 2.0])

    def run(first, later, early_stop=True):
        a = lib.tensor([0.3], requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            out = ck(lib, _changing(first, later), a, **kwargs)
        return outcome(lambda: out.sum().backward())

    return [run(save_3, save_2), run(save_2, save_3, early_stop=False), run(save_2, save_3),
            run(save_2, save_2_other_shape)]


def test_recomputation_that_saves_other_tensors_raises_checkpoint_error():
    results = _same_in_both(_non_determinism_outcomes)
    assert results == [
        ("CheckpointError", "torch.utils.checkpoint: A different number of tensors was saved during the original "
                            "forward and recomputation."),
        ("CheckpointError", "torch.utils.checkpoint: trying to save more tensors during recomputation than during "
                            "the original forward pass."),
        ("ok", None),  # early stop: the extra tensors are never reached
        ("CheckpointError", "torch.utils.checkpoint: Recomputed values for the following tensors have different "
                            "metadata than during the forward pass."),
    ]


def test_metadata_error_names_the_tensor_and_both_shapes():
    a = rg.tensor([0.3], requires_grad=True)
    out = ck(rg, _changing(lambda x: x.sin().exp(), lambda x: x.sin() * rg.tensor([1.0, 2.0])), a)
    with pytest.raises(rg.utils.checkpoint.CheckpointError) as info:
        out.sum().backward()
    assert isinstance(info.value, RuntimeError)
    message = str(info.value)
    assert "tensor at position 1:\nsaved metadata: {'shape': retrograd.Size([1])" in message
    assert "recomputed metadata: {'shape': retrograd.Size([2])" in message


def test_determinism_check_none_skips_the_check():
    def make(lib):
        results = _non_determinism_outcomes(lib, determinism_check="none")
        a = lib.tensor([0.5], requires_grad=True)
        out = ck(lib, _changing(lambda x: x.sin().exp(), lambda x: x.sin() * lib.tensor([1.0, 2.0])), a,
                 determinism_check="none")
        out.sum().backward()
        return results[3], a.grad.numpy()
    assert _same_in_both(make)[0] == ("ok", None)


def test_unknown_determinism_check_raises_value_error():
    def make(lib):
        return outcome(lambda: ck(lib, lambda x: x, lib.ones(1, requires_grad=True), determinism_check="strict"))
    assert _same_in_both(make) == ("ValueError", "determinism_check should be one of ['default', 'none'], but got "
                                                 "strict")


# -- debug mode ----------------------------------------------------------------------------------
DEBUG_SENTENCE = (" An error happened while unpacking tensors; dumping logs of latest computation\nbecause you passed "
                  "`debug=True` to `torch.utils.checkpoint.checkpoint()`.")
METADATA_SENTENCE = ("torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                     "than during the forward pass.")


@contextlib.contextmanager
def _torch_operator_log_detached():
    """torch's debug mode logs every operator to its "LoggingTensor" logger, in records that pytest's log
    capture (attached to that logger once torch has made it non-propagating) cannot format: detach it."""
    logger = logging.getLogger("LoggingTensor")
    saved = logger.propagate, logger.handlers[:]
    logger.propagate = False
    logger.handlers.clear()
    try:
        yield
    finally:
        logger.propagate, logger.handlers[:] = saved


def _debug_outcomes(lib):
    with _torch_operator_log_detached():
        return _debug_runs(lib)


def _debug_runs(lib):
    ck_module = lib.utils.checkpoint

    def run(debug, enabled):
        a = lib.tensor([0.3], requires_grad=True)
        manager = contextlib.nullcontext() if enabled is None else ck_module.set_checkpoint_debug_enabled(enabled)
        with manager:
            out = ck(lib, _changing(lambda x: x.sin().exp(), lambda x: x.sin() * lib.tensor([1.0, 2.0])), a,
                     debug=debug)
        try:
            out.sum().backward()
        except ck_module.CheckpointError as e:
            text = str(e)
            return text[:len(DEBUG_SENTENCE)] if text.startswith(" ") else first_sentence(text), \
                "You are seeing this error because you passed `debug=True` to checkpoint" in text
        return None
    return [run(True, None), run(False, True), run(True, False)]


def test_debug_error_explains_the_mismatch_and_the_global_switch_wins():
    assert _same_in_both(_debug_outcomes) == [(DEBUG_SENTENCE, True), (DEBUG_SENTENCE, True),
                                              (METADATA_SENTENCE, False)]


def test_debug_error_lists_the_saved_tensors_with_the_code_that_saved_them():
    def segment(x):
        return x.sin().exp()

    a = rg.tensor([0.3], requires_grad=True)
    out = ck(rg, _changing(segment, lambda x: x.sin() * rg.tensor([1.0, 2.0])), a, debug=True)
    with pytest.raises(rg.utils.checkpoint.CheckpointError) as info:
        out.sum().backward()
    text = str(info.value)
    forward_part, recompute_part = text.split("2. Tensors saved during recomputation")
    assert "retrograd.float32[1] on cpu   (2 of 2 in original)" in forward_part
    assert "return x.sin().exp()" in forward_part
    assert "retrograd.float32[2] on cpu   (2 of 2 in recompute)" in recompute_part
    assert "rg.tensor([1.0, 2.0])" in recompute_part
    assert METADATA_SENTENCE in str(info.value.__cause__)


def test_debug_with_a_context_fn_raises_value_error():
    def make(lib):
        return outcome(lambda: ck(lib, lambda x: x, lib.ones(1, requires_grad=True), debug=True,
                                  context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext())))
    assert _same_in_both(make) == ("ValueError", "debug=True is incompatible with non-default context_fn")


def test_engine_works_after_a_checkpoint_error():
    a = rg.tensor([0.3], requires_grad=True)
    out = ck(rg, _changing(lambda x: x.sin().exp(), lambda x: x.sin()), a)
    with pytest.raises(rg.utils.checkpoint.CheckpointError):
        out.sum().backward()
    ck(rg, lambda x: x.sin().exp(), a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.cos(0.3) * np.exp(np.sin(0.3)), rtol=1e-6)


def test_gradcheck_and_gradgradcheck_through_the_checkpoint():
    x = rg.tensor(X0[:2], requires_grad=True)
    w = rg.tensor(W0, requires_grad=True)

    def fn(x, w):
        return ck(rg, lambda a, b: (a @ b).tanh() * a.sum(), x, w)
    assert rg.autograd.gradcheck(fn, (x, w))
    assert rg.autograd.gradgradcheck(fn, (x, w))
