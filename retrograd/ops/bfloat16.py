"""The ops PyTorch's CPU refuses for bfloat16, with its error for each, and those that round a Python number to
bfloat16 before computing.

Every other op of the table computes a call with a bfloat16 argument in float32 and rounds its results once
(Note [bfloat16 arrays] in _dtype.py). PyTorch has no CPU kernel of bfloat16 for the ops of ``REFUSED`` (LAPACK
has none, nor do some special functions): a call with a bfloat16 argument raises PyTorch's error, of its type
and words, as the op call reads ``op.wide`` (tests/ops/test_op_table.py compares each with PyTorch's).

PyTorch's kernels of ``add``, ``mul`` and ``div`` take a Python number as it is, in float32; the others cast it
to the tensor's bfloat16 first, as their inputs' common dtype (``x > 0.2`` compares with 0.2001953125). Of the
ops where that shows, ``SCALARS_ROUNDED`` are those (``op.bfloat16_scalars``).
"""
from __future__ import annotations

from ._declarations import REGISTRY

__all__ = ["REFUSED", "SCALARS_ROUNDED"]


def _kernel(name):
    """PyTorch's error where its dispatch finds no bfloat16 kernel ``name``."""
    return lambda *args: NotImplementedError(f"\"{name}\" not implemented for 'BFloat16'")


def _low_precision(name):
    return lambda *args: RuntimeError(f"{name}: Low precision dtypes not supported. Got BFloat16")


def _pinv(A, *args):
    return RuntimeError(f"linalg.pinv(BFloat16{{{list(A.shape)}}}): expected a tensor with 2 or more dimensions of "
                        "float, double, cfloat or cdouble types")


# op name -> the error of a call with a bfloat16 argument, from the call's arguments
REFUSED = {
    "cdist": _kernel("cdist"),
    "ctc_loss": _kernel("ctc_loss_cpu"),
    "linalg_det": _kernel("lu_cpu"),
    "linalg_eigh": _kernel("linalg_eigh_cpu"),
    "linalg_inv": _low_precision("linalg.inv"),
    "linalg_lstsq": lambda *args: RuntimeError("This function doesn't handle types other than float and double"),
    "linalg_pinv": _pinv,
    "linalg_qr": _kernel("geqrf_cpu"),
    "linalg_slogdet": _low_precision("linalg.slogdet"),
    "linalg_solve": _kernel("lu_cpu"),
    "linalg_lu_factor_ex": _kernel("lu_cpu"),
    "linalg_lu": _kernel("lu_cpu"),
    "linalg_lu_solve": _kernel("linalg.lu_solve_cpu"),
    "linalg_solve_triangular": _kernel("triangular_solve_cpu"),
    "triangular_solve": _kernel("triangular_solve_cpu"),
    "cholesky": _kernel("cholesky_cpu"),
    "cholesky_solve": _kernel("cholesky_solve_cpu"),
    "cholesky_inverse": _kernel("cholesky_inverse_out_cpu"),
    "linalg_svd": _kernel("linalg_svd_cpu"),
    "pdist": _kernel("pdist"),
    "special_erfcx": _kernel("erfcx_cpu"),
    "special_log_ndtr": _kernel("log_ndtr_cpu"),
    "special_ndtri": _kernel("ndtri_cpu"),
}

SCALARS_ROUNDED = ("sub", "eq", "ne", "lt", "le", "gt", "ge", "fmod", "remainder")

for _name, _error in REFUSED.items():
    REGISTRY[_name].wide = _error
for _name in SCALARS_ROUNDED:
    REGISTRY[_name].bfloat16_scalars = True
