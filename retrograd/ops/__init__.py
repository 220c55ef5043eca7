"""Every differentiable op, declared once each in its family module, and the Tensor methods that call them.

The op table: ``pointwise``, ``reduction``, ``sorting``, ``special``, ``random``, ``searching``,
``shape``, ``indexing``, ``joining``, ``linalg``, ``copy``, ``composite``, ``nn`` and ``recurrent`` (private
primitives of ``retrograd.nn``), each a list of ``defop`` declarations (_declarations.py) with
their formulas; ``_grad_utils`` holds the helpers formulas call. The public ops' docstrings are in
``_docs``; the rest of Tensor's methods and its operators in ``_methods``.
"""
from __future__ import annotations

from .. import _tensor
from . import composite, copy, indexing, joining, linalg, pointwise, random, reduction, searching, shape, sorting
from . import special, trig, arithmetic, queries, view_scatter, cholesky
from . import nn  # noqa: F401 - registers the neural-network primitives (private ops)
from . import attention  # noqa: F401 - registers scaled dot-product attention (a private op)
from . import recurrent  # noqa: F401 - registers the recurrent layers' kernels (private ops)
from . import shuffle  # noqa: F401 - registers channel_shuffle (a private op)
from . import lu  # noqa: F401 - registers the LU decomposition's ops (private)
from . import bfloat16  # noqa: F401 - the ops PyTorch refuses for bfloat16 (Note [bfloat16 arrays] in _dtype.py)
from . import factories  # noqa: F401 - the factories as op calls while an interposer is active
from . import mkldnn  # noqa: F401 - the MKL-DNN layout (Note [The MKL-DNN layout])
from . import _docs  # noqa: F401 - the public ops' docstrings, before _methods copies some of them
from . import _compiled, _methods
from .._ops import aten  # noqa: F401 - torch.ops.aten: PyTorch's op names (Note [PyTorch's op names])
from ._call import call_op
from ._declarations import REGISTRY, defop
from ._signature import forwarding_function
from .composite import corrcoef, cov, diag, diagflat, narrow, ravel, select, square
from .indexing import (convert_index, gather, getitem, index_add, index_put, index_select, masked_fill,
                       masked_select, scatter, scatter_add)
from .linalg import bmm, dot, einsum, ger, matmul, mm, mv, outer, trace
from .pointwise import *  # noqa: F401,F403 - the op table
from .pointwise import (abs, add, clamp, div, eq, exp, ge, gt, le, lt, maximum, minimum, mul, ne, neg, pow,
                        remainder, floor_divide, sub, where)
from .reduction import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logsumexp, max, mean, min,
                        norm, prod, softmax, std, std_mean, sum, var, var_mean)
from .special import digamma, erf, erfc, erfinv, i0, igamma, igammac, lgamma, logit, mvlgamma, polygamma, sinc, xlogy
from .searching import (all, any, argwhere, bincount, bucketize, count_nonzero, histc, isin, nonzero,  # noqa: A004
                        searchsorted, unique, unique_consecutive)
from .random import bernoulli, multinomial, normal, poisson
from .sorting import argsort, kthvalue, median, mode, msort, nanmedian, nanquantile, quantile, sort, topk
from .copy import clone, contiguous, sum_to_size, to
from .joining import (cat, chunk, concat, concatenate, split, split_with_sizes, stack, unbind, unsafe_chunk,
                      unsafe_split, unsafe_split_with_sizes)
from .shape import (broadcast_to, diagonal, expand, expand_as, flatten, flip, movedim, moveaxis, permute, reshape,
                    roll, shape_arg, squeeze, swapaxes, t, transpose, tril, triu, unflatten, unsqueeze, view)

_methods.attach()
_compiled.link_direct_formulas(REGISTRY)

from .trig import (acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctanh, asin, asinh, atan, atanh,  # noqa: E402
                   cosh, deg2rad, rad2deg, sinh)
from .arithmetic import (addcdiv, addcmul, exp2, fix, frexp, greater, greater_equal, less, less_equal,  # noqa: E402
                         dist, ldexp, log2, log10, nextafter, not_equal, positive, renorm)
from ._methods import TOP_LEVEL_INPLACE as _TOP_LEVEL_INPLACE  # noqa: E402
from .view_scatter import diagonal_scatter, select_scatter, slice_scatter  # noqa: E402
from .cholesky import cholesky, cholesky_inverse, cholesky_solve, triangular_solve  # noqa: E402
from .queries import (conj, get_device, is_conj, is_neg, is_nonzero, is_same_size, is_signed,  # noqa: E402
                      resolve_conj, resolve_neg)

# PyTorch's top-level in-place functions (``torch.exp_(x)`` is ``x.exp_()``): the Tensor methods themselves.
globals().update({name: getattr(_tensor.Tensor, name) for name in _TOP_LEVEL_INPLACE})

__all__ = sorted({op.name for op in REGISTRY.values() if op.public} | {
    "max", "min", "var", "std", "var_mean", "std_mean", "square", "diag", "narrow", "select", "einsum", "flatten",
    "unflatten", "t", "chunk", "broadcast_to", "expand_as", "movedim", "moveaxis", "swapaxes", "concat",
    "concatenate", "sum_to_size", "ger", "sort", "msort", "topk", "kthvalue", "median", "mode", "normal", "nonzero",
    "argwhere", "unique", "unique_consecutive", "nanmedian", "unsafe_chunk"})

# PyTorch's further ops, by family; the pointwise ones come with the star import above.
from .reduction import aminmax, cummax, cummin, diff, logcumsumexp, nanmean, nansum, trapezoid, trapz  # noqa: E402
from .shape import as_strided, as_strided_scatter, diag_embed, diagonal_copy, fliplr, flipud, rot90, swapdims  # noqa: E402
from .indexing import (index_copy, index_fill, index_reduce, masked_scatter, put, scatter_reduce, take,  # noqa: E402
                       take_along_dim)
from .shape import repeat_interleave, tile, tril_indices, triu_indices  # noqa: E402
from .joining import (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_tensors, cartesian_prod,  # noqa: E402
                      combinations, dsplit, dstack, hsplit, hstack, meshgrid, row_stack, tensor_split, vsplit, vstack)
from .linalg import (addbmm, addmm, addmv, addr, baddbmm, cdist, chain_matmul, cross, inner, kron, pdist,  # noqa: E402
                     logdet, matrix_power, slogdet, tensordot, vander, vdot)

__all__ = sorted(set(__all__) | set(_TOP_LEVEL_INPLACE) | set(trig.ALIASES) | set(arithmetic.ALIASES) | {
    "frexp", "positive", *queries.__all__, "tensor_split", "hsplit", "vsplit", "dsplit", "ravel", "diagflat", "triangular_solve", "cov", "corrcoef", "quantile",
    "nanquantile",
    "arctan2", "float_power", "allclose", "equal",
    "cummax", "cummin", "nanmean", "aminmax", "diff", "trapezoid",
    "as_strided", "as_strided_scatter", "fliplr", "flipud", "swapdims", "take_along_dim", "repeat_interleave", "tile",
    "tril_indices", "triu_indices",
    "block_diag", "cartesian_prod", "combinations", "meshgrid",
    "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "dstack", "row_stack", "broadcast_tensors", "trapz",
    "kron", "vander", "cross", "inner", "logdet",
    "matrix_power", "slogdet", "tensordot", "chain_matmul"})
