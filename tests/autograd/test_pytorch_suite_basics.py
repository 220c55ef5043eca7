"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd), written again, run with retrograd and torch.

Each scenario takes the library (``rg`` or ``torch``) and returns what it observed (tensors as
nested lists); both libraries must observe the same, and raise the same error type and first
sentence. The numbers come from a seeded NumPy generator, the same for both.
"""
import functools
import gc
import re
import warnings
import weakref

import numpy as np
import pytest

import retrograd as rg
import errors_like_torch
from errors_like_torch import first_sentence

torch = pytest.importorskip("torch")


def _plain(value):
    """``value`` with tensors as (rounded) nested lists, so that both libraries' results compare."""
    if isinstance(value, (rg.Tensor, torch.Tensor)):
        return np.round(np.asarray(value.detach().tolist(), dtype=float), 10).tolist()
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


outcome = functools.partial(errors_like_torch.outcome, plain=_plain)
same_in_both = functools.partial(errors_like_torch.same_in_both, plain=_plain)


def randn(lib, *shape, requires_grad=False, seed=0):
    data = np.random.default_rng(seed + 17 * len(shape) + int(np.prod(shape))).standard_normal(shape)
    return lib.tensor(data.tolist(), dtype=lib.float64, requires_grad=requires_grad)


def ones(lib, *shape, requires_grad=False):
    return lib.ones(*shape, dtype=lib.float64, requires_grad=requires_grad)


def function(lib, forward, backward, name="MyFunction", **extra):
    body = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    body.update({k: staticmethod(v) for k, v in extra.items()})
    return type(name, (lib.autograd.Function,), body)


# -- custom Functions ----------------------------------------------------------------------------
def _tensor_scalar_tensor(lib, once):
    def forward(ctx, t1, k, t2):
        ctx.k = k
        ctx.save_for_backward(t1, t2)
        return t1 + k * t2 + t1 * t2

    def backward(ctx, g):
        t1, t2 = ctx.saved_tensors
        return g + g * t2, None, g * ctx.k + g * t1
    return function(lib, forward, lib.autograd.function.once_differentiable(backward) if once else backward)


def _graph_desc(fn):
    if fn is None:
        return "None"
    inner = ", ".join(_graph_desc(n) for n, _ in fn.next_functions)
    return f"{type(fn).__name__}({inner})"


@pytest.mark.parametrize("once", [False, True])
def test_function_with_a_python_scalar_argument_and_create_graph(once):
    def scenario(lib):
        x, y = randn(lib, 5, 5, requires_grad=True), randn(lib, 5, 5, requires_grad=True, seed=1)
        result = _tensor_scalar_tensor(lib, once).apply(x, 2, y)
        result.sum().backward(lib.ones((), dtype=lib.float64, requires_grad=True), create_graph=True)
        return x.grad, y.grad, _graph_desc(x.grad.grad_fn), _graph_desc(y.grad.grad_fn)
    same_in_both(scenario)


@pytest.mark.parametrize("shape", [(1,), ()])
def test_function_returning_its_input(shape):
    def scenario(lib):
        f = function(lib, lambda ctx, x: x, lambda ctx, g: g * 2)
        v = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        f.apply(v).backward()
        first = v.grad.clone()
        with lib.no_grad():
            v.grad.zero_()
        f.apply(v.clone()).backward()
        return first, v.grad
    same_in_both(scenario)


def test_function_returning_undefined_gradient_leaves_grad_none():
    def scenario(lib):
        f = function(lib, lambda ctx, x: x * 2, lambda ctx, g: None)
        x = ones(lib, 1, requires_grad=True)
        f.apply(x).backward()
        f.apply(x ** 2).backward()
        f.apply(x).sum().backward()
        return x.grad, lib.autograd.grad(f.apply(x), x, allow_unused=True)[0]
    assert same_in_both(scenario) == ("ok", (None, None))


def test_legacy_function_call_raises():
    def scenario(lib):
        class Legacy(lib.autograd.Function):
            def forward(self, x):
                return x

            def backward(self, g):
                return g
        Legacy()(ones(lib, 3, 4))
    assert same_in_both(scenario)[0] == "RuntimeError"


