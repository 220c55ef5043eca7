"""Where retrograd's time goes in W1, W2, W6, W14, W15 and W24: forward per op, backward per node, and cProfile.

Usage::

    python -m bench.profile chain        # or mlp, many_small; --top N for more cProfile rows
    python -m bench.profile charlstm     # or gpt, makemore: training steps, with --kernels by default

Prints (1) wall time of the forward and the backward separately, divided by the number of ops
recorded and of nodes run, in microseconds, against the same split for PyTorch (1 thread) when
installed (for the training steps also the optimizer step, and the NumPy floor's whole step where
there is one); (2) for the training steps (unless ``--no-kernels``), the NumPy kernel time of every op by
phase and family, and what remains of each phase's wall time once the kernels are taken out
(op-call overhead, formulas and engine); (3) with ``--per-node``, each node type's ``apply``;
(4) the cProfile functions with the most own time over ``--reps`` steps, in microseconds per
node. The notes in docs/perf/ were written from this output.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

import numpy as np

from . import frameworks as fws
from .workloads import charlstm, gpt, programs
from .workloads.mlp import _data as mlp_data, _mlp

# The training-step workloads: (workload, ``make(lib, params)`` -> (loss, parameters, optimizer)).
def _makemore(lib, p):
    loss, params, opt = programs.make_makemore(lib, p)
    return loss, list(params.values()), opt


_MODELS = {"charlstm": (charlstm.W14, charlstm.make), "gpt": (gpt.W15, gpt.make), "makemore": (programs.W24, _makemore)}


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


def _split(lib, case, graphs=1, reps=5, opt=None, clock=time.perf_counter, stat=np.median):
    """Forward, backward (and ``opt.step()``) times by ``clock``, ``stat`` of ``reps`` samples of ``graphs`` graphs."""
    fw, bw, ow = [], [], []
    for _ in range(reps):
        tf = tb = to = 0.0
        for _ in range(graphs):
            forward, leaves = case
            for t in leaves:
                t.grad = None
            t0 = clock()
            loss = forward()
            t1 = clock()
            loss.backward()
            t2 = clock()
            if opt is not None:
                opt.step()
            tf += t1 - t0
            tb += t2 - t1
            to += clock() - t2
        fw.append(tf)
        bw.append(tb)
        ow.append(to)
    if opt is not None:
        return float(stat(fw)) / graphs, float(stat(bw)) / graphs, float(stat(ow)) / graphs
    return float(stat(fw)) / graphs, float(stat(bw)) / graphs


def _case(key, lib):
    if key == "chain":
        return _chain(lib), 1
    if key == "many_small":
        forward, leaves, graphs = _many_small(lib)
        return (forward, leaves), graphs
    return _mlp_case(lib), 1


def _model_case(key, lib):
    """``((loss, params), optimizer)`` of a training-step workload at its full sizes."""
    w, make = _MODELS[key]
    loss, params, opt = make(lib, w.params(False))
    return (loss, params), opt


# Op families of the kernel breakdown, by op name; the rest are "other".
FAMILIES = {
    "matmul/linear": ("matmul", "mm", "bmm", "addmm", "linear", "baddbmm", "addmv", "mv", "dot", "einsum"),
    "activations": ("sigmoid", "tanh", "relu", "gelu", "silu", "softplus", "tanh_backward", "sigmoid_backward",
                    "gelu_backward", "threshold_backward", "relu_backward"),
    "normalization/softmax/loss": ("layer_norm", "native_layer_norm", "layer_norm_backward", "softmax",
                                   "log_softmax", "_softmax_backward", "_log_softmax_backward", "nll_loss",
                                   "cross_entropy", "logsumexp", "softmax_backward", "log_softmax_backward",
                                   "nll_loss_backward", "native_layer_norm_backward"),
    "elementwise arithmetic": ("add", "sub", "mul", "div", "neg", "rsub", "pow", "exp", "log", "sqrt", "rsqrt",
                               "where", "masked_fill", "eq", "ne", "gt", "lt", "ge", "le", "clamp", "maximum",
                               "addcmul", "addcdiv", "lerp", "reciprocal", "square"),
    "reductions": ("sum", "mean", "amax", "max", "var", "std", "sum_to_size"),
    "indexing/embedding": ("embedding", "embedding_backward", "index", "index_select", "gather", "scatter_add",
                           "index_add", "index_put", "scatter", "getitem", "setitem", "take", "narrow"),
    "shape/copy": ("view", "reshape", "transpose", "permute", "expand", "contiguous", "clone", "chunk", "split",
                   "stack", "cat", "unsqueeze", "squeeze", "t", "flatten", "select", "slice", "as_strided",
                   "unbind", "zeros_like", "ones_like", "new_zeros", "copy", "copy_", "tril", "zeros", "ones"),
}


def _family(name):
    base = name.strip("_")
    for fam, names in FAMILIES.items():
        if base in names or name in names:
            return fam
    return "other"


def _kernels(case, opt, steps=3):
    """``{(phase, op name): (calls, kernel seconds)}`` per step, best of ``steps``: each op's NumPy forward.

    Runs with the C modules off (they call some kernels without the op's Python forward), with
    every registered op's ``forward`` wrapped in a timer; kernel time does not depend on who calls.
    """
    from retrograd._C import _configure
    from retrograd.ops._declarations import REGISTRY
    forward, leaves = case
    phase = ["forward"]
    acc = {}
    saved = {}
    clock = time.thread_time  # See _main_model: CPU time of this thread, blind to other processes

    def wrap(op):
        inner = op.forward

        def timed(*a, **k):
            t0 = clock()
            try:
                return inner(*a, **k)
            finally:
                key = (phase[0], op.name)
                calls, secs = acc.get(key, (0, 0.0))
                acc[key] = (calls + 1, secs + clock() - t0)
        return timed
    was = _configure.is_compiled("engine"), _configure.is_compiled("ops")
    _configure.use_compiled(False)
    for op in REGISTRY.values():
        saved[op] = op.forward
        op.forward = wrap(op)
    best = {}
    try:
        for i in range(steps + 1):  # the first step (the optimizer making its state) is not counted
            acc.clear()
            for t in leaves:
                t.grad = None
            phase[0] = "forward"
            loss = forward()
            phase[0] = "backward"
            loss.backward()
            phase[0] = "optimizer"
            if opt is not None:
                opt.step()
            for k, (c, t) in acc.items():
                if i:
                    best[k] = (c, min(best.get(k, (c, float("inf")))[1], t))
    finally:
        for op, fn in saved.items():
            op.forward = fn
        if any(was):
            _configure.use_compiled(True)
    return best


def _print_kernels(kern, walls):
    """The kernel table and, per phase, wall = kernels + the rest."""
    print("\nNumPy kernel time per step, best of the steps, by phase and op family (C modules off while timing "
          "the kernels; kernel time is the same either way):")
    print(f"{'phase':10s} {'family':28s} {'calls':>7s} {'kernel µs':>10s} {'µs/call':>8s}  ops (µs)")
    for ph in ("forward", "backward", "optimizer"):
        fams = {}
        for (p, name), (calls, secs) in kern.items():
            if p == ph:
                fams.setdefault(_family(name), []).append((name, calls, secs))
        for fam, items in sorted(fams.items(), key=lambda kv: -sum(i[2] for i in kv[1])):
            calls = sum(i[1] for i in items)
            secs = sum(i[2] for i in items)
            top = ", ".join(f"{n} x{c:.0f} {t * 1e6:.0f}" for n, c, t in sorted(items, key=lambda i: -i[2])[:5])
            print(f"{ph:10s} {fam:28s} {calls:7.0f} {secs * 1e6:10.0f} {secs / calls * 1e6:8.1f}  {top}")
    print("\ntime per step (compiled, as the bench runs) = NumPy kernels + the rest:")
    for ph, wall in walls.items():
        calls = sum(c for (p, _), (c, _) in kern.items() if p == ph)
        ks = sum(t for (p, _), (_, t) in kern.items() if p == ph)
        rest = wall - ks
        per = f" = {rest / calls * 1e6:.1f} µs per op call" if calls else ""
        print(f"{ph:10s} total {wall * 1e6:8.0f} µs   kernels {ks * 1e6:9.0f} µs ({ks / wall:5.1%})   "
              f"rest {rest * 1e6:9.0f} µs{per}")


def _per_node(case, graphs, steps=60, clock=time.perf_counter):
    """Prints the time (by ``clock``) of each node type's ``apply`` per step, best of ``steps`` steps."""
    from retrograd.autograd.accumulate_grad import AccumulateGrad
    from retrograd.ops._declarations import REGISTRY
    from retrograd.ops._node import OpNode
    forward, leaves = case
    acc = {}
    # Each op's node class may carry its own generated apply (ops/_node.py), and so may the classes of
    # the names an op's node can take (Note [Node names per call]: MmBackward0 of matmul): wrap every one.
    classes = {OpNode, AccumulateGrad} | {op.node_cls for op in REGISTRY.values() if op.node_cls is not None}
    stack = [OpNode]
    while stack:
        for sub in stack.pop().__subclasses__():
            classes.add(sub)
            stack.append(sub)
    originals = {cls: cls.__dict__["apply"] for cls in classes if "apply" in cls.__dict__}

    def wrap(cls):
        inner = originals[cls]

        def apply(self, grads):
            t0 = clock()
            try:
                return inner(self, grads)
            finally:
                acc[self.name()] = acc.get(self.name(), 0.0) + clock() - t0
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
    parser.add_argument("workload", choices=("chain", "mlp", "many_small", "charlstm", "gpt", "makemore"))
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--per-node", action="store_true",
                        help="also time each node type's apply (best of 60 steps)")
    parser.add_argument("--no-kernels", action="store_true",
                        help="charlstm, gpt, makemore: leave out the NumPy kernel timing of each op")
    args = parser.parse_args(argv)
    if args.workload in _MODELS:
        return _main_model(args)
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
    ops = nodes - sum(v for k, v in counts.items() if k.endswith("AccumulateGrad"))
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
    _print_profile(prof, total_nodes, args.top, f"{args.reps * graphs} steps ({total_nodes} nodes)")
    return 0


