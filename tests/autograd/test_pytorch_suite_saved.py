"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) on what nodes save: the saved attributes of
nodes, the SavedTensor objects behind them and their hooks. See test_pytorch_suite_basics.py for the method.
"""
import warnings
import weakref

import pytest

import retrograd as rg

from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")


def raised(call):
    """What ``call()`` returned, or the type and first line of what it raised."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the outcome is compared, whatever it is
        return type(e).__name__, str(e).split("\n")[0].split(". ")[0]


def test_saved_attributes_of_nodes_have_pytorchs_names_types_and_values():
    def scenario(lib):
        F = lib.nn.functional
        seen = []
        a, b = lib.ones(1, requires_grad=True), lib.zeros(1, requires_grad=True)
        stacked, product = lib.stack([a, b], dim=0), (a * 2) * b
        seen += [product.grad_fn._saved_self, type(product.grad_fn._raw_saved_self).__name__,
                 type(stacked.grad_fn._saved_dim).__name__, stacked.grad_fn._saved_dim]
        product.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
        product.sum().backward()
        seen += [raised(lambda: product.grad_fn._saved_self), stacked.grad_fn._saved_dim]  # ints outlive backward
        a = lib.ones(2, 2, requires_grad=True)
        indices = lib.tensor([0, 1])
        indexed = a[:, indices]
        seen += [indexed.grad_fn._saved_indices, type(indexed.grad_fn._raw_saved_indices[1]).__name__,
                 indexed.grad_fn._saved_self_sym_sizes, type(indexed.grad_fn._saved_self_sym_sizes[0]).__name__]
        indexed.grad_fn._raw_saved_indices[1].register_hooks(lambda x: x, lambda x: x)
        seen += [raised(lambda: indexed.grad_fn._raw_saved_indices[0].register_hooks(lambda x: x, lambda x: x)),
                 a.mean().grad_fn._saved_self_sym_sizes]
        square = a * a
        square.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
        square.sum().backward()
        seen.append(raised(lambda: square.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)))
        upsampled = F.interpolate(lib.ones(1, 1, 2, requires_grad=True), 4, mode="linear")
        seen += [upsampled.grad_fn._saved_output_size, upsampled.grad_fn._saved_align_corners,
                 upsampled.grad_fn._saved_scales]
        x = lib.ones(1, 1, 2, requires_grad=True)
        seen += [(lib.logit(x, 1.0).grad_fn._saved_eps, type(lib.logit(x, 1.0).grad_fn._saved_eps).__name__),
                 lib.logit(x).grad_fn._saved_eps,
                 lib.linalg.qr(lib.ones(1, 1, requires_grad=True), mode="reduced")[0].grad_fn._saved_mode]
        x = lib.zeros(5, requires_grad=True)
        seen.append([type(lib.threshold(x, threshold=t, value=t).grad_fn._saved_threshold).__name__
                     for t in (1.0, 1, False)])
        a = lib.ones(2, 2, requires_grad=True)
        seen += [a.as_strided((3,), (1,), 1).grad_fn._saved_storage_offset,
                 a.as_strided((3,), (1,)).grad_fn._saved_storage_offset]
        t = lib.tanh(lib.ones(2, requires_grad=True))
        seen.append(bool((t == t.grad_fn._saved_result).all()))
        scores, target = randn(lib, 3, 5).float().requires_grad_(), lib.tensor([1, 0, 4])
        seen.append(lib.nn.NLLLoss()(scores, target).grad_fn._saved_weight)
        loss = lib.nn.NLLLoss(weight=lib.ones((5,)))(scores, target)
        seen.append(loss.grad_fn._saved_weight)
        loss.sum().backward()
        seen.append(raised(lambda: loss.grad_fn._saved_weight))
        return seen
    outcome = same_in_both(scenario)
    assert outcome[1][4][0] == "RuntimeError" and outcome[1][19] == ["float", "int", "bool"]


