"""``opt.step()`` alone: retrograd's array path, its op path and PyTorch (1 thread), interleaved, CPU time.

Usage::

    python -m bench.optim_step                  # every optimizer on W15's 37 parameters, the
                                                # optimizers of W14, W15, W23 and W24 on their own,
                                                # and those four workloads' whole steps
    python -m bench.optim_step --rounds 50 --only AdamW,SGD
    python -m bench.optim_step --tree ../other-checkout   # retrograd from another tree (built in place)

Each optimizer runs over its own copies of the same parameters with the same fixed gradients
(float32); a round calls ``step()`` once on each of the three, in an order that rotates from round to
round, and a column's time is the best of its rounds in CPU time of the thread (``time.thread_time``),
so that a shared machine's waits are not in it. "op path" is retrograd with ``_array_updates = False``
(Note [Optimizer updates on arrays] in retrograd/optim/optimizer.py): the updates as op calls, which
is what every step ran before the array path (a tree without the array path gives the op path in
both columns). Ratios are to PyTorch's column. The last table times each workload's whole training
step (``python -m bench``'s), retrograd's and PyTorch's alternately, in the same CPU time.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from . import frameworks as fws
from .workloads import charlstm, gpt, programs

CONFIGS = [
    ("AdamW", dict(lr=1e-3, weight_decay=0.01, eps=1e-5)),
    ("Adam", dict(lr=1e-3)),
    ("AdamW", dict(lr=1e-3, amsgrad=True, maximize=True)),
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9, weight_decay=1e-4)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9)),
    ("Adagrad", dict(lr=0.01)),
    ("Adadelta", dict()),
    ("Adamax", dict()),
    ("NAdam", dict()),
    ("RAdam", dict()),
    ("ASGD", dict()),
]


def _workload_arrays():
    """``{workload: (arrays, optimizer name, kwargs)}``: each training workload's parameters and optimizer."""
    def from_make(make, p):
        _, params, opt = make(__import__("torch"), p)
        params = params.values() if isinstance(params, dict) else params
        group = {k: v for k, v in opt.param_groups[0].items() if k in opt.defaults and k not in (
            "foreach", "fused", "capturable", "differentiable", "decoupled_weight_decay")}
        return [q.detach().numpy().copy() for q in params], type(opt).__name__, group

    vae_arrays = list(programs._vae_data(programs.W23.params(False))[0].values())
    return {
        "W14 charlstm": from_make(charlstm.make, charlstm.W14.params(False)),
        "W15 gpt": from_make(gpt.make, gpt.W15.params(False)),
        "W23 vae": (vae_arrays, "Adam", dict(lr=1e-3)),
        "W24 makemore": from_make(lambda lib, p: programs.make_makemore(lib, p), programs.W24.params(False)),
    }


def _optimizers(arrays, name, kwargs):
    """Three optimizers over copies of ``arrays`` with fixed gradients: retrograd's array path, its op path, torch."""
    import torch

    import retrograd as rg
    rng = np.random.default_rng(0)
    grads = [(0.01 * rng.standard_normal(a.shape)).astype(a.dtype) for a in arrays]
    made = []
    for lib, arrays_on in ((rg, True), (rg, False), (torch, None)):
        params = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
        for p, g in zip(params, grads, strict=True):
            p.grad = lib.tensor(g)
        opt = getattr(lib.optim, name)(params, **kwargs)
        if arrays_on is not None:
            opt._array_updates = arrays_on
        opt.step()  # the state is made on the first step
        made.append(opt)
    return made


def _time(optimizers, rounds):
    best = [float("inf")] * len(optimizers)
    n = len(optimizers)
    for r in range(rounds):
        for k in range(n):
            i = (r + k) % n
            opt = optimizers[i]
            t0 = time.thread_time()
            opt.step()
            best[i] = min(best[i], time.thread_time() - t0)
    return best


def _whole_steps(rounds):
    """Best CPU time of each training workload's step, retrograd's and PyTorch's (1 thread), alternating."""
    from .workloads import BY_KEY
    for key in ("charlstm", "gpt", "vae", "makemore"):
        w = BY_KEY[key]
        steps = [w.builder_for(fw)(w.params(False)) for fw in ("retrograd", "torch1")]
        for step in steps:
            step()
        best = [float("inf")] * 2
        for r in range(rounds):
            for k in range(2):
                i = (r + k) % 2
                t0 = time.thread_time()
                steps[i]()
                best[i] = min(best[i], time.thread_time() - t0)
        print(f"| {w.title} | {best[0] * 1e3:.2f} ms ({best[0] / best[1]:.2f}) | {best[1] * 1e3:.2f} ms (1.00) |",
              flush=True)


def _row(label, best):
    ours, op_path, theirs = best
    return (f"| {label} | {ours * 1e3:.3f} ms ({ours / theirs:.2f}) | {op_path * 1e3:.3f} ms ({op_path / theirs:.2f}) "
            f"| {theirs * 1e3:.3f} ms (1.00) | {op_path / ours:.2f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="steps of each optimizer; the best counts")
    parser.add_argument("--only", default="", help="comma-separated optimizer names (default: all)")
    parser.add_argument("--tree", default=None, help="a checkout whose retrograd to time (default: this one's)")
    parser.add_argument("--steps-only", action="store_true", help="only the whole training steps")
    args = parser.parse_args(argv)
    if args.tree:
        sys.path.insert(0, args.tree)
    import torch

    import retrograd
    torch.set_num_threads(1)
    blas = fws.pin_numpy_blas()
    only = {n for n in args.only.split(",") if n}
    tree = os.path.relpath(os.path.dirname(retrograd.__file__))
    print(f"retrograd from {tree}; CPU time of the thread, best of {args.rounds} rounds, float32; {blas}; "
          f"load average {open('/proc/loadavg').read().split()[:3]}")
    if args.steps_only:
        return _steps_table(args.rounds)
    header = ("| {} | retrograd, arrays | retrograd, op path | PyTorch (1 thread) | op path / arrays |\n"
              "|---|---|---|---|---|")
    workloads = _workload_arrays()
    arrays = workloads["W15 gpt"][0]
    print(f"\nEvery optimizer on W15's {len(arrays)} parameters ({sum(a.size for a in arrays)} floats):\n")
    print(header.format("optimizer"))
    for name, kwargs in CONFIGS:
        if only and name not in only:
            continue
        options = ", ".join(f"{k}={v}" for k, v in kwargs.items())
        print(_row(f"{name}({options})", _time(_optimizers(arrays, name, kwargs), args.rounds)), flush=True)
    print("\nEach workload's own optimizer on its parameters:\n")
    print(header.format("workload"))
    for label, (arrays, name, kwargs) in workloads.items():
        if only and name not in only:
            continue
        print(_row(f"{label}: {name}, {len(arrays)} parameters", _time(_optimizers(arrays, name, kwargs), args.rounds)),
              flush=True)
    _steps_table(args.rounds)


def _steps_table(rounds):
    print("\nEach workload's whole training step (forward, backward, optimizer):\n")
    print("| workload | retrograd | PyTorch (1 thread) |\n|---|---|---|")
    _whole_steps(rounds)


if __name__ == "__main__":
    main()
