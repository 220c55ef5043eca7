"""The launcher's watch over one rank: runs it as a child, and records how it ended.

Run as a script (``python _rank_monitor.py script.py args``) by ``mpiexec``, one per rank, it
imports nothing of retrograd: it starts the rank's own Python with the launcher's environment
(and the MPI launcher's file descriptors), forwards the signals ``mpiexec`` sends, waits, and
writes ``rank<N>.json`` in ``$RETROGRAD_RUN_DIR``: the exit code or the signal, and when. Its
own exit status is the rank's (128 + the signal's number for a signal, as shells report it).
The ``SIGUSR1`` that Hydra sends when a rank exits is not passed on.
As a module it reads those records, for the launcher's report and for a process group whose
peer died. See Note [When a rank dies] in run.py.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

RUN_DIR = "RETROGRAD_RUN_DIR"
_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK")
_FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP")
# Hydra sends SIGUSR1 to every process when another exits, for MPI libraries that track failures. The
# rank does not need it (the process group reads the records), and after MPI_Finalize it would kill it.
_IGNORED = ("SIGUSR1",)


def _rank() -> int:
    for name in _RANK_VARS:
        if name in os.environ:
            return int(os.environ[name])
    return 0


def describe(status: dict) -> str:
    """``exit code 1`` or ``signal 9 (SIGKILL)``."""
    if status.get("signal") is not None:
        try:
            name = signal.Signals(status["signal"]).name
        except ValueError:
            name = "unknown"
        return f"signal {status['signal']} ({name})"
    return f"exit code {status.get('returncode')}"


def failed(status: dict) -> bool:
    return status.get("signal") is not None or status.get("returncode") != 0


def read_statuses(run_dir: str | None = None) -> dict[int, dict]:
    """Every rank's record written so far, by rank; {} outside the launcher."""
    run_dir = run_dir if run_dir is not None else os.environ.get(RUN_DIR)
    out = {}
    if not run_dir or not os.path.isdir(run_dir):
        return out
    for name in os.listdir(run_dir):
        if name.startswith("rank") and name.endswith(".json"):
            try:
                with open(os.path.join(run_dir, name), encoding="utf-8") as f:
                    status = json.load(f)
                out[int(status["rank"])] = status
            except (OSError, ValueError, KeyError, TypeError):
                continue  # being written: read on the next look
    return out


def _record(run_dir, status) -> None:
    path = os.path.join(run_dir, f"rank{status['rank']}.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(status, f)
    os.replace(path + ".tmp", path)  # readers see a whole record or none


def main(argv) -> int:
    fds = tuple(int(os.environ[v]) for v in ("PMI_FD",) if os.environ.get(v, "").isdigit())
    child = subprocess.Popen([sys.executable, *argv], pass_fds=fds)
    for name in _FORWARDED:
        signal.signal(getattr(signal, name), lambda signum, frame: child.send_signal(signum))
    for name in _IGNORED:
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    code = child.wait()
    status = {"rank": _rank(), "pid": child.pid, "time": time.time(),
              "returncode": code if code >= 0 else None, "signal": -code if code < 0 else None}
    if os.environ.get(RUN_DIR):
        _record(os.environ[RUN_DIR], status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