# Sizes and values PyTorch's nodes keep in forms of their own (test_grad_fn_attr_bindings): the bias's sizes, (0,)
# without one; the batches' and unfolded input's sizes as ints; a 1-d scale factor as a float.
SAVED_ATTRIBUTES_IN_PYTORCHS_FORMS = {
    "convolution's bias sizes": lambda lib: [lib.nn.Conv2d(1, 1, 3, bias=bias)(lib.ones(1, 1, 3, 3, requires_grad=True))
                                             .grad_fn._saved_bias_sym_sizes_opt for bias in (True, False)],
    "addbmm's batch sizes": lambda lib: (lambda out: (out.grad_fn._saved_batch1_sym_argsize_0,
                                                      out.grad_fn._saved_batch1_sym_argsize_1))(
        lib.addbmm(lib.ones(3, 3), lib.ones(1, 3, 3, requires_grad=True), lib.ones(1, 3, 3))),
    "unfold's input sizes": lambda lib: (lambda out: (out.grad_fn._saved_self_sym_argsize_minus_2,
                                                      out.grad_fn._saved_self_sym_argsize_minus_1))(
        lib.nn.functional.unfold(lib.ones(1, 1, 3, 3, requires_grad=True), 3)),
    "a 1-d scale factor saved as a float": lambda lib: lib.nn.functional.interpolate(
        lib.ones(1, 1, 2, requires_grad=True), scale_factor=0.5, mode="linear").grad_fn._saved_scales,
    "div's rounding mode": lambda lib: [
        (lambda node: (node.name(), node._saved_rounding_mode))(lib.div(lib.tensor([1.0], requires_grad=True), 2.0,
                                                                        rounding_mode=mode).grad_fn)
        for mode in ("trunc", None)],
}


@pytest.mark.parametrize("case", sorted(SAVED_ATTRIBUTES_IN_PYTORCHS_FORMS))
def test_saved_attributes_in_pytorchs_forms(case):
    outcome = same_in_both(SAVED_ATTRIBUTES_IN_PYTORCHS_FORMS[case])
    assert outcome[0] == "ok" and outcome[1] is not None


def test_sizes_kept_as_ints_outlive_backward_whichever_input_requires_grad():
    def scenario(lib):
        seen = []
        for grads in ((True, False), (False, True)):
            b1, b2 = lib.ones(2, 3, 5, requires_grad=grads[0]), lib.ones(2, 5, 4, requires_grad=grads[1])
            out = lib.addbmm(lib.ones(3, 4), b1, b2)
            out.sum().backward()
            node = out.grad_fn
            seen.append((node._saved_batch1_sym_argsize_0, node._saved_batch1_sym_argsize_1,
                         node._saved_batch2_sym_argsize_2))
        x, w = lib.ones(1, 2, 4, 4), lib.ones(3, 2, 3, 3, requires_grad=True)
        out = lib.nn.functional.conv2d(x, w, lib.ones(3))  # a bias that does not require grad
        out.sum().backward()
        return seen + [out.grad_fn._saved_bias_sym_sizes_opt,
                       lib.nn.functional.conv_transpose2d(x, w.transpose(0, 1), lib.ones(3)).grad_fn
                       ._saved_bias_sym_sizes_opt]
    assert same_in_both(scenario) == ("ok", [(2, 3, 4), (2, 3, 4), (3,), (3,)])


