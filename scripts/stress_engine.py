"""Stress the engine: many threads x many backward passes x reentrant depth, on CPU and the fake device.

Then a chain of ``--chain`` ops is run backward and deleted, with the cycle collector off, in
both engine loops. CI runs both with small numbers (tests/autograd/test_stress.py and
tests/autograd/test_memory.py); run it by hand with the defaults:

    python scripts/stress_engine.py --threads 16 --passes 200 --depth 100 --chain 2000000
"""
from __future__ import annotations

import argparse
import gc
import sys
import threading
import time
import weakref

import numpy as np

import retrograd as rg


class Nested(rg.autograd.Function):
    """Identity whose backward runs a reentrant backward ``depth`` levels deep."""

    @staticmethod
    def forward(ctx, x, depth):
        ctx.depth = depth
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        if ctx.depth > 0:
            with rg.enable_grad():
                inner = rg.ones(1, dtype=rg.float64, requires_grad=True)
                Nested.apply(inner, ctx.depth - 1).sum().backward()
        return grad, None


def run(threads: int, passes: int, depth: int) -> float:
    """Runs the stress load; returns the seconds it took. Raises AssertionError on a wrong gradient."""
    shared = rg.tensor([1.0, -2.0, 3.0], dtype=rg.float64, requires_grad=True)
    on_device = (shared.to("fake:0") * 2).to("cpu")
    loss = (Nested.apply(on_device, depth) * shared).sum()
    single = rg.autograd.grad(loss, shared, retain_graph=True)[0].numpy().copy()
    errors = []

    def work(i):
        try:
            for k in range(passes):
                if (i + k) % 7 == 3:  # some passes fail on purpose; they must not disturb the others
                    bad = rg.ones(1, requires_grad=True)
                    try:
                        (bad * 2).sum().backward(gradient=rg.ones(2))
                    except RuntimeError:
                        pass
                    continue
                loss.backward(retain_graph=True)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    expected_passes = sum(1 for i in range(threads) for k in range(passes) if (i + k) % 7 != 3)
    start = time.perf_counter()
    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=600)
        if t.is_alive():
            raise AssertionError("a backward thread hung")
    if errors:
        raise errors[0]
    np.testing.assert_allclose(shared.grad.numpy(), expected_passes * single, rtol=1e-10)
    return time.perf_counter() - start


def deep_chain(length: int) -> float:
    """Backward through a chain of ``length`` multiplications, then its deletion, by reference counting alone."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        x = rg.ones(1, requires_grad=True)
        y = x
        for _ in range(length):
            y = y * 1.0000001
        first = weakref.ref(y.grad_fn)
        y.sum().backward()
        if x.grad.item() != y.item():
            raise AssertionError(f"the chain's gradient is {x.grad.item()}, not {y.item()}")
        del y
        if first() is not None:
            raise AssertionError("the chain was not freed by reference counting")
        return time.perf_counter() - start
    finally:
        if was_enabled:
            gc.enable()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--passes", type=int, default=200)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--chain", type=int, default=2_000_000)
    args = parser.parse_args(argv)
    seconds = run(args.threads, args.passes, args.depth)
    print(f"ok: {args.threads} threads x {args.passes} passes x depth {args.depth} in {seconds:.1f} s")
    from retrograd._C import _configure
    for compiled in (True, False):
        if compiled and not _configure.use_compiled(True):
            continue
        _configure.use_compiled(compiled)
        seconds = deep_chain(args.chain)
        loop = "compiled" if compiled else "Python"
        print(f"ok: a chain of {args.chain} ops, backward and freed, with the {loop} engine loop, in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
