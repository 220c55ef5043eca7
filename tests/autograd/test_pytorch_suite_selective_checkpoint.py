"""Scenarios of PyTorch's test/test_autograd.py, class TestSelectiveActivationCheckpoint, written again and run with
retrograd and torch on the same numbers. See test_pytorch_suite_basics.py for the method.

Selective checkpointing needs every op call below autograd intercepted (PyTorch's TorchDispatchMode);
retrograd's ``create_selective_checkpoint_contexts`` checks its argument and then raises NotImplementedError
(utils/checkpoint.py), so the scenarios that checkpoint selectively are strict xfails. An op is named
``torch.ops.aten.<name>.default`` in PyTorch and by its public function (``retrograd.<name>``) in retrograd.
Out of scope: the CUDA memory and flop count, the tensor subclass that dispatches on sizes, the caching modes'
storage, a ``torch.library`` custom op, and PyTorch's OpOverloadPacket (retrograd has no ``ops.aten``).
"""
import functools

import pytest

from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")

NO_SAC = pytest.mark.xfail(strict=True, reason="retrograd has no selective activation checkpointing: "
                                               "create_selective_checkpoint_contexts raises NotImplementedError")


def op(lib, name, overload="default"):
    return getattr(getattr(torch.ops.aten, name), overload) if lib is torch else getattr(lib, name)


def selective(lib, policy, **kwargs):
    return functools.partial(lib.utils.checkpoint.create_selective_checkpoint_contexts, policy, **kwargs)


def must_save(lib, name, counter=None, overload="default"):
    policy = lib.utils.checkpoint.CheckpointPolicy

    def policy_fn(ctx, func, *args, **kwargs):
        if func == op(lib, name, overload):
            if counter is not None:
                counter[0] += 1
            return policy.MUST_SAVE
        return policy.PREFER_RECOMPUTE
    return policy_fn


def test_an_op_list_holding_a_non_op_raises():
    def scenario(lib):
        lib.utils.checkpoint.create_selective_checkpoint_contexts([2])
    assert same_in_both(scenario) == ("ValueError", "Expected op in `op_list` to be an OpOverload but got: 2 of type "
                                                    "<class 'int'>.")


def test_a_policy_neither_function_nor_list_raises():
    def scenario(lib):
        lib.utils.checkpoint.create_selective_checkpoint_contexts(2)
    assert same_in_both(scenario) == ("TypeError", "policy_fn_or_list must be either a function or a list of ops.")


@NO_SAC
def test_saving_a_view_of_a_non_differentiable_tensor():
    def scenario(lib):
        x = lib.tensor([1, 2, 3])
        y = randn(lib, 3, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda a, b: (a.view(-1), b.sin().cos()), x, y, use_reentrant=False,
                                              context_fn=selective(lib, [op(lib, "view")]))
        out[1].sum().backward()
        return y.grad
    same_in_both(scenario)


@NO_SAC
def test_a_stateful_policy_sees_the_forward_and_the_recompute():
    def scenario(lib):
        counters, seen = {False: [0], True: [0]}, []

        def policy(ctx, func, *args, **kwargs):
            counter = counters[ctx.is_recompute]
            counter[0] += 1
            seen.append(counter[0])
            return lib.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE
        x = randn(lib, 3, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda t: t.sin().sin().sin(), x, use_reentrant=False,
                                              context_fn=selective(lib, policy, allow_cache_entry_mutation=True))
        out.sum().backward()
        return seen
    same_in_both(scenario)


@NO_SAC
@pytest.mark.parametrize("allow", [False, True])
def test_mutating_a_saved_op_output_raises_unless_allowed(allow):
    def scenario(lib):
        x = randn(lib, 3, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda t: t.sin().mul_(2).cos().exp(), x, use_reentrant=False,
                                              context_fn=selective(lib, must_save(lib, "sin"),
                                                                   allow_cache_entry_mutation=allow))
        out.sum().backward()
        return x.grad
    result = same_in_both(scenario)
    assert result[0] == ("ok" if allow else "RuntimeError")


@NO_SAC
def test_saving_an_op_with_two_outputs():
    def scenario(lib):
        counter = [0]

        def fn(t):
            a, b = lib.var_mean(t)
            return a * b
        x = randn(lib, 3, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False, context_fn=selective(
            lib, must_save(lib, "var_mean", counter, overload="correction")))
        return lib.autograd.grad(out.sum(), (x,)), lib.autograd.grad(fn(x).sum(), (x,)), counter[0]
    result = same_in_both(scenario)
    assert result[1][0] == result[1][1] and result[1][2] == 2


@NO_SAC
def test_a_selective_recompute_runs_only_once():
    def scenario(lib):
        x = randn(lib, 3, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda t: t.sin().cos().exp(), x, use_reentrant=False,
                                              context_fn=selective(lib, must_save(lib, "sin")))
        out.sum().backward(retain_graph=True)
        out.sum().backward(retain_graph=True)
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError" and result[1].startswith("Trying to backward an extra time")
