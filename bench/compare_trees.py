"""Times this bench's workloads on two source trees of retrograd, interleaved sample by sample.

Usage::

    python -m bench.compare_trees TREE_A TREE_B --only chain,many_small --rounds 21

Each tree (a checkout with its C modules built in place) gets a worker process that imports its
retrograd and this checkout's workloads, builds each workload's retrograd step at its full size
and warms it up; then the samples go round the two workers in turn, the first one alternating
from round to round, so that a drift of the machine hits both alike. A sample is the worker's CPU
time (process_time: a shared machine's waits are not in it), the best of ``--reps`` calls of the step,
so that one sample is long against the scheduler's slices. Printed per workload: each tree's
median sample and the ratio A/B taken round by round, as a median with its min and max, and a
95% bootstrap interval of that median (pairs of workers resampled, then rounds within them): the
interval, not the median alone, says whether a difference of a few percent was resolved.
Both workers are pinned to one core (``--cpu``): they take turns, so they never compete for it, and
neither gets a faster or quieter core than the other for the whole run (unpinned, the medians of
single pairs ranged from 0.71 to 1.46 for the same two trees). ``RETROGRAD_COMPILED=0`` in the
environment measures the pure-Python paths.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

__all__ = ["main"]

_BENCH_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The worker: retrograd from the tree (first on the path while it is imported), the workloads from this checkout.
_WORKER = r"""
import gc, json, sys, time
tree, bench_root, keys, quick, cpu = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4] == "quick", sys.argv[5]
if cpu != "any":
    import os
    os.sched_setaffinity(0, {int(cpu)})  # both workers on one core: they take turns, and share its luck
sys.path.insert(0, tree)
import retrograd as rg
assert rg.__file__.startswith(tree), rg.__file__
sys.path.insert(0, bench_root)
from bench.frameworks import pin_numpy_blas
from bench.workloads import BY_KEY
pin_numpy_blas()
steps = {}
for k in keys:
    w = BY_KEY[k]
    steps[k] = w.builder_for("retrograd")(w.params(quick))
    steps[k]()
gc.collect()
gc.freeze()  # what import and set-up made is never collected: a sample's gc.collect() sees only the steps' garbage
print(json.dumps({"ready": rg.__file__, "compiled": [rg.is_compiled("engine"), rg.is_compiled("ops")]}), flush=True)
for line in sys.stdin:
    k, reps = line.split()
    step = steps[k]
    gc.collect()
    best = float("inf")
    for _ in range(int(reps)):
        t0 = time.process_time()
        step()
        best = min(best, time.process_time() - t0)
    print(best, flush=True)
"""


def _start(tree, keys, quick, cpu):
    proc = subprocess.Popen([sys.executable, "-c", _WORKER, os.path.abspath(tree), _BENCH_ROOT, ",".join(keys),
                             "quick" if quick else "full", str(cpu)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/")
    ready = json.loads(proc.stdout.readline())
    return proc, ready


def _sample(proc, key, reps) -> float:
    proc.stdin.write(f"{key} {reps}\n")
    proc.stdin.flush()
    return float(proc.stdout.readline())


def _median_interval(ratios, per_pair, resamples=4_000, seed=0):
    """A 95% bootstrap interval of the median of ``ratios``, resampling the pairs of workers and then
    the rounds within each: a pair's own bias is part of the uncertainty, not averaged away."""
    rng = np.random.default_rng(seed)
    groups = np.asarray(ratios).reshape(-1, per_pair)
    medians = np.empty(resamples)
    for k in range(resamples):
        chosen = groups[rng.integers(len(groups), size=len(groups))]
        medians[k] = np.median(np.take_along_axis(chosen, rng.integers(per_pair, size=chosen.shape), axis=1))
    return np.percentile(medians, 2.5), np.percentile(medians, 97.5)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare_trees", description=__doc__.split("\n\n")[0])
    parser.add_argument("tree_a")
    parser.add_argument("tree_b")
    parser.add_argument("--only", default="chain,many_small", help="comma-separated workload keys")
    parser.add_argument("--rounds", type=int, default=21, help="samples per tree and workload")
    parser.add_argument("--quick", action="store_true", help="the workloads' quick sizes: short samples, many rounds")
    parser.add_argument("--pairs", type=int, default=1,
                        help="fresh pairs of workers sharing the rounds: a process's own luck (its memory layout, "
                             "its core) differs from pair to pair and evens out")
    parser.add_argument("--cpu", default=None,
                        help="the core both workers are pinned to (default: the highest this process may use; "
                             "'any' leaves them to the scheduler, and each may land on a core of its own luck)")
    parser.add_argument("--reps", type=int, default=1, help="calls of the step in one sample, which is the fastest of them")
    args = parser.parse_args(argv)
    keys = args.only.split(",")
    times = {key: ([], []) for key in keys}
    per_pair = -(-args.rounds // args.pairs)
    cpu = args.cpu if args.cpu is not None else "any" if not hasattr(os, "sched_getaffinity") else max(
        os.sched_getaffinity(0))
    for pair in range(args.pairs):
        workers = [_start(args.tree_a, keys, args.quick, cpu), _start(args.tree_b, keys, args.quick, cpu)]
        if pair == 0:
            for name, (_, ready) in zip("AB", workers):
                print(f"{name}: {ready['ready']} (compiled engine, ops: {ready['compiled']})")
        try:
            for key in keys:
                for r in range(per_pair):
                    for i in ((0, 1) if r % 2 == 0 else (1, 0)):
                        times[key][i].append(_sample(workers[i][0], key, args.reps))
        finally:
            for proc, _ in workers:
                proc.stdin.close()
                proc.wait()
    for key in keys:
        a, b = np.array(times[key][0]), np.array(times[key][1])
        ratios = a / b
        low, high = _median_interval(ratios, per_pair)
        pair_medians = np.median(ratios.reshape(-1, per_pair), axis=1)
        print(f"{key}: A {np.median(a) * 1e3:.3f} ms, B {np.median(b) * 1e3:.3f} ms, A/B {np.median(ratios):.3f} "
              f"[{ratios.min():.3f}, {ratios.max():.3f}], 95% interval of the median [{low:.3f}, {high:.3f}] "
              f"over {len(ratios)} rounds of {args.reps} in {args.pairs} pairs of workers "
              f"(medians of the pairs {pair_medians.min():.3f} to {pair_medians.max():.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
