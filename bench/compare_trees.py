"""Times this bench's workloads on two source trees of retrograd, interleaved sample by sample.

Usage::

    python -m bench.compare_trees TREE_A TREE_B --only chain,many_small --rounds 21

Each tree (a checkout with its C modules built in place) gets a worker process that imports its
retrograd and this checkout's workloads, builds each workload's retrograd step at its full size
and warms it up; then the samples go round the two workers in turn, the first one alternating
from round to round, so that a drift of the machine hits both alike. A sample is the worker's CPU
time (process_time: a shared machine's waits are not in it). Printed per workload: each tree's
median sample and the ratio A/B taken round by round, as a median with its min and max.
``RETROGRAD_COMPILED=0`` in the environment measures the pure-Python paths.
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
tree, bench_root, keys = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
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
    steps[k] = w.builder_for("retrograd")(w.params(False))
    steps[k]()
print(json.dumps({"ready": rg.__file__, "compiled": [rg.is_compiled("engine"), rg.is_compiled("ops")]}), flush=True)
for line in sys.stdin:
    k = line.strip()
    gc.collect()
    t0 = time.process_time()
    steps[k]()
    print(time.process_time() - t0, flush=True)
"""


def _start(tree, keys):
    proc = subprocess.Popen([sys.executable, "-c", _WORKER, os.path.abspath(tree), _BENCH_ROOT, ",".join(keys)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/")
    ready = json.loads(proc.stdout.readline())
    return proc, ready


def _sample(proc, key) -> float:
    proc.stdin.write(key + "\n")
    proc.stdin.flush()
    return float(proc.stdout.readline())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare_trees", description=__doc__.split("\n\n")[0])
    parser.add_argument("tree_a")
    parser.add_argument("tree_b")
    parser.add_argument("--only", default="chain,many_small", help="comma-separated workload keys")
    parser.add_argument("--rounds", type=int, default=21, help="samples per tree and workload")
    args = parser.parse_args(argv)
    keys = args.only.split(",")
    workers = [_start(args.tree_a, keys), _start(args.tree_b, keys)]
    for name, (_, ready) in zip("AB", workers):
        print(f"{name}: {ready['ready']} (compiled engine, ops: {ready['compiled']})")
    try:
        for key in keys:
            times = ([], [])
            for r in range(args.rounds):
                for i in ((0, 1) if r % 2 == 0 else (1, 0)):
                    times[i].append(_sample(workers[i][0], key))
            a, b = np.array(times[0]), np.array(times[1])
            ratios = a / b
            print(f"{key}: A {np.median(a) * 1e3:.3f} ms, B {np.median(b) * 1e3:.3f} ms, A/B {np.median(ratios):.3f} "
                  f"[{ratios.min():.3f}, {ratios.max():.3f}] over {args.rounds} rounds")
    finally:
        for proc, _ in workers:
            proc.stdin.close()
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
