"""Interposers see every op call, on every path of the op call (Note [Op call interposition])."""
import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd.ops._call import interposed, interposition, pop_interposer, push_interposer


class Recorder:
    """Records the name of each op it sees, then lets the call proceed."""

    def __init__(self):
        self.names = []

    def interpose(self, op, args, inplace, proceed):
        self.names.append(op.name)
        return proceed(op, args, inplace)


@pytest.fixture(autouse=True)
def _no_interposer_left():
    yield
    assert interposition.stack == ()


def test_an_interposer_sees_each_op_call_and_its_result_is_the_ops():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    rec = Recorder()
    with interposed(rec):
        y = (x * 2 + 1).sum()
    assert rec.names == ["mul", "add", "sum"]
    assert y.item() == 15.0
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_in_place_calls_and_methods_are_seen():
    x = rg.zeros(3)
    rec = Recorder()
    with interposed(rec):
        x.add_(1)
        x.exp()
    assert rec.names == ["add", "exp"]
    np.testing.assert_array_equal(x.numpy(), [1.0, 1.0, 1.0])


def test_nothing_is_seen_once_the_interposer_is_popped():
    rec = Recorder()
    with interposed(rec):
        rg.ones(2).neg()
    rg.ones(2).neg()
    assert rec.names == ["ones", "neg"]  # a factory is an op call too (Note [Factories as op calls])


def test_an_interposer_may_replace_the_result():
    class Doubler:
        def interpose(self, op, args, inplace, proceed):
            out = proceed(op, args, inplace)
            return out * 2 if op.name == "exp" else out

    with interposed(Doubler()):
        y = rg.zeros(2).exp()
    np.testing.assert_array_equal(y.numpy(), [2.0, 2.0])


def test_an_interposers_own_op_calls_see_only_the_interposers_inside_it():
    inner = Recorder()

    class Outer:
        names = []

        def interpose(self, op, args, inplace, proceed):
            self.names.append(op.name)
            out = proceed(op, args, inplace)
            if op.name == "exp":
                out.neg()  # seen by the inner interposer, not by this one
            return out

    outer, x = Outer(), rg.ones(2)
    with interposed(inner), interposed(outer):
        x.exp()
    assert outer.names == ["exp"]
    assert inner.names == ["exp", "neg"]


def test_the_most_recently_pushed_interposer_is_outermost():
    order = []

    class Tag:
        def __init__(self, tag):
            self.tag = tag

        def interpose(self, op, args, inplace, proceed):
            order.append(self.tag)
            return proceed(op, args, inplace)

    x = rg.ones(1)
    with interposed(Tag("first")), interposed(Tag("second")):
        x.neg()
    assert order == ["second", "first"]


def test_a_pack_hook_run_by_the_call_sees_every_interposer():
    rec = Recorder()
    x = rg.ones(2, requires_grad=True)

    def pack(t):
        return t.clone()

    with interposed(rec), rg.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        x.exp()
    assert rec.names == ["exp", "clone"]


def test_an_error_in_an_interposer_reaches_the_caller_and_the_next_call_is_plain():
    class Failing:
        def interpose(self, op, args, inplace, proceed):
            raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"), interposed(Failing()):
        rg.ones(2).neg()
    x = rg.ones(2, requires_grad=True)
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_calls_on_other_threads_are_seen():
    rec = Recorder()
    push_interposer(rec)
    try:
        t = threading.Thread(target=lambda: rg.ones(2).neg())  # both calls seen: the factory is an op call
        t.start()
        t.join()
    finally:
        pop_interposer(rec)
    assert rec.names == ["ones", "neg"]


def test_backward_formulas_run_through_interposers_when_they_record_a_graph():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    rec = Recorder()
    with interposed(rec):
        (g,) = rg.autograd.grad(y, x, create_graph=True)
    assert "mul" in rec.names
    np.testing.assert_array_equal(g.detach().numpy(), [2.0, 4.0])


def test_the_engines_sum_of_a_broadcast_gradient_is_seen_while_an_interposer_is_active():
    # validate_outputs sums a bias's (2, 3) gradient down to (3,) on the array where no interposer is active
    # (Note [Summing a broadcast gradient]); with one, the calls of sum_to_size are seen, as before.
    x = rg.ones(2, 3)
    b = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x + b).sum()
    rec = Recorder()
    with interposed(rec):
        loss.backward(retain_graph=True)
    assert rec.names.count("sum") == 1
    np.testing.assert_array_equal(b.grad.numpy(), [2.0, 2.0, 2.0])
    rec.names.clear()
    loss.backward()  # no interposer: nothing to see, the same gradient
    assert rec.names == []
    np.testing.assert_array_equal(b.grad.numpy(), [4.0, 4.0, 4.0])
