"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) on checkpointing that the checkpoint
tests of tests/utils/ do not restate. See test_pytorch_suite_basics.py for the method.
"""
import copy

import pytest

from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")


@pytest.mark.xfail(strict=True, reason="autocast casts nothing: retrograd has no bfloat16 arrays, so CPU autocast "
                                       "cannot run mm in bfloat16, in the forward nor in the recomputation")
def test_non_reentrant_checkpoint_recomputes_under_the_forwards_autocast():
    def scenario(lib):
        seen = []
        for enabled in (True, False):
            dtypes = []

            def segment(x, y, z):
                x = lib.mm(x, y)
                y = lib.mm(x, z)
                z = lib.mm(z, z)
                dtypes.append(str(z.dtype).split(".")[1])
                return z
            x, y, z = (randn(lib, 3, 3, seed=i).float().requires_grad_() for i in range(3))
            with lib.autocast(enabled=enabled, device_type="cpu", dtype=lib.bfloat16):
                loss = lib.utils.checkpoint.checkpoint(segment, x, y, z, use_reentrant=False).sum()
            loss.backward()  # the recomputation runs in the forward's autocast, or the gradients' dtypes clash
            seen.append((dtypes, str(z.grad.dtype).split(".")[1]))
        return seen
    assert same_in_both(scenario) == ("ok", [(["bfloat16"], "float32"), (["float32"], "float32")])


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
