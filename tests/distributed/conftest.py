"""Runs scenarios of ``_mpi_worker.py`` under ``mpiexec -n 2``; skips when MPI is not installed."""
import os
import subprocess
import sys

import pytest

from retrograd.distributed.run import find_mpiexec

WORKER = os.path.join(os.path.dirname(__file__), "_mpi_worker.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _mpi_missing():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install 'retrograd[distributed]')"
    if find_mpiexec() is None:
        return "no mpiexec on PATH"
    return None


@pytest.fixture
def run_mpi(engine_loop):
    """``run_mpi(scenario, n=2, timeout=30)`` -> CompletedProcess; every rank runs ``scenario``.

    The ranks run with the C modules or without them, as the engine_loop variant of the test says.
    """
    reason = _mpi_missing()
    if reason:
        pytest.skip(reason)

    def run(scenario, n=2, timeout=30, expect_ok=True, launcher=False):
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        if engine_loop == "python":
            env["RETROGRAD_COMPILED"] = "0"
        start = [sys.executable, "-m", "retrograd.distributed.run"] if launcher else [find_mpiexec()]
        proc = subprocess.run([*start, "-n", str(n), sys.executable if not launcher else WORKER,
                               *([WORKER] if not launcher else []), scenario],
                              capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
        if expect_ok:
            assert proc.returncode == 0, f"{scenario} failed:\n{proc.stdout}\n{proc.stderr}"
            for rank in range(n):
                assert f"PASS {scenario} rank {rank}" in proc.stdout, proc.stdout + proc.stderr
        return proc
    return run
