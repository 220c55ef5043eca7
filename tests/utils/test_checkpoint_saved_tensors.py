"""What checkpointing relies on in the autograd core, against torch: saved-tensor hooks and custom Functions.

A node unpacks each saved tensor once per backward call (the non-reentrant checkpoint hands out
each recomputed tensor once), hooks see and give back the very tensors that do not require
grad, and a custom Function's non-tensor outputs get no gradient (the reentrant checkpoint
returns its segment's outputs, tensors or not).
"""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

LIBS = {"retrograd": rg, "torch": torch}

BINARY = {
    "div": lambda lib, a, b: a / b,
    "matmul": lambda lib, a, b: a @ b,
    "pow": lambda lib, a, b: a ** b,
    "where": lambda lib, a, b: lib.where(a > 0.9, a, b),
    "maximum": lambda lib, a, b: lib.maximum(a, b),
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_each_saved_tensor_is_unpacked_once_per_backward(op):
    a0, b0 = np.random.RandomState(0).rand(3, 3) + 0.5, np.random.RandomState(1).rand(3, 3) + 0.5
    counts = {}
    for name, lib in LIBS.items():
        a = lib.tensor(a0, requires_grad=True)
        b = lib.tensor(b0, requires_grad=True)
        packs, unpacks = [], []

        def pack(t, packs=packs):
            packs.append(1)
            return t

        def unpack(t, unpacks=unpacks):
            unpacks.append(1)
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = BINARY[op](lib, a, b)
        y.sum().backward()
        counts[name] = len(packs), len(unpacks), a.grad.numpy(), b.grad.numpy()
    assert counts["retrograd"][:2] == counts["torch"][:2]
    assert counts["retrograd"][0] == counts["retrograd"][1]
    np.testing.assert_allclose(counts["retrograd"][2], counts["torch"][2], rtol=1e-12)
    np.testing.assert_allclose(counts["retrograd"][3], counts["torch"][3], rtol=1e-12)


def test_unpack_once_holds_when_only_one_input_needs_the_shared_tensor():
    for lib in LIBS.values():
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([3.0, 4.0], dtype=lib.float64)
        unpacks = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: unpacks.append(1) or t):
            y = a / b
        y.sum().backward()
        assert len(unpacks) == 1
        assert a.grad.tolist() == [1 / 3, 1 / 4]


def _saving_function(lib, seen):
    class Keep(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(y)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            seen.extend(ctx.saved_tensors)
            return g, None
    return Keep


def test_pack_hook_receives_a_tensor_that_does_not_require_grad_itself():
    results = {}
    for name, lib in LIBS.items():
        packed = []
        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(2.0)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
            _saving_function(lib, []).apply(a, b)
        results[name] = packed[0] is b
    assert results == {"retrograd": True, "torch": True}


def test_unpack_hook_result_comes_back_itself_when_nothing_needs_connecting():
    results = {}
    for name, lib in LIBS.items():
        seen, made = [], []
        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(2.0)

        def unpack(t, made=made, lib=lib):
            made.append(t * 3)
            return made[-1]

        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            out = _saving_function(lib, seen).apply(a, b)
        out.backward()
        results[name] = seen[0] is made[0], seen[0].item()
    assert results == {"retrograd": (True, 6.0), "torch": (True, 6.0)}


def test_unpacked_tensor_that_requires_grad_is_reconnected_to_the_graph():
    for lib in LIBS.values():
        a = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = a.exp()
        saved = y.grad_fn._saved_result
        assert saved.requires_grad and saved.grad_fn is y.grad_fn
        (g,) = lib.autograd.grad(y, a, create_graph=True)
        (h,) = lib.autograd.grad(g, a)
        assert h.item() == pytest.approx(np.exp(3.0))


def test_function_with_non_tensor_outputs_gets_none_for_them_and_the_plain_gradients():
    t1v, t2v, t3v = (np.random.RandomState(s).rand(10) for s in (4, 5, 6))
    results = {}
    for name, lib in LIBS.items():
        received = []

        class Mixed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t1, t2, scale, t3):
                ctx.scale = scale
                ctx.save_for_backward(t1, t2, t3)
                return scale, (t1 + t2 * t3) * scale, None, True, (t1 * t2 + t3) * scale, "bar", t1

            @staticmethod
            def backward(ctx, *grads):
                received.append([g is None for g in grads])
                var1, var2, var3 = ctx.saved_tensors
                s = ctx.scale
                return (grads[1] * s + grads[4] * var2 * s + grads[6], grads[1] * var3 * s + grads[4] * var1 * s,
                        None, grads[1] * var2 * s + grads[4] * s)

        t1 = lib.tensor(t1v, requires_grad=True)
        t2 = lib.tensor(t2v, requires_grad=True)
        t3 = lib.tensor(t3v)
        res = Mixed.apply(t1, t2, 7, t3)
        lib.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
        assert t3.grad is None
        results[name] = received, t1.grad.numpy(), t2.grad.numpy()
    assert results["retrograd"][0] == results["torch"][0] == [[True, False, True, True, False, True, False]]
    np.testing.assert_allclose(results["retrograd"][1], results["torch"][1], rtol=1e-12)
    np.testing.assert_allclose(results["retrograd"][2], results["torch"][2], rtol=1e-12)
