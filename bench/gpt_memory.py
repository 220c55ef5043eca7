"""Activation memory of the GPT step (W15's model): peak RSS growth over one forward + backward.

    python -m bench.gpt_memory [--seq 256] [--repeats 3] [--frameworks retrograd,torch1]

Each sample runs in a fresh process (``--child``): it builds W15's model with the given sequence length
(batch 8, d 64, 4 heads, 2 blocks, vocab 65, float32), runs one warm-up forward + backward at
sequence 8 (code paths, lazy imports, the allocator's first arenas), drops the gradients, collects
garbage, resets the kernel's peak-RSS mark (``/proc/self/clear_refs``), notes ``VmRSS``, runs the
forward (the cross-entropy loss included) and backward at the full length, and reports ``VmHWM`` minus
that ``VmRSS``: what the step's saved activations, gradients and temporaries cost at their peak, as the
system sees it (tracemalloc would miss PyTorch's allocations). The optimizer is not part of it. Where
the peak mark cannot be reset, the warm-up's own peak is below the full step's and is left in place.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys

import numpy as np

from .workloads import gpt


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS (Linux 4.0 and later)
        return True
    except OSError:
        return False


def _child(framework: str, seq: int) -> dict:
    if framework in ("torch", "torch1"):
        import torch as lib
        if framework == "torch1":
            lib.set_num_threads(1)
    else:
        import retrograd as lib
    p = dict(gpt.W15.params(False), seq=seq)
    warm_loss, _, _ = gpt.make(lib, dict(p, seq=8))  # the same model on a short sequence
    warm_loss().backward()
    del warm_loss
    loss, params, _ = gpt.make(lib, p)
    gc.collect()
    reset = _reset_peak()
    before = _status_kib("VmRSS")
    loss().backward()
    peak = _status_kib("VmHWM")
    return {"framework": framework, "seq": seq, "rss_before_kib": before, "peak_kib": peak,
            "growth_kib": peak - before, "peak_reset": reset,
            "grad_bytes": int(sum(np.prod(tuple(t.shape)) * 4 for t in params))}


def measure(frameworks, seq: int, repeats: int, log=print) -> dict:
    """Median peak-RSS growth per framework over ``repeats`` fresh processes, interleaved."""
    samples = {fw: [] for fw in frameworks}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for r in range(repeats):
        for fw in (frameworks if r % 2 == 0 else frameworks[::-1]):
            out = subprocess.run([sys.executable, "-m", "bench.gpt_memory", "--child", fw, "--seq", str(seq)],
                                 cwd=root, capture_output=True, text=True, timeout=600)
            if out.returncode:
                raise RuntimeError(f"{fw}: {out.stderr[-2000:]}")
            res = json.loads(out.stdout.strip().splitlines()[-1])
            samples[fw].append(res)
            log(f"  {fw}: growth {res['growth_kib'] / 1024:.1f} MiB (RSS before {res['rss_before_kib'] / 1024:.0f} "
                f"MiB{'' if res['peak_reset'] else ', peak not reset'})")
    report = {fw: {"median_growth_mib": float(np.median([s["growth_kib"] for s in ss])) / 1024,
                   "samples_mib": [s["growth_kib"] / 1024 for s in ss]} for fw, ss in samples.items()}
    base = report.get("torch1") or report.get("torch")
    for res in report.values():
        res["ratio"] = None if base is None else res["median_growth_mib"] / base["median_growth_mib"]
    return report


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.gpt_memory", description=__doc__.splitlines()[0])
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--frameworks", default="retrograd,torch1")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, args.seq)))
        return
    report = measure(args.frameworks.split(","), args.seq, args.repeats)
    print(f"GPT step (W15's model, batch 8, seq {args.seq}): peak RSS growth of forward + backward, median of "
          f"{args.repeats} fresh processes")
    for fw, res in report.items():
        ratio = "" if res["ratio"] is None else f" ({res['ratio']:.2f} of PyTorch's)"
        print(f"  {fw:10s} {res['median_growth_mib']:7.1f} MiB{ratio}   samples "
              + ", ".join(f"{s:.1f}" for s in res["samples_mib"]))


if __name__ == "__main__":
    main()
