"""Runs the workloads on every installed framework, interleaved, and writes the tables.

Usage::

    pip install -e '.[bench]' && python -m bench            # the full suite (minutes)
    python -m bench --quick --out /tmp/bench                  # tiny sizes: a smoke test
    python -m bench --only chain,mlp --frameworks retrograd,torch1 --repeats 3
    python -m bench --only models --repeats 3                  # the real-model workloads W14-W24

Within one workload, every framework is built and run once (warm-up, and the cross-framework
check of its result against the NumPy floor), then the timed samples go round the frameworks
in turn, the starting framework rotating from one round to the next and the direction reversed
every other round (so that no framework always runs right after the same other one), so that
drifts of the machine hit all columns alike. Each sample is timed twice: wall time, and the
process's CPU time (``time.process_time``: the threads of the framework measured, and none of
the waits of a machine shared with other jobs). Each column reports the median sample, and its
ratio to the median of PyTorch with 1 thread from the same run, by wall time and by CPU time.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import sys
import time

import numpy as np

from . import frameworks as fws
from ._report import markdown
from .workloads import BY_KEY, GROUPS, WORKLOADS, select
from .workloads._base import Skip
from .workloads.deep import FRAMEWORKS as DEEP_FRAMEWORKS, W5, measure as measure_deep
from .workloads.profiling_off import PROFILING_OFF, measure as measure_profiling_off

__all__ = ["run", "main", "TARGETS"]

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

# retrograd time / PyTorch (1 thread) time that each workload should reach: the targets of the issue
# "Performance on real models" (the first round's were looser: 0.60 for W1, 1.00 for W2...).
TARGETS = {"chain": 0.35, "mlp": 0.95, "fanin": 0.50, "hvp": 0.60, "deep": 0.30, "deep_rss": 0.35,
           "many_small": 0.35, "convnet": 0.90}
TARGETS.update({key: 1.00 for key in ("charlstm", "gpt", "lorenz", "jacobian", "hessian", "persample", "polyfit",
                                      "vae", "makemore")})  # the real models' steps
TARGETS.update({key: 1.20 for key in ("lstm", "lstm2", "gru", "attention", "encoder")})  # PyTorch's fused layers
TARGETS.update({"persample_vmap": 1.00, "jacrev": 1.00, "jacfwd": 1.00, "hvp_fwdrev": 1.00})  # the function transforms against torch.func


def _rotate(seq, r):
    """Round ``r``'s order: ``seq`` rotated by ``r``, reversed on odd rounds.

    A rotation alone keeps the cyclic order, so each framework would always follow the same
    one (retrograd always ran right after JAX); reversing every other round gives each two
    neighbours.
    """
    k = r % len(seq) if seq else 0
    out = seq[k:] + seq[:k]
    return out[::-1] if r % 2 else out


def _check(value, ref, rtol, atol) -> str:
    if ref is None:
        return "no reference"
    if value.shape != ref.shape:
        return f"differs: shape {value.shape} vs {ref.shape}"
    if np.allclose(value, ref, rtol=rtol, atol=atol):
        return "ok"
    err = np.max(np.abs(value - ref) / (atol + rtol * np.abs(ref)))
    return f"differs ({err:.3g} x tolerance)"


def run_workload(w, frameworks, quick, repeats, log=print) -> dict:
    """Times workload ``w`` on ``frameworks``; returns its JSON-ready entry."""
    params = w.params(quick)
    units = w.units_per_sample(params)
    entry = {"title": w.title, "description": w.description, "params": params, "unit": w.unit,
             "units_per_sample": units, "results": {}, "notes": {}}
    if w is W5:
        return _run_deep(entry, frameworks, params, repeats, log)
    if w is PROFILING_OFF:
        return _run_profiling_off(entry, frameworks, params, quick, repeats, log)
    steps, values = {}, {}
    for fw in frameworks:
        ok, why = fws.available(fw)
        builder = w.builder_for(fw)
        if not ok:
            entry["notes"][fw] = why
        elif builder is None:
            entry["notes"][fw] = w.notes.get(fw, "not written for this framework")
        else:
            try:
                fws.enter(fw)
                step = builder(params)
                values[fw] = fws.to_numpy(step()).copy()
                steps[fw] = step
            except Skip as exc:
                entry["notes"][fw] = str(exc)
            except Exception as exc:  # noqa: BLE001 - a broken peer must not stop the suite
                entry["notes"][fw] = f"failed: {type(exc).__name__}: {exc}"[:300]
        if fw in entry["notes"]:
            log(f"  {fw}: skipped ({entry['notes'][fw]})")
    ref = values.get("numpy", values.get(fws.REFERENCE))
    samples = {fw: [] for fw in steps}
    cpu = {fw: [] for fw in steps}
    for r in range(repeats):
        for fw in _rotate(list(steps), r):
            fws.enter(fw)
            if not quick:  # a smoke test's timings mean nothing, and a full collection costs 0.1 s or more
                gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            steps[fw]()
            samples[fw].append(time.perf_counter() - t0)
            cpu[fw].append(time.process_time() - c0)
    for fw in steps:
        med = float(np.median(samples[fw]))
        entry["results"][fw] = {"median_s": med, "min_s": float(min(samples[fw])), "samples_s": samples[fw],
                                "per_unit_s": med / units, "cpu_median_s": float(np.median(cpu[fw])),
                                "cpu_samples_s": cpu[fw], "check": _check(values[fw], ref, w.rtol, w.atol)}
    base = entry["results"].get(fws.REFERENCE)
    for res in entry["results"].values():
        res["ratio"] = None if base is None else res["median_s"] / base["median_s"]
        res["cpu_ratio"] = None if base is None or not base["cpu_median_s"] else \
            res["cpu_median_s"] / base["cpu_median_s"]
    return entry


def _run_deep(entry, frameworks, params, repeats, log):
    runnable = []
    for fw in frameworks:
        ok, why = fws.available(fw)
        if ok and fw not in DEEP_FRAMEWORKS:
            entry["notes"][fw] = "not written for this framework"
        elif ok:
            runnable.append(fw)
        else:
            entry["notes"][fw] = why
            log(f"  {fw}: skipped ({why})")
    res = measure_deep(runnable, params, repeats, log=log)
    ref = res.get("numpy", {}).get("grad")
    for fw, r in res.items():
        if "error" in r:
            entry["notes"][fw] = r["error"]
            continue
        r["median_s"] = r["forward_s"] + r["backward_s"] + r["teardown_s"]
        r["per_unit_s"] = r["backward_per_node_us"] * 1e-6
        r["check"] = "no reference" if ref is None else (
            "ok" if np.isclose(r["grad"], ref, rtol=1e-9) else f"differs ({r['grad']} vs {ref})")
        entry["results"][fw] = r
    base = entry["results"].get(fws.REFERENCE)
    for r in entry["results"].values():
        if base is None:
            r["ratio"] = r["backward_ratio"] = r["graph_rss_ratio"] = None
        else:
            r["ratio"] = r["median_s"] / base["median_s"]
            r["backward_ratio"] = r["backward_s"] / base["backward_s"]
            r["graph_rss_ratio"] = r["graph_rss_mib"] / base["graph_rss_mib"] if base["graph_rss_mib"] else None
    return entry


def _run_profiling_off(entry, frameworks, params, quick, repeats, log):
    for fw in frameworks:
        if fw != "retrograd":
            entry["notes"][fw] = "measures retrograd alone (its modes off against never on)"
    if "retrograd" not in frameworks:
        return entry
    variants = measure_profiling_off(params, repeats, quick, log=log)
    entry["variants"] = variants
    never = sum(r["median_s"] for r in variants["never"].values())
    entry["results"]["retrograd"] = {"median_s": never, "per_unit_s": never, "ratio": None, "check": "no reference"}
    return entry


def run(quick=False, frameworks=None, only=None, repeats=None, log=print) -> dict:
    """Runs the suite; returns the report (what ``write`` saves).

    Args:
        quick: tiny sizes (a smoke test; its timings mean little).
        frameworks: names from ``frameworks.FRAMEWORKS`` (default: all, missing ones noted).
        only: workload keys or group names (``workloads.GROUPS``; default: the default table).
        repeats: samples per framework (default: each workload's own).
    """
    frameworks = list(frameworks or fws.FRAMEWORKS)
    for fw in frameworks:
        if fw not in fws.FRAMEWORKS:
            raise ValueError(f"unknown framework {fw!r}; choose from {', '.join(fws.FRAMEWORKS)}")
    chosen = select(only) if only else list(WORKLOADS)
    blas = fws.pin_numpy_blas()
    report = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "quick": quick,
              "command": " ".join(["python -m bench"] + sys.argv[1:]) if sys.argv[0].endswith(
                  ("__main__.py", "run.py")) else "bench.run.run()",
              "machine": fws.machine_description(), "blas_pinning": blas,
              "thread_policy": "PyTorch (1 thread): torch.set_num_threads(1); PyTorch (default threads): "
                               f"torch.set_num_threads({fws.torch_default_threads()}), the process default",
              "reference": fws.REFERENCE, "frameworks": frameworks, "workloads": {}}
    for w in chosen:
        reps = repeats or (1 if quick else w.repeats)
        log(f"{w.title}: {reps} samples per framework")
        t0 = time.perf_counter()
        report["workloads"][w.key] = run_workload(w, frameworks, quick, reps, log)
        log(f"  done in {time.perf_counter() - t0:.1f} s")
    report["targets"] = targets(report)
    report["load_average_end"] = [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None
    return report


def targets(report) -> list:
    """Where retrograd stands against each target ratio of ``TARGETS``."""
    rows = []
    for key, target in TARGETS.items():
        wkey = "deep" if key.startswith("deep") else key
        entry = report["workloads"].get(wkey)
        if entry is None:
            continue
        res = entry["results"].get("retrograd")
        what = {"deep": "backward per node", "deep_rss": "graph memory (peak RSS growth)"}.get(
            key, "time per " + entry["unit"])
        if res is None or res.get("ratio") is None:
            note = entry["notes"].get("retrograd") or entry["notes"].get(fws.REFERENCE) or "not measured"
            rows.append({"key": key, "title": entry["title"], "what": what, "target": target, "ratio": None,
                         "note": note})
            continue
        ratio = {"deep": res.get("backward_ratio"), "deep_rss": res.get("graph_rss_ratio")}.get(key, res["ratio"])
        cpu_ratio = res.get("cpu_ratio") if key not in ("deep", "deep_rss") else None
        rows.append({"key": key, "title": entry["title"], "what": what, "target": target, "ratio": ratio,
                     "cpu_ratio": cpu_ratio, "off_by": None if ratio is None else ratio / target,
                     "note": "no reference value"})
    return rows


def write(report, out: str) -> tuple[str, str]:
    """Writes ``bench[-quick].json`` and ``.md`` into directory ``out``; returns their paths."""
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, "bench-quick" if report["quick"] else "bench")
    with open(stem + ".json", "w") as f:
        json.dump(report, f, indent=1, default=str)
        f.write("\n")
    with open(stem + ".md", "w") as f:
        f.write(markdown(report))
    return stem + ".json", stem + ".md"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 1 sample: a smoke test")
    parser.add_argument("--out", default=DEFAULT_OUT, help="directory for bench.json and bench.md "
                        "(bench-quick.* with --quick); default: bench/results/")
    parser.add_argument("--only", help="comma-separated workload keys: " + ",".join(BY_KEY) + "; or groups: "
                        + ", ".join(f"{g} ({','.join(ks)})" for g, ks in GROUPS.items()))
    parser.add_argument("--frameworks", help="comma-separated: " + ",".join(fws.FRAMEWORKS))
    parser.add_argument("--repeats", type=int, help="samples per framework (default: per workload)")
    args = parser.parse_args(argv)
    only = args.only.split(",") if args.only else None
    for k in only or ():
        if k not in BY_KEY and k not in GROUPS:
            parser.error(f"unknown workload {k!r}; choose from {', '.join(list(BY_KEY) + list(GROUPS))}")
    frameworks = args.frameworks.split(",") if args.frameworks else None
    report = run(quick=args.quick, frameworks=frameworks, only=only, repeats=args.repeats)
    paths = write(report, args.out)
    print()
    print(markdown(report))
    print("wrote " + " and ".join(paths))
    return 0