def test_an_explicit_rounding_mode_of_none_is_the_rounding_overloads_node_with_true_divisions_gradients():
    def scenario(lib):
        x, y = lib.tensor([1.0, -2.0], requires_grad=True), lib.tensor([3.0, 4.0], requires_grad=True)
        seen = []
        for out in (lib.div(x, y, rounding_mode=None), x.div(y), (x * 1).div_(y, rounding_mode=None), (x * 1).div_(y),
                    lib.div(x, 2, rounding_mode="floor")):
            node = out.grad_fn
            seen.append((node.name(), getattr(node, "_saved_rounding_mode", "none saved"), out.tolist()))
        node = lib.div(x, 2, rounding_mode="floor").grad_fn
        seen.append((node._saved_other.tolist(), str(node._saved_other.dtype).split(".")[-1], node._saved_self is x))
        out = lib.div(x, y, rounding_mode=None)
        x.grad = y.grad = None
        out.sum().backward()
        return seen + [x.grad.tolist(), y.grad.tolist(), lib.div(lib.tensor([1, 3]), 2, rounding_mode=None).tolist()]
    outcome = same_in_both(scenario)
    assert outcome[1][0][:2] == ("DivBackward2", None) and outcome[1][1][:2] == ("DivBackward0", "none saved")
    a, b = (rg.rand(3, dtype=rg.float64, requires_grad=True), (rg.rand(3, dtype=rg.float64) + 1).requires_grad_())
    assert rg.autograd.gradcheck(lambda a, b: rg.div(a, b, rounding_mode=None), (a, b))


# A foreach call's one node (Note [Foreach ops] in retrograd/ops/foreach.py) and pdist's.
FOREACH_AND_PDIST_SAVED_ATTRIBUTES = {
    "pdist": lambda lib: (lambda node: (node.name(), node._saved_p, type(node._saved_p).__name__))(
        lib.pdist(lib.ones(2, 2, requires_grad=True), p=1).grad_fn),
    "foreach nodes": lambda lib: [(t.grad_fn.name(), t.grad_fn._saved_scalars) for t in lib._foreach_maximum(
        [lib.ones(2, 2, requires_grad=True) for _ in range(3)], [0.0] * 3)],
}


@pytest.mark.parametrize("case", sorted(FOREACH_AND_PDIST_SAVED_ATTRIBUTES))
def test_saved_attributes_of_foreach_and_pdist_nodes(case):
    outcome = same_in_both(FOREACH_AND_PDIST_SAVED_ATTRIBUTES[case])
    assert outcome[0] == "ok"


