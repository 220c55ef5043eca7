"""Selective activation checkpointing: which ops run again, the gradients, the policy's view of each call, the errors.

Each scenario that PyTorch shares runs with retrograd and torch on the same numbers (see
tests/autograd/test_pytorch_suite_basics.py); which ops ran is counted by an interposer inside the
checkpoint's, which sees a stored output handed out as a call of a copy of the op, not of the op itself.
"""
import functools
import gc
import threading
import weakref

import pytest

import retrograd as rg
import retrograd.utils.checkpoint as rck
from retrograd import _creation as retrograd_creation
from retrograd.ops import REGISTRY
from retrograd.ops._call import interposed, interposition

from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")


class _Runs:
    """Counts the op calls that compute their outputs, by op name (only inside ``segment`` if given)."""

    def __init__(self, segment_only=False):
        self.counts = {}
        self.inside = not segment_only

    def segment(self, fn):
        def run(*args):
            self.inside = True
            try:
                return fn(*args)
            finally:
                self.inside = False
        return run

    def interpose(self, op, args, inplace, proceed):
        if REGISTRY.get(op.name) is op and self.inside:
            self.counts[op.name] = self.counts.get(op.name, 0) + 1
        return proceed(op, args, inplace)


def selective(lib, policy, **kwargs):
    return functools.partial(lib.utils.checkpoint.create_selective_checkpoint_contexts, policy, **kwargs)


def _mlp(lib, x, w):
    return lib.sigmoid(lib.mm(lib.mm(x, w), w)) * w


def test_saved_ops_run_once_and_the_others_again_in_the_recomputation():
    x, w = randn(rg, 3, 3, requires_grad=True), randn(rg, 3, 3, requires_grad=True, seed=1)
    runs = _Runs(segment_only=True)  # the segment's calls, not the backward formulas'
    with interposed(runs):
        out = rck.checkpoint(runs.segment(_mlp), rg, x, w, use_reentrant=False,
                             context_fn=selective(rg, [rg.ops.aten.mm.default]))
        assert runs.counts == {"mm": 2, "sigmoid": 1, "mul": 1}
        out.sum().backward()
    assert runs.counts == {"mm": 2, "sigmoid": 2, "mul": 2}  # the recomputation ran sigmoid and mul, not mm
    assert interposition.stack == ()  # both contexts are closed: op calls take the fast path again


def test_gradients_equal_those_without_checkpointing_and_torch_s():
    def scenario(lib):
        x, w = randn(lib, 3, 3, requires_grad=True), randn(lib, 3, 3, requires_grad=True, seed=1)
        policy = [lib.ops.aten.mm.default, lib.ops.aten.sigmoid.default]
        out = lib.utils.checkpoint.checkpoint(_mlp, lib, x, w, use_reentrant=False, context_fn=selective(lib, policy))
        checkpointed = lib.autograd.grad(out.sum(), (x, w))
        return checkpointed, lib.autograd.grad(_mlp(lib, x, w).sum(), (x, w))
    result = same_in_both(scenario)
    assert result[1][0] == result[1][1]


def test_a_policy_returning_a_bool_saves_on_true():
    def scenario(lib):
        names = []

        def policy(ctx, func, *args, **kwargs):
            names.append(str(func))
            return func == lib.ops.aten.sin.default
        x = randn(lib, 3, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False,
                                              context_fn=selective(lib, policy))
        out.sum().backward()
        return names, x.grad
    same_in_both(scenario)
    runs = _Runs()
    x = rg.ones(2, requires_grad=True)
    out = rck.checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False,
                         context_fn=selective(rg, lambda ctx, func, *a, **k: func == rg.ops.aten.sin.default))
    with interposed(runs):
        out.sum().backward()
    assert "sin" not in runs.counts and runs.counts["exp"] == 1


def test_the_policy_receives_the_call_s_arguments_and_output():
    def scenario(lib):
        seen = []

        def policy(ctx, func, *args, **kwargs):
            seen.append((str(func), len(args), sorted(kwargs), ctx.is_recompute, ctx.op_output))
            return lib.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE
        x, y = randn(lib, 2, requires_grad=True), randn(lib, 2, seed=1)
        lib.utils.checkpoint.checkpoint(lambda a, b: lib.add(a, b, alpha=2), x, y, use_reentrant=False,
                                        context_fn=selective(lib, policy))
        return seen
    assert same_in_both(scenario)[1][0][:4] == ("aten.add.Tensor", 2, ["alpha"], False)


