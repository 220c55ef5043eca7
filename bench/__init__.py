"""Side-by-side benchmarks of retrograd against PyTorch, HIPS autograd, MyGrad, JAX and a NumPy floor.

Run ``python -m bench`` (``--quick`` for a smoke test, ``--help`` for the options). Every
workload is written once per framework in ``bench/workloads/``; ``bench/run.py`` runs them
interleaved in one process and writes the table as JSON and Markdown.
"""
import os

# NumPy's OpenBLAS reads this when it loads; it must be set before the first ``import numpy``.
# threadpoolctl (the ``bench`` extra) pins it again at run time, for when NumPy was imported first.
# Only OpenBLAS is named: OMP_NUM_THREADS or MKL_NUM_THREADS would also change PyTorch's threads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# JAX's XLA reads these when it loads: one intra-op thread (Eigen's pool off), the CPU backend only.
# A flag XLA does not know is fatal, so only these two are added, and only when not already given.
_xla_flags = os.environ.get("XLA_FLAGS", "")
if "intra_op_parallelism_threads" not in _xla_flags:
    os.environ["XLA_FLAGS"] = (_xla_flags + " --xla_cpu_multi_thread_eigen=false "
                               "intra_op_parallelism_threads=1").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
