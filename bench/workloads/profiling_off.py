"""profiling_off: what the profiler and the debugging aids cost once they are off again.

The profiler, ``explain_mode`` and ``detect_nonfinite`` see op calls through the op call's
interposition (Note [Op call interposition]) and backward passes through the engine's observers
(Note [Observing the engine]); off, both cost a flag read. There is no build without the flag
reads, so what is measured here is whether being turned on and off leaves anything behind: the
same steps (W1 chain, W2 mlp, W6 many-small, at small sizes) in a process that never entered any
of them ("never"), and in processes that entered and left, once, with a step inside, ``profile()``,
``explain_mode()`` or ``detect_nonfinite()``. Each variant is a process forked from the runner
before any step is built (so all four start from one state); the runner hands out the samples in
turn, the starting variant rotating from round to round, and reports each variant's time over
"never"'s, per round, as a median with its spread (min and max over the rounds). Times are the
process's CPU time (only the sampled process runs at a time), which a shared machine's waits do
not inflate as they do wall-clock time. What the flag reads cost against a tree without them is
in docs/perf/profiling-off.md (measured with ``python -m bench.compare_trees``).

Run it in a process of its own (``python -m bench --only profiling_off``): the "never" variant is
the runner's own process, which must not have profiled before. POSIX only (it forks).
"""
from __future__ import annotations

import gc
import os
import struct
import time

import numpy as np

from ._base import Workload
from .chain import W1
from .many_small import W6
from .mlp import W2

__all__ = ["PROFILING_OFF", "VARIANTS", "STEPS", "measure"]

PROFILING_OFF = Workload(
    "profiling_off", "profiling off",
    "W1 chain, W2 mlp and W6 many-small steps in a process that never profiled, against processes that entered "
    "and left profile(), explain_mode() or detect_nonfinite() once (forked from one state, samples taken in turn)",
    sizes={"full": {"chain": {"steps": 2000}, "mlp": {**W2.sizes["full"], "steps": 5}, "many_small": {"graphs": 200}},
           "quick": {"chain": {"steps": 20}, "mlp": W2.sizes["quick"], "many_small": {"graphs": 5}}},
    unit="round", repeats=15)

VARIANTS = ("never", "profile", "explain_mode", "detect_nonfinite")  # "never" first: the baseline
STEPS = {"chain": W1, "mlp": W2, "many_small": W6}


def _context(variant):
    import retrograd as rg
    from retrograd.profiler import profile
    return {"profile": profile, "explain_mode": rg.autograd.explain_mode,
            "detect_nonfinite": rg.autograd.detect_nonfinite}[variant]()


def _build(params, variant):
    """The steps, warmed up, after ``variant``'s mode was entered and left with each step run inside."""
    steps = {k: w.builder_for("retrograd")(params[k]) for k, w in STEPS.items()}
    if variant != "never":
        with _context(variant):
            for step in steps.values():
                step()
    for step in steps.values():
        step()
    return steps


def _sample(steps, collect) -> list:
    times = []
    for step in steps.values():
        if collect:
            gc.collect()
        t0 = time.process_time()
        step()
        times.append(time.process_time() - t0)
    return times


def _child(variant, params, collect, commands, results):
    """A forked variant: builds its steps, then times one sample per byte it reads, until it reads b"q"."""
    try:
        steps = _build(params, variant)
        os.write(results, b"k")
        while os.read(commands, 1) == b"r":
            os.write(results, b"t" + struct.pack(f"{len(steps)}d", *_sample(steps, collect)))
    except BaseException as exc:  # noqa: BLE001 - reported by the runner
        os.write(results, b"e" + f"{type(exc).__name__}: {exc}".encode()[:500])
    finally:
        os._exit(0)


def _read(fd, n) -> bytes:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            raise RuntimeError("a profiling_off variant's process ended early")
        data += chunk
    return data


def _answer(variant, fd, expected, n=0) -> bytes:
    """The ``n`` bytes after the status byte ``expected`` from a variant's process; its error if it sent one."""
    status = _read(fd, 1)
    if status != expected:
        raise RuntimeError(f"profiling_off variant {variant} failed: {(status + os.read(fd, 600)).decode()}")
    return _read(fd, n) if n else b""


def measure(params, rounds, quick, log=print) -> dict:
    """Times the variants in turn for ``rounds`` rounds; returns {variant: {step: {median_s, ratio_*,
    samples_s}}}, ratios taken round by round against "never"."""
    collect = not quick
    children = {}
    try:
        for v in VARIANTS[1:]:
            commands_r, commands_w = os.pipe()
            results_r, results_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(commands_w)
                os.close(results_r)
                _child(v, params, collect, commands_r, results_w)
            os.close(commands_r)
            os.close(results_w)
            children[v] = (pid, commands_w, results_r)
        steps = _build(params, "never")
        for v, (_, _, results) in children.items():
            _answer(v, results, b"k")
        samples = {v: {k: [] for k in STEPS} for v in VARIANTS}
        for r in range(-1, rounds):  # round -1 untimed: each process's first writes after the fork copy pages
            k = r % len(VARIANTS)
            for v in VARIANTS[k:] + VARIANTS[:k]:
                if v == "never":
                    times = _sample(steps, collect)
                else:
                    _, commands, results = children[v]
                    os.write(commands, b"r")
                    times = struct.unpack(f"{len(STEPS)}d", _answer(v, results, b"t", 8 * len(STEPS)))
                for key, t in zip(STEPS, times):
                    if r >= 0:
                        samples[v][key].append(t)
    finally:
        for pid, commands, results in children.values():
            try:
                os.write(commands, b"q")
            except OSError:
                pass
            os.close(commands)
            os.close(results)
            os.waitpid(pid, 0)
    out = {}
    for v in VARIANTS:
        out[v] = {}
        for key in STEPS:
            ratios = np.array(samples[v][key]) / np.array(samples["never"][key])
            out[v][key] = {"median_s": float(np.median(samples[v][key])), "ratio_median": float(np.median(ratios)),
                           "ratio_min": float(ratios.min()), "ratio_max": float(ratios.max()),
                           "samples_s": samples[v][key]}
        log(f"  {v}: " + ", ".join(f"{key} {out[v][key]['ratio_median']:.3f}" for key in STEPS))
    return out
