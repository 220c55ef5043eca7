"""Instructions per unit of a workload's retrograd step, counted by callgrind: exact whatever the machine's load.

Usage::

    python -m bench.instructions many_small                # instructions per graph
    python -m bench.instructions chain --set steps=2000    # per step of the chain (two ops, two nodes, a tenth tanh)
    python -m bench.instructions persample --top 25        # and the 25 functions that cost most per unit
    python -m bench.instructions many_small --tree ../base # the retrograd of another source tree

Each count comes from one run under ``valgrind --tool=callgrind`` in a fresh process that builds
the step, calls it twice to warm it up, collects garbage, and then calls it ``--calls`` times
inside ``operator.call``: callgrind counts only there (``--toggle-collect``), so start-up, import
and set-up are left out, and the count is divided by the units of those calls (the workload's
``count`` parameter times ``--calls``). ``--top N`` prints the functions with the most own
instructions per unit (``callgrind_annotate``; with ``--inclusive``, theirs and their callees',
which counts a recursive call more than once), and the own instructions are summed by library:
CPython, NumPy, retrograd's two C modules and the rest. BLAS is held to one thread
(``OPENBLAS_NUM_THREADS=1``). ``RETROGRAD_COMPILED=0`` in the environment counts the
pure-Python paths. Needs valgrind; a run takes about a minute: callgrind is some 50 times slower than the
program.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

__all__ = ["main"]

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_WORKER = r"""
import gc, json, operator, sys
root, key, params, calls, tree = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, tree)
import retrograd  # from the tree measured
assert retrograd.__file__.startswith(tree), retrograd.__file__
sys.path.insert(0, root)
from bench.workloads import BY_KEY  # from this checkout
w = BY_KEY[key]
step = w.builder_for("retrograd")(params)
step()
step()
gc.collect()


def measured():
    for _ in range(calls):
        step()


operator.call(measured)  # callgrind counts only inside operator.call
"""

_LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?)\s*$")


def _run(key, params, calls, out_file, inclusive, tree):
    import json
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", "--separate-recs=1",
           "--collect-atstart=no", "--toggle-collect=_operator_call*",
           sys.executable, "-c", _WORKER, _ROOT, key, json.dumps(params), str(calls), tree]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=_ROOT)
    if proc.returncode != 0:
        sys.exit(f"callgrind run failed:\n{proc.stderr[-3000:]}")
    total, own = _functions(out_file, False)
    return total, own, _functions(out_file, True)[1] if inclusive else own


def _functions(out_file, inclusive):
    """``{(group, function): instructions}`` and the program's total, from callgrind_annotate: own
    instructions, or with ``inclusive`` those of the function and everything it calls."""
    cmd = ["callgrind_annotate", "--threshold=100", "--auto=no", f"--inclusive={'yes' if inclusive else 'no'}",
           out_file]
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    total, funcs = 0, {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        count, name = int(m.group(1).replace(",", "")), m.group(2)
        if name.startswith("PROGRAM TOTALS"):
            total = count
        elif ":" in name:
            where, _, func = name.rpartition(":")  # file:function [object]
            func = re.sub(r"'\d+", "", func.split(" [", 1)[0])  # recursion levels go into the function
            key = (_group(where + name), func)
            funcs[key] = funcs.get(key, 0) + count
    return total, funcs


def _group(where):
    if "/retrograd/_C/" in where or "_engine_loop" in where or "_op_call" in where:
        return "engine loop (C)" if "_engine_loop" in where else "op call (C)" if "_op_call" in where else "retrograd C"
    if "Python-3" in where or "libpython" in where:
        return "CPython"
    if "numpy" in where or "multiarray" in where or "umath" in where:
        return "NumPy"
    if "libc" in where or "ld-linux" in where or "sysdeps" in where:
        return "libc"
    return "other"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", help="a workload key of bench (many_small, chain, fanin, hvp, persample, ...)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a size parameter of the workload (default: its quick sizes)")
    parser.add_argument("--calls", type=int, default=3, help="calls of the step counted")
    parser.add_argument("--top", type=int, default=0, help="print the N functions with the most own instructions")
    parser.add_argument("--tree", default=_ROOT, help="the source tree whose retrograd is measured (default: this "
                        "checkout), its C modules built in place; the workloads are this checkout's")
    parser.add_argument("--keep", metavar="DIR", help="keep callgrind's output file in DIR (callgrind.out)")
    parser.add_argument("--inclusive", action="store_true",
                        help="with --top: rank functions by what they and their callees execute")
    args = parser.parse_args(argv)
    sys.path.insert(0, _ROOT)
    from bench.workloads import BY_KEY
    w = BY_KEY[args.workload]
    params = w.params(quick=True)
    for item in args.set:
        name, _, value = item.partition("=")
        params[name] = type(params[name])(value) if name in params and not isinstance(params[name], tuple) \
            else eval(value)  # noqa: S307 - a tuple size given on the command line
    units = w.units_per_sample(params) * args.calls
    with tempfile.TemporaryDirectory() as tmp:
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            tmp = args.keep
        total, own, incl = _run(args.workload, params, args.calls, os.path.join(tmp, "callgrind.out"),
                                args.inclusive, os.path.abspath(args.tree))
    compiled = os.environ.get("RETROGRAD_COMPILED", "1") != "0"
    print(f"{os.path.abspath(args.tree)}: {w.title} {params}, {'compiled' if compiled else 'pure Python'}: "
          f"{total / units:,.0f} instructions per {w.unit} ({units} {w.unit}s counted)")
    diff = {key: v / units for key, v in own.items()}
    groups = {}
    for (group, _), v in diff.items():
        groups[group] = groups.get(group, 0) + v
    print("  own instructions by library: " +
          ", ".join(f"{g} {v:,.0f}" for g, v in sorted(groups.items(), key=lambda kv: -kv[1])))
    if args.top:
        ranked = diff if not args.inclusive else {key: v / units for key, v in incl.items()}
        print(f"  {'inclusive' if args.inclusive else 'own'} instructions per {w.unit}:")
        for (group, func), v in sorted(ranked.items(), key=lambda kv: -kv[1])[:args.top]:
            print(f"  {v:10,.0f}  {func} ({group})")


if __name__ == "__main__":
    main()