def test_raw_saved_tensor_data_is_what_was_packed_or_saved_and_unpack_hook_is_the_hook():
    def scenario(lib):
        def unpack(t):
            return t
        a = lib.tensor(2.0, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            b = a ** 2
        c = b.exp()
        d = c ** 2
        packed, output, saved_input = (b.grad_fn._raw_saved_self, c.grad_fn._raw_saved_result,
                                       d.grad_fn._raw_saved_self)
        return (packed.data is a, packed.unpack_hook is unpack,  # what the pack hook returned, as it is
                output.data is c, output.data.requires_grad, round(output.data.item(), 3), output.unpack_hook,  # detached values
                saved_input.data is c, saved_input.unpack_hook)  # the input itself
    assert same_in_both(scenario) == ("ok", (True, True, False, False, 54.598, None, True, None))


def test_a_saved_tensor_is_packed_once_and_unpacked_at_each_access():
    def scenario(lib):
        counts = {"pack": 0, "unpack": 0}

        def pack(x):
            counts["pack"] += 1
            return x

        def unpack(x):
            counts["unpack"] += 1
            return x
        a = randn(lib, 5, requires_grad=True)
        seen = []
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            node = (a.exp()).grad_fn
            seen.append(dict(counts))
            first, second = node._saved_result, node._saved_result
            seen.append(dict(counts))
        return seen, first, second
    outcome = same_in_both(scenario)
    assert outcome[1][0] == [{"pack": 1, "unpack": 0}, {"pack": 1, "unpack": 2}]


def test_a_saved_tensor_cannot_be_made_from_python():
    assert same_in_both(lambda lib: lib.autograd.SavedTensor()) == (
        "RuntimeError", "Trying to create a SavedTensor object from Python is forbidden.")


def test_raw_saved_tensors_of_a_custom_function_and_their_hooks():
    def scenario(lib):
        def make(save):
            def forward(ctx, x):
                if save:
                    ctx.save_for_backward(x, None)
                return x
            return function(lib, forward, lambda ctx, g: g, name="MyFn")
        a = randn(lib, 5, requires_grad=True)
        y = make(True).apply(a)
        saved = y.grad_fn._raw_saved_tensors
        seen = [y.grad_fn.saved_tensors[0] is a, y.grad_fn.saved_tensors[1], [type(s).__name__ for s in saved],
                raised(lambda: saved[1].register_hooks(lambda x: x, lambda x: x)),  # None: only known on unpacking
                raised(lambda: saved[0].register_hooks(lambda x: x)), raised(lambda: saved[0].register_hooks(1, 1)),
                saved[0].register_hooks(lambda x: x, lambda x: x),
                raised(lambda: saved[0].register_hooks(lambda x: x, lambda x: x))]
        y.sum().backward()
        del saved
        seen += [raised(lambda: y.grad_fn._raw_saved_tensors), raised(lambda: y.grad_fn.saved_tensors)]
        y = make(False).apply(a)
        return seen + [y.grad_fn.saved_tensors, y.grad_fn._raw_saved_tensors]
    outcome = same_in_both(scenario)
    assert outcome[1][3:6] == [("RuntimeError", "Calling register_hooks on a saved tensor with value None is "
                                                "forbidden"),
                               ("TypeError", "register_hooks(): incompatible function arguments"),
                               ("TypeError", "register_hooks(): incompatible function arguments")]


def test_clear_saved_tensors_on_access_lets_saved_tensors_be_read_once():
    def scenario(lib):
        seen = []

        def keeps_nothing(ctx, g):
            x, = ctx.saved_tensors
            ref = weakref.ref(x)
            del x
            seen.append(ref() is None)  # the node let go of it: the local name was the only reference
            return g

        def reads_twice(ctx, g):
            ctx.saved_tensors
            ctx.saved_tensors
            return g

        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()
        x = randn(lib, 3, requires_grad=True)
        for backward in (keeps_nothing, reads_twice):
            f = function(lib, forward, backward, name="MyFn")
            f.clear_saved_tensors_on_access = True
            seen.append(raised(lambda: f.apply(x * 1).sum().backward()))
        f = function(lib, forward, lambda ctx, g: g, name="MyFn")
        f.clear_saved_tensors_on_access = True
        y = f.apply(x * 1)
        seen += [len(y.grad_fn.saved_tensors), y.grad_fn._raw_saved_tensors, raised(lambda: y.grad_fn.saved_tensors),
                 raised(lambda: y.sum().backward()),  # a backward that reads nothing runs
                 lib.autograd.Function.clear_saved_tensors_on_access]
        return seen
    once = ("RuntimeError", "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is set "
                            "on the autograd.Function")
    assert same_in_both(scenario) == ("ok", [True, None, once, 1, (), once, None, False])


# -- saved-tensor hooks ----------------------------------------------------------------------------------
def _input_makers(lib):
    """A leaf, then a tensor neither leaf nor output of the node that saves it."""
    return {"leaf": lambda: randn(lib, 5, requires_grad=True), "not leaf": lambda: 1 + randn(lib, 5, requires_grad=True)}


@pytest.mark.parametrize("kind", ["leaf", "not leaf"])
def test_hooks_registered_on_a_saved_input(kind):
    def scenario(lib):
        get_input = _input_makers(lib)[kind]
        seen = []
        for pack, unpack, factor in ((lambda x: 2 * x, lambda x: x / 2, 2), (lambda x: 2 * x, lambda x: x, 3)):
            a = get_input()
            grad_fn = a.grad_fn
            y = a * a
            y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
            seen.append(bool(lib.allclose(y.grad_fn._saved_self, a * (factor - 1))))
            if kind == "not leaf":
                seen.append(y.grad_fn._saved_self.grad_fn is grad_fn)  # still connected to the input's history
            y.sum().backward()
            if kind == "leaf":
                seen.append(bool(lib.allclose(a.grad, factor * a)))
        a = get_input()  # double backward
        grad_fn = a.grad_fn
        y = a ** 3
        y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
        g, = lib.autograd.grad(y.sum(), (a,), create_graph=True)
        if kind == "not leaf":
            seen.append(y.grad_fn._saved_self.grad_fn is grad_fn)
        g.sum().backward()
        if kind == "leaf":
            seen.append(bool(lib.allclose(a.grad, 6 * a)))
        y = get_input() ** 2
        y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: 1)
        seen.append(raised(lambda: y.grad_fn._saved_self))
        for pack in (lambda x, b: x, lambda x, b: (x, b)):
            y = get_input() * get_input()
            seen.append(raised(lambda: y.grad_fn._raw_saved_self.register_hooks(pack, lambda x: x)))

        def double_in_place(x):
            x *= 2
            return x
        t = get_input() * get_input()
        seen.append(raised(lambda: t.grad_fn._raw_saved_self.register_hooks(double_in_place, lambda x: x / 2)))
        return seen
    outcome = same_in_both(scenario)
    assert outcome[1][-4][0] == "TypeError" and outcome[1][-1] == ("RuntimeError", "A saved tensor pack hook is "
                                                                                   "modifying its input in place")


