"""Launcher: ``python -m retrograd.distributed.run -n N script.py [args]`` runs N ranks under ``mpiexec``.

It finds ``mpiexec`` (on PATH, or beside this Python, where the ``mpich`` wheel puts it) and runs
``mpiexec -n N <this python> script.py args``, each rank under a watch that records how it ended
(``_rank_monitor.py``).

Note [When a rank dies]
~~~~~~~~~~~~~~~~~~~~~~~
By default ``mpiexec`` kills every rank as soon as one exits abnormally, so the survivors never
see an error and nothing says which rank failed. Under MPICH's launcher (Hydra) this launcher
passes ``-disable-auto-cleanup``: the other ranks keep running. Each rank runs as the child of a
small watcher, which writes the rank's exit code or signal to the run's directory
(``$RETROGRAD_RUN_DIR``). Then:

- a survivor's pending collectives fail with ``RuntimeError`` naming the dead rank and how it
  ended, about a second after it ended and never later than the group's ``timeout``;
- the survivor can still exit: after a peer failed, the process group leaves out the
  ``MPI_Finalize`` that would wait for it, and a new ``init_process_group`` fails within its
  timeout instead of blocking;
- once every rank has ended, the launcher prints which rank failed first and how (exit code or
  signal), then every other failure, as ``torchrun`` does, and exits with the first failed
  rank's status.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from ._rank_monitor import RUN_DIR, describe, failed, read_statuses

__all__ = ["find_mpiexec", "main"]

_MONITOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_rank_monitor.py")


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


def _is_hydra(mpiexec) -> bool:
    """Whether ``mpiexec`` is MPICH's Hydra, which takes ``-disable-auto-cleanup``."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return "HYDRA" in out.stdout + out.stderr


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


def report(statuses) -> tuple[str, int] | None:
    """The launcher's message on the failed ranks, and the exit status to return; None if none failed."""
    failures = sorted((s for s in statuses.values() if failed(s)), key=lambda s: (s["time"], s["rank"]))
    if not failures:
        return None
    first = failures[0]
    lines = [f"retrograd.distributed.run: rank {first['rank']} failed first: {describe(first)} (pid {first['pid']})"]
    for s in failures[1:]:
        lines.append(f"retrograd.distributed.run: rank {s['rank']} also failed: {describe(s)} (pid {s['pid']}, "
                     f"{s['time'] - first['time']:.2f} s later)")
    code = first["returncode"] if first["signal"] is None else 128 + first["signal"]
    return "\n".join(lines), code


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
    keep_going = ["-disable-auto-cleanup"] if _is_hydra(mpiexec) else []
    with tempfile.TemporaryDirectory(prefix="retrograd-run-") as run_dir:
        cmd = [mpiexec, *keep_going, "-n", str(opts.nproc), *opts.mpiexec_args.split(),
               sys.executable, _MONITOR, *target, *opts.args]
        try:
            code = subprocess.call(cmd, env={**os.environ, RUN_DIR: run_dir})
        except KeyboardInterrupt:
            return 130
        outcome = report(read_statuses(run_dir))
    if outcome is None:
        return code
    message, first_code = outcome
    print(message, file=sys.stderr, flush=True)
    return first_code


if __name__ == "__main__":
    sys.exit(main())
