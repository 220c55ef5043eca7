"""Launcher: ``python -m retrograd.distributed.run -n N script.py [args]`` runs N ranks under ``mpiexec``.

It only finds ``mpiexec`` (on PATH, or beside this Python, where the ``mpich`` wheel puts it)
and runs ``mpiexec -n N <this python> script.py args``; MPI does the rest. The exit status is
mpiexec's.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

__all__ = ["find_mpiexec", "main"]


def find_mpiexec() -> str | None:
    """The path of ``mpiexec`` (or ``mpirun``), or None when no MPI launcher is installed."""
    here = os.path.dirname(sys.executable)
    for name in ("mpiexec", "mpirun"):
        beside = os.path.join(here, name)
        if os.access(beside, os.X_OK):
            return beside
        found = shutil.which(name)
        if found:
            return found
    return None


def _parser():
    p = argparse.ArgumentParser(prog="python -m retrograd.distributed.run",
                                description="Run a training script on N processes with mpiexec.")
    p.add_argument("-n", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=int, default=1,
                   help="number of processes to start (default 1)")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    p.add_argument("--mpiexec-args", default="", help="extra arguments for mpiexec, as one string")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    return p


def main(argv=None) -> int:
    opts = _parser().parse_args(argv)
    if opts.nproc < 1:
        print("error: -n must be at least 1", file=sys.stderr)
        return 2
    mpiexec = find_mpiexec()
    if mpiexec is None:
        print("error: no mpiexec found. Install an MPI launcher with: pip install 'retrograd[distributed]'",
              file=sys.stderr)
        return 2
    target = ["-m", opts.script] if opts.module else [opts.script]
    cmd = [mpiexec, "-n", str(opts.nproc), *opts.mpiexec_args.split(), sys.executable, *target, *opts.args]
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