def test_hooks_registered_on_a_saved_output():
    def scenario(lib):
        a = randn(lib, 5, requires_grad=True)
        y = lib.exp(a)
        y.grad_fn._raw_saved_result.register_hooks(lambda x: x, lambda x: x)
        seen = [bool(lib.equal(y, y.grad_fn._saved_result)), y.grad_fn is y.grad_fn._saved_result.grad_fn]
        y.sum().backward()
        return seen + [bool(lib.equal(a.grad, y))]
    assert same_in_both(scenario) == ("ok", [True, True, True])


def test_default_hooks_on_saved_inputs_and_outputs():
    def scenario(lib):
        seen = []

        def pack(x):
            warnings.warn("pack")
            return x
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            a = lib.ones(5, requires_grad=True)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                y = a * a
            seen.append(len(caught))  # a is saved twice, once per operand
        for pack, unpack, factor in ((lambda x: x, lambda x: x, 1), (lambda x: 2 * x, lambda x: x / 2, 1),
                                     (lambda x: 2 * x, lambda x: x, 2)):
            with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
                a = randn(lib, 5, requires_grad=True)
                y = a * a
                seen += [bool(lib.allclose(y.grad_fn._saved_self, factor * a)),
                         bool(lib.allclose(y.grad_fn._saved_other, factor * a))]
                y.sum().backward()
                seen.append(bool(lib.allclose(a.grad, 2 * factor * a)))
        a = randn(lib, 5, requires_grad=True)  # the hooks are gone
        y = a * a
        seen.append(y.grad_fn._saved_self is a)
        y.sum().backward()
        seen.append(bool(lib.allclose(a.grad, 2 * a)))
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            a = randn(lib, 5, requires_grad=True)
            y = lib.exp(a)
            seen.append(bool(lib.equal(y, y.grad_fn._saved_result)))
            y.sum().backward()
            seen.append(bool(lib.equal(a.grad, y)))
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass  # entering hooks twice is fine
        return seen
    assert same_in_both(scenario) == ("ok", [2] + [True] * 13)


def test_saved_tensors_hooks_state_after_disabling_them():
    def scenario(lib):
        graph = lib.autograd.graph
        seen = []
        with graph.disable_saved_tensors_hooks("error message"):
            seen.append(raised(lambda: graph.saved_tensors_hooks(lambda x: x, lambda x: x).__enter__()))
        with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            seen.append(raised(lambda: graph.disable_saved_tensors_hooks("error message").__enter__()))
        with graph.disable_saved_tensors_hooks("outer"):
            with graph.disable_saved_tensors_hooks("inner"):
                seen.append(raised(lambda: graph.saved_tensors_hooks(lambda x: x, lambda x: x).__enter__()))
            seen.append(raised(lambda: graph.saved_tensors_hooks(lambda x: x, lambda x: x).__enter__()))
        with graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):  # hooks work again: they are enabled
            a = lib.ones(2, requires_grad=True)
            seen.append((a * a).grad_fn._saved_self)
        return seen
    assert same_in_both(scenario) == ("ok", [("RuntimeError", "error message"), ("RuntimeError", "error message"),
                                             ("RuntimeError", "inner"), ("RuntimeError", "outer"), [2.0, 2.0]])


