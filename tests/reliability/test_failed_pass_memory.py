"""A failed backward pass frees its graph by reference counting, as a successful one does.

See Note [A failed pass is freed by reference counting]. The cyclic collector is off in each
test, so anything a cycle keeps alive stays alive.
"""
import gc
import traceback
import weakref

import pytest

import retrograd as rg


@pytest.fixture(autouse=True)
def _no_cyclic_collector():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


class Boom(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("boom")


def _failing_step(device, fail):
    """Runs a pass over a 4 MiB saved activation that fails in ``fail``; returns weak refs to its graph."""
    x = rg.ones(1 << 20, requires_grad=True)
    a = (x.to(device) * 2).exp()  # exp saves its 4 MiB result
    y = fail(a).sum()
    refs = weakref.ref(a.grad_fn), weakref.ref(y.grad_fn)
    del a
    with pytest.raises(ValueError, match="boom"):
        y.backward()
    return refs


def _boom_in_hook(a):
    def hook(grad):
        raise ValueError("boom")
    b = a * 1.0
    b.register_hook(hook)
    return b


@pytest.mark.parametrize("device", ["cpu", "fake"])
@pytest.mark.parametrize("fail", [Boom.apply, _boom_in_hook], ids=["function", "hook"])
def test_a_failed_pass_frees_its_graph_and_saved_tensors_at_once(device, fail):
    refs = _failing_step(device, fail)
    assert [r() for r in refs] == [None, None]


def test_failing_steps_leave_no_objects_behind():
    _failing_step("cpu", Boom.apply)  # warm caches
    before = len(gc.get_objects())
    for _ in range(20):
        _failing_step("cpu", Boom.apply)
    assert len(gc.get_objects()) - before < 60  # was about 36 a failure, kept by cycles


def test_the_error_still_shows_the_users_frame_and_the_node():
    x = rg.ones(2, requires_grad=True)
    with pytest.raises(ValueError) as info:
        Boom.apply(x).sum().backward()
    text = "".join(traceback.format_exception(info.value))
    assert 'raise ValueError("boom")' in text and "in backward" in text
    assert "(raised in the backward of BoomBackward)" in text