def test_the_policy_sees_each_call_under_pytorch_s_name():
    def scenario(lib):
        seen = []

        def fn(t):
            return lib.var_mean((t.pow(2) + t.pow(t)).masked_fill(t > 0.5, 0.0).mul_(2))[0]
        lib.utils.checkpoint.checkpoint(fn, randn(lib, 3, requires_grad=True), use_reentrant=False,
                                        context_fn=selective(lib, lambda ctx, func, *a, **k: seen.append(str(func))))
        return seen
    assert same_in_both(scenario)[1][:3] == ["aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.add.Tensor"]


def test_an_op_the_forward_did_not_run_raises_in_the_recomputation():
    def scenario(lib):
        state = {"first": True}

        def fn(t):
            t = t.sin() if state["first"] else t.cos()
            state["first"] = False
            return t.exp()
        x = randn(lib, 3, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False,
                                              context_fn=selective(lib, [lib.ops.aten.exp.default]))
        out.sum().backward()
    assert same_in_both(scenario) == ("RuntimeError", "aten.cos.default encountered during backward but not found in "
                                                      "storage.")


def test_a_saved_in_place_op_writes_its_stored_output_into_the_recomputed_tensor():
    # PyTorch records the version of an in-place op's output before the op bumps it, so that
    # saving one raises "Tensor cached during selective activation checkpoint has been mutated"
    # in backward, and, with allow_cache_entry_mutation=True, hands the forward's tensor out
    # without writing into the recomputed one, whose later ops then see the unwritten values. Here
    # the stored output is written into the recomputed tensor, and the gradient is the one without
    # checkpointing.
    x = randn(rg, 3, requires_grad=True)
    runs = _Runs(segment_only=True)
    with interposed(runs):
        out = rck.checkpoint(runs.segment(lambda t: t.sin().mul_(2).cos()), x, use_reentrant=False,
                             context_fn=selective(rg, [rg.ops.aten.mul_.Tensor]))
        (checkpointed,) = rg.autograd.grad(out.sum(), (x,))
    assert runs.counts == {"sin": 2, "mul": 1, "cos": 2}
    (plain,) = rg.autograd.grad(x.sin().mul_(2).cos().sum(), (x,))
    assert rg.equal(checkpointed, plain)


def test_matmul_is_named_as_the_op_pytorch_decomposes_it_into():
    seen = []

    def policy(ctx, func, *args, **kwargs):
        seen.append(str(func))
        return rck.CheckpointPolicy.PREFER_RECOMPUTE
    shapes = [((2, 3), (3, 2)), ((3,), (3,)), ((2, 3), (3,)), ((2, 2, 3), (2, 3, 2)), ((4, 2, 3), (3, 2))]
    for a, b in shapes:
        x = rg.ones(*a, requires_grad=True)
        rck.checkpoint(lambda p, q: p @ q, x, rg.ones(*b), use_reentrant=False, context_fn=selective(rg, policy))
    assert seen == ["aten.mm.default", "aten.dot.default", "aten.mv.default", "aten.bmm.default", "aten.mm.default"]
    theirs = []
    for a, b in shapes:
        names = []
        tpolicy = functools.partial(lambda found, ctx, func, *args, **kwargs: found.append(str(func)) or False, names)
        torch.utils.checkpoint.checkpoint(lambda p, q: p @ q, torch.ones(*a, requires_grad=True), torch.ones(*b),
                                          use_reentrant=False, context_fn=selective(torch, tpolicy))
        theirs.append(names)
    assert all(ours in names for ours, names in zip(seen, theirs, strict=True))


