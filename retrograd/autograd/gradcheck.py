"""gradcheck and gradgradcheck: compare autograd's gradients with finite differences."""
from __future__ import annotations

import warnings

import numpy as np

from .._creation import randn, tensor
from .._tensor import Tensor
from ._api import grad as autograd_grad
from .grad_mode import enable_grad, no_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients differ."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_outputs(outputs):
    return tuple(o for o in outputs if isinstance(o, Tensor) and o.requires_grad)


def _numerical_jacobians(fn, inputs, eps):
    """Central differences: one (numel(input) x numel(output)) matrix per input and output."""
    with no_grad():
        outputs = [o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor)]
    jacs = []
    for inp in inputs:
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            jacs.append(None)
            continue
        data = inp._data
        flat = data.reshape(-1) if data.flags.c_contiguous else None
        per_output = [np.zeros((data.size, o.numel())) for o in outputs]
        for k in range(data.size):
            idx = np.unravel_index(k, data.shape)
            orig = data[idx].item()
            with no_grad():
                data[idx] = orig - eps
                lo = [o._host().astype(np.float64).reshape(-1).copy() for o in _as_tuple(fn(*inputs))
                      if isinstance(o, Tensor)]
                data[idx] = orig + eps
                hi = [o._host().astype(np.float64).reshape(-1).copy() for o in _as_tuple(fn(*inputs))
                      if isinstance(o, Tensor)]
                data[idx] = orig
            for j, (a, b) in enumerate(zip(lo, hi, strict=True)):
                per_output[j][k] = (b - a) / (2 * eps)
        del flat
        jacs.append(per_output)
    return outputs, jacs


def _analytical_jacobians(fn, inputs, outputs_nograd):
    """Rows of vector-Jacobian products with unit vectors, through ``autograd.grad``."""
    outputs = [o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor)]
    diff_inputs = [i for i, inp in enumerate(inputs) if isinstance(inp, Tensor) and inp.requires_grad]
    jacs = {i: [np.zeros((inputs[i].numel(), o.numel())) for o in outputs] for i in diff_inputs}
    for j, out in enumerate(outputs):
        if not out.requires_grad:
            continue
        for k in range(out.numel()):
            seed = np.zeros(out.shape, dtype=out._data.dtype)
            seed.reshape(-1)[k] = 1
            grads = autograd_grad(out, [inputs[i] for i in diff_inputs],
                                  tensor(seed, device=out.device), retain_graph=True, allow_unused=True)
            for i, g in zip(diff_inputs, grads, strict=True):
                if g is not None:
                    jacs[i][j][:, k] = g._host().astype(np.float64).reshape(-1)
    return outputs, jacs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Checks the gradients autograd computes for ``func`` at ``inputs`` against central differences.

    Use float64 inputs with ``requires_grad=True``; the others are held fixed.

    Args:
        func: a function of ``inputs`` returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of arguments.
        eps: the finite-difference step.
        atol, rtol: the tolerances of the comparison.
        raise_exception: raise ``GradcheckError`` (a RuntimeError) on mismatch instead of
            returning False.

    Returns:
        True if every Jacobian matches.

    Example::
        >>> import retrograd as rg
        >>> x = rg.randn(3, dtype=rg.float64, requires_grad=True)
        >>> rg.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
        True
    """
    inputs = _as_tuple(inputs)
    if not any(isinstance(i, Tensor) and i.requires_grad for i in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad and inp.dtype.name != "float64":
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. This check "
                          "will likely fail if all the inputs are not of double precision floating point.",
                          stacklevel=2)
    outs, numerical = _numerical_jacobians(func, inputs, eps)
    _, analytical = _analytical_jacobians(func, inputs, outs)
    for i, per_output in enumerate(numerical):
        if per_output is None:
            continue
        for j, num in enumerate(per_output):
            ana = analytical[i][j]
            if not np.allclose(ana, num, rtol=rtol, atol=atol):
                msg = (f"Jacobian mismatch for output {j} with respect to input {i},\n"
                       f"numerical:{num}\nanalytical:{ana}\n")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Checks second derivatives: gradcheck of the vector-Jacobian product of ``func``.

    ``grad_outputs`` (random by default) also take part in the check, as in PyTorch.

    Returns:
        True if every Jacobian of the first derivative matches its finite differences.
    """
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(_as_tuple(func(*inputs)))
        grad_outputs = tuple(randn(o.shape, dtype=o.dtype, device=o.device, requires_grad=True) for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    num_inputs = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]

    def new_func(*all_inputs):
        ins = all_inputs[:num_inputs]
        gos = all_inputs[num_inputs:]
        with enable_grad():  # the first derivative is recorded even while finite differences run
            outputs = _differentiable_outputs(_as_tuple(func(*ins)))
            grads = autograd_grad(outputs, [ins[i] for i in diff_idx], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
