"""Where retrograd's time goes in W1, W2 and W6: forward per op, backward per node, and cProfile.

Usage::

    python -m bench.profile chain        # or mlp, many_small; --top N for more cProfile rows

Prints (1) wall time of the forward and the backward separately, divided by the number of ops
recorded and of nodes run, in microseconds, against the same split for PyTorch (1 thread) when
installed; (2) the cProfile functions with the most own time over ``--reps`` steps, in
microseconds per node. The notes in docs/perf/ were written from this output.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

import numpy as np

from . import frameworks as fws
from .workloads.mlp import _data as mlp_data, _mlp


def _count_nodes(root_fn) -> dict:
    """``{node name: count}`` over the graph reachable from ``root_fn``."""
    seen, stack, counts = {root_fn}, [root_fn], {}
    while stack:
        node = stack.pop()
        name = node.name() if callable(getattr(node, "name", None)) else type(node).__name__
        counts[name] = counts.get(name, 0) + 1
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return counts


def _chain(lib, steps=20_000):
    x = lib.tensor(np.linspace(-1.0, 1.0, 16), dtype=lib.float64, requires_grad=True)

    def forward():
        y = x
        for i in range(steps):
            y = y * 1.0001 + 0.0001
            if i % 10 == 9:
                y = lib.tanh(y)
        return y.sum()
    return forward, [x]


def _many_small(lib, graphs=2000):
    x = lib.tensor([0.5, -1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)

    def forward():
        return (x * x).sum()
    return forward, [x], graphs


def _mlp_case(lib):
    arrays, xa, ya = mlp_data({"batch": 128, "sizes": (784, 256, 256, 10), "steps": 1})
    params = [lib.tensor(a, requires_grad=True) for a in arrays]
    x = lib.tensor(xa)
    idx = lib.tensor(ya[:, None], dtype=lib.int64)

    def forward():
        logits = _mlp(params, x, lib.relu)
        return -lib.gather(lib.log_softmax(logits, dim=1), 1, idx).mean()
    return forward, params


def _split(lib, case, graphs=1, reps=5):
    """Median forward and backward wall times over ``reps`` samples (each of ``graphs`` graphs)."""
    fw, bw = [], []
    for _ in range(reps):
        tf = tb = 0.0
        for _ in range(graphs):
            forward, leaves = case
            for t in leaves:
                t.grad = None
            t0 = time.perf_counter()
            loss = forward()
            t1 = time.perf_counter()
            loss.backward()
            t2 = time.perf_counter()
            tf += t1 - t0
            tb += t2 - t1
        fw.append(tf)
        bw.append(tb)
    return float(np.median(fw)) / graphs, float(np.median(bw)) / graphs


def _case(key, lib):
    if key == "chain":
        return _chain(lib), 1
    if key == "many_small":
        forward, leaves, graphs = _many_small(lib)
        return (forward, leaves), graphs
    return _mlp_case(lib), 1


def _per_node(case, graphs, steps=60):
    """Prints the wall time of each node type's ``apply`` per step, best of ``steps`` steps."""
    from retrograd.autograd.accumulate_grad import AccumulateGrad
    from retrograd.ops._declarations import REGISTRY
    from retrograd.ops._node import OpNode
    forward, leaves = case
    acc = {}
    # Each op's node class may carry its own generated apply (ops/_node.py): wrap every one.
    classes = {OpNode, AccumulateGrad} | {op.node_cls for op in REGISTRY.values() if op.node_cls is not None}
    originals = {cls: cls.__dict__["apply"] for cls in classes if "apply" in cls.__dict__}

    def wrap(cls):
        inner = originals[cls]

        def apply(self, grads):
            t0 = time.perf_counter()
            try:
                return inner(self, grads)
            finally:
                acc[self.name()] = acc.get(self.name(), 0.0) + time.perf_counter() - t0
        return apply
    for cls in originals:
        cls.apply = wrap(cls)
    best = {}
    try:
        for _ in range(steps):
            acc.clear()
            for _ in range(graphs):
                for t in leaves:
                    t.grad = None
                forward().backward()
            for k, v in acc.items():
                best[k] = min(best.get(k, float("inf")), v / graphs)
    finally:
        for cls, fn in originals.items():
            cls.apply = fn
    print(f"\nnode apply time per step, best of {steps} steps (all nodes of a type together):")
    for k, v in sorted(best.items(), key=lambda kv: -kv[1]):
        print(f"{v * 1e6:10.1f} µs  {k}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=("chain", "mlp", "many_small"))
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--per-node", action="store_true",
                        help="also time each node type's apply (best of 60 steps)")
    args = parser.parse_args(argv)
    print(fws.pin_numpy_blas())
    import retrograd as rg
    libs = {"retrograd": rg}
    try:
        import torch
        torch.set_num_threads(1)
        libs["torch1"] = torch
    except ImportError:
        pass
    (forward, leaves), graphs = _case(args.workload, rg)
    counts = _count_nodes(forward().grad_fn)
    nodes = sum(counts.values())
    ops = nodes - sum(v for k, v in counts.items() if k == "AccumulateGrad")
    print(f"graph: {nodes} nodes ({ops} recorded ops), by type: {counts}")
    for name, lib in libs.items():
        case, graphs = _case(args.workload, lib)
        f, b = _split(lib, case, graphs)
        print(f"{name:10s} forward {f * 1e6:10.1f} µs = {f / ops * 1e6:7.2f} µs/op   "
              f"backward {b * 1e6:10.1f} µs = {b / nodes * 1e6:7.2f} µs/node")
    if args.per_node:
        _per_node(*_case(args.workload, rg))
    (forward, leaves), graphs = _case(args.workload, rg)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.reps * graphs):
        for t in leaves:
            t.grad = None
        forward().backward()
    prof.disable()
    total_nodes = nodes * args.reps * graphs
    stream = io.StringIO()
    stats = pstats.Stats(prof, stream=stream)
    print(f"\ncProfile over {args.reps * graphs} steps ({total_nodes} nodes); own time per node, µs "
          "(cProfile inflates small functions; read it for shares, the split above for totals):")
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:args.top]
    total = sum(v[2] for v in stats.stats.values())
    print(f"{'own µs/node':>11s} {'share':>6s} {'calls/node':>10s}  function")
    for (file, line, func), (cc, nc, tt, ct, _) in rows:
        short = file.split("retrograd/")[-1] if "retrograd/" in file else file.rsplit("/", 1)[-1]
        print(f"{tt / total_nodes * 1e6:11.3f} {tt / total:6.1%} {nc / total_nodes:10.2f}  {short}:{line} {func}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