def test_a_saved_random_op_leaves_the_generator_where_the_forward_did():
    # PyTorch recomputes the second draw from the generator's state before the first, which it
    # skipped: its gradient here differs from the one without checkpointing. Here it does not.
    def fn(t):
        first = rg.bernoulli(rg.full((6,), 0.5, dtype=rg.float64))
        second = rg.bernoulli(rg.full((6,), 0.5, dtype=rg.float64))
        return (t * first).sin() * second
    x = randn(rg, 6, requires_grad=True)
    saved_first = {"n": 0}

    def policy(ctx, func, *args, **kwargs):
        if func == rg.ops.aten.bernoulli.default:
            saved_first["n"] += 1
            return saved_first["n"] == 1
        return False
    rg.manual_seed(3)
    out = rck.checkpoint(fn, x, use_reentrant=False, context_fn=selective(rg, policy))
    (checkpointed,) = rg.autograd.grad(out.sum(), (x,))
    rg.manual_seed(3)
    (plain,) = rg.autograd.grad(fn(x).sum(), (x,))
    assert rg.equal(checkpointed, plain)


def test_dropout_under_a_policy_draws_the_forward_s_mask_again():
    def fn(t):
        return rg.nn.functional.dropout(t.sin(), 0.5).exp()
    x = randn(rg, 8, requires_grad=True)
    rg.manual_seed(5)
    out = rck.checkpoint(fn, x, use_reentrant=False, context_fn=selective(rg, [rg.ops.aten.sin.default]))
    (checkpointed,) = rg.autograd.grad(out.sum(), (x,))
    rg.manual_seed(5)
    (plain,) = rg.autograd.grad(fn(x).sum(), (x,))
    assert rg.equal(checkpointed, plain)


_DRAWS = {
    "rand": lambda lib, t: lib.rand(6, dtype=lib.float64),
    "randn_like": lambda lib, t: lib.randn_like(t),
    "dropout": lambda lib, t: lib.nn.functional.dropout(lib.ones(6, dtype=lib.float64), 0.5),
}


@pytest.mark.parametrize("save", [(), ("aten.rand", "aten.randn_like", "aten.bernoulli_")])
@pytest.mark.parametrize("preserve_rng_state", [False, True])
@pytest.mark.parametrize("draw", sorted(_DRAWS))
def test_a_policy_sees_factories_and_dropout_s_mask_and_a_saved_draw_is_reused_as_torch(draw, preserve_rng_state,
                                                                                        save):
    # Factories and dropout's mask are op calls (PyTorch's: empty_like, bernoulli_, div_, mul). A saved draw
    # is handed out again in the recomputation, which otherwise draws anew unless the generator is restored;
    # a saved bernoulli_ is the mask after div_ wrote into it, which PyTorch's recomputation divides again.
    def scenario(lib):
        seen, drawn = [], []

        def policy(ctx, func, *args, **kwargs):
            seen.append(str(func.overloadpacket))
            return lib.utils.checkpoint.CheckpointPolicy.MUST_SAVE if str(func.overloadpacket) in save else \
                lib.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE

        def fn(t):
            r = _DRAWS[draw](lib, t)
            if not drawn:
                drawn.append(r.detach() * 1)
            return (t * r).exp().sum()
        x = randn(lib, 6, requires_grad=True)
        lib.manual_seed(0)
        out = lib.utils.checkpoint.checkpoint(
            fn, x, use_reentrant=False, preserve_rng_state=preserve_rng_state,
            context_fn=selective(lib, policy, allow_cache_entry_mutation=True))
        (grad,) = lib.autograd.grad(out, x)
        r = drawn[0]
        return bool(lib.allclose(grad, r * (x.detach() * r).exp())), seen
    same_in_both(scenario)


_FACTORY_CALLS = (  # each factory form once, with the overload PyTorch's binding picks for it
    lambda lib, t: (lib.zeros(2, 3), lib.ones((2,)), lib.empty(2), lib.empty_strided((2, 3), (1, 2)),
                    lib.full((2,), 1.5), lib.full((2,), 1), lib.scalar_tensor(2.0), lib.linspace(0, 1, 5)),
    lambda lib, t: (lib.zeros_like(t), lib.ones_like(t), lib.empty_like(t), lib.full_like(t, 3.0),
                    lib.rand_like(t), lib.randn_like(t)),
    lambda lib, t: (t.new_zeros(3), t.new_ones((2, 2)), t.new_empty(3), t.new_full((3,), 2.0)),
    lambda lib, t: (lib.arange(5), lib.arange(1, 5), lib.arange(1, 5, 2), lib.eye(3), lib.eye(3, 2)),
    lambda lib, t: (lib.rand(3), lib.randn(3, dtype=lib.float64), lib.rand(3, generator=lib.Generator()),
                    lib.randint(5, (3,)), lib.randint(1, 5, (3,)), lib.randperm(4),
                    lib.randperm(4, generator=lib.Generator())),
    lambda lib, t: (lib.nn.functional.dropout(t, 0.5), lib.nn.functional.dropout(t, 1.0),
                    lib.nn.functional.dropout2d(t.view(1, 2, 1, 2), 0.5),
                    lib.nn.functional.alpha_dropout(t, 0.5, True),
                    lib.nn.functional.feature_alpha_dropout(t.view(1, 2, 2), 0.5, True)),
)


