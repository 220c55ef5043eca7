"""Copies this checkout with the checks that profiling-off leaves compiled out, for bench.compare_trees.

Usage::

    python -m bench.without_hooks DEST            # copy, strip, build the C modules in place
    python -m bench.without_hooks --unchanged REF  # the same copy and build, checks kept
    python -m bench.compare_trees REF DEST --quick --rounds 480 --pairs 16 --reps 5

The profiler, ``explain_mode`` and ``detect_nonfinite`` see op calls through the op call's
interposition and backward passes through the engine's observers (docs/perf/profiling-off.md
lists every check they leave when off). No switch bypasses those checks, so the cost of
profiling off is what the same tree costs with them taken out: this script writes that tree.
Each edit names the text it replaces and how many times it must be found, so a change to the
code that moves a check makes the script fail instead of measuring a tree that still has it.
The copy cannot profile (an interposer or observer would never be seen); it is for timing only.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

__all__ = ["EDITS", "main", "strip"]

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (file, text, replacement, times): each a check that profiling-off leaves, and the code without it.
EDITS = [
    # the generated fast calls: one read of the interposition stack per op call
    ("retrograd/ops/_signature.py",
     '    lines += ["    if _interposition.stack:",\n'
     '             f"        if _needs_dispatch(_op, {args_tuple}):  # See Note [Where __torch_function__ is checked]",\n'
     '             f"            return _dispatch(_public, _op, {args_tuple})",\n'
     '             f"        return _call(_op, {args_tuple})  # See Note [Op call interposition]",\n',
     '    lines += [\n', 1),
    # the Python op call
    ("retrograd/ops/_call.py",
     "    if interposition.stack:\n        return _interposed_call(op, args, inplace)\n", "", 1),
    # the C op call: its call() and its fast entry
    ("retrograd/_C/_op_call.c", "!enabled || interposed ||", "!enabled ||", 2),
    # the compiled loop's execute, backward and run_task
    ("retrograd/_C/_engine_loop.c", "int observed = class_attr_true(Observation_cls, s_active);", "int observed = 0;", 3),
    # the Python engine: once per pass, once per thread loop, once per node
    ("retrograd/autograd/engine.py", "pop = queue.pop if not watched else lambda: _obs.pop(queue)",
     "pop = queue.pop", 1),
    ("retrograd/autograd/engine.py", "watched = _Observation.active", "watched = False", 1),
    ("retrograd/autograd/engine.py", "if _Observation.active else", "if False else", 1),
    ("retrograd/autograd/engine.py", "if not _Observation.active else", "if True else", 1),
]


def strip(dest: str, edits=EDITS) -> None:
    """Writes the tracked files of this checkout to ``dest`` with every edit of ``edits`` made."""
    files = subprocess.run(["git", "ls-files"], cwd=_ROOT, check=True, capture_output=True,
                           text=True).stdout.split()
    for rel in files:
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(_ROOT, rel), target)
    for rel, old, new, times in edits:
        path = os.path.join(dest, rel)
        with open(path) as f:
            text = f.read()
        found = text.count(old)
        if found != times:
            raise SystemExit(f"{rel}: expected {times} of {old!r}, found {found}: the checks moved; "
                             "update bench/without_hooks.py and docs/perf/profiling-off.md")
        with open(path, "w") as f:
            f.write(text.replace(old, new))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.without_hooks", description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", help="a directory to create (it must not exist)")
    parser.add_argument("--unchanged", action="store_true",
                        help="copy and build with the checks kept: the reference, built as the stripped copy is")
    args = parser.parse_args(argv)
    if os.path.exists(args.dest):
        raise SystemExit(f"{args.dest} exists")
    strip(args.dest, [] if args.unchanged else EDITS)
    subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=args.dest, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    what = "with" if args.unchanged else "without"
    print(f"{args.dest}: this checkout {what} the checks of profiling off, C modules built")
    return 0


if __name__ == "__main__":
    sys.exit(main())
