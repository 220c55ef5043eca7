"""Forward + backward time of a small conv layer stack: retrograd against PyTorch on the CPU.

A batch of 32 MNIST-sized images (1x28x28) through conv(1->8, 3x3, pad 1) -> relu ->
max_pool 2 -> conv(8->16, 3x3, pad 1) -> relu, summed; the gradients of the input-free
parameters are computed. Prints each library's best time and their ratio.

Run: python bench/bench_conv.py [--repeat N]
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # this checkout's retrograd
import retrograd as rg  # noqa: E402
import retrograd.nn.functional as RF  # noqa: E402


def _best_time(fn, repeat):
    """The fastest of ``repeat`` runs after a warm-up (least disturbed by other load, as timeit advises)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _arrays():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((32, 1, 28, 28)).astype(np.float32),
            rng.standard_normal((8, 1, 3, 3)).astype(np.float32) * 0.3, np.zeros(8, np.float32),
            rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.1, np.zeros(16, np.float32))


def step(lib, F, x, w1, b1, w2, b2):
    for p in (w1, b1, w2, b2):
        p.grad = None
    h = F.relu(F.conv2d(x, w1, b1, padding=1))
    h = F.max_pool2d(h, 2)
    out = F.relu(F.conv2d(h, w2, b2, padding=1))
    out.sum().backward()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    arrays = _arrays()
    x, *params = [rg.tensor(a) for a in arrays]
    for p in params:
        p.requires_grad_(True)
    t_rg = _best_time(lambda: step(rg, RF, x, *params), args.repeat)
    print(f"retrograd: {t_rg * 1e3:8.2f} ms per forward+backward (batch 32, 1x28x28)")
    try:
        import torch
    except ImportError:
        print("torch not installed: no comparison")
        return
    tx, *tparams = [torch.tensor(a) for a in arrays]
    for p in tparams:
        p.requires_grad_(True)
    # PyTorch's best of its default thread count and one thread (threads oversubscribe a loaded machine).
    timings = {}
    for threads in sorted({torch.get_num_threads(), 1}):
        torch.set_num_threads(threads)
        timings[threads] = _best_time(lambda: step(torch, torch.nn.functional, tx, *tparams), args.repeat)
    threads, t_torch = min(timings.items(), key=lambda kv: kv[1])
    print(f"pytorch:   {t_torch * 1e3:8.2f} ms per forward+backward ({threads} thread(s))")
    print(f"ratio retrograd / pytorch: {t_rg / t_torch:.2f}x")


if __name__ == "__main__":
    main()