@pytest.mark.parametrize("calls", range(len(_FACTORY_CALLS)))
def test_a_policy_sees_each_factory_and_dropout_s_steps_under_torch_s_names(calls):
    # Note [Factories as op calls]: the packets and the overloads PyTorch's dispatcher gives these calls
    # (str(func)), but for the number operands of dropout's steps, which PyTorch's C++ names .Scalar and
    # retrograd's .Tensor (the overloads of a packet compare equal).
    def scenario(lib):
        seen = []

        def policy(ctx, func, *args, **kwargs):
            seen.append(str(func).replace(".Scalar", ".Tensor"))
            return lib.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE

        def fn(t):
            return sum(r.sum() for r in _FACTORY_CALLS[calls](lib, t.detach())) * t.sum()
        x = randn(lib, 4, requires_grad=True)
        lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False, context_fn=selective(lib, policy))
        return [name for name in seen if not name.startswith(("aten.sum", "aten.detach"))]
    same_in_both(scenario)


def test_a_saved_dropout_mask_is_written_into_the_recomputed_tensor():
    # Saving div_ keeps dropout's final mask: here the recomputation writes it into the recomputed tensor
    # (See Note [Selective activation checkpointing]), so the gradient is the forward's; PyTorch's hands the
    # stored tensor out without the write, and its recomputed mask is bernoulli_'s new draw, undivided.
    x = randn(rg, 6, requires_grad=True)
    drawn = []

    def fn(t):
        r = rg.nn.functional.dropout(rg.ones(6, dtype=rg.float64), 0.5)
        drawn.append(r.detach() * 1)
        return (t * r).exp().sum()
    out = rck.checkpoint(fn, x, use_reentrant=False, preserve_rng_state=False,
                         context_fn=selective(rg, [rg.ops.aten.div_.Scalar], allow_cache_entry_mutation=True))
    (grad,) = rg.autograd.grad(out, x)
    assert len(drawn) == 2  # the recomputation ran dropout again: its bernoulli_ drew anew, div_ wrote the saved mask
    assert rg.equal(drawn[0], drawn[1]) and rg.allclose(grad, drawn[0] * (x.detach() * drawn[0]).exp())


def test_factories_and_dropout_draw_the_same_numbers_with_or_without_an_interposer():
    # With an interposer, a factory and dropout's mask are op calls; without one, the same draws as plain calls.
    def draws():
        rg.manual_seed(11)
        return [rg.rand(3), rg.randn(2, 2, dtype=rg.float64), rg.randint(0, 9, (4,)), rg.randperm(5),
                rg.rand_like(rg.zeros(2)), rg.nn.functional.dropout(rg.ones(8), 0.3),
                rg.nn.functional.dropout2d(rg.ones(2, 3, 2, 2), 0.5), rg.nn.functional.alpha_dropout(rg.ones(5), 0.2,
                                                                                                     True)]
    plain = draws()
    names = []

    class Names:
        def interpose(self, op, args, inplace, proceed):
            names.append(op.name)
            return proceed(op, args, inplace)
    with interposed(Names()):
        seen = draws()
    assert all(rg.equal(a, b) for a, b in zip(plain, seen, strict=True))
    assert names[:6] == ["rand", "randn", "randint", "randperm", "zeros", "rand_like"]
    assert names.count("dropout_bernoulli") == 3 and names.count("empty_like") == 2 and names.count("new_empty") == 1
    assert retrograd_creation.factory_calls.route is None


