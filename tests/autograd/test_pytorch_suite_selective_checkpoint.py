"""Scenarios of PyTorch's test/test_autograd.py, class TestSelectiveActivationCheckpoint, written again and run with
retrograd and torch on the same numbers. See test_pytorch_suite_basics.py for the method.

An op is named ``<lib>.ops.aten.<name>.<overload>`` in both (Note [PyTorch's op names] in retrograd/_ops.py).
As in PyTorch 2.13, the policy is called in the forward only (``ctx.is_recompute`` is always False), once per op call.
Out of scope: the CUDA memory and flop count, the tensor subclass that dispatches on sizes, the caching modes'
storage, and a ``torch.library`` custom op.
"""
import functools

import pytest

from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")


def op(lib, name, overload="default"):
    return getattr(getattr(lib.ops.aten, name), overload)


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


def test_an_op_list_holding_an_op_of_every_overload_raises():
    def scenario(lib):
        lib.utils.checkpoint.create_selective_checkpoint_contexts([lib.ops.aten.sin])  # not aten.sin.default
    assert same_in_both(scenario) == ("ValueError", "Expected op in `op_list` to be an OpOverload but got: aten.sin "
                                                    "of type <class 'retrograd._ops.OpOverloadPacket'>.")


def test_a_policy_neither_function_nor_list_raises():
    def scenario(lib):
        lib.utils.checkpoint.create_selective_checkpoint_contexts(2)
    assert same_in_both(scenario) == ("TypeError", "policy_fn_or_list must be either a function or a list of ops.")


def test_saving_a_view_of_a_non_differentiable_tensor():
    def scenario(lib):
        x = lib.tensor([1, 2, 3])
        y = randn(lib, 3, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda a, b: (a.view(-1), b.sin().cos()), x, y, use_reentrant=False,
                                              context_fn=selective(lib, [op(lib, "view")]))
        out[1].sum().backward()
        return y.grad
    same_in_both(scenario)


def test_a_stateful_policy_is_called_once_per_op_call_of_the_forward():
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
    assert same_in_both(scenario) == ("ok", [1, 2, 3])


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
    assert result[1][0] == result[1][1] and result[1][2] == 1  # the policy runs in the forward only


def test_a_selective_recompute_runs_only_once():
    def scenario(lib):
        x = randn(lib, 3, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda t: t.sin().cos().exp(), x, use_reentrant=False,
                                              context_fn=selective(lib, must_save(lib, "sin")))
        out.sum().backward(retain_graph=True)
        out.sum().backward(retain_graph=True)
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError" and result[1].startswith("Trying to backward an extra time")