def _main_model(args) -> int:
    """``main`` for the training steps (charlstm, gpt): forward, backward and optimizer step.

    Every time here is CPU time of the calling thread (``time.thread_time``), not wall time: on a
    machine shared with other work, wall time puts the pauses of this process into whichever
    kernel was running, while CPU time stays put. PyTorch runs with one thread, and NumPy's BLAS
    is pinned to one, so all of their work is in this thread too.
    """
    print(fws.pin_numpy_blas())
    print("times: CPU time of this thread (time.thread_time), best of --reps (at least 5) steps")
    import retrograd as rg
    print(f"retrograd compiled modules: {rg.is_compiled()}")
    key = args.workload
    case, opt = _model_case(key, rg)
    loss = case[0]()
    counts = _count_nodes(loss.grad_fn)
    nodes = sum(counts.values())
    ops = nodes - sum(v for k, v in counts.items() if k.endswith("AccumulateGrad"))
    top = sorted(counts.items(), key=lambda kv: -kv[1])
    print(f"graph: {nodes} nodes ({ops} recorded ops), by type: {dict(top)}")
    libs = {"retrograd": rg}
    try:
        import torch
        torch.set_num_threads(1)
        libs["torch1"] = torch
    except ImportError:
        pass
    walls = None
    for name, lib in libs.items():
        c, o = _model_case(key, lib)
        _split(lib, c, 1, 2, opt=o, clock=time.thread_time)  # warm-up
        f, b, s = _split(lib, c, 1, max(args.reps, 5), opt=o, clock=time.thread_time, stat=min)
        if name == "retrograd":
            walls = {"forward": f, "backward": b, "optimizer": s}
        print(f"{name:10s} forward {f * 1e6:9.0f} µs = {f / ops * 1e6:6.2f} µs/op   backward {b * 1e6:9.0f} µs = "
              f"{b / nodes * 1e6:6.2f} µs/node   optimizer {s * 1e6:8.0f} µs   step {(f + b + s) * 1e6:9.0f} µs")
    w = _MODELS[key][0]
    if "numpy" in w.builders:  # makemore has no NumPy floor
        floor = w.builders["numpy"](w.params(False))
        floor()
        times = []
        for _ in range(max(args.reps, 5)):
            t0 = time.thread_time()
            floor()
            times.append(time.thread_time() - t0)
        print(f"{'numpy':10s} whole step (hand-written forward, backward and optimizer) {min(times) * 1e6:9.0f} µs")
    if not args.no_kernels:
        _print_kernels(_kernels(*_model_case(key, rg), steps=max(args.reps, 3)), walls)
    if args.per_node:
        _per_node(_model_case(key, rg)[0], 1, steps=10, clock=time.thread_time)
    (forward, leaves), opt = _model_case(key, rg)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.reps):
        for t in leaves:
            t.grad = None
        forward().backward()
        opt.step()
    prof.disable()
    _print_profile(prof, nodes * args.reps, args.top, f"{args.reps} steps ({nodes * args.reps} nodes)")
    return 0


def _print_profile(prof, total_nodes, top, what):
    stream = io.StringIO()
    stats = pstats.Stats(prof, stream=stream)
    print(f"\ncProfile over {what}; own time per node, µs "
          "(cProfile inflates small functions; read it for shares, the split above for totals):")
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    total = sum(v[2] for v in stats.stats.values())
    print(f"{'own µs/node':>11s} {'share':>6s} {'calls/node':>10s}  function")
    for (file, line, func), (cc, nc, tt, ct, _) in rows:
        short = file.split("retrograd/")[-1] if "retrograd/" in file else file.rsplit("/", 1)[-1]
        print(f"{tt / total_nodes * 1e6:11.3f} {tt / total:6.1%} {nc / total_nodes:10.2f}  {short}:{line} {func}")


if __name__ == "__main__":
    raise SystemExit(main())
