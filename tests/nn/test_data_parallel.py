"""nn.DataParallel as PyTorch's behaves without a GPU: it runs the module itself (Note [DataParallel without a GPU])."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(rg.cuda.is_available(), reason="without a GPU only")


def _net(lib):
    lib.manual_seed(0)
    net = lib.nn.Linear(3, 2)
    with lib.no_grad():
        net.weight.copy_(lib.tensor([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]]))
        net.bias.copy_(lib.tensor([0.1, -0.2]))
    return net


def test_data_parallel_without_a_gpu_runs_the_module_and_its_backward_as_torchs():
    outs = []
    for lib in (rg, torch):
        inner = _net(lib)
        dp = lib.nn.DataParallel(inner, device_ids=[0, 1], dim=1)
        x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], requires_grad=True)
        y = dp(x)
        (y * y).sum().backward()
        outs.append((dp.module is inner, dp.device_ids, type(y.grad_fn).__name__, y.detach().numpy(),
                     x.grad.numpy(), inner.weight.grad.numpy()))
    ours, theirs = outs
    assert ours[:3] == theirs[:3] == (True, [], "AddmmBackward0")
    for a, b in zip(ours[3:], theirs[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_data_parallel_state_dict_keys_are_the_modules_prefixed_and_load_back():
    keys = [list(lib.nn.DataParallel(_net(lib)).state_dict()) for lib in (rg, torch)]
    assert keys[0] == keys[1] == ["module.weight", "module.bias"]
    dp = rg.nn.DataParallel(rg.nn.Linear(3, 2))
    dp.load_state_dict(rg.nn.DataParallel(_net(rg)).state_dict())
    np.testing.assert_array_equal(dp.module.bias.detach().numpy(), np.array([0.1, -0.2], np.float32))
    assert repr(dp) == repr(torch.nn.DataParallel(torch.nn.Linear(3, 2)))


def test_data_parallel_passes_keyword_arguments_and_has_no_dim_without_a_gpu():
    class Scale(rg.nn.Module):
        def forward(self, x, *, factor):
            return x * factor
    dp = rg.nn.DataParallel(Scale())
    assert dp(rg.ones(2), factor=3.0).tolist() == [3.0, 3.0]
    with pytest.raises(AttributeError):
        dp.dim
    with pytest.raises(AttributeError):
        torch.nn.DataParallel(torch.nn.Identity()).dim
