"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) on checkpointing that the checkpoint
tests of tests/utils/ do not restate. See test_pytorch_suite_basics.py for the method.
"""
import copy

import numpy as np
import pytest

import retrograd as rg

from .test_pytorch_suite_basics import outcome, randn, same_in_both

torch = pytest.importorskip("torch")


def test_non_reentrant_checkpoint_recomputes_under_the_forwards_autocast():
    def scenario(lib):
        seen = []
        for enabled, reentrant in ((True, False), (False, False), (True, True)):
            dtypes = []

            def segment(x, y, z):
                x = lib.mm(x, y)
                y = lib.mm(x, z)
                z = lib.mm(z, z)
                dtypes.append(str(z.dtype).split(".")[1])
                return z
            x, y, z = (randn(lib, 3, 3, seed=i).float().requires_grad_() for i in range(3))
            with lib.autocast(enabled=enabled, device_type="cpu", dtype=lib.bfloat16):
                loss = lib.utils.checkpoint.checkpoint(segment, x, y, z, use_reentrant=reentrant).sum()
            with lib.autocast(enabled=not enabled, device_type="cpu"):  # the backward's own state is not the one
                loss.backward()  # the recomputation runs in the forward's autocast, or the gradients' dtypes clash
            seen.append((dtypes, str(z.grad.dtype).split(".")[1], z.grad))
        return seen
    ours, theirs = outcome(scenario, rg), outcome(scenario, torch)
    assert [(d, g) for d, g, _ in ours[1]] == [(d, g) for d, g, _ in theirs[1]] == [
        (["bfloat16"], "float32"), (["float32"], "float32"), (["bfloat16", "bfloat16"], "float32")]
    # the gradients: float32's exactly; bfloat16's within its rounding, because PyTorch casts the leaf z once per
    # region (its cast cache) and sums the two gradients of mm(z, z) in bfloat16, where retrograd casts it twice
    # and sums them in float32 (Note [CPU autocast] in retrograd/amp.py)
    assert ours[1][1][2] == theirs[1][1][2]
    for i in (0, 2):
        np.testing.assert_allclose(ours[1][i][2], theirs[1][i][2], rtol=2 ** -7, atol=2 ** -7)


def test_non_reentrant_checkpoint_of_a_data_parallel_module():
    def scenario(lib):
        model = lib.nn.Linear(2, 2, bias=False)  # each library's own initial weights: compared with themselves
        a = randn(lib, 2, 2).float().requires_grad_()
        copy.deepcopy(model)(a).sum().backward()
        plain, a.grad = a.grad, None
        wrapped = lib.nn.DataParallel(copy.deepcopy(model))
        lib.utils.checkpoint.checkpoint(wrapped, a, use_reentrant=False).sum().backward()
        return bool(lib.allclose(plain, a.grad))
    assert same_in_both(scenario) == ("ok", True)
