"""Side-by-side benchmarks of retrograd against PyTorch, HIPS autograd, MyGrad and a NumPy floor.

Run ``python -m bench`` (``--quick`` for a smoke test, ``--help`` for the options). Every
workload is written once per framework in ``bench/workloads/``; ``bench/run.py`` runs them
interleaved in one process and writes the table as JSON and Markdown.
"""
import os

# NumPy's OpenBLAS reads this when it loads; it must be set before the first ``import numpy``.
# threadpoolctl (the ``bench`` extra) pins it again at run time, for when NumPy was imported first.
# Only OpenBLAS is named: OMP_NUM_THREADS or MKL_NUM_THREADS would also change PyTorch's threads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
