"""W5 deep: a million-node chain, built, differentiated and freed in a fresh process per sample.

Each sample runs ``python -m bench.deep_child <framework> <steps>`` and reads one JSON line:
forward, backward and teardown seconds, and the peak RSS (``resource.getrusage`` in the child)
before and after, so that the graph's own memory is the difference.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

from ._base import Workload

__all__ = ["W5", "measure", "FRAMEWORKS"]

C = 1.0000001

W5 = Workload(
    "deep", "W5 deep",
    "`steps` times y = y * 1.0000001 on shape (1,), float64, then y.sum().backward(), in a fresh "
    "process per sample: forward, backward, teardown (dropping the graph) and peak RSS",
    sizes={"full": {"steps": 1_000_000}, "quick": {"steps": 2000}},
    unit="node", count="steps", repeats=3)


def _peak_kib() -> int:
    """This process's peak resident set size in KiB.

    ``VmHWM`` of /proc/self/status where there is one: ``getrusage(RUSAGE_SELF).ru_maxrss``
    is carried over from the parent across fork and exec on Linux, so a child started by a
    parent that has imported PyTorch would report the parent's peak.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# The frameworks _child is written for; the runner notes the others as not written.
FRAMEWORKS = ("retrograd", "torch1", "torch", "autograd", "mygrad", "numpy")


def _child(framework: str, steps: int) -> dict:
    """Runs one sample in this process; returns its measurements."""
    x0 = np.ones(1)
    if framework in ("torch", "torch1"):
        import torch
        if framework == "torch1":
            torch.set_num_threads(1)
        x = torch.tensor(x0, requires_grad=True)
    elif framework == "retrograd":
        import retrograd as rg
        x = rg.tensor(x0, dtype=rg.float64, requires_grad=True)
    elif framework == "mygrad":
        import mygrad as mg
        x = mg.tensor(x0)
    elif framework == "autograd":
        from autograd.core import make_vjp
    base = _peak_kib()
    t0 = time.perf_counter()
    if framework == "autograd":  # autograd traces the forward inside make_vjp
        def f(x):
            y = x
            for _ in range(steps):
                y = y * C
            return y.sum()
        vjp, y = make_vjp(f, x0)
    elif framework == "numpy":
        y = x0
        for _ in range(steps):
            y = y * C
    else:
        y = x
        for _ in range(steps):
            y = y * C
        y = y.sum()
    t1 = time.perf_counter()
    if framework == "autograd":
        grad = vjp(1.0)
    elif framework == "numpy":
        g = np.ones(1)
        for _ in range(steps):
            g = g * C
        grad = g
    else:
        y.backward()
        grad = x.grad
    t2 = time.perf_counter()
    if framework == "autograd":
        del vjp
    del y
    t3 = time.perf_counter()
    from ..frameworks import to_numpy
    return {"forward_s": t1 - t0, "backward_s": t2 - t1, "teardown_s": t3 - t2, "base_rss_kib": base,
            "peak_rss_kib": _peak_kib(), "grad": float(to_numpy(grad).reshape(-1)[0])}


def _run_child(framework: str, steps: int, timeout: float) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    try:
        proc = subprocess.run([sys.executable, "-m", "bench.deep_child", framework, str(steps)],
                              capture_output=True, text=True, timeout=timeout, cwd=root, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return {"error": f"child failed: {last[:200]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(frameworks, params, repeats, timeout=900.0, log=print) -> dict:
    """Runs the samples, frameworks interleaved; returns ``{framework: {metric: median, ...}}``."""
    steps = params["steps"]
    samples = {fw: [] for fw in frameworks}
    errors = {}
    for r in range(repeats):
        order = frameworks[r % len(frameworks):] + frameworks[:r % len(frameworks)]
        for fw in order:
            if fw in errors:
                continue
            out = _run_child(fw, steps, timeout)
            if "error" in out:
                errors[fw] = out["error"]
                log(f"  {fw}: {out['error']}")
                continue
            samples[fw].append(out)
    result = {}
    for fw in frameworks:
        if fw in errors:
            result[fw] = {"error": errors[fw]}
            continue
        s = samples[fw]
        med = {k: float(np.median([o[k] for o in s])) for k in s[0] if k != "grad"}
        med["graph_rss_mib"] = float(np.median([(o["peak_rss_kib"] - o["base_rss_kib"]) / 1024 for o in s]))
        med["peak_rss_mib"] = med.pop("peak_rss_kib") / 1024
        med["base_rss_mib"] = med.pop("base_rss_kib") / 1024
        med["backward_per_node_us"] = med["backward_s"] / steps * 1e6
        med["forward_per_node_us"] = med["forward_s"] / steps * 1e6
        med["grad"] = s[0]["grad"]
        med["samples"] = len(s)
        result[fw] = med
    return result
