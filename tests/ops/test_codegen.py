"""The generated fast path of an op call (ops/_codegen.py) does what the generic call_op does."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.ops._codegen import eligible
from retrograd.ops._registry import REGISTRY, call_op


def _leaf(*shape, dtype=rg.float64):
    return rg.randn(*shape, dtype=dtype, requires_grad=True)


CASES = [
    ("mul", lambda: (_leaf(2, 3), _leaf(3))),
    ("mul", lambda: (_leaf(2, 3), 1.5)),
    ("add", lambda: (_leaf(2, 3), _leaf(2, 3), 2.0)),
    ("sub", lambda: (rg.arange(6).reshape(2, 3), _leaf(3), 1)),
    ("div", lambda: (_leaf(4), rg.tensor(2.0, dtype=rg.float32))),
    ("where", lambda: (rg.tensor([True, False, True]), _leaf(3), 0.0)),
    ("relu", lambda: (_leaf(5),)),
    ("tanh", lambda: (_leaf(2, 2),)),
    ("sum", lambda: (_leaf(2, 3), 1, True, None)),
    ("mean", lambda: (_leaf(2, 3), None, False, None)),
    ("reshape", lambda: (_leaf(2, 3), (3, 2))),
    ("expand", lambda: (rg.tensor(2.0, dtype=rg.float64, requires_grad=True), (2, 3))),
    ("matmul", lambda: (_leaf(2, 3), _leaf(3))),
    ("pow", lambda: (_leaf(3), 3)),
]


@pytest.mark.parametrize("name,make", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_generated_call_matches_generic_call(name, make):
    op = REGISTRY[name]
    assert eligible(op), f"{name} no longer takes the generated path"
    rg.manual_seed(3)
    fast_args = make()
    rg.manual_seed(3)
    slow_args = make()
    kwonly = [p.name for p in op.signature.parameters.values() if p.kind is p.KEYWORD_ONLY]
    npos = len(op.params) - len(kwonly)
    fast = op.function(*fast_args[:npos], **dict(zip(kwonly, fast_args[npos:], strict=True)))
    slow = call_op(op, slow_args)
    np.testing.assert_array_equal(fast.numpy(force=True), slow.numpy(force=True))
    assert fast.dtype is slow.dtype
    assert fast.requires_grad == slow.requires_grad
    assert type(fast.grad_fn) is type(slow.grad_fn)
    if fast.grad_fn is not None:
        assert [type(n) for n, _ in fast.grad_fn.next_functions] == [
            type(n) for n, _ in slow.grad_fn.next_functions]
        assert fast.grad_fn.saved_values().keys() == slow.grad_fn.saved_values().keys()
        fast_leaves = [a for a in fast_args if isinstance(a, rg.Tensor) and a.requires_grad]
        slow_leaves = [a for a in slow_args if isinstance(a, rg.Tensor) and a.requires_grad]
        seed = rg.ones_like(fast)
        g_fast = rg.autograd.grad(fast, fast_leaves, seed, create_graph=True)
        g_slow = rg.autograd.grad(slow, slow_leaves, seed, create_graph=True)
        for a, b in zip(g_fast, g_slow, strict=True):
            np.testing.assert_allclose(a.numpy(force=True), b.numpy(force=True), rtol=1e-12)
            assert a.requires_grad == b.requires_grad


def test_generated_call_records_nothing_without_grad_mode():
    x = _leaf(3)
    with rg.no_grad():
        y = REGISTRY["mul"].function(x, x)
    assert y.grad_fn is None and not y.requires_grad
