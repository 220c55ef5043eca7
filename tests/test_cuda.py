"""The CuPy backend on a real GPU; skipped where CuPy or a GPU is missing."""
import numpy as np
import pytest

import retrograd as rg

cupy = pytest.importorskip("cupy")
try:
    HAVE_GPU = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # no driver
    HAVE_GPU = False
pytestmark = [pytest.mark.skipif(not HAVE_GPU, reason="no CUDA GPU"), pytest.mark.timeout(120)]


def test_gradients_on_the_gpu_match_the_cpu():
    x_cpu = rg.randn(8, 5, dtype=rg.float64, requires_grad=True)
    w_cpu = rg.randn(5, 3, dtype=rg.float64, requires_grad=True)
    (x_cpu @ w_cpu).tanh().sum().backward()
    x = x_cpu.detach().cuda().requires_grad_()
    w = w_cpu.detach().cuda().requires_grad_()
    (x @ w).tanh().sum().backward()
    assert x.grad.device == rg.device("cuda:0")
    np.testing.assert_allclose(x.grad.cpu().numpy(), x_cpu.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(w.grad.cpu().numpy(), w_cpu.grad.numpy(), rtol=1e-10)


def test_gpu_nodes_run_on_the_device_worker_thread():
    import threading
    seen = {}

    class Where(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            seen["thread"] = threading.current_thread().name
            return grad

    x = rg.ones(3, requires_grad=True)
    Where.apply(x.cuda()).cpu().sum().backward()
    assert seen["thread"] == "retrograd-cuda:0"
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(3, np.float32))