def test_errors_of_pack_and_unpack_hooks_reach_the_caller_as_they_are():
    def scenario(lib):
        class CustomError(Exception):
            pass

        def fails(what):
            def hook(x):
                raise CustomError(what)
            return hook
        a = lib.tensor(1.0, requires_grad=True)
        seen = []
        with lib.autograd.graph.saved_tensors_hooks(fails("pack"), lambda x: x):
            seen.append(raised(lambda: lib.sin(a)))
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, fails("unpack")):
            out = lib.sin(a)
            seen.append(raised(lambda: out.backward()))
        return seen
    assert same_in_both(scenario) == ("ok", [("CustomError", "pack"), ("CustomError", "unpack")])


def test_hooks_on_what_a_custom_function_saves_and_how_often_they_run():
    def scenario(lib):
        def forward(ctx, x):
            ctx.save_for_backward(x.exp().clone().detach_().requires_grad_(True))  # an intermediate
            return x.exp()

        def backward(ctx, g):
            intermediate, = ctx.saved_tensors
            return g * intermediate
        f = function(lib, forward, backward, name="Func")
        a = lib.tensor(1.0, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            out = f.apply(a)
        out.backward()
        counts = {"pack": 0, "unpack": 0}

        def count(what):
            def hook(x):
                counts[what] += 1
                return x
            return hook
        x, y = lib.ones(4, requires_grad=True), lib.ones(4)
        seen = [round(a.grad.item(), 4)]
        with lib.autograd.graph.saved_tensors_hooks(count("pack"), count("unpack")):
            product = x * y  # only y is saved: x's gradient needs it
            seen.append(dict(counts))
            product.sum().backward()
            seen.append(dict(counts))
        return seen
    assert same_in_both(scenario) == ("ok", [2.7183, {"pack": 1, "unpack": 0}, {"pack": 1, "unpack": 1}])


def test_a_tensor_a_pack_hook_put_in_place_of_the_saved_one_has_its_own_version_counter():
    def scenario(lib):
        a = lib.tensor(1.0, requires_grad=True)
        replacement = a.clone()
        seen = []

        def backward(ctx, g):
            x, = ctx.saved_tensors
            before = a._version
            x.add_(1)
            seen.append(a._version == before)
            return g
        f = function(lib, lambda ctx, x: (ctx.save_for_backward(x), x.sin())[1], backward, name="Test")
        with lib.autograd.graph.saved_tensors_hooks(lambda x: replacement, lambda x: x):
            b = f.apply(a)
        b.backward()
        return seen
    assert same_in_both(scenario) == ("ok", [True])


def test_save_on_cpu_and_checkpoint_inside_each_other_give_the_plain_gradients():
    def scenario(lib):
        ck = lib.utils.checkpoint.checkpoint
        a = randn(lib, 2, 2, requires_grad=True)
        a.pow(2).pow(2).pow(2).pow(2).sum().backward()
        plain = a.grad.clone()
        a.grad.zero_()
        with lib.autograd.graph.save_on_cpu():
            h = ck(lambda x: x.pow(2).pow(2), a.pow(2), use_reentrant=False)
            c = h.pow(2)
        c.sum().backward()
        first = a.grad.clone()
        a.grad.zero_()

        def f(t):
            h = t.pow(2)
            with lib.autograd.graph.save_on_cpu():
                h = h.pow(2).pow(2)
            return h.pow(2)
        ck(f, a, use_reentrant=False).sum().backward()
        return bool(lib.allclose(plain, first)), bool(lib.allclose(plain, a.grad))
    assert same_in_both(scenario) == ("ok", (True, True))


def test_saved_tensors_written_to_disk_by_the_hooks(tmp_path):
    def scenario(lib):
        names = iter(range(100))

        def pack(x):
            path = tmp_path / f"{lib.__name__}-{next(names)}.pt"
            lib.save(x, str(path))
            return str(path)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda path: lib.load(path)):
            a = lib.ones(5, requires_grad=True)
            y = a * a
            seen = [bool(lib.equal(a, y.grad_fn._saved_self))]
            y.sum().backward()
            return seen + [a.grad]
    assert same_in_both(scenario) == ("ok", [True, [2.0] * 5])