def test_exception_in_custom_backward_propagates():
    def scenario(lib):
        def backward(ctx, g):
            raise Exception("Simulate error on backward pass")
        f = function(lib, lambda ctx, x: x.clone(), lib.autograd.function.once_differentiable(backward))
        t1, t2 = randn(lib, 3, 3, requires_grad=True), randn(lib, 3, 3, requires_grad=True, seed=1)
        f.apply((t1 + t2) * (t1 + t2)).sum().backward()
    assert same_in_both(scenario) == ("Exception", "Simulate error on backward pass")


def test_custom_backward_of_the_wrong_shape_raises():
    def scenario(lib):
        f = function(lib, lambda ctx, x: x * 2, lambda ctx, g: lib.ones(10))
        f.apply(lib.ones(5, 5, requires_grad=True)).sum().backward()
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError" and "expected shape" in result[1]


@pytest.mark.parametrize("create_graph", [False, True])
def test_accumulate_grad_in_place_only_without_create_graph(create_graph):
    def scenario(lib):
        x = randn(lib, 5, 5, requires_grad=True)
        y = x + 2
        y.backward(ones(lib, 5, 5), retain_graph=True)
        first, first_copy = x.grad, x.grad.clone()
        y.backward(ones(lib, 5, 5), create_graph=create_graph)
        return first, first_copy, first is x.grad
    same_in_both(scenario)


@pytest.mark.parametrize("create_graph", [False, True])
def test_accumulate_into_an_assigned_dense_grad_keeps_its_reference_without_create_graph(create_graph):
    def scenario(lib):
        params = lib.tensor([1.5, 1.5], dtype=lib.float64).requires_grad_()
        params.grad = lib.tensor([1.5, 1.5], dtype=lib.float64)
        saved = params.grad
        params.backward(lib.tensor([1.5, 1.5], dtype=lib.float64), create_graph=create_graph)
        return saved is params.grad, params.grad
    same_in_both(scenario)


_GRAD_VERSION_CASES = {  # how the first gradient reaches the leaf
    "taken": lambda lib, x: (x * 2).sum().backward(),  # a formula's fresh result, taken as it is
    "copied": lambda lib, x: x.sum().backward(),  # an expanded gradient, copied into a new tensor
    "given": lambda lib, x: x.backward(ones(lib, 2, 2)),  # the caller's gradient, copied
    "transposed": lambda lib, x: x.t().sum().backward(),
    "summed": lambda lib, x: (x * 2 + x * 3 + x * 4).sum().backward(),  # added in place, twice
    "same_twice": lambda lib, x: (x + x).sum().backward(),  # one gradient for both edges: a new sum
    "same_thrice": lambda lib, x: (x + x + x).sum().backward(),
    "product": lambda lib, x: (x * x).sum().backward(),
    "roots": lambda lib, x: lib.autograd.backward([(x * 2).sum(), (x * 3).sum()]),
    "create_graph": lambda lib, x: (x * x).sum().backward(create_graph=True),
}