def test_ops_in_sac_ignored_ops_are_neither_shown_to_the_policy_nor_saved(monkeypatch):
    monkeypatch.setattr(rck, "SAC_IGNORED_OPS", {rg.ops.aten.sin.default})
    seen = []

    def policy(ctx, func, *args, **kwargs):
        seen.append(str(func))
        return True
    x = rg.ones(2, requires_grad=True)
    out = rck.checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False, context_fn=selective(rg, policy))
    runs = _Runs()
    with interposed(runs):
        out.sum().backward()
    assert seen == ["aten.exp.default"] and runs.counts["sin"] == 1 and "exp" not in runs.counts


def test_the_policy_sees_only_the_op_calls_of_the_checkpointing_thread():
    seen, go, done = [], threading.Event(), threading.Event()

    def other():
        go.wait()
        rg.ones(2).cos()
        done.set()
    thread = threading.Thread(target=other)
    thread.start()

    def fn(t):
        go.set()
        done.wait()
        return t.sin()
    rck.checkpoint(fn, rg.ones(2, requires_grad=True), use_reentrant=False,
                   context_fn=selective(rg, lambda ctx, func, *a, **k: seen.append(str(func))))
    thread.join()
    assert seen == ["aten.sin.default"]


def test_op_names_compare_as_pytorch_s():
    aten = rg.ops.aten
    assert aten.mm.default == aten.mm.default and aten.mm.default is aten.mm.default
    assert aten.var_mean.correction == aten.var_mean.default  # one op per name: See Note [PyTorch's op names]
    assert aten.mm.default != aten.bmm.default and aten.mm.default != aten.mm
    assert aten.mm.default.overloadpacket is aten.mm
    for lib in (rg, torch):
        op = lib.ops.aten.mul.Tensor
        assert (str(op), repr(op), op.name(), op.__name__, str(op.overloadpacket)) == (
            "aten.mul.Tensor", "<OpOverload(op='aten.mul', overload='Tensor')>", "aten::mul.Tensor", "mul.Tensor",
            "aten.mul")


@pytest.mark.parametrize("name", ["mmm", "mm.defualt", "mm.Tensor", "sigmoid.defaults", "relu_.default",
                                  "rand.generator", "native_dropout.default", "_foreach_exp.default"])
def test_a_name_that_is_not_an_op_raises_attribute_error_as_torch(name):
    # A typo in a policy fails where it is written; any op PyTorch has (retrograd's or not) can be named.
    def scenario(lib):
        found = lib.ops.aten
        for part in name.split("."):
            found = getattr(found, part)
        return str(found), hasattr(lib.ops.aten, name.split(".")[0])
    same_in_both(scenario)


def test_the_op_names_are_pytorch_s_own():
    # retrograd/_aten_ops.txt, written by scripts/write_aten_names.py, holds PyTorch's names and overloads.
    import importlib
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "write_aten_names.py"
    spec = importlib.util.spec_from_file_location("write_aten_names", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    names = importlib.import_module("retrograd._ops")._pytorch_names()
    assert names == {name: tuple(overloads) for name, overloads in script.aten_names().items()}
    assert rg.ops.aten.add.overloads() == torch.ops.aten.add.overloads()


def test_an_op_list_holding_a_packet_raises_as_torch():
    def scenario(lib):
        lib.utils.checkpoint.create_selective_checkpoint_contexts([lib.ops.aten.mm])
    assert same_in_both(scenario) == ("ValueError", "Expected op in `op_list` to be an OpOverload but got: aten.mm of "
                                                    "type <class 'retrograd._ops.OpOverloadPacket'>.")


def test_the_kept_outputs_die_with_the_graph_without_a_collection():
    kept = []

    def context_fn():
        pair = rck.create_selective_checkpoint_contexts([rg.ops.aten.sin.default])
        kept.append(weakref.ref(pair[1]))
        return pair
    gc.disable()
    try:
        x = rg.ones(2, requires_grad=True)
        out = rck.checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False, context_fn=context_fn)
        assert kept[0]() is not None
        out.sum().backward()
        del out
        assert kept[0]() is None  # freed by reference counts: the storage forms no cycle with the graph
    finally:
        gc.enable()