def test_default_hooks_in_force_in_a_double_backward():
    def scenario(lib):
        hooks = lib.autograd.graph.saved_tensors_hooks
        seen = []
        with hooks(lambda x: x, lambda x: x):
            a = randn(lib, 5, requires_grad=True)
            g, = lib.autograd.grad((a ** 3).sum(), (a,), create_graph=True)
            g.sum().backward()
            seen.append(bool(lib.allclose(a.grad, 6 * a)))
        with hooks(lambda x: 2 * x, lambda x: x):  # a saved once, when pow is recorded
            a = randn(lib, 5, requires_grad=True)
            s = (a ** 3).sum()
        g, = lib.autograd.grad(s, (a,), create_graph=True)
        g.sum().backward()
        seen.append(bool(lib.allclose(a.grad, 6 * 2 * a)))
        a = randn(lib, 5, requires_grad=True)
        s = (a ** 3).sum()
        with hooks(lambda x: 2 * x, lambda x: x):  # pow's backward saves grad and a
            g, = lib.autograd.grad(s, (a,), create_graph=True)
            g.sum().backward()
            seen.append(bool(lib.allclose(a.grad, 6 * 4 * a)))
        with hooks(lambda x: 2 * x, lambda x: x):  # both of the above
            a = randn(lib, 5, requires_grad=True)
            g, = lib.autograd.grad((a ** 3).sum(), (a,), create_graph=True)
            g.sum().backward()
            seen.append(bool(lib.allclose(a.grad, 6 * 8 * a)))
        return seen
    assert same_in_both(scenario) == ("ok", [True] * 4)


@pytest.mark.parametrize("pin_memory", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_save_on_cpu_keeps_values_dtype_and_layout(pin_memory, dtype):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pin_memory without an accelerator
            with lib.autograd.graph.save_on_cpu(pin_memory):
                a = randn(lib, 5, requires_grad=True).to(getattr(lib, dtype)).detach().requires_grad_()
                y = a * a
                seen = [bool(lib.equal(a, y.grad_fn._saved_self)), bool(lib.equal(a, y.grad_fn._saved_other)),
                        a.dtype == y.grad_fn._saved_self.dtype, a.layout == y.grad_fn._saved_self.layout]
                y.sum().backward()
        return seen + [bool(lib.allclose(2 * a, a.grad))]
    assert same_in_both(scenario) == ("ok", [True] * 5)


def test_nested_default_hooks_the_innermost_apply():
    def scenario(lib):
        hooks = lib.autograd.graph.saved_tensors_hooks
        with hooks(lambda x: 3 * x, lambda x: 3 * x):
            b = randn(lib, 5, requires_grad=True)
            with hooks(lambda x: 5 * x, lambda x: 5 * x):
                a = randn(lib, 5, requires_grad=True, seed=1)
                y = a * a
            z = b * b
        y.sum().backward()
        z.sum().backward()
        return bool(lib.allclose(a.grad, 2 * 5 * 5 * a)), bool(lib.allclose(b.grad, 2 * 3 * 3 * b))
    assert same_in_both(scenario) == ("ok", (True, True))