@pytest.mark.parametrize("case", sorted(_GRAD_VERSION_CASES))
def test_the_version_of_a_leafs_grad_counts_the_engines_in_place_writes(case):
    # As PyTorch's: a gradient the engine copied or added into in place has a version per write; a later
    # accumulation adds in place (another), except with create_graph (a new tensor); a .grad assigned by
    # hand keeps its own count.
    def scenario(lib):
        x = lib.tensor([[1.5, -2.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's warning about backward(create_graph=True)
            _GRAD_VERSION_CASES[case](lib, x)
            first = x.grad._version
            _GRAD_VERSION_CASES[case](lib, x)
        later = x.grad._version
        x.grad.zero_()
        zeroed = x.grad._version
        x.grad = lib.zeros(2, 2, dtype=lib.float64)
        assigned = x.grad._version
        (x * 2).sum().backward()
        return first, later, zeroed, assigned, x.grad._version, x.grad
    same_in_both(scenario)


def test_a_fanned_in_gradient_summed_in_place_leaves_what_hooks_saw_unchanged():
    # x's gradient arrives over five edges and is summed in place into a buffer the engine made; the
    # sum a hook on x saw, and a term's gradient a hook saw, keep their values and versions after a
    # second backward adds into x.grad, as PyTorch's.
    def scenario(lib):
        x = lib.tensor([1.5, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(g))
        total = 0
        for i in range(5):
            term = x * (i + 1)
            if i == 2:
                term.register_hook(lambda g: seen.append(g))
            total = total + term.sum()
        total.backward(retain_graph=True)
        before = [(g.clone(), g._version) for g in seen]
        first = (x.grad.clone(), x.grad._version)
        total.backward()
        return before, [(g, g._version) for g in seen[:2]], first, x.grad, x.grad._version
    same_in_both(scenario)


def test_sum_to_with_an_empty_dim():
    def scenario(lib):
        a = lib.zeros(4, 0, dtype=lib.float64, requires_grad=True)
        b = randn(lib, 4, 1, requires_grad=True)
        c = a + b
        c.sum().backward()
        return tuple(c.shape), b.grad, tuple(a.grad.shape)
    same_in_both(scenario)


def test_hessian_vector_product_by_backward_twice():
    def scenario(lib):
        x, y = randn(lib, 2, 2, requires_grad=True), randn(lib, 2, 2, requires_grad=True, seed=1)
        z = x ** 2 + y * x + y ** 2
        z.backward(ones(lib, 2, 2), create_graph=True)
        first = (x.grad.clone(), y.grad.clone())
        (2 * x.grad + y.grad).backward(ones(lib, 2, 2))
        return first, x.grad, y.grad
    same_in_both(scenario)


def test_grad_of_a_gradient_and_mismatched_grad_output_shape():
    def scenario(lib):
        x, y = randn(lib, 2, 2, requires_grad=True), randn(lib, 2, 2, requires_grad=True, seed=1)
        z = x ** 2 + y * x + y ** 2
        z.backward(ones(lib, 2, 2), create_graph=True)
        grad_sum = 2 * x.grad + y.grad
        hv = lib.autograd.grad([grad_sum], [x], grad_outputs=[ones(lib, 2, 2)], create_graph=True)
        try:
            lib.autograd.grad([grad_sum], [x], grad_outputs=[ones(lib, 2)], create_graph=True)
            error = None
        except RuntimeError as e:
            error = str(e).replace("torch.", "retrograd.")
        return hv, x.grad, y.grad, error
    same_in_both(scenario)


def test_grad_of_a_non_leaf_in_a_loop():
    def scenario(lib):
        x_init = randn(lib, 2, 2, requires_grad=True)
        y = randn(lib, 2, 2, requires_grad=True, seed=1)
        x = x_init
        seen = []
        for _ in range(5):
            grad_x, = lib.autograd.grad(x ** 2 + y * x + y ** 2, x, grad_outputs=ones(lib, 2, 2), create_graph=True)
            seen.append((grad_x, y.grad is None, x.grad is None))
            x = x + 0.05 * grad_x
        x.backward(ones(lib, 2, 2))
        return seen, y.grad, x_init.grad
    same_in_both(scenario)


def test_grad_of_chunks_does_not_run_the_hooks_of_their_base():
    def scenario(lib):
        x = randn(lib, 4, 2, requires_grad=True)
        a, b = x.chunk(2)
        called = []
        x.register_hook(lambda *g: called.append(True))
        go = randn(lib, 2, 2, seed=3)
        grads = lib.autograd.grad(a + 2 * b, [a, b], grad_outputs=go, create_graph=True)
        return grads, called, x.grad
    same_in_both(scenario)


def test_hook_on_one_output_of_unbind():
    def scenario(lib):
        x = randn(lib, 5, requires_grad=True)
        parts = x.unbind()
        seen = [None]

        def hook(grad):
            seen[0] = grad
        parts[0].register_hook(hook)
        out = []
        for i in range(5):
            seen[0] = None
            parts[i].backward()
            out.append((seen[0], x.grad.clone(), parts[i].grad))
        return out
    same_in_both(scenario)


def test_hook_object_without_a_name():
    def scenario(lib):
        class Hook:
            def __call__(self, grad):
                return grad.clone()
        x = randn(lib, 5, requires_grad=True)
        y = x.clone()
        y.register_hook(Hook())
        y.sum().backward()
        return x.grad
    same_in_both(scenario)


def test_sharded_grad_then_backward_from_intermediates():
    def scenario(lib):
        leaves = [lib.zeros(5, 5, dtype=lib.float64, requires_grad=True) for _ in range(10)]
        inter = [leaf * i + leaf * leaf for i, leaf in enumerate(leaves)]
        loss = sum(v * i for i, v in enumerate(inter)).sum()
        d = [g for k in range(0, 10, 2) for g in lib.autograd.grad(loss, inter[k:k + 2], retain_graph=True)]
        lib.autograd.backward(inter, d)
        return [leaf.grad for leaf in leaves]
    same_in_both(scenario)


@pytest.mark.parametrize("case", ["backward", "grad_of_leaf", "grad_wrt_non_leaf"])
def test_differentiating_what_does_not_require_grad_raises(case):
    def scenario(lib):
        x = lib.ones(1)
        y = x ** 2
        {"backward": lambda: x.backward(), "grad_of_leaf": lambda: lib.autograd.grad(x, y),
         "grad_wrt_non_leaf": lambda: lib.autograd.grad(y, x)}[case]()
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError" and "does not require grad" in result[1]


@pytest.mark.parametrize("args", [2, 0, 1])
def test_calling_a_grad_fn_checks_its_argument_count(args):
    def scenario(lib):
        x = lib.ones(1, requires_grad=True)
        y = x ** 2
        return y.grad_fn(*[x.detach()] * args)
    same_in_both(scenario)


def test_grad_of_unreachable_inputs():
    def scenario(lib):
        x, y = lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)
        z, w = x * 2, y * 2
        first = lib.autograd.grad(x * 2, [x, y], allow_unused=True)
        z = lib.ones(1, requires_grad=True)
        second = lib.autograd.grad(x * 2, [x, z], allow_unused=True)
        try:
            lib.autograd.grad(x * 2, [x, y], allow_unused=False)
        except RuntimeError as e:
            return first, second, first_sentence(e)
    same_in_both(scenario)


def test_tensor_hooks_count_and_modify():
    def scenario(lib):
        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        y = (lib.ones(5, 5, dtype=lib.float64) * 4).requires_grad_(True)
        counter = [0]

        def bump(inc, grad):
            counter[0] += inc
        z = x ** 2 + x * 2 + x * y + y
        x.register_hook(lambda g: bump(0, g))
        h1 = z.register_hook(lambda g: bump(1, g))
        z.backward(ones(lib, 5, 5), retain_graph=True)
        counts = [counter[0]]
        h2 = z.register_hook(lambda g: bump(2, g))
        z.backward(ones(lib, 5, 5), retain_graph=True)
        counts.append(counter[0])
        h2.remove()
        z.backward(ones(lib, 5, 5), retain_graph=True)
        counts.append(counter[0])
        h1.remove()
        z.register_hook(lambda g: g.mul(2))
        with lib.no_grad():
            y.grad.zero_()
        z.backward(ones(lib, 5, 5), retain_graph=True)
        once = y.grad.clone()
        y.register_hook(lambda g: g.mul(2))
        with lib.no_grad():
            y.grad.zero_()
        z.backward(ones(lib, 5, 5))
        return counts, once, y.grad
    same_in_both(scenario)


def test_hook_on_the_output_of_a_module_in_eval_mode():
    def scenario(lib):
        bn = lib.nn.BatchNorm1d(5, affine=False).double()
        bn.eval()
        calls = []
        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        z = bn(x)
        z.register_hook(lambda g: calls.append(1) or g * 2)
        z.sum().backward()
        return calls, x.grad
    same_in_both(scenario)


def test_hook_on_an_output_whose_gradient_is_none():
    def scenario(lib):
        def forward(ctx, x, y):
            assert ctx.needs_input_grad[0] and not ctx.needs_input_grad[1]
            return x, y
        f = function(lib, forward, lambda ctx, gx, gy: (gx, None))
        called = []
        x, y = randn(lib, 5, 5, requires_grad=True), randn(lib, 5, 5, seed=1)
        rx, ry = f.apply(x, y)
        rx.register_hook(lambda g: called.append(g is not None))
        ry.register_hook(lambda g: called.append(g is not None))
        sum(rx, ry).sum().backward()
        return called
    same_in_both(scenario)


def test_retain_grad_accumulates_and_is_a_no_op_on_leaves():
    def scenario(lib):
        inp = randn(lib, 1, 3, requires_grad=True)
        h1 = inp * 3
        out = (h1 * h1).sum()
        h1.retain_grad()
        h1.retain_grad()
        out.backward(retain_graph=True)
        first = h1.grad.clone()
        out.backward(retain_graph=True)
        second = h1.grad.clone()
        with lib.no_grad():
            inp.grad.zero_()
        inp.retain_grad()
        inp.retain_grad()
        out.backward()
        return first, second, inp.grad
    same_in_both(scenario)


def test_retain_grad_does_not_keep_the_tensor_alive():
    def scenario(lib):
        x = lib.ones(5, 5, requires_grad=True)
        counter = [0]

        def make():
            y = x * 2
            y.retain_grad()
            ref = weakref.ref(y, lambda _: counter.__setitem__(0, counter[0] + 1))
            return y / 2, ref
        z, ref = make()
        gc.collect()
        alive = ref() is not None
        z.sum().backward()
        return alive, counter[0], x.grad
    same_in_both(scenario)


def test_backward_of_an_expression():
    def scenario(lib):
        v, x = randn(lib, 5, 5, requires_grad=True), randn(lib, 5, 5, requires_grad=True, seed=1)
        y = (randn(lib, 5, 5, seed=2).abs() + 0.1).requires_grad_(True)
        z = randn(lib, 5, 5, requires_grad=True, seed=3)
        go = randn(lib, 5, 5, seed=4)
        v.backward(go)
        (x + (y * z) + 4 * z ** 2 * x / y).backward(go)
        return v.grad, x.grad, y.grad, z.grad
    same_in_both(scenario)


def test_backward_of_several_roots_with_a_shared_input():
    def scenario(lib):
        x, y, q, a, b = (randn(lib, 5, 5, requires_grad=True, seed=i) for i in range(5))
        q2 = q * 2
        z, c = x + y + q2, a * b + q2
        lib.autograd.backward([z, c], [randn(lib, 5, 5, seed=5), randn(lib, 5, 5, seed=6)])
        return x.grad, y.grad, a.grad, b.grad, q.grad
    same_in_both(scenario)


def test_backward_of_a_root_that_does_not_require_grad_raises():
    def scenario(lib):
        x, y = randn(lib, 5, 5, requires_grad=True), randn(lib, 5, 5, seed=1)
        lib.autograd.backward([x + y, y * 2], [ones(lib, 5, 5), ones(lib, 5, 5)])
    assert same_in_both(scenario)[0] == "RuntimeError"


def test_backward_of_dependent_roots():
    def scenario(lib):
        x = randn(lib, 10, requires_grad=True)
        y = x ** 2
        z = y ** 3
        lib.autograd.backward([y, z], [randn(lib, 10, seed=1), randn(lib, 10, seed=2)])
        return x.grad
    same_in_both(scenario)


def test_saved_tensor_keeps_its_output_nr():
    def scenario(lib):
        x = randn(lib, 10, requires_grad=True)
        split = function(lib, lambda ctx, x: (x[:5], x[5:]), lambda ctx, *g: lib.cat(g), name="MultiOutputFn")
        a, b = split.apply(x)
        seen = []

        def forward(ctx, b):
            ctx.save_for_backward(b)
            return b * 2

        def backward(ctx, g):
            saved, = ctx.saved_tensors
            seen.append(saved.output_nr)
            return g
        function(lib, forward, backward, name="TestFn").apply(b).sum().backward()
        return b.output_nr, seen
    assert same_in_both(scenario) == ("ok", (1, [1]))


def test_deep_graph_is_freed_without_recursion():
    def scenario(lib):
        x = lib.ones(1, requires_grad=True)
        y = x.clone()
        for _ in range(20000):
            y = y + y * 0.000001
        del y
        return True
    same_in_both(scenario)
